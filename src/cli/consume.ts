// strand consume: kafka-console-consumer.sh. Prints each record's value on its own line (and,
// when asked, its timestamp, partition, offset, headers and key before it, tab-separated, in
// that order, as Kafka's DefaultMessageFormatter does). Without --group it reads every partition
// (or --partition's) on its own; with --group it joins the consumer group (range assignor),
// starts from the group's committed offsets, and commits what it has printed every 5 s, on a
// rebalance, and on exit. Stops after --max-messages, after --timeout-ms without a record, or on
// SIGINT/SIGTERM; exits 0 then, having printed "Processed a total of N messages" on stderr.
import process from "node:process";
import {
  ClientError,
  type ClusterClient,
  Consumer,
  type ConsumerRecord,
  fetchCommittedOffsets,
  GroupMember,
  type StartOffset,
} from "../client/mod.ts";
import { int, Output, parseToolArgs, platform, required, runTool, str, UsageError, withCluster } from "./tool.ts";

export const consumeUsage = `Usage: strand consume --bootstrap-server HOST:PORT[,...] --topic NAME [options]

Prints each record's value on its own line.

Options:
  --topic NAME             the topic
  --from-beginning         start at the earliest offset (default: the latest) when there is no
                           committed offset
  --partition N            read only partition N (not with --group)
  --offset OFFSET          with --partition: start at OFFSET, or "earliest", or "latest"
  --group ID               consume as a member of group ID (range assignor) from its committed
                           offsets, committing what was printed
  --max-messages N         exit after N records
  --timeout-ms MS          exit when no record arrives for MS
  --print-key              print the key before the value
  --print-headers          print the headers (k:v,k:v or NO_HEADERS) before key and value
  --print-timestamp        print CreateTime:TS first
  --print-partition        print Partition:N
  --print-offset           print Offset:N
  --key-separator SEP      separator between the printed fields (default: a tab)
  --fetch-max-bytes BYTES  most bytes per partition in one fetch (default 1048576)
  --bootstrap-server HOST:PORT[,...]   brokers to start from (required)
  --request-timeout-ms MS  how long one request may take (default 30000)
  --command-config FILE    Kafka client properties: security.protocol, sasl.*, ssl.truststore.*, ssl.keystore.*
  -h, --help               this text`;

const options = {
  topic: { type: "string" as const },
  "from-beginning": { type: "boolean" as const },
  partition: { type: "string" as const },
  offset: { type: "string" as const },
  group: { type: "string" as const },
  "max-messages": { type: "string" as const },
  "timeout-ms": { type: "string" as const },
  "print-key": { type: "boolean" as const },
  "print-headers": { type: "boolean" as const },
  "print-timestamp": { type: "boolean" as const },
  "print-partition": { type: "boolean" as const },
  "print-offset": { type: "boolean" as const },
  "key-separator": { type: "string" as const },
  "fetch-max-bytes": { type: "string" as const },
};

/** How often a group member commits what it has printed (Kafka's auto.commit.interval.ms). */
const commitIntervalMs = 5_000;

interface Printing {
  key: boolean;
  headers: boolean;
  timestamp: boolean;
  partition: boolean;
  offset: boolean;
  separator: Uint8Array;
}

const encoder = new TextEncoder();
const newline = encoder.encode("\n");
const nullText = encoder.encode("null");

function print(out: Output, r: ConsumerRecord, p: Printing): void {
  if (p.timestamp) out.text(`CreateTime:${r.timestamp}`), out.bytes(p.separator);
  if (p.partition) out.text(`Partition:${r.partition}`), out.bytes(p.separator);
  if (p.offset) out.text(`Offset:${r.offset}`), out.bytes(p.separator);
  if (p.headers) {
    if (r.headers.length === 0) out.text("NO_HEADERS");
    r.headers.forEach((h, i) => {
      if (i > 0) out.text(",");
      out.text(`${h.key}:`);
      out.bytes(h.value ?? nullText);
    });
    out.bytes(p.separator);
  }
  if (p.key) out.bytes(r.key ?? nullText), out.bytes(p.separator);
  out.bytes(r.value ?? nullText);
  out.bytes(newline);
}

export async function consumeCommand(args: string[]): Promise<never> {
  return await runTool("consume", async () => {
    const { values } = parseToolArgs(args, options, consumeUsage);
    const topic = required(values, "topic");
    const group = str(values, "group");
    const partition = str(values, "partition") === undefined ? null : int(values, "partition", 0, 0, 1_000_000);
    const offsetText = str(values, "offset");
    if (group !== undefined && partition !== null) throw new UsageError("--partition cannot be used with --group");
    if (offsetText !== undefined && partition === null) throw new UsageError("--offset needs --partition");
    let offset: StartOffset | null = null;
    if (offsetText !== undefined) {
      offset = offsetText === "earliest" || offsetText === "latest" ? offsetText : int(values, "offset", 0, 0);
    }
    const fromBeginning = values["from-beginning"] === true;
    const maxMessages = str(values, "max-messages") === undefined ? Infinity : int(values, "max-messages", 0, 1);
    const timeoutMs = str(values, "timeout-ms") === undefined ? Infinity : int(values, "timeout-ms", 0, 1);
    const printing: Printing = {
      key: values["print-key"] === true,
      headers: values["print-headers"] === true,
      timestamp: values["print-timestamp"] === true,
      partition: values["print-partition"] === true,
      offset: values["print-offset"] === true,
      separator: encoder.encode(str(values, "key-separator") ?? "\t"),
    };
    const partitionMaxBytes = int(values, "fetch-max-bytes", 1_048_576, 1, 100 * 1024 * 1024);
    const p = await platform();
    let stopping = false;
    const stop = () => (stopping = true);
    p.process.onSignal("SIGINT", stop);
    p.process.onSignal("SIGTERM", stop);

    let count = 0;
    await withCluster(values, async (c) => {
      const info = await c.topicMetadata(topic);
      const consumer = new Consumer(c, {
        autoOffsetReset: fromBeginning ? "earliest" : "latest",
        partitionMaxBytes,
      });
      const reset: StartOffset = fromBeginning ? "earliest" : "latest";
      const member = group === undefined ? null : new GroupMember(c, { groupId: group, topics: [topic] });
      const out = new Output();
      try {
        if (member === null) {
          const parts = partition === null ? info.partitions.map((x) => x.partition) : [partition];
          if (partition !== null && !info.partitions.some((x) => x.partition === partition)) {
            throw new ClientError(`topic "${topic}" has no partition ${partition}`);
          }
          await consumer.assign(parts.map((x) => ({ topic, partition: x, offset: offset ?? reset })));
        } else {
          await joinAndAssign(c, member, consumer, reset);
        }
        let lastRecordMs = p.clock.monotonicMs();
        let lastCommitMs = lastRecordMs;
        let committed = positionsKey(consumer);
        while (!stopping && count < maxMessages && !out.closed) {
          const idle = p.clock.monotonicMs() - lastRecordMs;
          if (idle >= timeoutMs) break;
          const records = await consumer.poll(Math.min(500, timeoutMs - idle));
          for (const r of records) {
            if (count >= maxMessages) break;
            print(out, r, printing);
            count++;
            // Stopping inside a poll's records: the position is just after the last one printed.
            if (count === maxMessages) consumer.seek(r.topic, r.partition, r.offset + 1);
          }
          if (records.length > 0) lastRecordMs = p.clock.monotonicMs();
          if (out.full || records.length === 0) await out.flush();
          if (member !== null) {
            const now = p.clock.monotonicMs();
            if (member.rebalanceNeeded) {
              await out.flush();
              await commitQuietly(member, consumer);
              await joinAndAssign(c, member, consumer, reset);
              committed = positionsKey(consumer);
              lastCommitMs = now;
            } else if (now - lastCommitMs >= commitIntervalMs) {
              const key = positionsKey(consumer);
              if (key !== committed) {
                await out.flush();
                await member.commit(consumer.positions());
                committed = key;
              }
              lastCommitMs = now;
            }
          }
        }
        await out.flush();
        if (member !== null) {
          if (positionsKey(consumer) !== committed) await member.commit(consumer.positions());
        }
      } finally {
        consumer.close();
        await out.flush().catch(() => {});
        if (member !== null) await member.leave();
      }
    });
    process.stderr.write(`Processed a total of ${count} messages\n`);
  });
}

/** Commits before a rebalance; a failure there (the generation moved on) costs duplicates, not loss. */
async function commitQuietly(member: GroupMember, consumer: Consumer): Promise<void> {
  try {
    await member.commit(consumer.positions());
  } catch {
    // The next member of these partitions starts from the last successful commit.
  }
}

function positionsKey(consumer: Consumer): string {
  return consumer.positions().map((x) => `${x.topic}:${x.partition}@${x.offset}`).join(",");
}

async function joinAndAssign(c: ClusterClient, member: GroupMember, consumer: Consumer, reset: StartOffset): Promise<void> {
  const assignment = await member.join();
  const tps = assignment.flatMap((a) => a.partitions.map((partition) => ({ topic: a.topic, partition })));
  const committed = await fetchCommittedOffsets(c, member.opts.groupId, tps);
  const at = new Map(committed.map((o) => [`${o.topic}:${o.partition}`, o.offset]));
  await consumer.assign(tps.map((tp) => ({ ...tp, offset: at.get(`${tp.topic}:${tp.partition}`) ?? reset })));
}
