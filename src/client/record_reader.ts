// The consumer's record decoder: the records of one record batch v2 (layout in
// protocol/records.ts) as ConsumerRecords, with number arithmetic throughout. Why not
// protocol's readBatchRecords: it reads every timestamp delta as a bigint varlong and was
// measured at ~0.7 µs a record, most of a consumer's time; this reads varints as numbers (a
// timestamp delta past 2^53 ms is refused as corrupt) and shares one TextDecoder.
//
// Invariants: every length is checked against the record's own end and the bytes left before it
// is used; a malformed record stops the batch with a reason, never a throw; keys, values and
// header values are views into the (decompressed) batch, not copies.
import { batchInfo, decompress, type RecordHeader } from "../protocol/mod.ts";
import { recordBatchHeaderBytes } from "../util/mod.ts";

export interface ConsumerRecord {
  topic: string;
  partition: number;
  offset: number;
  /** Milliseconds since the epoch (CreateTime or LogAppendTime, as the batch says). */
  timestamp: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: RecordHeader[];
}

const utf8 = new TextDecoder();
const noHeaders: RecordHeader[] = [];

/**
 * Appends the records of the batch at buf[pos, pos+size) whose offset is at least minOffset to
 * `out`. Returns null, or why the batch could not be read.
 */
export function readRecords(
  buf: Uint8Array,
  pos: number,
  size: number,
  minOffset: number,
  topic: string,
  partition: number,
  out: ConsumerRecord[],
  maxDecompressedBytes?: number,
): string | null {
  const info = batchInfo(buf, pos);
  const dv = new DataView(buf.buffer, buf.byteOffset + pos, size);
  const count = dv.getInt32(57);
  const baseTimestamp = Number(info.baseTimestamp);
  const logAppendTime = (info.attributes & 0x08) !== 0;
  const body = buf.subarray(pos + recordBatchHeaderBytes, pos + size);
  const plain = decompress(info.attributes & 7, body, { maxBytes: maxDecompressedBytes });
  if (!plain.ok) return plain.message;
  const b = plain.bytes;
  const end = b.length;
  let p = 0;
  let bad: string | null = null;

  // Unsigned LEB128 of up to 8 bytes (56 bits) as a number; -1 marks a bad read.
  const uvarint = (limit: number): number => {
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 8; i++) {
      if (p >= limit) return -1;
      const byte = b[p++];
      result += (byte & 0x7f) * mul;
      if ((byte & 0x80) === 0) return result;
      mul *= 128;
    }
    return -1;
  };
  const varint = (limit: number): number => {
    const u = uvarint(limit);
    if (u < 0) {
      bad ??= "varint past the end";
      return 0;
    }
    return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
  };
  const bytesOrNull = (limit: number): Uint8Array | null => {
    const n = varint(limit);
    if (n === -1) return null;
    if (n < 0 || p + n > limit) {
      bad ??= `length ${n} past the record's end`;
      return null;
    }
    const v = b.subarray(p, p + n);
    p += n;
    return v;
  };

  for (let i = 0; i < count && bad === null; i++) {
    const length = varint(end);
    const recordEnd = p + length;
    if (bad !== null || length <= 0 || recordEnd > end) {
      bad ??= `record length ${length}`;
      break;
    }
    p++; // attributes
    const tsDelta = varint(recordEnd);
    const offset = info.baseOffset + varint(recordEnd);
    const key = bytesOrNull(recordEnd);
    const value = bytesOrNull(recordEnd);
    const headerCount = varint(recordEnd);
    let headers = noHeaders;
    if (headerCount !== 0) {
      if (headerCount < 0 || headerCount > recordEnd - p) {
        bad ??= `header count ${headerCount}`;
        break;
      }
      headers = [];
      for (let h = 0; h < headerCount && bad === null; h++) {
        const k = bytesOrNull(recordEnd);
        headers.push({ key: k === null ? "" : utf8.decode(k), value: bytesOrNull(recordEnd), keyBytes: k ?? undefined });
      }
    }
    if (bad === null && p !== recordEnd) bad = "record fields do not fill its length";
    if (bad !== null) break;
    if (offset >= minOffset) {
      const timestamp = logAppendTime ? Number(info.maxTimestamp) : baseTimestamp + tsDelta;
      out.push({ topic, partition, offset, timestamp, key, value, headers });
    }
  }
  return bad;
}
