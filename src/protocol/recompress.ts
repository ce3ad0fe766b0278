// Kafka's recompression on produce (LogValidator with a topic compression.type other than
// "producer"): each magic-2 batch whose codec differs from the topic's is rewritten with the
// topic's codec. Records in a v2 batch are encoded the same whatever the codec, so the rewrite is
// the body alone: decompressed (bounded, as validation did it) and compressed again; the header
// keeps every field (offsets, timestamps, producer id, epoch and sequence, the transactional bit)
// but the codec bits, the length and the CRC. Kafka checks the size again after a rewrite
// (messageSizeMaybeChanged): a batch the new codec makes larger than max.message.bytes is refused
// with MESSAGE_TOO_LARGE, as Kafka's RecordTooLargeException.
//
// The input was validated whole (record_validator.validateBatches): sizes, CRCs and codecs hold.

import { crc32c, decompressedBytesMax, ErrorCode, recordBatchHeaderBytes } from "../util/mod.ts";
import { compress, type CompressionLevels, decompress } from "./compression.ts";
import { batchLogOverhead, BatchField, batchSizeAt, Compression } from "./record_batch.ts";

/** compression.type's values as codec numbers; "producer" keeps what the producer chose (null). */
export function targetCodecOf(compressionType: string | undefined): number | null {
  switch (compressionType) {
    case "uncompressed":
      return Compression.none;
    case "gzip":
      return Compression.gzip;
    case "snappy":
      return Compression.snappy;
    case "lz4":
      return Compression.lz4;
    case "zstd":
      return Compression.zstd;
    default:
      return null;
  }
}

export type Recompressed =
  | { ok: true; records: Uint8Array }
  | { ok: false; errorCode: number; message: string };

/**
 * The validated record set with every batch in codec `target`; the same bytes when every batch
 * already is. maxBatchBytes is the topic's max.message.bytes.
 */
export function recompressBatches(
  records: Uint8Array,
  target: number,
  levels: CompressionLevels,
  maxBatchBytes: number,
  topicPartition: string,
): Recompressed {
  const dv = new DataView(records.buffer, records.byteOffset, records.byteLength);
  const parts: Uint8Array[] = [];
  let changed = false;
  let total = 0;
  for (let pos = 0; pos < records.length;) {
    const size = batchSizeAt(dv, pos);
    const batch = records.subarray(pos, pos + size);
    const attributes = dv.getInt16(pos + BatchField.attributes);
    pos += size;
    const codec = attributes & 7;
    if (codec === target) {
      parts.push(batch);
      total += batch.length;
      continue;
    }
    const plain = decompress(codec, batch.subarray(recordBatchHeaderBytes), { maxBytes: decompressedBytesMax });
    if (!plain.ok) return plain;
    const rebuilt = withBody(batch, (attributes & ~7) | target, compress(target, plain.bytes, levels));
    if (rebuilt.length > maxBatchBytes) {
      return {
        ok: false,
        errorCode: ErrorCode.MESSAGE_TOO_LARGE,
        message: `Message batch size is ${rebuilt.length} bytes in append to partition ${topicPartition} ` +
          `which exceeds the maximum configured size of ${maxBatchBytes}.`,
      };
    }
    parts.push(rebuilt);
    total += rebuilt.length;
    changed = true;
  }
  if (!changed) return { ok: true, records };
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return { ok: true, records: out };
}

/** The batch's header with new attributes, length and CRC, followed by body. */
function withBody(batch: Uint8Array, attributes: number, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(recordBatchHeaderBytes + body.length);
  out.set(batch.subarray(0, recordBatchHeaderBytes));
  out.set(body, recordBatchHeaderBytes);
  const dv = new DataView(out.buffer);
  dv.setInt32(BatchField.batchLength, out.length - batchLogOverhead);
  dv.setInt16(BatchField.attributes, attributes);
  dv.setUint32(BatchField.crc, crc32c(out, BatchField.attributes, out.length));
  return out;
}
