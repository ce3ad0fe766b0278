// Consumer: reads assigned partitions from their leaders. One Fetch at a time per leader, each
// sent again as soon as the previous answer arrives (before its records are decoded), so
// decoding and the next fetch overlap; answers wait in a bounded prefetch queue until poll()
// decodes them into records.
//
// Invariants:
// - poll() returns each partition's records in offset order, from `position` on, never one twice
//   (a batch that starts before the position, as a compressed one may, is trimmed), and skips
//   control batches; `position` is then the next offset to return (what a group commits).
// - The next fetch offset comes from the last complete batch of an answer; an incomplete batch at
//   the end of an answer (cut by max bytes) is fetched again.
// - OFFSET_OUT_OF_RANGE moves the partition to its earliest or latest offset (autoOffsetReset),
//   or is an error with "none". Leader changes and broken connections refresh metadata and retry
//   (for as long as it takes a leader to move); a non-retriable error, or `retries` metadata
//   refreshes in a row that reach no broker, end the consumer with an error (poll() throws it).
// - Bytes prefetched and not yet polled stay under prefetchBytesMax (plus one answer).
import { batchInfo, FetchApi, forEachBatch, type Struct } from "../protocol/mod.ts";
import { ErrorCode, errorName, zeroUuid } from "../util/mod.ts";
import { listOffsets, OffsetSpec, type TopicPartition, tpKey } from "./admin.ts";
import { ClientError, type ClusterClient, isRetriableCode } from "./cluster_client.ts";
import { type ConsumerRecord, readRecords } from "./record_reader.ts";

export type OffsetReset = "earliest" | "latest" | "none";

export interface ConsumerOptions {
  maxWaitMs: number;
  minBytes: number;
  /** Most bytes one Fetch answer may carry (fetch.max.bytes). */
  maxBytes: number;
  /** Most bytes per partition in one answer (max.partition.fetch.bytes). */
  partitionMaxBytes: number;
  autoOffsetReset: OffsetReset;
  /** Bytes fetched and not yet polled before fetching pauses. */
  prefetchBytesMax: number;
}

export const consumerDefaults: ConsumerOptions = {
  maxWaitMs: 500,
  minBytes: 1,
  maxBytes: 52_428_800,
  partitionMaxBytes: 1_048_576,
  autoOffsetReset: "latest",
  prefetchBytesMax: 64 * 1024 * 1024,
};

/** Where to start a partition: an offset, or the log's start or end. */
export type StartOffset = number | "earliest" | "latest";

/** The highest Fetch version built here (v13+ names topics by id). */
const fetchVersionMax = 12;

interface PartitionState {
  topic: string;
  partition: number;
  /** Next offset to fetch. */
  fetchOffset: number;
  /** Next offset to return from poll(). */
  position: number;
  leader: number;
  inFlight: boolean;
  /** Bumped on every reset or reassignment: answers for an older epoch are dropped. */
  epoch: number;
  highWatermark: number;
  failures: number;
  retryAtMs: number;
}

interface Chunk {
  ps: PartitionState;
  epoch: number;
  records: Uint8Array;
}

export class Consumer {
  readonly opts: ConsumerOptions;
  private readonly parts = new Map<string, PartitionState>();
  private readonly fetching = new Set<number>();
  private chunks: Chunk[] = [];
  private chunkBytes = 0;
  private wakeup: (() => void) | null = null;
  private failure: Error | null = null;
  private refreshing = false;
  private refreshFailures = 0;
  private closed = false;
  private pumpScheduled = false;

  constructor(private readonly cluster: ClusterClient, opts: Partial<ConsumerOptions> = {}) {
    this.opts = { ...consumerDefaults, ...opts };
  }

  /**
   * Replaces the assignment: each partition starts at its offset, or its log's start or end
   * (asked of the leaders now). Records prefetched for the old assignment are dropped.
   */
  async assign(starts: (TopicPartition & { offset: StartOffset })[]): Promise<void> {
    for (const ps of this.parts.values()) ps.epoch++;
    this.parts.clear();
    this.chunks = [];
    this.chunkBytes = 0;
    if (starts.length === 0) return;
    const topics = [...new Set(starts.map((s) => s.topic))];
    const md = await this.cluster.retrying(() => this.cluster.refreshMetadata(topics), topics);
    for (const s of starts) {
      const t = md.topics.get(s.topic);
      if (t === undefined || t.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
        throw new ClientError(`topic "${s.topic}" does not exist`, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      }
      if (!t.partitions.some((p) => p.partition === s.partition)) {
        throw new ClientError(`topic "${s.topic}" has no partition ${s.partition}`, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      }
    }
    const earliest = starts.filter((s) => s.offset === "earliest");
    const latest = starts.filter((s) => s.offset === "latest");
    const e = await listOffsets(this.cluster, earliest, OffsetSpec.earliest);
    const l = await listOffsets(this.cluster, latest, OffsetSpec.latest);
    for (const s of starts) {
      const key = tpKey(s.topic, s.partition);
      const offset = typeof s.offset === "number" ? s.offset : (s.offset === "earliest" ? e : l).get(key) as number;
      this.parts.set(key, {
        topic: s.topic,
        partition: s.partition,
        fetchOffset: offset,
        position: offset,
        leader: this.leaderOf(s.topic, s.partition),
        inFlight: false,
        epoch: 0,
        highWatermark: -1,
        failures: 0,
        retryAtMs: 0,
      });
    }
    this.pump();
  }

  /** The next offset poll() returns for each assigned partition. */
  positions(): (TopicPartition & { offset: number })[] {
    return [...this.parts.values()].map((p) => ({ topic: p.topic, partition: p.partition, offset: p.position }));
  }

  /** Moves a partition's position (and its fetching) to `offset`; what was prefetched is dropped. */
  seek(topic: string, partition: number, offset: number): void {
    const ps = this.parts.get(tpKey(topic, partition));
    if (ps === undefined) throw new ClientError(`${topic}-${partition} is not assigned`);
    ps.epoch++;
    ps.position = ps.fetchOffset = offset;
    this.pump();
  }

  /** The high watermark the last answer for the partition gave (-1 before one). */
  highWatermark(topic: string, partition: number): number {
    return this.parts.get(tpKey(topic, partition))?.highWatermark ?? -1;
  }

  /**
   * The next records, waiting up to timeoutMs for some ([] when none came). Throws the error
   * that ended the consumer, if one did.
   */
  async poll(timeoutMs: number): Promise<ConsumerRecord[]> {
    const deadline = this.cluster.platform.clock.monotonicMs() + timeoutMs;
    for (;;) {
      if (this.failure !== null) throw this.failure;
      while (this.chunks.length > 0) {
        const chunk = this.chunks.shift() as Chunk;
        this.chunkBytes -= chunk.records.length;
        this.pump();
        const out = this.decode(chunk);
        if (out.length > 0) return out;
      }
      const left = deadline - this.cluster.platform.clock.monotonicMs();
      if (left <= 0 || this.closed) return [];
      await new Promise<void>((resolve) => {
        const timer = this.cluster.platform.clock.setTimeout(() => {
          this.wakeup = null;
          resolve();
        }, left);
        this.wakeup = () => {
          timer.cancel();
          this.wakeup = null;
          resolve();
        };
      });
    }
  }

  close(): void {
    this.closed = true;
    this.wakeup?.();
  }

  // --- decoding ----------------------------------------------------------------------------------

  private decode(chunk: Chunk): ConsumerRecord[] {
    const ps = chunk.ps;
    if (chunk.epoch !== ps.epoch || this.parts.get(tpKey(ps.topic, ps.partition)) !== ps) return [];
    const out: ConsumerRecord[] = [];
    let error: string | null = null;
    forEachBatch(chunk.records, (pos, size) => {
      if (error !== null) return;
      const info = batchInfo(chunk.records, pos);
      if (info.lastOffset < ps.position) return;
      if (!info.isControl) {
        const why = readRecords(chunk.records, pos, size, ps.position, ps.topic, ps.partition, out);
        if (why !== null) {
          error = `${ps.topic}-${ps.partition} at offset ${info.baseOffset}: ${why}`;
          return;
        }
      }
      ps.position = info.lastOffset + 1;
    });
    if (error !== null) this.failure = new ClientError(`corrupt record batch from ${error}`, ErrorCode.CORRUPT_MESSAGE);
    return out;
  }

  // --- fetching ----------------------------------------------------------------------------------

  private leaderOf(topic: string, partition: number): number {
    return this.cluster.metadata.topics.get(topic)?.partitions.find((p) => p.partition === partition)?.leader ?? -1;
  }

  private schedulePump(ms: number): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    this.cluster.platform.clock.setTimeout(() => {
      this.pumpScheduled = false;
      this.pump();
    }, ms);
  }

  /** Sends a Fetch to every leader that has idle partitions and none in flight. */
  private pump(): void {
    if (this.closed || this.failure !== null || this.chunkBytes >= this.opts.prefetchBytesMax) return;
    const now = this.cluster.platform.clock.monotonicMs();
    const byLeader = new Map<number, PartitionState[]>();
    let needRefresh = false;
    let wakeAt = Infinity;
    for (const ps of this.parts.values()) {
      if (ps.inFlight) continue;
      if (ps.retryAtMs > now) {
        wakeAt = Math.min(wakeAt, ps.retryAtMs);
        continue;
      }
      if (ps.leader < 0) {
        needRefresh = true;
        continue;
      }
      if (this.fetching.has(ps.leader)) continue;
      const list = byLeader.get(ps.leader);
      if (list === undefined) byLeader.set(ps.leader, [ps]);
      else list.push(ps);
    }
    for (const [leader, list] of byLeader) void this.fetch(leader, list);
    if (needRefresh) this.refresh();
    if (wakeAt !== Infinity) this.schedulePump(Math.max(1, wakeAt - now));
  }

  private async fetch(leader: number, list: PartitionState[]): Promise<void> {
    this.fetching.add(leader);
    const epochs = list.map((ps) => ps.epoch);
    for (const ps of list) ps.inFlight = true;
    try {
      const conn = await this.cluster.brokerConnection(leader);
      const byTopic = new Map<string, PartitionState[]>();
      for (const ps of list) byTopic.set(ps.topic, [...(byTopic.get(ps.topic) ?? []), ps]);
      const { res } = await this.cluster.call(conn, FetchApi, fetchVersionMax, () => ({
        clusterId: null,
        replicaId: -1,
        maxWaitMs: this.opts.maxWaitMs,
        minBytes: this.opts.minBytes,
        maxBytes: this.opts.maxBytes,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [...byTopic].map(([topic, ps]) => ({
          topic,
          topicId: zeroUuid,
          partitions: ps.map((p) => ({
            partition: p.partition,
            currentLeaderEpoch: -1,
            fetchOffset: BigInt(p.fetchOffset),
            lastFetchedEpoch: -1,
            logStartOffset: -1n,
            partitionMaxBytes: this.opts.partitionMaxBytes,
          })),
        })),
        forgottenTopicsData: [],
        rackId: "",
      }), this.opts.maxWaitMs + this.cluster.requestTimeoutMs);
      const topLevel = (res.errorCode as number | undefined) ?? ErrorCode.NONE;
      if (topLevel !== ErrorCode.NONE) throw new ClientError(`fetch from broker ${leader}: ${errorName(topLevel)}`, topLevel);
      for (const t of res.responses as Struct[]) {
        for (const p of t.partitions as Struct[]) {
          const ps = this.parts.get(tpKey(t.topic as string, p.partitionIndex as number));
          const i = ps === undefined ? -1 : list.indexOf(ps);
          if (ps === undefined || i < 0 || epochs[i] !== ps.epoch) continue;
          await this.onPartition(ps, p);
        }
      }
    } catch (e) {
      const retriable = !(e instanceof ClientError) || e.errorCode === null || isRetriableCode(e.errorCode);
      for (let i = 0; i < list.length; i++) {
        if (epochs[i] === list[i].epoch) this.onFailure(list[i], (e as Error).message, retriable);
      }
    } finally {
      for (const ps of list) ps.inFlight = false;
      this.fetching.delete(leader);
      this.pump();
    }
  }

  private async onPartition(ps: PartitionState, p: Struct): Promise<void> {
    const code = p.errorCode as number;
    if (code === ErrorCode.NONE) {
      ps.failures = 0;
      ps.highWatermark = Number(p.highWatermark as bigint);
      const records = p.records as Uint8Array | null;
      if (records === null || records.length === 0) return;
      let end = 0;
      let next = ps.fetchOffset;
      forEachBatch(records, (pos, size) => {
        end = pos + size;
        next = batchInfo(records, pos).lastOffset + 1;
      });
      if (end === 0) {
        // Only part of one batch came: the partition's max bytes are below the batch's size,
        // which a broker that follows KIP-74 never answers.
        this.failure = new ClientError(`${ps.topic}-${ps.partition}: a record batch at offset ${ps.fetchOffset} is larger than the fetch size`);
        return;
      }
      if (next > ps.fetchOffset) ps.fetchOffset = next;
      this.chunks.push({ ps, epoch: ps.epoch, records: records.subarray(0, end) });
      this.chunkBytes += end;
      this.wakeup?.();
      return;
    }
    if (code === ErrorCode.OFFSET_OUT_OF_RANGE) {
      if (this.opts.autoOffsetReset === "none") {
        this.failure = new ClientError(`${ps.topic}-${ps.partition}: offset ${ps.fetchOffset} is out of range`, code);
        this.wakeup?.();
        return;
      }
      const spec = this.opts.autoOffsetReset === "earliest" ? OffsetSpec.earliest : OffsetSpec.latest;
      try {
        const o = await listOffsets(this.cluster, [ps], spec);
        const offset = o.get(tpKey(ps.topic, ps.partition)) as number;
        ps.epoch++;
        ps.fetchOffset = ps.position = offset;
      } catch (e) {
        this.onFailure(ps, (e as Error).message, true);
      }
      return;
    }
    this.onFailure(ps, `fetch ${ps.topic}-${ps.partition}: ${errorName(code)}`, isRetriableCode(code));
  }

  private onFailure(ps: PartitionState, message: string, retriable: boolean): void {
    ps.failures++;
    if (!retriable) {
      this.failure ??= new ClientError(message);
      this.wakeup?.();
      return;
    }
    ps.leader = -1;
    ps.retryAtMs = this.cluster.platform.clock.monotonicMs() + this.cluster.retryBackoffMs * Math.min(ps.failures, 10);
    this.refresh();
  }

  private refresh(): void {
    if (this.refreshing || this.closed) return;
    this.refreshing = true;
    const topics = [...new Set([...this.parts.values()].map((p) => p.topic))];
    void (async () => {
      try {
        await this.cluster.sleep(this.cluster.retryBackoffMs);
        await this.cluster.refreshMetadata(topics);
        this.refreshFailures = 0;
      } catch (e) {
        this.refreshFailures++;
        if (this.refreshFailures > this.cluster.retries) {
          this.failure ??= e instanceof ClientError ? e : new ClientError((e as Error).message);
          this.wakeup?.();
        }
      } finally {
        this.refreshing = false;
      }
      let leaderless = false;
      for (const ps of this.parts.values()) {
        ps.leader = this.leaderOf(ps.topic, ps.partition);
        if (ps.leader < 0) leaderless = true;
      }
      // A partition without a leader waits for one: metadata is asked again, a little later each time.
      if (leaderless && this.failure === null && !this.closed) {
        const delay = this.cluster.retryBackoffMs * Math.min(this.refreshFailures + 2, 10);
        this.cluster.platform.clock.setTimeout(() => this.refresh(), delay);
      }
      this.pump();
    })();
  }
}
