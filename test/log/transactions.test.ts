// Transactions on a real Log over real files (Kafka 3.8's ProducerStateManager transaction
// tracking, TransactionIndex, UnifiedLog.lastStableOffset / collectAbortedTransactions): the
// `.txnindex` codec and file, the last stable offset moving with transactions, markers and the
// high watermark, aborted ranges collected for a read, markers fenced by producer and coordinator
// epoch, a follower's state from fetched batches, the state after a clean restart, an unclean one
// (the index rebuilt), a truncation, and the cleaner removing aborted data, then the markers
// once no data of theirs is left and their delete horizon passed (Kafka's rules).
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { test } from "node:test";
import {
  type AbortedTxn,
  abortedTxnsForRead,
  LogCleaner,
  logConfigDefaults,
  collectAbortedTxns,
  decodeAbortedTxns,
  encodeAbortedTxn,
  Log,
  type LogConfig,
  TransactionIndex,
} from "../../src/log/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Platform } from "../../src/platform/types.ts";
import { buildEndTxnMarkerBatch, controlMarkerAt } from "../../src/protocol/mod.ts";
import { ErrorCode, KafkaError } from "../../src/util/errors.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { buildBatch, parseBatches, text, valueRecords } from "../helpers/record_batch.ts";
import { withTempDir } from "../helpers/temp_dir.ts";

const platform: Platform = await loadPlatform();

const config: LogConfig = { segmentBytes: 1 << 30, segmentMs: 7 * 24 * 3_600_000, indexIntervalBytes: 4096, segmentIndexBytes: 10 << 20 };
const open = (dir: string, clean = true, highWatermark: number | null = null) =>
  Log.open(platform, dir, "t", 0, config, silentLogger, { hadCleanShutdown: clean, recoveryPoint: 0, logStartOffset: 0, highWatermark });

/** A transactional batch of n records of producer pid. */
function txn(pid: bigint, epoch: number, seq: number, n = 2): Uint8Array {
  return buildBatch(valueRecords(n, `p${pid}s${seq}-`), { producerId: pid, producerEpoch: epoch, baseSequence: seq, attributes: 0x10, baseTimestamp: BigInt(Date.now()) });
}
function plain(n = 1): Uint8Array {
  // Stamped now as the markers are: segment.ms is timed by batch timestamps (Kafka's timeWaitedForRoll).
  return buildBatch(valueRecords(n, "plain-"), { baseTimestamp: BigInt(Date.now()) });
}
const marker = (committed: boolean, coordinatorEpoch = 0) => ({ committed, coordinatorEpoch });
const hwToEnd = (log: Log) => log.updateHighWatermark(log.logEndOffset);

test("txnindex codec: Kafka's 34-byte entries round trip; a torn tail is cut; the file follows truncation and rename", async () => {
  const t: AbortedTxn = { producerId: 123456789012n, firstOffset: 5, lastOffset: 42, lastStableOffset: 43 };
  const bytes = encodeAbortedTxn(t);
  assert.equal(bytes.length, 34);
  const dv = new DataView(bytes.buffer);
  assert.equal(dv.getInt16(0), 0, "version 0");
  assert.equal(dv.getBigInt64(2), 123456789012n);
  assert.equal(dv.getBigInt64(10), 5n);
  assert.equal(dv.getBigInt64(18), 42n);
  assert.equal(dv.getBigInt64(26), 43n);
  assert.deepEqual(decodeAbortedTxns(bytes), [t]);
  await withTempDir((dir) => {
    const path = `${dir}/00000000000000000000.txnindex`;
    const idx = new TransactionIndex(platform, path);
    assert.equal(nodeFs.existsSync(path), false, "no file until an entry is appended");
    idx.append(t);
    idx.append({ producerId: 2n, firstOffset: 50, lastOffset: 60, lastStableOffset: 61 });
    idx.append({ producerId: 3n, firstOffset: 55, lastOffset: 70, lastStableOffset: 71 });
    assert.throws(() => idx.append({ producerId: 4n, firstOffset: 1, lastOffset: 70, lastStableOffset: 71 }), /increase/);
    idx.close();
    // A crash mid-append leaves half an entry: it is cut at the next read.
    nodeFs.appendFileSync(path, new Uint8Array(10));
    const again = new TransactionIndex(platform, path);
    assert.deepEqual(again.all.map((e) => e.lastOffset), [42, 60, 70]);
    assert.equal(nodeFs.statSync(path).size, 3 * 34);
    again.truncateTo(60);
    assert.deepEqual(again.all.map((e) => e.lastOffset), [42]);
    assert.equal(nodeFs.statSync(path).size, 34);
    again.renameTo(`${path}.deleted`);
    assert.equal(nodeFs.existsSync(path), false);
    again.remove();
    assert.equal(nodeFs.existsSync(`${path}.deleted`), false);
  });
});

test("control batch: Kafka's EndTransactionMarker key and value, read back; an unknown control type is not a marker", () => {
  const b = buildEndTxnMarkerBatch(7n, 3, { committed: false, coordinatorEpoch: 11 }, 1_700_000_000_000);
  const dv = new DataView(b.buffer);
  assert.equal(dv.getInt16(21) & 0x30, 0x30, "transactional and control");
  assert.equal(dv.getBigInt64(43), 7n);
  assert.equal(dv.getInt16(51), 3);
  assert.equal(dv.getInt32(53), -1, "no sequence");
  assert.deepEqual(controlMarkerAt(b, 0, b.length), { committed: false, coordinatorEpoch: 11 });
  const c = buildEndTxnMarkerBatch(7n, 3, { committed: true, coordinatorEpoch: 0 }, 0);
  assert.deepEqual(controlMarkerAt(c, 0, c.length), { committed: true, coordinatorEpoch: 0 });
  // Type 5 (unknown): the key's type is at the record's key + 2. Find the key bytes [0,1] and patch.
  const u = c.slice();
  const at = u.findIndex((_, i) => i > 61 && u[i] === 0 && u[i + 1] === 0 && u[i + 2] === 0 && u[i + 3] === 1);
  u[at + 3] = 5;
  assert.equal(controlMarkerAt(u, 0, u.length), null);
});

test("last stable offset: stops at an open transaction's first offset, moves once the marker is below the high watermark", async () => {
  await withTempDir((dir) => {
    const log = open(dir);
    log.appendAsLeader(plain(), 1, 0); // 0
    hwToEnd(log);
    assert.equal(log.lastStableOffset, 1);
    log.appendAsLeader(txn(1n, 0, 0), 2, 0); // 1-2
    log.appendAsLeader(plain(), 1, 0); // 3
    log.appendAsLeader(txn(2n, 0, 0), 2, 0); // 4-5
    hwToEnd(log);
    assert.equal(log.lastStableOffset, 1, "producer 1's transaction is open at 1");
    assert.equal(log.producerState.lastEntry(1n)?.currentTxnFirstOffset, 1);
    assert.equal(log.producerState.lastEntry(2n)?.currentTxnFirstOffset, 4);
    const m = log.appendTxnMarkerAsLeader(1n, 0, marker(true), 0); // 6
    assert.equal(m.firstOffset, 6);
    assert.equal(log.lastStableOffset, 1, "the commit marker is not below the high watermark yet");
    hwToEnd(log);
    assert.equal(log.lastStableOffset, 4, "producer 2's transaction is still open");
    assert.equal(log.producerState.lastEntry(1n)?.currentTxnFirstOffset, -1);
    log.appendTxnMarkerAsLeader(2n, 0, marker(false), 0); // 7
    log.updateHighWatermark(7);
    assert.equal(log.lastStableOffset, 4, "the abort marker at 7 is not replicated");
    hwToEnd(log);
    assert.equal(log.lastStableOffset, 8);
    assert.deepEqual(log.activeSegment.txnIndex.all, [{ producerId: 2n, firstOffset: 4, lastOffset: 7, lastStableOffset: 8 }]);
    assert.equal(log.activeSegment.txnIndex.all.length, 1, "commits are not indexed");
    // A marker with no open transaction is written, and changes nothing.
    log.appendTxnMarkerAsLeader(99n, 0, marker(false), 0);
    hwToEnd(log);
    assert.equal(log.lastStableOffset, log.logEndOffset);
    assert.equal(log.activeSegment.txnIndex.all.length, 1);
    log.close();
  });
});

test("aborted ranges: collected over the read's range across segments, stopping at an entry whose last stable offset covers it", async () => {
  await withTempDir((dir) => {
    const log = open(dir);
    log.appendAsLeader(txn(1n, 0, 0), 2, 0); // 0-1
    log.appendAsLeader(txn(2n, 0, 0), 2, 0); // 2-3
    log.appendTxnMarkerAsLeader(1n, 0, marker(false), 0); // 4: aborted [0,4], lso 2 (producer 2 open)
    log.roll();
    log.appendAsLeader(plain(), 1, 0); // 5
    log.appendTxnMarkerAsLeader(2n, 0, marker(false), 0); // 6: aborted [2,6], lso 7
    log.appendAsLeader(txn(3n, 0, 0), 2, 0); // 7-8
    log.appendTxnMarkerAsLeader(3n, 0, marker(true), 0); // 9
    hwToEnd(log);
    const ids = (ts: { producerId: bigint }[]) => ts.map((t) => t.producerId);
    assert.deepEqual(ids(collectAbortedTxns(log.logSegments, 0, 3)), [1n, 2n], "entry 1's lso 2 does not cover 3: the next segment is read");
    assert.deepEqual(ids(collectAbortedTxns(log.logSegments, 0, 2)), [1n], "entry 1's lso covers upper bound 2: nothing below 2 can be aborted later");
    assert.deepEqual(ids(collectAbortedTxns(log.logSegments, 5, 10)), [2n]);
    assert.deepEqual(ids(collectAbortedTxns(log.logSegments, 7, 10)), []);
    const read = log.read(0, 1 << 20, true, log.lastStableOffset).records;
    assert.deepEqual(abortedTxnsForRead(log.logSegments, 0, read).map((t) => [t.producerId, t.firstOffset]), [[1n, 0], [2n, 2]]);
    assert.equal(nodeFs.existsSync(`${dir}/00000000000000000000.txnindex`), true);
    assert.equal(nodeFs.existsSync(`${dir}/00000000000000000005.txnindex`), true);
    log.close();
  });
});

test("markers: an older producer epoch is INVALID_PRODUCER_EPOCH, an older coordinator epoch TRANSACTION_COORDINATOR_FENCED; an unknown producer's is written; a plain batch inside a transaction is INVALID_TXN_STATE", async () => {
  await withTempDir((dir) => {
    const log = open(dir);
    log.appendAsLeader(txn(1n, 2, 0), 2, 0);
    log.appendTxnMarkerAsLeader(1n, 2, marker(true, 5), 0);
    const end = log.logEndOffset;
    const code = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        if (e instanceof KafkaError) return e.code;
        throw e;
      }
      return ErrorCode.NONE;
    };
    assert.equal(code(() => log.appendTxnMarkerAsLeader(1n, 1, marker(false, 5), 0)), ErrorCode.INVALID_PRODUCER_EPOCH);
    assert.equal(code(() => log.appendTxnMarkerAsLeader(1n, 2, marker(false, 4), 0)), ErrorCode.TRANSACTION_COORDINATOR_FENCED);
    assert.equal(log.logEndOffset, end, "nothing written");
    assert.equal(code(() => log.appendTxnMarkerAsLeader(1n, 3, marker(false, 6), 0)), ErrorCode.NONE, "a newer epoch (a bumped producer) is taken");
    assert.equal(log.producerState.lastEntry(1n)?.producerEpoch, 3);
    assert.equal(log.producerState.lastEntry(1n)?.coordinatorEpoch, 6);
    assert.equal(code(() => log.appendTxnMarkerAsLeader(555n, 0, marker(false, 0), 0)), ErrorCode.NONE);
    // A plain (idempotent) batch of a producer whose transaction is open: INVALID_TXN_STATE (Kafka's appendDataBatch).
    log.appendAsLeader(txn(8n, 0, 0), 2, 0);
    const idem = buildBatch(valueRecords(1, "i"), { producerId: 8n, producerEpoch: 0, baseSequence: 2, baseTimestamp: BigInt(Date.now()) });
    assert.equal(code(() => log.appendAsLeader(idem, 1, 0)), ErrorCode.INVALID_TXN_STATE);
    log.close();
  });
});

test("follower: fetched transactional batches and markers give the same open transactions, index and last stable offset", async () => {
  await withTempDir(async (dir) => {
    const leader = open(`${dir}/leader`);
    leader.appendAsLeader(txn(1n, 0, 0), 2, 0);
    leader.appendAsLeader(txn(2n, 0, 0), 2, 0);
    leader.appendTxnMarkerAsLeader(1n, 0, marker(false, 1), 0);
    leader.appendAsLeader(txn(3n, 0, 0), 2, 0);
    const follower = open(`${dir}/follower`);
    follower.appendAsFollower(leader.read(0, 1 << 20, true).records);
    follower.updateHighWatermark(follower.logEndOffset);
    assert.deepEqual([...follower.producerState.ongoingTxns], [[2n, 2], [3n, 5]]);
    assert.equal(follower.lastStableOffset, 2);
    assert.deepEqual(follower.activeSegment.txnIndex.all, [{ producerId: 1n, firstOffset: 0, lastOffset: 4, lastStableOffset: 2 }]);
    // As leader it fences an old coordinator and completes the open transactions.
    assert.throws(() => follower.appendTxnMarkerAsLeader(1n, 0, marker(true, 0), 1), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.TRANSACTION_COORDINATOR_FENCED);
    follower.appendTxnMarkerAsLeader(2n, 0, marker(true, 1), 1);
    follower.appendTxnMarkerAsLeader(3n, 0, marker(true, 1), 1);
    follower.updateHighWatermark(follower.logEndOffset);
    assert.equal(follower.lastStableOffset, follower.logEndOffset);
    leader.close();
    follower.close();
  });
});

test("restart: a clean one keeps the open transactions (snapshot's currentTxnFirstOffset); an unclean one rebuilds them and the .txnindex", async () => {
  await withTempDir((dir) => {
    let log = open(dir);
    log.appendAsLeader(txn(1n, 0, 0), 2, 0); // 0-1
    log.appendAsLeader(txn(2n, 0, 0), 2, 0); // 2-3
    log.appendTxnMarkerAsLeader(2n, 0, marker(false), 0); // 4
    hwToEnd(log);
    const hw = log.highWatermark;
    log.close();
    log = open(dir, true, hw);
    assert.deepEqual([...log.producerState.ongoingTxns], [[1n, 0]]);
    assert.equal(log.lastStableOffset, 0);
    assert.equal(log.activeSegment.txnIndex.all.length, 1);
    log.appendTxnMarkerAsLeader(1n, 0, marker(false), 0); // 5
    log.appendAsLeader(txn(3n, 0, 0), 2, 0); // 6-7
    log.appendTxnMarkerAsLeader(3n, 0, marker(false), 0); // 8
    const expected = log.activeSegment.txnIndex.all.map((t) => ({ ...t }));
    assert.equal(expected.length, 3);
    // Crash: no close, and the index file lost its last entries (written, not fsynced).
    const path = `${dir}/00000000000000000000.txnindex`;
    nodeFs.truncateSync(path, 34);
    log = open(dir, false, 9);
    assert.deepEqual([...log.producerState.ongoingTxns], []);
    assert.deepEqual(log.activeSegment.txnIndex.all, expected, "rebuilt by the replay");
    assert.equal(log.lastStableOffset, 9);
    log.close();
  });
});

test("truncation: a cut marker reopens its transaction and leaves the index; a cut transaction goes", async () => {
  await withTempDir((dir) => {
    const log = open(dir);
    log.appendAsLeader(plain(), 1, 0); // 0
    log.appendAsLeader(txn(1n, 0, 0), 2, 0); // 1-2
    log.appendTxnMarkerAsLeader(1n, 0, marker(false), 0); // 3
    log.appendAsLeader(txn(2n, 0, 0), 2, 0); // 4-5
    log.truncateTo(3);
    assert.deepEqual([...log.producerState.ongoingTxns], [[1n, 1]]);
    assert.deepEqual(log.activeSegment.txnIndex.all, []);
    log.updateHighWatermark(3);
    assert.equal(log.lastStableOffset, 1);
    log.truncateTo(1);
    assert.deepEqual([...log.producerState.ongoingTxns], []);
    assert.equal(log.lastStableOffset, 1);
    log.close();
  });
});

test("cleaner: aborted data goes; a marker stays (and its index entry) while its data does, then gets a horizon and goes; nothing past the last stable offset is cleaned", async () => {
  await withTempDir(async (dir) => {
    const cfg: LogConfig = { ...logConfigDefaults, cleanupPolicy: "compact", segmentBytes: 1 << 20, minCleanableDirtyRatio: 0, deleteRetentionMs: 1000 };
    const log = Log.open(platform, `${dir}/t-0`, "t", 0, cfg, silentLogger);
    const kv = (pid: bigint, seq: number, key: string, value: string) =>
      buildBatch([{ key, value }], { producerId: pid, producerEpoch: 0, baseSequence: seq, attributes: 0x10, baseTimestamp: BigInt(Date.now()) });
    log.appendAsLeader(kv(1n, 0, "k1", "aborted"), 1, 0); // 0
    log.appendAsLeader(kv(2n, 0, "k2", "committed"), 1, 0); // 1
    log.appendTxnMarkerAsLeader(1n, 0, marker(false), 0); // 2
    log.appendTxnMarkerAsLeader(2n, 0, marker(true), 0); // 3
    log.appendAsLeader(kv(1n, 1, "k1", "later"), 1, 0); // 4: producer 1's last batch is no longer the aborted one
    log.appendTxnMarkerAsLeader(1n, 0, marker(true), 0); // 5
    log.appendAsLeader(kv(3n, 0, "k9", "open"), 1, 0); // 6: open, past the last stable offset
    log.roll();
    log.appendAsLeader(buildBatch([{ key: "k0", value: "x" }]), 1, 0); // 7 (active segment)
    hwToEnd(log);
    assert.equal(log.lastStableOffset, 6);
    const cleaner = new LogCleaner(platform, [dir], () => [log], { ioBufferBytes: 4096 }, silentLogger);
    const seen = () => {
      const out: string[] = [];
      for (let at = 0; at < log.logEndOffset;) {
        const batches = parseBatches(log.read(at, 1 << 20, true).records);
        if (batches.length === 0) break;
        for (const b of batches) out.push((b.attributes & 0x20) !== 0 ? `marker@${b.baseOffset}` : `${text(b.records[0].value)}@${b.baseOffset}`);
        const last = batches[batches.length - 1];
        at = Number(last.baseOffset) + last.lastOffsetDelta + 1;
      }
      return out;
    };
    // The segment holds offset 6 (open): nothing is cleanable yet.
    await cleaner.cleanLog(log, Date.now());
    assert.deepEqual(seen(), ["aborted@0", "committed@1", "marker@2", "marker@3", "later@4", "marker@5", "open@6", "x@7"]);
    log.appendTxnMarkerAsLeader(3n, 0, marker(false), 0); // 8: producer 3's transaction aborted (its last batch: kept)
    log.roll();
    log.appendAsLeader(buildBatch([{ key: "k0", value: "y" }]), 1, 0); // 9
    hwToEnd(log);
    const now = Date.now();
    assert.ok(await cleaner.cleanLog(log, now) !== null);
    assert.deepEqual(seen(), ["committed@1", "marker@2", "marker@3", "later@4", "marker@5", "open@6", "x@7", "marker@8", "y@9"], "aborted data gone, its marker kept this pass");
    assert.deepEqual(log.logSegments[0].txnIndex.all.map((t) => [t.producerId, t.firstOffset, t.lastOffset]), [[1n, 0, 2], [3n, 6, 8]], "the cleaned segment is indexed");
    // Second pass: producer 1's abort marker has no data left: it gets a horizon, and goes after it.
    await cleaner.cleanLog(log, now + 1);
    assert.deepEqual(seen(), ["committed@1", "marker@2", "marker@3", "later@4", "marker@5", "open@6", "x@7", "marker@8", "y@9"]);
    const m2 = parseBatches(log.read(2, 1 << 20, true).records)[0];
    assert.equal(m2.attributes & 0x40, 0x40, "the marker carries a delete horizon");
    assert.deepEqual(log.logSegments[0].txnIndex.all.map((t) => t.producerId), [3n], "an abort marker with no data is not indexed");
    await cleaner.cleanLog(log, now + 5000);
    assert.deepEqual(seen(), ["committed@1", "marker@3", "later@4", "marker@5", "open@6", "x@7", "marker@8", "y@9"], "gone after its horizon; producer 3's kept (its data is its last batch)");
    // read_committed still skips producer 3's aborted record.
    const read = log.read(0, 1 << 20, true, log.lastStableOffset).records;
    assert.deepEqual(abortedTxnsForRead(log.logSegments, 0, read).map((t) => t.producerId), [3n]);
    log.close();
  });
});
