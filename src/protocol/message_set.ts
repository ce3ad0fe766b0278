// Legacy message sets (magic 0 and 1), as Produce v0-2 carries them, up-converted into ONE record
// batch v2, the only format strand stores. A message set is a run of messages:
//
//   offset int64 · messageSize int32 (bytes after this field) · crc uint32 (CRC32, IEEE, of
//   magic..end) · magic int8 · attributes int8 (bits 0-2 codec, bit 3 LogAppendTime, magic 1) ·
//   [timestamp int64, magic 1 only] · key bytes (int32 length, -1 null) · value bytes (likewise)
//
// A compressed message (a "wrapper", codec != 0) holds in its value an inner message set
// compressed with that codec; inner messages have the wrapper's magic and are never compressed.
// Byte 16 is the magic in both this and the v2 format, so a record set says which it is there.
//
// What Kafka's LogValidator does, done here: every message's size checked against the bytes left
// and its CRC32 checked; inner magic must match the wrapper's; nested compression, an empty or
// null wrapper and zstd (v2 only) are refused; records keep key, value and timestamp (magic 0 has
// none: -1, Kafka's NO_TIMESTAMP; an inner magic-1 message of a LogAppendTime wrapper takes the
// wrapper's); the output is compressed with the codec the producer used (Kafka's default
// compression.type=producer; the last wrapper's when several differ, as Kafka picks). One set
// never mixes magic 0 and 1 here (no client writes that).
//
// Unlike the produce path for v2 batches, this works record by record: it is the legacy
// conversion path, taken only by clients too old to write record batches v2.

import { crc32, decompressedBytesMax, ErrorCode } from "../util/mod.ts";
import { decompress } from "./compression.ts";
import { Compression } from "./record_batch.ts";
import { RecordBatchBuilder } from "./record_batch_builder.ts";

/** offset, messageSize */
const logOverhead = 12;
/** Smallest messageSize: crc, magic, attributes, key length, value length (+ timestamp, magic 1). */
const messageBytesMin = [14, 22];
const logAppendTimeBit = 0x08;

export interface Conversion {
  errorCode: number;
  message: string;
  /** The record batch v2 holding every record of the set, when errorCode is NONE. */
  batch: Uint8Array | null;
  recordCount: number;
}

interface Message {
  end: number;
  magic: number;
  attributes: number;
  timestamp: bigint;
  key: Uint8Array | null;
  value: Uint8Array | null;
}

interface Failure {
  errorCode: number;
  message: string;
}

/** The magic byte of the first batch or message in a record set, or -1 when too short to say. */
export function recordSetMagic(records: Uint8Array): number {
  return records.length > 16 ? (records[16] << 24) >> 24 : -1;
}

function failure(errorCode: number, message: string): Failure {
  return { errorCode, message };
}

function readBytes(buf: Uint8Array, dv: DataView, p: number, end: number): Uint8Array | null | Failure {
  const n = dv.getInt32(p);
  if (n < -1 || n > end - p - 4) return failure(ErrorCode.CORRUPT_MESSAGE, `key or value length ${n} at byte ${p}`);
  return n === -1 ? null : buf.subarray(p + 4, p + 4 + n);
}

/** Reads and checks (sizes, CRC32, magic) the message at pos of buf[.., end). */
function readMessage(buf: Uint8Array, dv: DataView, pos: number, end: number): Message | Failure {
  const left = end - pos;
  if (left < logOverhead + messageBytesMin[0]) return failure(ErrorCode.CORRUPT_MESSAGE, `${left} trailing bytes are not a whole message`);
  const size = dv.getInt32(pos + 8);
  const magic = dv.getInt8(pos + 16);
  if (magic !== 0 && magic !== 1) return failure(ErrorCode.CORRUPT_MESSAGE, `message magic ${magic} in a legacy message set`);
  if (size < messageBytesMin[magic] || size > left - logOverhead) {
    return failure(ErrorCode.CORRUPT_MESSAGE, `message size ${size} does not fit the ${left - logOverhead} bytes left`);
  }
  const msgEnd = pos + logOverhead + size;
  if (crc32(buf, pos + 16, msgEnd) !== dv.getUint32(pos + 12)) return failure(ErrorCode.CORRUPT_MESSAGE, "message CRC32 mismatch");
  const attributes = dv.getInt8(pos + 17);
  let p = pos + 18;
  const timestamp = magic === 1 ? dv.getBigInt64(p) : -1n;
  if (magic === 1) p += 8;
  const key = readBytes(buf, dv, p, msgEnd);
  if (key !== null && !(key instanceof Uint8Array)) return key;
  p += 4 + (key?.length ?? 0);
  const value = readBytes(buf, dv, p, msgEnd);
  if (value !== null && !(value instanceof Uint8Array)) return value;
  p += 4 + (value?.length ?? 0);
  if (p !== msgEnd) return failure(ErrorCode.CORRUPT_MESSAGE, `message size ${size} but ${p - pos - logOverhead} bytes used`);
  return { end: msgEnd, magic, attributes, timestamp, key, value };
}

function isFailure(m: Message | Failure): m is Failure {
  return "errorCode" in m;
}

/** Appends a wrapper's inner messages; returns null or the failure. */
function appendInner(wrapper: Message, inner: Uint8Array, out: RecordBatchBuilder): Failure | null {
  const dv = new DataView(inner.buffer, inner.byteOffset, inner.byteLength);
  const wrapperTime = wrapper.magic === 1 && (wrapper.attributes & logAppendTimeBit) !== 0;
  let count = 0;
  for (let pos = 0; pos < inner.length; count++) {
    const m = readMessage(inner, dv, pos, inner.length);
    if (isFailure(m)) return m;
    if (m.magic !== wrapper.magic) return failure(ErrorCode.INVALID_RECORD, `inner magic ${m.magic} in a magic ${wrapper.magic} wrapper`);
    if ((m.attributes & 7) !== 0) return failure(ErrorCode.INVALID_RECORD, "a compressed message inside a compressed message");
    out.append(wrapperTime ? wrapper.timestamp : m.timestamp, m.key, m.value);
    pos = m.end;
  }
  return count === 0 ? failure(ErrorCode.INVALID_RECORD, "a compressed message with no messages inside") : null;
}

/**
 * Converts a legacy message set (magic 0 or 1) into one record batch v2. Never throws for bad
 * input: answers the Kafka error code (CORRUPT_MESSAGE, INVALID_RECORD,
 * UNSUPPORTED_COMPRESSION_TYPE, MESSAGE_TOO_LARGE for a decompression past its bound) instead.
 */
export function upConvertMessageSet(set: Uint8Array, maxDecompressedBytes = decompressedBytesMax): Conversion {
  const dv = new DataView(set.buffer, set.byteOffset, set.byteLength);
  const out = new RecordBatchBuilder();
  let codec: number = Compression.none;
  let magic = -1;
  let budget = maxDecompressedBytes;
  const fail = (f: Failure): Conversion => ({ ...f, batch: null, recordCount: 0 });
  if (set.length === 0) return fail(failure(ErrorCode.CORRUPT_MESSAGE, "empty message set"));
  for (let pos = 0; pos < set.length;) {
    const m = readMessage(set, dv, pos, set.length);
    if (isFailure(m)) return fail(m);
    if (magic !== -1 && m.magic !== magic) return fail(failure(ErrorCode.INVALID_RECORD, `magic ${m.magic} after magic ${magic}`));
    magic = m.magic;
    pos = m.end;
    const c = m.attributes & 7;
    if (c === Compression.none) {
      out.append(m.timestamp, m.key, m.value);
      continue;
    }
    if (c > Compression.lz4) return fail(failure(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, `codec ${c} in a magic ${magic} message`));
    if (m.value === null) return fail(failure(ErrorCode.INVALID_RECORD, "a compressed message with a null value"));
    const inner = decompress(c, m.value, { maxBytes: budget, lz4LegacyHeaderChecksum: magic === 0 });
    if (!inner.ok) return fail(failure(inner.errorCode, inner.message));
    budget -= inner.bytes.length;
    const bad = appendInner(m, inner.bytes, out);
    if (bad !== null) return fail(bad);
    codec = c;
  }
  return { errorCode: ErrorCode.NONE, message: "", batch: out.build(codec), recordCount: out.recordCount };
}
