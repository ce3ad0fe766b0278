// Issue 11, defect 1 (storage side), over real sockets against a real broker process: a record
// batch stamped maxTimestamp = baseTimestamp = 2^63-1 (valid CRC; Kafka accepts it with its
// default message.timestamp.* configs) used to brick its partition — every later produce failed
// on "time index timestamp is a safe integer", SIGTERM crashed in the log shutdown, and every
// restart failed the same way; a small batch with that timestamp bricked the next start after a
// kill -9 (recovery rebuilding the time index). Now: appended, read back, found by ListOffsets,
// and the broker stops cleanly and restarts (after SIGTERM and after SIGKILL) with every record.
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { test } from "node:test";
import { ListOffsetsApi } from "../../src/protocol/api/mod.ts";
import { tempDir } from "../helpers/broker.ts";
import { type BrokerProcess, errorLines, spawnBrokerProcess } from "../helpers/broker_process.ts";
import { buildBatch, parseBatches } from "../helpers/record_batch.ts";
import { createTopic, fetchOnce, produce, WireClient } from "../helpers/wire.ts";

const MAX = 0x7fff_ffff_ffff_ffffn;
const T0 = 1_700_000_000_000n;
const INVALID_TIMESTAMP = 32;
const overrides = {
  "log.segment.bytes": "4096",
  "log.index.interval.bytes": "256",
  "log.flush.offset.checkpoint.interval.ms": "100",
  "log.retention.ms": "-1",
};

interface Sent {
  offset: bigint;
  timestamp: bigint;
  value: string;
}

async function listOffsetAt(c: WireClient, topic: string, partition: number, timestamp: bigint): Promise<{ errorCode: number; offset: bigint; timestamp: bigint }> {
  const res = await c.request(ListOffsetsApi, 5, {
    replicaId: -1,
    isolationLevel: 0,
    topics: [{ name: topic, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp }] }],
  });
  const p = (res.topics as { partitions: { errorCode: number; offset: bigint; timestamp: bigint }[] }[])[0].partitions[0];
  return { errorCode: p.errorCode, offset: p.offset, timestamp: p.timestamp };
}

/** Every record of the partition, from 0 to the high watermark, through Fetch. */
async function readAll(c: WireClient, topic: string, partition: number): Promise<Sent[]> {
  const out: Sent[] = [];
  for (let offset = 0n; ;) {
    const r = await fetchOnce(c, topic, partition, offset, { maxBytes: 1 << 20, partitionMaxBytes: 1 << 20 });
    assert.equal(r.errorCode, 0, `fetch ${topic}-${partition}@${offset}`);
    const records = r.records ?? new Uint8Array(0);
    if (records.length === 0) return out;
    for (const b of parseBatches(records)) {
      assert.ok(b.crcValid, "stored batches keep their CRC");
      for (const rec of b.records) {
        out.push({ offset: rec.offset, timestamp: BigInt.asIntN(64, rec.timestamp), value: new TextDecoder().decode(rec.value!) });
      }
      offset = b.baseOffset + BigInt(b.lastOffsetDelta) + 1n;
    }
  }
}

/** Produces one batch of n records stamped ts; records it when accepted. Returns the error code. */
async function send(c: WireClient, sent: Sent[], topic: string, partition: number, ts: bigint, n: number, tag: string): Promise<number> {
  const values = Array.from({ length: n }, (_, i) => `${tag}-${i}`.padEnd(60, "."));
  const r = await produce(c, topic, partition, buildBatch(values.map((value) => ({ value })), { baseTimestamp: ts }), 1);
  if (r.errorCode === 0) values.forEach((value, i) => sent.push({ offset: r.baseOffset + BigInt(i), timestamp: ts, value }));
  return r.errorCode;
}

async function checkAll(b: BrokerProcess, sent: Sent[], small: Sent[], what: string): Promise<void> {
  const c = await WireClient.connect(b.port);
  try {
    assert.deepEqual(await readAll(c, "ts", 0), sent, `${what}: every acknowledged record of ts-0, with its timestamp`);
    assert.deepEqual(await readAll(c, "ts", 1), small, `${what}: the small 2^63-1 batch of ts-1`);
    const firstAtOrAfter = (t: bigint) => sent.find((s) => s.timestamp >= t)!;
    for (const target of [MAX, MAX - 1n, T0 + 1n, T0]) {
      const r = await listOffsetAt(c, "ts", 0, target);
      assert.equal(r.errorCode, 0);
      const want = firstAtOrAfter(target);
      assert.deepEqual([r.offset, r.timestamp], [want.offset, want.timestamp], `${what}: ListOffsets ${target}`);
    }
    const latest = await listOffsetAt(c, "ts", 1, MAX);
    assert.deepEqual([latest.errorCode, latest.offset, latest.timestamp], [0, 0n, MAX], `${what}: ListOffsets 2^63-1 on ts-1`);
    // The partitions take more.
    assert.equal(await send(c, sent, "ts", 0, T0 + 5n, 2, `${what}-after`), 0, `${what}: produce after`);
    assert.equal(await send(c, sent, "ts", 0, MAX, 1, `${what}-max-again`), 0, `${what}: another 2^63-1 batch`);
  } finally {
    c.close();
  }
}

test("huge timestamp: a 2^63-1 batch is stored, found, and survives SIGTERM, restart, SIGKILL, restart", { timeout: 240_000 }, async () => {
  const dir = tempDir("strand-hugets-");
  let broker: BrokerProcess | null = null;
  try {
    broker = await spawnBrokerProcess(overrides, dir);
    const sent: Sent[] = [];
    const small: Sent[] = [];
    const c = await WireClient.connect(broker.port);
    try {
      assert.equal((await createTopic(c, "ts", { numPartitions: 2 })).errorCode, 0);
      assert.equal(await send(c, sent, "ts", 0, T0, 3, "before"), 0);
      assert.equal(await send(c, sent, "ts", 0, MAX, 5, "max"), 0, "a 2^63-1 batch is accepted (Kafka's defaults accept it)");
      for (let i = 0; i < 40; i++) assert.equal(await send(c, sent, "ts", 0, T0 + 1n + BigInt(i), 2, `later${i}`), 0, `produce ${i} after the 2^63-1 batch`);
      // Negative timestamps other than -1: Kafka accepts them with its defaults too; whichever the
      // validator decides, an accepted one must be stored like any other.
      for (const ts of [-5n, -(2n ** 62n)]) {
        const code = await send(c, sent, "ts", 0, ts, 1, `neg${ts}`);
        assert.ok(code === 0 || code === INVALID_TIMESTAMP, `negative timestamp ${ts}: error ${code}`);
      }
      assert.equal(await send(c, sent, "ts", 0, MAX, 1, "max2"), 0);
      assert.equal(await send(c, small, "ts", 1, MAX, 1, "small"), 0, "a small 2^63-1 batch on its own partition");
    } finally {
      c.close();
    }
    await checkAll(broker, sent, small, "live");

    broker.signal("SIGTERM");
    assert.equal(await broker.exited, 0, `a clean stop with 2^63-1 in the logs:\n${broker.output().slice(-3000)}`);
    assert.deepEqual(errorLines(broker.output()), []);

    broker = await spawnBrokerProcess(overrides, dir);
    await checkAll(broker, sent, small, "after SIGTERM");
    // kill -9: the active segments (holding 2^63-1) are recovered from the log at the next start.
    broker.signal("SIGKILL");
    await broker.exited;

    broker = await spawnBrokerProcess(overrides, dir);
    assert.match(broker.output(), /not shut down cleanly/, "the restart recovers");
    await checkAll(broker, sent, small, "after SIGKILL");
    broker.signal("SIGTERM");
    assert.equal(await broker.exited, 0, `a clean stop after recovery:\n${broker.output().slice(-3000)}`);
    assert.deepEqual(errorLines(broker.output()), []);
    broker = null;
  } finally {
    if (broker !== null && !broker.hasExited) {
      broker.signal("SIGKILL");
      await broker.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
});
