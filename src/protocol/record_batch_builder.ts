// Builds one record batch v2 (layout in record_batch.ts) from records given one at a time, for
// the few places the broker writes records of its own rather than storing a client's batch (the
// legacy message set up-conversion). Each record is encoded as Kafka's DefaultRecord:
//
//   length varint · attributes int8 (0) · timestampDelta varlong · offsetDelta varint ·
//   keyLength varint (-1: null) · key · valueLength varint (-1: null) · value · headerCount varint
//
// As Kafka's MemoryRecordsBuilder: baseTimestamp is the first record's timestamp, maxTimestamp
// the largest (-1, Kafka's NO_TIMESTAMP, when no record has one); not transactional, no
// producer id. baseOffset and partitionLeaderEpoch are left for assignOffsets to patch.

import { assert, crc32c, recordBatchHeaderBytes, Writer } from "../util/mod.ts";
import { compress } from "./compression.ts";
import { BatchField, batchLogOverhead } from "./record_batch.ts";

export class RecordBatchBuilder {
  private records = new Writer(1024);
  private scratch = new Writer(256);
  private count = 0;
  private baseTimestamp = -1n;
  private maxTimestamp = -1n;

  get recordCount(): number {
    return this.count;
  }

  /** Bytes of encoded records so far (before compression). */
  get recordBytes(): number {
    return this.records.pos;
  }

  append(timestamp: bigint, key: Uint8Array | null, value: Uint8Array | null): void {
    if (this.count === 0) this.baseTimestamp = timestamp;
    if (timestamp > this.maxTimestamp) this.maxTimestamp = timestamp;
    const r = this.scratch;
    r.pos = 0;
    r.int8(0);
    r.varlong(timestamp - this.baseTimestamp);
    r.varint(this.count);
    if (key === null) r.varint(-1);
    else r.varint(key.length).bytes(key);
    if (value === null) r.varint(-1);
    else r.varint(value.length).bytes(value);
    r.varint(0); // no headers: legacy messages have none
    const body = r.finish();
    this.records.varint(body.length).bytes(body);
    this.count++;
  }

  /** The finished batch, its records compressed with `codec` (attributes & 7). */
  build(codec: number): Uint8Array {
    assert(this.count > 0, "a record batch holds at least one record");
    const records = compress(codec, this.records.finish());
    const out = new Uint8Array(recordBatchHeaderBytes + records.length);
    const dv = new DataView(out.buffer);
    dv.setBigInt64(BatchField.baseOffset, 0n);
    dv.setInt32(BatchField.batchLength, out.length - batchLogOverhead);
    dv.setInt32(BatchField.partitionLeaderEpoch, -1);
    dv.setInt8(BatchField.magic, 2);
    dv.setInt16(BatchField.attributes, codec);
    dv.setInt32(BatchField.lastOffsetDelta, this.count - 1);
    dv.setBigInt64(BatchField.baseTimestamp, this.baseTimestamp);
    dv.setBigInt64(BatchField.maxTimestamp, this.maxTimestamp);
    dv.setBigInt64(BatchField.producerId, -1n);
    dv.setInt16(BatchField.producerEpoch, -1);
    dv.setInt32(BatchField.baseSequence, -1);
    dv.setInt32(BatchField.recordCount, this.count);
    out.set(records, recordBatchHeaderBytes);
    dv.setUint32(BatchField.crc, crc32c(out, BatchField.attributes, out.length));
    return out;
  }
}
