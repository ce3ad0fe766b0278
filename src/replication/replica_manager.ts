// ReplicaManager: the partitions this broker holds, created and changed only by the controller's
// LeaderAndIsr and StopReplica (so the registry stays the one source of partition state), and the
// produce and fetch paths over them, with the fetch purgatory for long polls.
//
// Offline partitions (Kafka's HostedPartition.Offline): those whose log dir failed, or whose log
// could not be created because of a failed dir. Produce, fetch, ListOffsets and DeleteRecords on
// them answer KAFKA_STORAGE_ERROR (checked before anything else, as Kafka's getPartitionOrError
// does); the LogManager reports the failure (handleLogDirFailure), and a storage error from a
// log operation reaches the client as that code through the KafkaError path.

import type { LogManager, TopicLogConfig } from "../log/mod.ts";
import { KafkaStorageError, topicPartitionKey } from "../log/mod.ts";
import type { Clock } from "../platform/mod.ts";
import { recordSetMagic, upConvertMessageSet, validateBatches } from "../protocol/mod.ts";
import { ErrorCode, KafkaError } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";
import { Partition, type PartitionState } from "./partition.ts";
import { DelayedOperationPurgatory } from "./purgatory.ts";
import { BrokerTopicStats } from "./topic_stats.ts";

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
  /** Keys of offline partitions (see the header). */
  private offline = new Set<string>();
  readonly fetchPurgatory: DelayedOperationPurgatory;
  /** Messages and bytes in and out per topic, for /metrics. */
  readonly topicStats = new BrokerTopicStats();

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

  /** True when the partition's log dir failed (its requests answer KAFKA_STORAGE_ERROR). */
  isOffline(topic: string, partition: number): boolean {
    return this.offline.size > 0 && this.offline.has(topicPartitionKey(topic, partition));
  }

  /**
   * A log dir failed (Kafka's handleLogDirFailure): its partitions go offline, stop being led here
   * (the group coordinator unloads an offsets partition), and waiting fetches on them complete.
   */
  handleLogDirFailure(dir: string, partitions: { topic: string; partition: number }[]): void {
    const resigned: { topic: string; partition: number }[] = [];
    for (const { topic, partition } of partitions) {
      const key = topicPartitionKey(topic, partition);
      this.offline.add(key);
      if (this.partitions.get(key)?.isLeader) resigned.push({ topic, partition });
      this.fetchPurgatory.checkAndComplete(key);
    }
    // This runs inside the failed operation (perhaps the group coordinator's own append): the
    // listeners hear of it once that operation has returned, not from inside it.
    if (resigned.length > 0) {
      void Promise.resolve().then(() => {
        for (const { topic, partition } of resigned) this.tellLeadership(topic, partition, false);
      });
    }
    this.logger.warn({ dir, partitions: partitions.map((p) => topicPartitionKey(p.topic, p.partition)) }, "partitions offline after log dir failure");
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
      if (wasLeader !== existing.isLeader && !this.offline.has(key)) this.tellLeadership(state.topic, state.partition, existing.isLeader);
      return;
    }
    let log;
    try {
      log = this.logManager.getOrCreateLog(state.topic, state.partition, config, state.isNew ?? false);
    } catch (e) {
      if (!(e instanceof KafkaStorageError)) throw e;
      // Kafka's answer: the partition is offline here (LeaderAndIsr reports KAFKA_STORAGE_ERROR).
      this.offline.add(key);
      this.logger.warn({ topic: state.topic, partition: state.partition, reason: e.message }, "partition offline: no log");
      return;
    }
    const p = new Partition(this.brokerId, state, log);
    this.partitions.set(key, p);
    this.logger.info({ topic: state.topic, partition: state.partition, leader: state.leader, leaderEpoch: state.leaderEpoch }, "partition online");
    if (p.isLeader) this.tellLeadership(state.topic, state.partition, true);
  }

  /** StopReplica: forget the partition, deleting its log when asked. */
  stopReplica(topic: string, partition: number, deletePartition: boolean): void {
    const key = topicPartitionKey(topic, partition);
    if (this.partitions.get(key)?.isLeader && !this.offline.has(key)) this.tellLeadership(topic, partition, false);
    this.partitions.delete(key);
    this.offline.delete(key);
    if (deletePartition) this.logManager.deleteLog(topic, partition);
    if (deletePartition && !this.allPartitions().some((q) => q.topic === topic)) this.topicStats.removeTopic(topic);
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
    if (this.isOffline(topic, partition)) {
      result.errorCode = ErrorCode.KAFKA_STORAGE_ERROR;
      result.errorMessage = `${topic}-${partition} is offline: its log dir failed`;
      return result;
    }
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
      this.topicStats.recordIn(topic, summary.recordCount, records.length);
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
    if (this.isOffline(req.topic, req.partition)) {
      out.errorCode = ErrorCode.KAFKA_STORAGE_ERROR;
      return out;
    }
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
    if (params.maxWaitMs <= 0 || bytes >= params.minBytes || anyError || params.partitions.length === 0) return this.countOut(params, first);
    const start = params.partitions.map((req) => this.getPartition(req.topic, req.partition)?.log.sizeBytes ?? 0);
    const op = {
      tryComplete: () => {
        let more = bytes;
        for (let i = 0; i < params.partitions.length; i++) {
          const req = params.partitions[i];
          const p = this.getPartition(req.topic, req.partition);
          if (p === undefined || !p.isLeader || this.isOffline(req.topic, req.partition)) return true;
          more += p.log.sizeBytes - start[i];
        }
        return more >= params.minBytes;
      },
    };
    const keys = params.partitions.map((r) => topicPartitionKey(r.topic, r.partition));
    await this.fetchPurgatory.waitFor(op, keys, params.maxWaitMs);
    return this.countOut(params, this.readAll(params));
  }

  /** Bytes out per topic for consumers' fetches (replicas' are replication traffic). */
  private countOut(params: FetchParams, results: FetchPartitionResult[]): FetchPartitionResult[] {
    if (!params.isReplica) for (const r of results) this.topicStats.recordOut(r.topic, r.records?.length ?? 0);
    return results;
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
      if (this.isOffline(req.topic, req.partition)) return { ...req, lowWatermark: -1, errorCode: ErrorCode.KAFKA_STORAGE_ERROR };
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
    this.offline.clear();
  }
}
