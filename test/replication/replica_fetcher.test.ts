// The replica fetcher loop against a fake leader (a small Kafka-protocol server on the platform's
// listener that answers Fetch v12, OffsetForLeaderEpoch v4 and ListOffsets v7 from an in-memory
// log) and an in-memory FollowerLog whose leader-epoch cache behaves as Kafka's: divergent tails
// walked back and replaced, a fenced epoch stopping the partition until it is re-added, an
// out-of-range fetch moving to the leader's log start, a removed partition's answer dropped,
// shutdown ending a long-poll at once, and a leader that is down at first.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ReplicaFetcherManager, type ReplicaFetcherOptions } from "../../src/replication/replica_fetcher.ts";
import { ReplicationQuotaManager } from "../../src/replication/replication_quota.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Platform } from "../../src/platform/types.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import type { FollowerLog } from "../../src/replication/types.ts";
import { ErrorCode, KafkaError } from "../../src/util/errors.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { buildBatch, parseBatches, text } from "../helpers/record_batch.ts";
import { type FakeKafka, type FakeRequest, startFakeKafka } from "../helpers/fake_kafka.ts";

// ---- an in-memory log with a Kafka-like leader-epoch cache ------------------------------------------

class MemLog {
  /** One record per offset, from logStartOffset. */
  entries: { epoch: number; value: string }[] = [];
  epochs: { epoch: number; start: number }[] = [];
  logStartOffset = 0;
  highWatermark = 0;

  /** A log holding `runs`: [epoch, count, value prefix] in order. */
  static of(runs: [number, number, string][], start = 0): MemLog {
    const l = new MemLog();
    l.logStartOffset = start;
    for (const [epoch, n, prefix] of runs) for (let i = 0; i < n; i++) l.push(epoch, `${prefix}${l.logEndOffset}`);
    return l;
  }

  get logEndOffset(): number {
    return this.logStartOffset + this.entries.length;
  }

  get latestEpoch(): number | null {
    return this.epochs.length === 0 ? null : this.epochs[this.epochs.length - 1].epoch;
  }

  push(epoch: number, value: string): void {
    if (this.latestEpoch === null || epoch > this.latestEpoch) this.epochs.push({ epoch, start: this.logEndOffset });
    this.entries.push({ epoch, value });
  }

  /** LeaderEpochFileCache.endOffsetFor. */
  endOffsetFor(requested: number): { leaderEpoch: number; endOffset: number } {
    if (requested === -1) return { leaderEpoch: -1, endOffset: -1 };
    if (this.latestEpoch === requested) return { leaderEpoch: requested, endOffset: this.logEndOffset };
    const higher = this.epochs.find((e) => e.epoch > requested);
    if (higher === undefined) return { leaderEpoch: -1, endOffset: -1 };
    const floor = [...this.epochs].reverse().find((e) => e.epoch <= requested);
    return { leaderEpoch: floor?.epoch ?? requested, endOffset: higher.start };
  }

  truncateTo(offset: number): void {
    assert.ok(offset >= this.logStartOffset, `truncateTo(${offset}) below the log start ${this.logStartOffset}`);
    if (offset < this.logEndOffset) this.entries.length = offset - this.logStartOffset;
    this.epochs = this.epochs.filter((e) => e.start < offset);
    this.highWatermark = Math.min(this.highWatermark, this.logEndOffset);
  }

  truncateFullyAndStartAt(offset: number): void {
    this.entries = [];
    this.epochs = [];
    this.logStartOffset = offset;
    this.highWatermark = offset;
  }

  values(): string[] {
    return this.entries.map((e) => e.value);
  }

  /** One batch per record from `from`, at most `max` of them. */
  batchesFrom(from: number, max = 1000): Uint8Array {
    const parts: Uint8Array[] = [];
    for (let o = from; o < this.logEndOffset && parts.length < max; o++) {
      const e = this.entries[o - this.logStartOffset];
      parts.push(buildBatch([{ value: e.value }], { baseOffset: BigInt(o), partitionLeaderEpoch: e.epoch }));
    }
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

/** The FollowerLog the ReplicaManager would be, over MemLogs. */
class FakeFollower implements FollowerLog {
  parts = new Map<string, { log: MemLog; leaderId: number; leaderEpoch: number }>();
  appends = 0;
  /** Partitions ("topic:partition") follower.replication.throttled.replicas names here. */
  throttled = new Set<string>();

  follow(topic: string, partition: number, log: MemLog, leaderId: number, leaderEpoch: number): void {
    this.parts.set(`${topic}:${partition}`, { log, leaderId, leaderEpoch });
  }

  private get(topic: string, partition: number) {
    const p = this.parts.get(`${topic}:${partition}`);
    assert.ok(p, `${topic}-${partition} is followed`);
    return p;
  }

  followerState(topic: string, partition: number) {
    const p = this.parts.get(`${topic}:${partition}`);
    if (p === undefined) return null;
    const l = p.log;
    return {
      leaderId: p.leaderId,
      leaderEpoch: p.leaderEpoch,
      logEndOffset: l.logEndOffset,
      logStartOffset: l.logStartOffset,
      highWatermark: l.highWatermark,
      latestEpoch: l.latestEpoch,
      throttled: this.throttled.has(`${topic}:${partition}`),
    };
  }

  endOffsetForEpoch(topic: string, partition: number, epoch: number) {
    const r = this.get(topic, partition).log.endOffsetFor(epoch);
    return r.endOffset === -1 ? null : r;
  }

  truncateTo(topic: string, partition: number, offset: number): void {
    this.get(topic, partition).log.truncateTo(offset);
  }

  truncateFullyAndStartAt(topic: string, partition: number, offset: number): void {
    this.get(topic, partition).log.truncateFullyAndStartAt(offset);
  }

  /** Appends (with records) refused with KAFKA_STORAGE_ERROR before any goes through: a full disk. */
  refuseAppends = 0;

  appendAsFollower(topic: string, partition: number, records: Uint8Array, leaderHighWatermark: number, leaderLogStartOffset: number): void {
    if (this.refuseAppends > 0 && records.length > 0) {
      this.refuseAppends--;
      throw new KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, "append refused: log dir /data is full (ENOSPC)");
    }
    const l = this.get(topic, partition).log;
    for (const b of parseBatches(records)) {
      if (Number(b.baseOffset) !== l.logEndOffset) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `batch at ${b.baseOffset}, log ends at ${l.logEndOffset}`);
      for (const r of b.records) l.push(b.partitionLeaderEpoch, text(r.value)!);
      this.appends++;
    }
    if (leaderLogStartOffset > l.logStartOffset && leaderLogStartOffset <= l.logEndOffset) {
      l.entries.splice(0, leaderLogStartOffset - l.logStartOffset);
      l.logStartOffset = leaderLogStartOffset;
    }
    l.highWatermark = Math.min(leaderHighWatermark, l.logEndOffset);
  }
}

// ---- a fake leader ------------------------------------------------------------------------------------

interface LeaderPartition {
  log: MemLog;
  leaderEpoch: number;
}

class FakeLeader {
  parts = new Map<string, LeaderPartition>();
  /** API key -> requests received. */
  received = new Map<number, Struct[]>();
  /** Fetches held for their long-poll, answered on the next append or at their maxWaitMs. */
  private held: (() => void)[] = [];
  private server: FakeKafka | null = null;
  port = 0;

  constructor(private readonly platform: Platform) {}

  async start(): Promise<void> {
    this.server = await startFakeKafka(this.platform, (req, reply) => this.onRequest(req, reply));
    this.port = this.server.port;
  }

  async stop(): Promise<void> {
    await this.server?.stop();
  }

  lead(topic: string, partition: number, log: MemLog, leaderEpoch: number): void {
    this.parts.set(`${topic}:${partition}`, { log, leaderEpoch });
  }

  /** Appends to a partition's log and answers the fetches waiting on it. */
  append(topic: string, partition: number, epoch: number, n: number, prefix: string): void {
    const p = this.parts.get(`${topic}:${partition}`)!;
    for (let i = 0; i < n; i++) p.log.push(epoch, `${prefix}${p.log.logEndOffset}`);
    p.log.highWatermark = p.log.logEndOffset;
    for (const h of this.held.splice(0)) h();
  }

  count(apiKey: number): number {
    return this.received.get(apiKey)?.length ?? 0;
  }

  private onRequest(req: FakeRequest, answer: (res: Struct) => void): void {
    const list = this.received.get(req.apiKey) ?? [];
    list.push(req.body);
    this.received.set(req.apiKey, list);
    if (req.apiKey === 1) this.fetch(req.body, answer);
    else if (req.apiKey === 23) answer(this.offsetForLeaderEpoch(req.body));
    else if (req.apiKey === 2) answer(this.listOffsets(req.body));
    else throw new Error(`fake leader: API ${req.apiKey}`);
  }

  private epochError(p: LeaderPartition | undefined, current: number): number {
    if (p === undefined) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    if (current < p.leaderEpoch) return ErrorCode.FENCED_LEADER_EPOCH;
    if (current > p.leaderEpoch) return ErrorCode.UNKNOWN_LEADER_EPOCH;
    return ErrorCode.NONE;
  }

  private fetch(body: Struct, answer: (res: Struct) => void): void {
    type Req = { topic: string; partitions: { partition: number; currentLeaderEpoch: number; fetchOffset: bigint }[] };
    const topics = body.topics as Req[];
    const respond = () => {
      answer({
        throttleTimeMs: 0,
        errorCode: 0,
        sessionId: 0,
        responses: topics.map((t) => ({
          topic: t.topic,
          partitions: t.partitions.map((q) => {
            const p = this.parts.get(`${t.topic}:${q.partition}`);
            const base = { partitionIndex: q.partition, highWatermark: -1n, logStartOffset: -1n, abortedTransactions: null, records: null };
            let errorCode = this.epochError(p, q.currentLeaderEpoch);
            const off = Number(q.fetchOffset);
            if (errorCode === 0 && (off < p!.log.logStartOffset || off > p!.log.logEndOffset)) errorCode = ErrorCode.OFFSET_OUT_OF_RANGE;
            if (errorCode !== 0) return { ...base, errorCode };
            return {
              ...base,
              errorCode,
              highWatermark: BigInt(p!.log.highWatermark),
              logStartOffset: BigInt(p!.log.logStartOffset),
              records: p!.log.batchesFrom(off, 5),
            };
          }),
        })),
      });
    };
    const hasData = topics.some((t) =>
      t.partitions.some((q) => {
        const p = this.parts.get(`${t.topic}:${q.partition}`);
        return p === undefined || Number(q.fetchOffset) !== p.log.logEndOffset || q.currentLeaderEpoch !== p.leaderEpoch;
      })
    );
    if (hasData) return respond();
    let done = false;
    const once = () => {
      if (done) return;
      done = true;
      respond();
    };
    this.held.push(once);
    this.platform.clock.setTimeout(once, body.maxWaitMs as number);
  }

  private offsetForLeaderEpoch(body: Struct): Struct {
    type Req = { topic: string; partitions: { partition: number; currentLeaderEpoch: number; leaderEpoch: number }[] };
    return {
      throttleTimeMs: 0,
      topics: (body.topics as Req[]).map((t) => ({
        topic: t.topic,
        partitions: t.partitions.map((q) => {
          const p = this.parts.get(`${t.topic}:${q.partition}`);
          const errorCode = this.epochError(p, q.currentLeaderEpoch);
          if (errorCode !== 0) return { errorCode, partition: q.partition, leaderEpoch: -1, endOffset: -1n };
          const r = p!.log.endOffsetFor(q.leaderEpoch);
          return { errorCode, partition: q.partition, leaderEpoch: r.leaderEpoch, endOffset: BigInt(r.endOffset) };
        }),
      })),
    };
  }

  private listOffsets(body: Struct): Struct {
    type Req = { name: string; partitions: { partitionIndex: number; currentLeaderEpoch: number; timestamp: bigint }[] };
    return {
      throttleTimeMs: 0,
      topics: (body.topics as Req[]).map((t) => ({
        name: t.name,
        partitions: t.partitions.map((q) => {
          const p = this.parts.get(`${t.name}:${q.partitionIndex}`);
          const errorCode = this.epochError(p, q.currentLeaderEpoch);
          if (errorCode !== 0) return { partitionIndex: q.partitionIndex, errorCode };
          const offset = q.timestamp === -2n ? p!.log.logStartOffset : p!.log.logEndOffset;
          return { partitionIndex: q.partitionIndex, errorCode, timestamp: -1n, offset: BigInt(offset), leaderEpoch: p!.leaderEpoch };
        }),
      })),
    };
  }
}

// ---- helpers ------------------------------------------------------------------------------------------

const LEADER = 1;
const FOLLOWER = 2;

function options(over: Partial<ReplicaFetcherOptions> = {}): ReplicaFetcherOptions {
  return {
    numReplicaFetchers: 1,
    replicaFetchMaxBytes: 1 << 20,
    replicaFetchResponseMaxBytes: 10 << 20,
    replicaFetchWaitMaxMs: 100,
    replicaFetchMinBytes: 1,
    replicaFetchBackoffMs: 50,
    requestTimeoutMs: 10_000,
    ...over,
  };
}

async function waitFor(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function setUp(opts: Partial<ReplicaFetcherOptions> = {}) {
  const platform = await loadPlatform();
  const leader = new FakeLeader(platform);
  await leader.start();
  const follower = new FakeFollower();
  let endpoint: { host: string; port: number } | undefined = { host: "127.0.0.1", port: leader.port };
  const manager = new ReplicaFetcherManager(platform, FOLLOWER, follower, (id) => (id === LEADER ? endpoint : undefined), silentLogger, options(opts));
  return {
    platform,
    leader,
    follower,
    manager,
    setEndpoint(e: { host: string; port: number } | undefined) {
      endpoint = e;
    },
    state: (topic = "t", partition = 0) => manager.status().find((s) => s.topic === topic && s.partition === partition),
    async tearDown() {
      await manager.shutdown();
      await leader.stop();
    },
  };
}

// ---- tests --------------------------------------------------------------------------------------------

test("replica fetcher: a divergent follower walks back its epochs, truncates, and catches up (KIP-279)", async () => {
  const h = await setUp();
  try {
    // Leader: epoch 0 [0,5), 1 [5,12), 3 [12,20). Follower: epoch 0 [0,8), 2 [8,15).
    const lead = MemLog.of([[0, 5, "a"], [1, 7, "L"], [3, 8, "L"]]);
    lead.highWatermark = 20;
    const mine = MemLog.of([[0, 5, "a"], [0, 3, "F"], [2, 7, "F"]]);
    mine.highWatermark = 3;
    h.leader.lead("t", 0, lead, 3);
    h.follower.follow("t", 0, mine, LEADER, 3);
    h.manager.addFetcherForPartitions([{ topic: "t", partition: 0, leaderId: LEADER, leaderEpoch: 3 }]);
    await waitFor("the follower to catch up", () => mine.logEndOffset === 20 && mine.highWatermark === 20);
    assert.deepEqual(mine.values(), lead.values());
    assert.deepEqual(mine.epochs, lead.epochs);
    assert.equal(h.leader.count(23), 2, "two OffsetForLeaderEpoch rounds");
    const asked = h.leader.received.get(23)!.map((b) => (b.topics as { partitions: { leaderEpoch: number; currentLeaderEpoch: number }[] }[])[0].partitions[0]);
    assert.deepEqual(asked.map((p) => p.leaderEpoch), [2, 0]);
    assert.ok(asked.every((p) => p.currentLeaderEpoch === 3));
    const fetch = h.leader.received.get(1)![0];
    assert.equal(fetch.replicaId, FOLLOWER);
    assert.equal(fetch.maxWaitMs, 100);
    const fp = (fetch.topics as { partitions: { currentLeaderEpoch: number; fetchOffset: bigint; partitionMaxBytes: number }[] }[])[0].partitions[0];
    assert.equal(fp.currentLeaderEpoch, 3);
    assert.equal(fp.fetchOffset, 5n, "the first fetch starts at the divergence point");
    assert.equal(h.state()!.state, "fetching");
    // New records at the leader reach the follower through the long-poll.
    h.leader.append("t", 0, 3, 3, "N");
    await waitFor("the new records", () => mine.logEndOffset === 23);
    assert.deepEqual(mine.values(), lead.values());
  } finally {
    await h.tearDown();
  }
});

test("replica fetcher: a walk-back step at the log end still drops the empty epoch it ends with", async () => {
  const h = await setUp();
  try {
    // The follower led epoch 2 from offset 10 and appended nothing: its cache ends with 2@10 = LEO.
    // Leader: epoch 0 [0,8), 1 [8,12), 3 [12,14). The first answer (epoch 1 ends at 12) makes the
    // follower cut at 10, its own log end: only the cut drops 2@10 so the next round asks epoch 0.
    const lead = MemLog.of([[0, 8, "a"], [1, 4, "L"], [3, 2, "L"]]);
    lead.highWatermark = 14;
    const mine = MemLog.of([[0, 8, "a"], [0, 2, "F"]]);
    mine.epochs.push({ epoch: 2, start: 10 });
    h.leader.lead("t", 0, lead, 3);
    h.follower.follow("t", 0, mine, LEADER, 3);
    h.manager.addFetcherForPartitions([{ topic: "t", partition: 0, leaderId: LEADER, leaderEpoch: 3 }]);
    await waitFor("the follower to catch up", () => mine.logEndOffset === 14);
    assert.deepEqual(mine.values(), lead.values());
    const asked = h.leader.received.get(23)!.map((b) => (b.topics as { partitions: { leaderEpoch: number }[] }[])[0].partitions[0].leaderEpoch);
    assert.deepEqual(asked, [2, 0]);
  } finally {
    await h.tearDown();
  }
});

test("replica fetcher: a fenced epoch stops the partition until it is added again at the new epoch", async () => {
  const h = await setUp();
  try {
    const lead = MemLog.of([[0, 4, "a"], [5, 2, "b"]]);
    lead.highWatermark = 6;
    const mine = MemLog.of([[0, 4, "a"]]);
    h.leader.lead("t", 0, lead, 5);
    h.follower.follow("t", 0, mine, LEADER, 4);
    h.manager.addFetcherForPartitions([{ topic: "t", partition: 0, leaderId: LEADER, leaderEpoch: 4 }]);
    await waitFor("the partition to fail", () => h.state()?.state === "failed");
    assert.match(h.state()!.lastError ?? "", /fenced/);
    const requests = h.leader.count(23) + h.leader.count(1);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(h.leader.count(23) + h.leader.count(1), requests, "a failed partition is not fetched");
    assert.equal(mine.logEndOffset, 4);
    // The next LeaderAndIsr names epoch 5.
    h.follower.follow("t", 0, mine, LEADER, 5);
    h.manager.addFetcherForPartitions([{ topic: "t", partition: 0, leaderId: LEADER, leaderEpoch: 5 }]);
    await waitFor("the follower to catch up", () => mine.logEndOffset === 6);
    assert.deepEqual(mine.values(), lead.values());
    assert.equal(h.state()!.state, "fetching");
  } finally {
    await h.tearDown();
  }
});

test("replica fetcher: out of range behind the leader's log start: the log restarts at the leader's start", async () => {
  const h = await setUp();
  try {
    const lead = MemLog.of([[2, 6, "x"]], 10);
    lead.highWatermark = 16;
    const mine = new MemLog();
    h.leader.lead("t", 0, lead, 2);
    h.follower.follow("t", 0, mine, LEADER, 2);
    h.manager.addFetcherForPartitions([{ topic: "t", partition: 0, leaderId: LEADER, leaderEpoch: 2 }]);
    await waitFor("the follower to catch up", () => mine.logEndOffset === 16);
    assert.equal(mine.logStartOffset, 10);
    assert.deepEqual(mine.values(), lead.values());
    const lo = h.leader.received.get(2)!.map((b) => {
      const p = (b.topics as { partitions: { timestamp: bigint }[] }[])[0].partitions[0];
      return [b.replicaId, p.timestamp];
    });
    assert.deepEqual(lo, [[FOLLOWER, -1n], [FOLLOWER, -2n]]);
  } finally {
    await h.tearDown();
  }
});

test("replica fetcher: out of range past the leader's end: truncate to it", async () => {
  const h = await setUp();
  try {
    const lead = MemLog.of([[0, 5, "a"]]);
    lead.highWatermark = 5;
    // No epochs known locally (an old log): truncation to the HW (8) leaves it past the leader's end.
    const mine = MemLog.of([[0, 5, "a"], [0, 5, "z"]]);
    mine.epochs = [];
    mine.highWatermark = 8;
    h.leader.lead("t", 0, lead, 1);
    h.follower.follow("t", 0, mine, LEADER, 1);
    h.manager.addFetcherForPartitions([{ topic: "t", partition: 0, leaderId: LEADER, leaderEpoch: 1 }]);
    await waitFor("truncation to the leader's end", () => mine.logEndOffset === 5 && h.state()?.state === "fetching" && h.leader.count(1) >= 2);
    assert.deepEqual(mine.values(), lead.values());
    h.leader.append("t", 0, 1, 2, "n");
    await waitFor("the new records", () => mine.logEndOffset === 7);
    assert.deepEqual(mine.values(), lead.values());
  } finally {
    await h.tearDown();
  }
});

test("replica fetcher: a partition removed during a long-poll gets nothing appended; shutdown ends the poll", async () => {
  const h = await setUp({ replicaFetchWaitMaxMs: 5_000 });
  try {
    const lead = MemLog.of([[0, 3, "a"]]);
    lead.highWatermark = 3;
    const mine = MemLog.of([[0, 3, "a"]]);
    mine.highWatermark = 3;
    const other = MemLog.of([[0, 3, "a"]]);
    h.leader.lead("t", 0, lead, 0);
    h.leader.lead("u", 0, MemLog.of([[0, 3, "a"]]), 0);
    h.follower.follow("t", 0, mine, LEADER, 0);
    h.follower.follow("u", 0, other, LEADER, 0);
    h.manager.addFetcherForPartitions([
      { topic: "t", partition: 0, leaderId: LEADER, leaderEpoch: 0 },
      { topic: "u", partition: 0, leaderId: LEADER, leaderEpoch: 0 },
    ]);
    await waitFor("a long-poll in flight", () => h.leader.count(1) >= 1 && h.state()?.state === "fetching");
    await new Promise((r) => setTimeout(r, 50));
    h.manager.removeFetcherForPartitions([{ topic: "t", partition: 0 }]);
    assert.equal(h.state(), undefined);
    const appends = h.follower.appends;
    h.leader.append("t", 0, 0, 2, "late");
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(mine.logEndOffset, 3, "the removed partition's answer was dropped");
    assert.equal(h.follower.appends, appends);
    // The other partition is still served, and shutdown does not wait out its 5 s long-poll.
    await waitFor("the next long-poll", () => h.leader.count(1) >= 2);
    const started = Date.now();
    await h.manager.shutdown();
    assert.ok(Date.now() - started < 1_000, `shutdown took ${Date.now() - started} ms`);
    assert.equal(h.manager.fetcherCount, 0);
  } finally {
    await h.tearDown();
  }
});

test("replica fetcher: a leader that is unreachable at first is retried after backoff", async () => {
  const h = await setUp();
  try {
    const lead = MemLog.of([[0, 4, "a"]]);
    lead.highWatermark = 4;
    const mine = new MemLog();
    h.leader.lead("t", 0, lead, 0);
    h.follower.follow("t", 0, mine, LEADER, 0);
    h.setEndpoint(undefined);
    h.manager.addFetcherForPartitions([{ topic: "t", partition: 0, leaderId: LEADER, leaderEpoch: 0 }]);
    await waitFor("a recorded failure", () => /endpoint is not known/.test(h.state()?.lastError ?? ""));
    // A port nobody listens on, then the real one.
    const gone = new FakeLeader(h.platform);
    await gone.start();
    const port = gone.port;
    await gone.stop();
    h.setEndpoint({ host: "127.0.0.1", port });
    await waitFor("a connect failure", () => /connect to 127\.0\.0\.1/.test(h.state()?.lastError ?? ""));
    h.setEndpoint({ host: "127.0.0.1", port: h.leader.port });
    await waitFor("the follower to catch up", () => mine.logEndOffset === 4);
    assert.equal(h.state()!.lastError, null);
  } finally {
    await h.tearDown();
  }
});

test("replica fetcher: partitions spread over num.replica.fetchers loops per leader, as Kafka places them", async () => {
  const h = await setUp({ numReplicaFetchers: 3 });
  try {
    const parts = Array.from({ length: 12 }, (_, i) => ({ topic: `topic-${i % 4}`, partition: i, leaderId: LEADER, leaderEpoch: 0 }));
    for (const p of parts) {
      const lead = MemLog.of([[0, 2, `${p.topic}.${p.partition}.`]]);
      lead.highWatermark = 2;
      h.leader.lead(p.topic, p.partition, lead, 0);
      h.follower.follow(p.topic, p.partition, new MemLog(), LEADER, 0);
    }
    h.manager.addFetcherForPartitions(parts);
    await waitFor("every partition to catch up", () => parts.every((p) => h.follower.followerState(p.topic, p.partition)!.logEndOffset === 2));
    const ids = new Set(h.manager.status().map((s) => s.fetcherId));
    assert.ok(ids.size > 1 && [...ids].every((id) => id >= 0 && id < 3));
    assert.equal(h.manager.fetcherCount, ids.size);
    h.manager.removeFetcherForPartitions(parts);
    assert.equal(h.manager.fetcherCount, 0, "fetchers left without partitions stop");
  } finally {
    await h.tearDown();
  }
});

test("replica fetcher: a follower append refused with KAFKA_STORAGE_ERROR (disk full) is retried after backoff, not given up", async () => {
  const h = await setUp();
  try {
    const lead = MemLog.of([[0, 10, "a"]]);
    lead.highWatermark = 10;
    const mine = MemLog.of([]);
    h.leader.lead("t", 0, lead, 0);
    h.follower.follow("t", 0, mine, LEADER, 0);
    h.follower.refuseAppends = 3;
    h.manager.addFetcherForPartitions([{ topic: "t", partition: 0, leaderId: LEADER, leaderEpoch: 0 }]);
    await waitFor("the follower to catch up once appends go through", () => mine.logEndOffset === 10);
    assert.equal(h.follower.refuseAppends, 0, "every refusal was met");
    assert.deepEqual(mine.values(), lead.values());
    assert.equal(h.state()!.state, "fetching");
  } finally {
    await h.tearDown();
  }
});

test("replica fetcher: a throttled partition not caught up is left out of fetches while follower.replication.throttled.rate is exceeded (Kafka's shouldFollowerThrottle)", async () => {
  let now = 1_000_000;
  const quota = new ReplicationQuotaManager({ monotonicMs: () => now }, 11, 1000);
  quota.updateQuota(10); // bytes per second: the first fetched batches take it over
  const h = await setUp({ quota });
  try {
    for (const topic of ["t", "u"]) {
      const lead = MemLog.of([[0, 20, `${topic}.`]]);
      lead.highWatermark = 20;
      h.leader.lead(topic, 0, lead, 0);
      h.follower.follow(topic, 0, new MemLog(), LEADER, 0);
    }
    h.follower.throttled.add("t:0");
    const end = (topic: string) => h.follower.followerState(topic, 0)!.logEndOffset;
    const fetchesOf = (topic: string) =>
      (h.leader.received.get(1) ?? []).filter((b) => (b.topics as { topic: string }[]).some((t) => t.topic === topic)).length;
    h.manager.addFetcherForPartitions([{ topic: "t", partition: 0, leaderId: LEADER, leaderEpoch: 0 }, { topic: "u", partition: 0, leaderId: LEADER, leaderEpoch: 0 }]);
    await waitFor("the unthrottled partition to catch up", () => end("u") === 20);
    // The fake leader answers 5 records a fetch: t got one fetch's worth before the quota was exceeded.
    assert.equal(end("t"), 5);
    assert.equal(fetchesOf("t"), 1, "t was left out of every fetch after the first");
    assert.ok(quota.isQuotaExceeded());
    const recorded = quota.rateBytesPerSec();
    // u's bytes are not on the quota: only t's first fetch is.
    assert.ok(recorded > 0 && recorded < 100, `${recorded} B/s`);

    now += 12_000; // the samples age out: t is fetched again, one fetch's worth, and is over again
    await waitFor("one more fetch of the throttled partition", () => end("t") === 10);
    assert.equal(fetchesOf("t"), 2);
    assert.ok(quota.isQuotaExceeded());
    quota.updateQuota(1_000_000); // a higher rate (a dynamic config change) lets it catch up
    await waitFor("the throttled partition to catch up", () => end("t") === 20);
    assert.deepEqual(h.follower.parts.get("t:0")!.log.values(), h.leader.parts.get("t:0")!.log.values());

    // Caught up (lag 0), t is fetched even past the quota.
    quota.record(100_000_000);
    assert.ok(quota.isQuotaExceeded());
    h.leader.append("t", 0, 0, 3, "t.");
    await waitFor("an in-sync throttled partition to get new records", () => end("t") === 23);
  } finally {
    await h.tearDown();
  }
});
