// TimeIndex: the sparse `<baseOffset>.timeindex` file beside each segment.
//
// File format (Kafka's): a sequence of 12-byte entries, big-endian:
//   timestamp      int64  the largest batch max timestamp in the segment up to the indexed point
//   relativeOffset int32  (offset - segment base offset) of the last offset of the first batch
//                         that carried that timestamp
//
// Invariants:
// - Timestamps strictly increase, and so do offsets (a larger timestamp is first carried by a
//   later batch). Timestamps are >= 0: -1 (no timestamp) never exceeds the initial maximum, nor
//   does any other negative value a client may send. They span the whole non-negative int64
//   range (2^63-1 included): kept exactly, as two 32-bit halves, and handled as Timestamps
//   (timestamp.ts) outside.
// - Entries are made at the offset index's cadence (when more than index.interval.bytes were
//   appended since the last entry), and only when the segment's max timestamp so far exceeds the
//   last entry's.
// - Kafka's rule at roll, at close and at the end of recovery: one more entry records the
//   segment's max timestamp, so the last entry of a closed segment holds its max timestamp and
//   the batch that carried it. That entry is written even when the index is full; the file never
//   holds more than one entry past segment.index.bytes.
// - Lookup: for the last entry (T, O) with T <= target, every batch before O's batch has a max
//   timestamp < T, so the first batch with max timestamp >= target is O's batch or a later one;
//   the search goes on from there through the offset index and a short scan of batch headers.
//
// On load, a torn entry, entries out of order, or entries at or past the segment's next offset
// end the index there and mark it `damaged`; the segment is then recovered from the log, which
// rebuilds both indexes (see LogSegment.recover). Written through a small buffer, as the offset
// index (see index_file.ts).

import type { Platform } from "../platform/mod.ts";
import { assert, segmentRelativeOffsetMax } from "../util/mod.ts";
import { IndexFile } from "./index_file.ts";
import { NO_TIMESTAMP, setTimestamp, type Timestamp, timestampFromParts, timestampHi, timestampLo } from "./timestamp.ts";

const ENTRY_BYTES = 12;

export class TimeIndex {
  /** Entry timestamps' high (int32, >= 0) and low (uint32) halves: exact int64s, no allocation. */
  private tsHi = new Int32Array(64);
  private tsLo = new Uint32Array(64);
  private relOffsets = new Int32Array(64);
  private count = 0;
  /** Whether load dropped entries (torn, out of order, or past the log): the index needs a rebuild. */
  damaged = false;

  private constructor(
    readonly baseOffset: number,
    private readonly file: IndexFile,
    readonly maxEntries: number,
  ) {}

  /**
   * Opens (creating if missing) and loads the index, keeping the entries that are consistent
   * and below nextOffset (the segment's log end).
   */
  static open(platform: Platform, path: string, baseOffset: number, maxIndexBytes: number, nextOffset: number): TimeIndex {
    const { file, bytes, sizeBytes } = IndexFile.open(platform, path, ENTRY_BYTES);
    const idx = new TimeIndex(baseOffset, file, Math.floor(maxIndexBytes / ENTRY_BYTES));
    idx.load(bytes, nextOffset - baseOffset, sizeBytes);
    return idx;
  }

  /** The index of a new segment whose file was just created empty: no I/O. */
  static created(platform: Platform, path: string, baseOffset: number, maxIndexBytes: number): TimeIndex {
    return new TimeIndex(baseOffset, IndexFile.created(platform, path, ENTRY_BYTES), Math.floor(maxIndexBytes / ENTRY_BYTES));
  }

  private load(bytes: Uint8Array, relEnd: number, fileSize: number): void {
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let lastHi = -1;
    let lastLo = 0;
    let lastRel = -1;
    for (let p = 0; p + ENTRY_BYTES <= dv.byteLength; p += ENTRY_BYTES) {
      const hi = dv.getInt32(p);
      const lo = dv.getUint32(p + 4);
      const rel = dv.getInt32(p + 8);
      // Negative (never written), or not above the previous entry: out of order.
      if (hi < 0 || hi < lastHi || (hi === lastHi && lo <= lastLo) || rel < lastRel || rel < 0 || rel >= relEnd) break;
      this.push(hi, lo, rel);
      lastHi = hi;
      lastLo = lo;
      lastRel = rel;
    }
    this.damaged = this.count * ENTRY_BYTES !== fileSize;
    this.file.truncateEntries(this.count);
  }

  private push(hi: number, lo: number, rel: number): void {
    if (this.count === this.tsHi.length) {
      const his = new Int32Array(this.count * 2);
      his.set(this.tsHi);
      this.tsHi = his;
      const los = new Uint32Array(this.count * 2);
      los.set(this.tsLo);
      this.tsLo = los;
      const rels = new Int32Array(this.count * 2);
      rels.set(this.relOffsets);
      this.relOffsets = rels;
    }
    this.tsHi[this.count] = hi;
    this.tsLo[this.count] = lo;
    this.relOffsets[this.count] = rel;
    this.count++;
  }

  get path(): string {
    return this.file.path;
  }
  get entryCount(): number {
    return this.count;
  }
  get isFull(): boolean {
    return this.count >= this.maxEntries;
  }
  get sizeBytes(): number {
    return this.count * ENTRY_BYTES;
  }
  /** Entries not yet written to the file. */
  get pendingEntries(): number {
    return this.file.pendingEntries;
  }
  /** The last entry's timestamp, -1 when there is none. */
  get lastTimestamp(): Timestamp {
    return this.count === 0 ? NO_TIMESTAMP : this.timestampAt(this.count - 1);
  }

  /** Entry i's timestamp. */
  timestampAt(i: number): Timestamp {
    return timestampFromParts(this.tsHi[i], this.tsLo[i]);
  }
  /** The last entry's offset (absolute), the base offset when there is none. */
  get lastOffset(): number {
    return this.count === 0 ? this.baseOffset : this.baseOffset + this.relOffsets[this.count - 1];
  }

  /**
   * Adds (timestamp, offset) when timestamp is larger than the last entry's (so never a negative
   * one). A full index takes no more entries, except the segment's closing entry (force). No
   * allocation for a timestamp below 2^53.
   */
  maybeAppend(timestamp: Timestamp, offset: number, force = false): void {
    if (timestamp <= this.lastTimestamp) return;
    if (this.isFull && !force) return;
    const rel = offset - this.baseOffset;
    // The segment computes offsets from batches it checked (recovery refuses a batch reaching
    // past base + 2^31-1; appends roll first), and timestamps only grow with offsets.
    assert(rel >= 0 && rel <= segmentRelativeOffsetMax, "time index relative offset fits int32");
    assert(this.count === 0 || rel >= this.relOffsets[this.count - 1], "time index offsets increase");
    const at = this.file.reserve();
    setTimestamp(this.file.view, at, timestamp);
    this.file.view.setInt32(at + 8, rel);
    this.file.commit();
    this.push(timestampHi(timestamp), timestampLo(timestamp), rel);
  }

  /**
   * The offset of the last entry whose timestamp is <= target: the search for the first batch
   * with a max timestamp >= target starts at that offset's batch. The base offset when no entry
   * is <= target.
   */
  lookup(target: Timestamp): number {
    if (target < 0 || this.count === 0) return this.baseOffset; // entries are >= 0
    const tHi = timestampHi(target);
    const tLo = timestampLo(target);
    let lo = 0;
    let hi = this.count - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const eHi = this.tsHi[mid];
      if (eHi < tHi || (eHi === tHi && this.tsLo[mid] <= tLo)) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found < 0 ? this.baseOffset : this.baseOffset + this.relOffsets[found];
  }

  /** Drops the entries at or past offset (after the log is truncated to end below it). */
  truncateToOffset(offset: number): void {
    const rel = offset - this.baseOffset;
    while (this.count > 0 && this.relOffsets[this.count - 1] >= rel) this.count--;
    this.file.truncateEntries(this.count);
  }

  /** Drops every entry (before a rebuild from the log). */
  reset(): void {
    this.count = 0;
    this.damaged = false;
    this.file.truncateEntries(0);
  }

  /** Writes buffered entries to the file (the segment keeps both index files in step). */
  writePending(): void {
    this.file.writePending();
  }

  /** Renames the file (segment deletion adds `.deleted`); the open handle stays valid. */
  renameTo(platform: Platform, path: string): void {
    this.file.renameTo(platform, path);
  }

  flush(): void {
    this.file.sync();
  }

  close(): void {
    this.file.close();
  }

  /** Closes without writing (the log dir failed); see IndexFile.closeHandlers. */
  closeHandlers(): void {
    this.file.closeHandlers();
  }
}
