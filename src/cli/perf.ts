// strand perf produce|consume: kafka-producer-perf-test.sh and kafka-consumer-perf-test.sh.
// produce sends --num-records records of --record-size bytes (one random payload of letters, as
// Kafka's tool makes it) as fast as the producer allows, or at --throughput records/s, and prints
// a progress line every --reporting-interval-ms and a final line with records/s, MB/s and the
// latency from send to acknowledgement (average, maximum, 50th/95th/99th/99.9th percentiles).
// consume reads --num-records records from the start of every partition (or --partition) and
// prints records/s and MB/s. MB is 2^20 bytes, as Kafka's tools count it.
import { setImmediate } from "node:timers";
import { ClientError, Consumer, Producer } from "../client/mod.ts";
import { acks, commonOptionsUsage, compression, int, Output, parseToolArgs, platform, required, runTool, str, UsageError, withCluster } from "./tool.ts";

export const perfUsage = `Usage: strand perf produce|consume --bootstrap-server HOST:PORT[,...] --topic NAME [options]

strand perf produce   (kafka-producer-perf-test.sh)
  --topic NAME                 the topic (created when the broker auto-creates topics)
  --num-records N              records to send (required)
  --record-size BYTES          bytes per record value (default 100)
  --throughput N               records per second at most; -1 for no cap (default -1)
  --acks all|-1|1|0            (default all)
  --compression CODEC          none, gzip, snappy, lz4 or zstd (default none)
  --batch-size BYTES           largest batch per partition (default 16384)
  --linger-ms MS               how long a batch waits to fill (default 5)
  --max-in-flight N            Produce requests in flight per broker (default 5)
  --partition N                send every record to partition N (default: sticky batches)
  --reporting-interval-ms MS   progress line period (default 5000)

strand perf consume   (kafka-consumer-perf-test.sh)
  --topic NAME                 the topic
  --num-records N              records to read (required)
  --partition N                read only partition N (default: every partition)
  --fetch-max-bytes BYTES      most bytes per partition in one fetch (default 1048576)
  --timeout-ms MS              give up when no record arrives for MS (default 10000)
  --reporting-interval-ms MS   progress line period (default 5000)

Options:
${commonOptionsUsage}`;

const options = {
  topic: { type: "string" as const },
  "num-records": { type: "string" as const },
  "record-size": { type: "string" as const },
  throughput: { type: "string" as const },
  acks: { type: "string" as const },
  compression: { type: "string" as const },
  "batch-size": { type: "string" as const },
  "linger-ms": { type: "string" as const },
  "max-in-flight": { type: "string" as const },
  partition: { type: "string" as const },
  "fetch-max-bytes": { type: "string" as const },
  "timeout-ms": { type: "string" as const },
  "reporting-interval-ms": { type: "string" as const },
};

const MB = 1024 * 1024;

function fixed(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : "0";
}

export async function perfCommand(args: string[]): Promise<never> {
  return await runTool("perf", async () => {
    const { values, positionals } = parseToolArgs(args, options, perfUsage, 1);
    const command = positionals[0];
    if (command === "produce") return await produce(values);
    if (command === "consume") return await consume(values);
    throw new UsageError(command === undefined ? "a command is required: produce or consume" : `unknown command "${command}"`);
  });
}

type Values = Parameters<typeof required>[0];

/** Letters A-Z, random, as kafka-producer-perf-test makes its payload. */
function payload(size: number): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = 65 + Math.floor(Math.random() * 26);
  return out;
}

/**
 * Lets the event loop run (answers read, requests written) and resumes soon. On Bun
 * setImmediate: it comes back after one turn of the loop, and the loop polls sockets on each
 * turn. Deno does not poll sockets on every setImmediate turn (measured: a socket answer waited
 * ~40 ms behind 1 ms slices of work yielding by setImmediate, ~20 ms by setTimeout), so there a
 * timer, which Deno clamps to 4 ms when nested.
 */
const onDeno = (globalThis as { Deno?: unknown }).Deno !== undefined;
/** On Deno, how long the uncapped send loop runs between yields (each costs a timer's 1-4 ms). */
const denoSendSliceMs = 8;
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => (onDeno ? setTimeout(resolve, 0) : setImmediate(resolve)));
}

/** The value at quantile q of sorted latencies. */
function percentile(sorted: Float32Array, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function produce(values: Values): Promise<void> {
  const topic = required(values, "topic");
  const numRecords = int(values, "num-records", -1, 1, 1_000_000_000);
  if (numRecords < 0) throw new UsageError("--num-records is required");
  const recordSize = int(values, "record-size", 100, 0, 100 * 1024 * 1024);
  const throughput = str(values, "throughput") === "-1" ? -1 : int(values, "throughput", -1, 1);
  const partition = str(values, "partition") === undefined ? null : int(values, "partition", 0, 0, 1_000_000);
  const reportMs = int(values, "reporting-interval-ms", 5_000, 100);
  const opts = {
    acks: acks(values, -1),
    compression: compression(values),
    batchSizeBytes: int(values, "batch-size", 16_384, 1, 100 * 1024 * 1024),
    lingerMs: int(values, "linger-ms", 5, 0, 600_000),
    maxInFlightPerBroker: int(values, "max-in-flight", 5, 1, 1_000),
  };
  const p = await platform();
  const clock = p.clock;
  const out = new Output();
  await withCluster(values, async (c) => {
    const producer = new Producer(c, opts);
    await producer.prepareTopic(topic);
    const value = payload(recordSize);
    const latencies = new Float32Array(numRecords);
    let acked = 0;
    let failed = 0;
    let firstError: Error | null = null;
    // The current reporting window.
    let windowStart = clock.monotonicMs();
    let windowCount = 0;
    let windowBytes = 0;
    let windowLatencySum = 0;
    let windowLatencyMax = 0;
    const report = () => {
      const now = clock.monotonicMs();
      const s = (now - windowStart) / 1000;
      out.text(`${windowCount} records sent, ${fixed(windowCount / s, 1)} records/sec (${fixed(windowBytes / MB / s, 2)} MB/sec), ` +
        `${fixed(windowLatencySum / Math.max(windowCount, 1), 1)} ms avg latency, ${fixed(windowLatencyMax, 1)} ms max latency.\n`);
      void out.flush();
      windowStart = now;
      windowCount = windowBytes = windowLatencySum = windowLatencyMax = 0;
    };
    // Clock reads cost ~0.1 µs each, as much as a record's encoding: the send time is read every
    // 16 records (16 records take microseconds, latencies are milliseconds), and the answer time
    // once per batch answered (every record of a batch is answered in one synchronous run of
    // callbacks; the cached reading is dropped at the next microtask).
    let answeredAt = -1;
    const answerTime = () => {
      if (answeredAt < 0) {
        answeredAt = clock.monotonicMs();
        queueMicrotask(() => (answeredAt = -1));
      }
      return answeredAt;
    };
    const timer = clock.setInterval(report, reportMs);
    const start = clock.monotonicMs();
    let sentAt = start;
    let yieldedAt = start;
    try {
      for (let i = 0; i < numRecords; i++) {
        if ((i & 15) === 0) sentAt = clock.monotonicMs();
        const at = sentAt;
        producer.send({ topic, partition, key: null, value }, (err) => {
          const latency = answerTime() - at;
          if (err !== null) {
            failed++;
            firstError ??= err;
            return;
          }
          latencies[acked++] = latency;
          windowCount++;
          windowBytes += recordSize;
          windowLatencySum += latency;
          if (latency > windowLatencyMax) windowLatencyMax = latency;
        });
        if (firstError !== null) break;
        if (throughput > 0) {
          // Kafka's ThroughputThrottler: ahead of schedule, wait until the schedule catches up.
          const dueMs = start + ((i + 1) * 1000) / throughput;
          const ahead = dueMs - clock.monotonicMs();
          if (ahead >= 1) {
            await c.sleep(ahead);
            yieldedAt = clock.monotonicMs();
          } else if ((i & 15) === 15 && sentAt - yieldedAt >= 1) {
            // Behind schedule this loop would not let go: Kafka's perf tool sends from its own
            // thread, while answers here are read only when the loop yields. Without this, at a
            // fixed rate the producer's few requests in flight were answered only every ~8k
            // records, and latencies grew to seconds.
            await yieldToEventLoop();
            yieldedAt = clock.monotonicMs();
          }
        }
        if (producer.bufferedBytes >= producer.opts.bufferMemoryBytes) await producer.waitForSpace();
        // Let answers in every ~200 KB sent, so acknowledgements (and latencies) are not held back
        // by this loop. On Deno differently: its yield is a timer (1-4 ms each), and at one every
        // 2,048 records the loop slept most of the time (660,000 records/s against Bun's 2.1
        // million). There it waits for an answer when the requests in flight are at their limit
        // (an answer read resumes it at once), and yields on a timer only after a slice of sending.
        else if (onDeno) {
          if ((i & 0xff) !== 0xff) continue;
          if (producer.sendBlocked) await producer.waitForProgress();
          else if (sentAt - yieldedAt >= denoSendSliceMs) await yieldToEventLoop();
          else continue;
          yieldedAt = clock.monotonicMs();
        } else if ((i & 0x7ff) === 0x7ff) await yieldToEventLoop();
      }
      await producer.flush();
    } finally {
      timer.cancel();
    }
    const elapsedS = (clock.monotonicMs() - start) / 1000;
    if (firstError !== null) throw new ClientError(`${failed} records not written: ${(firstError as Error).message}`);
    const sorted = latencies.subarray(0, acked).sort();
    let sum = 0;
    for (let i = 0; i < sorted.length; i++) sum += sorted[i];
    out.text(`${acked} records sent, ${fixed(acked / elapsedS, 1)} records/sec (${fixed((acked * recordSize) / MB / elapsedS, 2)} MB/sec), ` +
      `${fixed(sum / Math.max(acked, 1), 2)} ms avg latency, ${fixed(sorted[sorted.length - 1] ?? 0, 2)} ms max latency, ` +
      `${fixed(percentile(sorted, 0.5), 0)} ms 50th, ${fixed(percentile(sorted, 0.95), 0)} ms 95th, ` +
      `${fixed(percentile(sorted, 0.99), 0)} ms 99th, ${fixed(percentile(sorted, 0.999), 0)} ms 99.9th.\n`);
    await out.flush();
  });
}

async function consume(values: Values): Promise<void> {
  const topic = required(values, "topic");
  const numRecords = int(values, "num-records", -1, 1, 1_000_000_000);
  if (numRecords < 0) throw new UsageError("--num-records is required");
  const partition = str(values, "partition") === undefined ? null : int(values, "partition", 0, 0, 1_000_000);
  const timeoutMs = int(values, "timeout-ms", 10_000, 1);
  const reportMs = int(values, "reporting-interval-ms", 5_000, 100);
  const partitionMaxBytes = int(values, "fetch-max-bytes", 1_048_576, 1, 100 * 1024 * 1024);
  const p = await platform();
  const clock = p.clock;
  const out = new Output();
  await withCluster(values, async (c) => {
    const info = await c.topicMetadata(topic);
    const parts = partition === null ? info.partitions.map((x) => x.partition) : [partition];
    if (partition !== null && !info.partitions.some((x) => x.partition === partition)) {
      throw new ClientError(`topic "${topic}" has no partition ${partition}`);
    }
    const consumer = new Consumer(c, { autoOffsetReset: "earliest", partitionMaxBytes });
    const start = clock.monotonicMs();
    await consumer.assign(parts.map((x) => ({ topic, partition: x, offset: "earliest" as const })));
    let count = 0;
    let bytes = 0;
    let windowStart = start;
    let windowCount = 0;
    let windowBytes = 0;
    let lastRecordMs = start;
    const report = () => {
      const now = clock.monotonicMs();
      const s = (now - windowStart) / 1000;
      out.text(`${windowCount} records consumed, ${fixed(windowCount / s, 1)} records/sec (${fixed(windowBytes / MB / s, 2)} MB/sec).\n`);
      void out.flush();
      windowStart = now;
      windowCount = windowBytes = 0;
    };
    const timer = clock.setInterval(report, reportMs);
    try {
      while (count < numRecords) {
        const idle = clock.monotonicMs() - lastRecordMs;
        if (idle >= timeoutMs) break;
        const records = await consumer.poll(Math.min(1000, timeoutMs - idle));
        if (records.length > 0) lastRecordMs = clock.monotonicMs();
        for (const r of records) {
          const n = (r.key?.length ?? 0) + (r.value?.length ?? 0);
          bytes += n;
          windowBytes += n;
          count++;
          windowCount++;
          if (count >= numRecords) break;
        }
      }
    } finally {
      timer.cancel();
      consumer.close();
    }
    const elapsedS = (clock.monotonicMs() - start) / 1000;
    out.text(`${count} records consumed, ${fixed(count / elapsedS, 1)} records/sec (${fixed(bytes / MB / elapsedS, 2)} MB/sec), ` +
      `${fixed(bytes / MB, 2)} MB in ${fixed(elapsedS, 2)} s.\n`);
    await out.flush();
    if (count < numRecords) {
      throw new ClientError(`only ${count} of ${numRecords} records arrived (none for ${timeoutMs} ms)`);
    }
  });
}
