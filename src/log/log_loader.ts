// LogLoader: what Log.open does before a Log exists (Kafka's LogLoader): list a partition dir's
// segment files, finish what a stop left half done, open and recover the segments, and load the
// leader epoch cache consistent with them.
//
// Steps, in order:
// 1. Leftovers: an interrupted cleaner swap is completed (swap.ts); `.deleted` files and index
//    files without their log are removed.
// 2. Segments: after an unclean stop, the segment holding the recovery point and every later one
//    are scanned whole (LogSegment.recover) and cut at the first invalid batch, and the segments
//    after a cut one are removed; at any time a segment without an index is recovered.
// 3. A log ending below its checkpointed log start offset starts over, empty, at that offset,
//    with no epochs (Kafka's LogLoader clears the cache then).
// 4. Leader epochs: `leader-epoch-checkpoint` is read; the batches a recovery scanned add the
//    epochs newer than the latest one (Kafka's rule in LogSegment.recover). A missing or unreadable
//    file is rebuilt from every batch's header (partitionLeaderEpoch, no CRC, no records), which
//    is cheap next to a recovery and leaves the file consistent with the log. Then entries at or
//    past the log end offset go (data lost in the crash) and the first one is moved up to the log
//    start offset.

import type { FileHandle, Platform } from "../platform/mod.ts";
import { BatchField, batchSizeAt, view } from "../protocol/mod.ts";
import type { Logger } from "../util/mod.ts";
import { CheckpointFormatError } from "./checkpoint.ts";
import { type EpochEntry, LeaderEpochCheckpointFile, LeaderEpochCheckpointFileName, LeaderEpochFileCache } from "./leader_epoch_cache.ts";
import type { LogConfig } from "./log_config.ts";
import { LogProducerState } from "./log_producer_state.ts";
import { type BatchHeader, DeletedFileSuffix, LogSegment, segmentFileName } from "./segment.ts";
import { completeInterruptedSwaps } from "./swap.ts";

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

export interface LoadedLog {
  /** Oldest first, never empty: the last is the active segment. */
  segments: LogSegment[];
  /** Consistent with the segments: no entry past their end, none before the log start offset. */
  leaderEpochCache: LeaderEpochFileCache;
  /** Loaded from the latest snapshot, and replayed after an unclean stop (log_producer_state.ts). */
  producerState: LogProducerState;
}

/**
 * Steps 1-4 of the file comment for the log in dir (which exists). When a step fails (EMFILE part
 * way through, a full disk), the segments opened so far are closed: a failed load is retried (see
 * LogManager) and must not leak descriptors, which would make the next try fail the same way.
 */
export function loadLog(platform: Platform, dir: string, config: Required<LogConfig>, state: LogLoadState, logger: Logger): LoadedLog {
  const opened: LogSegment[] = [];
  try {
    return loadLogInto(platform, dir, config, state, logger, opened);
  } catch (e) {
    for (const seg of opened) seg.closeHandlers();
    throw e;
  }
}

function loadLogInto(
  platform: Platform,
  dir: string,
  config: Required<LogConfig>,
  state: LogLoadState,
  logger: Logger,
  opened: LogSegment[],
): LoadedLog {
  const { bases, names } = listSegmentFiles(platform, dir, logger);
  const producerState = new LogProducerState(platform, dir, logger, names);
  const checkpoint = new LeaderEpochCheckpointFile(platform, `${dir}/${LeaderEpochCheckpointFileName}`);
  const stored = readEpochCheckpoint(checkpoint, logger);
  const cache = new LeaderEpochFileCache(checkpoint, logger, stored ?? []);
  const recovered = new EpochStarts(cache.latestEpoch);
  const segments = loadSegments(platform, dir, bases, config, state, logger, (h) => recovered.visit(h), opened);
  if (segments.length > 0 && segments[segments.length - 1].nextOffset < state.logStartOffset) {
    // Kafka's rule: a log ending below its checkpointed start offset (the start was moved past
    // the end, then the tail was lost) starts over, empty, at that start offset.
    const logEndOffset = segments[segments.length - 1].nextOffset;
    logger.warn({ logEndOffset, logStartOffset: state.logStartOffset }, "log ends below its log start offset; deleting all segments");
    for (const seg of segments.splice(0)) seg.remove();
    recovered.entries.length = 0; // epochs of batches that are gone
    if (stored !== null && !cache.isEmpty) cache.clear();
    producerState.onFullTruncation(state.logStartOffset);
  }
  if (segments.length === 0) segments.push(LogSegment.create(platform, dir, state.logStartOffset, config));
  const logEndOffset = segments[segments.length - 1].nextOffset;
  const logStartOffset = Math.max(state.logStartOffset, segments[0].baseOffset); // as the Log computes it
  cache.deferWrites = true; // written at the log's next flush or close (see deferWrites)
  if (stored === null) {
    const rebuilt = new EpochStarts(null);
    for (const seg of segments) seg.forEachBatchHeader((h) => rebuilt.visit(h));
    // Written (at the next flush or close; unless the log is new and empty), so a later open
    // does not walk it again.
    if (!cache.assignAll(rebuilt.entries) && platform.fs.stat(checkpoint.path) !== null) cache.write();
    if (rebuilt.entries.length > 0) logger.info({ entries: rebuilt.entries.length }, "rebuilt leader epoch cache from batch headers");
  } else {
    cache.assignAll(recovered.entries);
  }
  cache.truncateFromEnd(logEndOffset);
  cache.truncateFromStart(logStartOffset);
  cache.deferWrites = false;
  producerState.load(segments, logStartOffset, state.hadCleanShutdown);
  return { segments, leaderEpochCache: cache, producerState };
}

/** The stored entries, or null when the file is missing or does not parse (then it is rebuilt). */
function readEpochCheckpoint(file: LeaderEpochCheckpointFile, logger: Logger): EpochEntry[] | null {
  try {
    return file.read();
  } catch (e) {
    if (!(e instanceof CheckpointFormatError)) throw e;
    logger.warn({ file: file.path, err: e.message }, "cannot read leader epoch checkpoint; rebuilding it from the log");
    return null;
  }
}

/**
 * The epoch starts found walking batches in offset order: a batch whose partitionLeaderEpoch is
 * set (>= 0) and newer than every epoch before it starts that epoch (Kafka's recovery rule).
 */
class EpochStarts {
  readonly entries: EpochEntry[] = [];
  constructor(private latest: number | null) {}

  visit(h: BatchHeader): void {
    if (h.leaderEpoch < 0 || (this.latest !== null && h.leaderEpoch <= this.latest)) return;
    this.entries.push({ epoch: h.leaderEpoch, startOffset: h.baseOffset });
    this.latest = h.leaderEpoch;
  }
}

/**
 * Base offsets of the segments in dir, sorted. Finishes what a stop left half done: a cleaner's
 * swap (swap.ts), `.deleted` files (a deletion whose delay had not passed) and index files whose
 * log is gone.
 */
function listSegmentFiles(platform: Platform, dir: string, logger: Logger): { bases: number[]; names: string[] } {
  let names = platform.fs.readdir(dir);
  if (completeInterruptedSwaps(platform, dir, logger, names)) names = platform.fs.readdir(dir);
  const logs = new Set(names.filter((n) => /^\d{20}\.log$/.test(n)));
  for (const name of names) {
    const stray = name.endsWith(DeletedFileSuffix) || (/^\d{20}\.(time|txn)?index$/.test(name) && !logs.has(name.slice(0, 20) + ".log"));
    if (!stray) continue;
    platform.fs.remove(`${dir}/${name}`);
    logger.info({ file: `${dir}/${name}` }, "removed leftover file");
  }
  return { bases: [...logs].map((n) => Number(n.slice(0, 20))).sort((a, b) => a - b), names };
}

/**
 * Opens the segments, recovering those that need it: after an unclean stop, the one holding the
 * recovery point and all later ones; at any time, one whose index file is missing. A recovery
 * that cuts bytes logs one line; when it cuts an unflushed segment, the later segments cannot
 * follow on from it and are removed (one more line). `onRecoveredBatch` sees every batch a
 * recovery found valid.
 */
function loadSegments(
  platform: Platform,
  dir: string,
  bases: number[],
  config: Required<LogConfig>,
  state: LogLoadState,
  logger: Logger,
  onRecoveredBatch: (h: BatchHeader) => void,
  segments: LogSegment[],
): LogSegment[] {
  let firstUnflushed = bases.length;
  if (!state.hadCleanShutdown) {
    firstUnflushed = 0;
    for (let i = 0; i < bases.length; i++) if (bases[i] <= state.recoveryPoint) firstUnflushed = i;
  }
  for (let i = 0; i < bases.length; i++) {
    const unflushed = i >= firstUnflushed;
    const noIndex = platform.fs.stat(`${dir}/${segmentFileName(bases[i], ".index")}`) === null;
    const { segment, truncatedBytes } = LogSegment.open(platform, dir, bases[i], config, unflushed || noIndex, onRecoveredBatch);
    if (truncatedBytes > 0) logTruncation(logger, segment, truncatedBytes, "torn tail");
    segments.push(segment);
    if (!unflushed && !noIndex) continue;
    const r = segment.recover(onRecoveredBatch);
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

/**
 * What Log.open() would find in a new log's dir and do, without its I/O: one empty segment at 0
 * (`segmentLog` is its open `.log`), nothing to recover, and no epochs (no leader-epoch-checkpoint)
 * unless `writtenEpoch`: then the creator has also written the checkpoint with that epoch starting
 * at 0, which is what becoming the leader of the new log assigns (so it writes nothing more).
 */
export function createdLog(
  platform: Platform,
  dir: string,
  config: Required<LogConfig>,
  logger: Logger,
  segmentLog: FileHandle,
  writtenEpoch: number | null,
): LoadedLog {
  const segment = LogSegment.created(platform, dir, 0, config, segmentLog);
  const checkpoint = new LeaderEpochCheckpointFile(platform, `${dir}/${LeaderEpochCheckpointFileName}`);
  const epochCache = new LeaderEpochFileCache(checkpoint, logger, writtenEpoch === null ? [] : [{ epoch: writtenEpoch, startOffset: 0 }]);
  if (writtenEpoch !== null) epochCache.writtenUnsynced();
  return { segments: [segment], leaderEpochCache: epochCache, producerState: new LogProducerState(platform, dir, logger, []) };
}

/** The prefix of whole batches that start below maxOffset (the high watermark, for consumers). */
export function trimToOffset(records: Uint8Array, maxOffset: number): Uint8Array {
  const dv = view(records);
  let pos = 0;
  while (pos < records.length && Number(dv.getBigInt64(pos + BatchField.baseOffset)) < maxOffset) {
    pos += batchSizeAt(dv, pos);
  }
  return pos === records.length ? records : records.subarray(0, pos);
}
