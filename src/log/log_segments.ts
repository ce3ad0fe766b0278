// LogSegments (Kafka's class of that name): a log's segments, ordered by base offset, with the
// floor/higher lookups, additions, removals and sizes over them; and functions over such a list:
// reading whole batches from it (Kafka's LocalLog.read) and counting the oldest segments a
// retention rule may delete. The Log owns its LogSegments and decides every change to it.
//
// Invariants (checked on every change): the list is not empty once the log is open, ordered by
// base offset, the segments do not overlap, and the last is the active one, whose next offset is
// the log end offset. A read returns whole batches only, none holding only offsets at or past
// maxOffset; retention never counts the active segment, nor one not wholly below the high
// watermark.

import { assert, ErrorCode, KafkaError } from "../util/mod.ts";
import type { ReadResult } from "./log.ts";
import { trimToOffset } from "./log_loader.ts";
import type { LogSegment } from "./segment.ts";

export class LogSegments {
  private readonly segments: LogSegment[];

  constructor(segments: LogSegment[]) {
    assert(segments.length > 0, "a log has an active segment");
    this.segments = segments;
  }

  /** Oldest first; the last is the active one. A view: it changes with the collection. */
  get all(): readonly LogSegment[] {
    return this.segments;
  }
  get count(): number {
    return this.segments.length;
  }
  get first(): LogSegment {
    return this.segments[0];
  }
  get active(): LogSegment {
    return this.segments[this.segments.length - 1];
  }
  /** Bytes of every segment's batches. */
  get sizeBytes(): number {
    let total = 0;
    for (const s of this.segments) total += s.sizeBytes;
    return total;
  }
  get baseOffsets(): number[] {
    return this.segments.map((s) => s.baseOffset);
  }
  /** Position of the last segment whose base offset is <= offset (Kafka's floorSegment). */
  floorIndex(offset: number): number {
    return segmentIndexFor(this.segments, offset);
  }
  /** The segment after `seg`, or null when seg is the active one or not in the list. */
  higherSegment(seg: LogSegment): LogSegment | null {
    const at = this.segments.indexOf(seg);
    return at < 0 || at + 1 >= this.segments.length ? null : this.segments[at + 1];
  }
  indexOf(seg: LogSegment): number {
    return this.segments.indexOf(seg);
  }
  at(i: number): LogSegment {
    return this.segments[i];
  }

  /** Appends a new active segment, which must start at or past the log end offset. */
  add(seg: LogSegment): void {
    const last = this.segments.length === 0 ? null : this.active;
    assert(last === null || last.nextOffset <= seg.baseOffset, "segments are ordered and do not overlap");
    this.segments.push(seg);
  }
  /** Removes and returns the `n` oldest segments; at least one stays. */
  removeOldest(n: number): LogSegment[] {
    assert(n < this.segments.length, "the active segment is never removed from the oldest end");
    return this.segments.splice(0, n);
  }
  /** Removes and returns every segment after position `at`. */
  removeAfter(at: number): LogSegment[] {
    return this.segments.splice(at + 1);
  }
  /** Puts back segments removeAfter took, when what removed them did not happen. */
  restoreAfter(segments: LogSegment[]): void {
    const from = this.segments.length - 1;
    this.segments.push(...segments);
    this.checkOrder(from);
  }
  /** Removes and returns every segment; the caller adds the new active one at once. */
  removeAll(): LogSegment[] {
    return this.segments.splice(0);
  }
  /** Replaces the `count` segments from position `at` with `seg` (the cleaner's swap). */
  replace(at: number, count: number, seg: LogSegment): void {
    this.segments.splice(at, count, seg);
    this.checkOrder(Math.max(0, at - 1));
  }

  private checkOrder(from: number): void {
    for (let i = Math.max(from, 0); i + 1 < this.segments.length; i++) {
      assert(this.segments[i].nextOffset <= this.segments[i + 1].baseOffset, "segments are ordered and do not overlap");
    }
  }
}

/** Index of the last segment whose base offset is <= offset. */
export function segmentIndexFor(segments: readonly LogSegment[], offset: number): number {
  let lo = 0;
  let hi = segments.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (segments[mid].baseOffset <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Whole batches from fetchOffset, at most maxBytes (but at least one batch when minOneBatch), none
 * starting at or past maxOffset. Throws OFFSET_OUT_OF_RANGE outside [logStartOffset, logEndOffset];
 * `tp` names the partition in that error.
 */
export function readSegments(
  segments: readonly LogSegment[],
  logStartOffset: number,
  tp: string,
  fetchOffset: number,
  maxBytes: number,
  minOneBatch: boolean,
  maxOffset: number,
): ReadResult {
  const logEndOffset = segments[segments.length - 1].nextOffset;
  if (fetchOffset < logStartOffset || fetchOffset > logEndOffset) {
    throw new KafkaError(
      ErrorCode.OFFSET_OUT_OF_RANGE,
      `offset ${fetchOffset} is outside [${logStartOffset}, ${logEndOffset}] of ${tp}`,
    );
  }
  const empty = { records: new Uint8Array(0), logEndOffset, logStartOffset };
  if (fetchOffset === logEndOffset) return empty;
  for (let i = segmentIndexFor(segments, fetchOffset); i < segments.length; i++) {
    const seg = segments[i];
    const pos = seg.positionOf(fetchOffset);
    if (pos < 0) continue; // nothing at or after the offset here: the next segment has it
    const records = trimToOffset(seg.read(pos, maxBytes, minOneBatch), maxOffset);
    return { records, logEndOffset, logStartOffset };
  }
  return empty;
}

/**
 * How many segments, from the oldest on, `breached` holds for (called in order, once each, until
 * it does not), stopping at the active segment and at a segment not wholly below highWatermark
 * (consumers may not have seen it; Kafka's rule).
 */
export function breachedSegmentCount(
  segments: readonly LogSegment[],
  highWatermark: number,
  breached: (seg: LogSegment, next: LogSegment) => boolean,
): number {
  let n = 0;
  while (n + 1 < segments.length) {
    const seg = segments[n];
    const next = segments[n + 1];
    if (highWatermark < next.baseOffset || !breached(seg, next)) break;
    n++;
  }
  return n;
}
