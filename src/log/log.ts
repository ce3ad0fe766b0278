// Log: one partition's replica on disk, `<log.dir>/<topic>-<partition>/`, a list of LogSegments
// ordered by base offset; only the last (active) one is appended to.
//
// Invariants:
// - logStartOffset <= every readable offset < logEndOffset; logEndOffset is the active segment's
//   nextOffset.
// - Segments do not overlap: segment i+1's base offset >= segment i's next offset.
// - A roll creates a segment whose base offset is the log end offset, when the active one would
//   pass segment.bytes, segment.ms, or its index is full.
// - Appends are synchronous (see platform/types.ts), so the log end offset seen by a handler is
//   the one its append produced.

import type { Platform } from "../platform/mod.ts";
import { assignOffsets, BatchField, batchSizeAt, view } from "../protocol/mod.ts";
import { assert, ErrorCode, KafkaError } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";
import { LogSegment, type SegmentConfig } from "./segment.ts";

export interface LogConfig extends SegmentConfig {
  segmentBytes: number;
  segmentMs: number;
}

export interface AppendInfo {
  firstOffset: number;
  lastOffset: number;
  logAppendTimeMs: number;
}

export interface ReadResult {
  records: Uint8Array;
  /** The log end offset when the read ran. */
  logEndOffset: number;
  logStartOffset: number;
}

export class Log {
  private segments: LogSegment[];

  private constructor(
    private readonly platform: Platform,
    readonly dir: string,
    readonly topic: string,
    readonly partition: number,
    public config: LogConfig,
    segments: LogSegment[],
    private readonly logger: Logger,
  ) {
    assert(segments.length > 0, "a log has an active segment");
    this.segments = segments;
  }

  /** Opens the log in dir (creating it when missing), recovering the active segment's tail. */
  static open(
    platform: Platform,
    dir: string,
    topic: string,
    partition: number,
    config: LogConfig,
    logger: Logger,
  ): Log {
    platform.fs.mkdirp(dir);
    const bases = platform.fs.readdir(dir)
      .filter((n) => /^\d{20}\.log$/.test(n))
      .map((n) => Number(n.slice(0, 20)))
      .sort((a, b) => a - b);
    const log = logger.child({ topic, partition });
    const segments: LogSegment[] = [];
    for (const base of bases) {
      const { segment, truncatedBytes } = LogSegment.open(platform, dir, base, config);
      if (truncatedBytes > 0) {
        log.warn({ segment: segment.logPath, truncatedBytes, nextOffset: segment.nextOffset }, "truncated torn tail of segment");
      }
      segments.push(segment);
    }
    if (segments.length === 0) segments.push(LogSegment.create(platform, dir, 0, config));
    return new Log(platform, dir, topic, partition, config, segments, log);
  }

  get activeSegment(): LogSegment {
    return this.segments[this.segments.length - 1];
  }
  get logEndOffset(): number {
    return this.activeSegment.nextOffset;
  }
  get logStartOffset(): number {
    return this.segments[0].baseOffset;
  }
  get sizeBytes(): number {
    let total = 0;
    for (const s of this.segments) total += s.sizeBytes;
    return total;
  }
  get segmentCount(): number {
    return this.segments.length;
  }

  /**
   * Appends a validated record set (see record_batch.validateBatches) as the leader: assigns
   * offsets from the log end offset and stamps the leader epoch, then writes the bytes.
   */
  appendAsLeader(records: Uint8Array, offsetCount: number, leaderEpoch: number): AppendInfo {
    this.maybeRoll(records.length, offsetCount);
    const firstOffset = this.logEndOffset;
    const next = assignOffsets(records, firstOffset, leaderEpoch);
    assert(next === firstOffset + offsetCount, "assigned offsets match the validated count");
    this.activeSegment.append(records, firstOffset, next - 1);
    return { firstOffset, lastOffset: next - 1, logAppendTimeMs: this.platform.clock.nowMs() };
  }

  private maybeRoll(incomingBytes: number, offsetCount: number): void {
    const seg = this.activeSegment;
    if (seg.sizeBytes === 0) return;
    const full = seg.sizeBytes + incomingBytes > this.config.segmentBytes;
    const old = this.platform.clock.nowMs() - seg.createdMs > this.config.segmentMs;
    // Index entries hold offsets relative to the base as int32.
    const offsetOverflow = this.logEndOffset + offsetCount - seg.baseOffset > 0x7fffffff;
    if (full || old || offsetOverflow || seg.index.isFull) this.roll();
  }

  roll(): void {
    const base = this.logEndOffset;
    this.activeSegment.flush();
    this.segments.push(LogSegment.create(this.platform, this.dir, base, this.config));
    this.logger.info({ baseOffset: base }, "rolled new log segment");
  }

  /**
   * Reads whole batches from fetchOffset, at most maxBytes (but at least one batch when
   * minOneBatch). Throws OFFSET_OUT_OF_RANGE outside [logStartOffset, logEndOffset].
   */
  read(fetchOffset: number, maxBytes: number, minOneBatch: boolean, maxOffset = this.logEndOffset): ReadResult {
    const logEndOffset = this.logEndOffset;
    const logStartOffset = this.logStartOffset;
    if (fetchOffset < logStartOffset || fetchOffset > logEndOffset) {
      throw new KafkaError(
        ErrorCode.OFFSET_OUT_OF_RANGE,
        `offset ${fetchOffset} is outside [${logStartOffset}, ${logEndOffset}] of ${this.topic}-${this.partition}`,
      );
    }
    const empty = { records: new Uint8Array(0), logEndOffset, logStartOffset };
    if (fetchOffset === logEndOffset) return empty;
    for (let i = this.segmentIndexFor(fetchOffset); i < this.segments.length; i++) {
      const seg = this.segments[i];
      const pos = seg.positionOf(fetchOffset);
      if (pos < 0) continue; // nothing at or after the offset here: the next segment has it
      const records = trimToOffset(seg.read(pos, maxBytes, minOneBatch), maxOffset);
      return { records, logEndOffset, logStartOffset };
    }
    return empty;
  }

  /**
   * ListOffsets by timestamp: the first offset whose batch has a timestamp >= timestampMs, or null
   * when none has. Returns the batch's base offset and max timestamp.
   */
  offsetForTimestamp(timestampMs: number): { offset: number; timestamp: number } | null {
    for (const seg of this.segments) {
      const h = seg.findByTimestamp(timestampMs);
      if (h !== null) return { offset: Math.max(h.baseOffset, this.logStartOffset), timestamp: h.maxTimestamp };
    }
    return null;
  }

  /** The batch with the largest timestamp (ListOffsets -3, KIP-734), or null for an empty log. */
  maxTimestampOffset(): { offset: number; timestamp: number } | null {
    let best: { offset: number; timestamp: number } | null = null;
    for (const seg of this.segments) {
      const h = seg.maxTimestampBatch();
      if (h !== null && (best === null || h.maxTimestamp > best.timestamp)) {
        best = { offset: h.lastOffset, timestamp: h.maxTimestamp };
      }
    }
    return best;
  }

  /** Index of the last segment whose base offset is <= offset. */
  private segmentIndexFor(offset: number): number {
    let lo = 0;
    let hi = this.segments.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.segments[mid].baseOffset <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  flush(): void {
    this.activeSegment.flush();
  }

  close(): void {
    for (const s of this.segments) s.close();
  }

  /** Closes the log and deletes its directory. */
  delete(): void {
    this.close();
    this.platform.fs.remove(this.dir);
  }
}

/** The prefix of whole batches that start below maxOffset (the high watermark, for consumers). */
function trimToOffset(records: Uint8Array, maxOffset: number): Uint8Array {
  const dv = view(records);
  let pos = 0;
  while (pos < records.length && Number(dv.getBigInt64(pos + BatchField.baseOffset)) < maxOffset) {
    pos += batchSizeAt(dv, pos);
  }
  return pos === records.length ? records : records.subarray(0, pos);
}
