// The cleaner's transaction handling (Kafka 3.8's CleanedTransactionMetadata and the
// transactional half of Cleaner.cleanInto's RecordFilter), kept out of cleaner.ts:
//
// - The batches of an aborted transaction (listed by the `.txnindex` files, collectAbortedTxns)
//   are removed, and never put in the offset map. Committed transactional batches are compacted
//   like any other.
// - A marker (control batch) stays while any batch of its transaction was seen in this pass
//   (Kafka: "never delete a marker until all the records from that transaction are removed"); an
//   abort marker that stays puts its transaction back in the cleaned segment's `.txnindex`. A
//   marker whose transaction has no batch left gets a delete horizon (KIP-534: attribute bit 6,
//   baseTimestamp = now + delete.retention.ms) and goes in the first pass after the horizon, so a
//   consumer that read the data has delete.retention.ms to read the marker.
// - Kept anyway: a producer's last data batch, and a marker that is a producer's last entry with
//   its current epoch (Kafka's isBatchLastRecordOfProducer), so the producer state rebuilds from
//   the log. Kafka keeps such a batch empty; strand keeps it whole (see cleaner.ts).
// The cleaner never cleans past the last stable offset, so no transaction in range is open.

import { BatchField, DeleteHorizonAttribute, readBatchRecords, RecordBatchBuilder } from "../protocol/mod.ts";
import { controlMarkerAt } from "../protocol/mod.ts";
import type { Log } from "./log.ts";
import type { Timestamp } from "./timestamp.ts";
import { type AbortedTxn, collectAbortedTxns, type TransactionIndex } from "./txn_index.ts";

/** What the cleaner's pass tells the filter (cleaner.ts's PassState). */
export interface TxnPassState {
  readonly nowMs: number;
  readonly deleteRetentionMs: number;
  noteHorizon(ms: Timestamp): void;
}

/** Kafka's CleanedTransactionMetadata: the transactions open at the batch the cleaner is at. */
export class CleanedTransactionMetadata {
  private ongoingCommitted = new Set<bigint>();
  private ongoingAborted = new Map<bigint, { txn: AbortedTxn; lastObservedBatchOffset: number | null }>();
  /** Aborted transactions not reached yet, by first offset. */
  private pending: AbortedTxn[] = [];
  private known = new Set<string>();
  /** Where an abort marker that stays puts its transaction (the cleaned segment's index). */
  cleanedIndex: TransactionIndex | null = null;

  /** Adds the aborted transactions overlapping [from, upperBound) of the log (each once). */
  addAbortedTransactions(log: Log, from: number, upperBound: number): void {
    for (const t of collectAbortedTxns(log.logSegments, from, upperBound)) {
      const k = `${t.producerId}@${t.firstOffset}`;
      if (this.known.has(k)) continue;
      this.known.add(k);
      this.pending.push(t);
    }
    this.pending.sort((a, b) => a.firstOffset - b.firstOffset);
  }

  private consumeUpTo(offset: number): void {
    while (this.pending.length > 0 && this.pending[0].firstOffset <= offset) {
      const t = this.pending.shift()!;
      if (!this.ongoingAborted.has(t.producerId)) this.ongoingAborted.set(t.producerId, { txn: t, lastObservedBatchOffset: null });
    }
  }

  /** A data batch: true when it belongs to an aborted transaction (it may go). */
  onBatchRead(producerId: bigint, transactional: boolean, lastOffset: number): boolean {
    this.consumeUpTo(lastOffset);
    if (!transactional) return false;
    const aborted = this.ongoingAborted.get(producerId);
    if (aborted !== undefined) {
      aborted.lastObservedBatchOffset = lastOffset;
      return true;
    }
    this.ongoingCommitted.add(producerId);
    return false;
  }

  /** A control batch: true when no batch of its transaction was seen (it may go, after its horizon). */
  onControlBatchRead(buf: Uint8Array, pos: number, size: number): boolean {
    const dv = new DataView(buf.buffer, buf.byteOffset + pos, size);
    this.consumeUpTo(lastOffsetOf(dv));
    const marker = controlMarkerAt(buf, pos, size);
    if (marker === null) return false; // an unknown control type: kept, as Kafka keeps it
    const producerId = dv.getBigInt64(BatchField.producerId);
    if (marker.committed) return !this.ongoingCommitted.delete(producerId);
    const aborted = this.ongoingAborted.get(producerId);
    this.ongoingAborted.delete(producerId);
    if (aborted !== undefined && aborted.lastObservedBatchOffset !== null) {
      this.cleanedIndex?.append(aborted.txn);
      return false;
    }
    return true;
  }
}

function lastOffsetOf(dv: DataView): number {
  return Number(dv.getBigInt64(BatchField.baseOffset)) + dv.getInt32(BatchField.lastOffsetDelta);
}

/**
 * The cleaner's verdict on a transactional or control batch: "records" (a committed transaction's
 * batch: filter its records as any other), null (drop it), or the bytes to write. Null `meta`
 * (building the offset map): only whether the batch's records count, "records" or null.
 */
export function txnBatchVerdict(
  meta: CleanedTransactionMetadata,
  log: Log,
  buf: Uint8Array,
  pos: number,
  size: number,
  state: TxnPassState | null,
): "records" | Uint8Array | null {
  const dv = new DataView(buf.buffer, buf.byteOffset + pos, size);
  const attributes = dv.getInt16(BatchField.attributes);
  const producerId = dv.getBigInt64(BatchField.producerId);
  const batch = buf.subarray(pos, pos + size);
  if ((attributes & 0x20) === 0) {
    if (!meta.onBatchRead(producerId, (attributes & 0x10) !== 0, lastOffsetOf(dv))) return "records";
    if (state === null) return null;
    return isLastDataBatch(log, producerId, lastOffsetOf(dv)) ? batch : null;
  }
  const canDiscard = meta.onControlBatchRead(buf, pos, size);
  if (state === null) return null;
  const entry = log.producerState.lastEntry(producerId);
  if (entry !== undefined && entry.batches.length === 0 && entry.producerEpoch === dv.getInt16(BatchField.producerEpoch)) return batch;
  if (!canDiscard) return batch;
  if ((attributes & DeleteHorizonAttribute) !== 0) {
    const horizonMs = Number(dv.getBigInt64(BatchField.baseTimestamp));
    if (state.nowMs >= horizonMs) return null;
    state.noteHorizon(horizonMs);
    return batch;
  }
  return withHorizon(batch, state.nowMs + state.deleteRetentionMs, state);
}

function isLastDataBatch(log: Log, producerId: bigint, lastOffset: number): boolean {
  return log.producerState.lastEntry(producerId)?.batches.at(-1)?.lastOffset === lastOffset;
}

/** The marker batch rebuilt with a delete horizon (its one record, offsets and producer fields kept). */
function withHorizon(batch: Uint8Array, horizonMs: number, state: TxnPassState): Uint8Array {
  const decoded = readBatchRecords(batch, 0);
  if (!decoded.ok || decoded.records.length === 0) return batch;
  const dv = new DataView(batch.buffer, batch.byteOffset, batch.length);
  const baseOffset = Number(dv.getBigInt64(BatchField.baseOffset));
  const builder = new RecordBatchBuilder({ baseTimestamp: BigInt(horizonMs) });
  for (const r of decoded.records) builder.append(BigInt(r.timestamp), r.key, r.value, r.headers, r.offset - baseOffset);
  state.noteHorizon(horizonMs);
  return builder.build(0, {
    baseOffset: BigInt(baseOffset),
    partitionLeaderEpoch: dv.getInt32(BatchField.partitionLeaderEpoch),
    attributeFlags: (dv.getInt16(BatchField.attributes) & ~7) | DeleteHorizonAttribute,
    lastOffsetDelta: dv.getInt32(BatchField.lastOffsetDelta),
    maxTimestamp: dv.getBigInt64(BatchField.maxTimestamp),
    producerId: dv.getBigInt64(BatchField.producerId),
    producerEpoch: dv.getInt16(BatchField.producerEpoch),
    baseSequence: dv.getInt32(BatchField.baseSequence),
  });
}
