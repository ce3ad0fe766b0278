// Record batch v2 (magic 2), as produced, stored and fetched. Only the 61-byte header is ever
// parsed on the produce and fetch paths; records stay bytes.
//
//   offset  size  field
//   0       8     baseOffset            patched by the broker on append
//   8       4     batchLength           bytes after this field (total = 12 + batchLength)
//   12      4     partitionLeaderEpoch  patched by the broker on append
//   16      1     magic                 2
//   17      4     crc                   CRC32C of bytes 21..end
//   21      2     attributes            bits 0-2 compression, 3 timestamp type, 4 transactional,
//                                       5 control, 6 has delete horizon
//   23      4     lastOffsetDelta
//   27      8     baseTimestamp
//   35      8     maxTimestamp
//   43      8     producerId
//   51      2     producerEpoch
//   53      4     baseSequence
//   57      4     recordCount
//   61            records
//
// The fields patched on append lie outside the CRC's range, so the client's checksum stays valid.

import { crc32c, ErrorCode, recordBatchHeaderBytes } from "../util/mod.ts";

export const BatchField = {
  baseOffset: 0,
  batchLength: 8,
  partitionLeaderEpoch: 12,
  magic: 16,
  crc: 17,
  attributes: 21,
  lastOffsetDelta: 23,
  baseTimestamp: 27,
  maxTimestamp: 35,
  producerId: 43,
  producerEpoch: 51,
  baseSequence: 53,
  recordCount: 57,
} as const;

/** Bytes before batchLength's count starts: baseOffset and batchLength themselves. */
export const batchLogOverhead = 12;

export const Compression = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;

export function view(buf: Uint8Array): DataView {
  return new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** Total size of the batch starting at `pos`, read from its header (no validation). */
export function batchSizeAt(dv: DataView, pos: number): number {
  return batchLogOverhead + dv.getInt32(pos + BatchField.batchLength);
}

export interface BatchSetSummary {
  errorCode: number;
  message: string;
  batchCount: number;
  /** Sum over batches of lastOffsetDelta + 1: how many offsets the set takes. */
  offsetCount: number;
  recordCount: number;
  maxTimestamp: bigint;
}

function fail(errorCode: number, message: string): BatchSetSummary {
  return { errorCode, message, batchCount: 0, offsetCount: 0, recordCount: 0, maxTimestamp: -1n };
}

/**
 * Checks a produced record set before it is appended: every batch whole, magic 2, CRC32C right,
 * counts consistent, each batch within maxBatchBytes. Returns NONE with a summary, or the Kafka
 * error code the partition should answer with. Reads headers only; the records are not parsed.
 */
export function validateBatches(records: Uint8Array, maxBatchBytes: number): BatchSetSummary {
  const dv = view(records);
  let pos = 0;
  let batchCount = 0;
  let offsetCount = 0;
  let recordCount = 0;
  let maxTimestamp = -1n;
  if (records.length === 0) return fail(ErrorCode.CORRUPT_MESSAGE, "empty record set");
  while (pos < records.length) {
    const left = records.length - pos;
    if (left < recordBatchHeaderBytes) {
      return fail(ErrorCode.CORRUPT_MESSAGE, `${left} trailing bytes are not a whole batch header`);
    }
    const magic = dv.getInt8(pos + BatchField.magic);
    if (magic !== 2) {
      const code = magic >= 0 && magic < 2 ? ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT : ErrorCode.CORRUPT_MESSAGE;
      return fail(code, `record batch magic ${magic}; strand stores magic 2 only`);
    }
    const size = batchSizeAt(dv, pos);
    if (size < recordBatchHeaderBytes || size > left) {
      return fail(ErrorCode.CORRUPT_MESSAGE, `batch length ${size - batchLogOverhead} does not fit the ${left} bytes left`);
    }
    if (size > maxBatchBytes) {
      return fail(ErrorCode.MESSAGE_TOO_LARGE, `batch of ${size} bytes is larger than the limit ${maxBatchBytes}`);
    }
    const crc = dv.getUint32(pos + BatchField.crc);
    if (crc32c(records, pos + BatchField.attributes, pos + size) !== crc) {
      return fail(ErrorCode.CORRUPT_MESSAGE, "record batch CRC32C mismatch");
    }
    const attributes = dv.getInt16(pos + BatchField.attributes);
    if ((attributes & 7) > Compression.zstd) {
      return fail(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, `compression codec ${attributes & 7}`);
    }
    const count = dv.getInt32(pos + BatchField.recordCount);
    const lastOffsetDelta = dv.getInt32(pos + BatchField.lastOffsetDelta);
    if (count <= 0 || lastOffsetDelta < 0 || lastOffsetDelta + 1 !== count) {
      return fail(ErrorCode.INVALID_RECORD, `record count ${count} with last offset delta ${lastOffsetDelta}`);
    }
    const ts = dv.getBigInt64(pos + BatchField.maxTimestamp);
    if (ts > maxTimestamp) maxTimestamp = ts;
    batchCount++;
    offsetCount += lastOffsetDelta + 1;
    recordCount += count;
    pos += size;
  }
  return { errorCode: ErrorCode.NONE, message: "", batchCount, offsetCount, recordCount, maxTimestamp };
}

/**
 * Patches base offsets and partition leader epochs into a validated record set, in place.
 * Returns the next offset after the set.
 */
export function assignOffsets(records: Uint8Array, firstOffset: number, leaderEpoch: number): number {
  const dv = view(records);
  let next = firstOffset;
  for (let pos = 0; pos < records.length; pos += batchSizeAt(dv, pos)) {
    dv.setBigInt64(pos + BatchField.baseOffset, BigInt(next));
    dv.setInt32(pos + BatchField.partitionLeaderEpoch, leaderEpoch);
    next += dv.getInt32(pos + BatchField.lastOffsetDelta) + 1;
  }
  return next;
}

/** CRC32C check of one stored batch (for reads back from disk and recovery). */
export function batchCrcValid(buf: Uint8Array, pos: number, size: number): boolean {
  return crc32c(buf, pos + BatchField.attributes, pos + size) === view(buf).getUint32(pos + BatchField.crc);
}

/** Whether any whole v2 batch in the set uses codec (Produce before v7 may not carry zstd). */
export function anyBatchUsesCodec(records: Uint8Array, codec: number): boolean {
  const dv = view(records);
  for (let pos = 0; pos + recordBatchHeaderBytes <= records.length;) {
    if (dv.getInt8(pos + BatchField.magic) === 2 && (dv.getInt16(pos + BatchField.attributes) & 7) === codec) return true;
    const size = batchSizeAt(dv, pos);
    if (size < recordBatchHeaderBytes) return false;
    pos += size;
  }
  return false;
}
