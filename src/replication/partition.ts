// Partition: this broker's view of one topic-partition it holds a replica of: the leader, the
// leader epoch, the replica set and ISR as the controller last said (LeaderAndIsr), and the local
// Log. As leader it appends produced batches and owns the high watermark: the smallest log end
// offset over the ISR (only this broker's until followers fetch; see the replication issue).
//
// Invariants: highWatermark <= logEndOffset; consumers read below the high watermark only; the
// leader epoch only grows. The high watermark is stored in the Log (as Kafka's UnifiedLog holds
// it), so retention and the replication-offset-checkpoint see it; only the Partition moves it.

import type { Log } from "../log/mod.ts";
import type { BatchSetSummary } from "../protocol/mod.ts";
import { assert, ErrorCode, KafkaError } from "../util/mod.ts";

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
   * Set by the controller when it creates the partition (Kafka's LeaderAndIsr isNew): only then
   * may a broker with an offline log dir create its log elsewhere (LogManager.getOrCreateLog).
   */
  isNew?: boolean;
}

/** DeleteRecords' offset meaning "up to the high watermark" (Kafka's HIGH_WATERMARK). */
export const DELETE_RECORDS_HIGH_WATERMARK = -1;

export class Partition {
  state: PartitionState;
  /** Log end offsets of followers, by broker id (fed by replica fetches once replication lands). */
  private followerLogEndOffsets = new Map<number, number>();

  constructor(readonly localBrokerId: number, state: PartitionState, readonly log: Log) {
    this.state = state;
    this.maybeIncrementHighWatermark();
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

  /** Applies a newer LeaderAndIsr state; a stale leader epoch is refused. */
  applyState(next: PartitionState): void {
    if (next.leaderEpoch < this.state.leaderEpoch) {
      throw new KafkaError(
        ErrorCode.STALE_CONTROLLER_EPOCH,
        `leader epoch ${next.leaderEpoch} is older than ${this.state.leaderEpoch} for ${next.topic}-${next.partition}`,
      );
    }
    this.state = next;
    this.maybeIncrementHighWatermark();
  }

  appendRecordsToLeader(records: Uint8Array, summary: BatchSetSummary) {
    if (!this.isLeader) {
      throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `broker ${this.localBrokerId} is not the leader of ${this.topic}-${this.partition}`);
    }
    const info = this.log.appendAsLeader(records, summary.offsetCount, this.state.leaderEpoch);
    this.maybeIncrementHighWatermark();
    return info;
  }

  /**
   * DeleteRecords on the leader (Kafka's deleteRecordsOnLeader): moves the log start offset to
   * `offset` (-1: the high watermark). Returns the low watermark after the move, which is the log
   * start offset while there are no followers.
   */
  deleteRecordsOnLeader(offset: number): number {
    if (!this.isLeader) {
      throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `broker ${this.localBrokerId} is not the leader of ${this.topic}-${this.partition}`);
    }
    if (!this.log.config.cleanupPolicy.includes("delete")) {
      throw new KafkaError(ErrorCode.POLICY_VIOLATION, `records of ${this.topic}-${this.partition} cannot be deleted: cleanup.policy=${this.log.config.cleanupPolicy}`);
    }
    const target = offset === DELETE_RECORDS_HIGH_WATERMARK ? this.highWatermark : offset;
    if (target < 0) throw new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `cannot delete records before offset ${offset}`);
    this.log.maybeIncrementLogStartOffset(target, "DeleteRecords");
    return this.log.logStartOffset;
  }

  /** The high watermark is the smallest log end offset over the ISR; it never moves back. */
  maybeIncrementHighWatermark(): boolean {
    let hw = this.log.logEndOffset;
    for (const id of this.state.isr) {
      if (id === this.localBrokerId) continue;
      hw = Math.min(hw, this.followerLogEndOffsets.get(id) ?? 0);
    }
    if (hw <= this.highWatermark) return false;
    this.log.updateHighWatermark(hw);
    assert(this.highWatermark <= this.log.logEndOffset, "high watermark <= log end offset");
    return true;
  }
}
