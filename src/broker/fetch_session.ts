// Incremental fetch sessions (KIP-227), as Kafka 3.8's FetchSession, FetchSessionCache and
// FetchManager.newContext have them. A client that names its partitions once (a full fetch,
// epoch 0) gets a session id; its later fetches (epoch 1, 2, ...) name only the partitions whose
// fetch state changed (and forgotten_topics_data, those to drop), and the answers carry only the
// partitions with something new: records, a moved high watermark, last stable offset or log start
// offset, an error, or a preferred read replica.
//
// Request metadata (session id, epoch), as FetchMetadata reads it:
// - (0, -1): sessionless full fetch; no session is made.
// - (any, 0): full fetch; the named session (if any) is closed, a new one is made if the cache
//   has room (else the answer's session id is 0: the client goes on with full fetches).
// - (id, -1), id != 0: full fetch that closes the session and makes no new one.
// - (id, n > 0): incremental; FETCH_SESSION_ID_NOT_FOUND if the cache has no such session,
//   INVALID_FETCH_SESSION_EPOCH if n is not the session's next epoch, FETCH_SESSION_TOPIC_ID_ERROR
//   if the session was made with topic ids (v13+) and this request has names, or the reverse.
//   A session left with no partitions is closed and the fetch answered sessionless.
//
// The cache (max.incremental.fetch.session.cache.slots sessions) evicts, to make room for a new
// session: first any session unused for fetchSessionEvictionMs; else the least valuable
// evictable one if the newcomer is worth more. Sessions are ordered by (privileged, partition
// count, id), privileged meaning a follower's. A session younger than fetchSessionEvictionMs is
// evictable by a follower's session only if it is not privileged itself, and by a consumer's not
// at all (Kafka's evictableByPrivileged / evictableByAll), so a storm of new consumers cannot
// push out the sessions already in use.
//
// Bounds (beyond Kafka's, which has none but the request size): a session holds at most
// fetchSessionPartitionsMax partitions and the cache fetchSessionCachePartitionsMax in all; a
// full fetch past them gets no session, an incremental one that would grow past them closes its
// session and answers FETCH_SESSION_ID_NOT_FOUND (the client then sends a full fetch).
//
// Invariants: a session is in `sessions` iff the cache holds it; `partitionCount` is the sum of
// every held session's partitions as of its last touch; the epoch only moves forward, by 1,
// wrapping from 2^31-1 to 1 (never 0 or -1, which mean full fetches).

import { ErrorCode, fetchSessionCachePartitionsMax, fetchSessionEvictionMs, fetchSessionPartitionsMax } from "../util/mod.ts";

export const INVALID_SESSION_ID = 0;
export const INITIAL_EPOCH = 0;
export const FINAL_EPOCH = -1;

/** The epoch after `epoch` (FetchMetadata.nextEpoch). */
export function nextEpoch(epoch: number): number {
  if (epoch < 0) return FINAL_EPOCH;
  return epoch === 0x7fffffff ? 1 : epoch + 1;
}

/** What a fetch request asks of one partition (the session remembers it between requests). */
export interface PartitionFetchState {
  fetchOffset: bigint;
  partitionMaxBytes: number;
  currentLeaderEpoch: number;
  logStartOffset: bigint;
  lastFetchedEpoch: number;
}

/** One partition a request names: by name (v7-12) or by topic id (v13+); `key` identifies it in a session. */
export interface RequestedPartition extends PartitionFetchState {
  key: string;
  topic: string;
  topicId: Uint8Array;
  partition: number;
}

/** The part of a partition's answer a session compares with what it last sent. */
export interface PartitionAnswer {
  errorCode: number;
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
  preferredReadReplica: number;
  recordBytes: number;
  diverging: boolean;
}

/** A partition of a session: the client's fetch state and what the last answer told it. */
export class CachedPartition implements RequestedPartition {
  fetchOffset: bigint;
  partitionMaxBytes: number;
  currentLeaderEpoch: number;
  logStartOffset: bigint;
  lastFetchedEpoch: number;
  /** What the client was last told; -1 until told, and after an error (so it is told again). */
  highWatermark = -1n;
  lastStableOffset = -1n;
  localLogStartOffset = -1n;

  constructor(readonly key: string, readonly topic: string, readonly topicId: Uint8Array, readonly partition: number, req: PartitionFetchState) {
    this.fetchOffset = req.fetchOffset;
    this.partitionMaxBytes = req.partitionMaxBytes;
    this.currentLeaderEpoch = req.currentLeaderEpoch;
    this.logStartOffset = req.logStartOffset;
    this.lastFetchedEpoch = req.lastFetchedEpoch;
  }

  updateRequest(req: PartitionFetchState): void {
    this.fetchOffset = req.fetchOffset;
    this.partitionMaxBytes = req.partitionMaxBytes;
    this.currentLeaderEpoch = req.currentLeaderEpoch;
    this.logStartOffset = req.logStartOffset;
    this.lastFetchedEpoch = req.lastFetchedEpoch;
  }

  /**
   * Whether an incremental answer must carry this partition (CachedPartition.maybeUpdateResponseData);
   * with `update`, remembers what it carries. strand also compares the last stable offset, which
   * Kafka 3.8 does not: a read_committed client would otherwise keep a stale one.
   */
  mustRespond(a: PartitionAnswer, update: boolean): boolean {
    let must = a.recordBytes > 0 || a.preferredReadReplica >= 0 || a.diverging;
    if (this.highWatermark !== a.highWatermark) {
      must = true;
      if (update) this.highWatermark = a.highWatermark;
    }
    if (this.lastStableOffset !== a.lastStableOffset) {
      must = true;
      if (update) this.lastStableOffset = a.lastStableOffset;
    }
    if (this.localLogStartOffset !== a.logStartOffset) {
      must = true;
      if (update) this.localLogStartOffset = a.logStartOffset;
    }
    if (a.errorCode !== ErrorCode.NONE) {
      must = true;
      if (update) this.highWatermark = -1n;
    }
    return must;
  }
}

export class FetchSession {
  epoch = nextEpoch(INITIAL_EPOCH);
  lastUsedMs: number;
  /** Partition count at the last touch (-1: never touched), as the cache's totals and eviction order see it. */
  cachedSize = -1;
  evictableByPrivileged = false;
  evictableByAll = false;

  constructor(
    readonly id: number,
    readonly privileged: boolean,
    /** In fetch order: partitions that returned records move to the end (fairness across fetches). */
    readonly partitions: Map<string, CachedPartition>,
    readonly usesTopicIds: boolean,
    readonly creationMs: number,
  ) {
    this.lastUsedMs = creationMs;
  }

  get size(): number {
    return this.partitions.size;
  }

  /** Applies an incremental request: adds or updates the partitions named, drops the forgotten ones. */
  update(requested: RequestedPartition[], forgotten: string[]): { added: number; updated: number; removed: number } {
    let added = 0, updated = 0, removed = 0;
    for (const r of requested) {
      const cached = this.partitions.get(r.key);
      if (cached === undefined) {
        this.partitions.set(r.key, new CachedPartition(r.key, r.topic, r.topicId, r.partition, r));
        added++;
      } else {
        cached.updateRequest(r);
        updated++;
      }
    }
    for (const key of forgotten) if (this.partitions.delete(key)) removed++;
    return { added, updated, removed };
  }

  /** A partition that returned records goes to the back, so the others get the byte budget first next time. */
  moveToEnd(p: CachedPartition): void {
    this.partitions.delete(p.key);
    this.partitions.set(p.key, p);
  }
}

/** Kafka's EvictableKey order: unprivileged first, then fewer partitions, then lower id. */
function lessValuable(a: { privileged: boolean; size: number; id: number }, b: { privileged: boolean; size: number; id: number }): boolean {
  if (a.privileged !== b.privileged) return !a.privileged;
  if (a.size !== b.size) return a.size < b.size;
  return a.id < b.id;
}

export class FetchSessionCache {
  private readonly sessions = new Map<number, FetchSession>();
  /** Partitions in all held sessions, as of each one's last touch. */
  partitionCount = 0;
  /** Sessions evicted to make room for others (Kafka's IncrementalFetchSessionEvictionsPerSec, as a count). */
  evictions = 0;

  constructor(
    readonly maxEntries: number,
    private readonly evictionMs: number = fetchSessionEvictionMs,
    /** A uniform number in [0, 1): session ids must not be guessable by another client. */
    private readonly random: () => number,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  get(id: number): FetchSession | undefined {
    return this.sessions.get(id);
  }

  remove(id: number): FetchSession | undefined {
    const s = this.sessions.get(id);
    if (s === undefined) return undefined;
    this.sessions.delete(id);
    if (s.cachedSize >= 0) this.partitionCount -= s.cachedSize;
    return s;
  }

  /**
   * Makes a session for a full fetch's partitions if there is room (or room can be made by
   * eviction); answers its id, or INVALID_SESSION_ID when none was made.
   */
  maybeCreateSession(nowMs: number, privileged: boolean, size: number, usesTopicIds: boolean, create: () => Map<string, CachedPartition>): number {
    if (this.maxEntries <= 0 || size > fetchSessionPartitionsMax) return INVALID_SESSION_ID;
    if (this.partitionCount + size > fetchSessionCachePartitionsMax) return INVALID_SESSION_ID;
    if (this.sessions.size >= this.maxEntries && !this.tryEvict(privileged, size, nowMs)) return INVALID_SESSION_ID;
    const session = new FetchSession(this.newSessionId(), privileged, create(), usesTopicIds, nowMs);
    this.sessions.set(session.id, session);
    this.touch(session, nowMs);
    return session.id;
  }

  /** Records a use of the session: its recency, its partition count and whether it may be evicted. */
  touch(session: FetchSession, nowMs: number): void {
    session.lastUsedMs = nowMs;
    if (session.cachedSize >= 0) this.partitionCount -= session.cachedSize;
    session.cachedSize = session.size;
    this.partitionCount += session.cachedSize;
    const old = nowMs - session.creationMs > this.evictionMs;
    session.evictableByPrivileged = !session.privileged || old;
    session.evictableByAll = old;
  }

  /** Whether a session could be evicted for a newcomer of `size` partitions (it then is). */
  private tryEvict(privileged: boolean, size: number, nowMs: number): boolean {
    let stalest: FetchSession | undefined;
    let cheapest: FetchSession | undefined;
    for (const s of this.sessions.values()) {
      if (stalest === undefined || s.lastUsedMs < stalest.lastUsedMs || (s.lastUsedMs === stalest.lastUsedMs && s.id < stalest.id)) stalest = s;
      const evictable = privileged ? s.evictableByPrivileged : s.evictableByAll;
      if (evictable && (cheapest === undefined || lessValuable(this.keyOf(s), this.keyOf(cheapest)))) cheapest = s;
    }
    if (stalest === undefined) return false;
    let victim: FetchSession | undefined;
    if (nowMs - stalest.lastUsedMs > this.evictionMs) victim = stalest;
    else if (cheapest !== undefined && !lessValuable({ privileged, size, id: 0 }, this.keyOf(cheapest))) victim = cheapest;
    if (victim === undefined) return false;
    this.remove(victim.id);
    this.evictions++;
    return true;
  }

  private keyOf(s: FetchSession) {
    return { privileged: s.privileged, size: s.cachedSize, id: s.id };
  }

  private newSessionId(): number {
    for (;;) {
      const id = 1 + Math.floor(this.random() * 0x7ffffffe);
      if (!this.sessions.has(id)) return id;
    }
  }
}

/** How one fetch request relates to the cache (Kafka's FetchContext kinds). */
export type FetchContext =
  | { kind: "sessionless" }
  | { kind: "full"; usesTopicIds: boolean; privileged: boolean }
  | { kind: "error"; errorCode: number }
  | { kind: "incremental"; session: FetchSession; expectedEpoch: number };

export interface FetchRequestMetadata {
  version: number;
  sessionId: number;
  epoch: number;
  privileged: boolean;
  requested: RequestedPartition[];
  forgotten: string[];
  nowMs: number;
}

/** FetchManager.newContext: what this request does to the cache, before anything is read. */
export function newFetchContext(cache: FetchSessionCache | null, m: FetchRequestMetadata): FetchContext {
  const full = m.epoch === INITIAL_EPOCH || m.epoch === FINAL_EPOCH;
  if (full) {
    // Any session a full fetch names is closed.
    if (m.sessionId !== INVALID_SESSION_ID) cache?.remove(m.sessionId);
    if (m.epoch === FINAL_EPOCH || cache === null) return { kind: "sessionless" };
    return { kind: "full", usesTopicIds: m.version >= 13, privileged: m.privileged };
  }
  const session = cache?.get(m.sessionId);
  if (cache === null || session === undefined) return { kind: "error", errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND };
  if (session.epoch !== m.epoch) return { kind: "error", errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH };
  if (session.usesTopicIds !== (m.version >= 13)) return { kind: "error", errorCode: ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR };
  session.update(m.requested, m.forgotten);
  if (session.size === 0) {
    cache.remove(session.id);
    return { kind: "sessionless" };
  }
  if (session.size > fetchSessionPartitionsMax || cache.partitionCount - Math.max(0, session.cachedSize) + session.size > fetchSessionCachePartitionsMax) {
    cache.remove(session.id);
    return { kind: "error", errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND };
  }
  cache.touch(session, m.nowMs);
  session.epoch = nextEpoch(session.epoch);
  return { kind: "incremental", session, expectedEpoch: session.epoch };
}
