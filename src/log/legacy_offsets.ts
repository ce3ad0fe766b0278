// ListOffsets v0's answer (Kafka's UnifiedLog.legacyFetchOffsetsBefore): offsets from the
// segments' base offsets and their files' last-modified times, not from record timestamps, as
// pre-0.10 brokers answered. Each segment stands for (max(baseOffset, logStartOffset),
// lastModified); a non-empty active segment adds (logEndOffset, now). Latest (-1) starts at the
// last entry, earliest (-2, and -4) at the first, a time at the last entry modified at or before
// it; up to maxNumOffsets entries are taken from there towards the start, newest first.

import type { Log } from "./log.ts";
import type { Timestamp } from "./timestamp.ts";

const LATEST = -1;
const EARLIEST = -2;
const EARLIEST_LOCAL = -4;

/** Up to maxNumOffsets offsets before timestamp, in descending order (maxNumOffsets >= 0). */
export function legacyOffsetsBefore(log: Log, timestamp: Timestamp, maxNumOffsets: number, nowMs: number): number[] {
  const segments = log.logSegments;
  const entries = segments.map((s) => ({ offset: Math.max(s.baseOffset, log.logStartOffset), modifiedMs: s.lastModifiedMs() }));
  if (segments[segments.length - 1].sizeBytes > 0) entries.push({ offset: log.logEndOffset, modifiedMs: nowMs });
  let start: number;
  if (timestamp === LATEST) start = entries.length - 1;
  else if (timestamp === EARLIEST || timestamp === EARLIEST_LOCAL) start = 0;
  else {
    start = entries.length - 1;
    while (start >= 0 && entries[start].modifiedMs > timestamp) start--;
  }
  const out: number[] = [];
  for (let i = start; i >= 0 && out.length < maxNumOffsets; i--) out.push(entries[i].offset);
  return out.sort((a, b) => b - a);
}

/**
 * What a consumer (replica id -1) is told: offsets past the high watermark are replaced by the
 * high watermark itself (Kafka's Partition.legacyFetchOffsetsForTimestamp).
 */
export function clampedToHighWatermark(offsets: number[], highWatermark: number): number[] {
  // offsets are in descending order: those past the high watermark lead.
  if (!offsets.some((o) => o > highWatermark)) return offsets;
  return [highWatermark, ...offsets.filter((o) => o <= highWatermark)];
}
