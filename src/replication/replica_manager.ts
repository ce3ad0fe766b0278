// ReplicaManager: the partitions this broker holds, created and changed only by the controller's
// LeaderAndIsr and StopReplica (so the registry stays the one source of partition state), and the
// produce and fetch paths over them, with the fetch purgatory for long polls.

import type { LogManager, TopicLogConfig } from "../log/mod.ts";
import { topicPartitionKey } from "../log/mod.ts";
import type { Clock } from "../platform/mod.ts";
import { recordSetMagic, upConvertMessageSet, validateBatches } from "../protocol/mod.ts";
import { ErrorCode, KafkaError } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";
import { Partition, type PartitionState } from "./partition.ts";
import { DelayedOperationPurgatory } from "./purgatory.ts";

export interface ProduceResult {
  errorCode: number;
  errorMessage: string | null;
  baseOffset: number;
  logAppendTimeMs: number;
  logStartOffset: number;
  recordCount: number;
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
}

export interface FetchParams {
  partitions: FetchPartitionRequest[];
  maxWaitMs: number;
  minBytes: number;
  maxBytes: number;
  isReplica: boolean;
}

export interface FetchPartitionResult {
  topic: string;
  partition: number;
  errorCode: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  records: Uint8Array | null;
}

export class ReplicaManager {
  private partitions = new Map<string, Partition>();
  readonly fetchPurgatory: DelayedOperationPurgatory;

  constructor(
    readonly brokerId: number,
    private readonly logManager: LogManager,
    clock: Clock,
    private readonly logger: Logger,
  ) {
    this.fetchPurgatory = new DelayedOperationPurgatory(clock);
  }

  getPartition(topic: string, partition: number): Partition | undefined {
    return this.partitions.get(topicPartitionKey(topic, partition));
  }

  allPartitions(): Partition[] {
    return [...this.partitions.values()];
  }

  /**
   * Told after this broker becomes or stops being a partition's leader (the group coordinator
   * loads and unloads __consumer_offsets partitions this way, as Kafka's onLeadershipChange does).
   */
  readonly leadershipListeners: ((topic: string, partition: number, isLeader: boolean) => void)[] = [];

  private tellLeadership(topic: string, partition: number, isLeader: boolean): void {
    for (const l of this.leadershipListeners) l(topic, partition, isLeader);
  }

  /** LeaderAndIsr for one partition this broker is a replica of. */
  becomeLeaderOrFollower(state: PartitionState, config: TopicLogConfig): void {
    const key = topicPartitionKey(state.topic, state.partition);
    const existing = this.partitions.get(key);
    if (existing !== undefined) {
      const wasLeader = existing.isLeader;
      existing.applyState(state);
      existing.log.config = config;
      if (wasLeader !== existing.isLeader) this.tellLeadership(state.topic, state.partition, existing.isLeader);
      return;
    }
    const log = this.logManager.getOrCreateLog(state.topic, state.partition, config);
    const p = new Partition(this.brokerId, state, log);
    this.partitions.set(key, p);
    this.logger.info({ topic: state.topic, partition: state.partition, leader: state.leader, leaderEpoch: state.leaderEpoch }, "partition online");
    if (p.isLeader) this.tellLeadership(state.topic, state.partition, true);
  }

  /** StopReplica: forget the partition, deleting its log when asked. */
  stopReplica(topic: string, partition: number, deletePartition: boolean): void {
    const key = topicPartitionKey(topic, partition);
    if (this.partitions.get(key)?.isLeader) this.tellLeadership(topic, partition, false);
    this.partitions.delete(key);
    if (deletePartition) this.logManager.deleteLog(topic, partition);
    this.fetchPurgatory.checkAndComplete(key);
  }

  /**
   * Validates and appends one partition's record set as leader. Never throws for bad input.
   * With `legacyFormat` (Produce v0-2) a message set of magic 0 or 1 is first up-converted into
   * one record batch v2; magic 2 batches pass as they are, as Kafka accepts them in v0-2 too.
   */
  appendToPartition(
    topic: string,
    partition: number,
    records: Uint8Array | null,
    maxMessageBytesDefault: number,
    legacyFormat = false,
  ): ProduceResult {
    const result: ProduceResult = {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      baseOffset: -1,
      logAppendTimeMs: -1,
      logStartOffset: -1,
      recordCount: 0,
    };
    const p = this.getPartition(topic, partition);
    if (p === undefined) {
      result.errorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      result.errorMessage = `this broker has no partition ${topic}-${partition}`;
      return result;
    }
    if (records === null || records.length === 0) {
      result.errorCode = ErrorCode.CORRUPT_MESSAGE;
      result.errorMessage = "no records";
      return result;
    }
    const maxBytes = (p.log.config as TopicLogConfig).maxMessageBytes ?? maxMessageBytesDefault;
    const magic = recordSetMagic(records);
    if (legacyFormat && (magic === 0 || magic === 1)) {
      const converted = upConvertMessageSet(records);
      if (converted.batch === null) {
        result.errorCode = converted.errorCode;
        result.errorMessage = converted.message;
        return result;
      }
      records = converted.batch;
    }
    const summary = validateBatches(records, maxBytes);
    if (summary.errorCode !== ErrorCode.NONE) {
      result.errorCode = summary.errorCode;
      result.errorMessage = summary.message;
      return result;
    }
    try {
      const info = p.appendRecordsToLeader(records, summary);
      result.baseOffset = info.firstOffset;
      result.logStartOffset = p.log.logStartOffset;
      result.recordCount = summary.recordCount;
    } catch (e) {
      if (!(e instanceof KafkaError)) throw e;
      result.errorCode = e.code;
      result.errorMessage = e.message;
      return result;
    }
    this.fetchPurgatory.checkAndComplete(topicPartitionKey(topic, partition));
    return result;
  }

  /** Reads one partition up to its high watermark (consumers) or log end offset (replicas). */
  readPartition(req: FetchPartitionRequest, isReplica: boolean, minOneBatch: boolean): FetchPartitionResult {
    const out: FetchPartitionResult = {
      topic: req.topic,
      partition: req.partition,
      errorCode: ErrorCode.NONE,
      highWatermark: -1,
      lastStableOffset: -1,
      logStartOffset: -1,
      records: null,
    };
    const p = this.getPartition(req.topic, req.partition);
    if (p === undefined) {
      out.errorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      return out;
    }
    if (!p.isLeader) {
      out.errorCode = ErrorCode.NOT_LEADER_OR_FOLLOWER;
      return out;
    }
    out.highWatermark = p.highWatermark;
    out.lastStableOffset = p.highWatermark;
    out.logStartOffset = p.log.logStartOffset;
    const limit = isReplica ? p.log.logEndOffset : p.highWatermark;
    if (req.fetchOffset === limit && req.fetchOffset <= p.log.logEndOffset) {
      out.records = new Uint8Array(0);
      return out;
    }
    try {
      const r = p.log.read(req.fetchOffset, req.maxBytes, minOneBatch, limit);
      out.records = r.records;
    } catch (e) {
      if (!(e instanceof KafkaError)) throw e;
      out.errorCode = e.code;
    }
    return out;
  }

  /**
   * A fetch as the Fetch API describes it: reads every partition (the first non-empty one whole
   * even past its byte limit, KIP-74), and when fewer than minBytes are there, waits in the fetch
   * purgatory until enough arrive or maxWaitMs passes, then reads again.
   */
  async fetchMessages(params: FetchParams): Promise<FetchPartitionResult[]> {
    const first = this.readAll(params);
    const bytes = first.reduce((n, r) => n + (r.records?.length ?? 0), 0);
    const anyError = first.some((r) => r.errorCode !== ErrorCode.NONE);
    if (params.maxWaitMs <= 0 || bytes >= params.minBytes || anyError || params.partitions.length === 0) return first;
    const start = params.partitions.map((req) => this.getPartition(req.topic, req.partition)?.log.sizeBytes ?? 0);
    const op = {
      tryComplete: () => {
        let more = bytes;
        for (let i = 0; i < params.partitions.length; i++) {
          const req = params.partitions[i];
          const p = this.getPartition(req.topic, req.partition);
          if (p === undefined || !p.isLeader) return true;
          more += p.log.sizeBytes - start[i];
        }
        return more >= params.minBytes;
      },
    };
    const keys = params.partitions.map((r) => topicPartitionKey(r.topic, r.partition));
    await this.fetchPurgatory.waitFor(op, keys, params.maxWaitMs);
    return this.readAll(params);
  }

  private readAll(params: FetchParams): FetchPartitionResult[] {
    let budget = params.maxBytes;
    let minOneBatch = true;
    return params.partitions.map((req) => {
      const r = this.readPartition({ ...req, maxBytes: Math.min(req.maxBytes, budget) }, params.isReplica, minOneBatch);
      const n = r.records?.length ?? 0;
      if (n > 0) minOneBatch = false;
      budget = Math.max(0, budget - n);
      return r;
    });
  }

  /**
   * DeleteRecords (Kafka's ReplicaManager.deleteRecords): moves each partition's log start offset
   * (offset -1: to the high watermark) and answers its low watermark. With no followers yet the
   * answer needs no waiting. A moved start offset is checkpointed at once, so deleted records do
   * not come back after a crash.
   */
  deleteRecords(requests: { topic: string; partition: number; offset: number }[]): DeleteRecordsResult[] {
    let moved = false;
    const results = requests.map((req): DeleteRecordsResult => {
      const p = this.getPartition(req.topic, req.partition);
      if (p === undefined) return { ...req, lowWatermark: -1, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
      try {
        const before = p.log.logStartOffset;
        const lowWatermark = p.deleteRecordsOnLeader(req.offset);
        moved ||= lowWatermark !== before;
        return { ...req, lowWatermark, errorCode: ErrorCode.NONE };
      } catch (e) {
        if (!(e instanceof KafkaError)) throw e;
        return { ...req, lowWatermark: -1, errorCode: e.code };
      }
    });
    if (moved) this.logManager.checkpointLogStartOffsets();
    return results;
  }

  shutdown(): void {
    this.fetchPurgatory.shutdown();
    this.partitions.clear();
  }
}
