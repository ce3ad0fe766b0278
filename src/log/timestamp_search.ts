// Timestamp search over a log's segments: ListOffsets by timestamp (Kafka's
// fetchOffsetByTimestamp), the first record at or after the log start offset whose timestamp is
// >= the target. Segments are binary-searched by running max timestamp, then the one found is
// searched through its time index (LogSegment.findOffsetByTimestamp).
//
// Invariant: the running max of segment i is the largest max timestamp of segments 0..i, so it
// never decreases along the log (a segment's own max may be below an earlier one's), and the first
// segment whose running max reaches the target is the first whose own max does.

import type { LogSegment, TimestampOffset } from "./segment.ts";
import { maxTimestamp, NO_TIMESTAMP, type Timestamp } from "./timestamp.ts";

/**
 * Running max timestamps of the closed segments (all but the active one), cached: they change
 * only when the list of segments does (roll, retention, a cleaner swap, truncation), which the
 * cache checks by the list's length and its first and last closed segments. A change that keeps
 * those (a truncation cutting a closed segment, then a roll) must reset() it.
 */
export class RunningMaxTimestamps {
  private cache: { count: number; first: LogSegment; lastClosed: LogSegment | undefined; values: Timestamp[] } | null = null;

  values(segments: readonly LogSegment[]): Timestamp[] {
    const n = segments.length;
    const c = this.cache;
    if (c !== null && c.count === n && c.first === segments[0] && c.lastClosed === segments[n - 2]) return c.values;
    const values: Timestamp[] = new Array(Math.max(0, n - 1));
    let max: Timestamp = NO_TIMESTAMP;
    for (let i = 0; i < n - 1; i++) values[i] = max = maxTimestamp(max, segments[i].maxTimestampMs);
    this.cache = { count: n, first: segments[0], lastClosed: segments[n - 2], values };
    return values;
  }

  reset(): void {
    this.cache = null;
  }
}

/** The first record at or after logStartOffset with a timestamp >= timestampMs, or null. */
export function findOffsetForTimestamp(
  segments: readonly LogSegment[],
  runningMax: RunningMaxTimestamps,
  logStartOffset: number,
  timestampMs: Timestamp,
): TimestampOffset | null {
  const n = segments.length;
  const closed = runningMax.values(segments);
  const maxUpTo = (i: number) => (i < n - 1 ? closed[i] : maxTimestamp(n > 1 ? closed[n - 2] : NO_TIMESTAMP, segments[n - 1].maxTimestampMs));
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (maxUpTo(mid) >= timestampMs) hi = mid;
    else lo = mid + 1;
  }
  // Later segments only when every match in this one lies below the log start offset.
  for (let i = lo; i < n; i++) {
    const seg = segments[i];
    if (seg.nextOffset <= logStartOffset) continue;
    const found = seg.findOffsetByTimestamp(timestampMs, logStartOffset);
    if (found !== null) return found;
  }
  return null;
}
