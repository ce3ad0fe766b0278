// TransactionCoordinator over an in-memory __transaction_state, a manual clock and a fake marker
// sender (txn_harness.ts): InitProducerId (new id, bumps, KIP-360, fencing an ongoing transaction,
// epoch exhaustion), AddPartitionsToTxn / AddOffsetsToTxn, EndTxn with markers (batched per broker,
// retried on retriable errors and disconnects, skipped for deleted partitions), Kafka's error code
// for each wrong call, append failures, the timeout abort, transactional id expiry, and what a
// reload (a new leader) finds and completes.
import assert from "node:assert/strict";
import { test } from "node:test";
import { partitionForGroup, type TransactionCoordinator, txnStateFromId } from "../../src/coordinator/mod.ts";
import { decodeTransactionLogKey, decodeTransactionLogValue } from "../../src/protocol/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { txnIdOverheadBytes } from "../../src/util/limits.ts";
import { OFFSETS_PARTITIONS, type TxnHarness, txnHarness } from "./txn_harness.ts";
import { track } from "./harness.ts";

const TX = "tx-1";
const TIMEOUT = 60_000;
const tp = (topic: string, partition: number) => ({ topic, partition });

/** The records of the id's partition, decoded: "state epoch [partitions]" or "tombstone". */
function history(h: TxnHarness, transactionalId: string): string[] {
  const out: string[] = [];
  for (const r of h.log.records(h.c.partitionFor(transactionalId))) {
    const k = decodeTransactionLogKey(r.key!);
    if (k.kind !== "txn" || k.transactionalId !== transactionalId) continue;
    if (r.value === null) {
      out.push("tombstone");
      continue;
    }
    const v = decodeTransactionLogValue(r.value);
    assert.equal(v.kind, "txn");
    if (v.kind !== "txn") continue;
    const parts = (v.transactionPartitions ?? []).flatMap((p) => p.partitionIds.map((i) => `${p.topic}-${i}`)).sort();
    out.push(`${txnStateFromId(v.transactionStatus)} ${v.producerId}/${v.producerEpoch}${parts.length > 0 ? ` [${parts.join(",")}]` : ""}`);
  }
  return out;
}

function meta(c: TransactionCoordinator, id = TX) {
  const got = c.state.getTransactionState(id);
  assert.ok(got.ok && got.metadata !== undefined, `${id} is known`);
  return got.metadata;
}

async function init(h: TxnHarness, id = TX, expected: { producerId: bigint; producerEpoch: number } | null = null, timeoutMs = TIMEOUT) {
  return await h.c.handleInitProducerId(id, timeoutMs, expected);
}

/** InitProducerId then AddPartitionsToTxn: an Ongoing transaction. */
async function ongoing(h: TxnHarness, partitions = [tp("t", 0), tp("t", 1), tp("t", 2)], id = TX) {
  const r = await init(h, id);
  assert.equal(r.errorCode, 0);
  assert.equal(await h.c.handleAddPartitions(id, r.producerId, r.producerEpoch, partitions), 0);
  return r;
}

function noErrors(h: TxnHarness): void {
  assert.deepEqual(h.logger.errors, [], "no error-level log lines");
}

// ---- InitProducerId ----------------------------------------------------------------------------

test("InitProducerId: a new transactional id gets a new producer id at epoch 0, written as Empty on its partition; again bumps the epoch", async () => {
  const h = await txnHarness();
  const a = await init(h);
  assert.deepEqual(a, { errorCode: 0, producerId: 1000n, producerEpoch: 0 });
  const b = await init(h);
  assert.deepEqual(b, { errorCode: 0, producerId: 1000n, producerEpoch: 1 });
  assert.deepEqual(history(h, TX), ["Empty 1000/0", "Empty 1000/1"]);
  assert.deepEqual(h.log.partitionsWithData(), [h.c.partitionFor(TX)], "only the id's partition is written");
  // Another id: another producer id.
  assert.deepEqual(await init(h, "tx-2"), { errorCode: 0, producerId: 1001n, producerEpoch: 0 });
  // No transactional id (idempotence only): a new id at epoch 0, nothing written.
  const appends = h.log.appends;
  assert.deepEqual(await h.c.handleInitProducerId(null, TIMEOUT, null), { errorCode: 0, producerId: 1002n, producerEpoch: 0 });
  assert.equal(h.log.appends, appends);
  noErrors(h);
});

test("InitProducerId refuses an empty id (INVALID_REQUEST) and a timeout of 0 or above transaction.max.timeout.ms (INVALID_TRANSACTION_TIMEOUT)", async () => {
  const h = await txnHarness({ transactionMaxTimeoutMs: 120_000 });
  assert.equal((await init(h, "")).errorCode, ErrorCode.INVALID_REQUEST);
  // An id too long for the record's int16-length key (possible in flexible request versions).
  assert.equal((await init(h, "x".repeat(32_768))).errorCode, ErrorCode.UNKNOWN_SERVER_ERROR);
  assert.equal((await init(h, "é".repeat(16_384))).errorCode, ErrorCode.UNKNOWN_SERVER_ERROR, "UTF-8 bytes, not characters");
  assert.equal((await init(h, TX, null, 0)).errorCode, ErrorCode.INVALID_TRANSACTION_TIMEOUT);
  assert.equal((await init(h, TX, null, -5)).errorCode, ErrorCode.INVALID_TRANSACTION_TIMEOUT);
  assert.equal((await init(h, TX, null, 120_001)).errorCode, ErrorCode.INVALID_TRANSACTION_TIMEOUT);
  const ok = await init(h, TX, null, 120_000);
  assert.equal(ok.errorCode, 0);
  assert.deepEqual([ok.producerId, ok.producerEpoch], [1000n, 0], "the maximum itself is allowed");
  assert.equal(h.ids.length, 1, "no producer id spent on refused calls");
});

test("NOT_COORDINATOR for an id whose partition is not here; COORDINATOR_LOAD_IN_PROGRESS while it loads", async () => {
  const h = await txnHarness({}, { load: false });
  const p = h.c.partitionFor(TX);
  assert.equal((await init(h)).errorCode, ErrorCode.NOT_COORDINATOR);
  assert.equal(await h.c.handleAddPartitions(TX, 1n, 0, [tp("t", 0)]), ErrorCode.NOT_COORDINATOR);
  assert.equal(await h.c.handleEndTxn(TX, 1n, 0, true), ErrorCode.NOT_COORDINATOR);
  // A partition with records yields on the clock between chunks while it loads.
  await h.c.onElection(p, 4);
  assert.equal((await init(h)).errorCode, 0);
  h.c.onResignation(p, 4);
  assert.equal((await init(h)).errorCode, ErrorCode.NOT_COORDINATOR);
  const load = track(h.c.onElection(p, 5));
  assert.equal((await init(h)).errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(await h.c.handleAddOffsets(TX, 1n, 0, "g"), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  await h.clock.advance(0);
  await load.promise;
  assert.equal((await init(h)).errorCode, 0);
  h.c.onResignation(p, 5);
  assert.equal((await init(h)).errorCode, ErrorCode.NOT_COORDINATOR);
});

test("InitProducerId with an expected id/epoch (KIP-360): bumps from the current epoch, answers a retry with the same epoch, fences anything else", async () => {
  const h = await txnHarness();
  const a = await init(h);
  const b = await init(h, TX, { producerId: a.producerId, producerEpoch: 0 });
  assert.deepEqual([b.errorCode, b.producerId, b.producerEpoch], [0, 1000n, 1]);
  const retry = await init(h, TX, { producerId: a.producerId, producerEpoch: 0 });
  assert.deepEqual([retry.errorCode, retry.producerEpoch], [0, 1], "the retried bump answers the epoch already given");
  const staleEpoch = await init(h, TX, { producerId: a.producerId, producerEpoch: 7 });
  assert.deepEqual(staleEpoch, { errorCode: ErrorCode.PRODUCER_FENCED, producerId: -1n, producerEpoch: -1 });
  const otherId = await init(h, TX, { producerId: 555n, producerEpoch: 1 });
  assert.equal(otherId.errorCode, ErrorCode.PRODUCER_FENCED);
  // An unknown id recovering from UNKNOWN_PRODUCER_ID: whatever it sends, it gets the new id.
  const fresh = await init(h, "tx-new", { producerId: 77n, producerEpoch: 3 });
  assert.deepEqual([fresh.errorCode, fresh.producerId, fresh.producerEpoch], [0, 1001n, 0]);
  assert.deepEqual(history(h, TX), ["Empty 1000/0", "Empty 1000/1", "Empty 1000/1"]);
});

test("epochs exhausted: InitProducerId moves the id to a new producer id at epoch 0; a retry with the old id and epoch gets the same answer", async () => {
  const h = await txnHarness();
  const a = await init(h);
  meta(h.c).producerEpoch = 32765; // (as if bumped that often)
  const b = await init(h, TX, { producerId: a.producerId, producerEpoch: 32765 });
  assert.deepEqual([b.producerId, b.producerEpoch], [1000n, 32766]);
  const c = await init(h, TX, { producerId: a.producerId, producerEpoch: 32766 });
  assert.deepEqual([c.errorCode, c.producerId, c.producerEpoch], [0, 1001n, 0]);
  const retried = await init(h, TX, { producerId: a.producerId, producerEpoch: 32766 });
  assert.deepEqual([retried.errorCode, retried.producerId, retried.producerEpoch], [0, 1001n, 0], "the lost answer, again");
  assert.equal(h.ids.length, 2, "one new producer id, not one per retry");
  // Without an expected epoch, exhaustion also rotates.
  meta(h.c).producerEpoch = 32766;
  const d = await init(h);
  assert.deepEqual([d.producerId, d.producerEpoch], [1002n, 0]);
  assert.deepEqual(history(h, TX).slice(-3), ["Empty 1001/0", "Empty 1001/0", "Empty 1002/0"]);
});

test("InitProducerId while a transaction is ongoing aborts it under a bumped epoch and answers CONCURRENT_TRANSACTIONS; the retry bumps again; the old producer is fenced", async () => {
  const h = await txnHarness();
  const a = await ongoing(h);
  const r = await init(h);
  assert.equal(r.errorCode, ErrorCode.CONCURRENT_TRANSACTIONS);
  await h.clock.advance(0);
  assert.deepEqual(h.sender.log().sort(), ["abort t-0@1 to 1", "abort t-1@1 to 1", "abort t-2@1 to 2"]);
  assert.equal(meta(h.c).state, "CompleteAbort");
  const again = await init(h);
  assert.deepEqual([again.errorCode, again.producerId, again.producerEpoch], [0, a.producerId, 2]);
  assert.equal(await h.c.handleAddPartitions(TX, a.producerId, a.producerEpoch, [tp("t", 0)]), ErrorCode.PRODUCER_FENCED);
  assert.equal(await h.c.handleEndTxn(TX, a.producerId, a.producerEpoch, true), ErrorCode.PRODUCER_FENCED);
  assert.deepEqual(history(h, TX), [
    "Empty 1000/0",
    "Ongoing 1000/0 [t-0,t-1,t-2]",
    "PrepareAbort 1000/1 [t-0,t-1,t-2]",
    "CompleteAbort 1000/1",
    "Empty 1000/2",
  ]);
  noErrors(h);
});

// ---- AddPartitionsToTxn / AddOffsetsToTxn --------------------------------------------------------

test("AddPartitionsToTxn: Ongoing with the partitions; adding what is there writes nothing; wrong id, wrong epoch and unknown ids are refused", async () => {
  const h = await txnHarness();
  const a = await init(h);
  assert.equal(await h.c.handleAddPartitions(TX, a.producerId, 0, [tp("t", 0)]), 0);
  assert.equal(meta(h.c).state, "Ongoing");
  const appends = h.log.appends;
  assert.equal(await h.c.handleAddPartitions(TX, a.producerId, 0, [tp("t", 0)]), 0);
  assert.equal(h.log.appends, appends, "nothing new: nothing written");
  assert.equal(await h.c.handleAddPartitions(TX, a.producerId, 0, [tp("t", 1)]), 0);
  assert.equal(await h.c.handleAddPartitions(TX, a.producerId + 1n, 0, [tp("t", 2)]), ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  assert.equal(await h.c.handleAddPartitions(TX, a.producerId, 1, [tp("t", 2)]), ErrorCode.PRODUCER_FENCED);
  assert.equal(await h.c.handleAddPartitions("nobody", a.producerId, 0, [tp("t", 2)]), ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  assert.equal(await h.c.handleAddPartitions("", a.producerId, 0, [tp("t", 2)]), ErrorCode.INVALID_REQUEST);
  assert.deepEqual(history(h, TX), ["Empty 1000/0", "Ongoing 1000/0 [t-0]", "Ongoing 1000/0 [t-0,t-1]"]);
  // KIP-890 verification, as a partition leader asks it.
  assert.deepEqual(h.c.handleVerifyPartitionsInTransaction(TX, a.producerId, 0, [tp("t", 0), tp("t", 2)]), [0, ErrorCode.TRANSACTION_ABORTABLE]);
  assert.deepEqual(h.c.handleVerifyPartitionsInTransaction(TX, a.producerId, 3, [tp("t", 0)]), [ErrorCode.PRODUCER_FENCED]);
});

test("AddOffsetsToTxn adds the group's __consumer_offsets partition (Kafka's placement)", async () => {
  const h = await txnHarness();
  const a = await init(h);
  assert.equal(await h.c.handleAddOffsets(TX, a.producerId, 0, "my-group"), 0);
  const p = partitionForGroup("my-group", OFFSETS_PARTITIONS);
  assert.deepEqual(meta(h.c).topicPartitions(), [tp("__consumer_offsets", p)]);
  assert.equal(await h.c.handleAddOffsets(TX, a.producerId, 5, "my-group"), ErrorCode.PRODUCER_FENCED);
  assert.equal(await h.c.handleEndTxn(TX, a.producerId, 0, true), 0);
  await h.clock.advance(0);
  assert.deepEqual(h.sender.log(), [`commit __consumer_offsets-${p}@0 to 3`]);
});

test("a call while another's record is being appended answers CONCURRENT_TRANSACTIONS", async () => {
  const h = await txnHarness();
  const a = await init(h);
  h.log.hold();
  const add = track(h.c.handleAddPartitions(TX, a.producerId, 0, [tp("t", 0)]));
  assert.equal(await h.c.handleAddPartitions(TX, a.producerId, 0, [tp("t", 1)]), ErrorCode.CONCURRENT_TRANSACTIONS);
  assert.equal((await init(h)).errorCode, ErrorCode.CONCURRENT_TRANSACTIONS);
  assert.equal(await h.c.handleEndTxn(TX, a.producerId, 0, true), ErrorCode.CONCURRENT_TRANSACTIONS);
  h.log.release();
  assert.equal(await add.promise, 0);
  assert.equal(meta(h.c).state, "Ongoing");
});

// ---- EndTxn and markers --------------------------------------------------------------------------

test("EndTxn commit: PrepareCommit in the log, the answer, markers per leader (one request per broker), then CompleteCommit", async () => {
  const h = await txnHarness();
  const a = await ongoing(h);
  h.sender.plan("t", 2, "hold");
  assert.equal(await h.c.handleEndTxn(TX, a.producerId, 0, true), 0);
  assert.equal(meta(h.c).state, "PrepareCommit");
  assert.deepEqual(h.sender.sent.map((s) => [s.brokerId, s.markers.length, s.markers[0].partitions.length]).sort(), [[1, 1, 2], [2, 1, 1]]);
  const m0 = h.sender.sent[0].markers[0];
  assert.deepEqual([m0.producerId, m0.producerEpoch, m0.coordinatorEpoch, m0.committed], [a.producerId, 0, 1, true]);
  await h.clock.advance(0);
  assert.equal(meta(h.c).state, "PrepareCommit", "waits for every partition");
  assert.deepEqual(meta(h.c).topicPartitions(), [tp("t", 2)]);
  // Meanwhile: a retried commit is CONCURRENT_TRANSACTIONS, an abort INVALID_TXN_STATE, new partitions wait.
  assert.equal(await h.c.handleEndTxn(TX, a.producerId, 0, true), ErrorCode.CONCURRENT_TRANSACTIONS);
  assert.equal(await h.c.handleEndTxn(TX, a.producerId, 0, false), ErrorCode.CONCURRENT_TRANSACTIONS, "(pending completion)");
  assert.equal(await h.c.handleAddPartitions(TX, a.producerId, 0, [tp("t", 0)]), ErrorCode.CONCURRENT_TRANSACTIONS);
  h.sender.release();
  await h.clock.advance(0);
  assert.equal(meta(h.c).state, "CompleteCommit");
  assert.deepEqual(history(h, TX).slice(-2), ["PrepareCommit 1000/0 [t-0,t-1,t-2]", "CompleteCommit 1000/0"]);
  // Retried after completion: done; aborting what committed: INVALID_TXN_STATE.
  assert.equal(await h.c.handleEndTxn(TX, a.producerId, 0, true), 0);
  assert.equal(await h.c.handleEndTxn(TX, a.producerId, 0, false), ErrorCode.INVALID_TXN_STATE);
  assert.equal(h.c.markers.pendingTransactions, 0);
  noErrors(h);
});

test("EndTxn's wrong calls: Empty (INVALID_TXN_STATE), wrong id (INVALID_PRODUCER_ID_MAPPING), old or future epoch (PRODUCER_FENCED), abort during PrepareCommit (INVALID_TXN_STATE)", async () => {
  const h = await txnHarness();
  const a = await init(h);
  assert.equal(await h.c.handleEndTxn(TX, a.producerId, 0, true), ErrorCode.INVALID_TXN_STATE);
  assert.equal(await h.c.handleEndTxn(TX, a.producerId, 0, false), ErrorCode.INVALID_TXN_STATE);
  assert.equal(await h.c.handleAddPartitions(TX, a.producerId, 0, [tp("t", 0)]), 0);
  assert.equal(await h.c.handleEndTxn(TX, 999n, 0, true), ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  assert.equal(await h.c.handleEndTxn("unknown", a.producerId, 0, true), ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  assert.equal(await h.c.handleEndTxn(TX, a.producerId, 1, true), ErrorCode.PRODUCER_FENCED, "a client may not bump");
  assert.equal(await h.c.handleEndTxn("", a.producerId, 0, true), ErrorCode.INVALID_REQUEST);
  h.sender.plan("t", 0, "hold");
  assert.equal(await h.c.handleEndTxn(TX, a.producerId, 0, false), 0);
  // PrepareAbort, completion pending: a commit is the wrong state... but the pending completion answers first.
  assert.equal(await h.c.handleEndTxn(TX, a.producerId, 0, true), ErrorCode.CONCURRENT_TRANSACTIONS);
  h.sender.release();
  await h.clock.advance(0);
  assert.equal(meta(h.c).state, "CompleteAbort");
  assert.equal(await h.c.handleEndTxn(TX, a.producerId, 0, false), 0, "a retried abort");
  assert.equal(await h.c.handleEndTxn(TX, a.producerId, 0, true), ErrorCode.INVALID_TXN_STATE);
});

test("markers: retriable errors and disconnects are sent again (to the new leader); a deleted partition is skipped; no live leader waits", async () => {
  const h = await txnHarness();
  const a = await ongoing(h, [tp("t", 0), tp("t", 1), tp("t", 2), tp("gone", 0), tp("t", 9)]);
  h.leaders.set("t-9", -1); // exists, no live leader yet
  h.sender.plan("t", 0, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  h.sender.plan("t", 2, "disconnect");
  assert.equal(await h.c.handleEndTxn(TX, a.producerId, 0, true), 0);
  h.leaders.set("t-0", 4); // t-0's leadership moved
  await h.clock.advance(0);
  assert.equal(meta(h.c).state, "PrepareCommit");
  assert.ok(!meta(h.c).partitions.has("gone\u00000"), "a partition of a deleted topic needs no marker");
  await h.clock.advance(100);
  h.leaders.set("t-9", 2);
  await h.clock.advance(100);
  await h.clock.advance(100);
  assert.equal(meta(h.c).state, "CompleteCommit");
  assert.deepEqual(h.sender.log(), [
    "commit t-0@0 to 1",
    "commit t-1@0 to 1",
    "commit t-2@0 to 2",
    "commit t-0@0 to 4",
    "commit t-2@0 to 2",
    "commit t-9@0 to 2",
  ]);
  noErrors(h);
});

test("markers refused with INVALID_PRODUCER_EPOCH stop: the transaction stays prepared for whoever owns it now", async () => {
  const h = await txnHarness();
  const a = await ongoing(h, [tp("t", 0)]);
  h.sender.plan("t", 0, ErrorCode.INVALID_PRODUCER_EPOCH);
  assert.equal(await h.c.handleEndTxn(TX, a.producerId, 0, true), 0);
  await h.clock.advance(1000);
  assert.equal(h.sender.sent.length, 1, "not sent again");
  assert.equal(meta(h.c).state, "PrepareCommit");
  assert.equal(h.c.markers.pendingTransactions, 0);
});

// ---- append failures -----------------------------------------------------------------------------

test("append failures map as Kafka's coordinator maps them and leave nothing pending", async () => {
  const h = await txnHarness();
  const a = await init(h);
  for (const [code, want] of [
    [ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.COORDINATOR_NOT_AVAILABLE],
    [ErrorCode.REQUEST_TIMED_OUT, ErrorCode.COORDINATOR_NOT_AVAILABLE],
    [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.COORDINATOR_NOT_AVAILABLE],
    [ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_COORDINATOR],
    [ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.NOT_COORDINATOR],
    [ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.UNKNOWN_SERVER_ERROR],
  ]) {
    h.log.failWith = code;
    assert.equal(await h.c.handleAddPartitions(TX, a.producerId, 0, [tp("t", 0)]), want, `append error ${code}`);
    assert.equal(meta(h.c).pendingState, null);
    assert.equal(meta(h.c).state, "Empty");
  }
  h.log.failWith = 0;
  assert.equal(await h.c.handleAddPartitions(TX, a.producerId, 0, [tp("t", 0)]), 0);
});

test("a failed epoch fence is not bumped twice: the next fence reuses the epoch the client never saw", async () => {
  const h = await txnHarness();
  await ongoing(h, [tp("t", 0)]);
  h.log.failWith = ErrorCode.NOT_ENOUGH_REPLICAS;
  assert.equal((await init(h)).errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE);
  assert.equal(meta(h.c).hasFailedEpochFence, true);
  assert.equal(meta(h.c).producerEpoch, 1, "the bumped epoch, in memory only");
  h.log.failWith = 0;
  assert.equal((await init(h)).errorCode, ErrorCode.CONCURRENT_TRANSACTIONS);
  await h.clock.advance(0);
  assert.deepEqual(history(h, TX).slice(-2), ["PrepareAbort 1000/1 [t-0]", "CompleteAbort 1000/1"]);
  assert.equal(meta(h.c).hasFailedEpochFence, false);
  assert.deepEqual((await init(h)).producerEpoch, 2);
});

test("a failed completion record (COORDINATOR_NOT_AVAILABLE) is appended again until it succeeds", async () => {
  const h = await txnHarness();
  const a = await ongoing(h, [tp("t", 0)]);
  h.sender.plan("t", 0, "hold");
  assert.equal(await h.c.handleEndTxn(TX, a.producerId, 0, true), 0);
  h.log.failWith = ErrorCode.NOT_ENOUGH_REPLICAS;
  h.sender.release();
  await h.clock.advance(0);
  assert.equal(meta(h.c).pendingState, "CompleteCommit", "kept pending for the retry");
  await h.clock.advance(300);
  h.log.failWith = 0;
  await h.clock.advance(100);
  assert.equal(meta(h.c).state, "CompleteCommit");
  assert.equal(meta(h.c).pendingState, null);
});

// ---- timeouts, expiry, reload --------------------------------------------------------------------

test("an Ongoing transaction past its timeout is aborted by the abort loop under a bumped epoch; the producer is fenced", async () => {
  const h = await txnHarness({ abortTimedOutTransactionsIntervalMs: 1000 });
  const a = await ongoing(h, [tp("t", 0), tp("t", 2)]);
  await h.clock.advance(TIMEOUT - 1000);
  assert.equal(meta(h.c).state, "Ongoing", "not yet");
  await h.clock.advance(2000);
  assert.equal(meta(h.c).state, "CompleteAbort");
  assert.equal(meta(h.c).producerEpoch, 1);
  assert.deepEqual(h.sender.log().sort(), ["abort t-0@1 to 1", "abort t-2@1 to 2"]);
  assert.equal(await h.c.handleEndTxn(TX, a.producerId, 0, true), ErrorCode.PRODUCER_FENCED);
  assert.equal(await h.c.handleAddPartitions(TX, a.producerId, 0, [tp("t", 0)]), ErrorCode.PRODUCER_FENCED);
  assert.ok(h.logger.lines.some((l) => l.startsWith("aborting a transaction past its timeout")));
  noErrors(h);
});

test("transactional.id.expiration.ms: an idle id gets a tombstone and is forgotten; an id in a transaction is kept; the next InitProducerId starts afresh", async () => {
  const h = await txnHarness({ transactionalIdExpirationMs: 100_000, removeExpiredTransactionalIdsIntervalMs: 10_000, abortTimedOutTransactionsIntervalMs: 1_000_000_000 });
  await init(h);
  await ongoing(h, [tp("t", 0)], "busy");
  await h.clock.advance(100_000);
  {
    const st = h.c.state.getTransactionState(TX);
    assert.equal(st.ok && st.metadata === undefined, true);
  }
  assert.deepEqual(history(h, TX), ["Empty 1000/0", "tombstone"]);
  assert.equal(meta(h.c, "busy").state, "Ongoing", "an ongoing transaction does not expire");
  const again = await init(h);
  assert.deepEqual([again.producerId, again.producerEpoch], [1002n, 0]);
  // After a restart the tombstone keeps it gone.
  await h.restart();
  assert.equal(meta(h.c).producerId, 1002n);
});

test("txnIdsLoadedBytesMax: a flood of new transactional ids is refused retriable (COORDINATOR_LOAD_IN_PROGRESS, no producer id spent) while the least recently updated idle ids get tombstones; ids in a transaction and recently used ones stay; known ids are always answered", async () => {
  const cost = (id: string) => txnIdOverheadBytes + 2 * id.length;
  const flood = (i: number) => `flood-${String(i).padStart(4, "0")}`;
  const bound = 10 * cost(flood(0));
  const h = await txnHarness({ transactionalIdExpirationMs: 1_000_000_000, abortTimedOutTransactionsIntervalMs: 1_000 }, { idsBytesMax: bound });
  const busy = await ongoing(h, [tp("t", 0)], "busy-1"); // the oldest id, in a transaction
  for (let i = 0; i < 9; i++) assert.equal((await init(h, flood(i))).errorCode, 0, flood(i));
  await h.clock.advance(1);
  assert.equal((await init(h, flood(0))).errorCode, 0, "flood-0000 used again: now the most recent");
  assert.ok(h.c.state.loadedIdBytes <= bound);
  const spent = h.ids.length;
  // The next new id does not fit: refused, no producer id taken, the early expiry starts.
  assert.equal((await init(h, flood(9))).errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(h.ids.length, spent, "no producer id spent on a refused id");
  await h.clock.advance(0);
  assert.ok(h.c.state.loadedIdBytes <= bound * 0.9, `down to nine tenths (${h.c.state.loadedIdBytes} of ${bound})`);
  const known = (id: string) => (h.c.state.getTransactionState(id) as { metadata?: unknown }).metadata !== undefined;
  assert.ok(known("busy-1"), "an id in a transaction is never expired early");
  assert.ok(known(flood(0)), "the most recently used id stays");
  assert.ok(known(flood(8)), "the newest id stays");
  const gone = [1, 2, 3, 4, 5, 6, 7].map(flood).filter((id) => !known(id));
  assert.ok(gone.length >= 1, "some idle ids were expired");
  for (const id of gone) assert.deepEqual(history(h, id).at(-1), "tombstone", `${id} has its tombstone`);
  // Each partition gives up its share, least recently updated first.
  for (const id of [1, 2, 3, 4, 5, 6, 7].map(flood).filter(known)) {
    const older = gone.filter((g) => h.c.partitionFor(g) === h.c.partitionFor(id));
    assert.ok(older.every((g) => g < id), `the least recently updated went first (${older} before ${id})`);
  }
  // The client retries and gets in; the transaction of busy-1 goes on.
  assert.equal((await init(h, flood(9))).errorCode, 0);
  assert.equal(await h.c.handleAddPartitions("busy-1", busy.producerId, busy.producerEpoch, [tp("t", 1)]), 0);
  // A restart replays the log in the order of last updates and keeps the expired ids gone.
  await h.restart();
  for (const id of gone) assert.ok(!known(id), `${id} stays expired after a reload`);
  assert.equal(h.c.state.loadedIdBytes, [...h.c.state.allTransactions()].reduce((n, t) => n + cost(t.metadata.transactionalId), 0));
  noErrors(h);
});

test("txnIdsLoadedBytesMax: when every loaded id is in a transaction nothing is expired early and new ids wait (retriable) until the transactions time out and are aborted", async () => {
  const id = (i: number) => `ongoing-${i}`;
  const bound = 4 * (txnIdOverheadBytes + 2 * id(0).length);
  const h = await txnHarness({ abortTimedOutTransactionsIntervalMs: 1_000, transactionalIdExpirationMs: 1_000_000_000 }, { idsBytesMax: bound });
  for (let i = 0; i < 4; i++) await ongoing(h, [tp("t", i % 3)], id(i));
  assert.equal((await init(h, "late")).errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  await h.clock.advance(0);
  assert.equal([...h.c.state.allTransactions()].length, 4, "nothing in a transaction expired");
  assert.equal((await init(h, "late")).errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  // The transactions time out (60 s): the coordinator aborts them; then there is room again.
  await h.clock.advance(TIMEOUT + 2_000);
  let r = await init(h, "late");
  for (let i = 0; i < 5 && r.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS; i++) {
    await h.clock.advance(1_000);
    r = await init(h, "late");
  }
  assert.equal(r.errorCode, 0);
  noErrors(h);
});

test("a reload (new leader) rebuilds ids with their producer id, epoch, state and partitions, and completes a prepared commit", async () => {
  const h = await txnHarness();
  const a = await ongoing(h, [tp("t", 0), tp("t", 1)]);
  await ongoing(h, [tp("t", 2)], "tx-ongoing");
  h.sender.plan("t", 0, "hold");
  assert.equal(await h.c.handleEndTxn(TX, a.producerId, 0, true), 0);
  assert.equal(meta(h.c).state, "PrepareCommit");
  h.sender.plan("t", 0, "hold"); // the new coordinator's marker for t-0 waits too
  await h.restart(7);
  const m = meta(h.c);
  assert.deepEqual([m.producerId, m.producerEpoch, m.state], [a.producerId, 0, "PrepareCommit"]);
  assert.equal(m.pendingState, "CompleteCommit", "completion started on load");
  assert.deepEqual(m.topicPartitions(), [tp("t", 0), tp("t", 1)], "one held request to broker 1 carries both");
  const resent = h.sender.sent.filter((s) => s.markers.some((x) => x.coordinatorEpoch === 7));
  assert.deepEqual(resent.flatMap((s) => s.markers.flatMap((x) => x.partitions.map((p) => `${p.topic}-${p.partition}`))).sort(), ["t-0", "t-1"]);
  const o = meta(h.c, "tx-ongoing");
  assert.deepEqual([o.state, o.topicPartitions()], ["Ongoing", [tp("t", 2)]]);
  // Both answers come: the first coordinator's (epoch 1) changes nothing; the new one's completes.
  h.sender.release();
  await h.clock.advance(0);
  assert.equal(meta(h.c).state, "CompleteCommit");
  assert.deepEqual(history(h, TX).slice(-2), ["PrepareCommit 1000/0 [t-0,t-1]", "CompleteCommit 1000/0"]);
  noErrors(h);
});

test("placement follows __transaction_state's own partition count once known (Kafka reads the topic's count)", async () => {
  const h = await txnHarness({ transactionLogNumPartitions: 4 });
  const p4 = h.c.partitionFor("some-id");
  h.c.state.setPartitionCount(50);
  // Java: "some-id".hashCode() = -2029704044 (s[0]*31^(n-1) + ... in int32), Utils.abs = 2029704044.
  assert.equal(h.c.partitionFor("some-id"), 2029704044 % 50);
  assert.equal(p4, 2029704044 % 4);
  assert.throws(() => h.c.state.setPartitionCount(0), /partition count 0/);
});
