// The consumer protocol's subscription and assignment bytes (JoinGroup metadata, SyncGroup
// assignments): golden bytes by hand from Kafka's layout (int16 version, then the fields, never
// flexible), newer versions read as the newest known, malformed bytes invalid, never thrown.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  decodeConsumerAssignment,
  decodeConsumerSubscription,
  encodeConsumerAssignment,
  encodeConsumerSubscription,
} from "../../src/protocol/mod.ts";

function i16(n: number): number[] {
  return [(n >> 8) & 0xff, n & 0xff];
}
function i32(n: number): number[] {
  return [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
}
function str(s: string | null): number[] {
  return s === null ? i16(-1) : [...i16(s.length), ...[...s].map((c) => c.charCodeAt(0))];
}
function bytes(...parts: number[][]): Uint8Array {
  return Uint8Array.from(parts.flat());
}

test("subscription v0: version, topics, null user data", () => {
  const golden = bytes(i16(0), i32(2), str("a"), str("b"), i32(-1));
  assert.deepEqual(encodeConsumerSubscription({ topics: ["a", "b"] }, 0), golden);
  assert.deepEqual(decodeConsumerSubscription(golden), {
    kind: "subscription",
    version: 0,
    topics: ["a", "b"],
    userData: null,
    ownedPartitions: [],
    generationId: -1,
    rackId: null,
  });
});

test("subscription v3: owned partitions, generation id and rack id", () => {
  const golden = bytes(
    i16(3), i32(1), str("t"), i32(1), [7], // topics, user data
    i32(1), str("t"), i32(2), i32(0), i32(1), // owned partitions
    i32(5), str("rack1"), // generation, rack
  );
  const value = {
    topics: ["t"],
    userData: Uint8Array.of(7),
    ownedPartitions: [{ topic: "t", partitions: [0, 1] }],
    generationId: 5,
    rackId: "rack1",
  };
  assert.deepEqual(encodeConsumerSubscription(value), golden);
  assert.deepEqual(decodeConsumerSubscription(golden), { kind: "subscription", version: 3, ...value });
});

test("a newer subscription version is read as v3, its appended fields ignored (as Kafka reads it)", () => {
  const golden = bytes(i16(9), i32(0), i32(-1), i32(0), i32(-1), str(null), [1, 2, 3]);
  assert.deepEqual(decodeConsumerSubscription(golden), {
    kind: "subscription",
    version: 9,
    topics: [],
    userData: null,
    ownedPartitions: [],
    generationId: -1,
    rackId: null,
  });
});

test("assignment v0 and v3 share a layout: partitions per topic, user data", () => {
  for (const version of [0, 1, 2, 3]) {
    const golden = bytes(i16(version), i32(2), str("x"), i32(1), i32(4), str("y"), i32(0), i32(-1));
    const value = { assignedPartitions: [{ topic: "x", partitions: [4] }, { topic: "y", partitions: [] }], userData: null };
    assert.deepEqual(encodeConsumerAssignment(value, version), golden);
    assert.deepEqual(decodeConsumerAssignment(golden), { kind: "assignment", version, ...value });
  }
  // An empty assignment, as the leader sends a member with nothing to consume.
  assert.deepEqual(decodeConsumerAssignment(bytes(i16(3), i32(0), i32(0))), {
    kind: "assignment",
    version: 3,
    assignedPartitions: [],
    userData: new Uint8Array(0),
  });
});

test("malformed subscriptions and assignments are invalid, never thrown", () => {
  assert.equal(decodeConsumerSubscription(bytes()).kind, "invalid");
  assert.equal(decodeConsumerSubscription(bytes(i16(-1), i32(0), i32(-1))).kind, "invalid");
  assert.equal(decodeConsumerAssignment(bytes(i16(-2))).kind, "invalid");
  assert.equal(decodeConsumerAssignment(bytes(i16(0), i32(1_000_000_000))).kind, "invalid");
  const sub = encodeConsumerSubscription({ topics: ["topic"], ownedPartitions: [{ topic: "topic", partitions: [1, 2] }], rackId: "r" });
  for (let len = 0; len < sub.length; len++) assert.equal(decodeConsumerSubscription(sub.subarray(0, len)).kind, "invalid", `${len} bytes`);
  const asg = encodeConsumerAssignment({ assignedPartitions: [{ topic: "topic", partitions: [1] }], userData: Uint8Array.of(1) });
  for (let len = 0; len < asg.length; len++) assert.equal(decodeConsumerAssignment(asg.subarray(0, len)).kind, "invalid", `${len} bytes`);
  let seed = 7;
  for (let i = 0; i < 1000; i++) {
    const b = sub.slice();
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    b[seed % b.length] = seed >>> 24;
    decodeConsumerSubscription(b);
    decodeConsumerAssignment(b);
  }
});
