// The idempotent producer's log side over real sockets against a real broker (issue 15): a retry
// of an acknowledged batch is answered NONE with the original base offset and appended once; a
// sequence gap is OUT_OF_ORDER_SEQUENCE_NUMBER; an epoch going back is INVALID_PRODUCER_EPOCH;
// the state survives a clean restart (from the `.snapshot` written at close) and a kill -9 (rebuilt
// from the log), so a retry after either is still deduplicated.
import assert from "node:assert/strict";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { test } from "node:test";
import { startBroker, tempDir } from "../helpers/broker.ts";
import { spawnBrokerProcess } from "../helpers/broker_process.ts";
import { buildBatch, parseBatches, valueRecords } from "../helpers/record_batch.ts";
import { createTopic, fetchOnce, listOffset, produce, WireClient } from "../helpers/wire.ts";
import { ErrorCode } from "../../src/util/errors.ts";

function idem(pid: bigint, epoch: number, seq: number, n = 3): Uint8Array {
  return buildBatch(valueRecords(n, `p${pid}-e${epoch}-s${seq}-`), { producerId: pid, producerEpoch: epoch, baseSequence: seq, baseTimestamp: BigInt(Date.now()) });
}

/** Every record value stored in the partition, in offset order. */
async function storedValues(c: WireClient, topic: string): Promise<string[]> {
  const f = await fetchOnce(c, topic, 0, 0n);
  assert.equal(f.errorCode, ErrorCode.NONE);
  return parseBatches(f.records ?? new Uint8Array(0)).flatMap((b) => b.records.map((r) => new TextDecoder().decode(r.value!)));
}

test("idempotent produce: duplicate retry, sequence gap and epoch regression answered as Kafka answers them; a clean restart keeps the state", async () => {
  const b = await startBroker({ "auto.create.topics.enable": "false" });
  let c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "idem")).errorCode, ErrorCode.NONE);
    const first = await produce(c, "idem", 0, idem(1000n, 0, 0));
    assert.deepEqual([first.errorCode, first.baseOffset], [ErrorCode.NONE, 0n]);
    assert.equal((await produce(c, "idem", 0, idem(1000n, 0, 3))).baseOffset, 3n);
    assert.equal((await produce(c, "idem", 0, buildBatch(valueRecords(2, "plain-")))).baseOffset, 6n);
    // The retry of the first batch: NONE with its original offset, nothing appended.
    const retry = await produce(c, "idem", 0, idem(1000n, 0, 0));
    assert.deepEqual([retry.errorCode, retry.baseOffset], [ErrorCode.NONE, 0n]);
    const gap = await produce(c, "idem", 0, idem(1000n, 0, 7));
    assert.equal(gap.errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, gap.errorMessage ?? "");
    assert.equal((await produce(c, "idem", 0, idem(1000n, 1, 0))).baseOffset, 8n); // epoch bump
    const fenced = await produce(c, "idem", 0, idem(1000n, 0, 6));
    assert.equal(fenced.errorCode, ErrorCode.INVALID_PRODUCER_EPOCH, fenced.errorMessage ?? "");
    assert.equal((await listOffset(c, "idem", 0, -1n)).offset, 11n);
    const values = await storedValues(c, "idem");
    assert.equal(values.length, 11);
    assert.equal(new Set(values).size, 11, "no record stored twice");

    c.close();
    await b.restart();
    const snapshots = readdirSync(`${b.logDir}/idem-0`).filter((n) => n.endsWith(".snapshot"));
    assert.deepEqual(snapshots, ["00000000000000000011.snapshot"], "written at the clean close");
    c = await WireClient.connect(b.port);
    const again = await produce(c, "idem", 0, idem(1000n, 1, 0));
    assert.deepEqual([again.errorCode, again.baseOffset], [ErrorCode.NONE, 8n]);
    assert.equal((await produce(c, "idem", 0, idem(1000n, 1, 4))).errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    assert.equal((await produce(c, "idem", 0, idem(1000n, 1, 3))).baseOffset, 11n);
    assert.equal((await listOffset(c, "idem", 0, -1n)).offset, 14n);
  } finally {
    c.close();
    await b.stop();
  }
});

test("idempotent produce: after a kill -9 the state is rebuilt from the log, so a retry is still deduplicated", async () => {
  const dir = tempDir("strand-idem-crash-");
  const overrides = { "num.partitions": "1", "log.segment.bytes": "4096" };
  try {
    let p = await spawnBrokerProcess(overrides, dir);
    let c = await WireClient.connect(p.port);
    assert.equal((await createTopic(c, "crash")).errorCode, ErrorCode.NONE);
    // Enough batches to roll a few 4 KiB segments (snapshots at some rolls), then more in the active one.
    const offsets: bigint[] = [];
    for (let i = 0; i < 60; i++) {
      const r = await produce(c, "crash", 0, idem(77n, 2, i * 3, 3));
      assert.equal(r.errorCode, ErrorCode.NONE);
      offsets.push(r.baseOffset);
    }
    c.close();
    p.signal("SIGKILL");
    await p.exited;
    p = await spawnBrokerProcess(overrides, dir);
    c = await WireClient.connect(p.port);
    try {
      for (const i of [55, 59]) {
        const retry = await produce(c, "crash", 0, idem(77n, 2, i * 3, 3));
        assert.deepEqual([retry.errorCode, retry.baseOffset], [ErrorCode.NONE, offsets[i]], `retry of batch ${i}`);
      }
      assert.equal((await produce(c, "crash", 0, idem(77n, 2, 181, 3))).errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
      assert.equal((await produce(c, "crash", 0, idem(77n, 2, 180, 3))).baseOffset, 180n);
      assert.equal((await listOffset(c, "crash", 0, -1n)).offset, 183n);
      assert.ok(p.logLines().some((l) => l.msg === "rebuilt producer state from the log"), "the unclean start replayed the active segment");
    } finally {
      c.close();
      await p.stop();
    }
  } finally {
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  }
});

test("idempotent produce: a producer idle past producer.id.expiration.ms loses its state; its next write is taken with any sequence", async () => {
  const b = await startBroker({ "producer.id.expiration.ms": "1000", "producer.id.expiration.check.interval.ms": "100" });
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "expiry")).errorCode, ErrorCode.NONE);
    assert.equal((await produce(c, "expiry", 0, idem(5n, 0, 0))).errorCode, ErrorCode.NONE);
    const gap = await produce(c, "expiry", 0, idem(5n, 0, 50));
    assert.equal(gap.errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, "known producer: the gap is refused");
    let answer: number = gap.errorCode;
    for (let i = 0; i < 100 && answer !== ErrorCode.NONE; i++) {
      await new Promise((r) => setTimeout(r, 100));
      // Refused (nothing appended) until the check removes the idle producer.
      answer = (await produce(c, "expiry", 0, idem(5n, 0, 50))).errorCode;
    }
    assert.equal(answer, ErrorCode.NONE, "accepted once the producer expired");
    assert.equal(b.broker.services.logManager.getLog("expiry", 0)!.producerState.lastEntry(5n)!.batches[0].firstSeq, 50);
  } finally {
    c.close();
    await b.stop();
  }
});
