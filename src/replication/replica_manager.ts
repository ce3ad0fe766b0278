// ReplicaManager: the partitions this broker holds, created and changed only by the controller's
// LeaderAndIsr and StopReplica (so the registry stays the one source of partition state) and by
// their leaders' ISR changes; the produce and fetch paths over them, with the purgatories for
// acks=all produces (until the high watermark covers them) and fetch long polls; and, as
// follower, the log operations the replica fetchers (replica_fetcher.ts) call (FollowerLog).
//
// Leader side: a fetch from a follower (replicaId >= 0) reads up to the log end offset and
// records the follower's position first (so its answer carries the high watermark that position
// allows); the ISR grows in that path and shrinks on a timer every replica.lag.time.max.ms / 2.
// Follower side: LeaderAndIsr adds the partition to a fetcher for its leader (the fetcher
// truncates it first, by OffsetForLeaderEpoch), or removes it when this broker leads or stops.
//
// Offline partitions (Kafka's HostedPartition.Offline): those whose log dir failed, or whose log
// could not be created because of a failed dir. Produce, fetch, ListOffsets and DeleteRecords on
// them answer KAFKA_STORAGE_ERROR (checked before anything else, as Kafka's getPartitionOrError
// does); the LogManager reports the failure (handleLogDirFailure), and a storage error from a
// log operation reaches the client as that code through the KafkaError path.
// A partition whose log cannot be opened for a transient reason (out of file descriptors: see
// log_dir_failure.ts) is offline too, but only until a retry every partitionLogRetryMs opens it
// (pendingLogs); its LeaderAndIsr answers NONE (the controller must not take the replica offline
// for a failure that passes), its requests KAFKA_STORAGE_ERROR meanwhile, and /v1/status/ready
// says not ready.

import type { LogManager, TopicLogConfig } from "../log/mod.ts";
import { abortedTxnsForRead, hasCleanupPolicy, isThrottledReplica, KafkaStorageError, topicPartitionKey } from "../log/mod.ts";
import type { Clock } from "../platform/mod.ts";
import { recompressBatches, recordSetMagic, type RecordRules, targetCodecOf, upConvertMessageSet, validateBatches } from "../protocol/mod.ts";
import { decompressedBytesMax, ErrorCode, KafkaError, partitionLogRetryMs } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";
import { type IsrWriter, Partition, type PartitionState } from "./partition.ts";
import { DelayedOperationPurgatory } from "./purgatory.ts";
import type { ReplicationQuotaManager } from "./replication_quota.ts";
import { BrokerTopicStats } from "./topic_stats.ts";

import type { DeleteRecordsResult, FetchParams, TxnMarkerAppend, FetchPartitionRequest, FetchPartitionResult, FollowerLog, ProduceResult, ReplicaFetchers } from "./types.ts";
import { noReplicaFetchers } from "./types.ts";

export interface ReplicaManagerOptions {
  /** replica.lag.time.max.ms: a follower not caught up for this long leaves the ISR. */
  replicaLagTimeMaxMs: number;
  /** Writes the leader's ISR changes (null: never change the ISR, e.g. in unit tests). */
  isrWriter: IsrWriter | null;
  /** leader.replication.throttled.rate's quota (replication_quota.ts); null: never throttled. */
  leaderQuota: ReplicationQuotaManager | null;
}

const defaultOptions: ReplicaManagerOptions = { replicaLagTimeMaxMs: 30_000, isrWriter: null, leaderQuota: null };

export class ReplicaManager implements FollowerLog {
  private partitions = new Map<string, Partition>();
  /** How many of `partitions` each topic has (so a topic's last one is known without a scan). */
  private partitionsPerTopic = new Map<string, number>();
  /** Keys of offline partitions (see the header). */
  private offline = new Set<string>();
  /** Partitions whose log a transient error kept closed, with what to apply once it opens. */
  private pendingLogs = new Map<string, { state: PartitionState; config: TopicLogConfig; reason: string }>();
  private pendingRetry: { cancel(): void } | null = null;
  readonly fetchPurgatory: DelayedOperationPurgatory;
  readonly producePurgatory: DelayedOperationPurgatory;
  /** Messages and bytes in and out per topic, for /metrics. */
  readonly topicStats = new BrokerTopicStats();
  /** Set by the broker once its fetchers exist (they need this manager first). */
  fetchers: ReplicaFetchers = noReplicaFetchers;
  private isrTimer: { cancel(): void } | null = null;
  private readonly options: ReplicaManagerOptions;
  /** Told of each transaction marker written and replicated (set by the broker: the group coordinator's pending offsets). */
  onTxnMarker: ((topic: string, partition: number, producerId: bigint, committed: boolean) => void) | null = null;

  constructor(
    readonly brokerId: number,
    private readonly logManager: LogManager,
    private readonly clock: Clock,
    private readonly logger: Logger,
    options: Partial<ReplicaManagerOptions> = {},
  ) {
    this.options = { ...defaultOptions, ...options };
    this.fetchPurgatory = new DelayedOperationPurgatory(clock);
    this.producePurgatory = new DelayedOperationPurgatory(clock);
  }

  /** leader.replication.throttled.rate's quota, or null (replication_quota.ts). */
  get leaderQuota(): ReplicationQuotaManager | null {
    return this.options.leaderQuota;
  }

  /** Starts the ISR expiration check (Kafka's isr-expiration task, every lag / 2). */
  startup(): void {
    const every = Math.max(1, Math.floor(this.options.replicaLagTimeMaxMs / 2));
    this.isrTimer = this.clock.setInterval(() => {
      this.maybeShrinkIsrs();
      this.options.isrWriter?.retryPending?.();
    }, every);
  }

  getPartition(topic: string, partition: number): Partition | undefined {
    return this.partitions.get(topicPartitionKey(topic, partition));
  }

  allPartitions(): Partition[] {
    return [...this.partitions.values()];
  }

  /** True when the partition's log dir failed (its requests answer KAFKA_STORAGE_ERROR). */
  isOffline(topic: string, partition: number): boolean {
    if (this.offline.size === 0 && this.pendingLogs.size === 0) return false;
    const key = topicPartitionKey(topic, partition);
    return this.offline.has(key) || this.pendingLogs.has(key);
  }

  /** Why the partition cannot be served here (its dir failed, its log is not open), or null. */
  unavailableReason(topic: string, partition: number): string | null {
    const key = topicPartitionKey(topic, partition);
    if (this.offline.has(key)) return `${key} is offline: its log dir failed`;
    const pending = this.pendingLogs.get(key);
    return pending === undefined ? null : `the log of ${key} cannot be opened for now (${pending.reason})`;
  }

  /**
   * A log dir failed (Kafka's handleLogDirFailure): its partitions go offline, stop being led or
   * fetched here (the group coordinator unloads an offsets partition), and waiting operations
   * on them complete.
   */
  handleLogDirFailure(dir: string, partitions: { topic: string; partition: number }[]): void {
    const resigned: { topic: string; partition: number }[] = [];
    for (const { topic, partition } of partitions) {
      const key = topicPartitionKey(topic, partition);
      this.offline.add(key);
      if (this.partitions.get(key)?.isLeader) resigned.push({ topic, partition });
      this.wake(key);
    }
    this.fetchers.removeFetcherForPartitions(partitions);
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

  /** Completes the operations waiting on a partition whose high watermark, log or role changed. */
  private wake(key: string): void {
    this.producePurgatory.checkAndComplete(key);
    this.fetchPurgatory.checkAndComplete(key);
  }

  /**
   * Creates off the event loop the files of the logs becomeLeaderOrFollower would create for
   * these states (LogManager.prepareNewLogs); call it first when applying many at once.
   */
  prepareLogs(states: readonly PartitionState[]): Promise<void> {
    const fresh = states.filter((s) => !this.partitions.has(topicPartitionKey(s.topic, s.partition)));
    if (fresh.length === 0) return Promise.resolve();
    return this.logManager.prepareNewLogs(fresh.map((s) => ({
      topic: s.topic,
      partition: s.partition,
      isNew: s.isNew ?? false,
      // Becoming its leader assigns this epoch at the new log's end, 0 (Partition.becomeLeader).
      leaderEpoch: s.leader === this.brokerId && s.leaderEpoch >= 0 ? s.leaderEpoch : null,
    })));
  }

  /**
   * LeaderAndIsr for one partition this broker is a replica of (Kafka's becomeLeaderOrFollower).
   * A stale state (older leader epoch, or the same epoch with an older partition epoch) is
   * skipped with STALE_CONTROLLER_EPOCH; the answer is the partition's error code.
   */
  becomeLeaderOrFollower(state: PartitionState, config: TopicLogConfig): number {
    const key = topicPartitionKey(state.topic, state.partition);
    const tp = { topic: state.topic, partition: state.partition };
    const existing = this.partitions.get(key);
    // Offline here (its dir failed): nothing is applied, whatever the epochs (Kafka's
    // HostedPartition.Offline); the controller, told so, elects another ISR member.
    if (existing !== undefined && this.offline.has(key)) return ErrorCode.KAFKA_STORAGE_ERROR;
    if (existing !== undefined) {
      if (!existing.isNewer(state)) {
        this.logger.info({ ...tp, leaderEpoch: state.leaderEpoch, partitionEpoch: state.partitionEpoch, current: existing.leaderEpoch }, "stale LeaderAndIsr ignored");
        return ErrorCode.STALE_CONTROLLER_EPOCH;
      }
      const wasLeader = existing.isLeader;
      existing.log.config = config;
      const changed = existing.applyState(state, this.clock.monotonicMs());
      if (changed || wasLeader !== existing.isLeader) this.moveFetcher(existing);
      if (wasLeader !== existing.isLeader) this.tellLeadership(state.topic, state.partition, existing.isLeader);
      this.wake(key);
      return ErrorCode.NONE;
    }
    let log;
    this.pendingLogs.delete(key);
    try {
      log = this.logManager.getOrCreateLog(state.topic, state.partition, config, state.isNew ?? false);
    } catch (e) {
      if (!(e instanceof KafkaStorageError)) throw e;
      if (e.kind !== "failed") {
        // Out of descriptors: tried again until it opens (the controller will not resend this).
        this.pendingLogs.set(key, { state, config, reason: e.message });
        this.schedulePendingRetry();
        this.logger.warn({ ...tp, reason: e.message }, "partition unavailable until its log can be opened");
        // Not KAFKA_STORAGE_ERROR: the controller would take the replica offline (its leadership
        // elsewhere, or none) until this broker registers again, for a failure that passes.
        return ErrorCode.NONE;
      }
      // Kafka's answer: the partition is offline here (LeaderAndIsr reports KAFKA_STORAGE_ERROR).
      this.offline.add(key);
      this.logger.warn({ ...tp, reason: e.message }, "partition offline: no log");
      return ErrorCode.KAFKA_STORAGE_ERROR;
    }
    const p = new Partition(this.brokerId, state, log, this.clock.monotonicMs());
    this.partitions.set(key, p);
    this.partitionsPerTopic.set(state.topic, (this.partitionsPerTopic.get(state.topic) ?? 0) + 1);
    this.logger.info({ ...tp, leader: state.leader, leaderEpoch: state.leaderEpoch, isr: state.isr }, "partition online");
    this.moveFetcher(p);
    if (p.isLeader) this.tellLeadership(state.topic, state.partition, true);
    return ErrorCode.NONE;
  }

  private schedulePendingRetry(): void {
    if (this.pendingRetry !== null) return;
    this.pendingRetry = this.clock.setTimeout(() => {
      this.pendingRetry = null;
      const pending = [...this.pendingLogs];
      this.pendingLogs.clear();
      for (const [, { state, config }] of pending) this.becomeLeaderOrFollower(state, config);
    }, partitionLogRetryMs);
  }

  /** A leader fetches from nobody; a follower from its leader, at its epoch (the fetcher truncates first). */
  private moveFetcher(p: Partition): void {
    const tp = { topic: p.topic, partition: p.partition };
    this.fetchers.removeFetcherForPartitions([tp]);
    if (!p.isLeader && p.state.leader >= 0) {
      this.fetchers.addFetcherForPartitions([{ ...tp, leaderId: p.state.leader, leaderEpoch: p.state.leaderEpoch }]);
    }
  }

  /**
   * Resolves once the logs deleted so far (stopReplica) have left their paths (LogManager.deleteLog
   * renames them off the event loop): a StopReplica awaits it before the controller's next
   * request, which may create the same partitions again.
   */
  logDeletionsSettled(): Promise<void> {
    return this.logManager.renamesSettled();
  }

  /** StopReplica: stop fetching and forget the partition, deleting its log when asked. */
  stopReplica(topic: string, partition: number, deletePartition: boolean): void {
    const key = topicPartitionKey(topic, partition);
    this.fetchers.removeFetcherForPartitions([{ topic, partition }]);
    if (this.partitions.get(key)?.isLeader && !this.offline.has(key)) this.tellLeadership(topic, partition, false);
    if (this.partitions.delete(key)) {
      const left = (this.partitionsPerTopic.get(topic) ?? 1) - 1;
      if (left > 0) this.partitionsPerTopic.set(topic, left);
      else this.partitionsPerTopic.delete(topic);
    }
    this.offline.delete(key);
    this.pendingLogs.delete(key);
    if (deletePartition) this.logManager.deleteLog(topic, partition);
    // A count, not a scan of every partition: deleting a topic of 10,000 partitions was quadratic.
    if (deletePartition && !this.partitionsPerTopic.has(topic)) this.topicStats.removeTopic(topic);
    this.wake(key);
  }

  /**
   * Validates and appends one partition's record set as leader. Never throws for bad input.
   * With `legacyFormat` (Produce v0-2) a message set of magic 0 or 1 is first up-converted into
   * one record batch v2; magic 2 batches pass as they are, as Kafka accepts them in v0-2 too.
   * With requiredAcks -1 the ISR must hold min.insync.replicas first (NOT_ENOUGH_REPLICAS); the
   * caller then waits with awaitReplication.
   */
  appendToPartition(
    topic: string,
    partition: number,
    records: Uint8Array | null,
    maxMessageBytesDefault: number,
    legacyFormat = false,
    requiredAcks = 1,
  ): ProduceResult {
    const result: ProduceResult = {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      baseOffset: -1,
      nextOffset: -1,
      logAppendTimeMs: -1,
      logStartOffset: -1,
      recordCount: 0,
      recordErrors: [],
    };
    const fail = (errorCode: number, errorMessage: string) => ({ ...result, errorCode, errorMessage });
    const p = this.getPartition(topic, partition);
    if (this.isOffline(topic, partition)) return fail(ErrorCode.KAFKA_STORAGE_ERROR, `${topic}-${partition} is offline: its log dir failed`);
    if (p === undefined) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `this broker has no partition ${topic}-${partition}`);
    if (!p.isLeader) return fail(ErrorCode.NOT_LEADER_OR_FOLLOWER, `broker ${this.brokerId} is not the leader of ${topic}-${partition}`);
    if (records === null || records.length === 0) return fail(ErrorCode.CORRUPT_MESSAGE, "no records");
    const config = p.log.config as TopicLogConfig;
    const maxBytes = config.maxMessageBytes ?? maxMessageBytesDefault;
    const magic = recordSetMagic(records);
    if (legacyFormat && (magic === 0 || magic === 1)) {
      const converted = upConvertMessageSet(records);
      if (converted.batch === null) return fail(converted.errorCode, converted.message);
      records = converted.batch;
    }
    const summary = validateBatches(records, maxBytes, recordRulesOf(topic, partition, config, this.clock.nowMs()));
    if (summary.errorCode !== ErrorCode.NONE) return { ...fail(summary.errorCode, summary.message), recordErrors: summary.recordErrors };
    const target = targetCodecOf(config.compressionType);
    if (target !== null) {
      const levels = { gzip: config.compressionGzipLevel, zstd: config.compressionZstdLevel };
      const rewritten = recompressBatches(records, target, levels, maxBytes, `${topic}-${partition}`);
      if (!rewritten.ok) return fail(rewritten.errorCode, rewritten.message);
      records = rewritten.records;
    }
    try {
      const info = p.appendRecordsToLeader(records, summary, requiredAcks, this.clock.monotonicMs());
      result.baseOffset = info.firstOffset;
      result.nextOffset = info.lastOffset + 1;
      result.logStartOffset = p.log.logStartOffset;
      if (info.duplicate) {
        // Kafka answers a producer's retry with the original batch's offsets and timestamp;
        // acks=all then waits for the original to be replicated (nextOffset).
        result.logAppendTimeMs = info.logAppendTimeMs;
        return result;
      }
      result.recordCount = summary.recordCount;
      result.logAppendTimeMs = summary.logAppendTimeMs;
      this.topicStats.recordIn(topic, summary.recordCount, records.length);
    } catch (e) {
      if (!(e instanceof KafkaError)) throw e;
      return fail(e.code, e.message);
    }
    // Followers waiting in a fetch take the new batches now; the high watermark may have moved.
    this.wake(topicPartitionKey(topic, partition));
    return result;
  }

  /**
   * WriteTxnMarkers for one partition (Kafka's handleWriteTxnMarkersRequest: appendRecords with
   * origin COORDINATOR, acks=all): writes the marker as the leader, then waits (timeoutMs) until
   * the ISR has it. Answers an error code: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER,
   * KAFKA_STORAGE_ERROR, NOT_ENOUGH_REPLICAS, INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED,
   * REQUEST_TIMED_OUT... On NONE, onTxnMarker is told (the group coordinator, for __consumer_offsets).
   */
  async appendTxnMarker(topic: string, partition: number, m: TxnMarkerAppend, timeoutMs: number): Promise<number> {
    const p = this.getPartition(topic, partition);
    if (this.isOffline(topic, partition)) return ErrorCode.KAFKA_STORAGE_ERROR;
    if (p === undefined) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    let nextOffset: number;
    try {
      nextOffset = p.appendTxnMarkerToLeader(m.producerId, m.producerEpoch, m, this.clock.monotonicMs()).lastOffset + 1;
    } catch (e) {
      if (!(e instanceof KafkaError)) throw e;
      return e.code;
    }
    this.wake(topicPartitionKey(topic, partition));
    const [code] = await this.awaitReplication([{ topic, partition, requiredOffset: nextOffset }], timeoutMs);
    if (code === ErrorCode.NONE) this.onTxnMarker?.(topic, partition, m.producerId, m.committed);
    return code;
  }

  /**
   * acks=all (Kafka's DelayedProduce): waits until each partition's high watermark reaches its
   * required offset or timeoutMs passes; answers an error code per partition (REQUEST_TIMED_OUT
   * for those still waiting, NOT_LEADER_OR_FOLLOWER for those whose leadership moved away,
   * NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR fell below min.insync.replicas).
   */
  async awaitReplication(parts: { topic: string; partition: number; requiredOffset: number }[], timeoutMs: number): Promise<number[]> {
    const codes: (number | null)[] = parts.map(() => null);
    const op = {
      tryComplete: () => {
        for (let i = 0; i < parts.length; i++) {
          if (codes[i] !== null) continue;
          const { topic, partition, requiredOffset } = parts[i];
          const p = this.getPartition(topic, partition);
          if (this.isOffline(topic, partition)) codes[i] = ErrorCode.KAFKA_STORAGE_ERROR;
          else if (p === undefined) codes[i] = ErrorCode.NOT_LEADER_OR_FOLLOWER;
          else codes[i] = p.checkEnoughReplicasReachOffset(requiredOffset);
        }
        return codes.every((c) => c !== null);
      },
    };
    const keys = parts.map((p) => topicPartitionKey(p.topic, p.partition));
    await this.producePurgatory.waitFor(op, keys, timeoutMs);
    op.tryComplete();
    return codes.map((c) => c ?? ErrorCode.REQUEST_TIMED_OUT);
  }

  /**
   * Reads one partition: consumers up to the high watermark from the leader only (read_committed:
   * the last stable offset, with the aborted transactions the records overlap); followers up to
   * the log end offset. `leaderEndOffset` is set to the log end offset at the read.
   */
  readPartition(req: FetchPartitionRequest, replicaId: number, minOneBatch: boolean, readCommitted = false, fetchOnlyLeader = true): FetchPartitionResult & { leaderEndOffset: number } {
    const out = {
      topic: req.topic,
      partition: req.partition,
      errorCode: ErrorCode.NONE as number,
      highWatermark: -1,
      lastStableOffset: -1,
      logStartOffset: -1,
      records: null as Uint8Array | null,
      leaderEndOffset: -1,
    };
    const p = this.getPartition(req.topic, req.partition);
    if (this.isOffline(req.topic, req.partition)) return { ...out, errorCode: ErrorCode.KAFKA_STORAGE_ERROR };
    if (p === undefined) return { ...out, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
    // KIP-392: a consumer's fetch (v11+) may read a follower, up to the follower's high watermark.
    if (!p.isLeader && (fetchOnlyLeader || replicaId >= 0)) return { ...out, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
    const epochError = p.checkLeaderEpoch(req.currentLeaderEpoch ?? -1);
    if (epochError !== ErrorCode.NONE) return { ...out, errorCode: epochError };
    if (replicaId >= 0 && !p.isReplica(replicaId)) return { ...out, errorCode: notAssignedReplicaError(req.currentLeaderEpoch ?? -1) };
    out.highWatermark = p.highWatermark;
    out.lastStableOffset = p.log.lastStableOffset;
    out.logStartOffset = p.log.logStartOffset;
    out.leaderEndOffset = p.log.logEndOffset;
    const preferred = req.preferredReadReplica?.(p) ?? -1;
    if (preferred >= 0) {
      // The leader sends the consumer to another replica and reads nothing (Kafka's readFromLog).
      out.records = new Uint8Array(0);
      return { ...out, preferredReadReplica: preferred };
    }
    if (replicaId >= 0 && this.shouldLeaderThrottle(p, replicaId)) {
      out.records = new Uint8Array(0);
      return out;
    }
    const committed = readCommitted && replicaId < 0;
    const limit = replicaId >= 0 ? p.log.logEndOffset : committed ? out.lastStableOffset : p.highWatermark;
    if (req.fetchOffset === limit && req.fetchOffset <= p.log.logEndOffset) {
      out.records = new Uint8Array(0);
      return committed ? { ...out, abortedTransactions: [] } : out;
    }
    try {
      out.records = p.log.read(req.fetchOffset, req.maxBytes, minOneBatch, limit).records;
      if (committed) return { ...out, abortedTransactions: abortedTxnsForRead(p.log.logSegments, req.fetchOffset, out.records) };
    } catch (e) {
      if (!(e instanceof KafkaError)) throw e;
      out.errorCode = e.code;
    }
    return out;
  }

  /**
   * A fetch as the Fetch API describes it: reads every partition (the first non-empty one whole
   * even past its byte limit, KIP-74), and when fewer than minBytes are there, waits in the fetch
   * purgatory until enough arrive or maxWaitMs passes, then reads again. A follower's fetch first
   * records its position (Kafka's updateFollowerFetchState), which may move the high watermark
   * and grow the ISR.
   */
  async fetchMessages(params: FetchParams): Promise<FetchPartitionResult[]> {
    if (params.replicaId >= 0) this.updateFollowerFetchStates(params);
    const first = this.readAll(params);
    const bytes = first.reduce((n, r) => n + (r.records?.length ?? 0), 0);
    const anyError = first.some((r) => r.errorCode !== ErrorCode.NONE);
    const redirected = first.some((r) => (r.preferredReadReplica ?? -1) >= 0);
    if (params.maxWaitMs <= 0 || bytes >= params.minBytes || anyError || redirected || params.partitions.length === 0) return this.countOut(params, first);
    // Consumers wait for the high watermark to pass their offset, followers for the log end.
    const visible = (p: Partition) => (params.replicaId >= 0 ? p.log.logEndOffset : params.isolationLevel === 1 ? p.log.lastStableOffset : p.highWatermark);
    const op = {
      tryComplete: () => {
        for (const req of params.partitions) {
          const p = this.getPartition(req.topic, req.partition);
          if (p === undefined || (!p.isLeader && params.fetchOnlyLeader !== false) || this.isOffline(req.topic, req.partition)) return true;
          // A throttled follower's data does not complete the wait (Kafka's DelayedFetch).
          if (visible(p) > req.fetchOffset && !(params.replicaId >= 0 && this.shouldLeaderThrottle(p, params.replicaId))) return true;
        }
        return false;
      },
    };
    const keys = params.partitions.map((r) => topicPartitionKey(r.topic, r.partition));
    const parkedFromMs = this.clock.monotonicMs();
    await this.fetchPurgatory.waitFor(op, keys, params.maxWaitMs);
    params.onParked?.(this.clock.monotonicMs() - parkedFromMs);
    return this.countOut(params, this.readAll(params));
  }

  private updateFollowerFetchStates(params: FetchParams): void {
    const now = this.clock.monotonicMs();
    for (const req of params.partitions) {
      const p = this.getPartition(req.topic, req.partition);
      if (p === undefined || !p.isLeader || this.isOffline(req.topic, req.partition)) continue;
      if (p.checkLeaderEpoch(req.currentLeaderEpoch ?? -1) !== ErrorCode.NONE) continue;
      // A fetch outside the log (a diverged or lagging follower) answers OFFSET_OUT_OF_RANGE and
      // says nothing of the follower's position (Kafka updates it only after a successful read).
      if (req.fetchOffset > p.log.logEndOffset || req.fetchOffset < p.log.logStartOffset) continue;
      if (p.updateFollowerFetchState(params.replicaId, req.fetchOffset, p.log.logEndOffset, now)) this.wake(topicPartitionKey(p.topic, p.partition));
      const grown = p.isrToExpand(params.replicaId, now);
      if (grown !== null) void this.changeIsr(p, grown);
    }
  }

  /** Writes an ISR change; on success the high watermark may move and waiting produces complete. */
  private async changeIsr(p: Partition, newIsr: number[]): Promise<void> {
    const writer = this.options.isrWriter;
    if (writer === null) return;
    try {
      if (await p.changeIsr(newIsr, writer, () => this.clock.monotonicMs())) this.wake(topicPartitionKey(p.topic, p.partition));
    } catch (e) {
      this.logger.error({ topic: p.topic, partition: p.partition, err: (e as Error).stack }, "ISR change failed");
    }
  }

  /** Kafka's maybeShrinkIsr over every partition led here. */
  maybeShrinkIsrs(): void {
    const now = this.clock.monotonicMs();
    for (const [key, p] of this.partitions) {
      if (this.offline.has(key)) continue;
      const shrunk = p.isrToShrink(now, this.options.replicaLagTimeMaxMs);
      if (shrunk === null) continue;
      this.logger.info({ topic: p.topic, partition: p.partition, isr: p.state.isr, newIsr: shrunk, highWatermark: p.highWatermark }, "shrinking ISR: followers out of sync");
      void this.changeIsr(p, shrunk);
    }
  }

  /**
   * Bytes out per topic for consumers' fetches; a follower's bytes of leader-throttled partitions
   * go on the leader's replication quota (Kafka's sizeOfThrottledPartitions, in-sync or not).
   */
  private countOut(params: FetchParams, results: FetchPartitionResult[]): FetchPartitionResult[] {
    if (params.replicaId < 0) for (const r of results) this.topicStats.recordOut(r.topic, r.records?.length ?? 0);
    const quota = this.options.leaderQuota;
    if (params.replicaId >= 0 && quota !== null) {
      let throttledBytes = 0;
      for (const r of results) {
        const p = this.getPartition(r.topic, r.partition);
        if (p !== undefined && this.leaderThrottled(p)) throttledBytes += r.records?.length ?? 0;
      }
      quota.record(throttledBytes);
    }
    return results;
  }

  /** The topic's leader.replication.throttled.replicas names this partition's replica here. */
  private leaderThrottled(p: Partition): boolean {
    return isThrottledReplica((p.log.config as TopicLogConfig).leaderThrottledReplicas, p.partition, this.brokerId);
  }

  /** Kafka's shouldLeaderThrottle: an out-of-sync follower, a throttled partition, the quota exceeded. */
  private shouldLeaderThrottle(p: Partition, replicaId: number): boolean {
    const quota = this.options.leaderQuota;
    return quota !== null && !p.state.isr.includes(replicaId) && this.leaderThrottled(p) && quota.isQuotaExceeded();
  }

  private readAll(params: FetchParams): FetchPartitionResult[] {
    let budget = params.maxBytes;
    let minOneBatch = true;
    return params.partitions.map((req) => {
      const { leaderEndOffset: _, ...r } = this.readPartition({ ...req, maxBytes: Math.min(req.maxBytes, budget) }, params.replicaId, minOneBatch, params.isolationLevel === 1, params.fetchOnlyLeader !== false);
      const n = r.records?.length ?? 0;
      if (n > 0) minOneBatch = false;
      budget = Math.max(0, budget - n);
      return r;
    });
  }

  /**
   * OffsetForLeaderEpoch on the leader (KIP-101/279): the end offset of `leaderEpoch` in this
   * log (the start of the next higher epoch, or the log end offset for the latest), with the
   * largest epoch at or below the one asked for; -1/-1 when the log knows no such epoch.
   */
  lastOffsetForLeaderEpoch(topic: string, partition: number, currentLeaderEpoch: number, leaderEpoch: number, replicaId: number) {
    const none = { leaderEpoch: -1, endOffset: -1 };
    const p = this.getPartition(topic, partition);
    if (this.isOffline(topic, partition)) return { ...none, errorCode: ErrorCode.KAFKA_STORAGE_ERROR };
    if (p === undefined) return { ...none, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
    if (!p.isLeader) return { ...none, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
    const epochError = p.checkLeaderEpoch(currentLeaderEpoch);
    if (epochError !== ErrorCode.NONE) return { ...none, errorCode: epochError };
    // strand, past Kafka: a follower's question needs a follower of this partition.
    if (replicaId >= 0 && !p.isReplica(replicaId)) return { ...none, errorCode: notAssignedReplicaError(currentLeaderEpoch) };
    const r = p.log.endOffsetForEpoch(leaderEpoch);
    return { errorCode: ErrorCode.NONE, ...(r ?? none) };
  }

  // ---- FollowerLog: what the replica fetchers do to partitions this broker follows ----

  private followedPartition(topic: string, partition: number): Partition {
    const p = this.getPartition(topic, partition);
    if (p === undefined || p.isLeader || this.isOffline(topic, partition)) {
      throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `broker ${this.brokerId} does not follow ${topic}-${partition}`);
    }
    return p;
  }

  followerState(topic: string, partition: number) {
    const p = this.getPartition(topic, partition);
    if (p === undefined || p.isLeader || this.isOffline(topic, partition)) return null;
    return {
      leaderId: p.state.leader,
      leaderEpoch: p.state.leaderEpoch,
      logEndOffset: p.log.logEndOffset,
      logStartOffset: p.log.logStartOffset,
      highWatermark: p.highWatermark,
      latestEpoch: p.log.latestEpoch,
      throttled: isThrottledReplica((p.log.config as TopicLogConfig).followerThrottledReplicas, p.partition, this.brokerId),
    };
  }

  endOffsetForEpoch(topic: string, partition: number, epoch: number) {
    return this.followedPartition(topic, partition).log.endOffsetForEpoch(epoch);
  }

  truncateTo(topic: string, partition: number, offset: number): void {
    const p = this.followedPartition(topic, partition);
    // At or past the log end nothing is cut, but an epoch starting there is dropped (as Kafka's
    // truncateTo does), so a walk-back step at the log end makes progress.
    if (offset >= p.log.logEndOffset) {
      p.log.truncateTo(offset);
      return;
    }
    this.logger.info({ topic, partition, logEndOffset: p.log.logEndOffset, truncateTo: offset, highWatermark: p.highWatermark }, "truncating follower log");
    p.log.truncateTo(offset);
  }

  truncateFullyAndStartAt(topic: string, partition: number, offset: number): void {
    const p = this.followedPartition(topic, partition);
    this.logger.info({ topic, partition, logEndOffset: p.log.logEndOffset, startAt: offset }, "truncating follower log fully");
    p.log.truncateFullyAndStartAt(offset);
  }

  appendAsFollower(topic: string, partition: number, records: Uint8Array, leaderHighWatermark: number, leaderLogStartOffset: number): void {
    const p = this.followedPartition(topic, partition);
    if (records.length > 0) p.log.appendAsFollower(records);
    const hwBefore = p.highWatermark;
    p.updateFollowerHighWatermark(leaderHighWatermark);
    // Consumers reading this follower (KIP-392) wait for its high watermark.
    if (p.highWatermark !== hwBefore) this.wake(topicPartitionKey(topic, partition));
    const start = Math.min(leaderLogStartOffset, p.highWatermark);
    if (start > p.log.logStartOffset) p.log.maybeIncrementLogStartOffset(start, "leader's log start offset moved");
  }

  /**
   * DeleteRecords (Kafka's ReplicaManager.deleteRecords): moves each partition's log start offset
   * (offset -1: to the high watermark) and answers the leader's new log start offset (Kafka waits
   * for every follower's; here followers catch up at their next fetch). A moved start offset is
   * checkpointed at once, so deleted records do not come back after a crash.
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
    this.options.isrWriter?.shutdown?.();
    this.isrTimer?.cancel();
    this.isrTimer = null;
    this.pendingRetry?.cancel();
    this.pendingRetry = null;
    this.pendingLogs.clear();
    this.fetchPurgatory.shutdown();
    this.producePurgatory.shutdown();
    this.partitions.clear();
    this.partitionsPerTopic.clear();
    this.offline.clear();
  }
}

/**
 * What a produce to this partition must satisfy, from its topic config (Kafka's LogConfig): keys
 * on compacted topics, the timestamp type, and the timestamp bounds, where before/after.max.ms
 * left at Long.MAX_VALUE fall back to the legacy difference.max.ms as Kafka's LogConfig does.
 */
export function recordRulesOf(topic: string, partition: number, config: TopicLogConfig, nowMs: number): RecordRules {
  const unset = Number.MAX_SAFE_INTEGER;
  const difference = config.messageTimestampDifferenceMaxMs ?? unset;
  const before = config.messageTimestampBeforeMaxMs ?? unset;
  const after = config.messageTimestampAfterMaxMs ?? unset;
  return {
    topicPartition: `${topic}-${partition}`,
    compacted: hasCleanupPolicy(config.cleanupPolicy, "compact"),
    logAppendTime: config.messageTimestampType === "LogAppendTime",
    timestampBeforeMaxMs: before >= unset ? difference : before,
    timestampAfterMaxMs: after >= unset ? difference : after,
    nowMs,
    decompressedBytesMax,
  };
}

/**
 * Kafka's answer to a replica id that is not one of the partition's followers (Partition's
 * followerReplicaOrThrow): UNKNOWN_LEADER_EPOCH when the request named the current leader epoch
 * (the replica may be one being added, so it retries), else NOT_LEADER_OR_FOLLOWER.
 */
function notAssignedReplicaError(currentLeaderEpoch: number): number {
  return currentLeaderEpoch >= 0 ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.NOT_LEADER_OR_FOLLOWER;
}
