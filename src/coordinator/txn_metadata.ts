// TransactionMetadata: one transactional id's state on its coordinator, and Kafka's transaction
// state machine (Kafka 3.8 TransactionMetadata.scala):
//
//   Empty ──AddPartitions/AddOffsets──▶ Ongoing ──EndTxn(commit)──▶ PrepareCommit ──markers──▶ CompleteCommit
//     ▲                                  │  ╰──EndTxn(abort), timeout──▶ PrepareAbort ──markers──▶ CompleteAbort
//     ╰──InitProducerId (epoch bump)─────┼──────────────────────────────────────────────────────────╯
//                                        ╰──InitProducerId while Ongoing──▶ PrepareEpochFence ──▶ PrepareAbort
//   Empty / CompleteCommit / CompleteAbort ──transactional.id.expiration.ms──▶ Dead (removed)
//
// A change is two steps: prepare* checks the transition is legal and records it as the pending
// state (no other change may start meanwhile: callers answer CONCURRENT_TRANSACTIONS), returning
// the target (a TxnTransit) to append to __transaction_state; completeTransitionTo applies it once
// the append succeeded. So memory never shows what the log does not hold.
//
// Invariants (asserted; a failure is a bug): a transition starts only from one of the target
// state's valid previous states, never while another is pending; epochs are >= 0 except for Dead;
// completing checks the target against the current state as Kafka's completeTransitionTo does.
// Partitions are kept as offsetKey(topic, partition) strings.

import { assert, ErrorCode } from "../util/mod.ts";
import { offsetKey, splitOffsetKey } from "./group.ts";

export type TxnState =
  | "Empty"
  | "Ongoing"
  | "PrepareCommit"
  | "PrepareAbort"
  | "CompleteCommit"
  | "CompleteAbort"
  | "Dead"
  | "PrepareEpochFence";

/** Kafka's TransactionState ids, as __transaction_state stores them. */
export const txnStateIds: Readonly<Record<TxnState, number>> = {
  Empty: 0,
  Ongoing: 1,
  PrepareCommit: 2,
  PrepareAbort: 3,
  CompleteCommit: 4,
  CompleteAbort: 5,
  Dead: 6,
  PrepareEpochFence: 7,
};

const statesById: readonly TxnState[] = ["Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"];

export function txnStateFromId(id: number): TxnState | null {
  return statesById[id] ?? null;
}

/** The states each state may be entered from (Kafka's validPreviousStates). */
export const validPreviousStates: Readonly<Record<TxnState, readonly TxnState[]>> = {
  Empty: ["Empty", "CompleteCommit", "CompleteAbort"],
  Ongoing: ["Ongoing", "Empty", "CompleteCommit", "CompleteAbort"],
  PrepareCommit: ["Ongoing"],
  PrepareAbort: ["Ongoing", "PrepareEpochFence"],
  CompleteCommit: ["PrepareCommit"],
  CompleteAbort: ["PrepareAbort"],
  Dead: ["Empty", "CompleteAbort", "CompleteCommit"],
  PrepareEpochFence: ["Ongoing"],
};

/** States from which an idle transactional id may expire. */
export function isExpirationAllowed(s: TxnState): boolean {
  return s === "Empty" || s === "CompleteCommit" || s === "CompleteAbort";
}

export const NO_PRODUCER_ID = -1n;
export const NO_PRODUCER_EPOCH = -1;
const epochMax = 32767; // Short.MaxValue

/**
 * Kafka never hands out an epoch of Short.MaxValue (so the coordinator can always fence by one
 * more bump): at 32766 the epochs of a producer id are used up and InitProducerId rotates the id.
 */
export function isEpochExhausted(epoch: number): boolean {
  return epoch >= epochMax - 1;
}

/** The target of a transition (Kafka's TxnTransitMetadata): what is appended, then applied. */
export interface TxnTransit {
  producerId: bigint;
  lastProducerId: bigint;
  producerEpoch: number;
  lastProducerEpoch: number;
  txnTimeoutMs: number;
  state: TxnState;
  /** offsetKey(topic, partition) strings. */
  partitions: ReadonlySet<string>;
  txnStartTimestampMs: number;
  txnLastUpdateTimestampMs: number;
}

export type PrepareResult = { ok: true; transit: TxnTransit } | { ok: false; errorCode: number };

export class TransactionMetadata {
  /** The state being moved to while its record is appended; null when none. */
  pendingState: TxnState | null = null;
  /**
   * A fence's bumped epoch may not have reached the log (its append failed): the next fence
   * reuses it rather than bumping again (safe: that epoch was never given to a client).
   */
  hasFailedEpochFence = false;

  constructor(
    readonly transactionalId: string,
    public producerId: bigint,
    public lastProducerId: bigint,
    public producerEpoch: number,
    public lastProducerEpoch: number,
    public txnTimeoutMs: number,
    public state: TxnState,
    readonly partitions: Set<string>,
    public txnStartTimestampMs: number,
    public txnLastUpdateTimestampMs: number,
  ) {}

  static fresh(transactionalId: string, producerId: bigint, txnTimeoutMs: number, nowMs: number): TransactionMetadata {
    return new TransactionMetadata(transactionalId, producerId, NO_PRODUCER_ID, NO_PRODUCER_EPOCH, NO_PRODUCER_EPOCH, txnTimeoutMs, "Empty", new Set(), -1, nowMs);
  }

  get pendingTransitionInProgress(): boolean {
    return this.pendingState !== null;
  }

  get isProducerEpochExhausted(): boolean {
    return isEpochExhausted(this.producerEpoch);
  }

  /** Ongoing, PrepareCommit or PrepareAbort: the producer id must not change under it. */
  get hasPendingTransaction(): boolean {
    return this.state === "Ongoing" || this.state === "PrepareAbort" || this.state === "PrepareCommit";
  }

  topicPartitions(): { topic: string; partition: number }[] {
    return [...this.partitions].map(splitOffsetKey);
  }

  /** A marker was written to this partition (only while completing a prepared commit or abort). */
  removePartition(topic: string, partition: number): void {
    assert(
      this.state === "PrepareCommit" || this.state === "PrepareAbort",
      `${this.transactionalId}: partitions are removed only while markers are written, not in ${this.state}`,
    );
    this.partitions.delete(offsetKey(topic, partition));
  }

  // ---- prepare -------------------------------------------------------------------------------

  /** An epoch one higher (or the same after a failed fence), to abort the ongoing transaction with. */
  prepareFenceProducerEpoch(): TxnTransit {
    assert(this.producerEpoch < epochMax, `${this.transactionalId}: cannot fence at epoch ${epochMax}`);
    const bumped = this.hasFailedEpochFence ? this.producerEpoch : this.producerEpoch + 1;
    return this.prepareTransitionTo("PrepareEpochFence", this.producerId, bumped, NO_PRODUCER_EPOCH, this.txnTimeoutMs, new Set(this.partitions), this.txnStartTimestampMs, this.txnLastUpdateTimestampMs);
  }

  /**
   * InitProducerId on an existing id: bump the epoch. With an expected epoch (KIP-360), a retry
   * of a bump already made answers the current epoch again; any other stale epoch is fenced.
   */
  prepareIncrementProducerEpoch(newTxnTimeoutMs: number, expectedEpoch: number | null, nowMs: number): PrepareResult {
    assert(!this.isProducerEpochExhausted, `${this.transactionalId}: epochs of producer id ${this.producerId} are exhausted`);
    const bumped = this.producerEpoch + 1;
    let next: number;
    let last: number;
    if (expectedEpoch === null) {
      // A new producer (or one not recovering): bump, and forget the last epoch.
      [next, last] = [bumped, NO_PRODUCER_EPOCH];
    } else if (this.producerEpoch === NO_PRODUCER_EPOCH || expectedEpoch === this.producerEpoch) {
      [next, last] = [bumped, this.producerEpoch];
    } else if (expectedEpoch === this.lastProducerEpoch) {
      // The retry of a bump whose answer the producer never got: answer the same epoch.
      [next, last] = [this.producerEpoch, this.lastProducerEpoch];
    } else {
      return { ok: false, errorCode: ErrorCode.PRODUCER_FENCED };
    }
    return { ok: true, transit: this.prepareTransitionTo("Empty", this.producerId, next, last, newTxnTimeoutMs, new Set(), -1, nowMs) };
  }

  /** Epochs exhausted: continue under a new producer id at epoch 0. */
  prepareProducerIdRotation(newProducerId: bigint, newTxnTimeoutMs: number, nowMs: number, recordLastEpoch: boolean): TxnTransit {
    assert(!this.hasPendingTransaction, `${this.transactionalId}: cannot rotate producer ids while a transaction is pending`);
    return this.prepareTransitionTo("Empty", newProducerId, 0, recordLastEpoch ? this.producerEpoch : NO_PRODUCER_EPOCH, newTxnTimeoutMs, new Set(), -1, nowMs);
  }

  prepareAddPartitions(added: Iterable<string>, nowMs: number): TxnTransit {
    const starts = this.state === "Empty" || this.state === "CompleteAbort" || this.state === "CompleteCommit";
    const partitions = new Set(this.partitions);
    for (const p of added) partitions.add(p);
    return this.prepareTransitionTo("Ongoing", this.producerId, this.producerEpoch, this.lastProducerEpoch, this.txnTimeoutMs, partitions, starts ? nowMs : this.txnStartTimestampMs, nowMs);
  }

  prepareAbortOrCommit(newState: "PrepareCommit" | "PrepareAbort", nowMs: number): TxnTransit {
    return this.prepareTransitionTo(newState, this.producerId, this.producerEpoch, this.lastProducerEpoch, this.txnTimeoutMs, new Set(this.partitions), this.txnStartTimestampMs, nowMs);
  }

  prepareComplete(nowMs: number): TxnTransit {
    const newState = this.state === "PrepareCommit" ? "CompleteCommit" : "CompleteAbort";
    // The prepared state is in the log: a fence, if any, took.
    this.hasFailedEpochFence = false;
    return this.prepareTransitionTo(newState, this.producerId, this.producerEpoch, this.lastProducerEpoch, this.txnTimeoutMs, new Set(), this.txnStartTimestampMs, nowMs);
  }

  prepareDead(): TxnTransit {
    return this.prepareTransitionTo("Dead", this.producerId, this.producerEpoch, this.lastProducerEpoch, this.txnTimeoutMs, new Set(), this.txnStartTimestampMs, this.txnLastUpdateTimestampMs);
  }

  private prepareTransitionTo(
    newState: TxnState,
    producerId: bigint,
    producerEpoch: number,
    lastProducerEpoch: number,
    txnTimeoutMs: number,
    partitions: Set<string>,
    txnStartTimestampMs: number,
    nowMs: number,
  ): TxnTransit {
    assert(this.pendingState === null, `${this.transactionalId}: transition to ${newState} while ${this.pendingState} is pending`);
    assert(producerId >= 0n, `${this.transactionalId}: producer id ${producerId}`);
    assert(newState === "Dead" || producerEpoch >= 0, `${this.transactionalId}: producer epoch ${producerEpoch}`);
    assert(validPreviousStates[newState].includes(this.state), `${this.transactionalId}: ${newState} cannot follow ${this.state}`);
    this.pendingState = newState;
    return {
      producerId,
      lastProducerId: this.producerId,
      producerEpoch,
      lastProducerEpoch,
      txnTimeoutMs,
      state: newState,
      partitions,
      txnStartTimestampMs,
      txnLastUpdateTimestampMs: nowMs,
    };
  }

  // ---- complete ------------------------------------------------------------------------------

  /** Applies a transition whose record is in the log (Kafka's completeTransitionTo checks). */
  completeTransitionTo(t: TxnTransit): void {
    const toState = this.pendingState;
    assert(toState !== null, `${this.transactionalId}: completing ${t.state} with no pending state`);
    assert(toState === t.state, `${this.transactionalId}: completing ${t.state} while ${toState} is pending`);
    const sameEpoch = t.producerEpoch === this.producerEpoch && t.producerId === this.producerId;
    const fail = (why: string) => assert(false, `${this.transactionalId}: transition ${this.state} -> ${t.state} ${why}`);
    switch (toState) {
      case "Empty": {
        // InitProducerId: the same epoch (a retried bump), one higher, or 0 under a new producer id.
        const bump = t.producerEpoch === this.producerEpoch + 1 || (t.producerEpoch === 0 && t.producerId !== this.producerId);
        if ((t.producerEpoch !== this.producerEpoch && !bump) || t.partitions.size > 0 || t.txnStartTimestampMs !== -1) fail("is not an epoch bump");
        this.txnTimeoutMs = t.txnTimeoutMs;
        this.producerEpoch = t.producerEpoch;
        this.lastProducerEpoch = t.lastProducerEpoch;
        this.producerId = t.producerId;
        this.lastProducerId = t.lastProducerId;
        break;
      }
      case "Ongoing":
        if (!sameEpoch || ![...this.partitions].every((p) => t.partitions.has(p)) || this.txnTimeoutMs !== t.txnTimeoutMs) fail("does not extend the transaction");
        this.txnStartTimestampMs = t.txnStartTimestampMs;
        for (const p of t.partitions) this.partitions.add(p);
        break;
      case "PrepareCommit":
      case "PrepareAbort":
        if (
          !sameEpoch || this.partitions.size !== t.partitions.size || ![...this.partitions].every((p) => t.partitions.has(p)) ||
          this.txnTimeoutMs !== t.txnTimeoutMs || this.txnStartTimestampMs !== t.txnStartTimestampMs
        ) fail("changes the transaction");
        break;
      case "CompleteCommit":
      case "CompleteAbort":
        if (!sameEpoch || this.txnTimeoutMs !== t.txnTimeoutMs || t.txnStartTimestampMs === -1) fail("does not complete the transaction");
        this.txnStartTimestampMs = t.txnStartTimestampMs;
        this.partitions.clear();
        break;
      case "PrepareEpochFence":
        // Never completed: the fence turns at once into PrepareAbort (TransactionCoordinator.endTransaction).
        fail("is never completed");
        break;
      case "Dead":
        // An expired id is removed from the cache, not moved to Dead.
        fail("is never completed");
        break;
    }
    this.txnLastUpdateTimestampMs = t.txnLastUpdateTimestampMs;
    this.pendingState = null;
    this.state = toState;
  }
}
