// ListOffsets v0 (deprecated; what pre-0.10 clients send, kafkajs among them when told the broker
// is that old), as Kafka 3.8's handleListOffsetRequestV0 answers it: up to max_num_offsets
// offsets per partition, newest first, from the segments' base offsets and their files'
// last-modified times (not record timestamps), plus the log end offset when the active segment
// holds data; a consumer's never past the high watermark. Sent over a real socket, hand-encoded
// once so the schema itself is checked, and by kafkajs' own v0 encoder and decoder.
import { test } from "node:test";
import assert from "node:assert/strict";
import { utimesSync } from "node:fs";
import { createRequire } from "node:module";
import { AclOperation, ResourceType } from "../../src/authorizer/mod.ts";
import { clampedToHighWatermark } from "../../src/log/mod.ts";
import { ListOffsetsApi } from "../../src/protocol/api/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { grant, saslAclBroker } from "../helpers/acls.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { saslLogin } from "../helpers/sasl.ts";
import { createTopic, frame, produce, WireClient } from "../helpers/wire.ts";

interface V0Partition {
  partitionIndex: number;
  errorCode: number;
  oldStyleOffsets: bigint[];
}

async function listV0(c: WireClient, topic: string, partitions: { partitionIndex: number; timestamp: bigint; maxNumOffsets: number }[], replicaId = -1) {
  const res = await c.request(ListOffsetsApi, 0, { replicaId, topics: [{ name: topic, partitions }] });
  // (the decoder also fills v1+'s fields with their defaults; v0 carries only these)
  return (res.topics as { name: string; partitions: V0Partition[] }[])[0].partitions
    .map(({ partitionIndex, errorCode, oldStyleOffsets }) => ({ partitionIndex, errorCode, oldStyleOffsets }));
}

const offsetsOf = async (c: WireClient, topic: string, timestamp: bigint, maxNumOffsets: number) =>
  (await listV0(c, topic, [{ partitionIndex: 0, timestamp, maxNumOffsets }]))[0];

/** A topic of three segments (bases 0, 2, 4; log end 6), each .log file dated `${i + 1}000` s after the epoch. */
async function threeSegments(b: TestBroker, c: WireClient, topic: string): Promise<void> {
  // segment.bytes below two batches: every batch after the first rolls a new segment.
  assert.equal((await createTopic(c, topic, { configs: { "segment.bytes": "120" } })).errorCode, ErrorCode.NONE);
  for (let i = 0; i < 3; i++) assert.equal((await produce(c, topic, 0, buildBatch(valueRecords(2, `b${i}-`, 20)))).errorCode, ErrorCode.NONE);
  const bases = [0, 2, 4];
  bases.forEach((base, i) => {
    const path = `${b.logDir}/${topic}-0/${String(base).padStart(20, "0")}.log`;
    utimesSync(path, (i + 1) * 1000, (i + 1) * 1000);
  });
}

test("ListOffsets v0: latest, earliest and by file time, newest first, at most max_num_offsets", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    await threeSegments(b, c, "old");
    const latest = await offsetsOf(c, "old", -1n, 10);
    assert.deepEqual(latest, { partitionIndex: 0, errorCode: ErrorCode.NONE, oldStyleOffsets: [6n, 4n, 2n, 0n] });
    assert.deepEqual((await offsetsOf(c, "old", -1n, 1)).oldStyleOffsets, [6n]);
    assert.deepEqual((await offsetsOf(c, "old", -1n, 0)).oldStyleOffsets, []);
    assert.deepEqual((await offsetsOf(c, "old", -2n, 1)).oldStyleOffsets, [0n]);
    assert.deepEqual((await offsetsOf(c, "old", -2n, 10)).oldStyleOffsets, [0n], "earliest starts at the first entry and goes back from there");
    // A time: the newest segment whose file was modified at or before it, and older ones.
    assert.deepEqual((await offsetsOf(c, "old", 2_500_000n, 10)).oldStyleOffsets, [2n, 0n]);
    assert.deepEqual((await offsetsOf(c, "old", 2_000_000n, 1)).oldStyleOffsets, [2n]);
    assert.deepEqual((await offsetsOf(c, "old", 999_999n, 10)).oldStyleOffsets, [], "older than every segment");
    // Now or later: the log end offset (stamped now) comes first.
    assert.deepEqual((await offsetsOf(c, "old", BigInt(Date.now() + 3_600_000), 2)).oldStyleOffsets, [6n, 4n]);

    const [unknown] = await listV0(c, "old", [{ partitionIndex: 7, timestamp: -1n, maxNumOffsets: 1 }]);
    assert.deepEqual(unknown, { partitionIndex: 7, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, oldStyleOffsets: [] });
    // Kafka fails a negative count building its answer.
    assert.equal((await offsetsOf(c, "old", -1n, -1)).errorCode, ErrorCode.UNKNOWN_SERVER_ERROR);
    // An empty active segment adds no log-end entry: a fresh topic answers its one segment's base.
    assert.equal((await createTopic(c, "fresh")).errorCode, ErrorCode.NONE);
    assert.deepEqual((await offsetsOf(c, "fresh", -1n, 5)).oldStyleOffsets, [0n]);
    // The connection stays usable after v0 (strand used to close it).
    assert.deepEqual((await offsetsOf(c, "old", -1n, 1)).oldStyleOffsets, [6n]);
  } finally {
    c.close();
    await b.stop();
  }
});

test("ListOffsets v0 hand-encoded: the request and answer bytes as Kafka's v0 schema lays them out", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "raw")).errorCode, ErrorCode.NONE);
    assert.equal((await produce(c, "raw", 0, buildBatch(valueRecords(3)))).errorCode, ErrorCode.NONE);
    const enc = new TextEncoder();
    const parts: number[] = [];
    const i16 = (v: number) => parts.push((v >> 8) & 0xff, v & 0xff);
    const i32 = (v: number) => parts.push((v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff);
    const str = (s: string) => {
      i16(s.length);
      parts.push(...enc.encode(s));
    };
    i16(2), i16(0), i32(4242), str("raw-v0"); // header v1: api key, version, correlation id, client id
    i32(-1); // replica_id
    i32(1), str("raw"); // topics
    i32(1), i32(0), i32(-1), i32(-1), i32(2); // partitions: index 0, timestamp -1 (int64), max_num_offsets 2
    await c.write(frame(new Uint8Array(parts)));
    const payload = await c.nextFrame();
    assert.ok(payload !== null, "answered, not closed");
    const dv = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
    let at = 0;
    const r32 = () => ((at += 4), dv.getInt32(at - 4));
    const r16 = () => ((at += 2), dv.getInt16(at - 2));
    const r64 = () => ((at += 8), dv.getBigInt64(at - 8));
    assert.equal(r32(), 4242, "correlation id");
    assert.equal(r32(), 1, "one topic");
    const nameLength = r16();
    assert.equal(new TextDecoder().decode(payload.subarray(at, at + nameLength)), "raw");
    at += nameLength;
    assert.equal(r32(), 1, "one partition");
    assert.deepEqual([r32(), r16()], [0, ErrorCode.NONE]);
    assert.equal(r32(), 2, "two old-style offsets");
    assert.deepEqual([r64(), r64()], [3n, 0n], "log end offset, then the segment's base");
    assert.equal(at, payload.byteLength, "nothing else: no throttle time, timestamp or offset in v0");
  } finally {
    c.close();
    await b.stop();
  }
});

test("ListOffsets v0: a consumer's offsets stop at the high watermark (Kafka's legacyFetchOffsetsForTimestamp)", () => {
  assert.deepEqual(clampedToHighWatermark([9, 6, 3, 0], 9), [9, 6, 3, 0]);
  assert.deepEqual(clampedToHighWatermark([9, 6, 3, 0], 5), [5, 3, 0]);
  assert.deepEqual(clampedToHighWatermark([9, 6], 2), [2]);
  assert.deepEqual(clampedToHighWatermark([], 2), []);
});

test("ListOffsets v0 needs DESCRIBE on the topic: TOPIC_AUTHORIZATION_FAILED and no offsets otherwise", async () => {
  const b = await startBroker(saslAclBroker);
  const admin = await WireClient.connect(b.port);
  const alice = await WireClient.connect(b.port);
  try {
    assert.equal((await saslLogin(admin, "PLAIN", "admin", "admin-secret")).errorCode, 0);
    assert.equal((await saslLogin(alice, "PLAIN", "alice", "alice-secret")).errorCode, 0);
    assert.equal((await createTopic(admin, "guarded")).errorCode, ErrorCode.NONE);
    assert.equal((await produce(admin, "guarded", 0, buildBatch(valueRecords(2)))).errorCode, ErrorCode.NONE);
    assert.deepEqual(await offsetsOf(alice, "guarded", -1n, 1), { partitionIndex: 0, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, oldStyleOffsets: [] });
    await grant(b, "User:alice", AclOperation.DESCRIBE, ResourceType.TOPIC, "guarded");
    assert.deepEqual(await offsetsOf(alice, "guarded", -1n, 1), { partitionIndex: 0, errorCode: ErrorCode.NONE, oldStyleOffsets: [2n] });
  } finally {
    admin.close();
    alice.close();
    await b.stop();
  }
});

// kafkajs picks the highest version both sides advertise; its own test suite pins the versions of
// an old broker. Here its Broker is given strand's ApiVersions with ListOffsets capped at v0, so
// kafkajs encodes v0 and decodes strand's answer with its own code.
test("kafkajs' ListOffsets v0 against strand: the offsets kafkajs reads back", async () => {
  const require = createRequire(import.meta.url);
  const KafkaJsBroker = require("kafkajs/src/broker");
  const ConnectionPool = require("kafkajs/src/network/connectionPool");
  const socketFactory = require("kafkajs/src/network/socketFactory")();
  const { createLogger, LEVELS } = require("kafkajs/src/loggers");
  const logger = createLogger({ level: LEVELS.NOTHING, logCreator: () => () => {} });
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  const pool = () =>
    new ConnectionPool({ host: "127.0.0.1", port: b.port, logger, socketFactory, connectionTimeout: 5_000, requestTimeout: 10_000, clientId: "kafkajs-v0" });
  // deno-lint-ignore no-explicit-any
  const brokers: any[] = [];
  try {
    await threeSegments(b, c, "kjs");
    const probe = new KafkaJsBroker({ connectionPool: pool(), logger });
    brokers.push(probe);
    await probe.connect();
    const versions = { ...probe.versions, 2: { minVersion: 0, maxVersion: 0 } };
    const old = new KafkaJsBroker({ connectionPool: pool(), logger, versions });
    brokers.push(old);
    await old.connect();
    const ask = async (timestamp: number) => {
      const res = await old.listOffsets({ replicaId: -1, topics: [{ topic: "kjs", partitions: [{ partition: 0, timestamp }] }] });
      return res.responses[0].partitions[0];
    };
    // kafkajs sends max_num_offsets 1 and keeps the last offset of the list.
    assert.deepEqual(await ask(-1), { partition: 0, errorCode: 0, offset: "6" });
    assert.deepEqual(await ask(-2), { partition: 0, errorCode: 0, offset: "0" });
    assert.deepEqual(await ask(2_500_000), { partition: 0, errorCode: 0, offset: "2" });
  } finally {
    for (const k of brokers) await k.disconnect();
    c.close();
    await b.stop();
  }
});
