// Offsets by timestamp through real clients (issue 3, item 1): kafkajs produces records with
// explicit timestamps (several per batch, out of order within a batch, a producer clock going
// back) into a topic of many small segments; kafkajs admin.fetchTopicOffsetsByTimestamp and kcat
// `-o s@<timestamp>` (librdkafka's offsets_for_times) find the first record at or after each
// timestamp, as a brute-force search over what was sent says; ListOffsets v7 answers -1, -2 and
// -3 (the record with the max timestamp); and the answers stay the same after a restart that
// finds every .timeindex file gone (rebuilt on open).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Kafka, logLevel } from "kafkajs";
import type { Admin, Producer } from "kafkajs";
import { ListOffsetsApi } from "../../src/protocol/api/mod.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { WireClient } from "../helpers/wire.ts";

const kcatSkip = skipUnless("kcat");
const topic = "stamps";
// Small segments and index intervals, so lookups cross segments and use both indexes.
const overrides = { "log.segment.bytes": "3000", "log.index.interval.bytes": "200", "num.partitions": "2" };
// Recent timestamps: far older ones would be retention's to delete.
const T0 = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;

function client(bootstrap: string): Kafka {
  return new Kafka({
    clientId: "strand-e2e-timestamps",
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 5_000,
    requestTimeout: 30_000,
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 2_000 },
  });
}

function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

interface Sent {
  offset: number;
  timestamp: number;
}

/**
 * The timestamps of each send (one batch each) for a partition. Partition 0: ten records per
 * batch a second apart, every third batch in reverse order, and batches 12-14 from a clock a
 * minute behind. Partition 1: batches of five records sharing one timestamp.
 */
function plan(partition: number): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < 30; i++) {
    if (partition === 1) {
      out.push(Array.from({ length: 5 }, () => T0 + i * 7_000));
      continue;
    }
    const skew = i >= 12 && i <= 14 ? -60_000 : 0;
    const ts = Array.from({ length: 10 }, (_, j) => T0 + (i * 10 + j) * 1000 + skew);
    out.push(i % 3 === 2 ? ts.reverse() : ts);
  }
  return out;
}

async function produceAll(producer: Producer): Promise<Sent[][]> {
  const sent: Sent[][] = [[], []];
  for (const partition of [0, 1]) {
    for (const batch of plan(partition)) {
      const [meta] = await producer.send({
        topic,
        acks: -1,
        messages: batch.map((ts, j) => ({ partition, value: `p${partition}-${ts}-${j}`.padEnd(120, "."), timestamp: String(ts) })),
      });
      assert.equal(meta.errorCode, 0);
      const base = Number(meta.baseOffset);
      batch.forEach((ts, j) => sent[partition].push({ offset: base + j, timestamp: ts }));
    }
  }
  return sent;
}

/** The first record sent at or after the timestamp, or null. */
function firstAtOrAfter(sent: Sent[], ts: number): Sent | null {
  return sent.find((s) => s.timestamp >= ts) ?? null;
}

/** Timestamps worth asking about: before everything, each record's own, in between, after all. */
function targets(sent: Sent[][]): number[] {
  const all = sent.flat().map((s) => s.timestamp);
  const out = new Set<number>([T0 - 100_000, Math.max(...all) + 1, Math.max(...all) + 1_000_000]);
  for (const t of all) {
    out.add(t);
    out.add(t + 500);
  }
  return [...out].sort((a, b) => a - b);
}

async function assertKafkajsAnswers(admin: Admin, sent: Sent[][], what: string): Promise<void> {
  for (const ts of targets(sent)) {
    const got = await within(15_000, "fetchTopicOffsetsByTimestamp", admin.fetchTopicOffsetsByTimestamp(topic, ts));
    for (const partition of [0, 1]) {
      const want = firstAtOrAfter(sent[partition], ts);
      // kafkajs answers the high watermark where the broker found nothing (-1).
      const expected = want === null ? sent[partition].length : want.offset;
      const p = got.find((x) => x.partition === partition);
      assert.equal(Number(p?.offset), expected, `${what}: partition ${partition}, timestamp ${ts}`);
    }
  }
}

async function startProduced(): Promise<{ b: TestBroker; sent: Sent[][] }> {
  const b = await startBroker(overrides);
  const kafka = client(b.bootstrap);
  const admin = kafka.admin();
  const producer = kafka.producer({ allowAutoTopicCreation: false, idempotent: false });
  try {
    await within(15_000, "admin.connect", admin.connect());
    await within(30_000, "createTopics", admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true }));
    await within(15_000, "producer.connect", producer.connect());
    const sent = await within(60_000, "produce", produceAll(producer));
    return { b, sent };
  } catch (e) {
    await b.stop();
    throw e;
  } finally {
    await producer.disconnect().catch(() => {});
    await admin.disconnect().catch(() => {});
  }
}

test("timestamps: kafkajs admin.fetchTopicOffsetsByTimestamp finds the first record at or after each timestamp, also after the .timeindex files are lost", async () => {
  let { b, sent } = await startProduced();
  try {
    const segments = readdirSync(join(b.logDir, `${topic}-0`)).filter((n) => n.endsWith(".log"));
    assert.ok(segments.length >= 5, `partition 0 spans segments: ${segments.length}`);
    let admin = client(b.bootstrap).admin();
    await within(15_000, "admin.connect", admin.connect());
    try {
      await assertKafkajsAnswers(admin, sent, "as produced");
    } finally {
      await admin.disconnect();
    }
    // Stop, lose every .timeindex, start again on the same files: they are rebuilt on open.
    await b.stop(true);
    for (const p of [0, 1]) {
      const dir = join(b.logDir, `${topic}-${p}`);
      for (const n of readdirSync(dir)) if (n.endsWith(".timeindex")) rmSync(join(dir, n));
    }
    b = await startBroker({ ...overrides, port: String(b.port) }, b.logDir);
    assert.ok(readdirSync(join(b.logDir, `${topic}-0`)).filter((n) => n.endsWith(".timeindex")).length >= 5, "rebuilt");
    admin = client(b.bootstrap).admin();
    await within(15_000, "admin.connect", admin.connect());
    try {
      await assertKafkajsAnswers(admin, sent, "after the rebuild");
    } finally {
      await admin.disconnect();
    }
  } finally {
    await b.stop();
  }
});

test("timestamps: kcat -o s@<timestamp> starts at the first record at or after the timestamp", { skip: kcatSkip }, async () => {
  const { b, sent } = await startProduced();
  try {
    // A spread of the targets (kcat runs are slower than kafkajs requests).
    const all = targets(sent);
    const picked = all.filter((_, i) => i % 9 === 0).concat(all[all.length - 1]);
    for (const ts of picked) {
      for (const partition of [0, 1]) {
        const r = await run("kcat", ["-b", b.bootstrap, "-C", "-t", topic, "-p", String(partition), "-o", `s@${ts}`, "-c", "1", "-e", "-q", "-f", "%o %T\\n"], { timeoutMs: 30_000 });
        assert.equal(r.code, 0, `kcat failed: ${r.stderr}`);
        const want = firstAtOrAfter(sent[partition], ts);
        const line = r.stdout.toString().trim();
        if (want === null) assert.equal(line, "", `partition ${partition}, timestamp ${ts}: nothing at or after it`);
        else assert.equal(line, `${want.offset} ${want.timestamp}`, `partition ${partition}, timestamp ${ts}`);
      }
    }
  } finally {
    await b.stop();
  }
});

test("timestamps: ListOffsets v7 answers -1 (latest), -2 (earliest), -3 (max timestamp) and a timestamp with its record's timestamp", async () => {
  const { b, sent } = await startProduced();
  const c = await WireClient.connect(b.port);
  try {
    const ask = async (partition: number, timestamp: bigint) => {
      const res = await c.request(ListOffsetsApi, 7, {
        replicaId: -1,
        isolationLevel: 0,
        topics: [{ name: topic, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp }] }],
      });
      const p = (res.topics as { partitions: { errorCode: number; offset: bigint; timestamp: bigint }[] }[])[0].partitions[0];
      assert.equal(p.errorCode, 0);
      return { offset: Number(p.offset), timestamp: Number(p.timestamp) };
    };
    for (const partition of [0, 1]) {
      const s = sent[partition];
      assert.equal((await ask(partition, -1n)).offset, s.length);
      assert.equal((await ask(partition, -2n)).offset, 0);
      const top = s.reduce((a, x) => (x.timestamp > a.timestamp ? x : a));
      assert.deepEqual(await ask(partition, -3n), { offset: top.offset, timestamp: top.timestamp }, `partition ${partition}: max`);
      for (const ts of targets(sent).filter((_, i) => i % 5 === 0)) {
        const want = firstAtOrAfter(s, ts);
        const expected = want === null ? { offset: -1, timestamp: -1 } : { offset: want.offset, timestamp: want.timestamp };
        assert.deepEqual(await ask(partition, BigInt(ts)), expected, `partition ${partition}, timestamp ${ts}`);
      }
    }
  } finally {
    c.close();
    await b.stop();
  }
});
