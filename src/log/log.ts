// Log: one partition's replica on disk, `<log.dir>/<topic>-<partition>/`, a list of LogSegments
// ordered by base offset; only the last (active) one is appended to.
//
// Invariants:
// - first segment's base offset <= logStartOffset <= highWatermark <= logEndOffset; readable
//   offsets are [logStartOffset, logEndOffset); logEndOffset is the active segment's nextOffset.
// - logStartOffset moves forward: by DeleteRecords, or to the first remaining segment's base when
//   retention deletes segments. Only starting the log over sets it anywhere: truncateFullyAndStartAt
//   (a follower behind its leader's start), a truncateTo below it, a follower's first batch
//   holding it on an empty log. It is checkpointed per log dir (log-start-offset-checkpoint).
// - leaderEpochCache (leader_epoch_cache.ts, `leader-epoch-checkpoint`) says which leader epoch
//   wrote which offsets: an epoch is assigned at the first offset appended in it (appendAsLeader,
//   maybeAssignEpochStartOffset, and each fetched batch's partitionLeaderEpoch in
//   appendAsFollower); truncations cut it at the new log end offset, a moved log start offset moves
//   its first entry; open() loads it consistent with the recovered segments (log_loader.ts).
// - A follower's appends keep the leader's offsets (appendAsFollower): batches start at or after
//   the log end offset (gaps allowed, as compaction leaves them), never below it. truncateTo drops
//   every batch holding an offset at or past its target (whole batches; the later segments are
//   deleted like retention's, the one holding the target is cut), then clamps the high watermark
//   and the recovery point to the new log end offset.
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
// - The active (last) segment is never deleted by retention. Retention deletes from the oldest
//   segment on, only segments wholly below the high watermark; their files are renamed `.deleted`
//   and removed file.delete.delay.ms later (so are those a truncation deletes).
// - Appends are synchronous (see platform/types.ts), so the log end offset seen by a handler is
//   the one its append produced.
// - An I/O error from any of its file operations (append, roll, read, flush, retention) becomes a
//   KafkaStorageError for its log dir, and ioErrorHandler (the LogManager) is told first, which
//   takes the whole dir offline and closes this log with closeForFailure(); from then on every
//   operation throws KafkaStorageError. Errors that are not I/O errors are bugs and pass unchanged.
//   A transient I/O error (out of descriptors, a full disk; see log_dir_failure.ts) becomes a
//   KafkaStorageError of its kind, the handler is told too (it notes it, the dir stays online), and
//   the log stays usable: a failed append leaves nothing behind (LogSegment.append takes back a
//   partial write), so the client's retry finds the log as it was.
// - producerState (producer_state.ts, log_producer_state.ts) covers every offset below the log end
//   offset: a leader append is checked against it (no await between the check and the append),
//   a follower's updates it; snapshots at rolls and close, rebuilt at open and after truncations.
// - appendRefusal (the LogManager's free-space check) refuses appends before any byte is written
//   while the log dir is short of space; reads go on.

import type { FileHandle, Platform, Timer } from "../platform/mod.ts";
import { assignOffsets, buildEndTxnMarkerBatch, type EndTxnMarker } from "../protocol/mod.ts";
import { assert, ErrorCode, KafkaError, schedulerIntervalMsMax, segmentRelativeOffsetMax } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";
import { isIoError, KafkaStorageError, logDirOf, type LogDirFailureHandler, storageErrorFor } from "./log_dir_failure.ts";
import { checkFetchedBatches, type FetchedBatch } from "./follower_batches.ts";
import { type LeaderEpochFileCache, UNDEFINED_EPOCH_OFFSET } from "./leader_epoch_cache.ts";
import { hasCleanupPolicy, type LogConfig, logConfigDefaults } from "./log_config.ts";
import { createdLog, loadLog, type LogLoadState } from "./log_loader.ts";
import type { LogProducerState } from "./log_producer_state.ts";
import type { ProducerBatch, ProducerStateManager } from "./producer_state.ts";
import { breachedSegmentCount, LogSegments, readSegments } from "./log_segments.ts";
import { DeletedFileSuffix, LogSegment, type TimestampOffset } from "./segment.ts";
import { SwapFileSuffix } from "./swap.ts";
import { batchMaxTimestampAt, type Timestamp } from "./timestamp.ts";
import { findOffsetForTimestamp, RunningMaxTimestamps } from "./timestamp_search.ts";

const cleanLoad: LogLoadState = { hadCleanShutdown: true, recoveryPoint: Number.MAX_SAFE_INTEGER, logStartOffset: 0, highWatermark: null };
/** What open() assumes when its caller cannot say: an unclean stop, every segment recovered. */
const uncheckedLoad: LogLoadState = { hadCleanShutdown: false, recoveryPoint: 0, logStartOffset: 0, highWatermark: null };

export type { AppendInfo, ReadResult } from "./log_types.ts";
import type { AppendInfo, ReadResult } from "./log_types.ts";

export class Log {
  private readonly segments: LogSegments;
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
  /** Why appends are refused now (the log dir is short of space), or null (set by the LogManager). */
  appendRefusal: ((bytes: number) => string | null) | null = null;
  /** Set by closeForFailure: the log dir failed and the files are closed. */
  private offline = false;
  /** Set by close(). */
  private closed = false;
  /** Told the new log end offset after each truncation (set by the LogManager: cleaner, checkpoints). */
  truncationHandler: ((logEndOffset: number) => void) | null = null;
  /** How many truncations this log has had since it was opened (the cleaner aborts on a change). */
  private truncations = 0;
  /** The closed segments' running max timestamps, for offsetForTimestamp (timestamp_search.ts). */
  private runningMax = new RunningMaxTimestamps();

  private constructor(
    private readonly platform: Platform,
    readonly dir: string,
    readonly topic: string,
    readonly partition: number,
    config: LogConfig,
    segments: LogSegment[],
    private readonly epochCache: LeaderEpochFileCache,
    private readonly producers: LogProducerState,
    private readonly logger: Logger,
    state: LogLoadState,
  ) {
    this.segments = new LogSegments(segments);
    this._config = { ...logConfigDefaults, ...config };
    this._logStartOffset = Math.max(state.logStartOffset, segments[0].baseOffset);
    assert(this._logStartOffset <= this.logEndOffset, "log start offset <= log end offset");
    // A clean shutdown flushed everything; otherwise what was recovered is still unflushed.
    const recoveryPoint = state.hadCleanShutdown ? this.logEndOffset : Math.min(state.recoveryPoint, this.logEndOffset);
    this._recoveryPoint = Math.max(this._logStartOffset, recoveryPoint);
    this._highWatermark = Math.min(Math.max(state.highWatermark ?? this._logStartOffset, this._logStartOffset), this.logEndOffset);
    producers.manager.onHighWatermarkUpdated(this._highWatermark); // markers the replay completed below it are stable
    this.lastFlushTimeMs = platform.clock.nowMs();
  }

  /**
   * Opens the log in dir (creating it when missing). `state` comes from the log dir's
   * checkpoints; without it nothing is assumed: the log is recovered as after an unclean stop.
   * After an unclean shutdown, the segment holding the recovery point and every later one are
   * scanned whole (Kafka's LogLoader.recoverLog); a segment without an index is always scanned.
   * The leader epoch cache is loaded consistent with what remains (log_loader.ts).
   */
  static open(
    platform: Platform,
    dir: string,
    topic: string,
    partition: number,
    config: LogConfig,
    logger: Logger,
    state: LogLoadState = uncheckedLoad,
  ): Log {
    platform.fs.mkdirp(dir);
    const log = logger.child({ topic, partition });
    const loaded = loadLog(platform, dir, { ...logConfigDefaults, ...config }, state, log);
    return new Log(platform, dir, topic, partition, config, loaded.segments, loaded.leaderEpochCache, loaded.producerState, log, state);
  }

  /**
   * A new, empty log in dir whose directory and first segment's files were just created off the
   * event loop (LogManager.prepareNewLogs): see createdLog in log_loader.ts.
   */
  static created(
    platform: Platform,
    dir: string,
    topic: string,
    partition: number,
    config: LogConfig,
    logger: Logger,
    segmentLog: FileHandle,
    writtenEpoch: number | null,
  ): Log {
    const log = logger.child({ topic, partition });
    const made = createdLog(platform, dir, { ...logConfigDefaults, ...config }, log, segmentLog, writtenEpoch);
    return new Log(platform, dir, topic, partition, config, made.segments, made.leaderEpochCache, made.producerState, log, cleanLoad);
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
    return this.segments.all;
  }
  /** Set by close() (and closeForFailure): the cleaner must not swap segments in any more. */
  get isClosed(): boolean {
    return this.closed || this.isOffline;
  }

  get activeSegment(): LogSegment {
    return this.segments.active;
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
    return this.segments.sizeBytes;
  }
  get segmentCount(): number {
    return this.segments.count;
  }
  /** Base offsets of the live segments, oldest first. */
  get segmentBaseOffsets(): number[] {
    return this.segments.baseOffsets;
  }

  /** Sets the high watermark, kept within [logStartOffset, logEndOffset] (the Partition owns it). */
  updateHighWatermark(offset: number): number {
    this._highWatermark = Math.min(Math.max(offset, this._logStartOffset), this.logEndOffset);
    this.producers.manager.onHighWatermarkUpdated(this._highWatermark);
    return this._highWatermark;
  }

  /** Kafka's lastStableOffset: the high watermark, capped by the first unstable offset (producer_state.ts). */
  get lastStableOffset(): number {
    const first = this.producers.manager.firstUnstableOffset;
    return first !== null && first < this._highWatermark ? Math.max(first, this._logStartOffset) : this._highWatermark;
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
    try {
      this.epochCache.truncateFromStart(offset);
    } catch (e) {
      throw this.storageError("leader epoch checkpoint", e);
    }
    return true;
  }

  /**
   * Appends a validated record set (see record_batch.validateBatches) as the leader: assigns
   * offsets from the log end offset and stamps the leader epoch, then writes the bytes. The epoch,
   * when newer than the cache's latest, starts at the first offset appended.
   */
  appendAsLeader(records: Uint8Array, offsetCount: number, leaderEpoch: number): AppendInfo {
    this.checkOnline();
    // Kafka's analyzeAndValidateProducerState: KafkaError for a refused sequence or epoch.
    const producerCheck = this.producers.manager.checkLeaderAppend(records, this.logEndOffset);
    const dup = producerCheck?.duplicate ?? null;
    if (dup !== null) return { firstOffset: dup.firstOffset, lastOffset: dup.lastOffset, logAppendTimeMs: dup.timestampMs, duplicate: true };
    return this.appendChecked(records, offsetCount, leaderEpoch, producerCheck?.batches ?? null);
  }

  /** A transaction marker, as the leader (origin COORDINATOR); KafkaError as checkMarker (producer_state.ts). */
  appendTxnMarkerAsLeader(producerId: bigint, producerEpoch: number, marker: EndTxnMarker, leaderEpoch: number): AppendInfo {
    this.checkOnline();
    this.producers.manager.checkMarker(producerId, producerEpoch, marker.coordinatorEpoch);
    const records = buildEndTxnMarkerBatch(producerId, producerEpoch, marker, this.platform.clock.nowMs());
    return this.appendChecked(records, 1, leaderEpoch, this.producers.manager.markerBatches(records, this.logEndOffset));
  }

  private appendChecked(records: Uint8Array, offsetCount: number, leaderEpoch: number, producerBatches: ProducerBatch[] | null): AppendInfo {
    this.checkAppendAllowed(records.length);
    try {
      this.maybeRoll(records.length, this.logEndOffset + offsetCount - 1, batchMaxTimestampAt(records, 0));
      const firstOffset = this.logEndOffset;
      this.assignEpoch(leaderEpoch, firstOffset);
      const next = assignOffsets(records, firstOffset, leaderEpoch);
      assert(next === firstOffset + offsetCount, "assigned offsets match the validated count");
      this.activeSegment.append(records, firstOffset, next - 1);
      this.producers.commit(producerBatches, this.activeSegment);
      this.producers.manager.updateMapEndOffset(next);
      // Kafka's flush.messages: fsync once that many offsets are above the recovery point.
      if (this.logEndOffset - this._recoveryPoint >= this._config.flushMessages) this.flush();
      return { firstOffset, lastOffset: next - 1, logAppendTimeMs: this.platform.clock.nowMs() };
    } catch (e) {
      throw this.storageError("append", e);
    }
  }

  /**
   * Appends batches fetched from the leader, with the leader's offsets and epochs (Kafka's
   * appendAsFollower). Every whole batch is checked (follower_batches.ts: magic 2, CRC32C, sizes,
   * increasing offsets; KafkaError CORRUPT_MESSAGE or UNKNOWN_SERVER_ERROR); a trailing batch the
   * fetch cut short is left out. The first batch must start at or after the log end offset (gaps
   * are compaction's), else KafkaError UNKNOWN_SERVER_ERROR (Kafka's
   * UnexpectedAppendOffsetException) — except on an empty log whose start offset the set reaches
   * (DeleteRecords moved the leader's start into a batch, and the follower starts there): the log
   * then starts over at the first batch's base offset (Kafka's Partition does this in
   * appendRecordsToFollowerOrFutureReplica); the caller moves the log start offset up to the
   * leader's afterwards (maybeIncrementLogStartOffset, after the high watermark).
   * Each batch's partitionLeaderEpoch is assigned at its base offset; rolls and flush.messages as
   * for the leader, batches going into the active segment in runs that fit it. Nothing to append
   * (an empty set, or only a partial batch) returns firstOffset = logEndOffset, lastOffset one less.
   */
  appendAsFollower(records: Uint8Array): AppendInfo {
    this.checkOnline();
    this.checkAppendAllowed(records.length);
    const batches = checkFetchedBatches(records, `${this.topic}-${this.partition}`);
    const logEndOffset = this.logEndOffset;
    if (batches.length === 0) return { firstOffset: logEndOffset, lastOffset: logEndOffset - 1, logAppendTimeMs: -1 };
    const first = batches[0];
    const last = batches[batches.length - 1];
    const restart = first.baseOffset < logEndOffset && logEndOffset === this._logStartOffset && last.lastOffset >= logEndOffset;
    if (first.baseOffset < logEndOffset && !restart) {
      throw new KafkaError(
        ErrorCode.UNKNOWN_SERVER_ERROR,
        `unexpected offset in append to ${this.topic}-${this.partition}: ` +
          `first offset ${first.baseOffset} is below the log end offset ${logEndOffset}`,
      );
    }
    try {
      if (restart) {
        this.logger.info(
          { firstOffset: first.baseOffset, logStartOffset: this._logStartOffset },
          "first fetched batch starts below the empty log's start offset; starting the log at its base offset",
        );
        this.startFullyAt(first.baseOffset);
      }
      for (let i = 0; i < batches.length;) i = this.appendFetchedRun(records, batches, i);
      if (this.logEndOffset - this._recoveryPoint >= this._config.flushMessages) this.flush();
    } catch (e) {
      throw this.storageError("append", e);
    }
    return { firstOffset: first.baseOffset, lastOffset: last.lastOffset, logAppendTimeMs: -1 };
  }

  /**
   * Appends batches[from..] as far as they fit the active segment (rolled first if needed), in one
   * write; returns the index of the first batch not appended.
   */
  private appendFetchedRun(records: Uint8Array, batches: FetchedBatch[], from: number): number {
    const first = batches[from];
    this.maybeRoll(first.size, first.lastOffset, batchMaxTimestampAt(records, first.position), first.baseOffset);
    const seg = this.activeSegment;
    let end = from + 1;
    let bytes = first.size;
    while (end < batches.length) {
      const b = batches[end];
      if (seg.sizeBytes + bytes + b.size > this._config.segmentBytes || b.lastOffset - seg.baseOffset > segmentRelativeOffsetMax) break;
      bytes += b.size;
      end++;
    }
    for (let i = from; i < end; i++) this.assignEpoch(batches[i].leaderEpoch, batches[i].baseOffset);
    const run = records.subarray(first.position, first.position + bytes);
    seg.append(run, first.baseOffset, batches[end - 1].lastOffset);
    this.producers.updateFromLog(run, seg);
    this.producers.manager.updateMapEndOffset(seg.nextOffset);
    return end;
  }

  /** The idempotent producers' state (producer_state.ts), kept at the log end offset. */
  get producerState(): ProducerStateManager {
    return this.producers.manager;
  }
  /** The offsets of this log's `.snapshot` files (log_producer_state.ts). */
  get producerSnapshotOffsets(): readonly number[] {
    return this.producers.snapshotOffsets;
  }

  /** The leader epoch cache (`leader-epoch-checkpoint`): which epoch wrote which offsets. */
  get leaderEpochCache(): LeaderEpochFileCache {
    return this.epochCache;
  }
  /** The latest epoch that wrote to (or was assigned in) this log, null when none. */
  get latestEpoch(): number | null {
    return this.epochCache.latestEpoch;
  }

  /**
   * Records that leaderEpoch starts at startOffset when it is newer than the latest epoch (Kafka's
   * rule, see LeaderEpochFileCache.assign): the Partition calls it on becoming leader, with the
   * log end offset, before anything is appended in the epoch. A negative epoch is ignored.
   */
  maybeAssignEpochStartOffset(leaderEpoch: number, startOffset: number): void {
    this.checkOnline();
    try {
      // Written at the next flush or close (LeaderEpochFileCache.assignDeferred).
      if (leaderEpoch >= 0) this.epochCache.assignDeferred(leaderEpoch, startOffset);
    } catch (e) {
      const err = this.storageError("leader epoch checkpoint", e);
      // The entry is in memory: a full disk or no free descriptor only delays the file, which
      // the next flush writes (writeIfStale). Becoming leader must not fail for it.
      if (err instanceof KafkaStorageError && err.kind !== "failed") return;
      throw err;
    }
  }

  /** Batches without a leader epoch (-1, older clients' data) leave the cache as it is. */
  private assignEpoch(leaderEpoch: number, startOffset: number): void {
    if (leaderEpoch >= 0) this.epochCache.assign(leaderEpoch, startOffset);
  }

  /**
   * The largest epoch <= leaderEpoch this log has and where it ends (the next epoch's start, or
   * the log end offset for the latest): what OffsetForLeaderEpoch answers (Kafka's
   * endOffsetForEpoch). Null when the cache cannot say (no entries, or leaderEpoch above the
   * latest or -1).
   */
  endOffsetForEpoch(leaderEpoch: number): { leaderEpoch: number; endOffset: number } | null {
    const found = this.epochCache.endOffsetFor(leaderEpoch, this.logEndOffset);
    return found.endOffset === UNDEFINED_EPOCH_OFFSET ? null : { leaderEpoch: found.epoch, endOffset: found.endOffset };
  }

  /**
   * Drops every offset >= offset (Kafka's truncateTo; a follower diverging from its leader).
   * Segments starting past offset are deleted (renamed `.deleted`, removed file.delete.delay.ms
   * later); the one holding it is cut before the first batch holding an offset >= offset (a
   * batch straddling offset goes whole, so the log then ends at its base offset), and fsynced. The
   * log end offset becomes offset (or that base), the high watermark and recovery point are
   * clamped to it, and the epoch cache loses the entries starting at or past it. A target below
   * the log start offset (or the first segment) starts the log over there (truncateFullyAndStartAt).
   * At or past the log end offset nothing is cut, but epoch entries starting at the log end offset
   * go (an epoch assigned by a leader that appended nothing). Returns whether anything was cut.
   */
  truncateTo(offset: number): boolean {
    this.checkOnline();
    assert(Number.isSafeInteger(offset) && offset >= 0, "a log is truncated to a non-negative offset");
    try {
      if (offset >= this.logEndOffset) {
        this.epochCache.truncateFromEnd(this.logEndOffset);
        return false;
      }
      if (offset < this._logStartOffset || offset < this.segments.first.baseOffset) this.startFullyAt(offset);
      else this.cutAt(offset);
    } catch (e) {
      throw this.storageError("truncation", e);
    }
    return true;
  }

  private cutAt(offset: number): void {
    const logEndOffset = this.logEndOffset;
    const at = this.segments.floorIndex(offset);
    const seg = this.segments.at(at);
    const doomed = this.segments.removeAfter(at);
    const cutBytes = seg.truncateToOffset(offset);
    if (seg.nextOffset < this._logStartOffset) {
      // The batch straddling offset also holds the log start offset: nothing readable is left.
      this.segments.restoreAfter(doomed);
      this.startFullyAt(offset);
      return;
    }
    // Durable at once (Kafka fsyncs the dir of a segment it renames): after a crash, neither the
    // cut batches nor the deleted segments may come back as valid data past the new end.
    if (cutBytes > 0) seg.flush();
    for (const d of doomed) this.scheduleRemoval(d);
    if (doomed.length > 0) this.platform.fs.syncDir(this.dir);
    this.afterTruncation();
    const deletedSegments = doomed.map((d) => d.baseOffset);
    this.logger.info({ offset, from: logEndOffset, logEndOffset: this.logEndOffset, deletedSegments }, "truncated log");
  }

  /**
   * Deletes every segment and starts the log, empty, at offset (Kafka's truncateFullyAndStartAt:
   * a follower too far behind its leader's log start offset, or diverged below its own start).
   * The log start offset, high watermark and recovery point all become offset; the epoch cache is
   * emptied. The old segments are renamed `.deleted` and removed file.delete.delay.ms later.
   */
  truncateFullyAndStartAt(offset: number): void {
    this.checkOnline();
    assert(Number.isSafeInteger(offset) && offset >= 0, "a log starts at a non-negative offset");
    this.guarded("truncation", () => this.startFullyAt(offset));
  }

  private startFullyAt(offset: number): void {
    const from = { logStartOffset: this._logStartOffset, logEndOffset: this.logEndOffset };
    const doomed = this.segments.removeAll();
    for (const d of doomed) this.scheduleRemoval(d); // renamed before the new segment takes the name
    this.segments.add(LogSegment.create(this.platform, this.dir, offset, this._config));
    this.platform.fs.syncDir(this.dir);
    this._logStartOffset = offset;
    this.epochCache.clear();
    this.producers.onFullTruncation(offset);
    this.afterTruncation();
    this.logger.info({ ...from, offset, deletedSegments: doomed.map((d) => d.baseOffset) }, "truncated log fully; starting it at offset");
  }

  /**
   * Clamps what must stay within the new log end offset, notes the change for a cleaner pass under
   * way, and tells the truncation handler (the LogManager: cleaner checkpoint, dir checkpoints).
   */
  private afterTruncation(): void {
    const end = this.logEndOffset;
    this._highWatermark = Math.min(Math.max(this._highWatermark, this._logStartOffset), end);
    this._recoveryPoint = Math.min(Math.max(this._recoveryPoint, this._logStartOffset), end);
    this.epochCache.truncateFromEnd(end);
    this.producers.onTruncation(this.segments.all, this._logStartOffset, end);
    this.runningMax.reset();
    this.truncations++;
    this.truncationHandler?.(end);
  }

  /** Truncations since the log was opened: a cleaner pass aborts when it changes under it. */
  get truncationCount(): number {
    return this.truncations;
  }

  /**
   * Rolls before an append when the active segment says so (LogSegment.shouldRoll). The new
   * segment starts at firstOffset (a follower's batches may start past the log end offset).
   */
  private maybeRoll(incomingBytes: number, lastOffset: number, maxTimestamp: Timestamp, firstOffset = this.logEndOffset): void {
    const incoming = { bytes: incomingBytes, lastOffset, maxTimestamp };
    if (this.activeSegment.shouldRoll(this._config, incoming, this.platform.clock.nowMs())) this.roll(firstOffset);
  }


  /**
   * Starts a new active segment at the log end offset (or at expectedNextOffset when that is
   * larger: a follower's next batch after a gap). The old one is complete, so it is flushed and
   * the recovery point moves to the log end offset (Kafka flushes it from its scheduler; strand's
   * file calls are synchronous, so here).
   */
  roll(expectedNextOffset = this.logEndOffset): void {
    this.guarded("roll", () => {
      const base = Math.max(expectedNextOffset, this.logEndOffset);
      this.activeSegment.onBecomeInactive();
      this.flush();
      this.producers.beforeRoll(base);
      this.segments.add(LogSegment.create(this.platform, this.dir, base, this._config));
      this.logger.info({ baseOffset: base }, "rolled new log segment");
    });
  }

  /**
   * Reads whole batches from fetchOffset, at most maxBytes (but at least one batch when
   * minOneBatch). Throws OFFSET_OUT_OF_RANGE outside [logStartOffset, logEndOffset].
   */
  read(fetchOffset: number, maxBytes: number, minOneBatch: boolean, maxOffset = this.logEndOffset): ReadResult {
    return this.guarded("read", () => readSegments(this.segments.all, this.logStartOffset, `${this.topic}-${this.partition}`, fetchOffset, maxBytes, minOneBatch, maxOffset));
  }

  /** Runs fn on an online log; its I/O errors become KafkaStorageErrors (storageError). */
  private guarded<T>(what: string, fn: () => T): T {
    this.checkOnline();
    try {
      return fn();
    } catch (e) {
      throw this.storageError(what, e);
    }
  }

  /**
   * ListOffsets by timestamp (Kafka's fetchOffsetByTimestamp): the first record at or after the
   * log start offset whose timestamp is >= timestampMs, with that timestamp, or null when none
   * is. Segments are binary-searched by running max timestamp, then the one found is searched
   * through its time index (LogSegment.findOffsetByTimestamp).
   */
  offsetForTimestamp(timestampMs: Timestamp): TimestampOffset | null {
    return this.guarded("timestamp lookup", () => findOffsetForTimestamp(this.segments.all, this.runningMax, this._logStartOffset, timestampMs));
  }

  /**
   * The first record carrying the log's largest timestamp (ListOffsets -3, KIP-734), from the
   * segment with the largest max timestamp; null when no batch carries a timestamp.
   */
  maxTimestampOffset(): TimestampOffset | null {
    let best: LogSegment | null = null;
    for (const seg of this.segments.all) if (best === null || seg.maxTimestampMs > best.maxTimestampMs) best = seg;
    return this.guarded("timestamp lookup", () => best === null ? null : best.maxTimestampAndOffset());
  }

  /**
   * fsyncs every segment holding offsets in [recoveryPoint, upTo) and moves the recovery point
   * to upTo (the log end offset by default). Nothing to do when it is already there.
   */
  flush(upTo = this.logEndOffset): void {
    this.checkOnline();
    assert(upTo <= this.logEndOffset, "flush up to at most the log end offset");
    this.lastFlushTimeMs = this.platform.clock.nowMs();
    try {
      this.epochCache.writeIfStale();
    } catch (e) {
      throw this.storageError("leader epoch checkpoint", e);
    }
    if (upTo <= this._recoveryPoint) return;
    try {
      // The epochs of the offsets flushed now must survive a power loss with them: recovery
      // re-reads batch headers only above the recovery point (leader_epoch_cache.ts).
      this.epochCache.flush();
      for (const seg of this.segments.all) {
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
    return this.guarded("retention", () => this.deleteRetainedSegments(nowMs));
  }

  private deleteRetainedSegments(nowMs: number): number {
    let deleted = this.deleteSegmentsWhile("log start offset", (seg, next) => next.baseOffset <= this._logStartOffset);
    if (!hasCleanupPolicy(this._config.cleanupPolicy, "delete")) return deleted;
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
      // Kafka's nowMs - largestTimestamp > retention.ms, without arithmetic on an int64 timestamp.
      const horizonMs = nowMs - retentionMs;
      deleted += this.deleteSegmentsWhile("retention.ms", (seg) => seg.largestTimestampMs() < horizonMs);
    }
    return deleted;
  }

  /**
   * Deletes segments from the oldest on while `breached` holds, stopping at the first that does
   * not, at the active segment, and at a segment not wholly below the high watermark (consumers
   * may not have seen it; Kafka's rule).
   */
  private deleteSegmentsWhile(reason: string, breached: (seg: LogSegment, next: LogSegment) => boolean): number {
    const n = breachedSegmentCount(this.segments.all, this._highWatermark, breached);
    if (n === 0) return 0;
    const doomed = this.segments.removeOldest(n);
    if (this.segments.first.baseOffset > this._logStartOffset) {
      this._logStartOffset = this.segments.first.baseOffset;
      if (this._recoveryPoint < this._logStartOffset) this._recoveryPoint = this._logStartOffset;
      this.epochCache.truncateFromStart(this._logStartOffset);
    }
    this.producers.onSegmentsDeleted(this.segments.first.baseOffset);
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
    if (at < 0 || at + old.length >= this.segments.count) return false; // never the active segment
    for (let i = 1; i < old.length; i++) if (this.segments.at(at + i) !== old[i]) return false;
    assert(cleaned.baseOffset === old[0].baseOffset, "a cleaned segment keeps its group's base offset");
    assert(cleaned.nextOffset <= this.segments.at(at + old.length).baseOffset, "a cleaned segment ends before the next segment");
    try {
      cleaned.changeFileSuffixes(SwapFileSuffix);
      this.platform.fs.syncDir(this.dir);
      for (const seg of old) this.scheduleRemoval(seg);
      cleaned.changeFileSuffixes("");
      this.platform.fs.syncDir(this.dir);
    } catch (e) {
      throw this.storageError("segment swap", e);
    }
    this.segments.replace(at, old.length, cleaned);
    this.runningMax.reset();
    return true;
  }

  /**
   * Writes leader-epoch-checkpoint if it lags (a new leader's entry, assignDeferred), and the
   * producer snapshot close() would write, with the file operations on the I/O pool; for
   * LogManager.shutdownGradually, once nothing appends. A failure is left to the flush and close
   * that follow, which write at once and report it.
   */
  async writeStateInBackground(): Promise<void> {
    if (this.isOffline || this.closed) return;
    try {
      await this.epochCache.writeInBackground();
      await this.producers.writeInBackground(this.logEndOffset);
    } catch {
      // Still stale: writeIfStale (flush, close) and close's snapshot try at once and report the error.
    }
  }

  /** Closes every segment; deleted segments still waiting for their delay are removed now. */
  close(): void {
    this.closed = true;
    if (this.offline) return; // closeForFailure closed the files
    try {
      this.epochCache.writeIfStale(); // a new leader's entry (assignDeferred)
      this.producers.onClose(this.logEndOffset);
    } catch (e) {
      throw this.storageError("leader epoch checkpoint or producer snapshot", e);
    }
    for (const [seg, timer] of this.pendingRemoval) {
      timer.cancel();
      seg.remove();
    }
    this.pendingRemoval.clear();
    for (const s of this.segments.all) s.close();
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
    for (const s of this.segments.all) s.closeHandlers();
  }

  /** Refuses an append, before anything is written, while the LogManager says its dir is short of space. */
  private checkAppendAllowed(bytes: number): void {
    const why = this.appendRefusal?.(bytes) ?? null;
    if (why !== null) throw new KafkaStorageError(this.logDir, why, "no-space");
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
    this.logger.debug({ logDir: this.logDir, operation: what, err: e.message }, "log file operation failed");
    this.ioErrorHandler?.(this.logDir, e);
    return storageErrorFor(this.logDir, `${what} of ${this.topic}-${this.partition}`, e);
  }

  /** Closes the log and deletes its directory. */
  delete(): void {
    this.close();
    this.platform.fs.remove(this.dir);
  }
}
