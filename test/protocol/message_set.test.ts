// Legacy message sets (magic 0 and 1, Produce v0-2) up-converted into one record batch v2
// (src/protocol/message_set.ts), against sets built by hand (test/helpers/legacy_messages.ts)
// and read back with the tests' own v2 reader: records, timestamps, codec, CRC32C; and every kind
// of malformed set answered with Kafka's error code, never a throw.
import assert from "node:assert/strict";
import { test } from "node:test";
import { gzipSync } from "node:zlib";
import { compress } from "../../src/protocol/compression.ts";
import { recordSetMagic, upConvertMessageSet } from "../../src/protocol/message_set.ts";
import { Compression } from "../../src/protocol/record_batch.ts";
import { validateBatches } from "../../src/protocol/record_validator.ts";
import { crc32 } from "../../src/util/crc32.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { concat, type LegacyMessage, legacyMessage, readV2Batch, wrapper } from "../helpers/legacy_messages.ts";
import { buildBatch } from "../helpers/record_batch.ts";

const T0 = 1_700_000_000_000n;

function converted(set: Uint8Array) {
  const c = upConvertMessageSet(set);
  assert.equal(c.errorCode, ErrorCode.NONE, c.message);
  assert.ok(c.batch !== null);
  const summary = validateBatches(c.batch, 1 << 26);
  assert.equal(summary.errorCode, ErrorCode.NONE, `the batch passes the produce path's checks: ${summary.message}`);
  assert.equal(summary.recordCount, c.recordCount);
  return readV2Batch(c.batch);
}

function refused(set: Uint8Array, code: number, why: RegExp, maxDecompressedBytes?: number): void {
  const c = upConvertMessageSet(set, maxDecompressedBytes);
  assert.equal(c.errorCode, code, `expected error ${code}, got ${c.errorCode} (${c.message})`);
  assert.equal(c.batch, null);
  assert.match(c.message, why);
}

const pairs = (b: ReturnType<typeof readV2Batch>) => b.records.map((r) => [r.key, r.value]);

test("message set: magic 0, uncompressed, becomes one v2 batch with no timestamps", () => {
  const set = concat(
    legacyMessage({ magic: 0, value: "a" }),
    legacyMessage({ magic: 0, key: "k1", value: "b" }),
    legacyMessage({ magic: 0, key: "k2", value: null }),
    legacyMessage({ magic: 0, key: "", value: "" }),
  );
  assert.equal(recordSetMagic(set), 0);
  const b = converted(set);
  assert.equal(b.magic, 2);
  assert.equal(b.codec, Compression.none);
  assert.equal(b.recordCount, 4);
  assert.equal(b.lastOffsetDelta, 3);
  assert.equal(b.producerId, -1n);
  assert.deepEqual(pairs(b), [[null, "a"], ["k1", "b"], ["k2", null], ["", ""]]);
  assert.deepEqual(b.records.map((r) => r.offsetDelta), [0, 1, 2, 3]);
  // Magic 0 has no timestamps: Kafka's NO_TIMESTAMP (-1) throughout.
  assert.deepEqual(b.records.map((r) => r.timestamp), [-1n, -1n, -1n, -1n]);
  assert.equal(b.baseTimestamp, -1n);
  assert.equal(b.maxTimestamp, -1n);
  assert.ok(b.records.every((r) => r.headers === 0));
});

test("message set: magic 1, uncompressed, keeps each message's timestamp", () => {
  const set = concat(
    legacyMessage({ magic: 1, timestamp: T0 + 5n, key: "a", value: "1" }),
    legacyMessage({ magic: 1, timestamp: T0, key: "b", value: "2" }),
    legacyMessage({ magic: 1, timestamp: T0 + 9n, key: "c", value: "3" }),
  );
  assert.equal(recordSetMagic(set), 1);
  const b = converted(set);
  assert.deepEqual(pairs(b), [["a", "1"], ["b", "2"], ["c", "3"]]);
  assert.deepEqual(b.records.map((r) => r.timestamp), [T0 + 5n, T0, T0 + 9n]);
  assert.equal(b.baseTimestamp, T0 + 5n, "the first record's, as Kafka's builder");
  assert.equal(b.maxTimestamp, T0 + 9n);
});

const inner = (n: number, magic: 0 | 1): LegacyMessage[] =>
  Array.from({ length: n }, (_, i) => ({ magic, timestamp: T0 + BigInt(i), key: `key-${i}`, value: `value-${i}-${"x".repeat(i % 50)}` }));

test("message set: gzip, snappy and lz4 wrappers of magic 0 and 1 keep their codec", () => {
  for (const magic of [0, 1] as const) {
    for (const codec of [Compression.gzip, Compression.snappy, Compression.lz4]) {
      const messages = inner(500, magic);
      const b = converted(wrapper(magic, codec, messages));
      const at = `magic ${magic}, codec ${codec}`;
      assert.equal(b.codec, codec, `${at}: recompressed with the producer's codec`);
      assert.equal(b.recordCount, 500, at);
      assert.deepEqual(pairs(b), messages.map((m) => [m.key, m.value]), at);
      assert.deepEqual(b.records.map((r) => r.offsetDelta), messages.map((_, i) => i), at);
      const ts = magic === 1 ? messages.map((m) => m.timestamp) : messages.map(() => -1n);
      assert.deepEqual(b.records.map((r) => r.timestamp), ts, at);
    }
  }
});

test("message set: several wrappers and plain messages become one batch, in order", () => {
  const set = concat(
    wrapper(1, Compression.gzip, inner(3, 1)),
    legacyMessage({ magic: 1, timestamp: T0 + 100n, key: "plain", value: "p" }),
    wrapper(1, Compression.gzip, inner(2, 1)),
  );
  const b = converted(set);
  assert.equal(b.codec, Compression.gzip);
  assert.deepEqual(b.records.map((r) => r.key), ["key-0", "key-1", "key-2", "plain", "key-0", "key-1"]);
  assert.deepEqual(b.records.map((r) => r.offsetDelta), [0, 1, 2, 3, 4, 5]);
});

test("message set: a LogAppendTime wrapper's timestamp replaces its inner messages'", () => {
  const b = converted(wrapper(1, Compression.gzip, inner(3, 1), { timestamp: T0 + 777n, logAppendTime: true }));
  assert.deepEqual(b.records.map((r) => r.timestamp), [T0 + 777n, T0 + 777n, T0 + 777n]);
});

test("message set: a magic-0 lz4 wrapper with Kafka's old broken header checksum is read; magic 1 needs a correct one", () => {
  // wrapper() writes the broken checksum for magic 0, as Kafka 0.8-0.9 producers did.
  assert.equal(converted(wrapper(0, Compression.lz4, inner(10, 0))).recordCount, 10);
  const set = concat(...inner(10, 1).map((m, i) => legacyMessage({ ...m, offset: BigInt(i) })));
  const frame = compress(Compression.lz4, set);
  const broken = frame.slice();
  broken[6] ^= 0x5a;
  refused(wrapper(1, Compression.lz4, [], { payload: broken }), ErrorCode.CORRUPT_MESSAGE, /checksum/);
});

test("message set: sizes, CRC32 and lengths are checked", () => {
  const good = legacyMessage({ magic: 1, timestamp: T0, key: "k", value: "v" });
  const badCrc = good.slice();
  badCrc[badCrc.length - 1] ^= 1;
  refused(badCrc, ErrorCode.CORRUPT_MESSAGE, /CRC32/);
  refused(concat(good, good.subarray(0, 20)), ErrorCode.CORRUPT_MESSAGE, /trailing|fit/);
  refused(good.subarray(0, good.length - 1), ErrorCode.CORRUPT_MESSAGE, /fit/);
  refused(new Uint8Array(0), ErrorCode.CORRUPT_MESSAGE, /empty/);
  // A size below the smallest message, and one claiming more than is there.
  for (const size of [5, 21, 1 << 30, -1]) {
    const b = good.slice();
    new DataView(b.buffer).setInt32(8, size);
    refused(b, ErrorCode.CORRUPT_MESSAGE, /size/);
  }
  // Key and value lengths that disagree with the message size (CRC made right for them).
  const lying = legacyMessage({ magic: 0, key: "kk", value: "vv" });
  for (const [at, len] of [[18, 40], [18, -2], [24, 3], [24, 1]] as const) {
    const b = lying.slice();
    new DataView(b.buffer).setInt32(at, len);
    refused(reCrc(b), ErrorCode.CORRUPT_MESSAGE, /length|size/);
  }
});

/** Re-signs one legacy message after the test edited it (CRC32 of magic..end at byte 12). */
function reCrc(b: Uint8Array): Uint8Array {
  new DataView(b.buffer, b.byteOffset).setUint32(12, crc32(b, 16, b.length));
  return b;
}

test("message set: magic consistency, nesting, empty and null wrappers are INVALID_RECORD", () => {
  refused(concat(legacyMessage({ magic: 0, value: "a" }), legacyMessage({ magic: 1, value: "b" })), ErrorCode.INVALID_RECORD, /magic/);
  const mixedInner = compress(Compression.gzip, legacyMessage({ magic: 0, value: "a" }));
  refused(wrapper(1, Compression.gzip, [], { payload: mixedInner }), ErrorCode.INVALID_RECORD, /inner magic/);
  const nested = compress(Compression.gzip, wrapper(1, Compression.gzip, inner(2, 1)));
  refused(wrapper(1, Compression.gzip, [], { payload: nested }), ErrorCode.INVALID_RECORD, /inside a compressed/);
  refused(wrapper(1, Compression.gzip, []), ErrorCode.INVALID_RECORD, /no messages/);
  refused(wrapper(0, Compression.snappy, [], { payload: null }), ErrorCode.INVALID_RECORD, /null value/);
});

test("message set: zstd and unknown codecs in a legacy message are UNSUPPORTED_COMPRESSION_TYPE", () => {
  refused(wrapper(1, Compression.zstd, inner(2, 1)), ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, /codec 4/);
  refused(wrapper(1, 6, [], { payload: new Uint8Array(10) }), ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, /codec 6/);
});

test("message set: corrupt compressed payloads and bombs are refused", () => {
  refused(wrapper(1, Compression.gzip, [], { payload: new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]) }), ErrorCode.CORRUPT_MESSAGE, /gzip/);
  const bomb = gzipSync(new Uint8Array(8 << 20));
  refused(wrapper(1, Compression.gzip, [], { payload: bomb }), ErrorCode.MESSAGE_TOO_LARGE, /limit/, 1 << 20);
  // The bound covers all wrappers of a set together.
  const half = wrapper(1, Compression.gzip, inner(2000, 1));
  assert.equal(upConvertMessageSet(half, 1 << 20).errorCode, ErrorCode.NONE);
  refused(concat(half, half, half, half, half, half, half, half, half, half, half, half), ErrorCode.MESSAGE_TOO_LARGE, /limit/, 1 << 20);
});

test("message set: random damage never throws", () => {
  let seed = 42;
  const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const sets = [
    concat(...inner(20, 0).map((m) => legacyMessage(m))),
    wrapper(1, Compression.gzip, inner(50, 1)),
    wrapper(1, Compression.snappy, inner(50, 1)),
    wrapper(0, Compression.lz4, inner(50, 0)),
  ];
  for (const set of sets) {
    for (let i = 0; i < 500; i++) {
      const b = set.slice(0, Math.max(1, set.length - Math.floor(rnd() * 3) * Math.floor(rnd() * 40)));
      for (let k = Math.floor(rnd() * 3); k >= 0; k--) b[Math.floor(rnd() * b.length)] = Math.floor(rnd() * 256);
      const c = upConvertMessageSet(b, 1 << 20);
      if (c.errorCode === ErrorCode.NONE) assert.ok(c.batch !== null && validateBatches(c.batch, 1 << 26).errorCode === ErrorCode.NONE);
      else assert.equal(c.batch, null);
    }
  }
});

test("message set: recordSetMagic reads byte 16 of either format", () => {
  assert.equal(recordSetMagic(buildBatch([{ value: "v" }])), 2);
  assert.equal(recordSetMagic(legacyMessage({ magic: 0, value: "v" })), 0);
  assert.equal(recordSetMagic(new Uint8Array(16)), -1);
});
