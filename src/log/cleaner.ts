// LogCleaner: log compaction (Kafka's LogCleaner, LogCleanerManager and Cleaner) for logs whose
// cleanup.policy includes "compact". It keeps the latest record of each key and removes the
// older ones, and removes a tombstone (null value) once delete.retention.ms has passed since the
// cleaner first kept it.
//
// Files: `<log.dir>/cleaner-offset-checkpoint`, Kafka's checkpoint format (checkpoint.ts), one line
// per compacted log: its first dirty offset. Offsets below it have been cleaned: each key appears
// at most once there. A cleaned segment's files are `<base>.log|.index|.timeindex`, written first
// as `.cleaned` and swapped in by renames (swap.ts), so a crash at any point loses nothing.
//
// One pass over one log (Kafka's Cleaner.doClean):
//   1. range: firstDirty = the checkpoint (the log start offset when absent, below the log start or
//      past the log end); firstUncleanable = the base of the first segment from there that is the
//      active one, holds the high watermark, or has a record younger than min.compaction.lag.ms.
//      Only closed segments wholly below both are cleaned.
//   2. offset map (offset_map.ts): key hash → latest offset over [firstDirty, firstUncleanable),
//      batch by batch; when the next batch's records might not fit log.cleaner.dedupe.buffer.size,
//      the dirty section ends before it (endOffset), and the next pass goes on from there.
//   3. rewrite every closed segment below endOffset, in groups that fit segment.bytes and the
//      index size (Kafka's groupSegmentsBySize), each group into one new segment with the group's
//      first base offset. Per batch (Kafka's MemoryRecords.filterTo): a record stays when its key
//      is not in the map or the map holds its own offset or an older one; a tombstone stays until
//      its batch's delete horizon. A batch keeping every record (and needing no new horizon) is
//      copied byte for byte; one keeping none is dropped; otherwise it is rebuilt with the
//      retained records, the same codec, base offset, last offset, offset deltas, producer fields,
//      record headers. A batch that keeps a tombstone and has no horizon gets one (KIP-534:
//      attribute bit 6, baseTimestamp = now + delete.retention.ms).
//   4. the checkpoint moves to endOffset and is written.
//
// Kept whole though every record in it is obsolete: an idempotent producer's last batch while the
// producer has state (see isProducersLastBatch).
// Transactions (cleaner_txn.ts, Kafka's rules): aborted data goes, markers go once their
// transaction has no data left and their delete horizon passed; nothing past the last stable
// offset is cleaned. Kept as they are, unread: batches failing their CRC32C,
// and batches whose records cannot be read: malformed, or decompressing past
// cleanerDecompressedBytesMax (a decompression bomb is refused by the bounded decompressor, never
// allocated). Records without a key are kept too: Kafka's produce path refuses them on compacted
// topics and its cleaner drops any it finds; strand's produce path does not check yet, so dropping
// them would lose data.
//
// Choosing a log (Kafka's grabFilthiestCompactedLog): among compacted logs, those whose dirty
// ratio (bytes of segments from firstDirty to firstUncleanable / bytes of the log up to
// firstUncleanable) is above min.cleanable.dirty.ratio, or that have dirty bytes and a dirty
// segment whose first batch is older than max.compaction.lag.ms; the dirtiest goes first. strand
// adds one case: a log whose earliest kept tombstone's delete horizon has passed (remembered from
// its last pass, in memory) is cleaned even when nothing is dirty, so tombstones go on time.
//
// Scheduling: one cleaner (log.cleaner.threads > 1 runs as 1; 0 disables it) working on the event
// loop: it yields every cleanerSliceMs and between segments, cleans again at once after a pass
// that did work, and waits log.cleaner.backoff.ms after one that found nothing.
//
// Concurrency: while the cleaner waits, the log may append, roll, delete segments by retention or
// close. Appends and rolls touch only the active segment, which is never cleaned. A swap happens
// in one synchronous step, and only if the group's segments are still the log's (otherwise the new
// files are removed and the pass ends); old segments are renamed `.deleted` and stay open until
// file.delete.delay.ms, so reads holding them complete. A truncation (a follower diverging from
// its leader) ends a pass under way at its next yield, since the records that made older ones
// obsolete may be gone, and moves a checkpoint past the new log end back to it
// (maybeTruncateCheckpoint, called by the LogManager).

import type { Platform, Timer } from "../platform/mod.ts";
import {
  BatchField,
  batchCrcValid,
  batchLogOverhead,
  type BatchRecord,
  DeleteHorizonAttribute,
  readBatchRecords,
  RecordBatchBuilder,
} from "../protocol/mod.ts";
import { cleanerDecompressedBytesMax, cleanerSliceMs, cleanerSyncIntervalBytes, recordBatchHeaderBytes, segmentRelativeOffsetMax } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";
import { type CheckpointEntries, OffsetCheckpointFile } from "./checkpoint.ts";
import type { Log } from "./log.ts";
import { isIoError, KafkaStorageError } from "./log_dir_failure.ts";
import { hasCleanupPolicy } from "./log_config.ts";
import { CleanedTransactionMetadata, txnBatchVerdict } from "./cleaner_txn.ts";
import { OffsetMap } from "./offset_map.ts";
import { LogSegment, segmentFileName } from "./segment.ts";
import { CleanedFileSuffix } from "./swap.ts";
import { addTimestamp, minTimestamp, type Timestamp, timestampAt, timestampFromBigInt } from "./timestamp.ts";

export const CleanerOffsetCheckpointFile = "cleaner-offset-checkpoint";

/** Broker-wide cleaner settings (Kafka's keys beside each). */
export interface CleanerConfig {
  /** log.cleaner.enable */
  enable: boolean;
  /** log.cleaner.threads: 0 disables the cleaner; any other count runs one (see the file comment). */
  threads: number;
  /** log.cleaner.dedupe.buffer.size: most bytes of the offset map. */
  dedupeBufferBytes: number;
  /** log.cleaner.io.buffer.load.factor: most of the map's slots that may be used. */
  dedupeBufferLoadFactor: number;
  /** log.cleaner.io.buffer.size: bytes read from a segment, and gathered before a write, at once. */
  ioBufferBytes: number;
  /** log.cleaner.backoff.ms: wait after a round that found no log to clean. */
  backoffMs: number;
  /** Most bytes a batch may decompress to (at most limits.cleanerDecompressedBytesMax). */
  decompressedBytesMax: number;
}

/** Kafka's defaults. */
export const cleanerConfigDefaults: CleanerConfig = {
  enable: true,
  threads: 1,
  dedupeBufferBytes: 134_217_728,
  dedupeBufferLoadFactor: 0.9,
  ioBufferBytes: 524_288,
  backoffMs: 15_000,
  decompressedBytesMax: cleanerDecompressedBytesMax,
};

/** A compacted log's cleanable range and dirtiness (Kafka's LogToClean). */
export interface LogToClean {
  log: Log;
  firstDirtyOffset: number;
  firstUncleanableOffset: number;
  cleanBytes: number;
  cleanableBytes: number;
  cleanableRatio: number;
  /** A dirty segment is older than max.compaction.lag.ms. */
  needCompactionNow: boolean;
  /** A kept tombstone's delete horizon has passed. */
  deleteHorizonDue: boolean;
}

/** What one pass did. */
export interface CleanResult {
  topic: string;
  partition: number;
  firstDirtyOffset: number;
  /** The new checkpoint: where the next pass starts. */
  endOffset: number;
  /** The dirty section ended early because the offset map was full. */
  mapFull: boolean;
  segmentsCleaned: number;
  groups: number;
  bytesRead: number;
  bytesWritten: number;
  recordsRead: number;
  recordsRetained: number;
  /** Keys put in the offset map. */
  mapKeys: number;
  /** Batches kept as they are because their records could not be read (corrupt, bomb). */
  unreadableBatches: number;
  durationMs: number;
}

/** The pass was stopped (shutdown, the log closed or changed): nothing to checkpoint. */
class CleaningAborted extends Error {
  override name = "CleaningAborted";
}

export class LogCleaner {
  readonly config: CleanerConfig;
  private stopped = true;
  private backoffTimer: Timer | null = null;
  private wake: (() => void) | null = null;
  private running: Promise<void> | null = null;
  /** Checkpointed first dirty offsets, by `<topic>-<partition>`, for every log dir. */
  private checkpoints = new Map<string, number>();
  /** Log.truncationCount when the pass over each log began. */
  private truncationsAtStart = new Map<Log, number>();
  /** Per log: the earliest delete horizon of a tombstone its last pass kept. */
  private tombstoneHorizons = new Map<Log, Timestamp>();
  /** Per log: no cleaning before this time (a pass that could not progress). */
  private retryAfter = new Map<Log, number>();
  private sliceStartMs = 0;
  /** Passes finished since start-up (tests and metrics). */
  passes = 0;

  constructor(
    private readonly platform: Platform,
    private readonly logDirs: readonly string[],
    private readonly logs: () => Iterable<Log>,
    config: Partial<CleanerConfig>,
    private readonly logger: Logger,
    /** Told of an I/O error under a log dir (the LogManager takes the dir offline). */
    private readonly onIoError: (logDir: string, err: Error) => void = () => {},
  ) {
    const c = { ...cleanerConfigDefaults, ...config };
    c.decompressedBytesMax = Math.min(c.decompressedBytesMax, cleanerDecompressedBytesMax);
    this.config = c;
  }

  get enabled(): boolean {
    return this.config.enable && this.config.threads > 0;
  }

  /** Reads the checkpoints and, when enabled, starts cleaning in the background. */
  startup(): void {
    this.loadCheckpoints();
    if (!this.enabled || !this.stopped) return;
    this.stopped = false;
    this.running = this.loop();
    this.logger.info({ dedupeBufferBytes: this.config.dedupeBufferBytes, backoffMs: this.config.backoffMs }, "log cleaner started");
  }

  /**
   * Stops cleaning: a pass under way stops at its next yield and leaves at most `.cleaned` files,
   * removed then or at the next start-up. The returned promise settles once it has stopped.
   */
  shutdown(): Promise<void> {
    this.stopped = true;
    this.backoffTimer?.cancel();
    this.backoffTimer = null;
    this.wake?.();
    return this.running ?? Promise.resolve();
  }

  /** The checkpointed first dirty offset of a log, if any. */
  checkpointOf(log: Log): number | undefined {
    return this.checkpoints.get(key(log));
  }

  /**
   * The log was truncated to end at offset (Kafka's maybeTruncateCheckpoint): a checkpoint past it
   * moves back to it, so what is appended there again counts as dirty. Written at once.
   */
  maybeTruncateCheckpoint(log: Log, offset: number): void {
    const checkpoint = this.checkpoints.get(key(log));
    if (checkpoint === undefined || checkpoint <= offset) return;
    this.checkpoints.set(key(log), offset);
    try {
      this.writeCheckpoint(log.logDir);
    } catch (e) {
      if (!isIoError(e)) throw e;
      this.onIoError(log.logDir, e);
    }
  }

  /** Drops a deleted log's checkpoint (written out with the next pass in its dir). */
  forget(topic: string, partition: number): void {
    this.checkpoints.delete(`${topic}-${partition}`);
    for (const l of [...this.tombstoneHorizons.keys(), ...this.retryAfter.keys()]) {
      if (l.topic === topic && l.partition === partition) {
        this.tombstoneHorizons.delete(l);
        this.retryAfter.delete(l);
      }
    }
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let progressed = false;
      try {
        progressed = (await this.cleanFilthiestLog()) !== null;
      } catch (e) {
        this.logger.error({ err: (e as Error).stack }, "log cleaner pass failed");
      }
      if (!progressed && !this.stopped) await this.sleep(this.config.backoffMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = () => {
        this.wake = null;
        resolve();
      };
      this.backoffTimer = this.platform.clock.setTimeout(() => this.wake?.(), Math.max(1, ms));
    });
  }

  /** Cuts the current backoff short (tests; a config change could, too). */
  wakeUp(): void {
    this.backoffTimer?.cancel();
    this.wake?.();
  }

  private loadCheckpoints(): void {
    for (const dir of this.logDirs) {
      let entries: CheckpointEntries;
      try {
        entries = new OffsetCheckpointFile(this.platform, `${dir}/${CleanerOffsetCheckpointFile}`).read();
      } catch (e) {
        this.logger.warn({ dir, err: (e as Error).message }, "cannot read cleaner-offset-checkpoint; cleaning those logs from their start");
        continue;
      }
      for (const [k, e] of entries) this.checkpoints.set(k, e.offset);
    }
  }

  /** Rewrites the checkpoint file of one log dir: every live log of the dir that has an entry. */
  private writeCheckpoint(dir: string): void {
    const entries: { topic: string; partition: number; offset: number }[] = [];
    for (const log of this.logs()) {
      const offset = this.checkpoints.get(key(log));
      if (offset !== undefined && log.logDir === dir) entries.push({ topic: log.topic, partition: log.partition, offset });
    }
    new OffsetCheckpointFile(this.platform, `${dir}/${CleanerOffsetCheckpointFile}`).write(entries);
  }

  // ---- choosing ------------------------------------------------------------------------------

  /** Whether the log's cleanup.policy includes compact. */
  static isCompacted(log: Log): boolean {
    return hasCleanupPolicy(log.config.cleanupPolicy, "compact");
  }

  /** The log's cleanable range and dirtiness at nowMs (Kafka's cleanableOffsets and LogToClean). */
  logToClean(log: Log, nowMs: number): LogToClean {
    const segments = log.logSegments;
    const logStart = log.logStartOffset;
    let firstDirty = this.checkpoints.get(key(log)) ?? logStart;
    if (firstDirty < logStart || firstDirty > log.logEndOffset) firstDirty = logStart;
    const minLagMs = Math.max(0, log.config.minCompactionLagMs);
    const maxLagMs = Math.max(0, log.config.maxCompactionLagMs);
    let firstUncleanable = segments[segments.length - 1].baseOffset;
    let earliestDirtyTimestamp: Timestamp = Number.MAX_SAFE_INTEGER;
    for (let i = 0; i < segments.length - 1; i++) {
      const seg = segments[i];
      const end = segments[i + 1].baseOffset;
      if (end <= firstDirty) continue;
      if (end > log.lastStableOffset || (minLagMs > 0 && seg.largestTimestampMs() > nowMs - minLagMs)) {
        firstUncleanable = Math.max(firstDirty, seg.baseOffset);
        break;
      }
      const first = seg.readHeader(0)?.maxTimestamp ?? -1;
      if (first > 0) earliestDirtyTimestamp = minTimestamp(earliestDirtyTimestamp, first);
    }
    let cleanBytes = 0;
    let cleanableBytes = 0;
    for (let i = 0; i < segments.length - 1; i++) {
      const seg = segments[i];
      if (seg.baseOffset < firstDirty) cleanBytes += seg.sizeBytes;
      const end = segments[i + 1].baseOffset;
      if (end > firstDirty && seg.baseOffset < firstUncleanable && firstDirty < firstUncleanable) cleanableBytes += seg.sizeBytes;
    }
    const totalBytes = cleanBytes + cleanableBytes;
    const horizon = this.tombstoneHorizons.get(log);
    return {
      log,
      firstDirtyOffset: firstDirty,
      firstUncleanableOffset: firstUncleanable,
      cleanBytes,
      cleanableBytes,
      cleanableRatio: totalBytes === 0 ? 0 : cleanableBytes / totalBytes,
      needCompactionNow: earliestDirtyTimestamp < nowMs - maxLagMs,
      deleteHorizonDue: horizon !== undefined && horizon <= nowMs,
    };
  }

  /** Whether a pass over the log is due (Kafka's filter, plus the delete horizon). */
  static isCleanable(c: LogToClean): boolean {
    if (c.deleteHorizonDue) return true;
    if (c.cleanableBytes === 0) return false;
    return c.needCompactionNow || c.cleanableRatio > c.log.config.minCleanableDirtyRatio;
  }

  /**
   * One round of the cleaner (Kafka's tryCleanFilthiestLog): cleans the dirtiest cleanable log
   * and returns what the pass did, or null when no log was cleanable or the pass made no progress.
   */
  async cleanFilthiestLog(nowMs = this.platform.clock.nowMs()): Promise<CleanResult | null> {
    let best: LogToClean | null = null;
    for (const log of this.logs()) {
      if (log.isClosed || !LogCleaner.isCompacted(log)) continue;
      if ((this.retryAfter.get(log) ?? 0) > nowMs) continue;
      const c = this.logToClean(log, nowMs);
      if (!LogCleaner.isCleanable(c)) continue;
      if (best === null || c.cleanableRatio > best.cleanableRatio) best = c;
    }
    if (best === null) return null;
    let result: CleanResult | null = null;
    try {
      result = await this.cleanLog(best.log, nowMs);
    } finally {
      // A pass that could not progress, or failed (a bug, logged by the loop), is not retried at
      // once: the other logs get their turn (Kafka marks such a partition uncleanable).
      if (result === null) this.retryAfter.set(best.log, nowMs + this.config.backoffMs);
    }
    return result;
  }

  // ---- one pass ------------------------------------------------------------------------------

  /**
   * Cleans the log once, whatever its dirty ratio (Kafka's Cleaner.clean), and moves its
   * checkpoint. Null when the pass could not start or progress (aborted, or the first dirty batch
   * alone does not fit the offset map).
   */
  async cleanLog(log: Log, nowMs = this.platform.clock.nowMs()): Promise<CleanResult | null> {
    this.truncationsAtStart.set(log, log.truncationCount);
    try {
      return await this.cleanLogOnce(log, nowMs);
    } finally {
      this.truncationsAtStart.delete(log);
    }
  }

  private async cleanLogOnce(log: Log, nowMs: number): Promise<CleanResult | null> {
    const started = this.platform.clock.monotonicMs();
    this.sliceStartMs = started;
    const range = this.logToClean(log, nowMs);
    const result: CleanResult = {
      topic: log.topic,
      partition: log.partition,
      firstDirtyOffset: range.firstDirtyOffset,
      endOffset: range.firstDirtyOffset,
      mapFull: false,
      segmentsCleaned: 0,
      groups: 0,
      bytesRead: 0,
      bytesWritten: 0,
      recordsRead: 0,
      recordsRetained: 0,
      mapKeys: 0,
      unreadableBatches: 0,
      durationMs: 0,
    };
    const state = new PassState(nowMs, log.config.deleteRetentionMs);
    try {
      const map = new OffsetMap(this.config.dedupeBufferBytes, this.config.dedupeBufferLoadFactor);
      const built = await this.buildOffsetMap(log, range.firstDirtyOffset, range.firstUncleanableOffset, map, result);
      if (built === null) return null;
      result.endOffset = built;
      result.mapKeys = map.size;
      const segments = log.logSegments;
      const toClean = segments.slice(0, -1).filter((s) => s.baseOffset < result.endOffset);
      for (const group of groupSegmentsBySize(toClean, log.config.segmentBytes, log.config.segmentIndexBytes, log.logSegments)) {
        await this.cleanSegments(log, group, map, state, result);
        result.groups++;
        result.segmentsCleaned += group.length;
      }
    } catch (e) {
      if (e instanceof CleaningAborted) {
        this.logger.info({ topic: log.topic, partition: log.partition, reason: e.message }, "log cleaning aborted");
        return null;
      }
      if (e instanceof KafkaStorageError) return null; // the log reported it: its dir is offline
      if (isIoError(e)) {
        this.logger.warn({ topic: log.topic, partition: log.partition, err: e.message }, "log cleaning failed on an I/O error");
        this.onIoError(log.logDir, e);
        return null;
      }
      throw e;
    }
    this.checkpoints.set(key(log), result.endOffset);
    try {
      this.writeCheckpoint(log.logDir);
    } catch (e) {
      if (!isIoError(e)) throw e;
      this.onIoError(log.logDir, e);
    }
    if (state.earliestHorizonMs !== null) this.tombstoneHorizons.set(log, state.earliestHorizonMs);
    else this.tombstoneHorizons.delete(log);
    this.retryAfter.delete(log);
    this.passes++;
    result.durationMs = this.platform.clock.monotonicMs() - started;
    this.logger.info({
      ...result,
      mbPerSec: result.durationMs > 0 ? Math.round(result.bytesRead / 1e3 / result.durationMs * 10) / 10 : null,
    }, "cleaned log");
    return result;
  }

  /**
   * Puts the keys of [firstDirty, firstUncleanable) in the map, batch by batch, stopping before a
   * batch whose records might not fit. Returns the offset the dirty section ends at (the new
   * checkpoint), or null when not even the first batch fits.
   */
  private async buildOffsetMap(log: Log, firstDirty: number, firstUncleanable: number, map: OffsetMap, result: CleanResult): Promise<number | null> {
    const segments = log.logSegments.slice();
    let end = firstDirty;
    const txns = new CleanedTransactionMetadata();
    for (let i = 0; i < segments.length - 1; i++) {
      const seg = segments[i];
      if (seg.baseOffset >= firstUncleanable) break;
      if (segments[i + 1].baseOffset <= firstDirty) continue;
      txns.addAbortedTransactions(log, seg.baseOffset, segments[i + 1].baseOffset);
      const from = seg.baseOffset < firstDirty ? Math.max(0, seg.positionOf(firstDirty)) : 0;
      let full = false;
      await this.forEachBatch(log, seg, from, (buf, pos, size) => {
        const base = int64At(buf, pos + BatchField.baseOffset);
        const last = base + int32At(buf, pos + BatchField.lastOffsetDelta);
        if (last < firstDirty) return true;
        if (base >= firstUncleanable) return false;
        // The records read, not the header's count (a client's batch may claim any count);
        // none of an aborted transaction's, nor a marker's.
        const counted = (int16At(buf, pos + BatchField.attributes) & 0x30) === 0 || txnBatchVerdict(txns, log, buf, pos, size, null) !== null;
        const records = counted ? this.readable(buf, pos, size) : null;
        if (records !== null && !map.fits(records.length)) {
          full = true;
          return false;
        }
        if (records !== null) {
          for (const r of records) if (r.key !== null && r.offset >= firstDirty) map.put(r.key, r.offset);
        }
        end = last + 1;
        return true;
      });
      if (full) {
        result.mapFull = true;
        if (end === firstDirty) {
          this.logger.warn(
            { topic: log.topic, partition: log.partition, offset: firstDirty, dedupeBufferBytes: this.config.dedupeBufferBytes },
            "the first dirty batch has more records than log.cleaner.dedupe.buffer.size can hold; not cleaning this log",
          );
          return null;
        }
        return end;
      }
    }
    return Math.max(end, firstUncleanable);
  }

  /**
   * The batch's records when the cleaner may look inside it, else null (kept as is). Records whose
   * offset deltas do not increase within [0, lastOffsetDelta] (a client's batch accepted before
   * they were checked) could not be rebuilt with their offsets: such a batch is kept as is too.
   */
  private readable(buf: Uint8Array, pos: number, size: number): BatchRecord[] | null {
    if (buf[pos + BatchField.magic] !== 2) return null;
    const attributes = int16At(buf, pos + BatchField.attributes);
    if ((attributes & 0x20) !== 0) return null; // control
    if (!batchCrcValid(buf, pos, size)) return null;
    const decoded = readBatchRecords(buf.subarray(pos, pos + size), 0, this.config.decompressedBytesMax);
    if (!decoded.ok) return null;
    const base = int64At(buf, pos + BatchField.baseOffset);
    const lastOffset = base + int32At(buf, pos + BatchField.lastOffsetDelta);
    let prev = base - 1;
    for (const r of decoded.records) {
      if (r.offset <= prev || r.offset > lastOffset) return null;
      prev = r.offset;
    }
    return decoded.records;
  }

  /** Rewrites one group of segments into one `.cleaned` segment, then swaps it in. */
  private async cleanSegments(log: Log, group: LogSegment[], map: OffsetMap, state: PassState, result: CleanResult): Promise<void> {
    const base = group[0].baseOffset;
    for (const ext of [".log", ".index", ".timeindex", ".txnindex"]) this.platform.fs.remove(`${log.dir}/${segmentFileName(base, ext)}${CleanedFileSuffix}`);
    const cleaned = LogSegment.create(this.platform, log.dir, base, log.config, CleanedFileSuffix);
    state.txns.cleanedIndex = cleaned.txnIndex;
    try {
      const out = new OutputBuffer(cleaned, this.config.ioBufferBytes);
      for (const seg of group) {
        result.bytesRead += seg.sizeBytes;
        const next = log.logSegments[log.logSegments.indexOf(seg) + 1];
        state.txns.addAbortedTransactions(log, seg.baseOffset, next?.baseOffset ?? seg.nextOffset);
        await this.forEachBatch(log, seg, 0, (buf, pos, size) => {
          const kept = this.filterBatch(log, buf, pos, size, map, state, result);
          if (kept !== null) out.add(kept);
          return true;
        });
      }
      out.flush();
      cleaned.onBecomeInactive();
      cleaned.flush();
      result.bytesWritten += cleaned.sizeBytes;
      await this.maybeYield(log);
    } catch (e) {
      cleaned.remove();
      throw e;
    }
    // From here the swap renames the files: an error part way must leave them for the next
    // start-up to finish the swap (swap.ts), never remove them. False means nothing was renamed.
    if (!log.replaceSegments(cleaned, group)) {
      cleaned.remove();
      throw new CleaningAborted("the log's segments changed while they were cleaned");
    }
  }

  /**
   * The bytes to write for one batch (the batch itself, a rebuilt one), or null to drop it. See
   * the file comment for the rules.
   */
  private filterBatch(log: Log, buf: Uint8Array, pos: number, size: number, map: OffsetMap, state: PassState, result: CleanResult): Uint8Array | null {
    if ((int16At(buf, pos + BatchField.attributes) & 0x30) !== 0) {
      const verdict = txnBatchVerdict(state.txns, log, buf, pos, size, state);
      if (verdict !== "records") return verdict;
    }
    const batch = buf.subarray(pos, pos + size);
    const records = this.readable(buf, pos, size);
    if (records === null) {
      result.unreadableBatches++;
      this.logger.warn(
        { topic: log.topic, partition: log.partition, baseOffset: int64At(buf, pos + BatchField.baseOffset), bytes: size },
        "kept a batch whose records the cleaner does not read (corrupt, or past the decompression bound)",
      );
      return batch;
    }
    const attributes = int16At(buf, pos + BatchField.attributes);
    const hasHorizon = (attributes & DeleteHorizonAttribute) !== 0;
    // Any int64: a client may have set bit 6 itself (Kafka's produce path does not refuse it).
    const horizonMs: Timestamp = hasHorizon ? timestampAt(buf, pos + BatchField.baseTimestamp) : -1;
    const retained: BatchRecord[] = [];
    let keptTombstone = false;
    for (const r of records) {
      result.recordsRead++;
      if (r.key !== null) {
        if (r.offset < map.get(r.key)) continue; // a later record has this key
        if (r.value === null) {
          if (hasHorizon && state.nowMs >= horizonMs) continue; // the tombstone's time is up
          keptTombstone = true;
        }
      }
      retained.push(r);
    }
    result.recordsRetained += retained.length;
    if (retained.length === 0) return isProducersLastBatch(log, buf, pos) ? batch : null;
    const newHorizon = keptTombstone && !hasHorizon;
    const freshHorizon = addTimestamp(state.nowMs, state.deleteRetentionMs);
    if (keptTombstone) state.noteHorizon(hasHorizon ? horizonMs : freshHorizon);
    if (retained.length === records.length && !newHorizon) return batch;
    const baseOffset = int64At(buf, pos + BatchField.baseOffset);
    const horizon = hasHorizon ? horizonMs : newHorizon ? freshHorizon : null;
    const base = horizon === null ? null : BigInt(horizon);
    const builder = new RecordBatchBuilder(base === null ? {} : { baseTimestamp: base });
    // Timestamps as int64s (the record reader adds base and delta without wrapping, Kafka's Long
    // arithmetic wraps); the max of the retained ones as Kafka's builder takes it (from -1).
    let maxTs = -1n;
    let deltaBase = base;
    for (const r of retained) {
      const ts = BigInt(timestampFromBigInt(r.timestamp));
      if (ts > maxTs) maxTs = ts;
      // A delta past int64 (from the horizon, or between 2^63-1 and a negative timestamp) is
      // written wrapped, as Kafka writes it; the builder takes the delta as timestamp - base
      // (base: the horizon, else the first record's), so it is handed base + wrapped delta.
      if (deltaBase === null) deltaBase = ts;
      builder.append(deltaBase + BigInt.asIntN(64, ts - deltaBase), r.key, r.value, r.headers, r.offset - baseOffset);
    }
    const dv = new DataView(buf.buffer, buf.byteOffset + pos, size);
    const logAppendTime = (attributes & 0x08) !== 0;
    return builder.build(attributes & 7, {
      baseOffset: BigInt(baseOffset),
      partitionLeaderEpoch: dv.getInt32(BatchField.partitionLeaderEpoch),
      attributeFlags: (attributes & ~7 & ~DeleteHorizonAttribute) | (horizon === null ? 0 : DeleteHorizonAttribute),
      lastOffsetDelta: dv.getInt32(BatchField.lastOffsetDelta),
      maxTimestamp: logAppendTime ? dv.getBigInt64(BatchField.maxTimestamp) : maxTs,
      producerId: dv.getBigInt64(BatchField.producerId),
      producerEpoch: dv.getInt16(BatchField.producerEpoch),
      baseSequence: dv.getInt32(BatchField.baseSequence),
    });
  }

  /**
   * Calls visit for each batch of the segment from `position`, reading io-buffer-sized chunks of
   * whole batches (a bigger batch is read alone) and yielding to the event loop once a slice of
   * cleanerSliceMs is over (checked after each batch);
   * visit returns false to stop.
   */
  private async forEachBatch(log: Log, seg: LogSegment, position: number, visit: (buf: Uint8Array, pos: number, size: number) => boolean): Promise<void> {
    const end = seg.sizeBytes;
    while (position < end) {
      const chunk = seg.read(position, this.config.ioBufferBytes, true, end);
      if (chunk.length === 0) return;
      for (let pos = 0; pos + recordBatchHeaderBytes <= chunk.length;) {
        const size = batchLogOverhead + int32At(chunk, pos + BatchField.batchLength);
        if (!visit(chunk, pos, size)) return;
        pos += size;
        // Compressed batches take long to filter: the slice may end inside a chunk.
        if (this.platform.clock.monotonicMs() - this.sliceStartMs >= cleanerSliceMs) await this.maybeYield(log);
      }
      position += chunk.length;
      await this.maybeYield(log);
    }
  }

  /** Yields to the event loop once the current slice has run cleanerSliceMs; aborts if told to. */
  private async maybeYield(log: Log): Promise<void> {
    if (this.platform.clock.monotonicMs() - this.sliceStartMs >= cleanerSliceMs) {
      await new Promise<void>((resolve) => this.platform.clock.setTimeout(resolve, 0));
      this.sliceStartMs = this.platform.clock.monotonicMs();
    }
    if (this.stopped && this.running !== null) throw new CleaningAborted("the cleaner is shutting down");
    if (log.isClosed) throw new CleaningAborted("the log was closed");
    // A truncation may have removed the records that made older ones obsolete (Kafka aborts
    // cleaning around a truncation for the same reason).
    if (log.truncationCount !== this.truncationsAtStart.get(log)) throw new CleaningAborted("the log was truncated");
  }
}

/** Per-pass values the batch filter needs. */
class PassState {
  /** The earliest delete horizon of a kept tombstone, null when none was kept. */
  earliestHorizonMs: Timestamp | null = null;
  /** The transactions open at the batch being filtered (cleaner_txn.ts). */
  readonly txns = new CleanedTransactionMetadata();
  constructor(readonly nowMs: number, readonly deleteRetentionMs: number) {}
  noteHorizon(ms: Timestamp): void {
    if (this.earliestHorizonMs === null || ms < this.earliestHorizonMs) this.earliestHorizonMs = ms;
  }
}

/**
 * Batches gathered for the cleaned segment, written about ioBufferBytes at a time and fsynced every
 * cleanerSyncIntervalBytes (short fsyncs between the cleaner's yields, not one long one at the end).
 */
class OutputBuffer {
  private parts: Uint8Array[] = [];
  private bytes = 0;
  private unsyncedBytes = 0;
  constructor(private readonly segment: LogSegment, private readonly flushBytes: number) {}

  add(batch: Uint8Array): void {
    this.parts.push(batch);
    this.bytes += batch.length;
    if (this.bytes >= this.flushBytes) this.flush();
  }

  flush(): void {
    if (this.parts.length === 0) return;
    const all = new Uint8Array(this.bytes);
    let at = 0;
    for (const p of this.parts) {
      all.set(p, at);
      at += p.length;
    }
    const first = int64At(all, BatchField.baseOffset);
    const lastAt = at - this.parts[this.parts.length - 1].length;
    const last = int64At(all, lastAt + BatchField.baseOffset) + int32At(all, lastAt + BatchField.lastOffsetDelta);
    this.segment.append(all, first, last);
    this.unsyncedBytes += this.bytes;
    this.parts = [];
    this.bytes = 0;
    if (this.unsyncedBytes >= cleanerSyncIntervalBytes) {
      this.segment.flush();
      this.unsyncedBytes = 0;
    }
  }
}

/**
 * Kafka's groupSegmentsBySize: consecutive segments whose sizes add up to at most maxBytes, whose
 * index entries fit one index of maxIndexBytes, and whose offsets stay within 2^31 of the group's
 * base (index entries hold relative offsets as int32). `all` is the log's segment list, for the
 * offset that ends each segment (the next one's base).
 */
export function groupSegmentsBySize(segments: readonly LogSegment[], maxBytes: number, maxIndexBytes: number, all: readonly LogSegment[]): LogSegment[][] {
  const endOf = (s: LogSegment) => {
    const i = all.indexOf(s);
    return i >= 0 && i + 1 < all.length ? all[i + 1].baseOffset : s.nextOffset;
  };
  const groups: LogSegment[][] = [];
  let i = 0;
  while (i < segments.length) {
    const group = [segments[i]];
    let bytes = segments[i].sizeBytes;
    let indexEntries = segments[i].index.entryCount;
    let timeEntries = segments[i].timeIndex.entryCount;
    i++;
    while (i < segments.length) {
      const next = segments[i];
      if (bytes + next.sizeBytes > maxBytes) break;
      if ((indexEntries + next.index.entryCount + 1) * 8 > maxIndexBytes) break;
      if ((timeEntries + next.timeIndex.entryCount + 1) * 12 > maxIndexBytes) break;
      if (next.sizeBytes > 0 && endOf(next) - 1 - group[0].baseOffset > segmentRelativeOffsetMax) break;
      group.push(next);
      bytes += next.sizeBytes;
      indexEntries += next.index.entryCount;
      timeEntries += next.timeIndex.entryCount;
      i++;
    }
    groups.push(group);
  }
  return groups;
}

/**
 * Whether the batch is the last one of a producer that still has state: kept even when every
 * record in it is obsolete, so the state rebuilds from the log after compaction (Kafka's
 * isBatchLastRecordOfProducer). Kafka keeps it as an empty batch; strand keeps it whole (its
 * batch builder makes no empty batch), which leaves older values of its keys readable before
 * the newer ones, never after.
 */
function isProducersLastBatch(log: Log, buf: Uint8Array, pos: number): boolean {
  if (int32At(buf, pos + BatchField.producerId) < 0) return false;
  const dv = new DataView(buf.buffer, buf.byteOffset + pos);
  const last = log.producerState.lastEntry(dv.getBigInt64(BatchField.producerId))?.batches.at(-1);
  return last !== undefined && last.lastOffset === int64At(buf, pos + BatchField.baseOffset) + dv.getInt32(BatchField.lastOffsetDelta);
}

function key(log: Log): string {
  return `${log.topic}-${log.partition}`;
}

function int16At(b: Uint8Array, i: number): number {
  return ((b[i] << 24) | (b[i + 1] << 16)) >> 16;
}

function int32At(b: Uint8Array, i: number): number {
  return (b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3];
}

/** Big-endian int64 as a number (offsets and timestamps are safe integers). */
function int64At(b: Uint8Array, i: number): number {
  return int32At(b, i) * 0x1_0000_0000 + (int32At(b, i + 4) >>> 0);
}
