// LogSegment: one `<20-digit baseOffset>.log` file of whole record batches, stored exactly as the
// wire carries them (base offset and leader epoch patched), with its sparse OffsetIndex
// (`.index`) and TimeIndex (`.timeindex`).
//
// Invariants:
// - The file is a concatenation of whole, valid batches; the next append goes at `sizeBytes`.
// - Every offset in the segment is >= baseOffset, and offsets increase batch by batch.
// - nextOffset is one past the last offset stored (baseOffset when the segment is empty), or more
//   after a truncation into a gap between batches (truncateToOffset); every cut (recovery, a
//   torn tail, a follower's truncation) falls on a batch boundary, with both indexes cut to match.
// - A segment being deleted has its files renamed `<name>.deleted` first (Kafka's suffix) and
//   keeps its open handles until removed, so a read already under way completes; `.deleted` files
//   found at start-up are leftovers of a stop before the removal and are removed.
// - A segment the cleaner writes starts as `<name>.cleaned` files and is renamed `.swap`, then to
//   its final names (swap.ts, Log.replaceSegments): create() and changeFileSuffixes() take suffixes.
// - recover() is the one place that rebuilds a segment's indexes from its log (crash recovery, a
//   missing index): every kind of index hooks its rebuild into it, through indexBatch().
// - Both indexes get their entries at the same points: indexBatch() runs for every batch, appended
//   or recovered, and adds an entry to each once more than index.interval.bytes were appended
//   since the last (Kafka's cadence); the time index only when the max timestamp grew.
// - maxTimestampSoFar is the largest batch max timestamp in the file (-1 when none), known without
//   reading the file: the time index's last entry holds it at close, roll and end of recovery
//   (Kafka's rule), and open folds in the few batches after the last offset-index entry. A batch's
//   timestamp is any int64 a client sent (2^63-1, negatives below -1): a Timestamp (timestamp.ts),
//   exact, compared without arithmetic.
// - A missing or damaged `.timeindex` next to a non-empty log makes open() recover the segment.

import type { FileHandle, Platform } from "../platform/mod.ts";
import { BatchField, batchCrcValid, batchLogOverhead, readBatchRecords } from "../protocol/mod.ts";
import {
  assert,
  crc32c,
  indexWriteBufferEntries,
  recordBatchHeaderBytes,
  recoveryReadChunkBytes,
  segmentReadChunkBytesMax,
  segmentRelativeOffsetMax,
} from "../util/mod.ts";
import { type LogConfig, randomSegmentJitterMs } from "./log_config.ts";
import { OffsetIndex } from "./offset_index.ts";
import { TimeIndex } from "./time_index.ts";
import { TransactionIndex, TxnIndexSuffix } from "./txn_index.ts";
import { batchMaxTimestampAt, NO_TIMESTAMP, type Timestamp, timestampDifferenceMs, timestampFromBigInt, timestampFromView } from "./timestamp.ts";

export function segmentFileName(baseOffset: number, suffix: string): string {
  return String(baseOffset).padStart(20, "0") + suffix;
}

/** Suffix a segment's files take between their deletion and their removal (Kafka's). */
export const DeletedFileSuffix = ".deleted";

/** Where crash recovery of one segment stopped (Kafka's LogSegment.recover result). */
export interface RecoverResult {
  /** Bytes cut off after the last valid batch (0 when the whole file was valid). */
  truncatedBytes: number;
  /** Why the scan stopped before the end of the file, or null when it reached it. */
  reason: string | null;
}

/** A record's timestamp and offset, as ListOffsets answers them. */
export interface TimestampOffset {
  timestamp: Timestamp;
  offset: number;
}

/** Header fields of one stored batch, read from disk. */
export interface BatchHeader {
  position: number;
  size: number;
  baseOffset: number;
  lastOffset: number;
  magic: number;
  maxTimestamp: Timestamp;
  /** partitionLeaderEpoch: the epoch of the leader that appended the batch (-1 when none). */
  leaderEpoch: number;
}

export interface SegmentConfig {
  indexIntervalBytes: number;
  segmentIndexBytes: number;
}

/** The batch about to be appended: its size, last offset and max timestamp. */
export interface RollIncoming {
  bytes: number;
  lastOffset: number;
  maxTimestamp: Timestamp;
}

export class LogSegment {
  private bytesSinceIndexEntry = 0;
  /** "" while live, DeletedFileSuffix once deleted and waiting for removal (cleaner: `.cleaned`, `.swap`). */
  private fileSuffix = "";
  /** Largest batch max timestamp in the segment, -1 when none. */
  private maxTimestampSoFar: Timestamp = NO_TIMESTAMP;
  /** Last offset of the first batch carrying maxTimestampSoFar (Kafka's shallow offset). */
  private offsetOfMaxTimestampSoFar = -1;
  private headerBuf = new Uint8Array(recordBatchHeaderBytes);
  private headerView = new DataView(this.headerBuf.buffer);
  /** `<base>.txnindex` (txn_index.ts), made on first use. */
  private _txnIndex: TransactionIndex | null = null;
  /** The first batch's max timestamp (timeWaitedForRoll); null until an append or a read sets it. */
  private rollingBasedTimestamp: Timestamp | null = null;
  /** How much earlier than segment.ms this segment rolls (segment.jitter.ms), drawn on first use. */
  private rollJitterMs: number | null = null;

  private constructor(
    private readonly platform: Platform,
    readonly dir: string,
    readonly baseOffset: number,
    private readonly log: FileHandle,
    readonly index: OffsetIndex,
    readonly timeIndex: TimeIndex,
    private readonly config: SegmentConfig,
    private _sizeBytes: number,
    private _nextOffset: number,
    /** Wall-clock time of the segment's creation (or its truncation to empty), for segment.ms rolls. */
    private created: number,
  ) {}

  /** Bytes of whole batches in the file: the next append goes here. */
  get sizeBytes(): number {
    return this._sizeBytes;
  }
  /** One past the last offset stored (see the header). */
  get nextOffset(): number {
    return this._nextOffset;
  }
  get createdMs(): number {
    return this.created;
  }

  /**
   * Kafka's LogSegment.shouldRoll, asked before an append of `incoming`: roll when the batch would
   * not fit in segment.bytes, the segment is older than segment.ms less its jitter (drawn once, its
   * rollJitterMs), an index is full, or the batch's last offset is past the int32 relative bound.
   * An empty segment takes any append it can index.
   */
  shouldRoll(config: Required<LogConfig>, incoming: RollIncoming, nowMs: number): boolean {
    const offsetOverflow = incoming.lastOffset - this.baseOffset > segmentRelativeOffsetMax;
    if (this._sizeBytes === 0 || offsetOverflow) return offsetOverflow;
    this.rollJitterMs ??= randomSegmentJitterMs(config, this.platform);
    const old = this.timeWaitedForRoll(nowMs, incoming.maxTimestamp) > config.segmentMs - this.rollJitterMs;
    return old || this._sizeBytes + incoming.bytes > config.segmentBytes || this.index.isFull || this.timeIndex.isFull;
  }

  /**
   * Kafka's LogSegment.timeWaitedForRoll: the incoming batch's max timestamp less the first
   * batch's (rollingBasedTimestamp, read from the file once after a restart, so a reopened segment
   * keeps its age, not the file's mtime), or, when the first batch carries no timestamp, the
   * wall-clock time since the segment was created.
   */
  timeWaitedForRoll(nowMs: number, incomingMaxTimestamp: Timestamp): number {
    if (this.rollingBasedTimestamp === null && this.sizeBytes > 0) {
      this.rollingBasedTimestamp = this.readHeader(0)?.maxTimestamp ?? NO_TIMESTAMP;
    }
    const first = this.rollingBasedTimestamp ?? NO_TIMESTAMP;
    return first >= 0 ? timestampDifferenceMs(incomingMaxTimestamp, first) : nowMs - this.created;
  }

  /** The aborted transactions whose markers are in this segment (`.txnindex`). */
  get txnIndex(): TransactionIndex {
    return this._txnIndex ??= new TransactionIndex(this.platform, `${this.dir}/${segmentFileName(this.baseOffset, TxnIndexSuffix)}${this.fileSuffix}`);
  }

  get logPath(): string {
    return `${this.dir}/${segmentFileName(this.baseOffset, ".log")}${this.fileSuffix}`;
  }

  /**
   * A new, empty segment. Its files carry `fileSuffix` when one is given: the cleaner writes a
   * segment as `.cleaned` files and renames them into place (see cleaner.ts, swap.ts).
   */
  static create(platform: Platform, dir: string, baseOffset: number, config: SegmentConfig, fileSuffix = ""): LogSegment {
    const logPath = `${dir}/${segmentFileName(baseOffset, ".log")}${fileSuffix}`;
    const log = platform.fs.open(logPath, "create-new");
    const indexPath = `${dir}/${segmentFileName(baseOffset, ".index")}${fileSuffix}`;
    const timeIndexPath = `${dir}/${segmentFileName(baseOffset, ".timeindex")}${fileSuffix}`;
    const opened: { closeHandlers(): void }[] = [];
    try {
      // Stale indexes from an earlier, removed segment.
      platform.fs.remove(indexPath);
      platform.fs.remove(timeIndexPath);
      platform.fs.remove(`${dir}/${segmentFileName(baseOffset, TxnIndexSuffix)}${fileSuffix}`);
      const index = OffsetIndex.open(platform, indexPath, baseOffset, config.segmentIndexBytes, 0);
      opened.push(index);
      const timeIndex = TimeIndex.open(platform, timeIndexPath, baseOffset, config.segmentIndexBytes, baseOffset);
      const seg = new LogSegment(platform, dir, baseOffset, log, index, timeIndex, config, 0, baseOffset, platform.clock.nowMs());
      seg.fileSuffix = fileSuffix;
      return seg;
    } catch (e) {
      // Out of descriptors (EMFILE) between two opens: the files already opened are closed and the
      // new `.log` removed, so a retried roll can create it again ("create-new") and nothing leaks.
      for (const f of opened) f.closeHandlers();
      closeQuietly(log);
      try {
        platform.fs.remove(logPath);
      } catch {
        // The error being thrown says what went wrong; start-up removes an empty stray segment.
      }
      throw e;
    }
  }

  /**
   * A new, empty segment whose three files its caller has just created empty, off the event loop
   * (LogManager.prepareNewLogs): `log` is its open `.log`. No I/O here.
   */
  static created(platform: Platform, dir: string, baseOffset: number, config: SegmentConfig, log: FileHandle): LogSegment {
    const index = OffsetIndex.created(platform, `${dir}/${segmentFileName(baseOffset, ".index")}`, baseOffset, config.segmentIndexBytes);
    const timeIndex = TimeIndex.created(platform, `${dir}/${segmentFileName(baseOffset, ".timeindex")}`, baseOffset, config.segmentIndexBytes);
    return new LogSegment(platform, dir, baseOffset, log, index, timeIndex, config, 0, baseOffset, platform.clock.nowMs());
  }

  /**
   * Opens an existing segment. Batches after the last index entry are walked to find the next
   * offset; the first one that does not look whole or fails its CRC32C (a torn tail) is cut off,
   * with everything after it, and the count of bytes cut is returned in `truncatedBytes`. A
   * missing or damaged `.timeindex` makes it recover() the whole segment instead (Kafka's answer to
   * a corrupt index), which rebuilds both indexes; `onRecoveredBatch` then sees every valid batch.
   */
  static open(
    platform: Platform,
    dir: string,
    baseOffset: number,
    config: SegmentConfig,
    recovering = false,
    onRecoveredBatch?: (h: BatchHeader) => void,
  ) {
    const log = platform.fs.open(`${dir}/${segmentFileName(baseOffset, ".log")}`, "readwrite");
    let index: OffsetIndex | null = null;
    let timeIndex: TimeIndex;
    let seg: LogSegment;
    let hadTimeIndex: boolean;
    try {
      const fileSize = log.size();
      index = OffsetIndex.open(
        platform,
        `${dir}/${segmentFileName(baseOffset, ".index")}`,
        baseOffset,
        config.segmentIndexBytes,
        fileSize,
      );
      const timeIndexPath = `${dir}/${segmentFileName(baseOffset, ".timeindex")}`;
      hadTimeIndex = platform.fs.stat(timeIndexPath) !== null;
      // Entries past the log's end are dropped by truncateTo() once the tail walk has found it.
      timeIndex = TimeIndex.open(platform, timeIndexPath, baseOffset, config.segmentIndexBytes, Number.MAX_SAFE_INTEGER);
      const mtime = platform.fs.stat(`${dir}/${segmentFileName(baseOffset, ".log")}`)?.mtimeMs ?? platform.clock.nowMs();
      seg = new LogSegment(platform, dir, baseOffset, log, index, timeIndex, config, fileSize, baseOffset, mtime);
    } catch (e) {
      // Out of descriptors part way: close what was opened, so a retried load leaks nothing.
      index?.closeHandlers();
      closeQuietly(log);
      throw e;
    }
    const fileSize = seg.sizeBytes;
    // A segment about to be recovered is scanned whole by recover(); walking its tail here too
    // would read it twice.
    if (recovering) return { segment: seg, truncatedBytes: 0 };
    if (!hadTimeIndex && fileSize > 0) timeIndex.damaged = true;
    // An empty time index beside offset-index entries: the first index point saw the first
    // batch, whose timestamp would have made an entry if it had one.
    if (timeIndex.entryCount === 0 && index.entryCount > 0 && (seg.readHeader(0)?.maxTimestamp ?? -1) >= 0) timeIndex.damaged = true;
    if (timeIndex.damaged) return { segment: seg, truncatedBytes: seg.recover(onRecoveredBatch).truncatedBytes };
    const truncatedBytes = seg.recoverTail(index.lastPosition);
    // A time index naming offsets the log no longer holds (its file outlived the log's tail)
    // would give a max timestamp no batch carries, and later entries below its offset.
    if (timeIndex.entryCount > 0 && timeIndex.lastOffset >= seg.nextOffset) {
      return { segment: seg, truncatedBytes: truncatedBytes + seg.recover(onRecoveredBatch).truncatedBytes };
    }
    if (truncatedBytes === 0) seg.restoreMaxTimestamp(); // truncateTo() did it otherwise
    return { segment: seg, truncatedBytes };
  }

  /**
   * Sets maxTimestampSoFar from the time index's last entry and the batches from the last
   * offset-index entry on, which the time index may not cover yet (its closing entry is written
   * at close; a stop without one leaves the entries of the last index point).
   */
  private restoreMaxTimestamp(): void {
    this.maxTimestampSoFar = this.timeIndex.lastTimestamp;
    this.offsetOfMaxTimestampSoFar = this.timeIndex.entryCount === 0 ? -1 : this.timeIndex.lastOffset;
    for (let pos = this.index.lastPosition; ;) {
      const h = this.readHeader(pos);
      if (h === null) return;
      if (h.maxTimestamp > this.maxTimestampSoFar) {
        this.maxTimestampSoFar = h.maxTimestamp;
        this.offsetOfMaxTimestampSoFar = h.lastOffset;
      }
      pos += h.size;
    }
  }

  private recoverTail(from: number): number {
    let { pos, next } = this.walk(from);
    // The indexed batch itself is unreadable: the index is not to be trusted, so walk it all.
    if (pos === from && from > 0) ({ pos, next } = this.walk(0));
    this._nextOffset = next;
    const cut = this.sizeBytes - pos;
    if (cut > 0) this.truncateTo(pos, next);
    return cut;
  }

  private walk(from: number): { pos: number; next: number } {
    let pos = from;
    let next = this.baseOffset;
    let buf = new Uint8Array(0);
    for (;;) {
      const h = this.readHeader(pos);
      // Offsets must also stay indexable (relative offsets are int32), as recover() checks.
      if (h === null || h.baseOffset < next || h.lastOffset - this.baseOffset > segmentRelativeOffsetMax) return { pos, next };
      // A whole-looking batch may still be torn inside (its header reached the disk, a later page
      // did not): read it back and check its CRC32C, as Kafka's recovery does.
      if (buf.length < h.size) buf = new Uint8Array(Math.max(h.size, buf.length * 2));
      const batch = buf.subarray(0, h.size);
      if (this.log.readAt(batch, pos) !== h.size || !batchCrcValid(batch, 0, h.size)) return { pos, next };
      next = h.lastOffset + 1;
      pos += h.size;
    }
  }

  /**
   * Crash recovery (Kafka's LogSegment.recover): checks every batch from the start of the file
   * (length, magic, offsets increasing, CRC32C), rebuilds the indexes from the valid ones, and
   * truncates the file after the last valid batch. The caller removes later segments when bytes
   * were cut. Reads go in large chunks so the scan runs at CRC32C speed. `onBatch` sees each valid
   * batch's header (the Log reassigns leader epochs from them, as Kafka's recovery does).
   */
  recover(onBatch?: (h: BatchHeader) => void): RecoverResult {
    this.resetIndexes();
    const end = this.scanBatches((h) => {
      this.indexBatch(h.position, h.size, h.lastOffset, h.maxTimestamp);
      onBatch?.(h);
    });
    const truncatedBytes = this.sizeBytes - end.validBytes;
    if (truncatedBytes > 0) this.log.truncate(end.validBytes);
    this._sizeBytes = end.validBytes;
    this._nextOffset = end.nextOffset;
    // Kafka ends a recovery with the segment's max timestamp in the time index.
    this.timeIndex.maybeAppend(this.maxTimestampSoFar, this.offsetOfMaxTimestampSoFar, true);
    this.writeIndexes();
    return { truncatedBytes, reason: truncatedBytes > 0 ? end.reason : null };
  }

  /** Empties both indexes and the state behind them, before they are rebuilt from the log. */
  private resetIndexes(): void {
    this.index.reset();
    this.timeIndex.reset();
    this.bytesSinceIndexEntry = 0;
    this.maxTimestampSoFar = NO_TIMESTAMP;
    this.offsetOfMaxTimestampSoFar = -1;
  }

  /**
   * Index bookkeeping for one batch, appended or recovered, at `position` (Kafka's
   * LogSegment.append cadence): tracks the max timestamp, and once more than index.interval.bytes
   * were appended since the last entry, adds this batch to the offset index and the max timestamp
   * so far to the time index. No allocation.
   */
  private indexBatch(position: number, size: number, lastOffset: number, maxTimestamp: Timestamp): void {
    if (maxTimestamp > this.maxTimestampSoFar) {
      this.maxTimestampSoFar = maxTimestamp;
      this.offsetOfMaxTimestampSoFar = lastOffset;
    }
    this.bytesSinceIndexEntry += size;
    if (this.bytesSinceIndexEntry <= this.config.indexIntervalBytes) return;
    this.index.append(lastOffset, position);
    this.timeIndex.maybeAppend(this.maxTimestampSoFar, this.offsetOfMaxTimestampSoFar);
    this.bytesSinceIndexEntry = 0;
    if (this.index.pendingEntries >= indexWriteBufferEntries) this.writeIndexes();
  }

  /**
   * Writes both indexes' buffered entries, the time index first: a stop between the two writes
   * leaves it ahead of the offset index, never behind (restoreMaxTimestamp relies on that).
   */
  private writeIndexes(): void {
    this.timeIndex.writePending();
    this.index.writePending();
  }

  /**
   * Visits every valid batch from position 0, stopping at the first invalid one. Returns the end
   * of the last valid batch, the offset after it, and why the scan stopped (null at end of file).
   */
  private scanBatches(visit: (h: BatchHeader) => void): { validBytes: number; nextOffset: number; reason: string | null } {
    const chunk = new Uint8Array(Math.max(recordBatchHeaderBytes, Math.min(recoveryReadChunkBytes, this.sizeBytes)));
    const dv = new DataView(chunk.buffer);
    let chunkStart = 0;
    let chunkLength = 0;
    const fill = (position: number) => {
      chunkStart = position;
      chunkLength = this.log.readAt(chunk.subarray(0, Math.min(chunk.length, this.sizeBytes - position)), position);
    };
    let pos = 0;
    let next = this.baseOffset;
    const stop = (reason: string) => ({ validBytes: pos, nextOffset: next, reason });
    while (pos < this.sizeBytes) {
      if (pos + recordBatchHeaderBytes > chunkStart + chunkLength) fill(pos);
      if (pos + recordBatchHeaderBytes > chunkStart + chunkLength) return stop("partial batch header at end of file");
      const h = parseHeader(dv, pos - chunkStart, pos);
      const why = this.implausible(h, next);
      if (why !== null) return stop(why);
      if (pos + h.size > chunkStart + chunkLength && h.size <= chunk.length) fill(pos);
      const storedCrc = dv.getUint32(pos - chunkStart + BatchField.crc);
      let crc: number;
      if (pos + h.size <= chunkStart + chunkLength) {
        crc = crc32c(chunk, pos - chunkStart + BatchField.attributes, pos - chunkStart + h.size);
      } else {
        crc = this.crcOfLargeBatch(chunk, pos, h.size);
        chunkLength = 0; // the chunk now holds the batch's last piece, not what fill() read
      }
      if (crc !== storedCrc) return stop("CRC32C mismatch");
      visit(h);
      next = h.lastOffset + 1;
      pos += h.size;
    }
    return { validBytes: pos, nextOffset: next, reason: null };
  }

  /** Why a parsed header cannot start a valid batch here, or null when it can. */
  private implausible(h: BatchHeader, nextOffset: number): string | null {
    if (h.magic !== 2) return `magic ${h.magic}`;
    if (h.size < recordBatchHeaderBytes) return `batch length ${h.size - batchLogOverhead}`;
    if (h.position + h.size > this.sizeBytes) return "batch runs past the end of the file";
    if (h.lastOffset < h.baseOffset) return "negative last offset delta";
    if (h.baseOffset < nextOffset) return `offset ${h.baseOffset} does not follow ${nextOffset - 1}`;
    if (h.lastOffset - this.baseOffset > segmentRelativeOffsetMax) return "offset too far from the segment's base";
    return null;
  }

  /** CRC32C of a batch bigger than the read chunk, read piece by piece into the chunk. */
  private crcOfLargeBatch(chunk: Uint8Array, position: number, size: number): number {
    let crc = 0;
    for (let done = BatchField.attributes; done < size;) {
      const n = this.log.readAt(chunk.subarray(0, Math.min(chunk.length, size - done)), position + done);
      if (n === 0) return -1; // the file shrank under us: treat as invalid
      crc = crc32c(chunk, 0, n, crc);
      done += n;
    }
    return crc;
  }

  /** Reads the header of the batch at position, or null if no whole, plausible batch is there. */
  readHeader(position: number): BatchHeader | null {
    if (position + recordBatchHeaderBytes > this.sizeBytes) return null;
    const n = this.log.readAt(this.headerBuf, position);
    if (n < recordBatchHeaderBytes) return null;
    const h = parseHeader(this.headerView, 0, position);
    if (h.size < recordBatchHeaderBytes || position + h.size > this.sizeBytes || h.magic !== 2 || h.lastOffset < h.baseOffset) {
      return null;
    }
    return h;
  }

  /**
   * Appends validated batches whose offsets are already assigned, and indexes each of them
   * (reading only the header fields it needs, without allocating).
   */
  append(records: Uint8Array, firstOffset: number, lastOffset: number): void {
    assert(firstOffset >= this.nextOffset, "appended offsets increase");
    const position = this.sizeBytes;
    const nextOffset = this.nextOffset;
    try {
      this.log.append(records);
    } catch (e) {
      // A write cut short (ENOSPC part way) may have left part of a batch past `position`: cut it,
      // so no torn batch sits in the file for a later append to leave behind or recovery to meet.
      this.undoAppend(position, nextOffset);
      throw e;
    }
    this._sizeBytes += records.length;
    this._nextOffset = lastOffset + 1;
    let at = 0;
    let batchLastOffset = -1;
    try {
      while (at < records.length) {
        const size = batchLogOverhead + int32At(records, at + BatchField.batchLength);
        batchLastOffset = int64At(records, at + BatchField.baseOffset) + int32At(records, at + BatchField.lastOffsetDelta);
        const maxTimestamp = batchMaxTimestampAt(records, at);
        if (position === 0 && at === 0) this.rollingBasedTimestamp = maxTimestamp;
        this.indexBatch(position + at, size, batchLastOffset, maxTimestamp);
        at += size;
      }
    } catch (e) {
      // An index write failed (ENOSPC, EMFILE): the append is refused whole, so the caller's
      // error means nothing was appended (a client's retry must not find its batch already there).
      this.undoAppend(position, nextOffset);
      throw e;
    }
    assert(at === records.length && batchLastOffset === lastOffset, "appended batches end at the last offset");
  }

  /**
   * Takes back a failed append: the file, the indexes and the segment's state return to
   * `position` / `nextOffset`. Each step runs even when an earlier one fails (the disk is full or
   * out of descriptors): the in-memory state is what later appends and reads trust, and the index
   * files become exact at their next successful write.
   */
  private undoAppend(position: number, nextOffset: number): void {
    const steps = [
      () => this.log.truncate(position),
      () => this.index.truncateToPosition(position),
      () => this.timeIndex.truncateToOffset(nextOffset),
      () => this.restoreMaxTimestamp(),
    ];
    this._sizeBytes = position;
    this._nextOffset = nextOffset;
    this.bytesSinceIndexEntry = 0;
    if (position === 0) this.rollingBasedTimestamp = null;
    for (const step of steps) {
      try {
        step();
      } catch {
        // Shrinking a file needs no space; a failure here is the append's own error, thrown next.
      }
    }
  }

  /**
   * Finds the position of the batch that holds `offset` (or the first batch after it). Returns
   * -1 when the segment has nothing at or after offset.
   */
  positionOf(offset: number): number {
    let pos = this.index.lookup(offset);
    for (;;) {
      const h = this.readHeader(pos);
      if (h === null) return -1;
      if (h.lastOffset >= offset) return pos;
      pos += h.size;
    }
  }

  /**
   * Reads whole batches starting at `position`, at most maxBytes of them, but always the whole
   * first batch when minOneBatch is set (so a batch larger than maxBytes still makes progress).
   */
  read(position: number, maxBytes: number, minOneBatch: boolean, endPosition = this.sizeBytes): Uint8Array {
    const available = endPosition - position;
    if (available <= 0) return new Uint8Array(0);
    const want = Math.min(available, maxBytes, segmentReadChunkBytesMax);
    let buf = new Uint8Array(Math.max(want, 0));
    let n = want > 0 ? this.log.readAt(buf, position) : 0;
    let whole = wholeBatchesLength(buf, n);
    // No whole batch in the first chunk: the first batch is bigger than maxBytes (wanted anyway
    // with minOneBatch) or bigger than the read chunk (wanted whenever it fits maxBytes).
    if (whole === 0) {
      const h = this.readHeader(position);
      if (h === null || h.size > available || (!minOneBatch && h.size > maxBytes)) return new Uint8Array(0);
      buf = new Uint8Array(h.size);
      n = this.log.readAt(buf, position);
      whole = n === h.size ? h.size : 0;
    }
    return buf.subarray(0, whole);
  }

  /** Largest batch max timestamp in the segment, -1 when no batch carries one. */
  get maxTimestampMs(): Timestamp {
    return this.maxTimestampSoFar;
  }

  /**
   * ListOffsets by timestamp within this segment (Kafka's findOffsetByTimestamp): the first
   * record at or after startingOffset whose timestamp is >= timestampMs, or null when there is
   * none here. The time index gives the batch to start from, the offset index its position, and a
   * short scan of batch headers the batch; only that batch's records are read.
   */
  findOffsetByTimestamp(timestampMs: Timestamp, startingOffset = this.baseOffset): TimestampOffset | null {
    if (this.maxTimestampSoFar < timestampMs) return null;
    const from = Math.max(this.timeIndex.lookup(timestampMs), startingOffset);
    for (let pos = this.index.lookup(from); ;) {
      const h = this.readHeader(pos);
      if (h === null) return null;
      if (h.maxTimestamp >= timestampMs && h.lastOffset >= startingOffset) {
        const found = this.firstRecordWhere(h, startingOffset, (ts) => ts >= timestampMs);
        if (found !== null) return found;
      }
      pos += h.size;
    }
  }

  /**
   * The segment's max timestamp and the first record carrying it (ListOffsets -3, KIP-734, as
   * Kafka 3.8 answers it), or null when no batch carries a timestamp.
   */
  maxTimestampAndOffset(): TimestampOffset | null {
    const max = this.maxTimestampSoFar;
    if (max < 0) return null;
    for (let pos = this.index.lookup(this.offsetOfMaxTimestampSoFar); ;) {
      const h = this.readHeader(pos);
      if (h === null) return null;
      if (h.maxTimestamp === max) {
        return this.firstRecordWhere(h, this.baseOffset, (ts) => ts === max) ?? { timestamp: max, offset: h.lastOffset };
      }
      pos += h.size;
    }
  }

  /**
   * The first record of the batch at or after minOffset whose timestamp passes `wanted`. A batch
   * whose records cannot be read (corrupt, or past the decompression bound) answers with its own
   * header: its first offset at or after minOffset and its max timestamp.
   */
  private firstRecordWhere(h: BatchHeader, minOffset: number, wanted: (ts: Timestamp) => boolean): TimestampOffset | null {
    const bytes = new Uint8Array(h.size);
    if (this.log.readAt(bytes, h.position) !== h.size) return null;
    const decoded = readBatchRecords(bytes, 0);
    if (!decoded.ok) return { timestamp: h.maxTimestamp, offset: Math.max(h.baseOffset, minOffset) };
    // LogAppendTime (attribute bit 3): every record's timestamp is the batch's max timestamp.
    const logAppendTime = (decoded.batch.attributes & 0x08) !== 0;
    for (const r of decoded.records) {
      // baseTimestamp + delta wraps as Kafka's long arithmetic does.
      const ts = logAppendTime ? h.maxTimestamp : timestampFromBigInt(r.timestamp);
      if (r.offset >= minOffset && wanted(ts)) return { timestamp: ts, offset: r.offset };
    }
    return null;
  }

  /**
   * Kafka's LogSegment.largestTimestamp, which time-based retention compares with: the largest
   * batch timestamp, or the file's last modification when no batch carries one. A timestamp far in
   * the future (up to 2^63-1) keeps the segment from time-based retention, as in Kafka.
   */
  largestTimestampMs(): Timestamp {
    if (this.maxTimestampSoFar >= 0) return this.maxTimestampSoFar;
    return this.lastModifiedMs();
  }

  /** The `.log` file's last modification (Kafka's LogSegment.lastModified). */
  lastModifiedMs(): number {
    return this.platform.fs.stat(this.logPath)?.mtimeMs ?? this.createdMs;
  }

  /**
   * The segment stops being the active one (Kafka's onBecomeInactiveSegment): the time index's
   * last entry records the segment's max timestamp.
   */
  onBecomeInactive(): void {
    this.timeIndex.maybeAppend(this.maxTimestampSoFar, this.offsetOfMaxTimestampSoFar, true);
  }

  /**
   * Visits the header of every batch from the start of the file, reading headers only (no CRC
   * check: the segment was opened, so its batches were checked or recovered); stops at the end or
   * at the first header that does not look whole.
   */
  forEachBatchHeader(visit: (h: BatchHeader) => void): void {
    for (let pos = 0; ;) {
      const h = this.readHeader(pos);
      if (h === null) return;
      visit(h);
      pos += h.size;
    }
  }

  /**
   * Drops every batch holding an offset >= offset (Kafka's LogSegment.truncateTo): the file is cut
   * before the first such batch, the indexes with it. A batch straddling offset goes whole, so the
   * segment then ends at that batch's base offset; otherwise its next offset becomes `offset`
   * (which may leave a gap after its last batch, as a compacted log has). Returns the bytes cut.
   */
  truncateToOffset(offset: number): number {
    assert(offset >= this.baseOffset, "a segment is truncated at or after its base offset");
    const pos = this.positionOf(offset);
    if (pos < 0) {
      if (offset < this.nextOffset) this.truncateTo(this.sizeBytes, offset);
      else this._nextOffset = offset;
      return 0;
    }
    const h = this.readHeader(pos);
    assert(h !== null, "positionOf points at a batch");
    const cut = this.sizeBytes - pos;
    this.truncateTo(pos, Math.min(offset, h.baseOffset));
    return cut;
  }

  /** Cuts the segment at a batch boundary, leaving nextOffset as the next offset to write. */
  truncateTo(position: number, nextOffset: number): void {
    this.log.truncate(position);
    this._sizeBytes = position;
    this._nextOffset = nextOffset;
    this.index.truncateToPosition(position);
    this.timeIndex.truncateToOffset(nextOffset);
    this.txnIndex.truncateTo(nextOffset);
    this.bytesSinceIndexEntry = 0;
    this.restoreMaxTimestamp();
    if (position === 0) {
      // Empty again: its age starts over (Kafka's truncateTo).
      this.created = this.platform.clock.nowMs();
      this.rollingBasedTimestamp = null;
    }
  }

  /**
   * Renames every file of the segment to carry `suffix` (DeletedFileSuffix on deletion). Open
   * handles stay valid across a rename, so reads under way are unaffected.
   */
  changeFileSuffixes(suffix: string): void {
    const from = this.logPath;
    this.fileSuffix = suffix;
    this.platform.fs.rename(from, this.logPath);
    this.index.renameTo(this.platform, `${this.dir}/${segmentFileName(this.baseOffset, ".index")}${suffix}`);
    this.timeIndex.renameTo(this.platform, `${this.dir}/${segmentFileName(this.baseOffset, ".timeindex")}${suffix}`);
    this.txnIndex.renameTo(`${this.dir}/${segmentFileName(this.baseOffset, TxnIndexSuffix)}${suffix}`);
  }

  flush(): void {
    this.log.sync();
    this.timeIndex.flush();
    this.index.flush();
    this._txnIndex?.flush();
  }

  /** Closes the files; the time index first gets its closing entry (Kafka's rule). */
  close(): void {
    this.onBecomeInactive();
    this.log.close();
    this.timeIndex.close();
    this.index.close();
    this._txnIndex?.close();
  }

  /**
   * Closes the three files without writing anything (Kafka's closeHandlers): the segment's log dir
   * failed, so the closing time-index entry and buffered index entries are not written; recovery
   * at the next start-up rebuilds them.
   */
  closeHandlers(): void {
    try {
      this.log.close();
    } catch {
      // See IndexFile.closeHandlers.
    }
    this.timeIndex.closeHandlers();
    this.index.closeHandlers();
    this._txnIndex?.closeHandlers();
  }

  /** Closes and deletes the files. */
  remove(): void {
    try {
      this.close();
    } catch {
      // The closing index entries of files about to go could not be written (a full disk): no
      // matter, but the files must still be closed and removed, or they keep taking space.
      this.closeHandlers();
    }
    this.platform.fs.remove(this.logPath);
    this.platform.fs.remove(this.index.path);
    this.platform.fs.remove(this.timeIndex.path);
    this.txnIndex.remove();
  }
}

/** Closes a handle whose open was followed by a failure; the failure is what gets reported. */
function closeQuietly(h: FileHandle): void {
  try {
    h.close();
  } catch {
    // See IndexFile.closeHandlers.
  }
}

/** Big-endian int32 at b[i]. */
function int32At(b: Uint8Array, i: number): number {
  return (b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3];
}

/** Big-endian int64 at b[i], as a number (offsets and timestamps are safe integers). */
function int64At(b: Uint8Array, i: number): number {
  return int32At(b, i) * 0x1_0000_0000 + (int32At(b, i + 4) >>> 0);
}

/** The header fields of the batch whose bytes start at dv[at]; it sits at `position` in the file. */
function parseHeader(dv: DataView, at: number, position: number): BatchHeader {
  const baseOffset = Number(dv.getBigInt64(at + BatchField.baseOffset));
  return {
    position,
    size: batchLogOverhead + dv.getInt32(at + BatchField.batchLength),
    baseOffset,
    lastOffset: baseOffset + dv.getInt32(at + BatchField.lastOffsetDelta),
    magic: dv.getInt8(at + BatchField.magic),
    maxTimestamp: timestampFromView(dv, at + BatchField.maxTimestamp),
    leaderEpoch: dv.getInt32(at + BatchField.partitionLeaderEpoch),
  };
}

/** Length of the longest prefix of buf[0..n) made of whole batches. */
export function wholeBatchesLength(buf: Uint8Array, n: number): number {
  const dv = new DataView(buf.buffer, buf.byteOffset, n);
  let pos = 0;
  while (pos + batchLogOverhead <= n) {
    const size = batchLogOverhead + dv.getInt32(pos + BatchField.batchLength);
    if (size < recordBatchHeaderBytes || pos + size > n) break;
    pos += size;
  }
  return pos;
}
