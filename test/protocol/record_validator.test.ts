// The produce path's full record validation (src/protocol/record_validator.ts): every record of
// every batch walked as bytes, compressed ones in a bounded buffer, with Kafka's error codes.
// Batches come from the tests' own builder (test/helpers/record_batch.ts) or are put together
// here byte by byte when they must be malformed in a way the builder cannot express.
import assert from "node:assert/strict";
import { test } from "node:test";
import { gzipSync } from "node:zlib";
import { compress } from "../../src/protocol/compression.ts";
import { BatchField, batchCrcValid, Compression, view } from "../../src/protocol/record_batch.ts";
import { defaultRecordRules, type RecordRules, validateBatches } from "../../src/protocol/record_validator.ts";
import { Writer } from "../../src/util/bytes.ts";
import { crc32c } from "../../src/util/crc32c.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { BASE_TIMESTAMP, buildBatch, concatBytes, type TestRecord, valueRecords } from "../helpers/record_batch.ts";
import { pseudoRandomBytes } from "../helpers/random.ts";

const MAX = 1 << 30;
const NOW = 1_800_000_000_000;
const INT64_MAX = (1n << 63n) - 1n;
const rules = (r: Partial<RecordRules> = {}): RecordRules => ({ ...defaultRecordRules, topicPartition: "t-0", nowMs: NOW, ...r });

/** Re-signs a batch after the test edited bytes inside the CRC's range. */
function resign(b: Uint8Array): Uint8Array {
  view(b).setUint32(BatchField.crc, crc32c(b, BatchField.attributes, b.length));
  return b;
}

/** A batch whose records section is `raw` (compressed with codec), declaring `count` records. */
function withRecords(raw: Uint8Array, count: number, codec = 0, lastOffsetDelta = count - 1): Uint8Array {
  const header = buildBatch([{ value: "x" }]).subarray(0, 61);
  const body = codec === 0 ? raw : compress(codec, raw);
  const out = concatBytes(header, body);
  const dv = view(out);
  dv.setInt32(BatchField.batchLength, out.length - 12);
  dv.setInt16(BatchField.attributes, codec);
  dv.setInt32(BatchField.lastOffsetDelta, lastOffsetDelta);
  dv.setInt32(BatchField.recordCount, count);
  return resign(out);
}

/** The records section of a builder batch (uncompressed). */
const recordsOf = (b: Uint8Array) => b.slice(61);

/** The same batch with its records compressed with codec. */
function compressed(records: TestRecord[], codec: number, opts = {}): Uint8Array {
  const plain = buildBatch(records, opts);
  const out = concatBytes(plain.subarray(0, 61), compress(codec, recordsOf(plain)));
  view(out).setInt32(BatchField.batchLength, out.length - 12);
  view(out).setInt16(BatchField.attributes, codec);
  return resign(out);
}

/** One record's bytes: body fields as given, prefixed by their length (or `length`). */
function record(fields: (w: Writer) => void, length?: number): Uint8Array {
  const body = new Writer(64);
  fields(body);
  const b = body.finish().slice();
  const w = new Writer(b.length + 5);
  w.varint(length ?? b.length).bytes(b);
  return w.finish().slice();
}

/** attributes 0, timestampDelta 0, offsetDelta i, null key, value "v", no headers. */
const plainFields = (i: number) => (w: Writer) => void w.int8(0).varlong(0n).varint(i).varint(-1).varint(1).int8(0x76).varint(0);

test("record validator: good batches pass, uncompressed and in every codec, with keys, nulls and headers", () => {
  const records: TestRecord[] = [
    { key: "k", value: "v", headers: [["h", "x"], ["n", null]] },
    { key: null, value: null },
    { key: "", value: "", timestampDelta: 7 },
  ];
  for (const codec of [Compression.none, Compression.gzip, Compression.snappy, Compression.lz4, Compression.zstd]) {
    const b = codec === 0 ? buildBatch(records) : compressed(records, codec);
    const before = b.slice();
    const s = validateBatches(b, MAX, rules());
    assert.equal(s.errorCode, ErrorCode.NONE, `codec ${codec}: ${s.message}`);
    assert.equal(s.recordCount, 3);
    assert.equal(s.maxTimestamp, BASE_TIMESTAMP + 7n);
    assert.equal(s.logAppendTimeMs, -1);
    assert.deepEqual(s.recordErrors, []);
    assert.deepEqual(b, before, `codec ${codec}: a truthful CreateTime batch is left as sent`);
  }
});

test("record validator: garbage records are INVALID_RECORD, however many seeds", () => {
  for (let seed = 1; seed <= 200; seed++) {
    const raw = pseudoRandomBytes(seed, 1 + (seed * 7) % 120);
    const s = validateBatches(withRecords(raw, 1 + (seed % 5)), MAX, rules());
    // Random bytes can happen to be a valid record; anything else is INVALID_RECORD, never a throw.
    assert.ok([ErrorCode.NONE, ErrorCode.INVALID_RECORD].includes(s.errorCode as 0), `seed ${seed}: ${s.errorCode} ${s.message}`);
  }
  const zeros = validateBatches(withRecords(new Uint8Array(40), 1), MAX, rules());
  assert.equal(zeros.errorCode, ErrorCode.INVALID_RECORD, zeros.message);
});

test("record validator: a record length varint of 2^31-1 (and negative, and past the batch) is INVALID_RECORD", () => {
  for (const length of [0x7fffffff, -1, -0x80000000, 100]) {
    const s = validateBatches(withRecords(record(plainFields(0), length), 1), MAX, rules());
    assert.equal(s.errorCode, ErrorCode.INVALID_RECORD, `length ${length}: ${s.message}`);
    assert.match(s.message, /record size/);
  }
  // One byte short of the fields, and one byte more than them.
  const exact = record(plainFields(0));
  const fieldBytes = exact.length - 1;
  for (const length of [fieldBytes - 1, fieldBytes + 1]) {
    const raw = record(plainFields(0), length);
    const padded = length > fieldBytes ? concatBytes(raw, new Uint8Array([0])) : raw;
    assert.equal(validateBatches(withRecords(padded, 1), MAX, rules()).errorCode, ErrorCode.INVALID_RECORD, `length ${length}`);
  }
  assert.equal(validateBatches(withRecords(exact, 1), MAX, rules()).errorCode, ErrorCode.NONE);
});

test("record validator: a header count of 1000 in a one-record batch (and bad header lengths) is INVALID_RECORD", () => {
  const fields = (headers: (w: Writer) => void) => (w: Writer) => {
    w.int8(0).varlong(0n).varint(0).varint(-1).varint(1).int8(0x76);
    headers(w);
  };
  const cases: [string, (w: Writer) => void][] = [
    ["count 1000", (w) => void w.varint(1000).varint(1).int8(0x61).varint(-1)],
    ["count -1", (w) => void w.varint(-1)],
    ["negative key length", (w) => void w.varint(1).varint(-1).varint(-1)],
    ["key past the record", (w) => void w.varint(1).varint(50).int8(0x61)],
    ["value length -2", (w) => void w.varint(1).varint(1).int8(0x61).varint(-2)],
    ["count 2, one header", (w) => void w.varint(2).varint(1).int8(0x61).varint(-1)],
  ];
  for (const [what, headers] of cases) {
    const s = validateBatches(withRecords(record(fields(headers)), 1), MAX, rules());
    assert.equal(s.errorCode, ErrorCode.INVALID_RECORD, `${what}: ${s.message}`);
  }
  const good = validateBatches(withRecords(record(fields((w) => void w.varint(1).varint(1).int8(0x61).varint(-1))), 1), MAX, rules());
  assert.equal(good.errorCode, ErrorCode.NONE, good.message);
});

test("record validator: lastOffsetDelta 2^31-2 never takes 2^31 offsets: the records are not there", () => {
  // Header consistent (count = lastOffsetDelta + 1) but one record present.
  const one = record(plainFields(0));
  const s = validateBatches(withRecords(one, 0x7fffffff, 0, 0x7ffffffe), MAX, rules());
  assert.equal(s.errorCode, ErrorCode.INVALID_RECORD);
  assert.match(s.message, /declares 2147483647 records but holds 1/);
  // Header inconsistent: one record claiming 2^31-1 offsets.
  assert.equal(validateBatches(withRecords(one, 1, 0, 0x7ffffffe), MAX, rules()).errorCode, ErrorCode.INVALID_RECORD);
  // More records than declared: trailing bytes.
  const two = concatBytes(one, record(plainFields(1)));
  const t = validateBatches(withRecords(two, 1), MAX, rules());
  assert.equal(t.errorCode, ErrorCode.INVALID_RECORD);
  assert.match(t.message, /still remaining/);
  assert.equal(validateBatches(withRecords(two, 2), MAX, rules()).errorCode, ErrorCode.NONE);
});

test("record validator: offset deltas must be each record's index (recordErrors name the records)", () => {
  const raw = concatBytes(record(plainFields(0)), record(plainFields(5)), record(plainFields(2)));
  const s = validateBatches(withRecords(raw, 3), MAX, rules());
  assert.equal(s.errorCode, ErrorCode.INVALID_RECORD);
  assert.deepEqual(s.recordErrors.map((e) => e.batchIndex), [1]);
  assert.match(s.recordErrors[0].batchIndexErrorMessage, /offset delta 5/);
  assert.match(s.message, /1 record errors/);
});

test("record validator: varints longer than Kafka allows are INVALID_RECORD", () => {
  // offsetDelta as a 6-byte varint, and a timestamp delta as an 11-byte varlong.
  const longVarint = (w: Writer) => void w.int8(0).varlong(0n).bytes(new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x80, 0x00])).varint(-1).varint(-1).varint(0);
  assert.equal(validateBatches(withRecords(record(longVarint), 1), MAX, rules()).errorCode, ErrorCode.INVALID_RECORD);
  const longVarlong = (w: Writer) => void w.int8(0).bytes(new Uint8Array([...new Array(10).fill(0x80), 0x00])).varint(0).varint(-1).varint(-1).varint(0);
  assert.equal(validateBatches(withRecords(record(longVarlong), 1), MAX, rules()).errorCode, ErrorCode.INVALID_RECORD);
  // A 10-byte varlong is legal: a timestamp delta of -2^62 read in bigint.
  const big = (w: Writer) => void w.int8(0).varlong(-(1n << 62n)).varint(0).varint(-1).varint(-1).varint(0);
  const b = withRecords(record(big), 1);
  view(b).setBigInt64(BatchField.baseTimestamp, 1n << 62n);
  view(b).setBigInt64(BatchField.maxTimestamp, 0n);
  const s = validateBatches(resign(b), MAX, rules());
  assert.equal(s.errorCode, ErrorCode.NONE, s.message);
  assert.equal(s.maxTimestamp, 0n, "2^62 - 2^62");
});

test("record validator: garbage inside gzip, snappy, lz4 and zstd: CORRUPT_MESSAGE when it does not decode, INVALID_RECORD when the records do not parse", () => {
  for (const codec of [Compression.gzip, Compression.snappy, Compression.lz4, Compression.zstd]) {
    const good = compressed(valueRecords(5, "v", 50), codec);
    // Garbage in place of the compressed bytes.
    const garbage = concatBytes(good.subarray(0, 61), pseudoRandomBytes(codec, 200));
    view(garbage).setInt32(BatchField.batchLength, garbage.length - 12);
    const g = validateBatches(resign(garbage), MAX, rules());
    assert.ok([ErrorCode.CORRUPT_MESSAGE, ErrorCode.INVALID_RECORD].includes(g.errorCode as 2), `codec ${codec}: ${g.errorCode} ${g.message}`);
    // The compressed stream cut short.
    const cut = good.slice(0, good.length - 8);
    view(cut).setInt32(BatchField.batchLength, cut.length - 12);
    const c = validateBatches(resign(cut), MAX, rules());
    assert.ok([ErrorCode.CORRUPT_MESSAGE, ErrorCode.INVALID_RECORD].includes(c.errorCode as 2), `codec ${codec} cut: ${c.errorCode} ${c.message}`);
    // Well-compressed garbage records.
    const s = validateBatches(withRecords(new Uint8Array(64).fill(0xff), 2, codec), MAX, rules());
    assert.equal(s.errorCode, ErrorCode.INVALID_RECORD, `codec ${codec}: ${s.message}`);
    // Compressed records that declare 3 but hold 5.
    const lying = withRecords(recordsOf(buildBatch(valueRecords(5))), 3, codec);
    assert.equal(validateBatches(lying, MAX, rules()).errorCode, ErrorCode.INVALID_RECORD, `codec ${codec} count`);
  }
});

test("record validator: a 1 GiB gzip bomb stops at the bound with MESSAGE_TOO_LARGE", () => {
  // 11 gzip members of 100 MiB of zeros each (~100 KB apiece): 1.1 GiB when decompressed whole.
  const member = gzipSync(new Uint8Array(100 << 20));
  const bomb = concatBytes(...new Array(11).fill(member));
  assert.ok(bomb.length < 2 << 20, `${bomb.length} compressed bytes`);
  const b = concatBytes(buildBatch([{ value: "x" }]).subarray(0, 61), bomb);
  view(b).setInt32(BatchField.batchLength, b.length - 12);
  view(b).setInt16(BatchField.attributes, Compression.gzip);
  resign(b);
  const rssBefore = process.memoryUsage().rss;
  const s = validateBatches(b, MAX, rules());
  const grown = process.memoryUsage().rss - rssBefore;
  assert.equal(s.errorCode, ErrorCode.MESSAGE_TOO_LARGE, s.message);
  assert.ok(grown < 512 << 20, `RSS grew ${grown >> 20} MiB: the output was not allocated whole`);
  // A lower bound (the rules carry it) stops sooner; the same bytes under it are refused too.
  assert.equal(validateBatches(b, MAX, rules({ decompressedBytesMax: 1 << 20 })).errorCode, ErrorCode.MESSAGE_TOO_LARGE);
});

test("record validator: control batches and transactional ones without a producer id are refused with Kafka's codes; idempotent and transactional ones pass", () => {
  const v = valueRecords(2);
  const cases: [string, Uint8Array, number][] = [
    ["control bit", buildBatch(v, { attributes: 0x20 }), ErrorCode.INVALID_RECORD],
    ["control bit with a producer id", buildBatch(v, { attributes: 0x30, producerId: 5n, producerEpoch: 0, baseSequence: 0 }), ErrorCode.INVALID_RECORD],
    ["transactional bit, no producer id", buildBatch(v, { attributes: 0x10 }), ErrorCode.INVALID_RECORD],
    ["transactional bit with a producer id (the transaction's partitions are the coordinator's to check)", buildBatch(v, { attributes: 0x10, producerId: 5n, producerEpoch: 0, baseSequence: 0 }), ErrorCode.NONE],
    ["producer id, sequence -1", buildBatch(v, { producerId: 5n, producerEpoch: 0, baseSequence: -1 }), ErrorCode.INVALID_RECORD],
  ];
  for (const [what, b, code] of cases) {
    const s = validateBatches(b, MAX, rules());
    assert.equal(s.errorCode, code, `${what}: ${s.message}`);
  }
  // What librdkafka (kcat) sends without idempotence: producer id -1, epoch -1, sequence -1.
  assert.equal(validateBatches(buildBatch(v, { producerId: -1n, producerEpoch: -1, baseSequence: -1 }), MAX, rules()).errorCode, ErrorCode.NONE);
  // An idempotent batch passes here: its sequence is the log's producer state's to check.
  assert.equal(validateBatches(buildBatch(v, { producerId: 5n, producerEpoch: 0, baseSequence: 0 }), MAX, rules()).errorCode, ErrorCode.NONE);
});

test("record validator: keyless records on a compacted topic are INVALID_RECORD with one recordError each", () => {
  const records: TestRecord[] = [{ key: "a", value: "1" }, { key: null, value: "2" }, { key: "c", value: null }, { value: "4" }];
  const s = validateBatches(buildBatch(records), MAX, rules({ compacted: true }));
  assert.equal(s.errorCode, ErrorCode.INVALID_RECORD);
  assert.deepEqual(s.recordErrors.map((e) => e.batchIndex), [1, 3]);
  assert.match(s.recordErrors[0].batchIndexErrorMessage, /Compacted topic cannot accept message without key in topic partition t-0/);
  assert.match(s.message, /2 record errors/);
  // Compressed the same; an empty key is a key; not compacted, keyless is fine.
  assert.deepEqual(validateBatches(compressed(records, Compression.lz4), MAX, rules({ compacted: true })).recordErrors.map((e) => e.batchIndex), [1, 3]);
  assert.equal(validateBatches(buildBatch([{ key: "", value: "x" }]), MAX, rules({ compacted: true })).errorCode, ErrorCode.NONE);
  assert.equal(validateBatches(buildBatch(records), MAX, rules()).errorCode, ErrorCode.NONE);
  // A million keyless records: refused with a bounded list.
  const many = buildBatch(Array.from({ length: 5_000 }, () => ({ value: null })));
  const m = validateBatches(many, MAX, rules({ compacted: true }));
  assert.equal(m.errorCode, ErrorCode.INVALID_RECORD);
  assert.equal(m.recordErrors.length, 1_000);
  assert.match(m.message, /5000 record errors/);
});

test("record validator: CreateTime timestamps outside before/after.max.ms are INVALID_TIMESTAMP per record", () => {
  const base = BigInt(NOW) - 10_000n;
  // Records at now-10s, now, now+10s, and -1 (no timestamp: never checked).
  const b = () => {
    const batch = buildBatch([{ value: "old" }, { value: "now", timestampDelta: 10_000 }, { value: "new", timestampDelta: 20_000 }], { baseTimestamp: base });
    return batch;
  };
  const s = validateBatches(b(), MAX, rules({ timestampBeforeMaxMs: 5_000, timestampAfterMaxMs: 5_000 }));
  assert.equal(s.errorCode, ErrorCode.INVALID_TIMESTAMP);
  assert.deepEqual(s.recordErrors.map((e) => e.batchIndex), [0, 2]);
  assert.match(s.recordErrors[0].batchIndexErrorMessage, new RegExp(`Timestamp ${NOW - 10_000} of message with offset 0 is out of range. The timestamp should be within \\[${NOW - 5_000}, ${NOW + 5_000}\\]`));
  assert.match(s.message, /invalid timestamp/);
  assert.deepEqual(validateBatches(b(), MAX, rules({ timestampBeforeMaxMs: 10_000, timestampAfterMaxMs: 10_000 })).recordErrors, [], "the bounds are inclusive");
  assert.deepEqual(validateBatches(b(), MAX, rules({ timestampBeforeMaxMs: 20_000, timestampAfterMaxMs: 0 })).recordErrors.map((e) => e.batchIndex), [2]);
  const noTs = buildBatch([{ value: "x" }], { baseTimestamp: -1n });
  assert.equal(validateBatches(noTs, MAX, rules({ timestampBeforeMaxMs: 0, timestampAfterMaxMs: 0 })).errorCode, ErrorCode.NONE, "-1 is NO_TIMESTAMP");
});

test("record validator: timestamps are int64: 2^63-1 passes the default bounds; a delta past int64 is INVALID_TIMESTAMP", () => {
  const top = buildBatch([{ value: "x" }], { baseTimestamp: INT64_MAX });
  const s = validateBatches(top, MAX, rules());
  assert.equal(s.errorCode, ErrorCode.NONE, s.message);
  assert.equal(s.maxTimestamp, INT64_MAX);
  assert.equal(view(top).getBigInt64(BatchField.maxTimestamp), INT64_MAX);
  // With an after.max.ms bound it is refused, in bigint arithmetic.
  const bounded = validateBatches(buildBatch([{ value: "x" }], { baseTimestamp: INT64_MAX }), MAX, rules({ timestampAfterMaxMs: 3_600_000 }));
  assert.equal(bounded.errorCode, ErrorCode.INVALID_TIMESTAMP);
  assert.match(bounded.recordErrors[0].batchIndexErrorMessage, /9223372036854775807/);
  // Base 2^63-1 plus a delta of 5 leaves int64.
  const over = buildBatch([{ value: "x" }, { value: "y", timestampDelta: 5 }], { baseTimestamp: INT64_MAX - 1n });
  const o = validateBatches(over, MAX, rules());
  assert.equal(o.errorCode, ErrorCode.INVALID_TIMESTAMP);
  assert.deepEqual(o.recordErrors.map((e) => e.batchIndex), [1]);
  // Timestamps just past 2^53 are compared exactly.
  const past53 = buildBatch([{ value: "x", timestampDelta: 1 }], { baseTimestamp: 2n ** 53n });
  assert.equal(validateBatches(past53, MAX, rules()).maxTimestamp, 2n ** 53n + 1n);
});

test("record validator: CreateTime makes a wrong maxTimestamp truthful and re-signs the batch", () => {
  const b = buildBatch([{ value: "a", timestampDelta: 3 }, { value: "b", timestampDelta: 9 }]);
  view(b).setBigInt64(BatchField.maxTimestamp, INT64_MAX);
  resign(b);
  const s = validateBatches(b, MAX, rules());
  assert.equal(s.errorCode, ErrorCode.NONE, s.message);
  assert.equal(view(b).getBigInt64(BatchField.maxTimestamp), BASE_TIMESTAMP + 9n);
  assert.equal(s.maxTimestamp, BASE_TIMESTAMP + 9n);
  assert.ok(batchCrcValid(b, 0, b.length));
});

test("record validator: LogAppendTime stamps maxTimestamp and the timestamp type bit with the broker's clock", () => {
  for (const codec of [Compression.none, Compression.gzip]) {
    const b = codec === 0 ? buildBatch(valueRecords(3)) : compressed(valueRecords(3), codec);
    const records = b.slice(61);
    const s = validateBatches(b, MAX, rules({ logAppendTime: true, timestampBeforeMaxMs: 0, timestampAfterMaxMs: 0 }));
    assert.equal(s.errorCode, ErrorCode.NONE, s.message);
    assert.equal(s.logAppendTimeMs, NOW);
    assert.equal(s.maxTimestamp, BigInt(NOW));
    assert.equal(view(b).getBigInt64(BatchField.maxTimestamp), BigInt(NOW));
    assert.equal(view(b).getInt16(BatchField.attributes), codec | 0x08);
    assert.equal(view(b).getBigInt64(BatchField.baseTimestamp), BASE_TIMESTAMP, "baseTimestamp kept, as Kafka keeps it");
    assert.deepEqual(b.slice(61), records, "the records are not rewritten");
    assert.ok(batchCrcValid(b, 0, b.length), `codec ${codec}: CRC recomputed`);
  }
  // A client may not set the LogAppendTime bit on a LogAppendTime topic.
  const lat = buildBatch(valueRecords(2), { attributes: 0x08 });
  const s = validateBatches(lat, MAX, rules({ logAppendTime: true }));
  assert.equal(s.errorCode, ErrorCode.INVALID_TIMESTAMP);
  assert.equal(s.recordErrors.length, 2);
  assert.match(s.recordErrors[0].batchIndexErrorMessage, /Producer should not set timestamp type to LogAppendTime/);
});

test("record validator: several batches are each walked; the first with record errors answers", () => {
  const set = concatBytes(buildBatch([{ key: "k", value: "v" }]), buildBatch([{ key: "k", value: "v" }, { value: "nokey" }]));
  const s = validateBatches(set, MAX, rules({ compacted: true }));
  assert.equal(s.errorCode, ErrorCode.INVALID_RECORD);
  assert.deepEqual(s.recordErrors.map((e) => e.batchIndex), [1], "the index within its batch, as Kafka counts");
  assert.match(s.message, /batch 1 of the set/);
  const ok = concatBytes(buildBatch(valueRecords(2)), buildBatch(valueRecords(3)));
  const t = validateBatches(ok, MAX, rules());
  assert.equal(t.errorCode, ErrorCode.NONE);
  assert.equal(t.recordCount, 5);
  const bad = concatBytes(buildBatch(valueRecords(2)), withRecords(new Uint8Array(10), 1));
  assert.equal(validateBatches(bad, MAX, rules()).errorCode, ErrorCode.INVALID_RECORD);
});
