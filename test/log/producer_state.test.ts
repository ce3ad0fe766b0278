// Producer state (Kafka 3.8's ProducerStateManager rules) on a real Log over real files:
// duplicates, OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH, follower appends, the
// snapshot codec, snapshots at roll and close, the rebuild after an unclean stop, truncation,
// expiration, and the bound on entries.
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { test } from "node:test";
import { decodeSnapshot, encodeSnapshot, Log, type LogConfig, ProducerStateManager, type ProducerStateEntry, snapshotFileName } from "../../src/log/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Platform } from "../../src/platform/types.ts";
import { ErrorCode, KafkaError } from "../../src/util/errors.ts";
import { type LogFields, type Logger, silentLogger } from "../../src/util/logger.ts";
import { producerBatchesRetained } from "../../src/util/limits.ts";
import { buildBatch, concatBytes, valueRecords } from "../helpers/record_batch.ts";
import { withTempDir } from "../helpers/temp_dir.ts";

const platform: Platform = await loadPlatform();

const config: LogConfig = { segmentBytes: 1 << 30, segmentMs: 7 * 24 * 3_600_000, indexIntervalBytes: 4096, segmentIndexBytes: 10 << 20 };
const open = (dir: string, clean = true, logger: Logger = silentLogger) =>
  Log.open(platform, dir, "t", 0, config, logger, { hadCleanShutdown: clean, recoveryPoint: 0, logStartOffset: 0, highWatermark: null });

/** An idempotent batch of n records; timestamps now-ish so expiry does not take it at load. */
function idem(pid: bigint, epoch: number, seq: number, n = 2): Uint8Array {
  return buildBatch(valueRecords(n, `p${pid}e${epoch}s${seq}-`), { producerId: pid, producerEpoch: epoch, baseSequence: seq, baseTimestamp: BigInt(Date.now()) });
}

function append(log: Log, batch: Uint8Array, n = 2) {
  return log.appendAsLeader(batch.slice(), n, 0);
}

function refused(fn: () => unknown, code: number): void {
  assert.throws(fn, (e: unknown) => e instanceof KafkaError && e.code === code, `expected error code ${code}`);
}

test("producer state: a retry of any of the last five batches is a duplicate answered with its original offsets; nothing is appended", async () => {
  await withTempDir((dir) => {
    const log = open(dir);
    const firsts: number[] = [];
    for (let i = 0; i < 7; i++) firsts.push(append(log, idem(7n, 0, i * 2)).firstOffset);
    const end = log.logEndOffset;
    for (let i = 2; i < 7; i++) {
      const info = append(log, idem(7n, 0, i * 2));
      assert.equal(info.duplicate, true);
      assert.equal(info.firstOffset, firsts[i]);
      assert.equal(info.lastOffset, firsts[i] + 1);
    }
    assert.equal(log.logEndOffset, end, "duplicates append nothing");
    // Older than the last five: not found, and not in sequence either.
    refused(() => append(log, idem(7n, 0, 2)), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    const entry = log.producerState.lastEntry(7n)!;
    assert.equal(entry.batches.length, producerBatchesRetained);
    assert.equal(entry.batches[4].lastSeq, 13);
    assert.equal(log.producerState.mapEndOffset, log.logEndOffset);
    log.close();
  });
});

test("producer state: sequence gaps, a new epoch not at 0 and an epoch going back are refused with Kafka's codes", async () => {
  await withTempDir((dir) => {
    const log = open(dir);
    append(log, idem(1n, 3, 10)); // unknown producer: any sequence (KIP-360)
    refused(() => append(log, idem(1n, 3, 13)), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER); // gap
    refused(() => append(log, idem(1n, 3, 11)), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER); // overlaps, not a duplicate
    refused(() => append(log, idem(1n, 4, 5)), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER); // new epoch must start at 0
    refused(() => append(log, idem(1n, 2, 12)), ErrorCode.INVALID_PRODUCER_EPOCH);
    assert.equal(append(log, idem(1n, 3, 12)).duplicate, undefined);
    append(log, idem(1n, 4, 0)); // epoch bump at 0
    assert.equal(log.producerState.lastEntry(1n)!.batches.length, 1, "a new epoch drops the old batches");
    refused(() => append(log, idem(1n, 3, 14)), ErrorCode.INVALID_PRODUCER_EPOCH);
    // int32 wrap: after 2^31-1 comes 0.
    append(log, idem(2n, 0, 0x7fffffff - 1)); // seqs 2^31-2, 2^31-1
    append(log, idem(2n, 0, 0));
    assert.equal(log.logEndOffset, 10);
    log.close();
  });
});

test("producer state: the batches of one record set are checked against the earlier ones of the same set", async () => {
  await withTempDir((dir) => {
    const log = open(dir);
    append(log, idem(3n, 0, 0));
    const set = concatBytes(idem(3n, 0, 2), idem(3n, 0, 4));
    assert.equal(log.appendAsLeader(set, 4, 0).firstOffset, 2);
    const gap = concatBytes(idem(3n, 0, 6), idem(3n, 0, 9));
    refused(() => log.appendAsLeader(gap, 4, 0), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    assert.equal(log.logEndOffset, 6, "a refused set appends nothing");
    assert.equal(log.producerState.lastEntry(3n)!.batches.at(-1)!.lastOffset, 5);
    log.close();
  });
});

test("producer state: a follower's appends keep the same state without checks, so it deduplicates once leader", async () => {
  await withTempDir((dir) => {
    const leader = open(`${dir}/leader`);
    const follower = open(`${dir}/follower`);
    append(leader, idem(9n, 1, 0));
    append(leader, idem(9n, 1, 2));
    append(leader, buildBatch(valueRecords(3)), 3);
    append(leader, idem(9n, 1, 4));
    const fetched = leader.read(0, 1 << 20, true).records;
    follower.appendAsFollower(fetched.slice());
    const a = leader.producerState.lastEntry(9n)!;
    const b = follower.producerState.lastEntry(9n)!;
    assert.deepEqual(b.batches, a.batches);
    assert.equal(follower.producerState.mapEndOffset, 9);
    const info = follower.appendAsLeader(idem(9n, 1, 4), 2, 1);
    assert.deepEqual([info.duplicate, info.firstOffset, info.lastOffset], [true, 7, 8]);
    // A follower takes an epoch going back (only logged): the leader decided.
    const lines: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (_f: LogFields, m: string) => void lines.push(m), child: () => logger };
    const f2 = open(`${dir}/f2`, true, logger);
    f2.appendAsFollower(concatBytes(fetched, withBase(idem(9n, 0, 0), 9)));
    assert.equal(f2.producerState.lastEntry(9n)!.producerEpoch, 0);
    assert.ok(lines.some((m) => m.includes("epoch went back")));
    for (const l of [leader, follower, f2]) l.close();
  });
});

function withBase(batch: Uint8Array, base: number): Uint8Array {
  new DataView(batch.buffer, batch.byteOffset).setBigInt64(0, BigInt(base));
  return batch;
}

test("producer snapshot codec: written then read back; corrupt or short bytes are refused", () => {
  const entries: ProducerStateEntry[] = [
    { producerId: 5n, producerEpoch: 2, batches: [{ firstSeq: 10, lastSeq: 14, firstOffset: 100, lastOffset: 104, timestampMs: 1_700_000_000_000 }], lastTimestampMs: 1_700_000_000_000, coordinatorEpoch: -1, currentTxnFirstOffset: -1 },
    { producerId: 1n << 40n, producerEpoch: 0, batches: [{ firstSeq: 0x7ffffffe, lastSeq: 1, firstOffset: 7, lastOffset: 10, timestampMs: 5 }], lastTimestampMs: 5, coordinatorEpoch: 3, currentTxnFirstOffset: 7 },
    { producerId: 6n, producerEpoch: 1, batches: [], lastTimestampMs: 9, coordinatorEpoch: -1, currentTxnFirstOffset: -1 },
  ];
  const bytes = encodeSnapshot(entries);
  assert.equal(bytes.length, 10 + 3 * 46);
  assert.deepEqual(decodeSnapshot(bytes), entries);
  const flipped = bytes.slice();
  flipped[30] ^= 1;
  assert.throws(() => decodeSnapshot(flipped), /CRC/);
  assert.throws(() => decodeSnapshot(bytes.subarray(0, 40)), /CorruptSnapshot|CRC|fill/);
  const v2 = bytes.slice();
  v2[1] = 2;
  assert.throws(() => decodeSnapshot(v2), /version/);
  assert.throws(() => decodeSnapshot(new Uint8Array(3)), /header/);
});

test("producer state: snapshots at roll (only when changed) and clean close; a clean restart loads them and deduplicates", async () => {
  await withTempDir((dir) => {
    let log = open(dir);
    append(log, buildBatch(valueRecords(2)), 2);
    log.roll();
    assert.deepEqual(log.producerSnapshotOffsets, [], "no producer ever wrote: no snapshot");
    append(log, idem(4n, 0, 0));
    log.roll();
    assert.deepEqual(log.producerSnapshotOffsets, [4]);
    append(log, buildBatch(valueRecords(2)), 2);
    log.roll();
    assert.deepEqual(log.producerSnapshotOffsets, [4], "unchanged state: no new snapshot");
    append(log, idem(4n, 0, 2));
    log.close();
    assert.deepEqual(log.producerSnapshotOffsets, [4, 8]);
    assert.ok(nodeFs.existsSync(`${dir}/${snapshotFileName(8)}`));
    log = open(dir);
    const info = append(log, idem(4n, 0, 2));
    assert.deepEqual([info.duplicate, info.firstOffset], [true, 6]);
    refused(() => append(log, idem(4n, 0, 5)), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    log.close();
  });
});

test("producer state: after an unclean stop it is rebuilt from the latest snapshot and the active segment's headers only", async () => {
  await withTempDir((dir) => {
    let log = open(dir);
    append(log, idem(1n, 0, 0)); // 0-1
    log.roll(); // snapshot at 2
    append(log, idem(2n, 0, 0)); // 2-3
    append(log, idem(1n, 0, 2)); // 4-5
    log.flush();
    // No close: a kill -9. The active segment's batches past the snapshot are replayed.
    log = open(dir, false);
    assert.deepEqual(append(log, idem(1n, 0, 2)).firstOffset, 4);
    assert.equal(append(log, idem(2n, 0, 0)).duplicate, true);
    const first = append(log, idem(1n, 0, 0)); // from the snapshot
    assert.deepEqual([first.duplicate, first.firstOffset], [true, 0]);
    log.close();
    // A corrupt latest snapshot is skipped (logged, deleted); the state then comes from the older one.
    log = open(dir);
    append(log, idem(3n, 0, 0));
    log.roll();
    const latest = log.producerSnapshotOffsets.at(-1)!;
    log.close();
    const path = `${dir}/${snapshotFileName(latest)}`;
    const bytes = nodeFs.readFileSync(path);
    bytes[bytes.length - 1] ^= 0xff;
    nodeFs.writeFileSync(path, bytes);
    const warned: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (_f: LogFields, m: string) => void warned.push(m), child: () => logger };
    log = open(dir, false, logger);
    assert.ok(warned.some((m) => m.includes("snapshot that does not decode")));
    assert.ok(!nodeFs.existsSync(path));
    assert.ok(log.producerState.lastEntry(1n) !== undefined, "the older snapshot's producers are back");
    log.close();
  });
});

test("producer state: a truncation rebuilds it to the new log end; a full truncation empties it and deletes the snapshots", async () => {
  await withTempDir((dir) => {
    const log = open(dir);
    append(log, idem(1n, 0, 0)); // 0-1
    log.roll(); // snapshot at 2
    append(log, idem(1n, 0, 2)); // 2-3
    log.roll(); // snapshot at 4
    append(log, idem(1n, 0, 4)); // 4-5
    append(log, idem(1n, 0, 6)); // 6-7
    log.truncateTo(6);
    assert.equal(log.producerState.lastEntry(1n)!.batches.at(-1)!.lastSeq, 5);
    assert.equal(log.producerState.mapEndOffset, 6);
    assert.equal(append(log, idem(1n, 0, 6)).firstOffset, 6, "the truncated batch is no duplicate any more");
    log.truncateTo(3);
    assert.deepEqual(log.producerSnapshotOffsets, [2]);
    assert.equal(log.producerState.lastEntry(1n)!.batches.at(-1)!.lastSeq, 1);
    log.truncateFullyAndStartAt(50);
    assert.equal(log.producerState.activeProducers().size, 0);
    assert.deepEqual(log.producerSnapshotOffsets, []);
    assert.equal(log.producerState.mapEndOffset, 50);
    log.close();
  });
});

test("producer state: producers expire after producer.id.expiration.ms; past the bound the least recently written is evicted", () => {
  const m = new ProducerStateManager("t-0", silentLogger, 0, 3);
  m.expirationMs = 1000;
  const set = (pid: bigint, seq: number, ts: number, offset: number) => {
    const b = buildBatch(valueRecords(1), { producerId: pid, producerEpoch: 0, baseSequence: seq, baseTimestamp: BigInt(ts) });
    const check = m.checkLeaderAppend(b, offset);
    assert.ok(check !== null && check.batches !== null);
    m.commit(check.batches);
  };
  set(1n, 0, 10_000, 0);
  set(2n, 0, 10_500, 1);
  set(3n, 0, 11_000, 2);
  set(1n, 1, 11_200, 3); // 1 is now the most recent
  set(4n, 0, 11_300, 4); // past 3 entries: 2 goes
  assert.deepEqual([...m.activeProducers().keys()], [3n, 1n, 4n]);
  // An evicted producer's next write is taken with any sequence, like an expired one's.
  set(2n, 7, 11_400, 5);
  assert.equal(m.removeExpiredProducers(12_000), 0);
  assert.deepEqual([...m.activeProducers().keys()], [1n, 4n, 2n], "3 was evicted when 2 came back");
  assert.equal(m.removeExpiredProducers(12_200), 1); // 1's last write (11_200) is 1000 ms old
  assert.deepEqual([...m.activeProducers().keys()], [4n, 2n]);
});

test("producer state: a clean start without a snapshot is empty at the log end offset (Kafka's upgrade rule: no log walk)", async () => {
  await withTempDir((dir) => {
    let log = open(dir);
    append(log, idem(8n, 0, 0));
    append(log, buildBatch(valueRecords(2)), 2);
    log.close();
    for (const n of nodeFs.readdirSync(dir)) if (n.endsWith(".snapshot")) nodeFs.rmSync(`${dir}/${n}`);
    log = open(dir);
    assert.equal(log.producerState.activeProducers().size, 0);
    assert.equal(log.producerState.mapEndOffset, 4);
    log.close();
    assert.deepEqual(nodeFs.readdirSync(dir).filter((n) => n.endsWith(".snapshot")), [], "nothing changed: no snapshot written");
  });
});

test("producer state: segments deleted below a moved log start take their snapshots, but never the latest one; the producers stay", async () => {
  await withTempDir((dir) => {
    const log = open(dir);
    append(log, idem(1n, 0, 0)); // 0-1
    log.roll(); // snapshot 2
    append(log, idem(1n, 0, 2)); // 2-3
    log.roll(); // snapshot 4
    append(log, buildBatch(valueRecords(2)), 2); // 4-5
    log.roll(); // unchanged: none at 6
    append(log, buildBatch(valueRecords(2)), 2); // 6-7
    log.updateHighWatermark(log.logEndOffset);
    assert.deepEqual(log.producerSnapshotOffsets, [2, 4]);
    log.maybeIncrementLogStartOffset(6, "test");
    assert.equal(log.deleteOldSegments(Date.now()), 3);
    assert.deepEqual(log.producerSnapshotOffsets, [4], "snapshot 2 went with its segment; 4 still carries the state");
    assert.equal(log.producerState.lastEntry(1n)!.batches.at(-1)!.lastSeq, 3, "Kafka 3.x keeps producers when the log start moves");
    log.close();
    // Unclean reopen: the state comes back from snapshot 4, though its segment is gone.
    const again = open(dir, false);
    assert.equal(again.producerState.lastEntry(1n)!.batches.at(-1)!.lastSeq, 3);
    again.close();
  });
});

test("producer state: the snapshot a clean stop needs is written off the event loop first (shutdownGradually); a change after it is written by close", async () => {
  await withTempDir(async (dir) => {
    const log = open(dir);
    append(log, idem(6n, 0, 0));
    await log.writeStateInBackground();
    assert.deepEqual(log.producerSnapshotOffsets, [2]);
    assert.ok(!nodeFs.readdirSync(dir).some((n) => n.endsWith(".tmp")), "the temp file was renamed");
    append(log, buildBatch(valueRecords(2)), 2);
    log.close();
    assert.deepEqual(log.producerSnapshotOffsets, [2], "no change since: close writes nothing");
    const again = open(dir);
    assert.equal(append(again, idem(6n, 0, 0)).duplicate, true);
    append(again, idem(6n, 0, 2));
    await again.writeStateInBackground();
    append(again, idem(6n, 0, 4));
    again.close();
    assert.deepEqual(again.producerSnapshotOffsets, [2, 6, 8]);
  });
});
