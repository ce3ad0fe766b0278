// strand produce: kafka-console-producer.sh. Each line of stdin becomes one record (the line's
// bytes, without its newline, as the value; with --parse-key, the bytes before the first key
// separator are the key). Records are batched (--batch-size, --linger-ms) and pipelined; the tool
// exits 0 once every record is acknowledged, 1 with the first error when any failed.
import { ClientError, Producer } from "../client/mod.ts";
import type { RecordHeader } from "../protocol/mod.ts";
import { acks, compression, int, keyValues, parseToolArgs, required, runTool, stdinLines, str, UsageError, withCluster } from "./tool.ts";

export const produceUsage = `Usage: strand produce --bootstrap-server HOST:PORT[,...] --topic NAME [options] < LINES

Sends each line of stdin as one record.

Options:
  --topic NAME               the topic (created when the broker auto-creates topics)
  --parse-key                split each line at the first key separator into KEY and VALUE
  --key-separator SEP        the key separator (default: a tab)
  --header KEY=VALUE         a header on every record (repeatable)
  --partition N              send every record to partition N (default: by key hash as
                             Kafka's Java client does; records without a key in sticky batches)
  --acks all|-1|1|0          acknowledgement required (default all)
  --compression CODEC        none, gzip, snappy, lz4 or zstd (default none)
  --batch-size BYTES         largest batch per partition (default 16384)
  --linger-ms MS             how long a batch waits to fill (default 5)
  --idempotence              Kafka's enable.idempotence: a producer id, and retries never
                             write a record twice (needs --acks all)
  --bootstrap-server HOST:PORT[,...]   brokers to start from (required)
  --request-timeout-ms MS    how long one request may take (default 30000)
  --command-config FILE      Kafka client properties: security.protocol, sasl.*, ssl.truststore.*, ssl.keystore.*
  -h, --help                 this text`;

const options = {
  topic: { type: "string" as const },
  "parse-key": { type: "boolean" as const },
  "key-separator": { type: "string" as const },
  header: { type: "string" as const, multiple: true },
  partition: { type: "string" as const },
  acks: { type: "string" as const },
  compression: { type: "string" as const },
  "batch-size": { type: "string" as const },
  "linger-ms": { type: "string" as const },
  idempotence: { type: "boolean" as const },
};

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  if (needle.length === 1) return haystack.indexOf(needle[0]);
  outer: for (let i = haystack.indexOf(needle[0]); i >= 0 && i + needle.length <= haystack.length; i = haystack.indexOf(needle[0], i + 1)) {
    for (let j = 1; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

export async function produceCommand(args: string[]): Promise<never> {
  return await runTool("produce", async () => {
    const { values } = parseToolArgs(args, options, produceUsage);
    const topic = required(values, "topic");
    const encoder = new TextEncoder();
    const separator = encoder.encode(str(values, "key-separator") ?? "\t");
    if (separator.length === 0) throw new UsageError("--key-separator may not be empty");
    const parseKey = values["parse-key"] === true;
    const headers: RecordHeader[] = Object.entries(keyValues(values, "header")).map(([key, value]) => ({ key, value: encoder.encode(value) }));
    const partition = str(values, "partition") === undefined ? null : int(values, "partition", 0, 0, 1_000_000);
    const opts = {
      acks: acks(values, -1),
      compression: compression(values),
      batchSizeBytes: int(values, "batch-size", 16_384, 1, 100 * 1024 * 1024),
      lingerMs: int(values, "linger-ms", 5, 0, 600_000),
      idempotence: values.idempotence === true,
    };
    if (opts.idempotence && opts.acks !== -1) throw new UsageError("--idempotence needs --acks all");
    await withCluster(values, async (c) => {
      const producer = new Producer(c, opts);
      await producer.prepareTopic(topic);
      let failed = 0;
      let firstError: Error | null = null;
      const onDelivery = (err: Error | null) => {
        if (err === null) return;
        failed++;
        firstError ??= err;
      };
      let lineNo = 0;
      for await (const line of stdinLines()) {
        lineNo++;
        let key: Uint8Array | null = null;
        let value = line;
        if (parseKey) {
          const i = indexOf(line, separator);
          if (i < 0) throw new ClientError(`line ${lineNo} has no key separator`);
          key = line.subarray(0, i);
          value = line.subarray(i + separator.length);
        }
        producer.send({ topic, partition, key, value, headers }, onDelivery);
        if (producer.bufferedBytes >= producer.opts.bufferMemoryBytes) await producer.waitForSpace();
        if (firstError !== null) break;
      }
      await producer.flush();
      if (firstError !== null) {
        const e = firstError as Error;
        throw new ClientError(`${failed} record${failed === 1 ? "" : "s"} not written: ${e.message}`);
      }
    });
  });
}
