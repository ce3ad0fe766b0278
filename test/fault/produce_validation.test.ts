// Issue 11, defects 1 and 3, over real sockets against a real broker: record sets whose records
// do not parse (garbage, impossible lengths and counts, garbage inside every codec, a 1 GiB gzip
// bomb, control/transactional/producer-id batches) each get their Kafka error code with nothing
// appended; the partition keeps taking good produces; a consumer (kcat when installed, and the
// broker's own Fetch) reads past everything that was acknowledged. Also the topic's timestamp
// rules: message.timestamp.type=LogAppendTime stamps the broker's time (Produce answers it,
// Fetch returns it) and before/after.max.ms refuse out-of-range records with INVALID_TIMESTAMP.
import assert from "node:assert/strict";
import { test } from "node:test";
import { gzipSync } from "node:zlib";
import { DescribeConfigsApi, ProduceApi } from "../../src/protocol/api/mod.ts";
import { compress } from "../../src/protocol/compression.ts";
import { BatchField, Compression, view } from "../../src/protocol/record_batch.ts";
import { Writer } from "../../src/util/bytes.ts";
import { crc32c } from "../../src/util/crc32c.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { recordingLogger } from "../helpers/faulty_platform.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { buildBatch, concatBytes, parseBatches, text, valueRecords } from "../helpers/record_batch.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { createTopic, fetchOnce, listOffset, WireClient } from "../helpers/wire.ts";
import { pseudoRandomBytes } from "../helpers/random.ts";

const INT64_MAX = (1n << 63n) - 1n;

interface PartitionAnswer {
  errorCode: number;
  errorMessage: string | null;
  baseOffset: bigint;
  logAppendTimeMs: bigint;
  recordErrors: { batchIndex: number; batchIndexErrorMessage: string | null }[];
}

/** Produce v9 (flexible, with recordErrors), acks=1. */
async function produce9(c: WireClient, topic: string, records: Uint8Array): Promise<PartitionAnswer> {
  const res = await c.request(ProduceApi, 9, {
    transactionalId: null,
    acks: 1,
    timeoutMs: 10_000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
  }, 30_000);
  return (res.responses as { partitionResponses: PartitionAnswer[] }[])[0].partitionResponses[0];
}

function resign(b: Uint8Array): Uint8Array {
  view(b).setInt32(BatchField.batchLength, b.length - 12);
  view(b).setUint32(BatchField.crc, crc32c(b, BatchField.attributes, b.length));
  return b;
}

/** A batch (valid CRC) whose records section is `body`, under codec, declaring count records. */
function batchAround(body: Uint8Array, count: number, codec = 0, lastOffsetDelta = count - 1): Uint8Array {
  const b = concatBytes(buildBatch([{ value: "x" }]).subarray(0, 61), body);
  view(b).setInt16(BatchField.attributes, codec);
  view(b).setInt32(BatchField.lastOffsetDelta, lastOffsetDelta);
  view(b).setInt32(BatchField.recordCount, count);
  return resign(b);
}

/** One record: length (given or true), then the fields written by `fields`. */
function record(fields: (w: Writer) => void, length?: number): Uint8Array {
  const body = new Writer(64);
  fields(body);
  const b = body.finish().slice();
  return new Writer(b.length + 5).varint(length ?? b.length).bytes(b).finish().slice();
}

/** The malformed record sets of issue 11's defect 3, with the code each must get. */
function badSets(): [string, Uint8Array, number][] {
  const valueFields = (w: Writer) => w.int8(0).varlong(0n).varint(0).varint(-1).varint(1).int8(0x76);
  const garbageRecords = new Uint8Array(64).fill(0xff);
  const codecs: [string, number][] = [["gzip", Compression.gzip], ["snappy", Compression.snappy], ["lz4", Compression.lz4], ["zstd", Compression.zstd]];
  // 11 gzip members of 100 MiB of zeros: 1.1 GiB decompressed, about 1 MB on the wire.
  const member = gzipSync(new Uint8Array(100 << 20));
  const bomb = batchAround(concatBytes(...new Array(11).fill(member)), 1, Compression.gzip);
  const v = valueRecords(2, "txn");
  return [
    ["garbage records", batchAround(pseudoRandomBytes(7, 90), 3), ErrorCode.INVALID_RECORD],
    ["record length varint 2^31-1", batchAround(record((w) => void valueFields(w).varint(0), 0x7fffffff), 1), ErrorCode.INVALID_RECORD],
    ["header count 1000 with one record", batchAround(record((w) => void valueFields(w).varint(1000).varint(1).int8(0x61).varint(-1)), 1), ErrorCode.INVALID_RECORD],
    ["lastOffsetDelta 2^31-2", batchAround(record((w) => void valueFields(w).varint(0)), 0x7fffffff, 0, 0x7ffffffe), ErrorCode.INVALID_RECORD],
    ...codecs.map(([name, codec]): [string, Uint8Array, number] => [`garbage records inside ${name}`, batchAround(compress(codec, garbageRecords), 2, codec), ErrorCode.INVALID_RECORD]),
    ...codecs.map(([name, codec]): [string, Uint8Array, number] => [`${name} bytes that do not decode`, batchAround(pseudoRandomBytes(codec * 31, 120), 2, codec), ErrorCode.CORRUPT_MESSAGE]),
    ["a 1 GiB gzip bomb", bomb, ErrorCode.MESSAGE_TOO_LARGE],
    ["transactional bit without a producer id", buildBatch(v, { attributes: 0x10 }), ErrorCode.INVALID_RECORD],
    ["control bit without a producer id", buildBatch(v, { attributes: 0x20 }), ErrorCode.INVALID_RECORD],
    // A transactional batch with a producer id is valid as bytes: whether its transaction added the
    // partition is the coordinator's verification (KIP-890, the Produce path), tested there.
  ];
}

/** Starts a broker that records error-level log lines; fn runs, then the lines must be none. */
async function withBroker(overrides: Record<string, string>, fn: (b: TestBroker, c: WireClient) => Promise<void>): Promise<void> {
  const logger = recordingLogger();
  const b = await startBroker(overrides, undefined, logger);
  const c = await WireClient.connect(b.port);
  try {
    await fn(b, c);
    const errors = logger.lines.filter((l) => l.level === "error").map((l) => `${l.msg} ${JSON.stringify(l.fields)}`);
    assert.deepEqual(errors, [], "no error-level log line");
  } finally {
    c.close();
    await b.stop();
  }
}

async function logEnd(c: WireClient, topic: string): Promise<bigint> {
  const r = await listOffset(c, topic, 0, -1n);
  assert.equal(r.errorCode, 0);
  return r.offset;
}

test("produce validation: every malformed record set of defect 3 gets its code, nothing is appended, and consumers read past all that was acknowledged", async () => {
  // The bomb is about 1 MB on the wire: message.max.bytes must let it reach the validator.
  await withBroker({ "message.max.bytes": "4000000" }, async (b, c) => {
    assert.equal((await createTopic(c, "v")).errorCode, 0);
    assert.equal((await produce9(c, "v", buildBatch(valueRecords(3, "before-")))).errorCode, 0);
    for (const [what, set, code] of badSets()) {
      const r = await produce9(c, "v", set);
      assert.equal(r.errorCode, code, `${what}: ${r.errorCode} ${r.errorMessage}`);
      assert.equal(r.baseOffset, -1n, what);
      assert.ok(r.errorMessage !== null && r.errorMessage.length > 0, `${what}: an error message`);
      assert.equal(await logEnd(c, "v"), 3n, `${what}: nothing appended`);
    }
    // The partition still takes good produces, uncompressed and compressed.
    assert.equal((await produce9(c, "v", buildBatch(valueRecords(2, "after-")))).baseOffset, 3n);
    const fetched = await fetchOnce(c, "v", 0, 0n);
    const values = parseBatches(fetched.records!).flatMap((batch) => batch.records.map((r) => text(r.value)));
    assert.deepEqual(values, ["before-0", "before-1", "before-2", "after-0", "after-1"]);
    if (skipUnless("kcat") === false) {
      const k = await run("kcat", ["-b", b.bootstrap, "-C", "-t", "v", "-p", "0", "-o", "beginning", "-e", "-q"], { timeoutMs: 60_000 });
      assert.equal(k.code, 0, k.stderr);
      assert.deepEqual(k.stdout.toString().trim().split("\n"), values, "kcat reads every acknowledged record and reaches the end");
    }
  });
});

test("produce validation: keyless records on a compacted topic are INVALID_RECORD with recordErrors; keyed ones are appended", async () => {
  await withBroker({}, async (_b, c) => {
    assert.equal((await createTopic(c, "compacted", { configs: { "cleanup.policy": "compact" } })).errorCode, 0);
    const r = await produce9(c, "compacted", buildBatch([{ key: "a", value: "1" }, { key: null, value: "2" }, { key: "c", value: "3" }]));
    assert.equal(r.errorCode, ErrorCode.INVALID_RECORD);
    assert.deepEqual(r.recordErrors.map((e) => e.batchIndex), [1]);
    assert.match(r.recordErrors[0].batchIndexErrorMessage ?? "", /Compacted topic cannot accept message without key in topic partition compacted-0/);
    assert.match(r.errorMessage ?? "", /One or more records have been rejected/);
    assert.equal(await logEnd(c, "compacted"), 0n);
    assert.equal((await produce9(c, "compacted", buildBatch([{ key: "a", value: "1" }, { key: "b", value: null }]))).baseOffset, 0n);
  });
});

test("produce validation: message.timestamp.type=LogAppendTime stamps the broker's time, answered in logAppendTimeMs and returned by Fetch", async () => {
  await withBroker({}, async (b, c) => {
    assert.equal((await createTopic(c, "lat", { configs: { "message.timestamp.type": "LogAppendTime" } })).errorCode, 0);
    const before = BigInt(Date.now());
    // The producer's own timestamps are 2^63-1: with LogAppendTime they do not matter.
    const r = await produce9(c, "lat", buildBatch(valueRecords(2, "lat-"), { baseTimestamp: INT64_MAX }));
    const after = BigInt(Date.now());
    assert.equal(r.errorCode, 0, r.errorMessage ?? "");
    assert.ok(r.logAppendTimeMs >= before && r.logAppendTimeMs <= after, `logAppendTimeMs ${r.logAppendTimeMs} in [${before}, ${after}]`);
    const f = await fetchOnce(c, "lat", 0, 0n);
    const dv = view(f.records!);
    assert.equal(dv.getInt16(BatchField.attributes) & 0x08, 0x08, "timestamp type bit: LogAppendTime");
    assert.equal(dv.getBigInt64(BatchField.maxTimestamp), r.logAppendTimeMs);
    // A CreateTime topic answers -1, as Kafka does.
    assert.equal((await createTopic(c, "ct")).errorCode, 0);
    assert.equal((await produce9(c, "ct", buildBatch(valueRecords(1)))).logAppendTimeMs, -1n);
    // A client's LogAppendTime bit on a LogAppendTime topic is INVALID_TIMESTAMP.
    const bit = await produce9(c, "lat", buildBatch(valueRecords(1), { attributes: 0x08 }));
    assert.equal(bit.errorCode, ErrorCode.INVALID_TIMESTAMP);
    if (skipUnless("kcat") === false) {
      const k = await run("kcat", ["-b", b.bootstrap, "-C", "-t", "lat", "-p", "0", "-o", "beginning", "-e", "-q", "-f", "%T %s\\n"], { timeoutMs: 60_000 });
      assert.equal(k.code, 0, k.stderr);
      assert.deepEqual(k.stdout.toString().trim().split("\n"), [`${r.logAppendTimeMs} lat-0`, `${r.logAppendTimeMs} lat-1`], "kcat sees the broker's time");
    }
  });
});

test("produce validation: CreateTime records outside message.timestamp.before/after.max.ms are INVALID_TIMESTAMP (also via the legacy difference.max.ms and the broker default)", async () => {
  await withBroker({ "log.message.timestamp.after.max.ms": "3600000" }, async (_b, c) => {
    assert.equal((await createTopic(c, "bounded", { configs: { "message.timestamp.before.max.ms": "60000", "message.timestamp.after.max.ms": "60000" } })).errorCode, 0);
    assert.equal((await createTopic(c, "legacy", { configs: { "message.timestamp.difference.max.ms": "60000" } })).errorCode, 0);
    assert.equal((await createTopic(c, "defaults")).errorCode, 0);
    const now = BigInt(Date.now());
    const hour = 3_600_000n;
    for (const topic of ["bounded", "legacy"]) {
      const old = await produce9(c, topic, buildBatch([{ value: "ok" }, { value: "old", timestampDelta: -Number(hour) }], { baseTimestamp: now }));
      assert.equal(old.errorCode, ErrorCode.INVALID_TIMESTAMP, `${topic}: ${old.errorMessage}`);
      assert.deepEqual(old.recordErrors.map((e) => e.batchIndex), [1]);
      assert.match(old.recordErrors[0].batchIndexErrorMessage ?? "", /is out of range/);
      // (For "legacy" after.max.ms is the broker's 1 h, set in server.properties: difference.max.ms
      // stands in only for a bound left at Long.MAX_VALUE, as in Kafka.)
      const ahead = await produce9(c, topic, buildBatch([{ value: "ahead" }], { baseTimestamp: now + 2n * hour }));
      assert.equal(ahead.errorCode, ErrorCode.INVALID_TIMESTAMP, topic);
      const top = await produce9(c, topic, buildBatch([{ value: "2^63-1" }], { baseTimestamp: INT64_MAX }));
      assert.equal(top.errorCode, ErrorCode.INVALID_TIMESTAMP, `${topic}: 2^63-1`);
      assert.equal(await logEnd(c, topic), 0n);
      assert.equal((await produce9(c, topic, buildBatch([{ value: "now" }], { baseTimestamp: now }))).baseOffset, 0n, `${topic}: a timestamp within bounds`);
    }
    // The broker default (log.message.timestamp.after.max.ms=1h) covers a topic without overrides.
    const far = await produce9(c, "defaults", buildBatch([{ value: "far" }], { baseTimestamp: now + 2n * hour }));
    assert.equal(far.errorCode, ErrorCode.INVALID_TIMESTAMP);
    assert.equal((await produce9(c, "defaults", buildBatch([{ value: "old" }], { baseTimestamp: now - 1000n * hour }))).errorCode, 0, "before.max.ms unbounded");
    // DescribeConfigs shows the keys with their sources.
    const res = await c.request(DescribeConfigsApi, 4, {
      resources: [{ resourceType: 2, resourceName: "defaults", configurationKeys: null }],
      includeSynonyms: true,
      includeDocumentation: false,
    });
    const configs = new Map((res.results as { configs: { name: string; value: string | null; configSource: number }[] }[])[0].configs.map((e) => [e.name, e]));
    assert.equal(configs.get("message.timestamp.after.max.ms")?.value, "3600000");
    assert.equal(configs.get("message.timestamp.after.max.ms")?.configSource, 4, "STATIC_BROKER_CONFIG");
    assert.equal(configs.get("message.timestamp.before.max.ms")?.value, "9223372036854775807");
    assert.equal(configs.get("message.timestamp.difference.max.ms")?.value, "9223372036854775807");
    assert.equal(configs.get("message.timestamp.type")?.value, "CreateTime");
  });
});
