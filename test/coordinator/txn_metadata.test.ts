// TransactionMetadata: Kafka's transaction state machine (valid previous states, the pending state
// that keeps a second transition out, the checks of completeTransitionTo) and the epoch rules of
// InitProducerId (bump, KIP-360 retry, fencing, exhaustion, the failed fence that does not bump twice).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  isEpochExhausted,
  TransactionMetadata,
  txnStateFromId,
  txnStateIds,
  type TxnState,
  validPreviousStates,
} from "../../src/coordinator/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";

const T0 = 1_700_000_000_000;
const ALL: TxnState[] = ["Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"];

function meta(state: TxnState = "Empty", epoch = 0, partitions: string[] = []): TransactionMetadata {
  return new TransactionMetadata("tx", 10n, -1n, epoch, -1, 60_000, state, new Set(partitions), state === "Empty" ? -1 : T0, T0);
}

test("state ids are Kafka's (0 Empty ... 7 PrepareEpochFence), both ways", () => {
  assert.deepEqual(ALL.map((s) => txnStateIds[s]), [0, 1, 2, 3, 4, 5, 6, 7]);
  for (const s of ALL) assert.equal(txnStateFromId(txnStateIds[s]), s);
  assert.equal(txnStateFromId(8), null);
  assert.equal(txnStateFromId(-1), null);
});

test("valid previous states are Kafka 3.8's table", () => {
  assert.deepEqual(validPreviousStates, {
    Empty: ["Empty", "CompleteCommit", "CompleteAbort"],
    Ongoing: ["Ongoing", "Empty", "CompleteCommit", "CompleteAbort"],
    PrepareCommit: ["Ongoing"],
    PrepareAbort: ["Ongoing", "PrepareEpochFence"],
    CompleteCommit: ["PrepareCommit"],
    CompleteAbort: ["PrepareAbort"],
    Dead: ["Empty", "CompleteAbort", "CompleteCommit"],
    PrepareEpochFence: ["Ongoing"],
  });
});

test("a full commit cycle: Empty -> Ongoing -> PrepareCommit -> CompleteCommit, each applied only on completion", () => {
  const m = meta();
  const add = m.prepareAddPartitions(["t\u00000", "t\u00001"], T0 + 10);
  assert.equal(m.pendingState, "Ongoing");
  assert.equal(m.state, "Empty", "nothing applied before the append");
  assert.equal(m.partitions.size, 0);
  assert.equal(add.txnStartTimestampMs, T0 + 10, "a transaction starts at its first partition");
  m.completeTransitionTo(add);
  assert.equal(m.state, "Ongoing");
  assert.equal(m.pendingState, null);
  assert.deepEqual(m.topicPartitions(), [{ topic: "t", partition: 0 }, { topic: "t", partition: 1 }]);
  // More partitions keep the start time.
  const more = m.prepareAddPartitions(["u\u00005"], T0 + 20);
  assert.equal(more.txnStartTimestampMs, T0 + 10);
  m.completeTransitionTo(more);
  const prep = m.prepareAbortOrCommit("PrepareCommit", T0 + 30);
  m.completeTransitionTo(prep);
  assert.equal(m.state, "PrepareCommit");
  assert.equal(m.partitions.size, 3, "partitions stay until their markers are written");
  m.removePartition("t", 0);
  m.removePartition("t", 1);
  m.removePartition("u", 5);
  const done = m.prepareComplete(T0 + 40);
  assert.equal(done.state, "CompleteCommit");
  m.completeTransitionTo(done);
  assert.equal(m.state, "CompleteCommit");
  assert.equal(m.txnLastUpdateTimestampMs, T0 + 40);
  // The next transaction starts afresh.
  const again = m.prepareAddPartitions(["t\u00002"], T0 + 50);
  assert.equal(again.txnStartTimestampMs, T0 + 50);
});

test("illegal transitions and a second transition while one is pending are assertion failures", () => {
  assert.throws(() => meta("Empty").prepareAbortOrCommit("PrepareCommit", T0), /PrepareCommit cannot follow Empty/);
  assert.throws(() => meta("PrepareCommit").prepareAddPartitions(["t\u00000"], T0), /Ongoing cannot follow PrepareCommit/);
  assert.throws(() => meta("Ongoing").prepareDead(), /Dead cannot follow Ongoing/);
  assert.throws(() => meta("Empty").prepareFenceProducerEpoch(), /PrepareEpochFence cannot follow Empty/);
  assert.throws(() => meta("Empty").removePartition("t", 0), /only while markers are written/);
  const m = meta("Ongoing", 3, ["t\u00000"]);
  m.prepareAbortOrCommit("PrepareAbort", T0);
  assert.throws(() => m.prepareAbortOrCommit("PrepareCommit", T0), /while PrepareAbort is pending/);
  // Completing what was not prepared.
  const other = meta("Ongoing", 3, ["t\u00000"]);
  const t = other.prepareAbortOrCommit("PrepareCommit", T0);
  other.pendingState = null;
  assert.throws(() => other.completeTransitionTo(t), /no pending state/);
});

test("InitProducerId epochs: bump without an expected epoch; KIP-360 bump, retry of a bump, and fencing with one", () => {
  const m = meta("Empty", 4);
  const r = m.prepareIncrementProducerEpoch(30_000, null, T0);
  assert.ok(r.ok);
  assert.equal(r.transit.producerEpoch, 5);
  assert.equal(r.transit.lastProducerEpoch, -1, "a new producer forgets the last epoch");
  assert.equal(r.transit.txnTimeoutMs, 30_000);
  m.completeTransitionTo(r.transit);
  assert.equal(m.txnTimeoutMs, 30_000);

  const withExpected = m.prepareIncrementProducerEpoch(30_000, 5, T0);
  assert.ok(withExpected.ok);
  assert.deepEqual([withExpected.transit.producerEpoch, withExpected.transit.lastProducerEpoch], [6, 5]);
  m.completeTransitionTo(withExpected.transit);
  // The same request again (its answer was lost): the epoch it got, not a new one.
  const retry = m.prepareIncrementProducerEpoch(30_000, 5, T0);
  assert.ok(retry.ok);
  assert.deepEqual([retry.transit.producerEpoch, retry.transit.lastProducerEpoch], [6, 5]);
  m.completeTransitionTo(retry.transit);
  const stale = m.prepareIncrementProducerEpoch(30_000, 3, T0);
  assert.deepEqual(stale, { ok: false, errorCode: ErrorCode.PRODUCER_FENCED });
  assert.equal(m.pendingState, null, "a refusal leaves nothing pending");
});

test("epochs run out at 32766: rotation to a new producer id at epoch 0; bumping past it is an assertion failure", () => {
  assert.equal(isEpochExhausted(32765), false);
  assert.equal(isEpochExhausted(32766), true);
  const m = meta("CompleteAbort", 32766);
  assert.throws(() => m.prepareIncrementProducerEpoch(1000, null, T0), /exhausted/);
  const rot = m.prepareProducerIdRotation(11n, 1000, T0, true);
  assert.deepEqual([rot.producerId, rot.producerEpoch, rot.lastProducerId, rot.lastProducerEpoch], [11n, 0, 10n, 32766]);
  m.completeTransitionTo(rot);
  assert.deepEqual([m.producerId, m.producerEpoch, m.lastProducerId, m.state], [11n, 0, 10n, "Empty"]);
  assert.throws(() => meta("Ongoing", 5, ["t\u00000"]).prepareProducerIdRotation(12n, 1000, T0, false), /while a transaction is pending/);
});

test("an epoch fence bumps once; after a failed fence the next one reuses the epoch; the abort completes the fence", () => {
  const m = meta("Ongoing", 7, ["t\u00000"]);
  const f = m.prepareFenceProducerEpoch();
  assert.equal(f.state, "PrepareEpochFence");
  assert.equal(f.producerEpoch, 8);
  // The fence's epoch never completes by itself.
  assert.throws(() => m.completeTransitionTo(f), /never completed/);
  const again = meta("Ongoing", 8, ["t\u00000"]);
  again.hasFailedEpochFence = true;
  assert.equal(again.prepareFenceProducerEpoch().producerEpoch, 8, "no second bump");
  const full = meta("Ongoing", 32767, ["t\u00000"]);
  assert.throws(() => full.prepareFenceProducerEpoch(), /cannot fence/);
});
