// The fetch session cache and FetchManager.newContext (KIP-227) without sockets: epochs, the
// request kinds, and Kafka's eviction rules (stale first; then a follower's session may push out
// a young consumer's, a consumer's only an old one, and only a less valuable one).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  CachedPartition,
  FetchSessionCache,
  INVALID_SESSION_ID,
  newFetchContext,
  nextEpoch,
  type RequestedPartition,
} from "../../src/broker/fetch_session.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { fetchSessionPartitionsMax } from "../../src/util/limits.ts";

function part(partition: number, fetchOffset = 0n, topic = "t"): RequestedPartition {
  return { key: `${topic}:${partition}`, topic, topicId: new Uint8Array(16), partition, fetchOffset, partitionMaxBytes: 1024, currentLeaderEpoch: -1, logStartOffset: -1n, lastFetchedEpoch: -1 };
}

function partitions(n: number): Map<string, CachedPartition> {
  const m = new Map<string, CachedPartition>();
  for (let i = 0; i < n; i++) {
    const p = part(i);
    m.set(p.key, new CachedPartition(p.key, p.topic, p.topicId, p.partition, p));
  }
  return m;
}

let seed = 1;
const rand = () => ((seed = (seed * 48271) % 0x7fffffff) / 0x7fffffff);

test("nextEpoch: 0 -> 1, wraps past 2^31-1 to 1, final stays final", () => {
  assert.equal(nextEpoch(0), 1);
  assert.equal(nextEpoch(41), 42);
  assert.equal(nextEpoch(0x7fffffff), 1);
  assert.equal(nextEpoch(-1), -1);
});

test("cache: full slots refuse a consumer's new session while the others are young; a stale one is evicted for anyone", () => {
  const cache = new FetchSessionCache(2, 1000, rand);
  const a = cache.maybeCreateSession(0, false, 3, false, () => partitions(3));
  const b = cache.maybeCreateSession(10, false, 5, false, () => partitions(5));
  assert.ok(a > 0 && b > 0 && a !== b);
  assert.equal(cache.partitionCount, 8);
  // A bigger consumer session cannot evict young consumer sessions (evictableByAll needs age).
  assert.equal(cache.maybeCreateSession(20, false, 100, false, () => partitions(100)), INVALID_SESSION_ID);
  assert.equal(cache.size, 2);
  // Touch b so a is the least recently used; then a goes stale.
  cache.touch(cache.get(b)!, 900);
  const c = cache.maybeCreateSession(1001 + 1, false, 1, false, () => partitions(1));
  assert.ok(c > 0);
  assert.equal(cache.get(a), undefined, "the stale session was evicted");
  assert.ok(cache.get(b) !== undefined);
  assert.equal(cache.partitionCount, 6);
  assert.equal(cache.evictions, 1);
});

test("cache: a follower's session evicts the least valuable young consumer session; never a more valuable one", () => {
  const cache = new FetchSessionCache(2, 60_000, rand);
  const small = cache.maybeCreateSession(0, false, 2, false, () => partitions(2));
  const big = cache.maybeCreateSession(0, false, 50, false, () => partitions(50));
  const follower = cache.maybeCreateSession(1, true, 1, false, () => partitions(1));
  assert.ok(follower > 0, "privileged beats unprivileged, whatever the size");
  assert.equal(cache.get(small), undefined, "the smaller consumer session went first");
  assert.ok(cache.get(big) !== undefined);
  // Now: a young privileged session (not evictable by anyone) and a young consumer one of 50.
  // A follower with fewer partitions still outranks a consumer session.
  const f2 = cache.maybeCreateSession(2, true, 1, false, () => partitions(1));
  assert.ok(f2 > 0);
  assert.equal(cache.get(big), undefined);
  // Both slots now hold young follower sessions: another follower cannot push them out...
  assert.equal(cache.maybeCreateSession(3, true, 1000, false, () => partitions(1000)), INVALID_SESSION_ID);
  // ...until they are older than the eviction time (used recently, so not stale): then they are
  // evictable by all, but only for a newcomer worth at least as much (a consumer's is not).
  cache.touch(cache.get(follower)!, 70_000);
  cache.touch(cache.get(f2)!, 70_000);
  assert.equal(cache.maybeCreateSession(70_001, false, 10, false, () => partitions(10)), INVALID_SESSION_ID);
  const f3 = cache.maybeCreateSession(70_001, true, 10, false, () => partitions(10));
  assert.ok(f3 > 0);
  assert.equal(cache.size, 2);
  assert.equal([follower, f2].filter((id) => cache.get(id) === undefined).length, 1);
});

test("cache: no slots (0) makes no sessions; a fetch over fetchSessionPartitionsMax gets none", () => {
  assert.equal(new FetchSessionCache(0, 120_000, Math.random).maybeCreateSession(0, true, 1, false, () => partitions(1)), INVALID_SESSION_ID);
  const cache = new FetchSessionCache(10, 120_000, Math.random);
  assert.equal(cache.maybeCreateSession(0, false, fetchSessionPartitionsMax + 1, false, () => new Map()), INVALID_SESSION_ID);
  assert.equal(cache.size, 0);
});

test("newFetchContext: full, incremental, epochs, unknown ids, topic-id mismatch, forgetting, closing", () => {
  const cache = new FetchSessionCache(10, 120_000, rand);
  const meta = (sessionId: number, epoch: number, requested: RequestedPartition[] = [], forgotten: string[] = [], version = 12) =>
    ({ version, sessionId, epoch, privileged: false, requested, forgotten, nowMs: 0 });

  assert.deepEqual(newFetchContext(cache, meta(0, -1, [part(0)])), { kind: "sessionless" });
  const full = newFetchContext(cache, meta(0, 0, [part(0), part(1)]));
  assert.equal(full.kind, "full");
  const id = cache.maybeCreateSession(0, false, 2, false, () => partitions(2));
  assert.equal(cache.get(id)!.epoch, 1);

  assert.deepEqual(newFetchContext(cache, meta(id + 1, 1)), { kind: "error", errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND });
  assert.deepEqual(newFetchContext(cache, meta(id, 2)), { kind: "error", errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH });
  assert.deepEqual(newFetchContext(cache, meta(id, 1, [], [], 13)), { kind: "error", errorCode: ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR });
  assert.deepEqual(newFetchContext(cache, meta(0, 1)), { kind: "error", errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND });

  // Epoch 1: update partition 0's offset, add partition 7, forget partition 1.
  const inc = newFetchContext(cache, meta(id, 1, [part(0, 5n), part(7)], ["t:1"]));
  assert.equal(inc.kind, "incremental");
  const session = cache.get(id)!;
  assert.deepEqual([...session.partitions.keys()], ["t:0", "t:7"]);
  assert.equal(session.partitions.get("t:0")!.fetchOffset, 5n);
  assert.equal(session.epoch, 2);
  assert.equal(cache.partitionCount, 2);
  // The same epoch again (a retry of a lost answer) is refused: the session has moved on.
  assert.equal((newFetchContext(cache, meta(id, 1)) as { errorCode: number }).errorCode, ErrorCode.INVALID_FETCH_SESSION_EPOCH);

  // Forgetting every partition closes the session; the fetch is answered sessionless.
  assert.deepEqual(newFetchContext(cache, meta(id, 2, [], ["t:0", "t:7"])), { kind: "sessionless" });
  assert.equal(cache.get(id), undefined);

  // A full fetch naming a session closes it; epoch -1 makes no new one.
  const id2 = cache.maybeCreateSession(0, false, 1, false, () => partitions(1));
  assert.deepEqual(newFetchContext(cache, meta(id2, -1, [part(0)])), { kind: "sessionless" });
  assert.equal(cache.get(id2), undefined);
  const id3 = cache.maybeCreateSession(0, false, 1, false, () => partitions(1));
  assert.equal(newFetchContext(cache, meta(id3, 0, [part(0)])).kind, "full");
  assert.equal(cache.get(id3), undefined);
  assert.equal(cache.partitionCount, 0);
});

test("CachedPartition.mustRespond: records, HW / LSO / log start moves, errors (re-sent after), preferred replica", () => {
  const p = new CachedPartition("t:0", "t", new Uint8Array(16), 0, part(0));
  const a = { errorCode: 0, highWatermark: 10n, lastStableOffset: 10n, logStartOffset: 0n, preferredReadReplica: -1, recordBytes: 0, diverging: false };
  assert.equal(p.mustRespond(a, true), true, "first sight");
  assert.equal(p.mustRespond(a, true), false, "nothing changed");
  assert.equal(p.mustRespond({ ...a, recordBytes: 1 }, true), true);
  assert.equal(p.mustRespond({ ...a, highWatermark: 11n }, false), true);
  assert.equal(p.mustRespond(a, true), false, "update=false left the cached HW alone");
  assert.equal(p.mustRespond({ ...a, lastStableOffset: 9n }, true), true);
  assert.equal(p.mustRespond({ ...a, lastStableOffset: 9n, logStartOffset: 3n }, true), true);
  assert.equal(p.mustRespond({ ...a, lastStableOffset: 9n, logStartOffset: 3n, preferredReadReplica: 2 }, true), true);
  assert.equal(p.mustRespond({ ...a, lastStableOffset: 9n, logStartOffset: 3n, errorCode: 6 }, true), true);
  assert.equal(p.mustRespond({ ...a, lastStableOffset: 9n, logStartOffset: 3n }, true), true, "after an error the partition is sent again");
  assert.equal(p.mustRespond({ ...a, lastStableOffset: 9n, logStartOffset: 3n }, true), false);
});
