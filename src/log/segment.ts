// LogSegment: one `<20-digit baseOffset>.log` file of whole record batches, stored exactly as the
// wire carries them (base offset and leader epoch patched), with its sparse OffsetIndex.
//
// Invariants:
// - The file is a concatenation of whole, valid batches; the next append goes at `sizeBytes`.
// - Every offset in the segment is >= baseOffset, and offsets increase batch by batch.
// - nextOffset is one past the last offset stored (baseOffset when the segment is empty).

import type { FileHandle, Platform } from "../platform/mod.ts";
import { BatchField, batchCrcValid, batchLogOverhead } from "../protocol/mod.ts";
import { assert, recordBatchHeaderBytes, segmentReadChunkBytesMax } from "../util/mod.ts";
import { OffsetIndex } from "./offset_index.ts";

export function segmentFileName(baseOffset: number, suffix: string): string {
  return String(baseOffset).padStart(20, "0") + suffix;
}

/** Header fields of one stored batch, read from disk. */
export interface BatchHeader {
  position: number;
  size: number;
  baseOffset: number;
  lastOffset: number;
  magic: number;
  maxTimestamp: number;
}

export interface SegmentConfig {
  indexIntervalBytes: number;
  segmentIndexBytes: number;
}

export class LogSegment {
  private bytesSinceIndexEntry = 0;
  private headerBuf = new Uint8Array(recordBatchHeaderBytes);
  private headerView = new DataView(this.headerBuf.buffer);

  private constructor(
    private readonly platform: Platform,
    readonly dir: string,
    readonly baseOffset: number,
    private readonly log: FileHandle,
    readonly index: OffsetIndex,
    private readonly config: SegmentConfig,
    public sizeBytes: number,
    public nextOffset: number,
    /** Wall-clock time of the segment's creation, for segment.ms rolls. */
    readonly createdMs: number,
  ) {}

  get logPath(): string {
    return `${this.dir}/${segmentFileName(this.baseOffset, ".log")}`;
  }

  static create(platform: Platform, dir: string, baseOffset: number, config: SegmentConfig): LogSegment {
    const log = platform.fs.open(`${dir}/${segmentFileName(baseOffset, ".log")}`, "create-new");
    const indexPath = `${dir}/${segmentFileName(baseOffset, ".index")}`;
    platform.fs.remove(indexPath); // a stale index from an earlier, removed segment
    const index = OffsetIndex.open(platform, indexPath, baseOffset, config.segmentIndexBytes, 0);
    return new LogSegment(platform, dir, baseOffset, log, index, config, 0, baseOffset, platform.clock.nowMs());
  }

  /**
   * Opens an existing segment. Batches after the last index entry are walked to find the next
   * offset; the first one that does not look whole or fails its CRC32C (a torn tail) is cut off,
   * with everything after it, and the count of bytes cut is returned in `truncatedBytes`.
   */
  static open(platform: Platform, dir: string, baseOffset: number, config: SegmentConfig) {
    const log = platform.fs.open(`${dir}/${segmentFileName(baseOffset, ".log")}`, "readwrite");
    const fileSize = log.size();
    const index = OffsetIndex.open(
      platform,
      `${dir}/${segmentFileName(baseOffset, ".index")}`,
      baseOffset,
      config.segmentIndexBytes,
      fileSize,
    );
    const mtime = platform.fs.stat(`${dir}/${segmentFileName(baseOffset, ".log")}`)?.mtimeMs ?? platform.clock.nowMs();
    const seg = new LogSegment(platform, dir, baseOffset, log, index, config, fileSize, baseOffset, mtime);
    const truncatedBytes = seg.recoverTail(index.lastPosition);
    return { segment: seg, truncatedBytes };
  }

  private recoverTail(from: number): number {
    let { pos, next } = this.walk(from);
    // The indexed batch itself is unreadable: the index is not to be trusted, so walk it all.
    if (pos === from && from > 0) ({ pos, next } = this.walk(0));
    this.nextOffset = next;
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
      if (h === null || h.baseOffset < next) return { pos, next };
      // A whole-looking batch may still be torn inside (its header reached the disk, a later page
      // did not): read it back and check its CRC32C, as Kafka's recovery does.
      if (buf.length < h.size) buf = new Uint8Array(Math.max(h.size, buf.length * 2));
      const batch = buf.subarray(0, h.size);
      if (this.log.readAt(batch, pos) !== h.size || !batchCrcValid(batch, 0, h.size)) return { pos, next };
      next = h.lastOffset + 1;
      pos += h.size;
    }
  }

  /** Reads the header of the batch at position, or null if no whole, plausible batch is there. */
  readHeader(position: number): BatchHeader | null {
    if (position + recordBatchHeaderBytes > this.sizeBytes) return null;
    const n = this.log.readAt(this.headerBuf, position);
    if (n < recordBatchHeaderBytes) return null;
    const dv = this.headerView;
    const size = batchLogOverhead + dv.getInt32(BatchField.batchLength);
    const magic = dv.getInt8(BatchField.magic);
    const lastOffsetDelta = dv.getInt32(BatchField.lastOffsetDelta);
    const baseOffset = Number(dv.getBigInt64(BatchField.baseOffset));
    if (size < recordBatchHeaderBytes || position + size > this.sizeBytes || magic !== 2 || lastOffsetDelta < 0) {
      return null;
    }
    const maxTimestamp = Number(dv.getBigInt64(BatchField.maxTimestamp));
    return { position, size, baseOffset, lastOffset: baseOffset + lastOffsetDelta, magic, maxTimestamp };
  }

  /** Appends validated batches whose offsets are already assigned. */
  append(records: Uint8Array, firstOffset: number, lastOffset: number): void {
    assert(firstOffset >= this.nextOffset, "appended offsets increase");
    const position = this.sizeBytes;
    this.log.append(records);
    this.sizeBytes += records.length;
    this.nextOffset = lastOffset + 1;
    this.bytesSinceIndexEntry += records.length;
    if (this.bytesSinceIndexEntry > this.config.indexIntervalBytes) {
      this.index.append(lastOffset, position);
      this.bytesSinceIndexEntry = 0;
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

  /**
   * First batch whose max timestamp is >= timestampMs, walking headers from the start (the time
   * index of the storage issue replaces this walk).
   */
  findByTimestamp(timestampMs: number): BatchHeader | null {
    for (let pos = 0; ;) {
      const h = this.readHeader(pos);
      if (h === null) return null;
      if (h.maxTimestamp >= timestampMs) return h;
      pos += h.size;
    }
  }

  /** Largest batch max timestamp in the segment and the batch holding it (-1 when empty). */
  maxTimestampBatch(): BatchHeader | null {
    let best: BatchHeader | null = null;
    for (let pos = 0; ;) {
      const h = this.readHeader(pos);
      if (h === null) return best;
      if (best === null || h.maxTimestamp > best.maxTimestamp) best = h;
      pos += h.size;
    }
  }

  /** Cuts the segment at a batch boundary, leaving nextOffset as the next offset to write. */
  truncateTo(position: number, nextOffset: number): void {
    this.log.truncate(position);
    this.sizeBytes = position;
    this.nextOffset = nextOffset;
    this.index.truncateToPosition(position);
    this.bytesSinceIndexEntry = 0;
  }

  flush(): void {
    this.log.sync();
    this.index.flush();
  }

  close(): void {
    this.log.close();
    this.index.close();
  }

  /** Closes and deletes the files. */
  remove(): void {
    this.close();
    this.platform.fs.remove(this.logPath);
    this.platform.fs.remove(this.index.path);
  }
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
