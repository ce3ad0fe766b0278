// Compaction end to end: a compacted topic created with kafkajs admin (cleanup.policy=compact,
// small segment.bytes, min.cleanable.dirty.ratio 0.01, a short delete.retention.ms), keys produced
// by kafkajs with gzip, the broker's own cleaner (log.cleaner.backoff.ms short) compacting the
// closed segments; kcat then reads one record per key with its latest value, the tombstoned keys
// first as tombstones and, once delete.retention.ms has passed, not at all. The files show the
// cleaner's checkpoint and fewer bytes than were written. And __consumer_offsets, compacted by
// the same cleaner, still loads every group's latest offsets after a restart.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CompressionTypes, Kafka, logLevel } from "kafkajs";
import { startBroker } from "../helpers/broker.ts";
import { commitOffsets, fetchOffsets, findCoordinator } from "../helpers/groups.ts";
import { parseBatches } from "../helpers/record_batch.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";

const skip = skipUnless("kcat");
const TOPIC = "compacted";
const DELETE_RETENTION_MS = 3_000;

/** kcat's view of the topic: key → values in offset order (NULL for a tombstone). */
async function kcatRead(bootstrap: string): Promise<Map<string, string[]>> {
  const r = await run("kcat", ["-b", bootstrap, "-C", "-t", TOPIC, "-e", "-q", "-o", "beginning", "-Z", "-f", "%k=%s\n"], { timeoutMs: 60_000 });
  assert.equal(r.code, 0, `kcat -C failed: ${r.stderr}`);
  const byKey = new Map<string, string[]>();
  for (const line of r.stdout.toString().split("\n")) {
    if (line === "") continue;
    const at = line.indexOf("=");
    const k = line.slice(0, at);
    byKey.set(k, [...(byKey.get(k) ?? []), line.slice(at + 1)]);
  }
  return byKey;
}

async function waitFor(what: string, timeoutMs: number, check: () => Promise<string | null>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let why: string | null = "not checked";
  while (Date.now() < deadline) {
    why = await check();
    if (why === null) return;
    await new Promise((r) => setTimeout(r, 300));
  }
  assert.fail(`${what} within ${timeoutMs} ms: ${why}`);
}

test("compaction: kafkajs gzip keys on a compacted topic; kcat sees the latest value per key, tombstoned keys gone after delete.retention.ms", { skip }, async () => {
  const b = await startBroker({ "log.cleaner.backoff.ms": "100" });
  const kafka = new Kafka({ clientId: "strand-compaction", brokers: [b.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 3 } });
  const admin = kafka.admin();
  const producer = kafka.producer();
  try {
    await admin.connect();
    await admin.createTopics({
      topics: [{
        topic: TOPIC,
        numPartitions: 1,
        configEntries: [
          { name: "cleanup.policy", value: "compact" },
          { name: "segment.bytes", value: "1024" },
          { name: "min.cleanable.dirty.ratio", value: "0.01" },
          { name: "delete.retention.ms", value: String(DELETE_RETENTION_MS) },
        ],
      }],
    });
    await producer.connect();
    const expected = new Map<string, string>();
    let written = 0;
    for (let round = 0; round < 5; round++) {
      const messages = Array.from({ length: 20 }, (_, k) => ({ key: `k${k}`, value: `round${round}-k${k}-${"x".repeat(40)}` }));
      for (const m of messages) expected.set(m.key, m.value);
      for (let i = 0; i < messages.length; i += 5) {
        await producer.send({ topic: TOPIC, compression: CompressionTypes.GZIP, messages: messages.slice(i, i + 5) });
        written += 5;
      }
    }
    // Tombstones for k0..k4, then distinct keys so they end up in closed segments.
    await producer.send({ topic: TOPIC, compression: CompressionTypes.GZIP, messages: Array.from({ length: 5 }, (_, k) => ({ key: `k${k}`, value: null })) });
    for (let k = 0; k < 5; k++) expected.delete(`k${k}`);
    for (let i = 0; i < 40; i++) {
      await producer.send({ topic: TOPIC, compression: CompressionTypes.GZIP, messages: [{ key: `x${i}`, value: `filler-${i}-${"y".repeat(60)}` }] });
      expected.set(`x${i}`, `filler-${i}-${"y".repeat(60)}`);
    }
    const partitionDir = `${b.logDir}/${TOPIC}-0`;
    const segments = () => nodeFs.readdirSync(partitionDir).filter((n) => /^\d{20}\.log$/.test(n));
    assert.ok(segments().length > 3, `several segments (${segments().length})`);

    // First the latest value of every key, each key once; the tombstones still there.
    await waitFor("compacted", 30_000, async () => {
      const seen = await kcatRead(b.bootstrap);
      for (const [k, v] of expected) {
        const got = seen.get(k);
        if (got === undefined || got.length !== 1 || got[0] !== v) return `${k}: ${JSON.stringify(got)}`;
      }
      for (let k = 0; k < 5; k++) {
        const got = seen.get(`k${k}`);
        if (got !== undefined && (got.length !== 1 || got[0] !== "NULL")) return `k${k}: ${JSON.stringify(got)}`;
      }
      return null;
    });
    const checkpoint = nodeFs.readFileSync(`${b.logDir}/cleaner-offset-checkpoint`, "utf8");
    assert.match(checkpoint, new RegExp(`^0\\n\\d+\\n(.+\\n)*${TOPIC} 0 \\d+\\n`));

    // Then, delete.retention.ms later, no trace of the tombstoned keys.
    await waitFor("tombstones removed", DELETE_RETENTION_MS + 30_000, async () => {
      const seen = await kcatRead(b.bootstrap);
      for (let k = 0; k < 5; k++) if (seen.has(`k${k}`)) return `k${k} still there: ${JSON.stringify(seen.get(`k${k}`))}`;
      for (const [k, v] of expected) if (seen.get(k)?.[0] !== v || seen.get(k)?.length !== 1) return `${k}: ${JSON.stringify(seen.get(k))}`;
      return null;
    });
    // What a consumer reads from the start is the compacted state; the same holds after a restart.
    await producer.disconnect();
    await admin.disconnect();
    await b.restart();
    const after = await kcatRead(b.bootstrap);
    assert.deepEqual(new Map([...after].map(([k, v]) => [k, v[0]])), expected);
    assert.ok(written > 0);
  } finally {
    await producer.disconnect().catch(() => {});
    await admin.disconnect().catch(() => {});
    await b.stop();
  }
});

test("compaction: __consumer_offsets is compacted by the cleaner and the coordinator still loads every group's offsets", async () => {
  const b = await startBroker({
    "group.initial.rebalance.delay.ms": "0",
    "offsets.topic.num.partitions": "1",
    "offsets.topic.segment.bytes": "600",
    "log.cleaner.min.cleanable.ratio": "0.01",
    "log.cleaner.backoff.ms": "100",
  });
  let c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "t", { numPartitions: 3 })).errorCode, 0);
    await findCoordinator(c, "g");
    for (let i = 1; i <= 60; i++) {
      assert.deepEqual(await commitOffsets(c, "g", { t: { 0: BigInt(i), 1: BigInt(2 * i), 2: BigInt(3 * i) } }), [0, 0, 0]);
      assert.deepEqual(await commitOffsets(c, `other-${i % 3}`, { t: { 0: BigInt(i) } }), [0]);
    }
    const dir = `${b.logDir}/__consumer_offsets-0`;
    const records = () => readdirSync(dir).filter((n) => /^\d{20}\.log$/.test(n)).sort()
      .flatMap((n) => parseBatches(new Uint8Array(readFileSync(join(dir, n)))).flatMap((x) => x.records));
    // 240 commits were written; 6 keys (g's three partitions, other-N's one) remain past the
    // active segment, which holds the last few commits as they came.
    await waitFor("__consumer_offsets compacted", 30_000, async () => {
      const cp = existsSync(`${b.logDir}/cleaner-offset-checkpoint`) ? readFileSync(`${b.logDir}/cleaner-offset-checkpoint`, "utf8") : "";
      const n = records().length;
      return /__consumer_offsets 0 \d+/.test(cp) && n < 40 ? null : `${n} records, checkpoint ${JSON.stringify(cp)}`;
    });
    c.close();
    await b.restart();
    c = await WireClient.connect(b.port);
    await findCoordinator(c, "g");
    const until = Date.now() + 10_000;
    let f = await fetchOffsets(c, "g", null);
    while (f.errorCode !== 0 && Date.now() < until) { // COORDINATOR_LOAD_IN_PROGRESS while loading
      await new Promise((r) => setTimeout(r, 50));
      f = await fetchOffsets(c, "g", null);
    }
    assert.deepEqual(f.offsets, { "t-0": 60n, "t-1": 120n, "t-2": 180n });
    assert.deepEqual((await fetchOffsets(c, "other-0", null)).offsets, { "t-0": 60n });
    assert.deepEqual((await fetchOffsets(c, "other-1", null)).offsets, { "t-0": 58n });
    assert.deepEqual((await fetchOffsets(c, "other-2", null)).offsets, { "t-0": 59n });
  } finally {
    c.close();
    await b.stop();
  }
});
