// Reading the records inside a record batch v2, for the few places the broker must look inside a
// batch: loading __consumer_offsets, log compaction. Never on the produce or fetch path.
//
// Record layout (Kafka's DefaultRecord), after decompressing the batch's records section:
//   length varint · attributes int8 · timestampDelta varlong · offsetDelta varint ·
//   keyLength varint (-1 null) · key · valueLength varint (-1 null) · value ·
//   headerCount varint · [headerKeyLength varint · headerKey · headerValueLength varint · value]*
//
// Every length is checked against the bytes left; a malformed batch yields an error, not a throw.

import { ErrorCode, Reader } from "../util/mod.ts";
import { decompress } from "./compression.ts";
import { BatchField, batchSizeAt, view } from "./record_batch.ts";
import { recordBatchHeaderBytes } from "../util/mod.ts";

export interface RecordHeader {
  key: string;
  value: Uint8Array | null;
  /** The key's bytes as read (a key that is not valid UTF-8 survives a rewrite unchanged). */
  keyBytes?: Uint8Array;
}

export interface BatchRecord {
  offset: number;
  timestamp: bigint;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: RecordHeader[];
}

export interface BatchInfo {
  baseOffset: number;
  lastOffset: number;
  partitionLeaderEpoch: number;
  attributes: number;
  baseTimestamp: bigint;
  maxTimestamp: bigint;
  producerId: bigint;
  isControl: boolean;
}

export type BatchRecords =
  | { ok: true; batch: BatchInfo; records: BatchRecord[] }
  | { ok: false; errorCode: number; message: string };

export function batchInfo(buf: Uint8Array, pos = 0): BatchInfo {
  const dv = view(buf);
  const baseOffset = Number(dv.getBigInt64(pos + BatchField.baseOffset));
  const attributes = dv.getInt16(pos + BatchField.attributes);
  return {
    baseOffset,
    lastOffset: baseOffset + dv.getInt32(pos + BatchField.lastOffsetDelta),
    partitionLeaderEpoch: dv.getInt32(pos + BatchField.partitionLeaderEpoch),
    attributes,
    baseTimestamp: dv.getBigInt64(pos + BatchField.baseTimestamp),
    maxTimestamp: dv.getBigInt64(pos + BatchField.maxTimestamp),
    producerId: dv.getBigInt64(pos + BatchField.producerId),
    isControl: (attributes & 0x20) !== 0,
  };
}

function nullableBytes(r: Reader): Uint8Array | null {
  const n = r.varint();
  if (n < 0) return n === -1 ? null : (r.fail(`length ${n}`), null);
  if (n > r.remaining) return (r.fail(`length ${n} past the end`), null);
  return r.bytes(n);
}

/** Decodes the records of the one batch that starts at `pos` of `buf`. */
export function readBatchRecords(buf: Uint8Array, pos = 0, maxDecompressedBytes?: number): BatchRecords {
  const size = batchSizeAt(view(buf), pos);
  const batch = batchInfo(buf, pos);
  const count = view(buf).getInt32(pos + BatchField.recordCount);
  const body = buf.subarray(pos + recordBatchHeaderBytes, pos + size);
  const plain = decompress(batch.attributes & 7, body, { maxBytes: maxDecompressedBytes });
  if (!plain.ok) return plain;
  const r = new Reader(plain.bytes);
  const records: BatchRecord[] = [];
  for (let i = 0; i < count && r.ok; i++) {
    const length = r.varint();
    const end = r.pos + length;
    if (length < 0 || end > r.end) {
      r.fail(`record length ${length}`);
      break;
    }
    r.int8();
    const timestamp = batch.baseTimestamp + r.varlong();
    const offset = batch.baseOffset + r.varint();
    const key = nullableBytes(r);
    const value = nullableBytes(r);
    const headerCount = r.varint();
    if (headerCount < 0 || headerCount > end - r.pos) {
      r.fail(`header count ${headerCount}`);
      break;
    }
    const headers: RecordHeader[] = [];
    for (let h = 0; h < headerCount && r.ok; h++) {
      const k = nullableBytes(r);
      headers.push({ key: k === null ? "" : new TextDecoder().decode(k), value: nullableBytes(r), keyBytes: k ?? undefined });
    }
    if (r.pos !== end) r.fail("record fields do not fill its length");
    records.push({ offset, timestamp, key, value, headers });
  }
  if (!r.ok) return { ok: false, errorCode: ErrorCode.CORRUPT_MESSAGE, message: `malformed record: ${r.error}` };
  return { ok: true, batch, records };
}

/** Calls fn for each batch start position in a buffer of whole batches. */
export function forEachBatch(buf: Uint8Array, fn: (pos: number, size: number) => void): void {
  const dv = view(buf);
  for (let pos = 0; pos + recordBatchHeaderBytes <= buf.length;) {
    const size = batchSizeAt(dv, pos);
    if (size < recordBatchHeaderBytes || pos + size > buf.length) return;
    fn(pos, size);
    pos += size;
  }
}
