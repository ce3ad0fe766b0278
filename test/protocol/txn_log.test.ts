// The __transaction_state record formats: golden bytes built by hand from Kafka's
// TransactionLogKey / TransactionLogValue definitions (an int16 version, then the fields in order;
// int16-length strings, int32-count arrays, -1 for a null array in v0; compact lengths and
// tagged-field sections in v1), the versions Kafka 3.8 writes, and decoders that answer
// "unknown" / "invalid" instead of throwing.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  decodeTransactionLogKey,
  decodeTransactionLogValue,
  encodeTransactionLogKey,
  encodeTransactionLogValue,
  type TransactionLogValue,
} from "../../src/protocol/mod.ts";
import { ascii, bytes, i16, i32, i64, str } from "../helpers/golden_bytes.ts";

const ongoing: TransactionLogValue = {
  producerId: 4001n,
  producerEpoch: 7,
  transactionTimeoutMs: 60_000,
  transactionStatus: 1,
  transactionPartitions: [{ topic: "orders", partitionIds: [0, 3] }, { topic: "__consumer_offsets", partitionIds: [12] }],
  transactionLastUpdateTimestampMs: 1_700_000_000_500n,
  transactionStartTimestampMs: 1_700_000_000_000n,
};

const ongoingV0 = bytes(
  i16(0), // version
  i64(4001n),
  i16(7),
  i32(60_000),
  [1], // status int8: Ongoing
  i32(2), // two topics
  str("orders"),
  i32(2),
  i32(0),
  i32(3),
  str("__consumer_offsets"),
  i32(1),
  i32(12),
  i64(1_700_000_000_500n),
  i64(1_700_000_000_000n),
);

test("TransactionLogKey v0 is int16 0 then the transactional id as an int16-length string", () => {
  const golden = bytes(i16(0), str("my-txn"));
  assert.deepEqual(encodeTransactionLogKey("my-txn"), golden);
  assert.deepEqual(decodeTransactionLogKey(golden), { kind: "txn", version: 0, transactionalId: "my-txn" });
});

test("TransactionLogValue v0 (what Kafka 3.8 writes) matches the bytes built from Kafka's schema, both ways", () => {
  assert.deepEqual(encodeTransactionLogValue(ongoing), ongoingV0);
  assert.deepEqual(decodeTransactionLogValue(ongoingV0), { kind: "txn", version: 0, ...ongoing });
});

test("TransactionLogValue v0 for Empty carries a null partition array (int32 -1)", () => {
  const empty: TransactionLogValue = { ...ongoing, transactionStatus: 0, transactionPartitions: null, transactionStartTimestampMs: -1n };
  const golden = bytes(i16(0), i64(4001n), i16(7), i32(60_000), [0], i32(-1), i64(1_700_000_000_500n), i64(-1n));
  assert.deepEqual(encodeTransactionLogValue(empty), golden);
  assert.deepEqual(decodeTransactionLogValue(golden), { kind: "txn", version: 0, ...empty });
});

test("TransactionLogValue v1 (flexible) is read: compact lengths, tagged-field sections", () => {
  const golden = bytes(
    i16(1),
    i64(4001n),
    i16(7),
    i32(60_000),
    [2], // PrepareCommit
    [2], // compact array: 1 element + 1
    [7, ...ascii("orders")], // compact string: length + 1
    [3, ...i32(0), ...i32(3)], // compact []int32
    [0], // the element's tagged fields
    i64(1_700_000_000_500n),
    i64(1_700_000_000_000n),
    [0], // the value's tagged fields
  );
  const v = decodeTransactionLogValue(golden);
  assert.deepEqual(v, {
    kind: "txn",
    version: 1,
    ...ongoing,
    transactionStatus: 2,
    transactionPartitions: [{ topic: "orders", partitionIds: [0, 3] }],
  });
  assert.deepEqual(encodeTransactionLogValue({ ...ongoing, transactionStatus: 2, transactionPartitions: [{ topic: "orders", partitionIds: [0, 3] }] }, 1), golden);
});

test("a key of another version is 'unknown' (skipped on load, as Kafka's UnknownKey); short or trailing bytes are 'invalid'", () => {
  assert.deepEqual(decodeTransactionLogKey(bytes(i16(1), str("x"))), { kind: "unknown", version: 1 });
  assert.equal(decodeTransactionLogKey(bytes([0])).kind, "invalid");
  assert.equal(decodeTransactionLogKey(bytes(i16(0), i16(5), ascii("ab"))).kind, "invalid");
  assert.equal(decodeTransactionLogKey(bytes(i16(0), str("ab"), [9])).kind, "invalid");
});

test("a value that is short, of an unknown version, or with a status id Kafka does not know is 'invalid', never a throw", () => {
  for (let cut = 0; cut < ongoingV0.length; cut++) {
    assert.equal(decodeTransactionLogValue(ongoingV0.subarray(0, cut)).kind, "invalid", `cut at ${cut}`);
  }
  const v2 = ongoingV0.slice();
  v2[1] = 2;
  assert.equal(decodeTransactionLogValue(v2).kind, "invalid");
  const badStatus = ongoingV0.slice();
  badStatus[2 + 8 + 2 + 4] = 8;
  const r = decodeTransactionLogValue(badStatus);
  assert.equal(r.kind, "invalid");
  assert.match((r as { error: string }).error, /status 8/);
  // A huge declared partition count with few bytes behind it is refused, not allocated.
  const huge = bytes(i16(0), i64(1n), i16(0), i32(1), [1], i32(0x7fffffff), i64(0n), i64(0n));
  assert.equal(decodeTransactionLogValue(huge).kind, "invalid");
});
