// Log: one partition's replica on disk, `<log.dir>/<topic>-<partition>/`, a list of LogSegments
// ordered by base offset; only the last (active) one is appended to.
//
// Invariants:
// - first segment's base offset <= logStartOffset <= highWatermark <= logEndOffset; readable
//   offsets are [logStartOffset, logEndOffset); logEndOffset is the active segment's nextOffset.
// - logStartOffset only moves forward: by DeleteRecords, or to the first remaining segment's base
//   when retention deletes segments. It is checkpointed per log dir (log-start-offset-checkpoint).
// - recoveryPoint <= logEndOffset: every offset below it is fsynced. It moves forward at each
//   flush (flush.messages, flush.ms, a roll, a clean shutdown) and is checkpointed per log dir
//   (recovery-point-offset-checkpoint). After an unclean stop, the segment holding it and every
//   later one is scanned and cut at the first invalid batch (see open and LogSegment.recover).
// - Segments do not overlap: segment i+1's base offset >= segment i's next offset.
// - A roll creates a segment whose base offset is the log end offset, when the active one would
//   pass segment.bytes, segment.ms, or either of its indexes is full; the rolled segment gets its
//   closing time-index entry (its max timestamp) and is flushed.
// - The cleaner (cleaner.ts) rewrites closed segments only, keeping every retained batch's offsets,
//   and swaps the result in with replaceSegments (crash-safe renames, swap.ts).
// - The active (last) segment is never deleted. Retention deletes from the oldest segment on,
//   only segments wholly below the high watermark; their files are renamed `.deleted` and removed
//   file.delete.delay.ms later.
// - Appends are synchronous (see platform/types.ts), so the log end offset seen by a handler is
//   the one its append produced.
// - An I/O error from any of its file operations (append, roll, read, flush, retention) becomes a
//   KafkaStorageError for its log dir, and ioErrorHandler (the LogManager) is told first, which
//   takes the whole dir offline and closes this log with closeForFailure(); from then on every
//   operation throws KafkaStorageError. Errors that are not I/O errors are bugs and pass unchanged.

import type { Platform, Timer } from "../platform/mod.ts";
import { assignOffsets, BatchField, batchSizeAt, view } from "../protocol/mod.ts";
import { assert, ErrorCode, KafkaError, schedulerIntervalMsMax } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";
import { isIoError, KafkaStorageError, logDirOf, type LogDirFailureHandler } from "./log_dir_failure.ts";
import { DeletedFileSuffix, LogSegment, type SegmentConfig, segmentFileName, type TimestampOffset } from "./segment.ts";
import { completeInterruptedSwaps, SwapFileSuffix } from "./swap.ts";

export interface LogConfig extends SegmentConfig {
  segmentBytes: number;
  segmentMs: number;
  /** retention.ms: segments whose newest batch is older are deleted; -1: no time limit. */
  retentionMs?: number;
  /** retention.bytes: oldest segments are deleted while the log is larger; -1: no size limit. */
  retentionBytes?: number;
  /** flush.messages: fsync once this many messages are unflushed. */
  flushMessages?: number;
  /** flush.ms: the flush scheduler fsyncs a log not flushed for this long. */
  flushMs?: number;
  /** file.delete.delay.ms: how long a deleted segment's `.deleted` files remain. */
  fileDeleteDelayMs?: number;
  /** cleanup.policy: time and size retention apply only when it includes "delete"; the cleaner only when "compact". */
  cleanupPolicy?: string;
  /** delete.retention.ms: how long the cleaner keeps a tombstone after it first saw it. */
  deleteRetentionMs?: number;
  /** min.cleanable.dirty.ratio: the share of the log past the cleaner checkpoint that makes it worth cleaning. */
  minCleanableDirtyRatio?: number;
  /** min.compaction.lag.ms: a segment with a record younger than this is not cleaned. */
  minCompactionLagMs?: number;
  /** max.compaction.lag.ms: a dirty segment older than this is cleaned whatever the dirty ratio. */
  maxCompactionLagMs?: number;
}

const DAY_MS = 24 * 3_600_000;

/** Kafka's defaults for every LogConfig field; a config given without a field takes these. */
export const logConfigDefaults: Required<LogConfig> = {
  segmentBytes: 1 << 30,
  segmentMs: 7 * DAY_MS,
  indexIntervalBytes: 4096,
  segmentIndexBytes: 10 << 20,
  retentionMs: 7 * DAY_MS,
  retentionBytes: -1,
  flushMessages: Number.MAX_SAFE_INTEGER,
  flushMs: Number.MAX_SAFE_INTEGER,
  fileDeleteDelayMs: 60_000,
  cleanupPolicy: "delete",
  deleteRetentionMs: DAY_MS,
  minCleanableDirtyRatio: 0.5,
  minCompactionLagMs: 0,
  maxCompactionLagMs: Number.MAX_SAFE_INTEGER,
};

/** What the log dir's checkpoints say about this log, and whether the dir was shut down cleanly. */
export interface LogLoadState {
  hadCleanShutdown: boolean;
  /** From recovery-point-offset-checkpoint; 0 (recover everything) when absent. */
  recoveryPoint: number;
  /** From log-start-offset-checkpoint; 0 when absent (then the first segment's base counts). */
  logStartOffset: number;
  /** From replication-offset-checkpoint; the log start offset when absent. */
  highWatermark: number | null;
}

const cleanLoad: LogLoadState = { hadCleanShutdown: true, recoveryPoint: Number.MAX_SAFE_INTEGER, logStartOffset: 0, highWatermark: null };

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
  private _config: Required<LogConfig>;
  private _logStartOffset: number;
  private _recoveryPoint: number;
  private _highWatermark: number;
  /** Wall-clock time of the last flush (or of the load), for flush.ms. */
  lastFlushTimeMs: number;
  /** Deleted segments waiting out file.delete.delay.ms, with the timer that removes them. */
  private pendingRemoval = new Map<LogSegment, Timer>();
  /** Told when a file operation of this log fails with an I/O error (set by the LogManager). */
  ioErrorHandler: LogDirFailureHandler | null = null;
  /** Set by closeForFailure: the log dir failed and the files are closed. */
  private offline = false;
  /** Set by close(). */
  private closed = false;
  /** See closedRunningMaxTimestamps. */
  private runningMaxCache: { count: number; first: LogSegment; lastClosed: LogSegment | undefined; values: Float64Array } | null = null;

  private constructor(
    private readonly platform: Platform,
    readonly dir: string,
    readonly topic: string,
    readonly partition: number,
    config: LogConfig,
    segments: LogSegment[],
    private readonly logger: Logger,
    state: LogLoadState,
  ) {
    assert(segments.length > 0, "a log has an active segment");
    this.segments = segments;
    this._config = { ...logConfigDefaults, ...config };
    this._logStartOffset = Math.max(state.logStartOffset, segments[0].baseOffset);
    assert(this._logStartOffset <= this.logEndOffset, "log start offset <= log end offset");
    // A clean shutdown flushed everything; otherwise what was recovered is still unflushed.
    const recoveryPoint = state.hadCleanShutdown ? this.logEndOffset : Math.min(state.recoveryPoint, this.logEndOffset);
    this._recoveryPoint = Math.max(this._logStartOffset, recoveryPoint);
    this._highWatermark = Math.min(Math.max(state.highWatermark ?? this._logStartOffset, this._logStartOffset), this.logEndOffset);
    this.lastFlushTimeMs = platform.clock.nowMs();
  }

  /**
   * Opens the log in dir (creating it when missing). `state` comes from the log dir's
   * checkpoints; without it the log is treated as cleanly shut down (only torn tails are cut).
   * After an unclean shutdown, the segment holding the recovery point and every later one are
   * scanned whole (Kafka's LogLoader.recoverLog); a segment without an index is always scanned.
   */
  static open(
    platform: Platform,
    dir: string,
    topic: string,
    partition: number,
    config: LogConfig,
    logger: Logger,
    state: LogLoadState = cleanLoad,
  ): Log {
    platform.fs.mkdirp(dir);
    const log = logger.child({ topic, partition });
    const bases = listSegmentFiles(platform, dir, log);
    const segments = loadSegments(platform, dir, bases, { ...logConfigDefaults, ...config }, state, log);
    if (segments.length > 0 && segments[segments.length - 1].nextOffset < state.logStartOffset) {
      // Kafka's rule: a log ending below its checkpointed start offset (the start was moved past
      // the end, then the tail was lost) starts over, empty, at that start offset.
      log.warn({ logEndOffset: segments[segments.length - 1].nextOffset, logStartOffset: state.logStartOffset }, "log ends below its log start offset; deleting all segments");
      for (const seg of segments.splice(0)) seg.remove();
    }
    if (segments.length === 0) segments.push(LogSegment.create(platform, dir, state.logStartOffset, config));
    return new Log(platform, dir, topic, partition, config, segments, log, state);
  }

  get config(): Required<LogConfig> {
    return this._config;
  }
  /** A config missing fields (one built before they existed) takes Kafka's defaults for them. */
  set config(config: LogConfig) {
    this._config = { ...logConfigDefaults, ...config };
  }

  /** The log dir holding this log (`log.dirs` entry). */
  get logDir(): string {
    return logDirOf(this.dir);
  }
  get isOffline(): boolean {
    return this.offline;
  }

  /** The segments, oldest first; the last is the active one. Read-only: the cleaner's view. */
  get logSegments(): readonly LogSegment[] {
    return this.segments;
  }
  /** Set by close() (and closeForFailure): the cleaner must not swap segments in any more. */
  get isClosed(): boolean {
    return this.closed || this.isOffline;
  }

  get activeSegment(): LogSegment {
    return this.segments[this.segments.length - 1];
  }
  get logEndOffset(): number {
    return this.activeSegment.nextOffset;
  }
  get logStartOffset(): number {
    return this._logStartOffset;
  }
  get recoveryPoint(): number {
    return this._recoveryPoint;
  }
  get highWatermark(): number {
    return this._highWatermark;
  }
  get sizeBytes(): number {
    let total = 0;
    for (const s of this.segments) total += s.sizeBytes;
    return total;
  }
  get segmentCount(): number {
    return this.segments.length;
  }
  /** Base offsets of the live segments, oldest first. */
  get segmentBaseOffsets(): number[] {
    return this.segments.map((s) => s.baseOffset);
  }

  /** Sets the high watermark, kept within [logStartOffset, logEndOffset] (the Partition owns it). */
  updateHighWatermark(offset: number): number {
    this._highWatermark = Math.min(Math.max(offset, this._logStartOffset), this.logEndOffset);
    return this._highWatermark;
  }

  /**
   * Moves the log start offset forward (DeleteRecords; Kafka's maybeIncrementLogStartOffset).
   * Offsets below it stop being readable at once; the segments wholly below it are deleted by
   * the next retention check. Throws OFFSET_OUT_OF_RANGE past the high watermark.
   */
  maybeIncrementLogStartOffset(offset: number, reason: string): boolean {
    if (offset > this._highWatermark) {
      throw new KafkaError(
        ErrorCode.OFFSET_OUT_OF_RANGE,
        `cannot move the log start offset of ${this.topic}-${this.partition} to ${offset}, past the high watermark ${this._highWatermark}`,
      );
    }
    if (offset <= this._logStartOffset) return false;
    this._logStartOffset = offset;
    if (this._recoveryPoint < offset) this._recoveryPoint = offset;
    this.logger.info({ logStartOffset: offset, reason }, "incremented log start offset");
    return true;
  }

  /**
   * Appends a validated record set (see record_batch.validateBatches) as the leader: assigns
   * offsets from the log end offset and stamps the leader epoch, then writes the bytes.
   */
  appendAsLeader(records: Uint8Array, offsetCount: number, leaderEpoch: number): AppendInfo {
    this.checkOnline();
    try {
      this.maybeRoll(records.length, offsetCount);
      const firstOffset = this.logEndOffset;
      const next = assignOffsets(records, firstOffset, leaderEpoch);
      assert(next === firstOffset + offsetCount, "assigned offsets match the validated count");
      this.activeSegment.append(records, firstOffset, next - 1);
      // Kafka's flush.messages: fsync once that many offsets are above the recovery point.
      if (this.logEndOffset - this._recoveryPoint >= this._config.flushMessages) this.flush();
      return { firstOffset, lastOffset: next - 1, logAppendTimeMs: this.platform.clock.nowMs() };
    } catch (e) {
      throw this.storageError("append", e);
    }
  }

  private maybeRoll(incomingBytes: number, offsetCount: number): void {
    const seg = this.activeSegment;
    if (seg.sizeBytes === 0) return;
    const full = seg.sizeBytes + incomingBytes > this.config.segmentBytes;
    const old = this.platform.clock.nowMs() - seg.createdMs > this.config.segmentMs;
    // Index entries hold offsets relative to the base as int32.
    const offsetOverflow = this.logEndOffset + offsetCount - seg.baseOffset > 0x7fffffff;
    if (full || old || offsetOverflow || seg.index.isFull || seg.timeIndex.isFull) this.roll();
  }

  /**
   * Starts a new active segment at the log end offset. The old one is complete, so it is flushed
   * and the recovery point moves to the new base (Kafka flushes it from its scheduler; strand's
   * file calls are synchronous, so here).
   */
  roll(): void {
    this.checkOnline();
    try {
      const base = this.logEndOffset;
      this.activeSegment.onBecomeInactive();
      this.flush(base);
      this.segments.push(LogSegment.create(this.platform, this.dir, base, this._config));
      this.logger.info({ baseOffset: base }, "rolled new log segment");
    } catch (e) {
      throw this.storageError("roll", e);
    }
  }

  /**
   * Reads whole batches from fetchOffset, at most maxBytes (but at least one batch when
   * minOneBatch). Throws OFFSET_OUT_OF_RANGE outside [logStartOffset, logEndOffset].
   */
  read(fetchOffset: number, maxBytes: number, minOneBatch: boolean, maxOffset = this.logEndOffset): ReadResult {
    this.checkOnline();
    try {
      return this.readSegments(fetchOffset, maxBytes, minOneBatch, maxOffset);
    } catch (e) {
      throw this.storageError("read", e);
    }
  }

  private readSegments(fetchOffset: number, maxBytes: number, minOneBatch: boolean, maxOffset: number): ReadResult {
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
   * ListOffsets by timestamp (Kafka's fetchOffsetByTimestamp): the first record at or after the
   * log start offset whose timestamp is >= timestampMs, with that timestamp, or null when none
   * is. Segments are binary-searched by running max timestamp, then the one found is searched
   * through its time index (LogSegment.findOffsetByTimestamp).
   */
  offsetForTimestamp(timestampMs: number): TimestampOffset | null {
    this.checkOnline();
    try {
      return this.findOffsetForTimestamp(timestampMs);
    } catch (e) {
      throw this.storageError("timestamp lookup", e);
    }
  }

  private findOffsetForTimestamp(timestampMs: number): TimestampOffset | null {
    // The first segment whose running max timestamp reaches timestampMs is the first whose own
    // max does; a segment's own max may be below an earlier one's, the running max cannot.
    const n = this.segments.length;
    const closed = this.closedRunningMaxTimestamps();
    const runningMax = (i: number) => (i < n - 1 ? closed[i] : Math.max(n > 1 ? closed[n - 2] : -1, this.activeSegment.maxTimestampMs));
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (runningMax(mid) >= timestampMs) hi = mid;
      else lo = mid + 1;
    }
    // Later segments only when every match in this one lies below the log start offset.
    for (let i = lo; i < n; i++) {
      const seg = this.segments[i];
      if (seg.nextOffset <= this._logStartOffset) continue;
      const found = seg.findOffsetByTimestamp(timestampMs, this._logStartOffset);
      if (found !== null) return found;
    }
    return null;
  }

  /**
   * Running max timestamps of the closed segments (all but the active one), cached: they change
   * only when the list of segments does (roll, retention, truncation), which the cache checks by
   * the list's length and its first and last closed segments.
   */
  private closedRunningMaxTimestamps(): Float64Array {
    const n = this.segments.length;
    const c = this.runningMaxCache;
    if (c !== null && c.count === n && c.first === this.segments[0] && c.lastClosed === this.segments[n - 2]) return c.values;
    const values = new Float64Array(Math.max(0, n - 1));
    let max = -1;
    for (let i = 0; i < n - 1; i++) values[i] = max = Math.max(max, this.segments[i].maxTimestampMs);
    this.runningMaxCache = { count: n, first: this.segments[0], lastClosed: this.segments[n - 2], values };
    return values;
  }

  /**
   * The first record carrying the log's largest timestamp (ListOffsets -3, KIP-734), from the
   * segment with the largest max timestamp; null when no batch carries a timestamp.
   */
  maxTimestampOffset(): TimestampOffset | null {
    this.checkOnline();
    let best: LogSegment | null = null;
    for (const seg of this.segments) if (best === null || seg.maxTimestampMs > best.maxTimestampMs) best = seg;
    try {
      return best === null ? null : best.maxTimestampAndOffset();
    } catch (e) {
      throw this.storageError("timestamp lookup", e);
    }
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

  /**
   * fsyncs every segment holding offsets in [recoveryPoint, upTo) and moves the recovery point
   * to upTo (the log end offset by default). Nothing to do when it is already there.
   */
  flush(upTo = this.logEndOffset): void {
    this.checkOnline();
    assert(upTo <= this.logEndOffset, "flush up to at most the log end offset");
    this.lastFlushTimeMs = this.platform.clock.nowMs();
    if (upTo <= this._recoveryPoint) return;
    try {
      for (const seg of this.segments) {
        if (seg.nextOffset > this._recoveryPoint && seg.baseOffset < upTo) seg.flush();
      }
    } catch (e) {
      throw this.storageError("flush", e);
    }
    this._recoveryPoint = upTo;
  }

  /**
   * Kafka's UnifiedLog.deleteOldSegments: deletes the oldest segments that lie wholly below the
   * log start offset, then (when cleanup.policy includes delete) those that take the log past
   * retention.bytes, then those whose newest batch is older than retention.ms at nowMs. Returns
   * how many segments were deleted.
   */
  deleteOldSegments(nowMs: number): number {
    this.checkOnline();
    try {
      return this.deleteRetainedSegments(nowMs);
    } catch (e) {
      throw this.storageError("retention", e);
    }
  }

  private deleteRetainedSegments(nowMs: number): number {
    let deleted = this.deleteSegmentsWhile("log start offset", (seg, next) => next.baseOffset <= this._logStartOffset);
    if (!this._config.cleanupPolicy.split(",").map((p) => p.trim()).includes("delete")) return deleted;
    const retentionBytes = this._config.retentionBytes;
    if (retentionBytes >= 0 && this.sizeBytes > retentionBytes) {
      let excess = this.sizeBytes - retentionBytes;
      deleted += this.deleteSegmentsWhile("retention.bytes", (seg) => {
        if (excess < seg.sizeBytes) return false;
        excess -= seg.sizeBytes;
        return true;
      });
    }
    const retentionMs = this._config.retentionMs;
    if (retentionMs >= 0) {
      deleted += this.deleteSegmentsWhile("retention.ms", (seg) => nowMs - seg.largestTimestampMs() > retentionMs);
    }
    return deleted;
  }

  /**
   * Deletes segments from the oldest on while `breached` holds, stopping at the first that does
   * not, at the active segment, and at a segment not wholly below the high watermark (consumers
   * may not have seen it; Kafka's rule).
   */
  private deleteSegmentsWhile(reason: string, breached: (seg: LogSegment, next: LogSegment) => boolean): number {
    let n = 0;
    while (n + 1 < this.segments.length) {
      const seg = this.segments[n];
      const next = this.segments[n + 1];
      if (this._highWatermark < next.baseOffset || !breached(seg, next)) break;
      n++;
    }
    if (n === 0) return 0;
    const doomed = this.segments.splice(0, n);
    if (this.segments[0].baseOffset > this._logStartOffset) {
      this._logStartOffset = this.segments[0].baseOffset;
      if (this._recoveryPoint < this._logStartOffset) this._recoveryPoint = this._logStartOffset;
    }
    this.logger.info(
      { reason, segments: doomed.map((d) => d.baseOffset), logStartOffset: this._logStartOffset },
      "deleting segments",
    );
    for (const seg of doomed) this.scheduleRemoval(seg);
    return n;
  }

  /** Renames the segment's files `.deleted` now and removes them file.delete.delay.ms later. */
  private scheduleRemoval(seg: LogSegment): void {
    seg.changeFileSuffixes(DeletedFileSuffix);
    const delayMs = Math.min(this._config.fileDeleteDelayMs, schedulerIntervalMsMax);
    const timer = this.platform.clock.setTimeout(() => {
      this.pendingRemoval.delete(seg);
      try {
        seg.remove();
      } catch (e) {
        // A timer has no caller to tell: the failure is reported to the handler and stops here.
        const err = this.storageError("removal of a deleted segment", e);
        if (!(err instanceof KafkaStorageError)) throw err;
      }
    }, delayMs);
    this.pendingRemoval.set(seg, timer);
  }

  /**
   * Swaps `cleaned`, a segment the cleaner wrote as `.cleaned` files (fsynced), in for `old`, a
   * run of consecutive closed segments whose first base offset it keeps (Kafka's replaceSegments;
   * steps and crash handling in swap.ts): `.cleaned` → `.swap`, the old segments renamed
   * `.deleted` (removed file.delete.delay.ms later, so a read holding them completes), `.swap` →
   * final names. Returns false and changes nothing when `old` is no longer such a run of this
   * log (retention, truncation or a close happened while the cleaner worked).
   */
  replaceSegments(cleaned: LogSegment, old: readonly LogSegment[]): boolean {
    if (this.isClosed || old.length === 0) return false;
    const at = this.segments.indexOf(old[0]);
    if (at < 0 || at + old.length >= this.segments.length) return false; // never the active segment
    for (let i = 1; i < old.length; i++) if (this.segments[at + i] !== old[i]) return false;
    assert(cleaned.baseOffset === old[0].baseOffset, "a cleaned segment keeps its group's base offset");
    assert(cleaned.nextOffset <= this.segments[at + old.length].baseOffset, "a cleaned segment ends before the next segment");
    try {
      cleaned.changeFileSuffixes(SwapFileSuffix);
      this.platform.fs.syncDir(this.dir);
      for (const seg of old) this.scheduleRemoval(seg);
      cleaned.changeFileSuffixes("");
      this.platform.fs.syncDir(this.dir);
    } catch (e) {
      throw this.storageError("segment swap", e);
    }
    this.segments.splice(at, old.length, cleaned);
    this.runningMaxCache = null;
    return true;
  }

  /** Closes every segment; deleted segments still waiting for their delay are removed now. */
  close(): void {
    this.closed = true;
    if (this.offline) return; // closeForFailure closed the files
    for (const [seg, timer] of this.pendingRemoval) {
      timer.cancel();
      seg.remove();
    }
    this.pendingRemoval.clear();
    for (const s of this.segments) s.close();
  }

  /**
   * The log dir failed (Kafka's closeHandlers): closes every file without writing to it, drops
   * the pending removals (their `.deleted` files go at the next start-up), and makes every later
   * operation throw KafkaStorageError. Idempotent.
   */
  closeForFailure(): void {
    if (this.offline) return;
    this.offline = true;
    for (const timer of this.pendingRemoval.values()) timer.cancel();
    for (const seg of this.pendingRemoval.keys()) seg.closeHandlers();
    this.pendingRemoval.clear();
    for (const s of this.segments) s.closeHandlers();
  }

  private checkOnline(): void {
    if (this.offline) {
      throw new KafkaStorageError(this.logDir, `${this.topic}-${this.partition} is offline: log dir ${this.logDir} failed`);
    }
  }

  /**
   * An I/O error from a file operation of this log becomes a KafkaStorageError for its log dir,
   * after the handler is told (it takes the dir offline). Kafka errors (expected failures, or a
   * KafkaStorageError already reported by an inner call) and bugs pass unchanged.
   */
  private storageError(what: string, e: unknown): unknown {
    if (!isIoError(e)) return e;
    const logDir = this.logDir;
    this.logger.debug({ logDir, operation: what, err: e.message }, "log file operation failed");
    this.ioErrorHandler?.(logDir, e);
    return new KafkaStorageError(logDir, `${what} of ${this.topic}-${this.partition} failed in log dir ${logDir}: ${e.message}`);
  }

  /** Closes the log and deletes its directory. */
  delete(): void {
    this.close();
    this.platform.fs.remove(this.dir);
  }
}

/**
 * Base offsets of the segments in dir, sorted. Finishes what a stop left half done: a cleaner's
 * swap (swap.ts), `.deleted` files (a deletion whose delay had not passed) and index files whose
 * log is gone.
 */
function listSegmentFiles(platform: Platform, dir: string, logger: Logger): number[] {
  let names = platform.fs.readdir(dir);
  if (completeInterruptedSwaps(platform, dir, logger, names)) names = platform.fs.readdir(dir);
  const logs = new Set(names.filter((n) => /^\d{20}\.log$/.test(n)));
  for (const name of names) {
    const stray = name.endsWith(DeletedFileSuffix) || (/^\d{20}\.(time)?index$/.test(name) && !logs.has(name.slice(0, 20) + ".log"));
    if (!stray) continue;
    platform.fs.remove(`${dir}/${name}`);
    logger.info({ file: `${dir}/${name}` }, "removed leftover file");
  }
  return [...logs].map((n) => Number(n.slice(0, 20))).sort((a, b) => a - b);
}

/**
 * Opens the segments, recovering those that need it: after an unclean stop, the one holding the
 * recovery point and all later ones; at any time, one whose index file is missing. A recovery
 * that cuts bytes logs one line; when it cuts an unflushed segment, the later segments cannot
 * follow on from it and are removed (one more line).
 */
function loadSegments(
  platform: Platform,
  dir: string,
  bases: number[],
  config: Required<LogConfig>,
  state: LogLoadState,
  logger: Logger,
): LogSegment[] {
  let firstUnflushed = bases.length;
  if (!state.hadCleanShutdown) {
    firstUnflushed = 0;
    for (let i = 0; i < bases.length; i++) if (bases[i] <= state.recoveryPoint) firstUnflushed = i;
  }
  const segments: LogSegment[] = [];
  for (let i = 0; i < bases.length; i++) {
    const unflushed = i >= firstUnflushed;
    const noIndex = platform.fs.stat(`${dir}/${segmentFileName(bases[i], ".index")}`) === null;
    const { segment, truncatedBytes } = LogSegment.open(platform, dir, bases[i], config, unflushed || noIndex);
    if (truncatedBytes > 0) logTruncation(logger, segment, truncatedBytes, "torn tail");
    segments.push(segment);
    if (!unflushed && !noIndex) continue;
    const r = segment.recover();
    if (r.truncatedBytes === 0) continue;
    logTruncation(logger, segment, r.truncatedBytes, r.reason ?? "");
    if (!unflushed) continue;
    const later = bases.slice(i + 1);
    if (later.length > 0) {
      for (const b of later) LogSegment.open(platform, dir, b, config, true).segment.remove();
      logger.warn({ segments: later }, "deleted segments after the truncated one");
    }
    break;
  }
  return segments;
}

function logTruncation(logger: Logger, seg: LogSegment, truncatedBytes: number, reason: string): void {
  logger.warn(
    { segment: seg.logPath, position: seg.sizeBytes, truncatedBytes, reason, nextOffset: seg.nextOffset },
    "truncated torn tail of segment",
  );
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
