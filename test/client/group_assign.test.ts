// The range assignor (Kafka's RangeAssignor): contiguous ranges per topic over the members
// subscribed to it, sorted by member id, the first ones getting one more.
import assert from "node:assert/strict";
import { test } from "node:test";
import { rangeAssign } from "../../src/client/mod.ts";

test("rangeAssign: Kafka's RangeAssignor shares", () => {
  const subs = new Map([["m-b", ["t1", "t2"]], ["m-a", ["t1", "t2"]], ["m-c", ["t1"]]]);
  const out = rangeAssign(subs, new Map([["t1", 7], ["t2", 3]]));
  assert.deepEqual(out.get("m-a"), [{ topic: "t1", partitions: [0, 1, 2] }, { topic: "t2", partitions: [0, 1] }]);
  assert.deepEqual(out.get("m-b"), [{ topic: "t1", partitions: [3, 4] }, { topic: "t2", partitions: [2] }]);
  assert.deepEqual(out.get("m-c"), [{ topic: "t1", partitions: [5, 6] }]);
  // More members than partitions: the last ones get nothing; unknown topics are skipped.
  const few = rangeAssign(new Map([["x", ["t"]], ["y", ["t"]], ["z", ["t", "gone"]]]), new Map([["t", 2]]));
  assert.deepEqual([...few], [["x", [{ topic: "t", partitions: [0] }]], ["y", [{ topic: "t", partitions: [1] }]], ["z", []]]);
});
