// The replication module's contracts with its neighbours: the results of the produce and fetch
// paths, and the two interfaces between the ReplicaManager and the replica fetchers
// (replica_fetcher.ts): FollowerLog (what a fetcher does to the local replica) and
// ReplicaFetchers (what the ReplicaManager asks of the fetchers on LeaderAndIsr / StopReplica).

import type { RecordError } from "../protocol/mod.ts";
import type { Partition } from "./partition.ts";

export interface ProduceResult {
  errorCode: number;
  errorMessage: string | null;
  baseOffset: number;
  /** The offset after the appended records (what acks=all waits for the high watermark to reach). */
  nextOffset: number;
  logAppendTimeMs: number;
  logStartOffset: number;
  recordCount: number;
  /** Produce v8+ recordErrors: the records that made an INVALID_RECORD / INVALID_TIMESTAMP answer. */
  recordErrors: RecordError[];
}

export interface DeleteRecordsResult {
  topic: string;
  partition: number;
  lowWatermark: number;
  errorCode: number;
}

export interface FetchPartitionRequest {
  topic: string;
  partition: number;
  fetchOffset: number;
  maxBytes: number;
  /** KIP-320: the leader epoch the fetcher believes current; -1 skips the check. */
  currentLeaderEpoch?: number;
  /**
   * KIP-392, on the leader, for a consumer: the replica it should read instead (-1: read here).
   * Given the partition (ReplicaManager.readReplicaViews describes its replicas).
   */
  preferredReadReplica?: (p: Partition) => number;
}

export interface FetchParams {
  partitions: FetchPartitionRequest[];
  maxWaitMs: number;
  minBytes: number;
  maxBytes: number;
  /** The fetching follower's broker id; -1 for consumers. */
  replicaId: number;
  /** false: a consumer (Fetch v11+, KIP-392) may read a follower; true or absent: the leader only. */
  fetchOnlyLeader?: boolean;
  /** 1: read_committed (consumers read up to the last stable offset); 0 or absent: read_uncommitted. */
  isolationLevel?: number;
  /** Told how long the fetch waited in the purgatory (not handler time: the request quota leaves it out). */
  onParked?: (ms: number) => void;
}

export interface FetchPartitionResult {
  topic: string;
  partition: number;
  errorCode: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  records: Uint8Array | null;
  /** KIP-392: the replica the consumer should read instead (absent or -1: none). */
  preferredReadReplica?: number;
  /** read_committed: the aborted transactions overlapping the records read (absent otherwise). */
  abortedTransactions?: { producerId: bigint; firstOffset: number }[];
}

/** What a replica fetcher reads of and does to a partition this broker follows. */
export interface FollowerLog {
  /** null when this broker does not (or no longer) follow the partition. */
  followerState(topic: string, partition: number): {
    leaderId: number;
    leaderEpoch: number;
    logEndOffset: number;
    logStartOffset: number;
    highWatermark: number;
    latestEpoch: number | null;
    /** The topic's follower.replication.throttled.replicas names this replica (replication_quota.ts). */
    throttled?: boolean;
  } | null;
  /** The local end offset of an epoch (leader-epoch cache), as OffsetForLeaderEpoch answers; null if none. */
  endOffsetForEpoch(topic: string, partition: number, epoch: number): { leaderEpoch: number; endOffset: number } | null;
  truncateTo(topic: string, partition: number, offset: number): void;
  truncateFullyAndStartAt(topic: string, partition: number, offset: number): void;
  /** Appends fetched batches (offsets as the leader assigned them), then takes the leader's HW. Throws KafkaError. */
  appendAsFollower(topic: string, partition: number, records: Uint8Array, leaderHighWatermark: number, leaderLogStartOffset: number): void;
}

/** The replica fetchers, as the ReplicaManager drives them. */
export interface ReplicaFetchers {
  addFetcherForPartitions(parts: { topic: string; partition: number; leaderId: number; leaderEpoch: number }[]): void;
  removeFetcherForPartitions(parts: { topic: string; partition: number }[]): void;
  shutdown(): Promise<void>;
}

export const noReplicaFetchers: ReplicaFetchers = {
  addFetcherForPartitions() {},
  removeFetcherForPartitions() {},
  shutdown: () => Promise.resolve(),
};

/** One partition's transaction marker, as WriteTxnMarkers carries it. */
export interface TxnMarkerAppend {
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
  committed: boolean;
}
