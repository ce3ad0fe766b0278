// Down-conversion of stored batches v2 into legacy message sets for Fetch v0-3
// (src/protocol/down_convert.ts): exact bytes against messages written by hand from Kafka's format
// (test/helpers/legacy_messages.ts, CRC32 of each message included), wrappers that the produce
// path's own up-converter reads back, and the rules Kafka's RecordsUtil.downConvert follows
// (control batches dropped, offsets kept, zstd refused, the size bounds).
import assert from "node:assert/strict";
import { test } from "node:test";
import { buildEndTxnMarkerBatch } from "../../src/protocol/control_batch.ts";
import { decompress } from "../../src/protocol/compression.ts";
import { downConvertFetched } from "../../src/broker/fetch_down_convert.ts";
import { downConvert } from "../../src/protocol/down_convert.ts";
import { upConvertMessageSet } from "../../src/protocol/message_set.ts";
import { assignOffsets, Compression } from "../../src/protocol/record_batch.ts";
import { RecordBatchBuilder } from "../../src/protocol/record_batch_builder.ts";
import { crc32 } from "../../src/util/crc32.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { breakLz4HeaderChecksum, concat, legacyMessage, readV2Batch } from "../helpers/legacy_messages.ts";

const T0 = 1_700_000_000_000n;
const enc = new TextEncoder();

/** A stored batch at baseOffset with records k<i>/v<i> (i from first), timestamps T0 + i. */
function stored(baseOffset: number, n: number, codec = 0, opts: { first?: number; logAppendTime?: bigint } = {}): Uint8Array {
  const b = new RecordBatchBuilder();
  const first = opts.first ?? baseOffset;
  for (let i = 0; i < n; i++) {
    b.append(T0 + BigInt(first + i), enc.encode(`k${first + i}`), enc.encode(`v${first + i}`), [{ key: "h", value: enc.encode("x") }]);
  }
  const batch = b.build(codec, opts.logAppendTime !== undefined ? { attributeFlags: 0x08, maxTimestamp: opts.logAppendTime } : {});
  assignOffsets(batch, baseOffset, 0);
  return batch;
}

interface Msg {
  offset: bigint;
  crcValid: boolean;
  magic: number;
  attributes: number;
  timestamp: bigint;
  key: Uint8Array | null;
  value: Uint8Array | null;
}

/** Splits a legacy message set into messages, checking each CRC32. */
function messages(set: Uint8Array): Msg[] {
  const dv = new DataView(set.buffer, set.byteOffset, set.byteLength);
  const out: Msg[] = [];
  for (let p = 0; p < set.length;) {
    const size = dv.getInt32(p + 8);
    const end = p + 12 + size;
    const magic = set[p + 16];
    let q = p + 18;
    const timestamp = magic === 1 ? dv.getBigInt64(q) : -1n;
    if (magic === 1) q += 8;
    const field = () => {
      const n = dv.getInt32(q);
      q += 4;
      if (n < 0) return null;
      q += n;
      return set.subarray(q - n, q);
    };
    const key = field();
    const value = field();
    assert.equal(q, end, "message fields fill its size");
    out.push({ offset: dv.getBigInt64(p), crcValid: crc32(set, p + 16, end) === dv.getUint32(p + 12), magic, attributes: set[p + 17], timestamp, key, value });
    p = end;
  }
  return out;
}

const opts = (toMagic: 0 | 1, fetchOffset = 0) => ({ toMagic, fetchOffset, budgetBytes: 1 << 20, minOneUnit: true });

test("down-convert: an uncompressed batch becomes magic-0 messages at their offsets, byte for byte, from the fetch offset on", () => {
  const d = downConvert(stored(5, 3), opts(0, 6));
  assert.equal(d.errorCode, ErrorCode.NONE);
  const expected = concat(
    legacyMessage({ magic: 0, offset: 6n, key: "k6", value: "v6" }),
    legacyMessage({ magic: 0, offset: 7n, key: "k7", value: "v7" }),
  );
  assert.deepEqual(d.records, expected);
  assert.ok(messages(d.records).every((m) => m.crcValid));
});

test("down-convert: magic 1 keeps CreateTime timestamps; a LogAppendTime batch stamps its append time and sets bit 3", () => {
  const d = downConvert(stored(0, 2), opts(1));
  assert.deepEqual(d.records, concat(
    legacyMessage({ magic: 1, offset: 0n, timestamp: T0, key: "k0", value: "v0" }),
    legacyMessage({ magic: 1, offset: 1n, timestamp: T0 + 1n, key: "k1", value: "v1" }),
  ));
  const la = downConvert(stored(0, 2, 0, { logAppendTime: T0 + 99n }), opts(1));
  assert.deepEqual(la.records, concat(
    legacyMessage({ magic: 1, attributes: 8, offset: 0n, timestamp: T0 + 99n, key: "k0", value: "v0" }),
    legacyMessage({ magic: 1, attributes: 8, offset: 1n, timestamp: T0 + 99n, key: "k1", value: "v1" }),
  ));
});

for (const codec of [Compression.gzip, Compression.snappy, Compression.lz4]) {
  for (const magic of [0, 1] as const) {
    test(`down-convert: a codec-${codec} batch becomes one magic-${magic} wrapper (last offset outside, ${magic === 1 ? "relative" : "absolute"} inside) the up-converter reads back`, () => {
      const d = downConvert(stored(10, 4, codec), opts(magic, 12));
      assert.equal(d.errorCode, ErrorCode.NONE);
      const [w, ...rest] = messages(d.records);
      assert.equal(rest.length, 0);
      assert.ok(w.crcValid);
      assert.equal(w.offset, 13n);
      assert.equal(w.attributes, codec);
      if (magic === 1) assert.equal(w.timestamp, T0 + 13n, "a CreateTime wrapper has its max inner timestamp");
      if (codec === Compression.lz4 && magic === 0) {
        assert.equal(w.value![6], breakLz4HeaderChecksum(w.value!)[6], "magic-0 LZ4 has Kafka's old header checksum");
      }
      const inner = decompress(codec, w.value!, { lz4LegacyHeaderChecksum: magic === 0 });
      assert.ok(inner.ok);
      const innerMsgs = messages(inner.bytes);
      assert.deepEqual(innerMsgs.map((m) => m.offset), magic === 1 ? [0n, 1n, 2n, 3n] : [10n, 11n, 12n, 13n]);
      assert.ok(innerMsgs.every((m) => m.crcValid && m.magic === magic && m.attributes === 0));
      const up = upConvertMessageSet(d.records);
      assert.equal(up.errorCode, ErrorCode.NONE, up.message);
      const back = readV2Batch(up.batch!);
      assert.deepEqual(back.records.map((r) => [r.key, r.value]), [10, 11, 12, 13].map((i) => [`k${i}`, `v${i}`]));
      if (magic === 1) assert.deepEqual(back.records.map((r) => r.timestamp), [10n, 11n, 12n, 13n].map((i) => T0 + i));
    });
  }
}

test("down-convert: control batches are dropped, the data around them kept; zstd is UNSUPPORTED_COMPRESSION_TYPE first, a stop later", () => {
  const marker = buildEndTxnMarkerBatch(7n, 0, { committed: true, coordinatorEpoch: 0 }, Number(T0));
  assignOffsets(marker, 2, 0);
  const set = concat(stored(0, 2), marker, stored(3, 1));
  assert.deepEqual(messages(downConvert(set, opts(1)).records).map((m) => m.offset), [0n, 1n, 3n]);
  const z = stored(0, 2, Compression.zstd);
  assert.equal(downConvert(z, opts(1)).errorCode, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE);
  const later = downConvert(concat(stored(0, 1), stored(1, 1, Compression.zstd)), opts(1));
  assert.equal(later.errorCode, ErrorCode.NONE);
  assert.deepEqual(messages(later.records).map((m) => m.offset), [0n]);
});

test("down-convert: the budget keeps whole messages; v3 (minOneUnit) keeps a first one past it whole, v0-2 cut it short", () => {
  const one = legacyMessage({ magic: 1, offset: 0n, timestamp: T0, key: "k0", value: "v0" }).length;
  const set = stored(0, 5);
  const two = downConvert(set, { toMagic: 1, fetchOffset: 0, budgetBytes: 2 * one + 3, minOneUnit: false });
  assert.deepEqual(messages(two.records).map((m) => m.offset), [0n, 1n]);
  const v3 = downConvert(set, { toMagic: 1, fetchOffset: 0, budgetBytes: 10, minOneUnit: true });
  assert.equal(messages(v3.records).length, 1);
  const v2 = downConvert(set, { toMagic: 1, fetchOffset: 0, budgetBytes: 10, minOneUnit: false });
  assert.equal(v2.records.length, 10, "a partial message: what old consumers take for a message too large");
  const big = downConvert(stored(0, 3, Compression.gzip), { toMagic: 0, fetchOffset: 0, budgetBytes: 1, minOneUnit: true });
  assert.equal(messages(big.records).length, 1, "a wrapper is one unit");
});

test("down-convert: a Fetch v0-3 answer stops converting at its response bound; later partitions answer no records, the first unit stays whole", () => {
  const s = { metadata: { topicOverrides: () => ({}) }, config: { logMessageDownconversionEnable: true } } as unknown as Parameters<typeof downConvertFetched>[0];
  const part = (partition: number) => ({ topic: "t", partition, errorCode: 0, highWatermark: 3, lastStableOffset: 3, logStartOffset: 0, records: stored(0, 3) });
  const one = legacyMessage({ magic: 1, offset: 0n, timestamp: T0, key: "k0", value: "v0" }).length;
  const asked = [0, 1, 2].map(() => ({ fetchOffset: 0, maxBytes: 1 << 20 }));
  const out = downConvertFetched(s, 2, false, [part(0), part(1), part(2)], asked, 4 * one);
  assert.deepEqual(out.map((r) => messages(r.records!).length), [3, 1, 0], "3 messages, then what is left of the bound, then none");
  const tiny = downConvertFetched(s, 3, false, [part(0)], asked, 1);
  assert.equal(messages(tiny[0].records!).length, 1, "v3: the first message whole even past the bound");
  const disabled = { ...s, metadata: { topicOverrides: () => ({ "message.downconversion.enable": "false" }) } } as unknown as typeof s;
  assert.equal(downConvertFetched(disabled, 1, false, [part(0)], asked)[0].errorCode, ErrorCode.UNSUPPORTED_VERSION);
  assert.equal(downConvertFetched(disabled, 1, true, [part(0)], asked)[0].errorCode, ErrorCode.NONE, "a follower is converted regardless");
});
