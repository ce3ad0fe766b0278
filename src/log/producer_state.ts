// ProducerStateManager: one partition's idempotent-producer state (Kafka 3.8's
// ProducerStateManager, ProducerAppendInfo, ProducerStateEntry), in memory; the files are
// producer_snapshot.ts's and log_producer_state.ts's.
//
// Per producer id: its epoch, the metadata of its last producerBatchesRetained batches (sequence
// range, offsets, max timestamp), oldest first, and its last timestamp. Kafka's rules:
// - A leader append (origin client) is checked batch by batch, each batch against the state the
//   earlier batches of the same record set would leave (Kafka's ProducerAppendInfo):
//   an epoch below the producer's is INVALID_PRODUCER_EPOCH; a new epoch must start at sequence
//   0 unless the producer has no epoch yet; in the same epoch the first sequence must follow the
//   last one (int32 wrap to 0), unless the producer is unknown (no epoch: any sequence, KIP-360,
//   as Kafka 3.x accepts a producer whose state expired or was never seen). Otherwise
//   OUT_OF_ORDER_SEQUENCE_NUMBER. A plain batch of a producer whose transaction is open is
//   INVALID_TXN_STATE.
// - A batch whose (epoch, first sequence, last sequence) equals one of the producer's retained
//   batches, in the committed state (Kafka's findDuplicateBatch), is a duplicate: nothing of the
//   set is appended and the answer is the original batch's offsets.
// - A follower's append and a replay of the log at load (origin replication) update the state
//   without sequence checks (an epoch going back is only logged), so a new leader deduplicates.
// - An epoch change drops the retained batches. Entries do not go when the log start offset
//   moves (Kafka 3.x); they expire after producer.id.expiration.ms since their last batch's max
//   timestamp, unless a transaction is open.
// - mapEndOffset: the offset the state covers up to (exclusive); the Log keeps it at the log end
//   offset, since every append updates the state synchronously.
//
// Past Kafka: at most producerStateEntriesMax entries; beyond it the least recently written one
// without an open transaction is evicted (Kafka 3.8 has no such bound). Its next write is then
// accepted with any sequence, as an expired producer's is.
//
// Transactions (Kafka's ProducerAppendInfo.appendDataBatch / appendEndTxnMarker): a producer's
// first transactional batch opens its transaction at the batch's first offset
// (currentTxnFirstOffset, an ongoing transaction); its marker (a control batch) completes it. A
// leader's marker is checked first (checkMarker: an older producer epoch is
// INVALID_PRODUCER_EPOCH, an older coordinator epoch TRANSACTION_COORDINATOR_FENCED); a
// follower's or a replayed one is not. A completed transaction stays unstable until the high
// watermark passes its marker (Kafka's unreplicatedTxns), so firstUnstableOffset is the first
// offset of the oldest ongoing or unreplicated transaction: the last stable offset is the high
// watermark capped by it (Log.lastStableOffset). A marker of a producer with no open transaction
// completes nothing (Kafka writes it, and it does not touch the last stable offset or the index).
//
// The hot path reads batch headers only: a record set without a producer id (the high int32 of
// producerId negative) costs one read per batch and allocates nothing.

import { BatchField, batchLogOverhead, batchSizeAt, controlMarkerAt, type EndTxnMarker, view } from "../protocol/mod.ts";
import { assert, ErrorCode, KafkaError, type Logger, producerBatchesRetained, producerStateEntriesMax } from "../util/mod.ts";
import { type Timestamp, timestampFromView } from "./timestamp.ts";

export const NO_PRODUCER_ID = -1n;
export const NO_PRODUCER_EPOCH = -1;
export const NO_SEQUENCE = -1;

/** producer.id.expiration.ms default (Kafka's). */
export const producerIdExpirationMsDefault = 86_400_000;

export interface BatchMetadata {
  firstSeq: number;
  lastSeq: number;
  firstOffset: number;
  lastOffset: number;
  timestampMs: number;
}

export interface ProducerStateEntry {
  producerId: bigint;
  producerEpoch: number;
  /** Oldest first, at most producerBatchesRetained. */
  batches: readonly BatchMetadata[];
  lastTimestampMs: number;
  /** -1 until transactions. */
  coordinatorEpoch: number;
  /** -1: no ongoing transaction. */
  currentTxnFirstOffset: number;
}

class Entry implements ProducerStateEntry {
  batches: BatchMetadata[] = [];
  lastTimestampMs = -1;
  coordinatorEpoch = -1;
  currentTxnFirstOffset = -1;
  constructor(readonly producerId: bigint, public producerEpoch: number) {}

  get lastSeq(): number {
    return this.batches.length === 0 ? NO_SEQUENCE : this.batches[this.batches.length - 1].lastSeq;
  }

  addBatch(epoch: number, b: BatchMetadata): void {
    if (epoch !== this.producerEpoch) {
      this.batches = [];
      this.producerEpoch = epoch;
    }
    if (this.batches.length >= producerBatchesRetained) this.batches.shift();
    this.batches.push(b);
    this.lastTimestampMs = b.timestampMs;
  }
}

/** Kafka's DefaultRecordBatch.incrementSequence: sequences wrap from int32 max to 0. */
export function incrementSequence(seq: number, increment: number): number {
  return seq > 0x7fffffff - increment ? increment - (0x7fffffff - seq) - 1 : seq + increment;
}

function inSequence(lastSeq: number, nextSeq: number): boolean {
  return nextSeq === lastSeq + 1 || (nextSeq === 0 && lastSeq === 0x7fffffff);
}

function timestampMsOf(ts: Timestamp): number {
  if (typeof ts === "number") return ts;
  return ts > 0n ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER;
}

/** One batch of a record set carrying a producer id, with the offsets it gets (or has). */
export interface ProducerBatch {
  producerId: bigint;
  epoch: number;
  firstSeq: number;
  lastSeq: number;
  firstOffset: number;
  lastOffset: number;
  timestampMs: number;
  transactional: boolean;
  /** The end-transaction marker of a control batch, null for a data batch. */
  marker: EndTxnMarker | null;
}

/** A transaction a marker ended (Kafka's CompletedTxn), with the last stable offset it left. */
export interface CompletedTxn {
  producerId: bigint;
  firstOffset: number;
  /** The marker's offset. */
  lastOffset: number;
  aborted: boolean;
  /** Kafka's lastStableOffset(completedTxn): the next ongoing transaction's first offset, or past the marker. */
  lastStableOffset: number;
}

/**
 * What a leader append does to the state: null (no batch has a producer id), the producer batches
 * to commit after the append, or the original of a duplicate (nothing to append).
 */
export type LeaderAppendCheck = null | { duplicate: null; batches: ProducerBatch[] } | { duplicate: BatchMetadata; batches: null };

function int32At(b: Uint8Array, i: number): number {
  return (b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3];
}

/** Whether any batch has a producer id: the common answer (no) costs two reads a batch, no allocation. */
function anyProducerId(records: Uint8Array): boolean {
  for (let pos = 0; pos + BatchField.recordCount <= records.length;) {
    if (int32At(records, pos + BatchField.producerId) >= 0) return true;
    const size = int32At(records, pos + BatchField.batchLength) + batchLogOverhead;
    if (size <= batchLogOverhead) return false;
    pos += size;
  }
  return false;
}

/** The producer batches of a record set whose first batch starts at firstOffset (leader) or as stamped (follower). */
function producerBatchesOf(records: Uint8Array, firstOffset: number | null): ProducerBatch[] | null {
  if (!anyProducerId(records)) return null;
  const dv = view(records);
  let out: ProducerBatch[] | null = null;
  let offset = firstOffset ?? 0;
  for (let pos = 0; pos + BatchField.recordCount <= records.length;) {
    const size = batchSizeAt(dv, pos);
    const lastOffsetDelta = dv.getInt32(pos + BatchField.lastOffsetDelta);
    // A stored batch's own base offset (a safe integer), read without making a bigint.
    const base = firstOffset === null ? dv.getInt32(pos + BatchField.baseOffset) * 0x1_0000_0000 + dv.getUint32(pos + BatchField.baseOffset + 4) : offset;
    // producerId -1 (none) has a negative high word: no bigint is made for plain batches.
    const control = (dv.getInt16(pos + BatchField.attributes) & 0x20) !== 0;
    // A control batch that is not an end-transaction marker (an unknown type) is skipped, as Kafka does.
    const marker = control ? controlMarkerAt(records, pos, size) : null;
    if (dv.getInt32(pos + BatchField.producerId) >= 0 && (!control || marker !== null)) {
      const firstSeq = dv.getInt32(pos + BatchField.baseSequence);
      const b: ProducerBatch = {
        producerId: dv.getBigInt64(pos + BatchField.producerId),
        epoch: dv.getInt16(pos + BatchField.producerEpoch),
        firstSeq,
        lastSeq: incrementSequence(firstSeq, lastOffsetDelta),
        firstOffset: base,
        lastOffset: base + lastOffsetDelta,
        timestampMs: timestampMsOf(timestampFromView(dv, pos + BatchField.maxTimestamp)),
        transactional: (dv.getInt16(pos + BatchField.attributes) & 0x10) !== 0,
        marker,
      };
      (out ??= []).push(b);
    }
    offset = base + lastOffsetDelta + 1;
    if (size <= 0) break;
    pos += size;
  }
  return out;
}

export class ProducerStateManager {
  /** Insertion order is write order: the first entry without a transaction is the eviction victim. */
  private producers = new Map<bigint, Entry>();
  private _mapEndOffset: number;
  /** The entry written last (the last in `producers`' order), or null. */
  private lastWritten: Entry | null = null;
  /** Set when the entries differ from what the latest snapshot (or none: empty) holds. */
  dirty = false;
  /** producer.id.expiration.ms (set by the LogManager). */
  expirationMs = producerIdExpirationMsDefault;
  /** Open transactions: producer id -> first offset, in first-offset order (Kafka's ongoingTxns). */
  private ongoing = new Map<bigint, number>();
  /** Completed transactions whose marker the high watermark has not passed yet (Kafka's unreplicatedTxns). */
  private unreplicated: CompletedTxn[] = [];

  constructor(readonly topicPartition: string, private readonly logger: Logger, mapEndOffset: number, readonly entriesMax = producerStateEntriesMax) {
    this._mapEndOffset = mapEndOffset;
  }

  activeProducers(): ReadonlyMap<bigint, ProducerStateEntry> {
    return this.producers;
  }

  lastEntry(producerId: bigint): ProducerStateEntry | undefined {
    return this.producers.get(producerId);
  }

  get mapEndOffset(): number {
    return this._mapEndOffset;
  }

  updateMapEndOffset(offset: number): void {
    this._mapEndOffset = offset;
  }

  get isEmpty(): boolean {
    return this.producers.size === 0;
  }

  /**
   * Checks a validated record set a leader is about to append at firstOffset (see the file
   * comment). Throws KafkaError INVALID_PRODUCER_EPOCH or OUT_OF_ORDER_SEQUENCE_NUMBER; returns what
   * commitLeaderAppend takes after the append. Must run with no await before the append.
   */
  checkLeaderAppend(records: Uint8Array, firstOffset: number): LeaderAppendCheck {
    const batches = producerBatchesOf(records, firstOffset);
    if (batches === null) return null;
    // Kafka checks duplicates against the committed state only, and stops at the first.
    for (const b of batches) {
      const dup = this.findDuplicate(b);
      if (dup !== null) return { duplicate: dup, batches: null };
    }
    // Per producer in this set: the epoch and last sequence the earlier batches left.
    let pending: Map<bigint, { epoch: number; lastSeq: number; txnOpen: boolean }> | null = null;
    for (const b of batches) {
      const current = this.producers.get(b.producerId);
      const currentEpoch = current?.producerEpoch ?? NO_PRODUCER_EPOCH;
      const upd = pending?.get(b.producerId);
      const updEpoch = upd?.epoch ?? currentEpoch;
      if (b.epoch < updEpoch) {
        throw new KafkaError(
          ErrorCode.INVALID_PRODUCER_EPOCH,
          `Epoch of producer ${b.producerId} at offset ${b.firstOffset} in ${this.topicPartition} is ${b.epoch}, which is smaller than the last seen epoch ${updEpoch}`,
        );
      }
      if (b.epoch !== updEpoch) {
        if (b.firstSeq !== 0 && updEpoch !== NO_PRODUCER_EPOCH) {
          throw new KafkaError(
            ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
            `Invalid sequence number for new epoch of producer ${b.producerId} at offset ${b.firstOffset} in partition ${this.topicPartition}: ` +
              `${b.epoch} (request epoch), ${b.firstSeq} (seq. number), ${updEpoch} (current producer epoch)`,
          );
        }
      } else {
        const lastSeq = upd !== undefined ? upd.lastSeq : b.epoch === currentEpoch && current !== undefined ? current.lastSeq : NO_SEQUENCE;
        if (!(currentEpoch === NO_PRODUCER_EPOCH || inSequence(lastSeq, b.firstSeq))) {
          throw new KafkaError(
            ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
            `Out of order sequence number for producer ${b.producerId} at offset ${b.firstOffset} in partition ${this.topicPartition}: ` +
              `${b.firstSeq} (incoming seq. number), ${lastSeq} (current end sequence number)`,
          );
        }
      }
      // Kafka's appendDataBatch: a plain batch while the producer's transaction is open.
      const txnOpen = upd?.txnOpen ?? (current !== undefined && current.currentTxnFirstOffset >= 0);
      if (txnOpen && !b.transactional) {
        throw new KafkaError(ErrorCode.INVALID_TXN_STATE, `Expected transactional write from producer ${b.producerId} at offset ${b.firstOffset} in partition ${this.topicPartition}`);
      }
      if (batches.length > 1) (pending ??= new Map()).set(b.producerId, { epoch: b.epoch, lastSeq: b.lastSeq, txnOpen: txnOpen || b.transactional });
    }
    return { duplicate: null, batches };
  }

  private findDuplicate(b: ProducerBatch): BatchMetadata | null {
    const e = this.producers.get(b.producerId);
    if (e === undefined || e.producerEpoch !== b.epoch) return null;
    for (const m of e.batches) if (m.firstSeq === b.firstSeq && m.lastSeq === b.lastSeq) return m;
    return null;
  }

  /**
   * Checks a marker the leader is about to write (Kafka's appendEndTxnMarker, origin COORDINATOR):
   * throws KafkaError INVALID_PRODUCER_EPOCH or TRANSACTION_COORDINATOR_FENCED. Must run with no
   * await before the append.
   */
  checkMarker(producerId: bigint, producerEpoch: number, coordinatorEpoch: number): void {
    const e = this.producers.get(producerId);
    if (e === undefined) return;
    if (producerEpoch < e.producerEpoch) {
      throw new KafkaError(
        ErrorCode.INVALID_PRODUCER_EPOCH,
        `Epoch of producer ${producerId} in ${this.topicPartition} is ${producerEpoch}, which is smaller than the last seen epoch ${e.producerEpoch}`,
      );
    }
    if (e.coordinatorEpoch > coordinatorEpoch) {
      throw new KafkaError(
        ErrorCode.TRANSACTION_COORDINATOR_FENCED,
        `Invalid coordinator epoch for producer ${producerId} in ${this.topicPartition}: ${coordinatorEpoch} (zombie), ${e.coordinatorEpoch} (current)`,
      );
    }
  }

  /**
   * Records the batches of a leader append checkLeaderAppend (or checkMarker) passed, once they
   * are in the log; returns the transactions its markers completed (null: none).
   */
  commit(batches: readonly ProducerBatch[] | null): CompletedTxn[] | null {
    if (batches === null) return null;
    let completed: CompletedTxn[] | null = null;
    for (const b of batches) {
      const c = this.apply(b);
      if (c !== null) (completed ??= []).push(c);
    }
    return completed;
  }

  /** The producer batch of a marker batch the leader wrote at firstOffset (for commit). */
  markerBatches(records: Uint8Array, firstOffset: number): ProducerBatch[] | null {
    return producerBatchesOf(records, firstOffset);
  }

  /** The first offset of the oldest ongoing or not yet replicated transaction, or null (Kafka's firstUnstableOffset). */
  get firstUnstableOffset(): number | null {
    let first: number | null = null;
    for (const o of this.ongoing.values()) {
      first = o;
      break;
    }
    for (const t of this.unreplicated) if (first === null || t.firstOffset < first) first = t.firstOffset;
    return first;
  }

  /** The high watermark moved: completed transactions whose marker is below it are stable (Kafka's onHighWatermarkUpdated). */
  onHighWatermarkUpdated(highWatermark: number): void {
    if (this.unreplicated.length === 0) return;
    this.unreplicated = this.unreplicated.filter((t) => t.lastOffset >= highWatermark);
  }

  /** Open transactions (producer id -> first offset), oldest first. */
  get ongoingTxns(): ReadonlyMap<bigint, number> {
    return this.ongoing;
  }

  /**
   * Updates the state from batches already in the log (a follower's append, a replay at load):
   * Kafka's origin REPLICATION, no sequence checks. Batches below `from` are skipped.
   */
  updateFromLog(records: Uint8Array, from = 0): CompletedTxn[] | null {
    const batches = producerBatchesOf(records, null);
    if (batches === null) return null;
    let completed: CompletedTxn[] | null = null;
    for (const b of batches) {
      if (b.firstOffset < from) continue;
      const e = this.producers.get(b.producerId);
      if (e !== undefined && b.epoch < e.producerEpoch) {
        this.logger.warn({ producerId: String(b.producerId), epoch: b.epoch, lastEpoch: e.producerEpoch, offset: b.firstOffset }, "producer epoch went back in a replicated batch");
      }
      const c = this.apply(b);
      if (c !== null) (completed ??= []).push(c);
    }
    return completed;
  }

  private apply(b: ProducerBatch): CompletedTxn | null {
    assert(b.producerId >= 0n, "producer state is kept for producer ids only");
    let e = this.producers.get(b.producerId);
    if (e === undefined) {
      e = new Entry(b.producerId, b.epoch);
      this.producers.set(b.producerId, e);
      if (this.producers.size > this.entriesMax) this.evictOne();
    } else if (e !== this.lastWritten) {
      // Moved to the end: the map's order is the order of last writes (already so for the last writer).
      this.producers.delete(b.producerId);
      this.producers.set(b.producerId, e);
    }
    this.lastWritten = e;
    this.dirty = true;
    if (b.marker !== null) return this.completeTxn(e, b, b.marker);
    e.addBatch(b.epoch, { firstSeq: b.firstSeq, lastSeq: b.lastSeq, firstOffset: b.firstOffset, lastOffset: b.lastOffset, timestampMs: b.timestampMs });
    if (b.transactional && e.currentTxnFirstOffset < 0) {
      e.currentTxnFirstOffset = b.firstOffset;
      this.ongoing.set(b.producerId, b.firstOffset);
    }
    return null;
  }

  /** A marker at b.firstOffset ends the producer's transaction (Kafka's appendEndTxnMarker, then completeTxn). */
  private completeTxn(e: Entry, b: ProducerBatch, marker: EndTxnMarker): CompletedTxn | null {
    let completed: CompletedTxn | null = null;
    if (e.currentTxnFirstOffset >= 0) {
      let lastStableOffset = b.lastOffset + 1;
      for (const [id, first] of this.ongoing) {
        if (id === b.producerId) continue;
        lastStableOffset = first;
        break;
      }
      completed = { producerId: b.producerId, firstOffset: e.currentTxnFirstOffset, lastOffset: b.firstOffset, aborted: !marker.committed, lastStableOffset };
      this.ongoing.delete(b.producerId);
      this.unreplicated.push(completed);
    }
    if (b.epoch !== e.producerEpoch) {
      e.batches = [];
      e.producerEpoch = b.epoch;
    }
    e.currentTxnFirstOffset = -1;
    e.coordinatorEpoch = marker.coordinatorEpoch;
    e.lastTimestampMs = b.timestampMs;
    return completed;
  }

  /** The least recently written producer without an open transaction goes (see the file comment). */
  private evictOne(): void {
    for (const [id, e] of this.producers) {
      if (e.currentTxnFirstOffset >= 0) continue;
      this.producers.delete(id);
      if (e === this.lastWritten) this.lastWritten = null;
      this.logger.debug({ producerId: String(id), entriesMax: this.entriesMax }, "evicted the least recently written producer");
      return;
    }
  }

  /** Kafka's removeExpiredProducers: producers idle for expirationMs, with no open transaction. */
  removeExpiredProducers(nowMs: number): number {
    let removed = 0;
    for (const [id, e] of this.producers) {
      if (this.isExpired(e, nowMs)) {
        this.producers.delete(id);
        if (e === this.lastWritten) this.lastWritten = null;
        removed++;
      }
    }
    if (removed > 0) this.dirty = true;
    return removed;
  }

  private isExpired(e: ProducerStateEntry, nowMs: number): boolean {
    return e.currentTxnFirstOffset < 0 && nowMs - e.lastTimestampMs >= this.expirationMs;
  }

  /**
   * Replaces the state with entries read from a snapshot covering offsets below `offset`
   * (expired ones left out, as Kafka's loadFromSnapshot does).
   */
  loadEntries(entries: readonly ProducerStateEntry[], offset: number, nowMs: number): void {
    this.producers.clear();
    this.lastWritten = null;
    this.ongoing.clear();
    this.unreplicated = [];
    const sorted = [...entries].sort((a, b) => a.lastTimestampMs - b.lastTimestampMs);
    for (const s of sorted) {
      if (this.isExpired(s, nowMs)) continue;
      const e = new Entry(s.producerId, s.producerEpoch);
      e.batches = s.batches.slice(-producerBatchesRetained);
      e.lastTimestampMs = s.lastTimestampMs;
      e.coordinatorEpoch = s.coordinatorEpoch;
      e.currentTxnFirstOffset = s.currentTxnFirstOffset;
      this.producers.set(s.producerId, e);
      if (this.producers.size > this.entriesMax) this.evictOne();
    }
    const open = sorted.filter((s) => s.currentTxnFirstOffset >= 0 && this.producers.has(s.producerId));
    for (const s of open.sort((a, b) => a.currentTxnFirstOffset - b.currentTxnFirstOffset)) this.ongoing.set(s.producerId, s.currentTxnFirstOffset);
    this._mapEndOffset = offset;
    this.dirty = false;
  }

  /** Empty state covering everything below offset (Kafka's truncateFullyAndStartAt, without the files). */
  clear(offset: number): void {
    if (this.producers.size > 0) this.dirty = true;
    this.producers.clear();
    this.lastWritten = null;
    this.ongoing.clear();
    this.unreplicated = [];
    this._mapEndOffset = offset;
  }
}
