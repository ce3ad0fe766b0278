// Down-conversion of stored record batches v2 into legacy message sets (magic 0 or 1), for the
// Fetch v0-3 answers of consumers too old to read batches v2 (Kafka's RecordsUtil.downConvert and
// LazyDownConversionRecords). Fetch v0-1 gets magic 0, v2-3 magic 1 (timestamps). The message
// layout is message_set.ts's:
//
//   offset int64 · messageSize int32 · crc uint32 (CRC32 of magic..end) · magic int8 ·
//   attributes int8 (bits 0-2 codec, bit 3 LogAppendTime, magic 1) · [timestamp int64, magic 1] ·
//   key bytes · value bytes
//
// What Kafka does, done here:
// - control batches are dropped (a legacy consumer cannot tell them from data); records of aborted
//   transactions are kept, since Fetch below v4 reads uncommitted, as Kafka's does.
// - an uncompressed batch becomes one message per record, at its absolute offset, skipping
//   records before the fetch offset; headers are dropped (the legacy format has none).
// - a compressed batch becomes one wrapper message compressed with the batch's codec, holding
//   every record of the batch (the consumer skips those before its offset, as with any wrapper).
//   The wrapper carries the offset of its last inner message; inner offsets are absolute in
//   magic 0 and relative to the first inner message in magic 1 (KIP-31). LZ4 in magic 0 is
//   written with the frame header checksum Kafka's old clients expect (KAFKA-3160).
// - magic 1 timestamps: a LogAppendTime batch stamps every message and the wrapper with the
//   batch's max timestamp and sets attribute bit 3; a CreateTime wrapper has its inner max.
// - zstd cannot be down-converted: UNSUPPORTED_COMPRESSION_TYPE when the first batch uses it,
//   otherwise the answer stops before it.
//
// Bounds: output stops at `budgetBytes`, except that the first unit (a message or a wrapper) is
// kept whole when `minOneUnit` (Fetch v3, whose consumers must make progress: Kafka sizes the
// answer max(stored bytes, first converted batch)); Fetch v0-2 has a hard partition limit, so a
// first unit past it is cut short, which the old consumers read as "message too large" (Kafka's
// overflow message). Each batch is decompressed within `maxDecompressedBytes`.
//
// Like message_set.ts, this is a legacy conversion path and works record by record.

import { crc32, downConversionDecompressedBytesMax, ErrorCode } from "../util/mod.ts";
import { compress } from "./compression.ts";
import { lz4LegacyHeaderChecksum } from "./compression_lz4.ts";
import { BatchField, Compression, view } from "./record_batch.ts";
import { type BatchRecord, forEachBatch, readBatchRecords } from "./records.ts";

const logAppendTimeBit = 0x08;
const controlBit = 0x20;

export interface DownConversion {
  errorCode: number;
  /** The legacy message set (empty when errorCode is not NONE). */
  records: Uint8Array;
  /** Messages written at top level (wrappers count once). */
  messages: number;
}

export interface DownConvertOptions {
  /** 0 for Fetch v0-1, 1 for Fetch v2-3. */
  toMagic: 0 | 1;
  /** Uncompressed records before it are left out. */
  fetchOffset: number;
  /** Most bytes of output (see minOneUnit). */
  budgetBytes: number;
  /** Keep the first unit whole even past budgetBytes (Fetch v3); otherwise cut it (v0-2). */
  minOneUnit: boolean;
  maxDecompressedBytes?: number;
}

/** Bytes of one legacy message with this key and value, offset and size fields included. */
function messageBytes(magic: number, key: Uint8Array | null, value: Uint8Array | null): number {
  return 12 + 4 + 1 + 1 + (magic === 1 ? 8 : 0) + 4 + (key?.length ?? 0) + 4 + (value?.length ?? 0);
}

function writeBytes(out: Uint8Array, dv: DataView, p: number, b: Uint8Array | null): number {
  dv.setInt32(p, b === null ? -1 : b.length);
  if (b === null) return p + 4;
  out.set(b, p + 4);
  return p + 4 + b.length;
}

/** Writes one legacy message at `pos` of `out` (dv views out); returns the position after it. */
function writeMessage(
  out: Uint8Array,
  dv: DataView,
  pos: number,
  magic: number,
  offset: bigint,
  attributes: number,
  timestamp: bigint,
  key: Uint8Array | null,
  value: Uint8Array | null,
): number {
  const size = messageBytes(magic, key, value);
  dv.setBigInt64(pos, offset);
  dv.setInt32(pos + 8, size - 12);
  let p = pos + 16;
  out[p++] = magic;
  out[p++] = attributes;
  if (magic === 1) {
    dv.setBigInt64(p, timestamp);
    p += 8;
  }
  p = writeBytes(out, dv, writeBytes(out, dv, p, key), value);
  dv.setUint32(pos + 12, crc32(out, pos + 16, pos + size));
  return pos + size;
}

/** The wrapper message for a compressed batch's records. */
function wrapper(magic: number, codec: number, appendTime: bigint | null, records: BatchRecord[]): Uint8Array {
  const tsAttr = magic === 1 && appendTime !== null ? logAppendTimeBit : 0;
  const base = records[0].offset;
  let innerBytes = 0;
  for (const r of records) innerBytes += messageBytes(magic, r.key, r.value);
  const inner = new Uint8Array(innerBytes);
  const innerView = view(inner);
  let p = 0;
  let maxTimestamp = -1n;
  for (const r of records) {
    const ts = appendTime ?? r.timestamp;
    if (ts > maxTimestamp) maxTimestamp = ts;
    const offset = magic === 1 ? r.offset - base : r.offset;
    p = writeMessage(inner, innerView, p, magic, BigInt(offset), tsAttr, ts, r.key, r.value);
  }
  let packed = compress(codec, inner);
  if (codec === Compression.lz4 && magic === 0) packed = lz4LegacyHeaderChecksum(packed);
  const out = new Uint8Array(messageBytes(magic, null, packed));
  writeMessage(out, view(out), 0, magic, BigInt(records[records.length - 1].offset), codec | tsAttr, maxTimestamp, null, packed);
  return out;
}

/**
 * Converts the whole batches v2 of a fetched record set into a legacy message set. Never throws
 * for bad stored bytes: a batch that does not decode ends the answer (CORRUPT_MESSAGE if first).
 */
export function downConvert(records: Uint8Array, opts: DownConvertOptions): DownConversion {
  const magic = opts.toMagic;
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  let messages = 0;
  let errorCode: number = ErrorCode.NONE;
  let full = false;
  // Whether a unit of `size` bytes fits; a first one past the budget is kept whole (minOneUnit)
  // or cut to the budget (then the answer is full).
  const fits = (size: number): boolean => bytes + size <= opts.budgetBytes || (messages === 0 && opts.minOneUnit);
  const cutFirst = (unit: Uint8Array): void => {
    if (messages === 0) {
      chunks.push(unit.subarray(0, Math.max(0, Math.min(unit.length, opts.budgetBytes))));
      bytes += chunks[0].length;
    }
    full = true;
  };
  const dv = view(records);
  forEachBatch(records, (pos) => {
    if (full || errorCode !== ErrorCode.NONE) return;
    if (dv.getInt8(pos + BatchField.magic) !== 2) return;
    const attributes = dv.getInt16(pos + BatchField.attributes);
    if ((attributes & controlBit) !== 0) return;
    const codec = attributes & 7;
    if (codec === Compression.zstd) {
      if (messages === 0) errorCode = ErrorCode.UNSUPPORTED_COMPRESSION_TYPE;
      full = true;
      return;
    }
    const read = readBatchRecords(records, pos, opts.maxDecompressedBytes ?? downConversionDecompressedBytesMax);
    if (!read.ok) {
      if (messages === 0) errorCode = read.errorCode;
      full = true;
      return;
    }
    const appendTime = (attributes & logAppendTimeBit) !== 0 ? read.batch.maxTimestamp : null;
    if (codec !== Compression.none) {
      if (read.records.length === 0) return;
      const w = wrapper(magic, codec, appendTime, read.records);
      if (!fits(w.length)) return cutFirst(w);
      chunks.push(w);
      bytes += w.length;
      messages++;
      return;
    }
    // Uncompressed: the messages that fit, written into one chunk.
    const tsAttr = magic === 1 && appendTime !== null ? logAppendTimeBit : 0;
    const take: BatchRecord[] = [];
    let size = 0;
    for (const r of read.records) {
      if (r.offset < opts.fetchOffset) continue;
      const m = messageBytes(magic, r.key, r.value);
      if (!(bytes + size + m <= opts.budgetBytes || (messages === 0 && take.length === 0 && opts.minOneUnit))) {
        full = true;
        if (take.length > 0) break;
        const one = new Uint8Array(m);
        writeMessage(one, view(one), 0, magic, BigInt(r.offset), tsAttr, appendTime ?? r.timestamp, r.key, r.value);
        return cutFirst(one);
      }
      take.push(r);
      size += m;
    }
    if (take.length === 0) return;
    const chunk = new Uint8Array(size);
    const cv = view(chunk);
    let p = 0;
    for (const r of take) p = writeMessage(chunk, cv, p, magic, BigInt(r.offset), tsAttr, appendTime ?? r.timestamp, r.key, r.value);
    chunks.push(chunk);
    bytes += size;
    messages += take.length;
  });
  if (errorCode !== ErrorCode.NONE) return { errorCode, records: new Uint8Array(0), messages: 0 };
  if (chunks.length === 1) return { errorCode, records: chunks[0], messages };
  const out = new Uint8Array(bytes);
  let p = 0;
  for (const c of chunks) {
    out.set(c, p);
    p += c.length;
  }
  return { errorCode, records: out, messages };
}
