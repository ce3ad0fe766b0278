// LogSegments (Kafka's class of that name, here functions over a Log's ordered segment list):
// finding the segment that holds an offset (floorSegment), reading whole batches from the
// segments (Kafka's LocalLog.read), and counting the oldest segments a retention rule may delete.
// They read the list and never change it: the Log owns it and every change to it.
//
// Invariants they rely on (log.ts): the list is not empty, ordered by base offset, the segments do
// not overlap, and the last is the active one, whose next offset is the log end offset. A read
// returns whole batches only, none holding only offsets at or past maxOffset; retention never
// counts the active segment, nor one not wholly below the high watermark.

import { ErrorCode, KafkaError } from "../util/mod.ts";
import type { ReadResult } from "./log.ts";
import { trimToOffset } from "./log_loader.ts";
import type { LogSegment } from "./segment.ts";

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
