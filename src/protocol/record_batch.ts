// Record batch v2 (magic 2), as produced, stored and fetched. The fetch path parses only the
// 61-byte header; the produce path also walks every record (record_validator.ts). Records stay bytes.
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

/** Kafka's smallest legal batch size field (LegacyRecord.RECORD_OVERHEAD_V0) and the bytes up to the magic. */
const batchSizeFieldMin = 14;
const headerBytesUpToMagic = 17;

/**
 * The checks Kafka makes of a partition's record set before anything else looks at it
 * (ProduceRequest.validateRecords, then LogValidator's one-batch rule for magic 2): in Produce v3+
 * the set is record batches v2 only, zstd needs v7+, and a magic 2 set (any version) is exactly one
 * batch ("Compressed outer record has more than one batch"). The producer state, the transactional
 * verification and the sequence checks all speak of one batch per partition per request. A second
 * batch counts as Kafka's batch iterator counts it (its size fits the bytes left); anything else
 * past the first batch is left to the validator. null when the set passes (or is absent: the
 * append answers that).
 */
export function produceRecordSetError(records: Uint8Array | null, apiVersion: number): { errorCode: number; message: string } | null {
  if (records === null || records.length < headerBytesUpToMagic) return null;
  const dv = view(records);
  const magic = dv.getInt8(BatchField.magic);
  if (magic !== 2) {
    return apiVersion >= 3 ? { errorCode: ErrorCode.INVALID_RECORD, message: `Produce requests with version ${apiVersion} are only allowed to contain record batches with magic version 2` } : null;
  }
  if (apiVersion < 7 && anyBatchUsesCodec(records, Compression.zstd)) {
    return { errorCode: ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, message: `zstd needs Produce v7+, got v${apiVersion}` };
  }
  if (records.length < recordBatchHeaderBytes) return null;
  const size = batchSizeAt(dv, 0);
  if (size < recordBatchHeaderBytes || size >= records.length) return null;
  const rest = records.length - size;
  if (rest < headerBytesUpToMagic) return null;
  const next = batchSizeAt(dv, size);
  if (next - batchLogOverhead < batchSizeFieldMin || next > rest) return null;
  return { errorCode: ErrorCode.INVALID_RECORD, message: "Compressed outer record has more than one batch: a partition takes exactly one record batch per produce request" };
}
