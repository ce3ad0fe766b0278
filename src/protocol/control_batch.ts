// Control batches: the transaction markers a partition leader writes when a transaction ends
// (Kafka's EndTransactionMarker, ControlRecordType). A control batch has attributes
// transactional|control (0x30), the producer id and epoch of the transaction, sequence -1, and one
// uncompressed record whose
//
//   key   = version int16 (0) · type int16 (0 ABORT, 1 COMMIT)
//   value = version int16 (0) · coordinatorEpoch int32
//
// Kafka reads only the key's type and the value's coordinator epoch, and accepts longer values
// of later versions (their extra bytes are ignored); so does controlMarkerAt. A key of an unknown
// type is Kafka's ControlRecordType.UNKNOWN: not a marker.

import { Reader } from "../util/mod.ts";
import { BatchField } from "./record_batch.ts";
import { RecordBatchBuilder } from "./record_batch_builder.ts";

export const ControlRecordType = { ABORT: 0, COMMIT: 1 } as const;
/** Attribute bits of a control batch: transactional and control. */
export const controlBatchAttributes = 0x30;

export interface EndTxnMarker {
  committed: boolean;
  coordinatorEpoch: number;
}

/** A control batch holding one end-transaction marker, ready for assignOffsets. */
export function buildEndTxnMarkerBatch(
  producerId: bigint,
  producerEpoch: number,
  marker: EndTxnMarker,
  timestampMs: number,
): Uint8Array {
  const key = new Uint8Array(4);
  new DataView(key.buffer).setInt16(2, marker.committed ? ControlRecordType.COMMIT : ControlRecordType.ABORT);
  const value = new Uint8Array(6);
  new DataView(value.buffer).setInt32(2, marker.coordinatorEpoch);
  const b = new RecordBatchBuilder();
  b.append(BigInt(timestampMs), key, value);
  return b.build(0, { attributeFlags: controlBatchAttributes, producerId, producerEpoch, baseSequence: -1 });
}

/** Whether the batch at pos is a control batch (attribute bit 5). */
export function isControlBatchAt(dv: DataView, pos: number): boolean {
  return (dv.getInt16(pos + BatchField.attributes) & 0x20) !== 0;
}

/**
 * The end-transaction marker of the control batch at pos (size bytes), or null when its first
 * record is not one (an unknown control type, a compressed or malformed batch).
 */
export function controlMarkerAt(buf: Uint8Array, pos: number, size: number): EndTxnMarker | null {
  const r = new Reader(buf, pos + 61, pos + size);
  if ((r.view.getInt16(pos + BatchField.attributes) & 7) !== 0) return null;
  r.varint(); // record length
  r.int8(); // attributes
  r.varlong(); // timestamp delta
  r.varint(); // offset delta
  const keyLength = r.varint();
  if (!r.ok || keyLength < 4 || keyLength > r.remaining) return null;
  r.int16(); // key version
  const type = r.int16();
  r.pos += keyLength - 4;
  const valueLength = r.varint();
  if (!r.ok || valueLength < 6 || valueLength > r.remaining) return null;
  r.int16(); // value version
  const coordinatorEpoch = r.int32();
  if (!r.ok || (type !== ControlRecordType.ABORT && type !== ControlRecordType.COMMIT)) return null;
  return { committed: type === ControlRecordType.COMMIT, coordinatorEpoch };
}
