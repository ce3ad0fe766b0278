// Builds one record batch v2 (layout in record_batch.ts) from records given one at a time, for
// the places the broker writes records of its own rather than storing a client's batch (the
// legacy message set up-conversion, __consumer_offsets, log compaction). Each record is encoded as
// Kafka's DefaultRecord:
//
//   length varint · attributes int8 (0) · timestampDelta varlong · offsetDelta varint ·
//   keyLength varint (-1: null) · key · valueLength varint (-1: null) · value · headerCount varint ·
//   [headerKeyLength varint · headerKey · headerValueLength varint (-1: null) · headerValue]*
//
// As Kafka's MemoryRecordsBuilder: baseTimestamp is the first record's timestamp (or the delete
// horizon given to the constructor, KIP-534: the cleaner's batches then carry attribute bit 6 and
// their records' timestamp deltas are relative to it), maxTimestamp the largest (-1, Kafka's
// NO_TIMESTAMP, when no record has one). By default: not transactional, no producer id, offset
// deltas 0, 1, 2 … and baseOffset/partitionLeaderEpoch left for assignOffsets to patch. The
// cleaner passes each record's own offset delta and the source batch's header fields instead
// (BuildOptions), so a rewritten batch keeps its base offset, last offset and producer fields.

import { assert, crc32c, recordBatchHeaderBytes, Writer } from "../util/mod.ts";
import { compress } from "./compression.ts";
import { BatchField, batchLogOverhead } from "./record_batch.ts";
import type { RecordHeader } from "./records.ts";

/** Attribute bit 6: baseTimestamp holds the batch's delete horizon (KIP-534). */
export const DeleteHorizonAttribute = 0x40;

export interface BatchBuilderOptions {
  /** A fixed baseTimestamp (the delete horizon); records' deltas are taken from it. */
  baseTimestamp?: bigint;
}

/** Header fields of the built batch; each defaults to what a new client batch would have. */
export interface BuildOptions {
  baseOffset?: bigint;
  partitionLeaderEpoch?: number;
  /** Attribute bits besides the codec (timestamp type, transactional, delete horizon). */
  attributeFlags?: number;
  /** At least the last record's offset delta (Kafka keeps a compacted batch's last offset). */
  lastOffsetDelta?: number;
  /** Overrides the records' max timestamp (a LogAppendTime batch keeps its append time). */
  maxTimestamp?: bigint;
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
}

const encoder = new TextEncoder();

export class RecordBatchBuilder {
  private records = new Writer(1024);
  private scratch = new Writer(256);
  private count = 0;
  private lastDelta = -1;
  private baseTimestamp: bigint;
  private readonly fixedBase: boolean;
  private maxTimestamp = -1n;

  constructor(opts: BatchBuilderOptions = {}) {
    this.fixedBase = opts.baseTimestamp !== undefined;
    this.baseTimestamp = opts.baseTimestamp ?? -1n;
  }

  get recordCount(): number {
    return this.count;
  }

  /** Bytes of encoded records so far (before compression). */
  get recordBytes(): number {
    return this.records.pos;
  }

  /**
   * Adds a record. offsetDelta defaults to the record's index; given, the deltas must increase.
   * A header's `keyBytes`, when present, is written as is (the key's exact bytes as read).
   */
  append(timestamp: bigint, key: Uint8Array | null, value: Uint8Array | null, headers: readonly RecordHeader[] = [], offsetDelta = this.count): void {
    assert(offsetDelta > this.lastDelta, "offset deltas increase within a batch");
    if (this.count === 0 && !this.fixedBase) this.baseTimestamp = timestamp;
    if (timestamp > this.maxTimestamp) this.maxTimestamp = timestamp;
    const r = this.scratch;
    r.pos = 0;
    r.int8(0);
    r.varlong(timestamp - this.baseTimestamp);
    r.varint(offsetDelta);
    if (key === null) r.varint(-1);
    else r.varint(key.length).bytes(key);
    if (value === null) r.varint(-1);
    else r.varint(value.length).bytes(value);
    r.varint(headers.length);
    for (const h of headers) {
      const k = h.keyBytes ?? encoder.encode(h.key);
      r.varint(k.length).bytes(k);
      if (h.value === null) r.varint(-1);
      else r.varint(h.value.length).bytes(h.value);
    }
    const body = r.finish();
    this.records.varint(body.length).bytes(body);
    this.count++;
    this.lastDelta = offsetDelta;
  }

  /** The finished batch, its records compressed with `codec` (attributes & 7). */
  build(codec: number, opts: BuildOptions = {}): Uint8Array {
    assert(this.count > 0, "a record batch holds at least one record");
    const lastOffsetDelta = opts.lastOffsetDelta ?? this.lastDelta;
    assert(lastOffsetDelta >= this.lastDelta, "the last offset delta covers every record");
    const records = compress(codec, this.records.finish());
    const out = new Uint8Array(recordBatchHeaderBytes + records.length);
    const dv = new DataView(out.buffer);
    dv.setBigInt64(BatchField.baseOffset, opts.baseOffset ?? 0n);
    dv.setInt32(BatchField.batchLength, out.length - batchLogOverhead);
    dv.setInt32(BatchField.partitionLeaderEpoch, opts.partitionLeaderEpoch ?? -1);
    dv.setInt8(BatchField.magic, 2);
    dv.setInt16(BatchField.attributes, (codec & 7) | ((opts.attributeFlags ?? 0) & ~7));
    dv.setInt32(BatchField.lastOffsetDelta, lastOffsetDelta);
    dv.setBigInt64(BatchField.baseTimestamp, this.baseTimestamp);
    dv.setBigInt64(BatchField.maxTimestamp, opts.maxTimestamp ?? this.maxTimestamp);
    dv.setBigInt64(BatchField.producerId, opts.producerId ?? -1n);
    dv.setInt16(BatchField.producerEpoch, opts.producerEpoch ?? -1);
    dv.setInt32(BatchField.baseSequence, opts.baseSequence ?? -1);
    dv.setInt32(BatchField.recordCount, this.count);
    out.set(records, recordBatchHeaderBytes);
    dv.setUint32(BatchField.crc, crc32c(out, BatchField.attributes, out.length));
    return out;
  }
}
