// The __consumer_offsets record formats: golden bytes built by hand from Kafka's layout (an int16
// version, then the fields in order; int16-length strings and int32-length bytes below v4,
// compact lengths and a tagged-field section from v4), the versions Kafka 3.8 chooses, round
// trips of every version, and decoders that answer "invalid" instead of throwing.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  decodeGroupMetadataValue,
  decodeOffsetCommitValue,
  decodeOffsetsKey,
  decodeOffsetsValue,
  encodeGroupMetadataKey,
  encodeGroupMetadataValue,
  encodeOffsetCommitKey,
  encodeOffsetCommitValue,
  encode,
  GroupMetadataValueSchema,
  OffsetCommitKeySchema,
  OffsetCommitValueSchema,
} from "../../src/protocol/mod.ts";
import { Writer } from "../../src/util/mod.ts";
import { ascii, byt, bytes, cstr, i16, i32, i64, str } from "../helpers/golden_bytes.ts";

// Hand-built bytes, independent of the codec: test/helpers/golden_bytes.ts.

// ---- keys ---------------------------------------------------------------------------------------

test("OffsetCommitKey v1 is int16 1, group, topic, int32 partition", () => {
  const golden = bytes(i16(1), str("g1"), str("orders"), i32(7));
  assert.deepEqual(encodeOffsetCommitKey({ group: "g1", topic: "orders", partition: 7 }), golden);
  assert.deepEqual(decodeOffsetsKey(golden), { kind: "offsetCommit", version: 1, group: "g1", topic: "orders", partition: 7 });
});

test("OffsetCommitKey v0 (older Kafka) has the same layout and decodes too", () => {
  const golden = bytes(i16(0), str("g"), str("t"), i32(0));
  assert.deepEqual(encodeOffsetCommitKey({ group: "g", topic: "t", partition: 0 }, 0), golden);
  assert.deepEqual(decodeOffsetsKey(golden), { kind: "offsetCommit", version: 0, group: "g", topic: "t", partition: 0 });
});

test("GroupMetadataKey v2 is int16 2, group", () => {
  const golden = bytes(i16(2), str("payments"));
  assert.deepEqual(encodeGroupMetadataKey({ group: "payments" }), golden);
  assert.deepEqual(decodeOffsetsKey(golden), { kind: "groupMetadata", version: 2, group: "payments" });
});

test("a key version from a newer coordinator is unknown (skipped, as Kafka 3.8 does)", () => {
  // ConsumerGroupMetadataKey (KIP-848) is key version 3: int16 3, group id.
  assert.deepEqual(decodeOffsetsKey(bytes(i16(3), str("g"))), { kind: "unknown", version: 3 });
  assert.deepEqual(decodeOffsetsKey(bytes(i16(16), [1, 2, 3])), { kind: "unknown", version: 16 });
});

test("malformed keys are invalid, never thrown", () => {
  const cases: Uint8Array[] = [
    bytes(),
    bytes([0]),
    bytes(i16(-1), str("g")),
    bytes(i16(1), str("g"), str("t")), // partition missing
    bytes(i16(1), str("g"), str("t"), i32(1), [0]), // a byte left over
    bytes(i16(2), i16(5), ascii("ab")), // string past the end
    bytes(i16(2), str("g"), [9]),
    bytes(i16(2), i16(2), [0xc3, 0x28]), // invalid UTF-8
  ];
  for (const c of cases) {
    const k = decodeOffsetsKey(c);
    assert.equal(k.kind, "invalid", `${Array.from(c)} decoded as ${JSON.stringify(k)}`);
    assert.ok("error" in k && k.error.length > 0);
  }
  const full = encodeOffsetCommitKey({ group: "group-é", topic: "topic", partition: 3 });
  for (let len = 0; len < full.length; len++) assert.equal(decodeOffsetsKey(full.subarray(0, len)).kind, "invalid", `${len} bytes`);
});

// ---- offset commit values -----------------------------------------------------------------------

test("OffsetCommitValue: v3 (with leader epoch) unless an expire timestamp is set, as Kafka 3.8 writes", () => {
  const v3 = bytes(i16(3), i64(42n), i32(5), str("meta"), i64(1_700_000_000_000n));
  const encoded = encodeOffsetCommitValue({ offset: 42n, leaderEpoch: 5, metadata: "meta", commitTimestamp: 1_700_000_000_000n });
  assert.deepEqual(encoded, v3);
  assert.deepEqual(encodeOffsetCommitValue({ offset: 42n, leaderEpoch: 5, metadata: "meta", commitTimestamp: 1_700_000_000_000n, expireTimestamp: -1n }), v3);
  assert.deepEqual(decodeOffsetCommitValue(v3), {
    kind: "offsetCommit",
    version: 3,
    offset: 42n,
    leaderEpoch: 5,
    metadata: "meta",
    commitTimestamp: 1_700_000_000_000n,
    expireTimestamp: -1n,
  });

  // v1: offset, metadata, commit timestamp, expire timestamp (no leader epoch).
  const v1 = bytes(i16(1), i64(42n), str(""), i64(1000n), i64(2000n));
  assert.deepEqual(encodeOffsetCommitValue({ offset: 42n, leaderEpoch: 5, metadata: "", commitTimestamp: 1000n, expireTimestamp: 2000n }), v1);
  assert.deepEqual(decodeOffsetCommitValue(v1), {
    kind: "offsetCommit",
    version: 1,
    offset: 42n,
    leaderEpoch: -1,
    metadata: "",
    commitTimestamp: 1000n,
    expireTimestamp: 2000n,
  });
});

test("OffsetCommitValue v0 and v2 (older Kafka) and v4 (flexible) decode", () => {
  const base = { kind: "offsetCommit", offset: 9n, metadata: "m", commitTimestamp: 77n, leaderEpoch: -1, expireTimestamp: -1n };
  const v0 = bytes(i16(0), i64(9n), str("m"), i64(77n));
  assert.deepEqual(decodeOffsetCommitValue(v0), { ...base, version: 0 });
  const v2 = bytes(i16(2), i64(9n), str("m"), i64(77n));
  assert.deepEqual(decodeOffsetCommitValue(v2), { ...base, version: 2 });
  // v4: compact string, then an empty tagged-field section.
  const v4 = bytes(i16(4), i64(9n), i32(3), cstr("m"), i64(77n), [0]);
  assert.deepEqual(decodeOffsetCommitValue(v4), { ...base, version: 4, leaderEpoch: 3 });
  assert.deepEqual(encodeOffsetCommitValue({ offset: 9n, leaderEpoch: 3, metadata: "m", commitTimestamp: 77n }, 4), v4);
  // An unknown tagged field in v4 is skipped.
  const tagged = bytes(i16(4), i64(9n), i32(3), cstr("m"), i64(77n), [1, 5, 2, 0xaa, 0xbb]);
  assert.deepEqual(decodeOffsetCommitValue(tagged), { ...base, version: 4, leaderEpoch: 3 });
});

test("OffsetCommitValue: unknown versions and malformed bytes are invalid", () => {
  assert.match((decodeOffsetCommitValue(bytes(i16(5), i64(1n))) as { error: string }).error, /version 5 is unknown/);
  assert.equal(decodeOffsetCommitValue(bytes(i16(-1))).kind, "invalid");
  assert.equal(decodeOffsetCommitValue(bytes([3])).kind, "invalid");
  const good = encodeOffsetCommitValue({ offset: 1n, metadata: "x", commitTimestamp: 2n });
  for (let len = 0; len < good.length; len++) assert.equal(decodeOffsetCommitValue(good.subarray(0, len)).kind, "invalid");
  assert.equal(decodeOffsetCommitValue(bytes(Array.from(good), [0])).kind, "invalid");
});

// ---- group metadata values ----------------------------------------------------------------------

test("GroupMetadataValue v3: Kafka's layout, members with instance id and rebalance timeout", () => {
  const golden = bytes(
    i16(3),
    str("consumer"),
    i32(4), // generation
    str("range"),
    str("m-1"), // leader
    i64(1_700_000_000_123n), // currentStateTimestamp
    i32(2), // members
    str("m-1"), str("instance-a"), str("client"), str("/10.0.0.1"), i32(60000), i32(45000), byt([1, 2]), byt([3]),
    str("m-2"), str(null), str("client"), str("/10.0.0.2"), i32(300000), i32(10000), byt([]), byt([4, 5, 6]),
  );
  const value = {
    protocolType: "consumer",
    generation: 4,
    protocol: "range",
    leader: "m-1",
    currentStateTimestamp: 1_700_000_000_123n,
    members: [
      {
        memberId: "m-1",
        groupInstanceId: "instance-a",
        clientId: "client",
        clientHost: "/10.0.0.1",
        rebalanceTimeout: 60000,
        sessionTimeout: 45000,
        subscription: Uint8Array.of(1, 2),
        assignment: Uint8Array.of(3),
      },
      {
        memberId: "m-2",
        groupInstanceId: null,
        clientId: "client",
        clientHost: "/10.0.0.2",
        rebalanceTimeout: 300000,
        sessionTimeout: 10000,
        subscription: new Uint8Array(0),
        assignment: Uint8Array.of(4, 5, 6),
      },
    ],
  };
  assert.deepEqual(encodeGroupMetadataValue(value), golden);
  const back = decodeGroupMetadataValue(golden);
  assert.deepEqual(back, { kind: "groupMetadata", version: 3, ...value });
  // Member bytes are copies: the loaded group does not pin (or see changes to) the input buffer.
  golden[golden.length - 1] = 0xff;
  assert.deepEqual((back as typeof value).members[1].assignment, Uint8Array.of(4, 5, 6));
});

test("GroupMetadataValue v0: an Empty group (null protocol and leader, no members)", () => {
  const golden = bytes(i16(0), str("consumer"), i32(0), str(null), str(null), i32(0));
  assert.deepEqual(decodeGroupMetadataValue(golden), {
    kind: "groupMetadata",
    version: 0,
    protocolType: "consumer",
    generation: 0,
    protocol: null,
    leader: null,
    currentStateTimestamp: -1n,
    members: [],
  });
  assert.deepEqual(encodeGroupMetadataValue({ protocolType: "consumer", generation: 0, protocol: null, leader: null, members: [] }, 0), golden);
  // v1 adds each member's rebalance timeout before its session timeout; v2 the state timestamp.
  const v1 = bytes(i16(1), str(""), i32(1), str("p"), str("m"), i32(1), str("m"), str("c"), str("h"), i32(7), i32(8), byt([]), byt([]));
  const m = decodeGroupMetadataValue(v1);
  assert.equal(m.kind, "groupMetadata");
  assert.deepEqual((m as { members: unknown[] }).members, [
    { memberId: "m", groupInstanceId: null, clientId: "c", clientHost: "h", rebalanceTimeout: 7, sessionTimeout: 8, subscription: new Uint8Array(0), assignment: new Uint8Array(0) },
  ]);
});

test("GroupMetadataValue v4 is flexible: compact strings and bytes, tagged-field sections", () => {
  const golden = bytes(
    i16(4), cstr("consumer"), i32(1), cstr("range"), cstr("m"), i64(5n),
    [2], // one member (compact array: count + 1)
    cstr("m"), [0], cstr("c"), cstr("h"), i32(1), i32(2), [2, 9], [1], [0], // member, its tags
    [0], // message tags
  );
  const value = {
    protocolType: "consumer",
    generation: 1,
    protocol: "range",
    leader: "m",
    currentStateTimestamp: 5n,
    members: [{ memberId: "m", groupInstanceId: null, clientId: "c", clientHost: "h", rebalanceTimeout: 1, sessionTimeout: 2, subscription: Uint8Array.of(9), assignment: new Uint8Array(0) }],
  };
  assert.deepEqual(encodeGroupMetadataValue(value, 4), golden);
  assert.deepEqual(decodeGroupMetadataValue(golden), { kind: "groupMetadata", version: 4, ...value });
});

test("decodeOffsetsValue decodes by the key's kind", () => {
  const key = decodeOffsetsKey(encodeGroupMetadataKey({ group: "g" }));
  assert.equal(key.kind, "groupMetadata");
  const value = encodeGroupMetadataValue({ protocolType: "consumer", generation: 2, protocol: null, leader: null, members: [] });
  assert.equal(decodeOffsetsValue("groupMetadata", value).kind, "groupMetadata");
  // The same bytes as an offset commit value are not one.
  assert.equal(decodeOffsetsValue("offsetCommit", value).kind, "invalid");
  const offset = encodeOffsetCommitValue({ offset: 3n, metadata: "", commitTimestamp: 4n });
  assert.equal(decodeOffsetsValue("offsetCommit", offset).kind, "offsetCommit");
});

// ---- every version round-trips; garbage never throws ---------------------------------------------

test("every value version round-trips, with the fields a version lacks at their defaults", () => {
  for (let v = OffsetCommitValueSchema.versions.min; v <= OffsetCommitValueSchema.versions.max; v++) {
    const input = { offset: 123n, leaderEpoch: 9, metadata: "é", commitTimestamp: 456n, expireTimestamp: 789n };
    const back = decodeOffsetCommitValue(encodeOffsetCommitValue(input, v));
    assert.deepEqual(back, {
      kind: "offsetCommit",
      version: v,
      ...input,
      leaderEpoch: v >= 3 ? 9 : -1,
      expireTimestamp: v === 1 ? 789n : -1n,
    }, `v${v}`);
  }
  for (let v = GroupMetadataValueSchema.versions.min; v <= GroupMetadataValueSchema.versions.max; v++) {
    const member = { memberId: "m", groupInstanceId: "i", clientId: "c", clientHost: "h", rebalanceTimeout: 1, sessionTimeout: 2, subscription: Uint8Array.of(1), assignment: Uint8Array.of(2) };
    const input = { protocolType: "consumer", generation: 3, protocol: "range", leader: "m", currentStateTimestamp: 99n, members: [member, member] };
    const back = decodeGroupMetadataValue(encodeGroupMetadataValue(input, v));
    const expectMember = { ...member, groupInstanceId: v >= 3 ? "i" : null, rebalanceTimeout: v >= 1 ? 1 : -1 };
    assert.deepEqual(back, {
      kind: "groupMetadata",
      version: v,
      ...input,
      currentStateTimestamp: v >= 2 ? 99n : -1n,
      members: [expectMember, expectMember],
    }, `v${v}`);
  }
});

test("random and corrupted records never throw", () => {
  let seed = 12345;
  const random = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  const goods = [
    encodeOffsetCommitKey({ group: "g", topic: "t", partition: 1 }),
    encodeGroupMetadataKey({ group: "g" }),
    encodeOffsetCommitValue({ offset: 1n, metadata: "m", commitTimestamp: 2n }),
    encodeGroupMetadataValue({ protocolType: "consumer", generation: 1, protocol: "p", leader: "m", members: [{ memberId: "m", clientId: "c", clientHost: "h", sessionTimeout: 1, subscription: Uint8Array.of(1), assignment: Uint8Array.of(2) }] }),
  ];
  for (let i = 0; i < 2000; i++) {
    let b: Uint8Array;
    if (i % 2 === 0) b = Uint8Array.from({ length: Math.floor(random() * 40) }, () => Math.floor(random() * 256));
    else {
      b = goods[i % goods.length].slice();
      b[Math.floor(random() * b.length)] = Math.floor(random() * 256);
    }
    decodeOffsetsKey(b);
    decodeOffsetCommitValue(b);
    decodeGroupMetadataValue(b);
  }
});

// ---- the direct encoders against the schema's ---------------------------------------------------

/** What the generic codec writes for a version-prefixed record. */
function viaSchema(schema: Parameters<typeof encode>[0], version: number, value: Record<string, unknown>): Uint8Array {
  const w = new Writer(64);
  w.int16(version);
  encode(schema, version, value, w);
  return w.finish().slice();
}

test("OffsetCommitKey and OffsetCommitValue written directly match the schema's encoding byte for byte", () => {
  const names = ["", "g", "grüppe-ünïcode-😀", "x".repeat(150), "y".repeat(151), "ü".repeat(149), "z".repeat(4000)];
  for (const group of names) {
    for (const topic of ["t", "tópico", "a".repeat(249)]) {
      for (const partition of [0, 1, 999, 0x7fff_ffff]) {
        for (const version of [0, 1]) {
          const key = { group, topic, partition };
          assert.deepEqual(encodeOffsetCommitKey(key, version), viaSchema(OffsetCommitKeySchema, version, key), `${version} ${group} ${topic} ${partition}`);
        }
      }
    }
  }
  for (const metadata of names) {
    for (const offset of [0n, 1n, -1n, 0x7fff_ffff_ffff_ffffn]) {
      for (const version of [0, 1, 2, 3, 4]) {
        const value = { offset, leaderEpoch: 7, metadata, commitTimestamp: 1_700_000_000_000n, expireTimestamp: 1_800_000_000_000n };
        assert.deepEqual(encodeOffsetCommitValue(value, version), viaSchema(OffsetCommitValueSchema, version, value), `${version} ${metadata} ${offset}`);
      }
    }
  }
  // The versions chosen by default, without an expiry and with one.
  const plain = { offset: 42n, metadata: "m", commitTimestamp: 5n };
  assert.deepEqual(encodeOffsetCommitValue(plain), viaSchema(OffsetCommitValueSchema, 3, { ...plain, leaderEpoch: -1 }));
  const expiring = { ...plain, expireTimestamp: 9n };
  assert.deepEqual(encodeOffsetCommitValue(expiring), viaSchema(OffsetCommitValueSchema, 1, expiring));
  // A scratch buffer is reused: earlier results stay as they were.
  const a = encodeOffsetCommitKey({ group: "a", topic: "t", partition: 1 });
  encodeOffsetCommitKey({ group: "bbbbbbbb", topic: "tttttttt", partition: 2 });
  assert.deepEqual(a, viaSchema(OffsetCommitKeySchema, 1, { group: "a", topic: "t", partition: 1 }));
});
