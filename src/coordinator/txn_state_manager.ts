// TransactionStateManager: where transactional ids live (Kafka 3.8 TransactionStateManager.scala).
// Each id belongs to partition abs(javaHash(id)) % transaction.state.log.num.partitions of
// __transaction_state; the broker leading that partition is the id's coordinator. The partition's
// log is the durable state: one record per transition (key: the id; value: producer id, epoch,
// timeout, state, partitions, timestamps; protocol/internal/txn_log.ts), a tombstone when an idle
// id expires. Compaction keeps the latest record per id, so replaying the partition from its start
// rebuilds every id.
//
// Invariants: an id is answered for only while its partition is loaded here (NOT_COORDINATOR /
// COORDINATOR_LOAD_IN_PROGRESS otherwise), under the coordinator epoch (the partition's leader
// epoch) it was loaded at; a transition is applied in memory only after its record was appended
// under that same epoch; a partition reloaded after a leadership change completes the
// transactions it finds prepared (PrepareCommit / PrepareAbort) by sending their markers again.

import type { Clock } from "../platform/mod.ts";
import {
  decodeTransactionLogKey,
  decodeTransactionLogValue,
  encodeTransactionLogKey,
  encodeTransactionLogValue,
  RecordBatchBuilder,
} from "../protocol/mod.ts";
import { assert, ErrorCode, type Logger, txnIdOverheadBytes, txnIdsLoadedBytesMax, txnIdsMakeRoomBackoffMs, txnTombstoneBatchBytesMax } from "../util/mod.ts";
import { offsetKey, splitOffsetKey } from "./group.ts";
import type { OffsetsTopicLog } from "./group_metadata_manager.ts";
import { partitionForGroup } from "./group_partition.ts";
import { replayPartition } from "./partition_replay.ts";
import { TRANSACTION_STATE_TOPIC, type TransactionConfig } from "./txn_config.ts";
import { isExpirationAllowed, NO_PRODUCER_EPOCH, NO_PRODUCER_ID, TransactionMetadata, txnStateFromId, txnStateIds, type TxnTransit } from "./txn_metadata.ts";

/** The broker's side of __transaction_state: the same contract as the offsets topic's. */
export type TxnTopicLog = OffsetsTopicLog;

export type TxnLookup =
  | { ok: false; errorCode: number }
  | { ok: true; coordinatorEpoch: number; metadata: TransactionMetadata | undefined };

/** Called for each transaction a load finds prepared: send its markers, then complete it. */
export type SendTxnMarkers = (coordinatorEpoch: number, committed: boolean, metadata: TransactionMetadata, complete: TxnTransit) => void;

export interface TimedOutTxn {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
}

interface CacheEntry {
  coordinatorEpoch: number;
  /** In the order of their last update (least recent first): the early expiry takes from the front. */
  txns: Map<string, TransactionMetadata>;
  /** What the ids take, counted as txnIdsLoadedBytesMax counts it. */
  bytes: number;
}

/** One id's share of txnIdsLoadedBytesMax. */
function idCost(transactionalId: string): number {
  return txnIdOverheadBytes + 2 * transactionalId.length;
}

export class TxnStateManager {
  /** Loaded partitions of __transaction_state, by partition. */
  private readonly cache = new Map<number, CacheEntry>();
  /** Partitions being loaded, with the coordinator epoch they are loaded at. */
  private readonly loading = new Map<number, number>();
  /** The early expiry under way (one at a time). */
  private makingRoom: Promise<number> | null = null;
  /** After an early expiry that could not free enough, the next waits until then (monotonic ms). */
  private makeRoomNotBeforeMs = 0;

  constructor(
    private readonly log: TxnTopicLog,
    readonly config: TransactionConfig,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** txnIdsLoadedBytesMax (smaller in tests). */
    private readonly idsBytesMax = txnIdsLoadedBytesMax,
  ) {
    this.partitionCount = config.transactionLogNumPartitions;
  }

  /**
   * Partitions of __transaction_state the placement divides by: the topic's own count when it
   * exists (Kafka reads it from ZooKeeper at start-up), else transaction.state.log.num.partitions.
   */
  private partitionCount: number;

  /** The topic exists with this many partitions (it may differ from the config it was created with). */
  setPartitionCount(n: number): void {
    assert(Number.isInteger(n) && n > 0, `__transaction_state partition count ${n}`);
    if (n !== this.partitionCount) this.logger.info({ partitions: n, configured: this.config.transactionLogNumPartitions }, "__transaction_state partition count");
    this.partitionCount = n;
  }

  partitionFor(transactionalId: string): number {
    // Kafka's Utils.abs(transactionalId.hashCode) % partitions: the same placement as a group's.
    return partitionForGroup(transactionalId, this.partitionCount);
  }

  validateTransactionTimeoutMs(ms: number): boolean {
    return ms > 0 && ms <= this.config.transactionMaxTimeoutMs;
  }

  /** The id's metadata (undefined when unknown), or why this broker cannot answer for it. */
  getTransactionState(transactionalId: string): TxnLookup {
    const p = this.partitionFor(transactionalId);
    if (this.loading.has(p)) return { ok: false, errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS };
    const entry = this.cache.get(p);
    if (entry === undefined) return { ok: false, errorCode: ErrorCode.NOT_COORDINATOR };
    return { ok: true, coordinatorEpoch: entry.coordinatorEpoch, metadata: entry.txns.get(transactionalId) };
  }

  /**
   * Adds the metadata unless the id already has some; answers what the id has now. A new id past
   * txnIdsLoadedBytesMax is refused (COORDINATOR_LOAD_IN_PROGRESS) while idle ids make room.
   */
  putTransactionStateIfNotExists(m: TransactionMetadata): TxnLookup {
    const got = this.getTransactionState(m.transactionalId);
    if (!got.ok || got.metadata !== undefined) return got;
    if (!this.hasRoomFor(m.transactionalId)) return { ok: false, errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS };
    const entry = this.cache.get(this.partitionFor(m.transactionalId))!;
    entry.txns.set(m.transactionalId, m);
    entry.bytes += idCost(m.transactionalId);
    return { ok: true, coordinatorEpoch: got.coordinatorEpoch, metadata: m };
  }

  /** What the loaded ids take, counted as txnIdsLoadedBytesMax counts it. */
  get loadedIdBytes(): number {
    let n = 0;
    for (const e of this.cache.values()) n += e.bytes;
    return n;
  }

  /**
   * Whether a new id fits under txnIdsLoadedBytesMax; when it does not, the early expiry of idle
   * ids starts (if not already running), and the caller answers retriable.
   */
  hasRoomFor(transactionalId: string): boolean {
    if (this.loadedIdBytes + idCost(transactionalId) <= this.idsBytesMax) return true;
    this.makeRoom();
    return false;
  }

  /** Every loaded id (for listing and the expiry loops). */
  *allTransactions(): Iterable<{ partition: number; coordinatorEpoch: number; metadata: TransactionMetadata }> {
    for (const [partition, e] of this.cache) for (const metadata of e.txns.values()) yield { partition, coordinatorEpoch: e.coordinatorEpoch, metadata };
  }

  get loadingPartitions(): number {
    return this.loading.size;
  }

  isLoaded(partition: number): boolean {
    return this.cache.has(partition) && !this.loading.has(partition);
  }

  // ---- writing ---------------------------------------------------------------------------------

  /**
   * Appends the transition's record to the id's partition, then applies it (only if the id is
   * still here under the same coordinator epoch). On a failed append the pending state is cleared
   * unless retryOnError says the caller will try again. Resolves to a Kafka error code, with
   * append errors mapped as Kafka's coordinator maps them.
   */
  async appendTransactionToLog(
    transactionalId: string,
    coordinatorEpoch: number,
    transit: TxnTransit,
    retryOnError: (code: number) => boolean = () => false,
  ): Promise<number> {
    const before = this.getTransactionState(transactionalId);
    if (!before.ok) return before.errorCode;
    if (before.metadata === undefined || before.coordinatorEpoch !== coordinatorEpoch) return ErrorCode.NOT_COORDINATOR;
    const b = new RecordBatchBuilder();
    b.append(BigInt(this.clock.nowMs()), encodeTransactionLogKey(transactionalId), encodeTransactionLogValue(transitToValue(transit)));
    const code = mapAppendError(await this.log.append(this.partitionFor(transactionalId), b.build(0)));
    const after = this.getTransactionState(transactionalId);
    if (code === ErrorCode.NONE) {
      if (!after.ok) return after.errorCode;
      if (after.metadata === undefined || after.coordinatorEpoch !== coordinatorEpoch) return ErrorCode.NOT_COORDINATOR;
      after.metadata.completeTransitionTo(transit);
      this.touch(transactionalId, after.metadata);
      return ErrorCode.NONE;
    }
    if (after.ok && after.metadata !== undefined && after.coordinatorEpoch === coordinatorEpoch && !retryOnError(code)) {
      after.metadata.pendingState = null;
    }
    this.logger.info({ transactionalId, state: transit.state, errorCode: code }, "appending a transaction state change failed");
    return code;
  }

  /** Moves the id to the end of its partition's order (most recently updated). */
  private touch(transactionalId: string, m: TransactionMetadata): void {
    const entry = this.cache.get(this.partitionFor(transactionalId));
    if (entry === undefined || entry.txns.get(transactionalId) !== m) return;
    entry.txns.delete(transactionalId);
    entry.txns.set(transactionalId, m);
  }

  // ---- loading ---------------------------------------------------------------------------------

  /**
   * Becoming leader of a __transaction_state partition at coordinatorEpoch: replays it from its
   * start; its ids answer COORDINATOR_LOAD_IN_PROGRESS until then. Prepared transactions found
   * are handed to sendMarkers to be completed.
   */
  async loadPartition(partition: number, coordinatorEpoch: number, sendMarkers: SendTxnMarkers): Promise<void> {
    this.loading.set(partition, coordinatorEpoch);
    const stillLoading = () => this.loading.get(partition) === coordinatorEpoch;
    const t0 = this.clock.monotonicMs();
    const loaded = new Map<string, TransactionMetadata>();
    const records = await replayPartition(
      this.log,
      TRANSACTION_STATE_TOPIC,
      partition,
      this.config.transactionLogLoadBufferSize,
      this.clock,
      this.logger,
      (key, value) => this.replay(loaded, partition, key, value),
      stillLoading,
    );
    // Unloaded (or reloaded at another epoch) meanwhile.
    if (records === null || !stillLoading()) return;
    const previous = this.cache.get(partition);
    if (previous !== undefined) this.logger.warn({ partition, coordinatorEpoch, previous: previous.coordinatorEpoch }, "replaced loaded transaction metadata");
    let bytes = 0;
    for (const id of loaded.keys()) bytes += idCost(id);
    this.cache.set(partition, { coordinatorEpoch, txns: loaded, bytes });
    const pending: { m: TransactionMetadata; t: TxnTransit; committed: boolean }[] = [];
    for (const m of loaded.values()) {
      if (m.state === "PrepareCommit" || m.state === "PrepareAbort") {
        pending.push({ m, committed: m.state === "PrepareCommit", t: m.prepareComplete(this.clock.nowMs()) });
      }
    }
    // Out of loading first, so completing these is not refused as "load in progress".
    this.loading.delete(partition);
    for (const { m, t, committed } of pending) sendMarkers(coordinatorEpoch, committed, m, t);
    // A takeover (a dead broker's partitions) may bring more ids than fit.
    if (this.loadedIdBytes > this.idsBytesMax) this.makeRoom();
    this.logger.info(
      { partition, coordinatorEpoch, transactionalIds: loaded.size, prepared: pending.length, records, ms: Math.round(this.clock.monotonicMs() - t0) },
      "loaded __transaction_state partition",
    );
  }

  private replay(loaded: Map<string, TransactionMetadata>, partition: number, key: Uint8Array | null, value: Uint8Array | null): void {
    if (key === null) return;
    const k = decodeTransactionLogKey(key);
    if (k.kind !== "txn") {
      this.logger.warn({ partition, key: k }, "skipped a __transaction_state record with an unknown or unreadable key");
      return;
    }
    if (value === null) return void loaded.delete(k.transactionalId);
    const v = decodeTransactionLogValue(value);
    if (v.kind !== "txn") {
      this.logger.warn({ partition, transactionalId: k.transactionalId, reason: v.error }, "skipped an unreadable __transaction_state value");
      return;
    }
    const state = txnStateFromId(v.transactionStatus)!;
    // As Kafka reads it: the last producer id and epoch are not in the record.
    const m = new TransactionMetadata(
      k.transactionalId,
      v.producerId,
      NO_PRODUCER_ID,
      v.producerEpoch,
      NO_PRODUCER_EPOCH,
      v.transactionTimeoutMs,
      state,
      new Set(),
      Number(v.transactionStartTimestampMs),
      Number(v.transactionLastUpdateTimestampMs),
    );
    if (state !== "Empty") for (const tp of v.transactionPartitions ?? []) for (const p of tp.partitionIds) m.partitions.add(offsetKey(tp.topic, p));
    loaded.delete(k.transactionalId); // the order of last updates, as touch() keeps it
    loaded.set(k.transactionalId, m);
  }

  /** The partition moved away (coordinatorEpoch given: only if still at that epoch), or the broker stops. */
  unloadPartition(partition: number, coordinatorEpoch?: number): void {
    // As Kafka: a load is stopped only if it is the one at that epoch; what is loaded goes.
    if (coordinatorEpoch === undefined || this.loading.get(partition) === coordinatorEpoch) this.loading.delete(partition);
    if (this.cache.delete(partition)) this.logger.info({ partition, coordinatorEpoch }, "unloaded __transaction_state partition");
  }

  unloadAll(): void {
    this.loading.clear();
    this.cache.clear();
  }

  // ---- expiry ----------------------------------------------------------------------------------

  /** Ongoing transactions past their timeout, with nothing pending (the abort loop's candidates). */
  timedOutTransactions(): TimedOutTxn[] {
    const now = this.clock.nowMs();
    const out: TimedOutTxn[] = [];
    for (const { metadata: m } of this.allTransactions()) {
      if (m.pendingState !== null || m.state !== "Ongoing") continue;
      if (m.txnStartTimestampMs + m.txnTimeoutMs < now) out.push({ transactionalId: m.transactionalId, producerId: m.producerId, producerEpoch: m.producerEpoch });
    }
    return out;
  }

  /**
   * transactional.id.expiration.ms: ids idle (Empty, CompleteCommit, CompleteAbort, nothing
   * pending) for longer get a tombstone and are forgotten once it is written; a later
   * InitProducerId starts them afresh with a new producer id. Returns the ids removed.
   */
  async removeExpiredTransactionalIds(): Promise<number> {
    const now = this.clock.nowMs();
    const expired = (m: TransactionMetadata) => m.txnLastUpdateTimestampMs <= now - this.config.transactionalIdExpirationMs;
    const removed = await this.removeIdleIds(now, () => expired);
    if (removed > 0) this.logger.info({ transactionalIds: removed }, "expired idle transactional ids");
    return removed;
  }

  /** Starts the early expiry past txnIdsLoadedBytesMax unless it is running. */
  private makeRoom(): void {
    if (this.makingRoom !== null || this.clock.monotonicMs() < this.makeRoomNotBeforeMs) return;
    this.makingRoom = this.removeLeastRecentIdleIds().finally(() => (this.makingRoom = null));
    this.makingRoom.catch((e) => this.logger.error({ err: String(e) }, "expiring transactional ids to make room failed"));
  }

  /**
   * Past txnIdsLoadedBytesMax: expires the idle ids least recently updated, each partition its
   * share, until the loaded ids take nine tenths of the bound. Safe as the expiry is: an idle id
   * has no transaction to finish; its producer, if still alive, is told INVALID_PRODUCER_ID_MAPPING
   * at its next transaction and starts again with InitProducerId.
   */
  removeLeastRecentIdleIds(): Promise<number> {
    const now = this.clock.nowMs();
    const total = this.loadedIdBytes;
    const excess = total - Math.floor(this.idsBytesMax * 0.9);
    if (excess <= 0) return Promise.resolve(0);
    return this.removeIdleIds(now, (entry) => {
      let share = Math.ceil((excess * entry.bytes) / total);
      return (m) => {
        if (share <= 0) return false;
        share -= idCost(m.transactionalId);
        return true;
      };
    }).then((removed) => {
      // Nothing (or too little) idle: every id is in a transaction, which its timeout ends; until
      // then new ids are refused without scanning the cache again on each request.
      if (this.loadedIdBytes > this.idsBytesMax * 0.9) this.makeRoomNotBeforeMs = this.clock.monotonicMs() + txnIdsMakeRoomBackoffMs;
      this.logger.warn({ transactionalIds: removed, loadedIdBytes: this.loadedIdBytes, boundBytes: this.idsBytesMax }, "the transaction coordinator's transactional ids reached their memory bound: idle ids expired early");
      return removed;
    });
  }

  /**
   * Writes tombstones for the idle ids (Empty, CompleteCommit, CompleteAbort, nothing pending) a
   * partition's chooser picks, in the partition's order, and forgets them once written.
   */
  private async removeIdleIds(now: number, chooser: (entry: CacheEntry) => (m: TransactionMetadata) => boolean): Promise<number> {
    let removed = 0;
    for (const [partition, entry] of [...this.cache]) {
      if (this.loading.has(partition)) continue;
      const choose = chooser(entry);
      let batch: { b: RecordBatchBuilder; ids: { m: TransactionMetadata; t: TxnTransit }[] } | null = null;
      const flush = async () => {
        if (batch === null) return;
        const { b, ids } = batch;
        batch = null;
        removed += await this.writeTombstones(partition, entry, b, ids);
      };
      for (const m of [...entry.txns.values()]) {
        if (m.pendingState !== null || !isExpirationAllowed(m.state) || !choose(m)) continue;
        const key = encodeTransactionLogKey(m.transactionalId);
        if (batch !== null && batch.b.recordBytes + key.length > txnTombstoneBatchBytesMax) await flush();
        if (m.pendingState !== null || this.cache.get(partition) !== entry) continue; // changed while a batch was written
        batch ??= { b: new RecordBatchBuilder(), ids: [] };
        batch.b.append(BigInt(now), key, null);
        batch.ids.push({ m, t: m.prepareDead() });
      }
      await flush();
    }
    return removed;
  }

  private async writeTombstones(partition: number, entry: CacheEntry, b: RecordBatchBuilder, ids: { m: TransactionMetadata; t: TxnTransit }[]): Promise<number> {
    const code = await this.log.append(partition, b.build(0));
    let removed = 0;
    for (const { m, t } of ids) {
      const current = this.cache.get(partition);
      if (code === ErrorCode.NONE && current === entry && m.pendingState === "Dead" && m.producerEpoch === t.producerEpoch) {
        entry.txns.delete(m.transactionalId);
        entry.bytes -= idCost(m.transactionalId);
        removed++;
      } else {
        this.logger.warn({ transactionalId: m.transactionalId, errorCode: code }, "could not remove an expired transactional id");
        m.pendingState = null;
      }
    }
    return removed;
  }
}

function transitToValue(t: TxnTransit) {
  assert(t.state !== "Empty" || t.partitions.size === 0, "an Empty transaction has no partitions");
  const byTopic = new Map<string, number[]>();
  for (const { topic, partition } of [...t.partitions].map(splitOffsetKey)) {
    let ps = byTopic.get(topic);
    if (ps === undefined) byTopic.set(topic, (ps = []));
    ps.push(partition);
  }
  return {
    producerId: t.producerId,
    producerEpoch: t.producerEpoch,
    transactionTimeoutMs: t.txnTimeoutMs,
    transactionStatus: txnStateIds[t.state],
    transactionPartitions: t.state === "Empty" ? null : [...byTopic].map(([topic, partitionIds]) => ({ topic, partitionIds })),
    transactionLastUpdateTimestampMs: BigInt(t.txnLastUpdateTimestampMs),
    transactionStartTimestampMs: BigInt(t.txnStartTimestampMs),
  };
}

/** Append errors as Kafka's TransactionStateManager hands them to the coordinator's callers. */
export function mapAppendError(code: number): number {
  switch (code) {
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode.NOT_ENOUGH_REPLICAS:
    case ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case ErrorCode.REQUEST_TIMED_OUT:
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    case ErrorCode.NOT_LEADER_OR_FOLLOWER:
    case ErrorCode.KAFKA_STORAGE_ERROR:
      return ErrorCode.NOT_COORDINATOR;
    case ErrorCode.MESSAGE_TOO_LARGE:
    case ErrorCode.RECORD_LIST_TOO_LARGE:
      return ErrorCode.UNKNOWN_SERVER_ERROR;
    default:
      return code;
  }
}
