// Record batch v2 checks on the produce path (validateBatches) and offset assignment
// (assignOffsets), against batches built by the tests' own builder (test/helpers/record_batch.ts).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  assignOffsets,
  BatchField,
  batchCrcValid,
  batchSizeAt,
  view,
} from "../../src/protocol/record_batch.ts";
import { validateBatches } from "../../src/protocol/record_validator.ts";
import { crc32c } from "../../src/util/crc32c.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { BASE_TIMESTAMP, buildBatch, concatBytes, parseBatches, text, valueRecords } from "../helpers/record_batch.ts";

const MAX = 1 << 20;

/** Re-signs a batch after the test edited bytes inside the CRC's range. */
function resign(b: Uint8Array, pos = 0): Uint8Array {
  const size = batchSizeAt(view(b), pos);
  view(b).setUint32(pos + BatchField.crc, crc32c(b, pos + BatchField.attributes, pos + size));
  return b;
}

test("crc32c: the Castagnoli check value and Kafka's empty input", () => {
  assert.equal(crc32c(new TextEncoder().encode("123456789")), 0xe3069283);
  assert.equal(crc32c(new Uint8Array(0)), 0);
  // Ranges: the same bytes inside a larger buffer give the same checksum.
  const inner = new TextEncoder().encode("123456789");
  const outer = concatBytes(new Uint8Array([1, 2, 3]), inner, new Uint8Array([4]));
  assert.equal(crc32c(outer, 3, 12), 0xe3069283);
});

test("record batch: the builder writes the layout the broker reads (field offsets, header size)", () => {
  const b = buildBatch([{ key: "k", value: "v", headers: [["h", "x"]] }], { baseOffset: 5n, partitionLeaderEpoch: 3 });
  const dv = view(b);
  assert.equal(dv.getBigInt64(BatchField.baseOffset), 5n);
  assert.equal(dv.getInt32(BatchField.batchLength), b.length - 12);
  assert.equal(dv.getInt32(BatchField.partitionLeaderEpoch), 3);
  assert.equal(dv.getInt8(BatchField.magic), 2);
  assert.equal(dv.getInt32(BatchField.recordCount), 1);
  assert.equal(dv.getBigInt64(BatchField.baseTimestamp), BASE_TIMESTAMP);
  assert.ok(batchCrcValid(b, 0, b.length));
  const [parsed] = parseBatches(b);
  assert.equal(text(parsed.records[0].key), "k");
  assert.equal(text(parsed.records[0].value), "v");
});

test("validateBatches: a good batch is accepted with its counts", () => {
  const b = buildBatch(valueRecords(5), { baseTimestamp: 1000n });
  const s = validateBatches(b, MAX);
  assert.equal(s.errorCode, ErrorCode.NONE, s.message);
  assert.equal(s.batchCount, 1);
  assert.equal(s.offsetCount, 5);
  assert.equal(s.recordCount, 5);
  assert.equal(s.maxTimestamp, 1000n);
  // Null keys and values, headers, one record: still a good batch.
  const odd = buildBatch([{ key: null, value: null, headers: [["a", null], ["b", "c"]] }]);
  assert.equal(validateBatches(odd, MAX).errorCode, ErrorCode.NONE);
});

test("validateBatches: several batches in one record set are all checked and counted", () => {
  const set = concatBytes(
    buildBatch(valueRecords(2), { baseTimestamp: 10n }),
    buildBatch(valueRecords(3), { baseTimestamp: 30n }),
    buildBatch(valueRecords(1), { baseTimestamp: 20n }),
  );
  const s = validateBatches(set, MAX);
  assert.equal(s.errorCode, ErrorCode.NONE, s.message);
  assert.equal(s.batchCount, 3);
  assert.equal(s.offsetCount, 6);
  assert.equal(s.recordCount, 6);
  assert.equal(s.maxTimestamp, 30n);
});

test("validateBatches: a CRC mismatch anywhere in the set is CORRUPT_MESSAGE", () => {
  const bad = buildBatch(valueRecords(3));
  bad[bad.length - 2] ^= 0x40;
  assert.equal(validateBatches(bad, MAX).errorCode, ErrorCode.CORRUPT_MESSAGE);
  assert.match(validateBatches(bad, MAX).message, /CRC/);
  // A flipped bit in the attributes is inside the CRC's range too.
  const attrs = buildBatch(valueRecords(1));
  attrs[BatchField.attributes + 1] ^= 0x08;
  assert.equal(validateBatches(attrs, MAX).errorCode, ErrorCode.CORRUPT_MESSAGE);
  // The second of two batches is bad: the whole set is refused.
  assert.equal(validateBatches(concatBytes(buildBatch(valueRecords(1)), bad), MAX).errorCode, ErrorCode.CORRUPT_MESSAGE);
  // The base offset and leader epoch lie outside the CRC: changing them is not corruption.
  const patched = buildBatch(valueRecords(1));
  view(patched).setBigInt64(BatchField.baseOffset, 77n);
  view(patched).setInt32(BatchField.partitionLeaderEpoch, 9);
  assert.equal(validateBatches(patched, MAX).errorCode, ErrorCode.NONE);
});

test("validateBatches: truncated sets are CORRUPT_MESSAGE", () => {
  const b = buildBatch(valueRecords(3));
  for (const n of [1, 11, 12, 60, 61, b.length - 1]) {
    assert.equal(validateBatches(b.subarray(0, n), MAX).errorCode, ErrorCode.CORRUPT_MESSAGE, `first ${n} bytes`);
  }
  // A whole batch followed by part of another.
  assert.equal(validateBatches(concatBytes(b, b.subarray(0, 30)), MAX).errorCode, ErrorCode.CORRUPT_MESSAGE);
  assert.equal(validateBatches(concatBytes(b, b.subarray(0, 70)), MAX).errorCode, ErrorCode.CORRUPT_MESSAGE);
  assert.equal(validateBatches(new Uint8Array(0), MAX).errorCode, ErrorCode.CORRUPT_MESSAGE);
  // A batch length that is negative, too small for a header, or past the end.
  for (const len of [-1, -0x80000000, 0, 48, b.length, 0x7fffffff]) {
    const c = b.slice();
    view(c).setInt32(BatchField.batchLength, len);
    assert.equal(validateBatches(c, MAX).errorCode, ErrorCode.CORRUPT_MESSAGE, `batchLength ${len}`);
  }
});

test("validateBatches: a magic other than 2 is refused", () => {
  for (const magic of [0, 1]) {
    const s = validateBatches(buildBatch(valueRecords(2), { magic }), MAX);
    assert.equal(s.errorCode, ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT, `magic ${magic}`);
  }
  for (const magic of [3, -1, 127]) {
    assert.equal(validateBatches(buildBatch(valueRecords(2), { magic }), MAX).errorCode, ErrorCode.CORRUPT_MESSAGE, `magic ${magic}`);
  }
});

test("validateBatches: record count disagreeing with last offset delta is INVALID_RECORD", () => {
  const cases: [number, number][] = [[5, 3], [2, 2], [0, -1], [-1, -2], [3, -1]];
  for (const [recordCount, lastOffsetDelta] of cases) {
    const s = validateBatches(buildBatch(valueRecords(3), { recordCount, lastOffsetDelta }), MAX);
    assert.equal(s.errorCode, ErrorCode.INVALID_RECORD, `count ${recordCount}, delta ${lastOffsetDelta}`);
  }
});

test("validateBatches: a batch larger than the limit is MESSAGE_TOO_LARGE; at the limit it passes", () => {
  const b = buildBatch(valueRecords(1, "v", 500));
  assert.equal(validateBatches(b, b.length).errorCode, ErrorCode.NONE);
  const s = validateBatches(b, b.length - 1);
  assert.equal(s.errorCode, ErrorCode.MESSAGE_TOO_LARGE);
  assert.match(s.message, new RegExp(String(b.length)));
  // The limit is per batch, not per set.
  const small = buildBatch(valueRecords(1, "v", 100));
  assert.equal(validateBatches(concatBytes(small, small, small), small.length).errorCode, ErrorCode.NONE);
});

test("validateBatches: compression codec 7 (and 5, 6) is UNSUPPORTED_COMPRESSION_TYPE; 1-4 over plain records do not decode", () => {
  for (const codec of [5, 6, 7]) {
    assert.equal(validateBatches(buildBatch(valueRecords(1), { attributes: codec }), MAX).errorCode, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, `codec ${codec}`);
  }
  assert.equal(validateBatches(buildBatch(valueRecords(1), { attributes: 0 }), MAX).errorCode, ErrorCode.NONE);
  for (const codec of [1, 2, 3, 4]) {
    // Every record is walked, so uncompressed bytes under a codec flag are refused.
    assert.equal(validateBatches(buildBatch(valueRecords(1), { attributes: codec }), MAX).errorCode, ErrorCode.CORRUPT_MESSAGE, `codec ${codec}`);
  }
});

test("assignOffsets: base offsets and leader epochs are patched batch by batch; CRCs stay valid", () => {
  const set = concatBytes(buildBatch(valueRecords(2)), buildBatch(valueRecords(1)), buildBatch(valueRecords(4)));
  const before = set.slice();
  const next = assignOffsets(set, 1000, 12);
  assert.equal(next, 1007);
  const batches = parseBatches(set);
  assert.deepEqual(batches.map((b) => b.baseOffset), [1000n, 1002n, 1003n]);
  assert.deepEqual(batches.map((b) => b.partitionLeaderEpoch), [12, 12, 12]);
  assert.ok(batches.every((b) => b.crcValid));
  assert.deepEqual(batches.flatMap((b) => b.records.map((r) => r.offset)), [1000n, 1001n, 1002n, 1003n, 1004n, 1005n, 1006n]);
  assert.equal(validateBatches(set, MAX).errorCode, ErrorCode.NONE);
  // Only the patched fields changed.
  let pos = 0;
  for (const b of batches) {
    for (let i = 0; i < b.sizeBytes; i++) {
      const patched = i < 8 || (i >= BatchField.partitionLeaderEpoch && i < BatchField.magic);
      if (!patched) assert.equal(set[pos + i], before[pos + i], `byte ${i} of batch at ${pos}`);
    }
    assert.ok(batchCrcValid(set, pos, b.sizeBytes));
    pos += b.sizeBytes;
  }
  // Offsets past 2^32 are written as 64-bit values.
  const one = buildBatch(valueRecords(1));
  assert.equal(assignOffsets(one, 2 ** 40, 0), 2 ** 40 + 1);
  assert.equal(parseBatches(one)[0].baseOffset, 2n ** 40n);
});

test("batchCrcValid: detects a change inside the CRC range of a stored batch", () => {
  const b = resign(buildBatch(valueRecords(2)));
  assert.ok(batchCrcValid(b, 0, b.length));
  b[b.length - 1] ^= 1;
  assert.equal(batchCrcValid(b, 0, b.length), false);
});
