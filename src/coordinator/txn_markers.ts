// TxnMarkerChannel: completes prepared transactions (Kafka 3.8 TransactionMarkerChannelManager and
// TransactionMarkerRequestCompletionHandler). Once PrepareCommit / PrepareAbort is in the log, the
// coordinator asks the leader of every partition of the transaction to write a commit / abort
// marker (WriteTxnMarkers, through the TxnMarkerSender the broker provides). A partition that
// answers NONE is done; retriable errors (no leader, not enough replicas, timeouts, storage) and
// unreachable brokers send it again, to whatever broker leads it then; a fenced producer epoch or
// coordinator epoch ends the attempt (another transition owns the id now); a partition whose topic
// is gone is skipped. When no partition is left, CompleteCommit / CompleteAbort is appended, and
// the id may start its next transaction.
//
// Invariants: at most one WriteTxnMarkers in flight per broker (markers queued meanwhile go in the
// next, up to txnMarkersPerRequestMax); a completion is written only under the coordinator epoch
// the markers were sent at; losing the __transaction_state partition drops its queued markers (the
// next leader resends them when it loads the partition).

import type { Clock, Timer } from "../platform/mod.ts";
import { ErrorCode, type Logger, txnMarkerRetryBackoffMs, txnMarkersPerRequestMax } from "../util/mod.ts";
import type { TransactionMetadata, TxnTransit } from "./txn_metadata.ts";
import type { TxnStateManager } from "./txn_state_manager.ts";

export interface TxnMarkerEntry {
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
  /** true: a commit marker; false: an abort marker. */
  committed: boolean;
  partitions: { topic: string; partition: number }[];
}

/** The broker's side: WriteTxnMarkers (v1) to one broker, over the inter-broker listener. */
export interface TxnMarkerSender {
  /**
   * Resolves to each marker's per-partition error codes, in the order sent: `errors[i][j]` is the
   * answer for `markers[i].partitions[j]`. Rejects when the broker could not be reached or did not
   * answer (Kafka's disconnected response): every marker of the request is sent again.
   */
  send(brokerId: number, markers: TxnMarkerEntry[]): Promise<number[][]>;
}

/**
 * The broker a partition's markers go to: its leader's id; -1 when the partition exists but has
 * no live leader now (held and retried); null when the partition is unknown (its topic deleted:
 * the partition is skipped, as Kafka does).
 */
export type MarkerLeaderLookup = (topic: string, partition: number) => number | null;

/** A transaction whose markers are being written (Kafka's PendingCompleteTxn). */
interface PendingCompleteTxn {
  transactionalId: string;
  coordinatorEpoch: number;
  committed: boolean;
  metadata: TransactionMetadata;
  complete: TxnTransit;
}

interface QueuedMarker {
  txn: PendingCompleteTxn;
  marker: TxnMarkerEntry;
}

/** Errors after which the partition is sent again (Kafka's retriable marker errors). */
const retriable = new Set<number>([
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.NOT_ENOUGH_REPLICAS,
  ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
  ErrorCode.REQUEST_TIMED_OUT,
  ErrorCode.KAFKA_STORAGE_ERROR,
]);

export class TxnMarkerChannel {
  private readonly pending = new Map<string, PendingCompleteTxn>();
  private readonly queues = new Map<number, QueuedMarker[]>();
  private readonly inFlight = new Set<number>();
  /** Markers of partitions with no live leader; retried after the backoff. */
  private unknownBroker: QueuedMarker[] = [];
  private readonly timers = new Set<Timer>();
  private stopped = false;

  constructor(
    private readonly state: TxnStateManager,
    private readonly sender: TxnMarkerSender,
    private readonly leaderOf: MarkerLeaderLookup,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Transactions whose markers are not all written yet. */
  get pendingTransactions(): number {
    return this.pending.size;
  }

  /** Markers queued, not yet sent (all brokers, and those waiting for a leader). */
  get queuedMarkers(): number {
    let n = this.unknownBroker.length;
    for (const q of this.queues.values()) n += q.length;
    return n;
  }

  /** Starts completing a transaction whose PrepareCommit / PrepareAbort is in the log. */
  addTxnMarkersToSend(coordinatorEpoch: number, committed: boolean, metadata: TransactionMetadata, complete: TxnTransit): void {
    const txn: PendingCompleteTxn = { transactionalId: metadata.transactionalId, coordinatorEpoch, committed, metadata, complete };
    if (this.pending.has(txn.transactionalId)) this.logger.info({ transactionalId: txn.transactionalId }, "replaced a pending transaction completion");
    this.pending.set(txn.transactionalId, txn);
    this.enqueue(txn, metadata.producerId, metadata.producerEpoch, metadata.topicPartitions());
    this.maybeWriteTxnCompletion(txn.transactionalId);
  }

  private enqueue(txn: PendingCompleteTxn, producerId: bigint, producerEpoch: number, partitions: { topic: string; partition: number }[]): void {
    const byBroker = new Map<number, { topic: string; partition: number }[]>();
    const gone: { topic: string; partition: number }[] = [];
    for (const tp of partitions) {
      const leader = this.leaderOf(tp.topic, tp.partition);
      if (leader === null) gone.push(tp);
      else {
        let list = byBroker.get(leader);
        if (list === undefined) byBroker.set(leader, (list = []));
        list.push(tp);
      }
    }
    for (const [broker, tps] of byBroker) {
      const q: QueuedMarker = { txn, marker: { producerId, producerEpoch, coordinatorEpoch: txn.coordinatorEpoch, committed: txn.committed, partitions: tps } };
      if (broker < 0) this.unknownBroker.push(q);
      else {
        let queue = this.queues.get(broker);
        if (queue === undefined) this.queues.set(broker, (queue = []));
        queue.push(q);
      }
    }
    if (gone.length > 0) this.skipDeletedPartitions(txn, gone);
    if (this.unknownBroker.length > 0) this.later(() => this.retryUnknownBroker());
    this.pump();
  }

  /** Partitions with no leader anywhere (their topic was deleted) need no marker. */
  private skipDeletedPartitions(txn: PendingCompleteTxn, gone: { topic: string; partition: number }[]): void {
    const m = this.preparedMetadata({ txn, marker: { producerId: -1n, producerEpoch: -1, coordinatorEpoch: txn.coordinatorEpoch, committed: txn.committed, partitions: gone } });
    if (m === null) return;
    this.logger.info({ transactionalId: txn.transactionalId, partitions: gone.map((g) => `${g.topic}-${g.partition}`) }, "no leader known for partitions of a transaction (deleted?): no marker for them");
    for (const tp of gone) m.removePartition(tp.topic, tp.partition);
    this.maybeWriteTxnCompletion(txn.transactionalId);
  }

  private retryUnknownBroker(): void {
    const waiting = this.unknownBroker;
    this.unknownBroker = [];
    for (const q of waiting) {
      if (this.pending.get(q.txn.transactionalId) !== q.txn) continue;
      this.enqueue(q.txn, q.marker.producerId, q.marker.producerEpoch, q.marker.partitions);
    }
  }

  private later(fn: () => void): void {
    if (this.stopped) return;
    const t = this.clock.setTimeout(() => {
      this.timers.delete(t);
      if (!this.stopped) fn();
    }, txnMarkerRetryBackoffMs);
    this.timers.add(t);
  }

  /** Sends what is queued to every broker without a request in flight. */
  private pump(): void {
    if (this.stopped) return;
    for (const [broker, queue] of this.queues) {
      if (this.inFlight.has(broker) || queue.length === 0) continue;
      const batch = queue.splice(0, txnMarkersPerRequestMax).filter((q) => this.pending.get(q.txn.transactionalId) === q.txn);
      if (batch.length === 0) continue;
      this.inFlight.add(broker);
      // (Through a promise: a sender that throws is a failed request, not a crash here.)
      Promise.resolve().then(() => this.sender.send(broker, batch.map((q) => q.marker))).then(
        (errors) => this.onResponse(broker, batch, errors),
        (e) => this.onDisconnected(broker, batch, e),
      ).catch((e) => this.logger.error({ broker, err: String(e) }, "handling a WriteTxnMarkers answer failed"));
    }
  }

  private onDisconnected(broker: number, batch: QueuedMarker[], e: unknown): void {
    this.inFlight.delete(broker);
    if (this.stopped) return;
    this.logger.info({ broker, markers: batch.length, reason: e instanceof Error ? e.message : String(e) }, "WriteTxnMarkers failed; sending again");
    const resend = batch.filter((q) => this.stillOurs(q));
    this.later(() => {
      for (const q of resend) this.enqueue(q.txn, q.marker.producerId, q.marker.producerEpoch, q.marker.partitions);
    });
    this.pump();
  }

  /**
   * The id's metadata, when it is still here under the markers' coordinator epoch and still
   * prepared; otherwise its markers are dropped (a prepared state that changed under pending
   * markers is a bug, logged, as Kafka's handler throws on it).
   */
  private preparedMetadata(q: QueuedMarker): TransactionMetadata | null {
    if (!this.stillOurs(q)) return null;
    const got = this.state.getTransactionState(q.txn.transactionalId) as { ok: true; metadata: TransactionMetadata };
    const m = got.metadata;
    if (m.state === "PrepareCommit" || m.state === "PrepareAbort") return m;
    this.logger.error({ transactionalId: q.txn.transactionalId, state: m.state }, "transaction markers answered for a transaction no longer prepared");
    this.removeMarkersForTxn(q.txn);
    return null;
  }

  /** The id is still here under the markers' coordinator epoch; otherwise its markers are dropped. */
  private stillOurs(q: QueuedMarker): boolean {
    const got = this.state.getTransactionState(q.txn.transactionalId);
    if (got.ok && got.metadata !== undefined && got.coordinatorEpoch === q.marker.coordinatorEpoch) return true;
    this.removeMarkersForTxn(q.txn);
    return false;
  }

  private onResponse(broker: number, batch: QueuedMarker[], errors: number[][]): void {
    this.inFlight.delete(broker);
    if (this.stopped) return;
    batch.forEach((q, i) => this.onMarkerAnswered(q, errors[i]));
    this.pump();
  }

  private onMarkerAnswered(q: QueuedMarker, errors: number[] | undefined): void {
    const { txn, marker } = q;
    const m = this.preparedMetadata(q);
    if (m === null) return;
    if (errors === undefined || errors.length !== marker.partitions.length) {
      this.logger.error({ transactionalId: txn.transactionalId }, "WriteTxnMarkers answer does not match the markers sent; stopping this transaction's markers");
      this.removeMarkersForTxn(txn);
      return;
    }
    const retry: { topic: string; partition: number }[] = [];
    for (let j = 0; j < errors.length; j++) {
      const code = errors[j];
      const tp = marker.partitions[j];
      if (code === ErrorCode.NONE || code === ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT || code === ErrorCode.UNSUPPORTED_VERSION) {
        // (The unsupported ones: the producer could not have written there either.)
        m.removePartition(tp.topic, tp.partition);
      } else if (retriable.has(code)) {
        retry.push(tp);
      } else if (code === ErrorCode.INVALID_PRODUCER_EPOCH || code === ErrorCode.TRANSACTION_COORDINATOR_FENCED) {
        // A newer producer epoch or coordinator owns the partition's state now: this attempt is over.
        this.logger.info({ transactionalId: txn.transactionalId, topic: tp.topic, partition: tp.partition, errorCode: code }, "transaction marker refused for good; stopping");
        this.removeMarkersForTxn(txn);
        return;
      } else {
        // Kafka's handler throws here (CORRUPT_MESSAGE, MESSAGE_TOO_LARGE, ...): the transaction stays prepared.
        this.logger.error({ transactionalId: txn.transactionalId, topic: tp.topic, partition: tp.partition, errorCode: code }, "unexpected error writing a transaction marker; the transaction stays prepared");
        this.removeMarkersForTxn(txn);
        return;
      }
    }
    if (retry.length > 0) this.later(() => this.stillOurs(q) && this.enqueue(txn, marker.producerId, marker.producerEpoch, retry));
    else this.maybeWriteTxnCompletion(txn.transactionalId);
  }

  /** Every marker answered: append CompleteCommit / CompleteAbort. */
  maybeWriteTxnCompletion(transactionalId: string): void {
    const txn = this.pending.get(transactionalId);
    if (txn === undefined || txn.metadata.partitions.size > 0) return;
    this.pending.delete(transactionalId);
    const got = this.state.getTransactionState(transactionalId);
    if (!got.ok) {
      // Not ours any more, or being loaded: the load completes it.
      this.logger.info({ transactionalId, errorCode: got.errorCode }, "not completing the transaction here");
      return;
    }
    if (got.metadata === undefined || got.coordinatorEpoch !== txn.coordinatorEpoch) return;
    void this.tryAppendCompletion(txn);
  }

  private async tryAppendCompletion(txn: PendingCompleteTxn): Promise<void> {
    const code = await this.state.appendTransactionToLog(txn.transactionalId, txn.coordinatorEpoch, txn.complete, (c) => c === ErrorCode.COORDINATOR_NOT_AVAILABLE);
    if (code === ErrorCode.NONE || code === ErrorCode.NOT_COORDINATOR || code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) return;
    if (code === ErrorCode.COORDINATOR_NOT_AVAILABLE) {
      this.later(() => void this.tryAppendCompletion(txn));
      return;
    }
    this.logger.error({ transactionalId: txn.transactionalId, errorCode: code }, "unexpected error appending a transaction's completion");
  }

  /** The __transaction_state partition moved away (or is reloaded): drop its queued markers. */
  removeMarkersForTxnTopicPartition(partition: number): void {
    const ofPartition = (q: QueuedMarker) => this.state.partitionFor(q.txn.transactionalId) === partition;
    for (const q of this.unknownBroker.filter(ofPartition)) this.removeMarkersForTxn(q.txn);
    this.unknownBroker = this.unknownBroker.filter((q) => !ofPartition(q));
    for (const [broker, queue] of this.queues) {
      for (const q of queue.filter(ofPartition)) this.removeMarkersForTxn(q.txn);
      this.queues.set(broker, queue.filter((q) => !ofPartition(q)));
    }
    for (const txn of [...this.pending.values()]) if (this.state.partitionFor(txn.transactionalId) === partition) this.removeMarkersForTxn(txn);
  }

  removeMarkersForTxn(txn: PendingCompleteTxn): void {
    if (this.pending.get(txn.transactionalId) === txn) this.pending.delete(txn.transactionalId);
  }

  shutdown(): void {
    this.stopped = true;
    for (const t of this.timers) t.cancel();
    this.timers.clear();
    this.queues.clear();
    this.unknownBroker = [];
    this.pending.clear();
  }
}
