// Where a follower truncates its log when it starts following a leader (KIP-101, KIP-279), as
// Kafka's AbstractFetcherThread.getOffsetTruncationState decides it. Pure: the caller fetched the
// leader's answer (OffsetForLeaderEpoch for the follower's latest epoch) and passes the local
// leader-epoch cache's lookup.
//
// The protocol: the follower asks for the end offset of its latest epoch E. The leader answers
// (E', endOffset) with E' the largest epoch <= E it knows, and endOffset where E' ended in its
// log (the start of its next epoch, or its log end offset). Then:
// - endOffset -1 (the leader knows no epoch <= E): truncate to the high watermark — the only
//   offset both are sure to share — and fetch.
// - E' -1 with an endOffset (a leader that does not answer epochs, OffsetForLeaderEpoch v0):
//   truncate to min(endOffset, LEO) and fetch.
// - The follower has E' too (its end offset lookup for E' answers E'): the logs agree up to
//   min(leader's end, follower's end) of E'; truncate there (never past LEO) and fetch.
// - The follower does not have E' (its lookup answers a smaller epoch F and F's end offset):
//   everything from F's end on is from epochs the leader never saw; truncate to min(F's end, LEO)
//   and ask again, now with the follower's new latest epoch, which is lower (KIP-279's walk back:
//   a single answer is not enough when both sides hold epochs the other lacks).
// - The follower has no epoch <= E' at all: truncate to min(endOffset, LEO) and fetch.
//
// Invariants: the offset is never above the follower's log end offset; when epochs are known
// on both sides the high watermark is never the answer (KIP-101: the HW can be ahead of what a
// leader that lost its tail has). Offsets below the log start offset are returned as they are:
// the caller then empties the log and starts it at that offset (what Kafka's truncateTo does when
// the target precedes the first segment).

/** OffsetForLeaderEpoch's "no such offset" (Kafka's UNDEFINED_EPOCH_OFFSET). */
export const UNDEFINED_EPOCH_OFFSET = -1;
/** OffsetForLeaderEpoch's "no such epoch" (Kafka's UNDEFINED_EPOCH). */
export const UNDEFINED_EPOCH = -1;

export interface EpochEndOffset {
  leaderEpoch: number;
  endOffset: number;
}

export interface OffsetTruncationState {
  /** Truncate the log to this offset (drop offsets >= it). */
  offset: number;
  /** False when the follower must ask the leader again with its (new, lower) latest epoch. */
  truncationCompleted: boolean;
}

export interface FollowerEpochView {
  logEndOffset: number;
  highWatermark: number;
  /** The local leader-epoch cache's end offset for an epoch (Kafka's endOffsetForEpoch); null if none. */
  endOffsetForEpoch(epoch: number): EpochEndOffset | null;
}

/** The truncation point for one answer from the leader (see the file comment for the rules). */
export function offsetTruncationState(leader: EpochEndOffset, follower: FollowerEpochView): OffsetTruncationState {
  const leo = follower.logEndOffset;
  if (leader.endOffset === UNDEFINED_EPOCH_OFFSET) {
    return { offset: Math.min(follower.highWatermark, leo), truncationCompleted: true };
  }
  if (leader.leaderEpoch === UNDEFINED_EPOCH) {
    return { offset: Math.min(leader.endOffset, leo), truncationCompleted: true };
  }
  const local = follower.endOffsetForEpoch(leader.leaderEpoch);
  if (local === null) {
    // The follower tracked no epoch this old: the leader's offset is the best it has.
    return { offset: Math.min(leader.endOffset, leo), truncationCompleted: true };
  }
  if (local.leaderEpoch !== leader.leaderEpoch) {
    return { offset: Math.min(local.endOffset, leo), truncationCompleted: false };
  }
  return { offset: Math.min(leader.endOffset, local.endOffset, leo), truncationCompleted: true };
}

/** A partition whose local leader-epoch cache is empty truncates to its high watermark (Kafka's truncateToHighWatermark). */
export function truncationWithoutEpochs(follower: { logEndOffset: number; highWatermark: number }): OffsetTruncationState {
  return { offset: Math.min(follower.highWatermark, follower.logEndOffset), truncationCompleted: true };
}
