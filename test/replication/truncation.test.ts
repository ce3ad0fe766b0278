// The follower's truncation decision (KIP-101, KIP-279), case by case, and then played out whole:
// a follower and a leader with leader-epoch caches that behave as Kafka's LeaderEpochFileCache
// (endOffsetFor, truncateFromEnd) exchange OffsetForLeaderEpoch answers until the follower is
// done; the follower must end exactly at the offset where the two logs diverge, in at most one
// round per follower epoch, for every pair of histories a random generator can make.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type EpochEndOffset,
  offsetTruncationState,
  type OffsetTruncationState,
  truncationWithoutEpochs,
  UNDEFINED_EPOCH,
  UNDEFINED_EPOCH_OFFSET,
} from "../../src/replication/truncation.ts";

/** Kafka's LeaderEpochFileCache, as far as truncation needs it. Entries ascend in epoch and start offset. */
class EpochCache {
  constructor(public entries: { epoch: number; start: number }[] = []) {}

  latest(): number | null {
    return this.entries.length === 0 ? null : this.entries[this.entries.length - 1].epoch;
  }

  /** LeaderEpochFileCache.endOffsetFor: [epoch, end offset], or [-1, -1] when unknown. */
  endOffsetFor(requested: number, logEndOffset: number): [number, number] {
    if (requested === UNDEFINED_EPOCH) return [UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET];
    if (this.latest() === requested) return [requested, logEndOffset];
    const higher = this.entries.find((e) => e.epoch > requested);
    if (higher === undefined) return [UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET];
    const floor = [...this.entries].reverse().find((e) => e.epoch <= requested);
    if (floor === undefined) return [requested, higher.start];
    return [floor.epoch, higher.start];
  }

  /** Removes every entry starting at or after offset. */
  truncateFromEnd(offset: number): void {
    this.entries = this.entries.filter((e) => e.start < offset);
  }
}

interface Replica {
  cache: EpochCache;
  logEndOffset: number;
  highWatermark: number;
}

/** The follower's view as FollowerLog gives it (UnifiedLog.endOffsetForEpoch: unknown -> null). */
function view(r: Replica) {
  return {
    logEndOffset: r.logEndOffset,
    highWatermark: r.highWatermark,
    endOffsetForEpoch(epoch: number): EpochEndOffset | null {
      const [leaderEpoch, endOffset] = r.cache.endOffsetFor(epoch, r.logEndOffset);
      return endOffset === UNDEFINED_EPOCH_OFFSET ? null : { leaderEpoch, endOffset };
    },
  };
}

/** The leader's OffsetForLeaderEpoch answer for `epoch`. */
function ask(leader: Replica, epoch: number): EpochEndOffset {
  const [leaderEpoch, endOffset] = leader.cache.endOffsetFor(epoch, leader.logEndOffset);
  return { leaderEpoch, endOffset };
}

/** The whole exchange, as the fetcher runs it: returns the final log end offset and the rounds. */
function playOut(leader: Replica, follower: Replica): { offset: number; rounds: number } {
  for (let rounds = 1; rounds < 1000; rounds++) {
    const latest = follower.cache.latest();
    const t: OffsetTruncationState = latest === null
      ? truncationWithoutEpochs(follower)
      : offsetTruncationState(ask(leader, latest), view(follower));
    assert.ok(t.offset <= follower.logEndOffset, "never past the log end");
    follower.logEndOffset = Math.min(follower.logEndOffset, t.offset);
    follower.highWatermark = Math.min(follower.highWatermark, follower.logEndOffset);
    follower.cache.truncateFromEnd(t.offset);
    if (t.truncationCompleted) return { offset: follower.logEndOffset, rounds };
    const after = follower.cache.latest();
    assert.ok(after === null || after < latest!, `a walk-back step lowers the latest epoch (${latest} -> ${after})`);
  }
  throw new Error("truncation did not finish");
}

function replica(entries: [number, number][], logEndOffset: number, highWatermark = 0): Replica {
  return { cache: new EpochCache(entries.map(([epoch, start]) => ({ epoch, start }))), logEndOffset, highWatermark };
}

// ---- the rules, one by one --------------------------------------------------------------------------

test("truncation: the leader knows no offset for the epoch (-1): the high watermark", () => {
  const f = view(replica([[0, 0], [1, 5]], 10, 4));
  assert.deepEqual(offsetTruncationState({ leaderEpoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET }, f), { offset: 4, truncationCompleted: true });
  // Even when the epoch field is set: the offset decides.
  assert.deepEqual(offsetTruncationState({ leaderEpoch: 3, endOffset: UNDEFINED_EPOCH_OFFSET }, f), { offset: 4, truncationCompleted: true });
});

test("truncation: no local epochs: the high watermark, never past the log end", () => {
  assert.deepEqual(truncationWithoutEpochs({ logEndOffset: 10, highWatermark: 7 }), { offset: 7, truncationCompleted: true });
  assert.deepEqual(truncationWithoutEpochs({ logEndOffset: 5, highWatermark: 7 }), { offset: 5, truncationCompleted: true });
});

test("truncation: a leader that answers no epoch (-1) with an offset: min(offset, LEO)", () => {
  const f = view(replica([[0, 0]], 10, 2));
  assert.deepEqual(offsetTruncationState({ leaderEpoch: UNDEFINED_EPOCH, endOffset: 6 }, f), { offset: 6, truncationCompleted: true });
  assert.deepEqual(offsetTruncationState({ leaderEpoch: UNDEFINED_EPOCH, endOffset: 60 }, f), { offset: 10, truncationCompleted: true });
});

test("truncation: same epoch on both sides: the smaller end, never the high watermark (KIP-101)", () => {
  // Follower ahead of the leader within epoch 0 (the leader lost an unflushed tail).
  const ahead = view(replica([[0, 0]], 10, 5));
  assert.deepEqual(offsetTruncationState({ leaderEpoch: 0, endOffset: 8 }, ahead), { offset: 8, truncationCompleted: true });
  // Follower behind (or equal): nothing to cut, and not down to its HW either.
  assert.deepEqual(offsetTruncationState({ leaderEpoch: 0, endOffset: 15 }, ahead), { offset: 10, truncationCompleted: true });
  // The leader's epoch ended earlier than the follower's copy of it: cut there.
  const twoEpochs = view(replica([[0, 0], [2, 12]], 20, 3));
  assert.deepEqual(offsetTruncationState({ leaderEpoch: 2, endOffset: 14 }, twoEpochs), { offset: 14, truncationCompleted: true });
  // The follower's end of the epoch is the smaller one (it has a later epoch the leader answered past).
  assert.deepEqual(offsetTruncationState({ leaderEpoch: 0, endOffset: 18 }, twoEpochs), { offset: 12, truncationCompleted: true });
});

test("truncation: the leader's epoch unknown locally: cut to the local end of the epoch below and ask again (KIP-279)", () => {
  const f = view(replica([[0, 0], [2, 8]], 15, 4));
  // The leader answers epoch 1 (which the follower never saw), ending at 12.
  assert.deepEqual(offsetTruncationState({ leaderEpoch: 1, endOffset: 12 }, f), { offset: 8, truncationCompleted: false });
  // Never past the log end even then.
  const short = view(replica([[0, 0], [2, 8]], 6, 4));
  assert.deepEqual(offsetTruncationState({ leaderEpoch: 1, endOffset: 12 }, { ...short, endOffsetForEpoch: () => ({ leaderEpoch: 0, endOffset: 8 }) }), {
    offset: 6,
    truncationCompleted: false,
  });
});

test("truncation: no local epoch at or below the leader's: the leader's offset, capped at LEO", () => {
  const f = { logEndOffset: 30, highWatermark: 10, endOffsetForEpoch: () => null };
  assert.deepEqual(offsetTruncationState({ leaderEpoch: 3, endOffset: 25 }, f), { offset: 25, truncationCompleted: true });
  assert.deepEqual(offsetTruncationState({ leaderEpoch: 3, endOffset: 40 }, f), { offset: 30, truncationCompleted: true });
});

test("truncation: offsets below the log start are returned as they are (the fetcher empties the log)", () => {
  const f = view(replica([[4, 100]], 150, 120));
  // The leader's epoch 4 ended at 50, before this log's start (100): everything here diverged.
  assert.deepEqual(offsetTruncationState({ leaderEpoch: 4, endOffset: 50 }, f), { offset: 50, truncationCompleted: true });
});

// ---- whole exchanges --------------------------------------------------------------------------------

test("truncation: KIP-101 scenario 1 — a follower restarted with a tail the new leader has: nothing lost", () => {
  // Both wrote m0, m1 in epoch 0; the follower's HW was still 1 when it restarted. Truncating
  // to the HW (pre-KIP-101) would drop m1, which the leader has and may have acknowledged.
  const leader = replica([[0, 0], [1, 2]], 2);
  const follower = replica([[0, 0]], 2, 1);
  assert.deepEqual(playOut(leader, follower), { offset: 2, rounds: 1 });
});

test("truncation: KIP-101 scenario 2 — double failure with unflushed tails: no divergence", () => {
  // A led epoch 0 with m0, m1 (m1 unflushed on B). Both crashed; B came back first as leader of
  // epoch 1 and wrote m1' at offset 1. A comes back as follower with its own m1 at offset 1.
  const b = replica([[0, 0], [1, 1]], 2);
  const a = replica([[0, 0]], 2, 1);
  assert.deepEqual(playOut(b, a), { offset: 1, rounds: 1 });
});

test("truncation: KIP-279 — both sides hold epochs the other lacks: walk back to the divergence", () => {
  // Leader: epoch 0 [0,5), 1 [5,12), 3 [12,20). Follower: epoch 0 [0,8), 2 [8,15). The two agree
  // on [0,5) only: the follower's 5..8 are epoch 0 entries the leader's epoch 0 never had.
  const leader = replica([[0, 0], [1, 5], [3, 12]], 20);
  const follower = replica([[0, 0], [2, 8]], 15, 3);
  assert.deepEqual(playOut(leader, follower), { offset: 5, rounds: 2 });
  assert.deepEqual(follower.cache.entries, [{ epoch: 0, start: 0 }]);
});

test("truncation: a leader with no epochs at all: the follower's high watermark", () => {
  const leader = replica([], 10);
  const follower = replica([[0, 0]], 12, 6);
  assert.deepEqual(playOut(leader, follower), { offset: 6, rounds: 1 });
});

test("truncation: a follower with an empty log or no epochs starts from its high watermark", () => {
  assert.deepEqual(playOut(replica([[0, 0]], 10), replica([], 0, 0)), { offset: 0, rounds: 1 });
  assert.deepEqual(playOut(replica([[0, 0]], 10), replica([], 7, 5)), { offset: 5, rounds: 1 });
});

test("truncation: an epoch the follower started but never wrote in is dropped with it", () => {
  // The follower became leader of epoch 2 at offset 10 and appended nothing; the leader is at 3.
  const leader = replica([[0, 0], [1, 6], [3, 10]], 14);
  const follower = replica([[0, 0], [1, 6], [2, 10]], 10, 8);
  assert.deepEqual(playOut(leader, follower), { offset: 10, rounds: 1 });
});

/** A small deterministic generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Two histories that share a prefix of `d` offsets and then differ, as real ones can: every epoch
 * had one leader, so after the divergence the two suffixes use different epochs, except that one
 * (not both) may carry on the prefix's last epoch; the leader's newest epoch is above all of the
 * follower's (it is the current leader), and may not have any entries yet.
 */
function histories(rand: () => number): { leader: Replica; follower: Replica; d: number } {
  const int = (n: number) => Math.floor(rand() * n);
  const prefix: [number, number][] = [];
  let epoch = 0;
  let offset = 0;
  const prefixEpochs = int(4);
  for (let i = 0; i < prefixEpochs; i++) {
    prefix.push([epoch, offset]);
    offset += 1 + int(5);
    epoch += 1 + int(2);
  }
  const d = offset;
  const lastPrefixEpoch = prefix.length > 0 ? prefix[prefix.length - 1][0] : null;
  // Epochs above the prefix, dealt out to one side or the other.
  const pool: number[] = [];
  for (let e = epoch, n = 1 + int(6); n > 0; e++, n--) pool.push(e);
  const leaderEpochs: number[] = [];
  const followerEpochs: number[] = [];
  for (const e of pool) (rand() < 0.5 ? leaderEpochs : followerEpochs).push(e);
  const top = Math.max(...pool) + 1;
  leaderEpochs.push(top);
  const build = (epochs: number[], carryOn: number, lastMayBeEmpty: boolean): Replica => {
    const entries = prefix.map(([e, s]) => [e, s] as [number, number]);
    let end = d + carryOn;
    epochs.forEach((e, i) => {
      entries.push([e, end]);
      end += lastMayBeEmpty && i === epochs.length - 1 ? int(4) : 1 + int(4);
    });
    return replica(entries, end);
  };
  // Which side (if any) carries on the prefix's last epoch past d.
  const carry = lastPrefixEpoch === null ? 0 : int(3);
  const leader = build(leaderEpochs, carry === 1 ? 1 + int(3) : 0, true);
  const follower = build(followerEpochs, carry === 2 ? 1 + int(3) : 0, false);
  follower.highWatermark = int(d + 1);
  return { leader, follower, d };
}

test("truncation: random histories end exactly at the divergence point, in at most one round per follower epoch", () => {
  const rand = rng(0x5eed);
  for (let i = 0; i < 5_000; i++) {
    const { leader, follower, d } = histories(rand);
    const before = JSON.stringify({ leader: leader.cache.entries, leo: leader.logEndOffset, follower: follower.cache.entries, fleo: follower.logEndOffset });
    const epochs = follower.cache.entries.length;
    const { offset, rounds } = playOut(leader, follower);
    const expected = Math.min(d, follower.logEndOffset);
    assert.equal(offset, d, `case ${i}: ${before}: expected ${expected}`);
    assert.ok(rounds <= Math.max(1, epochs), `case ${i}: ${rounds} rounds for ${epochs} epochs: ${before}`);
  }
});
