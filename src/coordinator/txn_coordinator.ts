// TransactionCoordinator: the transaction calls of one broker (Kafka 3.8 TransactionCoordinator.scala),
// the facade the request handlers call. InitProducerId for a transactional id (new producer id,
// epoch bumps, KIP-360 recovery with an expected id/epoch, fencing an ongoing transaction, a new
// producer id when the epochs run out), AddPartitionsToTxn, AddOffsetsToTxn (the group's
// __consumer_offsets partition joins the transaction), EndTxn (PrepareCommit / PrepareAbort in the
// log, the answer, then markers and CompleteCommit / CompleteAbort), the abort of transactions
// past their timeout, the expiry of idle transactional ids, and the loading and unloading of
// __transaction_state partitions as this broker gains and loses their leadership.
//
// Invariants: every answer is Kafka's error code for the case; no await lies between a check of
// an id's metadata and the prepare that guards it (the pending state then keeps other calls out
// until the append is done); a producer id comes from generateProducerId (I's ProducerIdManager)
// and is never reused.

import type { Clock, Timer } from "../platform/mod.ts";
import { ErrorCode, int16StringBytesMax, type Logger, utf8Length } from "../util/mod.ts";
import { offsetKey } from "./group.ts";
import { partitionForGroup } from "./group_partition.ts";
import { OFFSETS_TOPIC } from "./config.ts";
import type { TransactionConfig } from "./txn_config.ts";
import { type MarkerLeaderLookup, TxnMarkerChannel, type TxnMarkerSender } from "./txn_markers.ts";
import {
  isEpochExhausted,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  type PrepareResult,
  TransactionMetadata,
  type TxnState,
  txnStateIds,
  type TxnTransit,
} from "./txn_metadata.ts";
import type { TxnStateManager } from "./txn_state_manager.ts";

export interface InitProducerIdResult {
  errorCode: number;
  producerId: bigint;
  producerEpoch: number;
}

export interface TxnOverview {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  state: TxnState;
  txnTimeoutMs: number;
  /** -1 when no transaction has started. */
  txnStartTimestampMs: number;
  partitions: { topic: string; partition: number }[];
}

export interface TxnCoordinatorDeps {
  /** I's ProducerIdManager.generateProducerId; a rejection answers COORDINATOR_LOAD_IN_PROGRESS (retriable). */
  generateProducerId: () => Promise<bigint>;
  markerSender: TxnMarkerSender;
  leaderOf: MarkerLeaderLookup;
  /** offsets.topic.num.partitions: AddOffsetsToTxn adds the group's __consumer_offsets partition. */
  offsetsTopicNumPartitions: number;
}

const initError = (errorCode: number): InitProducerIdResult => ({ errorCode, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH });

type Prepared = { ok: false; errorCode: number } | { ok: true; coordinatorEpoch: number; transit: TxnTransit };

export class TransactionCoordinator {
  readonly markers: TxnMarkerChannel;
  private timers: Timer[] = [];
  private active = false;

  constructor(
    readonly state: TxnStateManager,
    private readonly deps: TxnCoordinatorDeps,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    this.markers = new TxnMarkerChannel(state, deps.markerSender, deps.leaderOf, clock, logger);
  }

  get config(): TransactionConfig {
    return this.state.config;
  }

  partitionFor(transactionalId: string): number {
    return this.state.partitionFor(transactionalId);
  }

  // ---- InitProducerId ------------------------------------------------------------------------

  /**
   * InitProducerId. transactionalId null: a new producer id at epoch 0 (idempotence only).
   * `expected` is v3+'s producerId/producerEpoch (null when the producer sent -1/-1).
   */
  async handleInitProducerId(transactionalId: string | null, txnTimeoutMs: number, expected: { producerId: bigint; producerEpoch: number } | null): Promise<InitProducerIdResult> {
    if (transactionalId === null) {
      const id = await this.newProducerId();
      return id === null ? initError(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) : { errorCode: ErrorCode.NONE, producerId: id, producerEpoch: 0 };
    }
    if (transactionalId === "") return initError(ErrorCode.INVALID_REQUEST);
    // Its record's key is an int16-length string: Kafka fails writing a longer id (an exception,
    // UNKNOWN_SERVER_ERROR); here it is refused before anything is created.
    if (utf8Length(transactionalId) > int16StringBytesMax) return initError(ErrorCode.UNKNOWN_SERVER_ERROR);
    if (!this.state.validateTransactionTimeoutMs(txnTimeoutMs)) return initError(ErrorCode.INVALID_TRANSACTION_TIMEOUT);

    let got = this.state.getTransactionState(transactionalId);
    if (!got.ok) return initError(got.errorCode);
    if (got.metadata === undefined) {
      // No producer id spent on an id the coordinator has no room for (txnIdsLoadedBytesMax).
      if (!this.state.hasRoomFor(transactionalId)) return initError(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
      const id = await this.newProducerId();
      if (id === null) return initError(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
      // (Another request may have created it, or the partition moved, while the id was fetched.)
      got = this.state.putTransactionStateIfNotExists(TransactionMetadata.fresh(transactionalId, id, txnTimeoutMs, this.clock.nowMs()));
      if (!got.ok) return initError(got.errorCode);
    }
    let prepared = this.prepareInit(transactionalId, txnTimeoutMs, expected, null);
    if (prepared === "needs new producer id") {
      // Epochs exhausted: continue under a new producer id (fetched first; the checks run again after).
      const id = await this.newProducerId();
      if (id === null) return initError(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
      prepared = this.prepareInit(transactionalId, txnTimeoutMs, expected, id);
      if (prepared === "needs new producer id") return initError(ErrorCode.CONCURRENT_TRANSACTIONS);
    }
    if (!prepared.ok) return initError(prepared.errorCode);
    const { coordinatorEpoch, transit } = prepared;
    if (transit.state === "PrepareEpochFence") {
      // An ongoing transaction: abort it under a bumped epoch (never given to anyone), and let
      // the producer retry; its retry bumps the epoch again.
      const code = await this.endTransaction(transactionalId, transit.producerId, transit.producerEpoch, false, false);
      return initError(code === ErrorCode.NONE ? ErrorCode.CONCURRENT_TRANSACTIONS : code);
    }
    const code = await this.state.appendTransactionToLog(transactionalId, coordinatorEpoch, transit);
    if (code !== ErrorCode.NONE) return initError(code);
    this.logger.info(
      { transactionalId, producerId: String(transit.producerId), producerEpoch: transit.producerEpoch, partition: this.partitionFor(transactionalId) },
      "initialized transactional id",
    );
    return { errorCode: ErrorCode.NONE, producerId: transit.producerId, producerEpoch: transit.producerEpoch };
  }

  private async newProducerId(): Promise<bigint | null> {
    try {
      return await this.deps.generateProducerId();
    } catch (e) {
      this.logger.warn({ reason: e instanceof Error ? e.message : String(e) }, "no producer id available");
      return null;
    }
  }

  /** Kafka's prepareInitProducerIdTransit, synchronous; `newId` is the rotated id when epochs ran out. */
  private prepareInit(
    transactionalId: string,
    txnTimeoutMs: number,
    expected: { producerId: bigint; producerEpoch: number } | null,
    newId: bigint | null,
  ): Prepared | "needs new producer id" {
    const got = this.state.getTransactionState(transactionalId);
    if (!got.ok) return got;
    const m = got.metadata;
    if (m === undefined) return { ok: false, errorCode: ErrorCode.CONCURRENT_TRANSACTIONS }; // expired meanwhile: retry
    const wrap = (r: PrepareResult): Prepared => r.ok ? { ok: true, coordinatorEpoch: got.coordinatorEpoch, transit: r.transit } : r;
    if (m.pendingTransitionInProgress) return { ok: false, errorCode: ErrorCode.CONCURRENT_TRANSACTIONS };
    // A given id/epoch is fenced unless the metadata was just created (recovery from
    // UNKNOWN_PRODUCER_ID), the id is the current one (its epoch is checked by the bump), or it is
    // the previous one with exhausted epochs (the retry of a rotation whose answer was lost).
    if (
      expected !== null && !(m.producerEpoch === NO_PRODUCER_EPOCH || expected.producerId === m.producerId ||
        (expected.producerId === m.lastProducerId && isEpochExhausted(expected.producerEpoch)))
    ) return { ok: false, errorCode: ErrorCode.PRODUCER_FENCED };
    switch (m.state) {
      case "PrepareAbort":
      case "PrepareCommit":
        return { ok: false, errorCode: ErrorCode.CONCURRENT_TRANSACTIONS };
      case "CompleteAbort":
      case "CompleteCommit":
      case "Empty":
        if (m.isProducerEpochExhausted && (expected === null || expected.producerEpoch === m.producerEpoch)) {
          if (newId === null) return "needs new producer id";
          return wrap({ ok: true, transit: m.prepareProducerIdRotation(newId, txnTimeoutMs, this.clock.nowMs(), expected !== null) });
        }
        return wrap(m.prepareIncrementProducerEpoch(txnTimeoutMs, expected === null ? null : expected.producerEpoch, this.clock.nowMs()));
      case "Ongoing":
        return wrap({ ok: true, transit: m.prepareFenceProducerEpoch() });
      case "Dead":
      case "PrepareEpochFence":
        // Never a resting state: a bug, as in Kafka.
        this.logger.error({ transactionalId, state: m.state }, "transactional id found in a transient state");
        return { ok: false, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR };
    }
  }

  // ---- AddPartitionsToTxn / AddOffsetsToTxn ---------------------------------------------------

  /** AddPartitionsToTxn (v0-3, and v4's non-verify transactions). */
  handleAddPartitions(transactionalId: string, producerId: bigint, producerEpoch: number, partitions: { topic: string; partition: number }[]): Promise<number> {
    if (transactionalId === "") return Promise.resolve(ErrorCode.INVALID_REQUEST);
    const got = this.state.getTransactionState(transactionalId);
    if (!got.ok) return Promise.resolve(got.errorCode);
    const m = got.metadata;
    if (m === undefined || m.producerId !== producerId) return Promise.resolve(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    if (m.producerEpoch !== producerEpoch) return Promise.resolve(ErrorCode.PRODUCER_FENCED);
    if (m.pendingTransitionInProgress) return Promise.resolve(ErrorCode.CONCURRENT_TRANSACTIONS);
    if (m.state === "PrepareCommit" || m.state === "PrepareAbort") return Promise.resolve(ErrorCode.CONCURRENT_TRANSACTIONS);
    const keys = partitions.map((p) => offsetKey(p.topic, p.partition));
    // Already in the transaction: nothing to write.
    if (m.state === "Ongoing" && keys.every((k) => m.partitions.has(k))) return Promise.resolve(ErrorCode.NONE);
    return this.state.appendTransactionToLog(transactionalId, got.coordinatorEpoch, m.prepareAddPartitions(keys, this.clock.nowMs()));
  }

  /** AddOffsetsToTxn: the group's __consumer_offsets partition joins the transaction. */
  handleAddOffsets(transactionalId: string, producerId: bigint, producerEpoch: number, groupId: string): Promise<number> {
    const partition = partitionForGroup(groupId, this.deps.offsetsTopicNumPartitions);
    return this.handleAddPartitions(transactionalId, producerId, producerEpoch, [{ topic: OFFSETS_TOPIC, partition }]);
  }

  /**
   * AddPartitionsToTxn v4 with verifyOnly (a partition leader asking, KIP-890): NONE for each
   * partition in the ongoing transaction, TRANSACTION_ABORTABLE for the others.
   */
  handleVerifyPartitionsInTransaction(transactionalId: string, producerId: bigint, producerEpoch: number, partitions: { topic: string; partition: number }[]): number[] {
    const all = (code: number) => partitions.map(() => code);
    if (transactionalId === "") return all(ErrorCode.INVALID_REQUEST);
    const got = this.state.getTransactionState(transactionalId);
    if (!got.ok) return all(got.errorCode);
    const m = got.metadata;
    if (m === undefined || m.producerId !== producerId) return all(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    if (m.producerEpoch !== producerEpoch) return all(ErrorCode.PRODUCER_FENCED);
    if (m.state === "PrepareCommit" || m.state === "PrepareAbort") return all(ErrorCode.CONCURRENT_TRANSACTIONS);
    return partitions.map((p) => m.partitions.has(offsetKey(p.topic, p.partition)) ? ErrorCode.NONE : ErrorCode.TRANSACTION_ABORTABLE);
  }

  // ---- EndTxn --------------------------------------------------------------------------------

  /** EndTxn: answers once PrepareCommit / PrepareAbort is in the log; markers follow. */
  handleEndTxn(transactionalId: string, producerId: bigint, producerEpoch: number, committed: boolean): Promise<number> {
    return this.endTransaction(transactionalId, producerId, producerEpoch, committed, true);
  }

  private async endTransaction(transactionalId: string, producerId: bigint, producerEpoch: number, committed: boolean, isFromClient: boolean): Promise<number> {
    if (transactionalId === "") return ErrorCode.INVALID_REQUEST;
    const pre = this.prepareEnd(transactionalId, producerId, producerEpoch, committed, isFromClient);
    if (!pre.ok) return pre.errorCode;
    const { coordinatorEpoch, transit, isEpochFence } = pre;
    const code = await this.state.appendTransactionToLog(transactionalId, coordinatorEpoch, transit);
    if (code !== ErrorCode.NONE) {
      if (isEpochFence) {
        const got = this.state.getTransactionState(transactionalId);
        if (got.ok && got.metadata !== undefined && got.coordinatorEpoch === coordinatorEpoch) {
          // The bumped epoch may not be in the log: the next fence must not bump again.
          got.metadata.hasFailedEpochFence = true;
          this.logger.warn({ transactionalId, errorCode: code, producerEpoch: transit.producerEpoch }, "writing an epoch fence failed");
        }
      }
      return code;
    }
    // The prepared state is in the log: answer, then write the markers.
    const got = this.state.getTransactionState(transactionalId);
    if (!got.ok) return got.errorCode;
    const m = got.metadata;
    if (m === undefined) {
      this.logger.error({ transactionalId }, "prepared transaction vanished from the cache");
      return ErrorCode.NOT_COORDINATOR;
    }
    if (got.coordinatorEpoch !== coordinatorEpoch) return ErrorCode.NOT_COORDINATOR;
    if (m.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (m.producerEpoch !== transit.producerEpoch) return ErrorCode.PRODUCER_FENCED;
    if (m.pendingTransitionInProgress) return ErrorCode.CONCURRENT_TRANSACTIONS;
    const want = committed ? "PrepareCommit" : "PrepareAbort";
    if (m.state !== want) return ErrorCode.INVALID_TXN_STATE;
    this.markers.addTxnMarkersToSend(coordinatorEpoch, committed, m, m.prepareComplete(this.clock.nowMs()));
    return ErrorCode.NONE;
  }

  private prepareEnd(
    transactionalId: string,
    producerId: bigint,
    producerEpoch: number,
    committed: boolean,
    isFromClient: boolean,
  ): { ok: false; errorCode: number } | { ok: true; coordinatorEpoch: number; transit: TxnTransit; isEpochFence: boolean } {
    const got = this.state.getTransactionState(transactionalId);
    if (!got.ok) return got;
    const m = got.metadata;
    if (m === undefined || m.producerId !== producerId) return { ok: false, errorCode: ErrorCode.INVALID_PRODUCER_ID_MAPPING };
    // A client must use the current epoch; the coordinator's own aborts may carry a bumped one.
    if ((isFromClient && producerEpoch !== m.producerEpoch) || producerEpoch < m.producerEpoch) return { ok: false, errorCode: ErrorCode.PRODUCER_FENCED };
    if (m.pendingTransitionInProgress && m.pendingState !== "PrepareEpochFence") return { ok: false, errorCode: ErrorCode.CONCURRENT_TRANSACTIONS };
    const invalid = { ok: false as const, errorCode: ErrorCode.INVALID_TXN_STATE };
    switch (m.state) {
      case "Ongoing": {
        const next = committed ? "PrepareCommit" : "PrepareAbort";
        let isEpochFence = false;
        if (next === "PrepareAbort" && m.pendingState === "PrepareEpochFence") {
          // The fence becomes the abort, under the bumped epoch.
          isEpochFence = true;
          m.pendingState = null;
          m.producerEpoch = producerEpoch;
          m.lastProducerEpoch = NO_PRODUCER_EPOCH;
        }
        return { ok: true, coordinatorEpoch: got.coordinatorEpoch, transit: m.prepareAbortOrCommit(next, this.clock.nowMs()), isEpochFence };
      }
      case "CompleteCommit":
        // A retry of a commit that completed: done. Aborting it is not possible.
        return committed ? { ok: false, errorCode: ErrorCode.NONE } : invalid;
      case "CompleteAbort":
        return committed ? invalid : { ok: false, errorCode: ErrorCode.NONE };
      case "PrepareCommit":
        return committed ? { ok: false, errorCode: ErrorCode.CONCURRENT_TRANSACTIONS } : invalid;
      case "PrepareAbort":
        return committed ? invalid : { ok: false, errorCode: ErrorCode.CONCURRENT_TRANSACTIONS };
      case "Empty":
        return invalid;
      case "Dead":
      case "PrepareEpochFence":
        this.logger.error({ transactionalId, state: m.state }, "transactional id found in a transient state");
        return { ok: false, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR };
    }
  }

  // ---- timeouts and expiry -------------------------------------------------------------------

  /** Aborts every Ongoing transaction past its timeout, fencing its producer (a bumped epoch). */
  abortTimedOutTransactions(): Promise<number[]> {
    const aborts: Promise<number>[] = [];
    for (const t of this.state.timedOutTransactions()) {
      const got = this.state.getTransactionState(t.transactionalId);
      if (!got.ok || got.metadata === undefined) continue;
      const m = got.metadata;
      if (m.producerId !== t.producerId || m.pendingTransitionInProgress) continue;
      const fence = m.prepareFenceProducerEpoch();
      this.logger.info({ transactionalId: t.transactionalId, producerId: String(t.producerId), producerEpoch: t.producerEpoch }, "aborting a transaction past its timeout");
      aborts.push(this.endTransaction(t.transactionalId, fence.producerId, fence.producerEpoch, false, false).then((code) => {
        const quiet = code === ErrorCode.NONE || code === ErrorCode.INVALID_PRODUCER_ID_MAPPING || code === ErrorCode.PRODUCER_FENCED || code === ErrorCode.CONCURRENT_TRANSACTIONS;
        if (!quiet) this.logger.warn({ transactionalId: t.transactionalId, errorCode: code }, "aborting a timed-out transaction failed");
        return code;
      }));
    }
    return Promise.all(aborts);
  }

  // ---- describe and list (DescribeTransactions, ListTransactions, the dashboard) ---------------

  describe(transactionalId: string): { errorCode: number; txn: TxnOverview | null } {
    if (!this.active) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, txn: null };
    if (transactionalId === "") return { errorCode: ErrorCode.INVALID_REQUEST, txn: null };
    const got = this.state.getTransactionState(transactionalId);
    if (!got.ok) return { errorCode: got.errorCode, txn: null };
    if (got.metadata === undefined || got.metadata.state === "Dead") return { errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, txn: null };
    return { errorCode: ErrorCode.NONE, txn: overview(got.metadata) };
  }

  /**
   * ListTransactions: every loaded id but Dead ones, filtered as Kafka filters (producer ids and
   * states when given; durationMs >= 0: only transactions running longer). State names Kafka does
   * not know come back as unknownStateFilters. COORDINATOR_LOAD_IN_PROGRESS while a partition loads.
   */
  list(producerIds: ReadonlySet<bigint> = new Set(), stateNames: readonly string[] = [], durationMs = -1): { errorCode: number; unknownStateFilters: string[]; txns: TxnOverview[] } {
    const none = (errorCode: number) => ({ errorCode, unknownStateFilters: [], txns: [] });
    if (!this.active) return none(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    if (this.state.loadingPartitions > 0) return none(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
    const states = new Set<string>(stateNames.filter((n) => n in txnStateIds));
    const unknownStateFilters = stateNames.filter((n) => !(n in txnStateIds));
    const now = this.clock.nowMs();
    const txns: TxnOverview[] = [];
    for (const { metadata: m } of this.state.allTransactions()) {
      if (m.state === "Dead") continue;
      if (producerIds.size > 0 && !producerIds.has(m.producerId)) continue;
      if (stateNames.length > 0 && !states.has(m.state)) continue;
      if (durationMs >= 0 && now - m.txnStartTimestampMs <= durationMs) continue;
      txns.push(overview(m));
    }
    return { errorCode: ErrorCode.NONE, unknownStateFilters, txns: txns.sort((a, b) => a.transactionalId.localeCompare(b.transactionalId)) };
  }

  // ---- leadership and lifecycle --------------------------------------------------------------

  /** This broker became leader of __transaction_state-partition at coordinatorEpoch (its leader epoch). */
  onElection(partition: number, coordinatorEpoch: number): Promise<void> {
    this.logger.info({ partition, coordinatorEpoch }, "elected transaction coordinator for a partition");
    this.markers.removeMarkersForTxnTopicPartition(partition);
    return this.state.loadPartition(partition, coordinatorEpoch, (epoch, committed, m, complete) => this.markers.addTxnMarkersToSend(epoch, committed, m, complete));
  }

  /** This broker stopped leading __transaction_state-partition. */
  onResignation(partition: number, coordinatorEpoch?: number): void {
    this.state.unloadPartition(partition, coordinatorEpoch);
    this.markers.removeMarkersForTxnTopicPartition(partition);
  }

  startup(enableTransactionalIdExpiration = true): void {
    this.timers.push(this.clock.setInterval(() => {
      this.abortTimedOutTransactions().catch((e) => this.logger.error({ err: String(e) }, "aborting timed-out transactions failed"));
    }, this.config.abortTimedOutTransactionsIntervalMs));
    if (enableTransactionalIdExpiration) {
      this.timers.push(this.clock.setInterval(() => {
        this.state.removeExpiredTransactionalIds().catch((e) => this.logger.error({ err: String(e) }, "expiring transactional ids failed"));
      }, this.config.removeExpiredTransactionalIdsIntervalMs));
    }
    this.active = true;
  }

  shutdown(): void {
    this.active = false;
    for (const t of this.timers) t.cancel();
    this.timers = [];
    this.markers.shutdown();
    this.state.unloadAll();
  }
}

function overview(m: TransactionMetadata): TxnOverview {
  return {
    transactionalId: m.transactionalId,
    producerId: m.producerId,
    producerEpoch: m.producerEpoch,
    state: m.state,
    txnTimeoutMs: m.txnTimeoutMs,
    txnStartTimestampMs: m.txnStartTimestampMs,
    partitions: m.topicPartitions(),
  };
}
