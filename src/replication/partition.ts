// Partition: this broker's view of one topic-partition it holds a replica of: the leader, the
// leader epoch, the replica set and ISR as the controller last said (LeaderAndIsr) or as this
// broker, as leader, last wrote them (ISR changes), and the local Log.
//
// As leader it appends produced batches, tracks each follower's log end offset from its fetches
// (Kafka's Replica state), owns the high watermark, and grows and shrinks the ISR. As follower it
// appends what its replica fetcher brings and takes the leader's high watermark.
//
// Invariants:
// - highWatermark <= logEndOffset; consumers read below it only. As leader it never moves back;
//   it is the smallest log end offset over the "maximal ISR": the ISR plus the members of an ISR
//   change written but not yet confirmed (Kafka's maximalIsr), so a replica joining counts before
//   it is in, and one leaving counts until it is out.
// - The leader epoch only grows; a LeaderAndIsr with an older epoch, or with the same epoch and an
//   older partitionEpoch, is refused (it would undo a newer state).
// - At most one ISR change is in flight; it is written conditionally on partitionEpoch, so a
//   concurrent controller write wins and the leader waits for the controller's LeaderAndIsr.
// - A new leader records its epoch's start offset (the log end offset) in the leader-epoch cache
//   before it appends, so followers of an older epoch learn where to truncate (KIP-101).
// The high watermark is stored in the Log (as Kafka's UnifiedLog holds it), so retention and the
// replication-offset-checkpoint see it; only the Partition moves it.

import { hasCleanupPolicy, type Log, type TopicLogConfig } from "../log/mod.ts";
import type { BatchSetSummary, EndTxnMarker } from "../protocol/mod.ts";
import { assert, ErrorCode, isrChangeRetryBackoffMs, KafkaError } from "../util/mod.ts";

export interface PartitionState {
  topic: string;
  partition: number;
  topicId: Uint8Array;
  controllerEpoch: number;
  leader: number;
  leaderEpoch: number;
  isr: number[];
  replicas: number[];
  /**
   * Version of the partition state znode this state was read from or written as (Kafka's
   * zkVersion, LeaderAndIsr's PartitionEpoch): every write of the state (the controller's
   * elections, the leader's ISR changes) is conditional on it, so no writer overwrites a change it
   * has not seen.
   */
  partitionEpoch: number;
  /** Replicas being added / removed by a reassignment in progress (KIP-455); empty otherwise. */
  addingReplicas?: number[];
  removingReplicas?: number[];
  /**
   * Set by the controller when it creates the partition (Kafka's LeaderAndIsr isNew): only then
   * may a broker with an offline log dir create its log elsewhere (LogManager.getOrCreateLog).
   */
  isNew?: boolean;
}

/** DeleteRecords' offset meaning "up to the high watermark" (Kafka's HIGH_WATERMARK). */
export const DELETE_RECORDS_HIGH_WATERMARK = -1;

/** What the leader knows of one follower (Kafka's ReplicaState). */
interface FollowerState {
  /** -1 until its first fetch since this broker became leader. */
  logEndOffset: number;
  /** The last time its log end offset reached the leader's (as the leader's was at a fetch). */
  lastCaughtUpTimeMs: number;
  lastFetchLeaderLogEndOffset: number;
  lastFetchTimeMs: number;
}

/**
 * Writes an ISR change; resolves the new partitionEpoch, null when another writer won (the
 * controller's next LeaderAndIsr brings the state that did), or "retry" when it could not be
 * written for a reason that passes (the registry's disk full, ZooKeeper away): the leader keeps
 * its ISR and tries again after isrChangeRetryBackoffMs, as Kafka retries AlterPartition.
 */
export type IsrWriter = ((state: PartitionState, newIsr: number[]) => Promise<number | null | "retry">) & {
  /** Writes again what could not be written before (the notifications to the controller). */
  retryPending?: () => void;
  /** Closes what the writer holds open (AlterPartition's connection to the controller). */
  shutdown?: () => void;
};

export class Partition {
  state: PartitionState;
  private followers = new Map<number, FollowerState>();
  /** The ISR of a change written but not yet confirmed (null when none is in flight). */
  private pendingIsr: number[] | null = null;
  /** No ISR change is tried before this time (monotonic ms): the last one could not be written. */
  private isrRetryAtMs = -Infinity;
  /** The log end offset when this broker became leader in its current epoch (-1 as follower). */
  private leaderEpochStartOffset = -1;

  constructor(readonly localBrokerId: number, state: PartitionState, readonly log: Log, monotonicMs: number) {
    this.state = state;
    if (this.isLeader) {
      this.becomeLeader(monotonicMs);
      this.maybeIncrementHighWatermark();
    }
  }

  /** Offsets below it are on every ISR member; loaded from replication-offset-checkpoint. */
  get highWatermark(): number {
    return this.log.highWatermark;
  }

  get topic(): string {
    return this.state.topic;
  }
  get partition(): number {
    return this.state.partition;
  }
  get isLeader(): boolean {
    return this.state.leader === this.localBrokerId;
  }
  get leaderEpoch(): number {
    return this.state.leaderEpoch;
  }
  /** The ISR plus any members of an ISR change in flight. */
  get maximalIsr(): number[] {
    if (this.pendingIsr === null) return this.state.isr;
    return [...new Set([...this.state.isr, ...this.pendingIsr])];
  }
  get isUnderReplicated(): boolean {
    return this.isLeader && this.state.isr.length < this.state.replicas.length;
  }

  /** min.insync.replicas of the topic (its override, else the broker's). */
  get minInsyncReplicas(): number {
    return (this.log.config as TopicLogConfig).minInsyncReplicas ?? 1;
  }

  /** A LeaderAndIsr state this partition should take (newer epoch, or same epoch and newer ISR). */
  isNewer(next: PartitionState): boolean {
    if (next.leaderEpoch !== this.state.leaderEpoch) return next.leaderEpoch > this.state.leaderEpoch;
    return next.partitionEpoch >= this.state.partitionEpoch;
  }

  /**
   * Takes a LeaderAndIsr state. Returns whether this broker's role or the leader epoch changed
   * (the caller then moves fetchers). Throws STALE_CONTROLLER_EPOCH for an older state.
   */
  applyState(next: PartitionState, monotonicMs: number): boolean {
    if (!this.isNewer(next)) {
      throw new KafkaError(
        ErrorCode.STALE_CONTROLLER_EPOCH,
        `leader epoch ${next.leaderEpoch} (partition epoch ${next.partitionEpoch}) is older than ` +
          `${this.state.leaderEpoch} (${this.state.partitionEpoch}) for ${next.topic}-${next.partition}`,
      );
    }
    const changed = next.leaderEpoch !== this.state.leaderEpoch || next.leader !== this.state.leader;
    const wasLeader = this.isLeader;
    this.state = next;
    this.pendingIsr = null;
    if (this.isLeader && (changed || !wasLeader)) this.becomeLeader(monotonicMs);
    else if (!this.isLeader) {
      this.followers.clear();
      this.leaderEpochStartOffset = -1;
    }
    else this.syncFollowers(monotonicMs);
    if (this.isLeader) this.maybeIncrementHighWatermark(monotonicMs);
    return changed;
  }

  /** Kafka's makeLeader: fresh follower states, and the epoch's start offset recorded. */
  private becomeLeader(monotonicMs: number): void {
    this.followers.clear();
    this.syncFollowers(monotonicMs);
    this.leaderEpochStartOffset = this.log.logEndOffset;
    this.log.maybeAssignEpochStartOffset(this.state.leaderEpoch, this.leaderEpochStartOffset);
  }

  /** One follower state per replica other than this broker; ISR members count as caught up now. */
  private syncFollowers(monotonicMs: number): void {
    const replicas = new Set([...this.state.replicas, ...(this.state.addingReplicas ?? [])]);
    for (const id of [...this.followers.keys()]) if (!replicas.has(id)) this.followers.delete(id);
    for (const id of replicas) {
      if (id === this.localBrokerId || this.followers.has(id)) continue;
      const inIsr = this.state.isr.includes(id);
      this.followers.set(id, { logEndOffset: -1, lastCaughtUpTimeMs: inIsr ? monotonicMs : 0, lastFetchLeaderLogEndOffset: -1, lastFetchTimeMs: 0 });
    }
  }

  /** The log end offset the leader last saw for a follower (-1: none yet). */
  followerLogEndOffset(replicaId: number): number {
    return this.followers.get(replicaId)?.logEndOffset ?? -1;
  }

  /**
   * The followers a consumer at `fetchOffset` could read instead of the leader (KIP-392, Kafka's
   * findPreferredReadReplica): in the ISR and holding the offset, as this leader last saw them.
   * (Kafka also checks the follower's log start offset, which strand's leader does not track.)
   */
  readReplicaCandidates(fetchOffset: number, monotonicMs: number): { brokerId: number; logEndOffset: number; timeSinceLastCaughtUpMs: number }[] {
    const out = [];
    for (const [brokerId, f] of this.followers) {
      if (!this.state.isr.includes(brokerId) || f.logEndOffset < fetchOffset) continue;
      out.push({ brokerId, logEndOffset: f.logEndOffset, timeSinceLastCaughtUpMs: monotonicMs - f.lastCaughtUpTimeMs });
    }
    return out;
  }

  /** Whether a broker holds a replica of this partition (replica fetches from others are refused). */
  isReplica(brokerId: number): boolean {
    return this.followers.has(brokerId);
  }

  /** Checks a request's current leader epoch against ours (KIP-320); -1 skips the check. */
  checkLeaderEpoch(currentLeaderEpoch: number): number {
    if (currentLeaderEpoch < 0 || currentLeaderEpoch === this.state.leaderEpoch) return ErrorCode.NONE;
    return currentLeaderEpoch < this.state.leaderEpoch ? ErrorCode.FENCED_LEADER_EPOCH : ErrorCode.UNKNOWN_LEADER_EPOCH;
  }

  appendRecordsToLeader(records: Uint8Array, summary: BatchSetSummary, requiredAcks: number, monotonicMs: number) {
    if (!this.isLeader) {
      throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `broker ${this.localBrokerId} is not the leader of ${this.topic}-${this.partition}`);
    }
    const minIsr = this.minInsyncReplicas;
    if (requiredAcks === -1 && this.state.isr.length < minIsr) {
      throw new KafkaError(
        ErrorCode.NOT_ENOUGH_REPLICAS,
        `${this.topic}-${this.partition} has ${this.state.isr.length} in-sync replicas [${this.state.isr}], min.insync.replicas is ${minIsr}`,
      );
    }
    const info = this.log.appendAsLeader(records, summary.offsetCount, this.state.leaderEpoch);
    this.maybeIncrementHighWatermark(monotonicMs);
    return info;
  }

  /**
   * Writes a transaction marker as the leader (Kafka's appendRecordsToLeader, origin COORDINATOR,
   * acks=all: NOT_ENOUGH_REPLICAS below min.insync.replicas). Throws KafkaError.
   */
  appendTxnMarkerToLeader(producerId: bigint, producerEpoch: number, marker: EndTxnMarker, monotonicMs: number) {
    if (!this.isLeader) {
      throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `broker ${this.localBrokerId} is not the leader of ${this.topic}-${this.partition}`);
    }
    if (this.state.isr.length < this.minInsyncReplicas) {
      throw new KafkaError(ErrorCode.NOT_ENOUGH_REPLICAS, `${this.topic}-${this.partition} has ${this.state.isr.length} in-sync replicas, min.insync.replicas is ${this.minInsyncReplicas}`);
    }
    const info = this.log.appendTxnMarkerAsLeader(producerId, producerEpoch, marker, this.state.leaderEpoch);
    this.maybeIncrementHighWatermark(monotonicMs);
    return info;
  }

  /**
   * For acks=all: NONE once the high watermark covers `requiredOffset` with enough replicas in
   * sync, NOT_ENOUGH_REPLICAS_AFTER_APPEND when it got there on fewer, null while it has not.
   */
  checkEnoughReplicasReachOffset(requiredOffset: number): number | null {
    if (!this.isLeader) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    if (this.highWatermark < requiredOffset) return null;
    const minIsr = this.minInsyncReplicas;
    return this.state.isr.length >= minIsr ? ErrorCode.NONE : ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND;
  }

  /**
   * A follower fetched from `fetchOffset`, when the leader's log ended at `leaderEndOffset`
   * (Kafka's updateFollowerFetchState): that is its log end offset now, and it was caught up at
   * this fetch if it asked for everything the leader had, or at its previous fetch if it has now
   * reached what the leader had then. Returns whether the high watermark moved.
   */
  updateFollowerFetchState(replicaId: number, fetchOffset: number, leaderEndOffset: number, monotonicMs: number): boolean {
    const f = this.followers.get(replicaId);
    if (f === undefined) return false;
    if (fetchOffset >= leaderEndOffset) f.lastCaughtUpTimeMs = Math.max(f.lastCaughtUpTimeMs, monotonicMs);
    else if (fetchOffset >= f.lastFetchLeaderLogEndOffset) f.lastCaughtUpTimeMs = Math.max(f.lastCaughtUpTimeMs, f.lastFetchTimeMs);
    f.logEndOffset = fetchOffset;
    f.lastFetchLeaderLogEndOffset = leaderEndOffset;
    f.lastFetchTimeMs = monotonicMs;
    return this.maybeIncrementHighWatermark(monotonicMs);
  }

  /**
   * The high watermark is the smallest log end offset over the maximal ISR; it never moves back.
   * Returns whether it moved.
   */
  maybeIncrementHighWatermark(_nowMs = 0): boolean {
    if (!this.isLeader) return false;
    let hw = this.log.logEndOffset;
    for (const id of this.maximalIsr) {
      if (id === this.localBrokerId) continue;
      hw = Math.min(hw, this.followers.get(id)?.logEndOffset ?? -1);
    }
    if (hw <= this.highWatermark) return false;
    this.log.updateHighWatermark(hw);
    assert(this.highWatermark <= this.log.logEndOffset, "high watermark <= log end offset");
    return true;
  }

  /**
   * The ISR with a follower added, when it has caught up to the high watermark and into this
   * leader's epoch (Kafka's maybeExpandIsr); null when nothing changes or a change is in flight.
   */
  isrToExpand(replicaId: number, monotonicMs = Infinity): number[] | null {
    if (!this.isLeader || this.pendingIsr !== null || this.state.isr.includes(replicaId)) return null;
    if (monotonicMs < this.isrRetryAtMs) return null;
    if (!this.state.replicas.includes(replicaId) && !(this.state.addingReplicas ?? []).includes(replicaId)) return null;
    const leo = this.followerLogEndOffset(replicaId);
    if (leo < this.highWatermark || leo < this.leaderEpochStartOffset) return null;
    return [...this.state.isr, replicaId];
  }

  /**
   * The ISR without followers that have not caught up for `lagMaxMs` (Kafka's maybeShrinkIsr);
   * null when nothing changes or a change is in flight. The leader always stays.
   */
  isrToShrink(monotonicMs: number, lagMaxMs: number): number[] | null {
    if (!this.isLeader || this.pendingIsr !== null || monotonicMs < this.isrRetryAtMs) return null;
    const out = this.state.isr.filter((id) => {
      if (id === this.localBrokerId) return false;
      const f = this.followers.get(id);
      return f === undefined || monotonicMs - f.lastCaughtUpTimeMs > lagMaxMs;
    });
    if (out.length === 0) return null;
    return this.state.isr.filter((id) => !out.includes(id));
  }

  /**
   * Writes an ISR change (one at a time) and takes it once written; a lost race leaves the ISR as
   * it was until the controller's next LeaderAndIsr. Returns whether the ISR changed.
   */
  async changeIsr(newIsr: number[], write: IsrWriter, monotonicMs: () => number): Promise<boolean> {
    if (this.pendingIsr !== null) return false;
    const basis = this.state;
    this.pendingIsr = newIsr;
    let partitionEpoch: number | null | "retry" = null;
    try {
      partitionEpoch = await write(basis, newIsr);
    } finally {
      // A LeaderAndIsr that arrived meanwhile replaced the state (and cleared pendingIsr).
      if (this.state === basis) this.pendingIsr = null;
    }
    if (partitionEpoch === "retry") {
      this.isrRetryAtMs = monotonicMs() + isrChangeRetryBackoffMs;
      return false;
    }
    if (partitionEpoch === null || this.state !== basis) return false;
    this.state = { ...basis, isr: newIsr, partitionEpoch };
    this.maybeIncrementHighWatermark(monotonicMs());
    return true;
  }

  /** Follower: the leader's high watermark, bounded by what this replica has. */
  updateFollowerHighWatermark(leaderHighWatermark: number): void {
    this.log.updateHighWatermark(Math.min(leaderHighWatermark, this.log.logEndOffset));
  }

  /**
   * DeleteRecords on the leader (Kafka's deleteRecordsOnLeader): moves the log start offset to
   * `offset` (-1: the high watermark). Returns the new log start offset; followers follow it from
   * the log start offset in fetch responses.
   */
  deleteRecordsOnLeader(offset: number): number {
    if (!this.isLeader) {
      throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `broker ${this.localBrokerId} is not the leader of ${this.topic}-${this.partition}`);
    }
    if (!hasCleanupPolicy(this.log.config.cleanupPolicy, "delete")) {
      throw new KafkaError(ErrorCode.POLICY_VIOLATION, `records of ${this.topic}-${this.partition} cannot be deleted: cleanup.policy=${this.log.config.cleanupPolicy}`);
    }
    const target = offset === DELETE_RECORDS_HIGH_WATERMARK ? this.highWatermark : offset;
    if (target < 0) throw new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `cannot delete records before offset ${offset}`);
    this.log.maybeIncrementLogStartOffset(target, "DeleteRecords");
    return this.log.logStartOffset;
  }
}
