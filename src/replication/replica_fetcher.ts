// The replica fetchers: how a follower copies its leaders' logs (Kafka's ReplicaFetcherManager,
// AbstractFetcherThread and ReplicaFetcherThread, ZooKeeper mode, without truncation on fetch).
//
// One ReplicaFetcherThread (an async loop with one connection) per (leader broker, fetcherId),
// fetcherId = abs(31 * topic.hashCode + partition) % num.replica.fetchers, as Kafka places them.
// Each partition it serves is in one state:
// - truncating: the follower finds where its log diverges from the leader's and cuts it there
//   (OffsetForLeaderEpoch v4 for its latest epoch, walking back epochs: truncation.ts), or to its
//   high watermark when it has no epochs;
// - fetching: Fetch v12 from fetchOffset (always the local log end offset) with replicaId = this
//   broker, appending what comes back as the leader assigned it and taking the leader's HW;
// - failed: stopped until the ReplicaManager adds it again (a new LeaderAndIsr), after the
//   leader fenced our epoch or a local append failed.
//
// Errors, per partition (the rest back off replica.fetch.backoff.ms and retry, as do connection
// failures for every partition of the request):
// - OFFSET_OUT_OF_RANGE: ListOffsets (latest, with our replica id) for the leader's log end
//   offset; if ours is past it, truncate to it; otherwise ListOffsets (earliest) and, when the
//   leader's log now starts past our end, empty ours and start it at the leader's start.
// - FENCED_LEADER_EPOCH: our leader epoch is older than the leader's: failed, await LeaderAndIsr.
// - NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_LEADER_EPOCH: the leader has not
//   (yet) applied the LeaderAndIsr that made it leader, or does not see us as a live broker yet:
//   back off and retry, as Kafka does. Stopping instead would leave the follower out for good,
//   since only a new LeaderAndIsr would restart it.
//
// Invariants:
// - The fetch offset is the local log end offset: set from the log after every truncation and
//   append, and checked before every append (a mismatch fails the partition, as in Kafka).
// - A response is applied only to the partition state it was requested for: a partition removed
//   (or re-added under another epoch) while the request was out has its answer dropped; and the
//   local replica must still follow the same leader at the same epoch (FollowerLog.followerState),
//   checked with no await between the check and the append or truncation.
// - A walk back (KIP-279) lowers the latest local epoch at every step, or the partition fails:
//   the loop cannot spin.
// - Never truncateTo below the log start offset: a truncation point before it empties the log
//   and starts it there (truncateFullyAndStartAt), as Kafka's truncateTo does.
// - shutdown() and removing a fetcher's last partition close its connection, which ends the
//   request in flight (a fetch long-poll) at once; shutdown resolves when every loop has ended.
import { KafkaConnection, type SaslCredentials } from "../client/mod.ts";
import type { Platform, TlsClientOptions } from "../platform/mod.ts";
import { FetchApi, ListOffsetsApi, OffsetForLeaderEpochApi, type Struct } from "../protocol/mod.ts";
import { ErrorCode, errorName, javaStringHashCode, KafkaError, kafkaAbs, type Logger } from "../util/mod.ts";
import type { ReplicationQuotaManager } from "./replication_quota.ts";
import { offsetTruncationState, type OffsetTruncationState, truncationWithoutEpochs } from "./truncation.ts";
import type { FollowerLog, ReplicaFetchers } from "./types.ts";

/** The versions a follower sends (what Kafka 3.x sends with IBP 3.1+, Fetch by topic name). */
export const REPLICA_FETCH_VERSION = 12;
export const OFFSET_FOR_LEADER_EPOCH_VERSION = 4;
export const REPLICA_LIST_OFFSETS_VERSION = 7;

export interface ReplicaFetcherOptions {
  /** num.replica.fetchers: fetcher loops (and connections) per leader broker. */
  numReplicaFetchers: number;
  /** replica.fetch.max.bytes: per partition, per fetch. */
  replicaFetchMaxBytes: number;
  /** replica.fetch.response.max.bytes: per fetch. */
  replicaFetchResponseMaxBytes: number;
  /** replica.fetch.wait.max.ms: the leader's long-poll. */
  replicaFetchWaitMaxMs: number;
  /** replica.fetch.min.bytes. */
  replicaFetchMinBytes: number;
  /** replica.fetch.backoff.ms: pause after an error before a partition (or a connection) is tried again. */
  replicaFetchBackoffMs: number;
  /** replica.socket.timeout.ms: how long one request may wait for its answer. */
  requestTimeoutMs: number;
  /** TCP connect timeout; requestTimeoutMs when not given. */
  connectTimeoutMs?: number;
  /** The broker's own login when the inter-broker listener speaks SASL. */
  sasl?: SaslCredentials;
  /** The broker's TLS settings when the inter-broker listener speaks TLS. */
  tls?: TlsClientOptions;
  /** follower.replication.throttled.rate's quota (replication_quota.ts); none: never throttled. */
  quota?: ReplicationQuotaManager;
}

/** Where a broker listens (the metadata cache, with LeaderAndIsr's live leaders). */
export type BrokerEndpointLookup = (id: number) => { host: string; port: number } | undefined;

export type PartitionFetchStateName = "truncating" | "fetching" | "failed";

/** One partition as its fetcher sees it (for logs, metrics and tests). */
export interface PartitionFetchStatus {
  topic: string;
  partition: number;
  leaderId: number;
  leaderEpoch: number;
  fetcherId: number;
  state: PartitionFetchStateName;
  /** -1 until the first truncation has set it. */
  fetchOffset: number;
  /** The last error seen for the partition (null once it fetched fine again). */
  lastError: string | null;
}

/** Kafka's AbstractFetcherManager.getFetcherId. */
export function fetcherIdFor(topic: string, partition: number, numReplicaFetchers: number): number {
  return kafkaAbs((Math.imul(31, javaStringHashCode(topic)) + partition) | 0) % numReplicaFetchers;
}

const partitionKey = (topic: string, partition: number) => `${topic}:${partition}`;

type FollowerState = NonNullable<ReturnType<FollowerLog["followerState"]>>;

/** An int64 offset from the wire as a number, or null when it is not a safe integer. */
function offsetOf(v: unknown): number | null {
  if (typeof v !== "bigint") return null;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : null;
}

class PartitionFetchState {
  state: PartitionFetchStateName = "truncating";
  fetchOffset = -1;
  /** Monotonic time before which the partition is not tried (backoff after an error). */
  delayedUntilMs = 0;
  lastError: string | null = null;
  /** The epoch asked in the last, incomplete, walk-back step: the next must ask a lower one. */
  walkBackEpoch: number | null = null;
  /** The leader's high watermark less our fetch offset after the last fetch; null before one (Kafka's lag). */
  lag: number | null = null;

  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly leaderId: number,
    readonly leaderEpoch: number,
  ) {}
}

interface FetcherContext {
  platform: Platform;
  brokerId: number;
  log: FollowerLog;
  brokerEndpoint: BrokerEndpointLookup;
  logger: Logger;
  options: ReplicaFetcherOptions;
}

/** One fetcher loop: the partitions one leader broker serves to this fetcherId. */
class ReplicaFetcherThread {
  readonly partitions = new Map<string, PartitionFetchState>();
  private conn: KafkaConnection | null = null;
  private connEndpoint = "";
  private stopped = false;
  private wakeUp: (() => void) | null = null;
  /** Consecutive request failures, so a leader that stays down is logged once. */
  private failures = 0;
  private readonly logger: Logger;
  readonly loop: Promise<void>;

  constructor(private readonly ctx: FetcherContext, readonly leaderId: number, readonly fetcherId: number) {
    this.logger = ctx.logger.child({ leader: leaderId, fetcherId });
    this.loop = this.run();
  }

  // --- driven by the manager ---------------------------------------------------------------------

  /** Adds (or keeps, when it is already followed at the same epoch and not failed) a partition. */
  addPartition(topic: string, partition: number, leaderEpoch: number): void {
    const key = partitionKey(topic, partition);
    const cur = this.partitions.get(key);
    if (cur !== undefined && cur.leaderEpoch === leaderEpoch && cur.state !== "failed") return;
    this.partitions.set(key, new PartitionFetchState(topic, partition, this.leaderId, leaderEpoch));
    this.wake();
  }

  removePartition(key: string): void {
    this.partitions.delete(key);
  }

  /** Reconnects when the leader's endpoint moved (a broker restarted on another address). */
  checkEndpoint(): void {
    const ep = this.ctx.brokerEndpoint(this.leaderId);
    if (this.conn !== null && ep !== undefined && `${ep.host}:${ep.port}` !== this.connEndpoint) {
      this.conn.close(`leader ${this.leaderId} moved to ${ep.host}:${ep.port}`);
      this.conn = null;
    }
  }

  stop(): void {
    this.stopped = true;
    this.conn?.close("replica fetcher stopped");
    this.conn = null;
    this.wake();
  }

  status(): PartitionFetchStatus[] {
    return [...this.partitions.values()].map((s) => ({
      topic: s.topic,
      partition: s.partition,
      leaderId: s.leaderId,
      leaderEpoch: s.leaderEpoch,
      fetcherId: this.fetcherId,
      state: s.state,
      fetchOffset: s.fetchOffset,
      lastError: s.lastError,
    }));
  }

  // --- the loop ----------------------------------------------------------------------------------

  private wake(): void {
    const w = this.wakeUp;
    this.wakeUp = null;
    w?.();
  }

  /** Waits until woken or ms passes (forever when ms is null). */
  private wait(ms: number | null): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = ms === null ? null : this.ctx.platform.clock.setTimeout(() => this.wake(), Math.max(0, ms));
      this.wakeUp = () => {
        timer?.cancel();
        resolve();
      };
    });
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        if (!(await this.doWork())) await this.wait(this.msUntilReady());
      } catch (e) {
        // A bug, not a peer's fault: say so, and do not spin.
        this.logger.error({ err: (e as Error).stack ?? String(e) }, "replica fetcher loop failed; backing off");
        await this.wait(this.ctx.options.replicaFetchBackoffMs);
      }
    }
  }

  /** Truncates or fetches the partitions that are due; false when none is. */
  private async doWork(): Promise<boolean> {
    const now = this.ctx.platform.clock.monotonicMs();
    const due = (s: PartitionFetchState, state: PartitionFetchStateName) => s.state === state && s.delayedUntilMs <= now;
    const truncating = [...this.partitions.values()].filter((s) => due(s, "truncating"));
    if (truncating.length > 0) {
      await this.truncate(truncating);
      return true;
    }
    const fetching = [...this.partitions.values()].filter((s) => due(s, "fetching"));
    if (fetching.length > 0) {
      await this.fetch(fetching);
      return true;
    }
    return false;
  }

  /** Until the earliest delayed partition is due; null when none is waiting on a delay. */
  private msUntilReady(): number | null {
    let earliest = Infinity;
    for (const s of this.partitions.values()) if (s.state !== "failed") earliest = Math.min(earliest, s.delayedUntilMs);
    return earliest === Infinity ? null : earliest - this.ctx.platform.clock.monotonicMs();
  }

  private async connection(): Promise<KafkaConnection> {
    if (this.conn !== null && !this.conn.closed) return this.conn;
    const ep = this.ctx.brokerEndpoint(this.leaderId);
    if (ep === undefined) throw new Error(`leader ${this.leaderId}'s endpoint is not known`);
    const conn = await KafkaConnection.connect(this.ctx.platform, {
      host: ep.host,
      port: ep.port,
      clientId: `strand-replica-fetcher-${this.ctx.brokerId}-${this.leaderId}-${this.fetcherId}`,
      connectTimeoutMs: this.ctx.options.connectTimeoutMs ?? this.ctx.options.requestTimeoutMs,
      sasl: this.ctx.options.sasl,
      tls: this.ctx.options.tls,
      // A fetch answer's records are appended (copied to the log) before the next fetch: its
      // buffer takes the next answer (fetch() recycles it).
      recycleAnswers: true,
    });
    if (this.stopped) {
      conn.close("replica fetcher stopped");
      throw new Error("replica fetcher stopped");
    }
    this.conn = conn;
    this.connEndpoint = `${ep.host}:${ep.port}`;
    return conn;
  }

  /** Sends one request to the leader; null (after backing off `parts`) when it fails or we stopped. */
  private async send(what: string, parts: PartitionFetchState[], send: (c: KafkaConnection) => Promise<Struct>): Promise<Struct | null> {
    try {
      const res = await send(await this.connection());
      if (this.stopped) return null;
      if (this.failures > 0) this.logger.info({ failures: this.failures }, "replica fetcher reached its leader again");
      this.failures = 0;
      return res;
    } catch (e) {
      if (this.stopped) return null;
      this.conn?.close(`${what} failed`);
      this.conn = null;
      const fields = { request: what, partitions: parts.length, failures: this.failures + 1, err: (e as Error).message };
      if (this.failures++ === 0) this.logger.warn(fields, "replica fetcher request failed; backing off");
      else this.logger.debug(fields, "replica fetcher request failed again; backing off");
      for (const s of parts) this.delay(s, (e as Error).message);
      return null;
    }
  }

  // --- partition state -----------------------------------------------------------------------------

  /** True while `s` is still the partition's state in this fetcher. */
  private isCurrent(s: PartitionFetchState): boolean {
    return this.partitions.get(partitionKey(s.topic, s.partition)) === s;
  }

  /** The local replica's state, when it still follows s's leader at s's epoch; otherwise fails s. */
  private followerState(s: PartitionFetchState): FollowerState | null {
    const fs = this.ctx.log.followerState(s.topic, s.partition);
    if (fs !== null && fs.leaderId === s.leaderId && fs.leaderEpoch === s.leaderEpoch) return fs;
    const now = fs === null ? "no longer follows it" : `follows leader ${fs.leaderId} at epoch ${fs.leaderEpoch}`;
    this.fail(s, `the local replica ${now}`, "debug");
    return null;
  }

  private delay(s: PartitionFetchState, why: string): void {
    s.delayedUntilMs = this.ctx.platform.clock.monotonicMs() + this.ctx.options.replicaFetchBackoffMs;
    s.lastError = why;
  }

  /** Logs a partition error once per kind (not every backoff), then backs the partition off. */
  private delayOnError(s: PartitionFetchState, request: string, code: number): void {
    const why = `${request}: ${errorName(code)}`;
    if (s.lastError !== why) this.logger.info({ topic: s.topic, partition: s.partition, leaderEpoch: s.leaderEpoch, error: errorName(code) }, `${request} error from leader; retrying after backoff`);
    this.delay(s, why);
  }

  private fail(s: PartitionFetchState, why: string, level: "debug" | "warn" | "error" = "warn"): void {
    s.state = "failed";
    s.lastError = why;
    this.logger[level]({ topic: s.topic, partition: s.partition, leaderEpoch: s.leaderEpoch, reason: why }, "replica fetching stopped for partition until the next LeaderAndIsr");
  }

  private answered(s: PartitionFetchState): void {
    s.lastError = null;
    s.delayedUntilMs = 0;
  }

  // --- truncation ----------------------------------------------------------------------------------

  private async truncate(parts: PartitionFetchState[]): Promise<void> {
    const asked = new Map<string, { s: PartitionFetchState; epoch: number }>();
    for (const s of parts) {
      const fs = this.followerState(s);
      if (fs === null) continue;
      if (fs.latestEpoch === null) {
        this.applyTruncation(s, fs, truncationWithoutEpochs(fs), null);
        continue;
      }
      if (s.walkBackEpoch !== null && fs.latestEpoch >= s.walkBackEpoch) {
        this.fail(s, `walking back epochs did not lower the local latest epoch (${fs.latestEpoch}, asked ${s.walkBackEpoch})`, "error");
        continue;
      }
      asked.set(partitionKey(s.topic, s.partition), { s, epoch: fs.latestEpoch });
    }
    if (asked.size === 0) return;
    const topics = new Map<string, Struct[]>();
    for (const { s, epoch } of asked.values()) {
      const list = topics.get(s.topic) ?? [];
      list.push({ partition: s.partition, currentLeaderEpoch: s.leaderEpoch, leaderEpoch: epoch });
      topics.set(s.topic, list);
    }
    const body = { replicaId: this.ctx.brokerId, topics: [...topics].map(([topic, partitions]) => ({ topic, partitions })) };
    const sent = [...asked.values()].map((a) => a.s);
    const res = await this.send("OffsetForLeaderEpoch", sent, (c) =>
      c.request(OffsetForLeaderEpochApi, OFFSET_FOR_LEADER_EPOCH_VERSION, body, this.ctx.options.requestTimeoutMs));
    if (res === null) return;
    const seen = new Set<PartitionFetchState>();
    for (const t of res.topics as { topic: string; partitions: { errorCode: number; partition: number; leaderEpoch: number; endOffset: bigint }[] }[]) {
      for (const p of t.partitions) {
        const a = asked.get(partitionKey(t.topic, p.partition));
        if (a === undefined || seen.has(a.s)) continue;
        seen.add(a.s);
        if (!this.isCurrent(a.s) || a.s.state !== "truncating") continue;
        this.onEpochEndOffset(a.s, a.epoch, p);
      }
    }
    for (const s of sent) if (!seen.has(s) && this.isCurrent(s)) this.delay(s, "OffsetForLeaderEpoch: no answer for the partition");
  }

  private onEpochEndOffset(s: PartitionFetchState, epochAsked: number, p: { errorCode: number; leaderEpoch: number; endOffset: bigint }): void {
    if (p.errorCode === ErrorCode.FENCED_LEADER_EPOCH) return this.fail(s, `leader fenced leader epoch ${s.leaderEpoch}`);
    if (p.errorCode !== ErrorCode.NONE) return this.delayOnError(s, "OffsetForLeaderEpoch", p.errorCode);
    const endOffset = offsetOf(p.endOffset);
    if (endOffset === null) return this.delay(s, `OffsetForLeaderEpoch: end offset ${p.endOffset} is not an offset`);
    const fs = this.followerState(s);
    if (fs === null) return;
    const t = offsetTruncationState({ leaderEpoch: p.leaderEpoch, endOffset }, {
      logEndOffset: fs.logEndOffset,
      highWatermark: fs.highWatermark,
      endOffsetForEpoch: (epoch) => this.ctx.log.endOffsetForEpoch(s.topic, s.partition, epoch),
    });
    this.logger.info({
      topic: s.topic,
      partition: s.partition,
      leaderEpoch: s.leaderEpoch,
      epochAsked,
      leaderAnswer: `epoch ${p.leaderEpoch} ends at ${endOffset}`,
      logEndOffset: fs.logEndOffset,
      truncateTo: t.offset,
      completed: t.truncationCompleted,
    }, "truncating follower log to the leader's epoch end offset");
    this.applyTruncation(s, fs, t, epochAsked);
  }

  /** Cuts the local log (synchronously, right after `fs` was read) and moves the partition on. */
  private applyTruncation(s: PartitionFetchState, fs: FollowerState, t: OffsetTruncationState, epochAsked: number | null): void {
    const { topic, partition } = s;
    try {
      if (t.offset < fs.logStartOffset) {
        this.logger.warn({ topic, partition, offset: t.offset, logStartOffset: fs.logStartOffset }, "truncation point precedes the log start: emptying the log");
        this.ctx.log.truncateFullyAndStartAt(topic, partition, t.offset);
      } else {
        if (t.offset < fs.highWatermark) this.logger.warn({ topic, partition, offset: t.offset, highWatermark: fs.highWatermark }, "truncating below the high watermark");
        // Also at the log end offset: the log then drops leader-epoch entries that start there.
        this.ctx.log.truncateTo(topic, partition, Math.min(t.offset, fs.logEndOffset));
      }
    } catch (e) {
      if (isStorageRefusal(e)) return this.delay(s, (e as Error).message); // disk full, no descriptor: retried
      return this.fail(s, `truncation to ${t.offset} failed: ${(e as Error).message}`, "error");
    }
    const after = this.ctx.log.followerState(topic, partition);
    if (after === null) return this.fail(s, "the local replica is gone after truncation", "debug");
    s.fetchOffset = after.logEndOffset;
    this.answered(s);
    if (t.truncationCompleted) {
      s.state = "fetching";
      s.walkBackEpoch = null;
    } else {
      s.walkBackEpoch = epochAsked;
    }
  }

  // --- fetching ------------------------------------------------------------------------------------

  private async fetch(parts: PartitionFetchState[]): Promise<void> {
    const o = this.ctx.options;
    const sent = new Map<string, PartitionFetchState>();
    const topics = new Map<string, Struct[]>();
    let throttled = 0;
    for (const s of parts) {
      const fs = this.followerState(s);
      if (fs === null) continue;
      // Kafka's shouldFollowerThrottle: not caught up, throttled here, and the quota exceeded.
      if (!(s.lag !== null && s.lag <= 0) && fs.throttled === true && o.quota?.isQuotaExceeded() === true) {
        throttled++;
        continue;
      }
      sent.set(partitionKey(s.topic, s.partition), s);
      const list = topics.get(s.topic) ?? [];
      list.push({
        partition: s.partition,
        currentLeaderEpoch: s.leaderEpoch,
        fetchOffset: BigInt(s.fetchOffset),
        lastFetchedEpoch: -1,
        logStartOffset: BigInt(fs.logStartOffset),
        partitionMaxBytes: o.replicaFetchMaxBytes,
      });
      topics.set(s.topic, list);
    }
    // Everything due is throttled: wait as Kafka's fetcher does with nothing to fetch.
    if (sent.size === 0) {
      if (throttled > 0) await this.wait(o.replicaFetchBackoffMs);
      return;
    }
    const body: Struct = {
      clusterId: null,
      replicaId: this.ctx.brokerId,
      maxWaitMs: o.replicaFetchWaitMaxMs,
      minBytes: o.replicaFetchMinBytes,
      maxBytes: o.replicaFetchResponseMaxBytes,
      isolationLevel: 0,
      sessionId: 0, // no fetch session: every fetch is a full one
      sessionEpoch: -1,
      topics: [...topics].map(([topic, partitions]) => ({ topic, partitions })),
      forgottenTopicsData: [],
      rackId: "",
    };
    const res = await this.send("Fetch", [...sent.values()], (c) => c.request(FetchApi, REPLICA_FETCH_VERSION, body, o.requestTimeoutMs));
    if (res === null) return;
    const top = res.errorCode as number;
    if (top !== ErrorCode.NONE) {
      for (const s of sent.values()) if (this.isCurrent(s)) this.delayOnError(s, "Fetch", top);
      return;
    }
    const outOfRange: PartitionFetchState[] = [];
    for (const t of res.responses as { topic: string; partitions: Struct[] }[]) {
      for (const p of t.partitions) {
        const key = partitionKey(t.topic, p.partitionIndex as number);
        const s = sent.get(key);
        if (s === undefined) continue;
        sent.delete(key);
        if (!this.isCurrent(s) || s.state !== "fetching") continue;
        const code = p.errorCode as number;
        if (code === ErrorCode.NONE) this.onFetched(s, p);
        else if (code === ErrorCode.OFFSET_OUT_OF_RANGE) outOfRange.push(s);
        else if (code === ErrorCode.FENCED_LEADER_EPOCH) this.fail(s, `leader fenced leader epoch ${s.leaderEpoch}`);
        else this.delayOnError(s, "Fetch", code);
      }
    }
    for (const s of sent.values()) if (this.isCurrent(s)) this.delay(s, "Fetch: no answer for the partition");
    // Every partition's records are in its log now (appendAsFollower writes synchronously and
    // keeps no view of them): the answer's buffer can take the next one.
    this.recycle(res);
    for (const s of outOfRange) {
      if (this.stopped) return;
      if (this.isCurrent(s) && s.state === "fetching") await this.onOutOfRange(s);
    }
  }

  /** Gives a fetch answer's buffer back to the connection it came from (see KafkaConnection.recycle). */
  private recycle(res: Struct): void {
    const conn = this.conn;
    if (conn === null) return;
    for (const t of res.responses as { partitions: Struct[] }[]) {
      for (const p of t.partitions) {
        const records = p.records as Uint8Array | null;
        if (records !== null && records.length > 0) return conn.recycle(records);
      }
    }
  }

  /** Appends a partition's fetched records (none is fine: the leader's HW still moves ours). */
  private onFetched(s: PartitionFetchState, p: Struct): void {
    const hw = offsetOf(p.highWatermark);
    const start = offsetOf(p.logStartOffset);
    if (hw === null || start === null) return this.delay(s, `Fetch: high watermark ${p.highWatermark} or log start ${p.logStartOffset} is not an offset`);
    const fs = this.followerState(s);
    if (fs === null) return;
    if (fs.logEndOffset !== s.fetchOffset) {
      return this.fail(s, `offset mismatch: fetched from ${s.fetchOffset}, the log ends at ${fs.logEndOffset}`, "error");
    }
    const records = (p.records as Uint8Array | null) ?? new Uint8Array(0);
    try {
      this.ctx.log.appendAsFollower(s.topic, s.partition, records, hw, start);
    } catch (e) {
      const code = e instanceof KafkaError ? e.code : null;
      // A corrupt or partial fetch may be a transient state of the leader's log: retry (Kafka does).
      if (code === ErrorCode.CORRUPT_MESSAGE || code === ErrorCode.INVALID_RECORD) {
        this.logger.error({ topic: s.topic, partition: s.partition, offset: s.fetchOffset, err: (e as Error).message }, "invalid records from leader; retrying after backoff");
        return this.delay(s, (e as Error).message);
      }
      // The local log refused the append for now (its disk is full, or no file descriptor was
      // free): nothing was appended, so the same fetch is retried after backoff. (A failed dir
      // has already removed the partition from this fetcher.) The log manager logs the cause.
      if (isStorageRefusal(e)) {
        if (s.lastError === null) this.logger.info({ topic: s.topic, partition: s.partition, err: (e as Error).message }, "follower append refused for now; retrying after backoff");
        return this.delay(s, (e as Error).message);
      }
      return this.fail(s, `append at ${s.fetchOffset} failed: ${(e as Error).message}`, "error");
    }
    const after = this.ctx.log.followerState(s.topic, s.partition);
    if (after === null) return this.fail(s, "the local replica is gone after the append", "debug");
    s.fetchOffset = after.logEndOffset;
    s.lag = Math.max(0, hw - s.fetchOffset);
    if (fs.throttled === true) this.ctx.options.quota?.record(records.length);
    this.answered(s);
    if (records.length > 0) {
      // To the back of the line, so partitions with data take turns under the response's maxBytes.
      const key = partitionKey(s.topic, s.partition);
      this.partitions.delete(key);
      this.partitions.set(key, s);
    }
  }

  /** OFFSET_OUT_OF_RANGE: find the leader's log range and move into it (Kafka's fetchOffsetAndTruncate). */
  private async onOutOfRange(s: PartitionFetchState): Promise<void> {
    const leaderEnd = await this.listOffset(s, -1n);
    if (leaderEnd === null) return;
    let fs = this.followerState(s);
    if (fs === null) return;
    if (leaderEnd < fs.logEndOffset) {
      this.logger.warn({ topic: s.topic, partition: s.partition, leaderEnd, logEndOffset: fs.logEndOffset }, "leader's log ends before ours: truncating to it");
      this.applyTruncation(s, fs, { offset: leaderEnd, truncationCompleted: true }, null);
      return;
    }
    const leaderStart = await this.listOffset(s, -2n);
    if (leaderStart === null) return;
    fs = this.followerState(s);
    if (fs === null) return;
    if (leaderStart > fs.logEndOffset) {
      this.logger.warn({ topic: s.topic, partition: s.partition, leaderStart, logEndOffset: fs.logEndOffset }, "leader's log starts after ours ends: starting ours at its start");
      try {
        this.ctx.log.truncateFullyAndStartAt(s.topic, s.partition, leaderStart);
      } catch (e) {
        if (isStorageRefusal(e)) return this.delay(s, (e as Error).message);
        return this.fail(s, `truncateFullyAndStartAt(${leaderStart}) failed: ${(e as Error).message}`, "error");
      }
    }
    const after = this.ctx.log.followerState(s.topic, s.partition);
    if (after === null) return this.fail(s, "the local replica is gone", "debug");
    s.fetchOffset = after.logEndOffset;
    this.answered(s);
  }

  /** The leader's offset for -1 (its log end, as a replica asks) or -2 (its log start); null after backing off. */
  private async listOffset(s: PartitionFetchState, timestamp: bigint): Promise<number | null> {
    const body = {
      replicaId: this.ctx.brokerId,
      isolationLevel: 0,
      topics: [{ name: s.topic, partitions: [{ partitionIndex: s.partition, currentLeaderEpoch: s.leaderEpoch, timestamp }] }],
    };
    const res = await this.send("ListOffsets", [s], (c) => c.request(ListOffsetsApi, REPLICA_LIST_OFFSETS_VERSION, body, this.ctx.options.requestTimeoutMs));
    if (res === null || !this.isCurrent(s) || s.state !== "fetching") return null;
    const p = (res.topics as { name: string; partitions: { partitionIndex: number; errorCode: number; offset: bigint }[] }[])
      .find((t) => t.name === s.topic)?.partitions.find((x) => x.partitionIndex === s.partition);
    if (p === undefined) return (this.delay(s, "ListOffsets: no answer for the partition"), null);
    if (p.errorCode === ErrorCode.FENCED_LEADER_EPOCH) return (this.fail(s, `leader fenced leader epoch ${s.leaderEpoch}`), null);
    if (p.errorCode !== ErrorCode.NONE) return (this.delayOnError(s, "ListOffsets", p.errorCode), null);
    const offset = offsetOf(p.offset);
    if (offset === null || offset < 0) return (this.delay(s, `ListOffsets: offset ${p.offset} is not an offset`), null);
    return offset;
  }
}

/**
 * The follower side of replication: the ReplicaManager adds and removes the partitions this broker
 * follows; each goes to the fetcher loop for its leader and fetcherId.
 */
export class ReplicaFetcherManager implements ReplicaFetchers {
  private readonly threads = new Map<string, ReplicaFetcherThread>();
  /** Partition key -> the fetcher serving it. */
  private readonly owners = new Map<string, ReplicaFetcherThread>();
  private readonly ctx: FetcherContext;
  private shutDown = false;

  constructor(
    platform: Platform,
    brokerId: number,
    log: FollowerLog,
    brokerEndpoint: BrokerEndpointLookup,
    logger: Logger,
    options: ReplicaFetcherOptions,
  ) {
    this.ctx = { platform, brokerId, log, brokerEndpoint, logger, options: { ...options, numReplicaFetchers: Math.max(1, options.numReplicaFetchers) } };
  }

  /** follower.replication.throttled.rate's quota, if any (replication_quota.ts). */
  get quota(): ReplicationQuotaManager | undefined {
    return this.ctx.options.quota;
  }

  addFetcherForPartitions(parts: { topic: string; partition: number; leaderId: number; leaderEpoch: number }[]): void {
    if (this.shutDown) return;
    const touched = new Set<ReplicaFetcherThread>();
    for (const p of parts) {
      if (p.leaderId < 0 || p.leaderId === this.ctx.brokerId) {
        this.ctx.logger.warn({ topic: p.topic, partition: p.partition, leader: p.leaderId }, "not fetching a partition from this broker or from no leader");
        continue;
      }
      const key = partitionKey(p.topic, p.partition);
      const fetcherId = fetcherIdFor(p.topic, p.partition, this.ctx.options.numReplicaFetchers);
      const thread = this.thread(p.leaderId, fetcherId);
      const old = this.owners.get(key);
      if (old !== undefined && old !== thread) this.detach(old, key);
      thread.addPartition(p.topic, p.partition, p.leaderEpoch);
      this.owners.set(key, thread);
      touched.add(thread);
    }
    for (const t of touched) t.checkEndpoint();
  }

  removeFetcherForPartitions(parts: { topic: string; partition: number }[]): void {
    for (const p of parts) {
      const key = partitionKey(p.topic, p.partition);
      const t = this.owners.get(key);
      if (t !== undefined) this.detach(t, key);
    }
  }

  async shutdown(): Promise<void> {
    this.shutDown = true;
    const threads = [...this.threads.values()];
    this.threads.clear();
    this.owners.clear();
    for (const t of threads) t.stop();
    await Promise.all(threads.map((t) => t.loop));
  }

  /** Every partition being fetched, with its state. */
  status(): PartitionFetchStatus[] {
    return [...this.threads.values()].flatMap((t) => t.status());
  }

  /** Fetcher loops running (one per leader broker and fetcherId with partitions). */
  get fetcherCount(): number {
    return this.threads.size;
  }

  private thread(leaderId: number, fetcherId: number): ReplicaFetcherThread {
    const id = `${leaderId}:${fetcherId}`;
    let t = this.threads.get(id);
    if (t === undefined) {
      t = new ReplicaFetcherThread(this.ctx, leaderId, fetcherId);
      this.threads.set(id, t);
    }
    return t;
  }

  /** Takes a partition off its fetcher; a fetcher left with none stops (closing its connection). */
  private detach(t: ReplicaFetcherThread, key: string): void {
    t.removePartition(key);
    if (this.owners.get(key) === t) this.owners.delete(key);
    if (t.partitions.size === 0) {
      t.stop();
      this.threads.delete(`${t.leaderId}:${t.fetcherId}`);
    }
  }
}

/**
 * KAFKA_STORAGE_ERROR from the local log: a transient refusal (disk full, out of descriptors), as a
 * failed dir takes its partitions out of the fetchers before anyone sees the error.
 */
function isStorageRefusal(e: unknown): boolean {
  return e instanceof KafkaError && e.code === ErrorCode.KAFKA_STORAGE_ERROR;
}
