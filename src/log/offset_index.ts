// OffsetIndex: the sparse `<baseOffset>.index` file beside each segment.
//
// File format (Kafka's): a sequence of 8-byte entries, big-endian:
//   relativeOffset int32  (offset - segment base offset) of the LAST offset of an indexed batch
//   position       int32  byte position in the .log file where that batch starts
// Entries are strictly increasing in both fields. One entry is added when more than
// index.interval.bytes have been appended since the previous one, so a lookup lands within about
// that many bytes of the target and finishes with a short scan of batch headers.
//
// Kafka preallocates the file and trims it at roll; strand appends entries as they are made
// (through a small write buffer, see index_file.ts), so the file holds whole entries only. A file
// whose size is not a multiple of 8 (torn write) is cut down to whole entries on load; entries
// out of order or pointing past the log's end are dropped with everything after them.

import type { Platform } from "../platform/mod.ts";
import { assert, segmentRelativeOffsetMax } from "../util/mod.ts";
import { IndexFile } from "./index_file.ts";

const ENTRY_BYTES = 8;

export class OffsetIndex {
  private entries: Int32Array; // [relOffset0, pos0, relOffset1, pos1, ...]
  private count = 0;

  private constructor(
    readonly baseOffset: number,
    private readonly file: IndexFile,
    readonly maxEntries: number,
  ) {
    this.entries = new Int32Array(64);
  }

  /** Opens (creating if missing) and loads the index, keeping only entries below logSizeBytes. */
  static open(platform: Platform, path: string, baseOffset: number, maxIndexBytes: number, logSizeBytes: number) {
    const { file, bytes } = IndexFile.open(platform, path, ENTRY_BYTES);
    const idx = new OffsetIndex(baseOffset, file, Math.floor(maxIndexBytes / ENTRY_BYTES));
    idx.load(bytes, logSizeBytes);
    return idx;
  }

  /** The index of a new segment whose file was just created empty: no I/O. */
  static created(platform: Platform, path: string, baseOffset: number, maxIndexBytes: number): OffsetIndex {
    return new OffsetIndex(baseOffset, IndexFile.created(platform, path, ENTRY_BYTES), Math.floor(maxIndexBytes / ENTRY_BYTES));
  }

  private load(bytes: Uint8Array, logSizeBytes: number): void {
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let lastRel = -1;
    let lastPos = -1;
    for (let p = 0; p + ENTRY_BYTES <= dv.byteLength; p += ENTRY_BYTES) {
      const rel = dv.getInt32(p);
      const pos = dv.getInt32(p + 4);
      if (rel <= lastRel || pos <= lastPos || pos >= logSizeBytes) break;
      this.push(rel, pos);
      lastRel = rel;
      lastPos = pos;
    }
    this.file.truncateEntries(this.count);
  }

  private push(rel: number, pos: number): void {
    if (this.count * 2 === this.entries.length) {
      const next = new Int32Array(this.entries.length * 2);
      next.set(this.entries);
      this.entries = next;
    }
    this.entries[this.count * 2] = rel;
    this.entries[this.count * 2 + 1] = pos;
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

  /** Last indexed position, or 0: recovery after a clean stop scans from here. */
  get lastPosition(): number {
    return this.count === 0 ? 0 : this.entries[this.count * 2 - 1];
  }

  /** Adds an entry (nothing when full: the log rolls before that matters). No allocation. */
  append(offset: number, position: number): void {
    const rel = offset - this.baseOffset;
    assert(rel >= 0 && rel <= segmentRelativeOffsetMax, "index relative offset fits int32");
    if (this.count > 0) {
      assert(rel > this.entries[this.count * 2 - 2], "index offsets increase");
      assert(position > this.entries[this.count * 2 - 1], "index positions increase");
    }
    if (this.isFull) return;
    const at = this.file.reserve();
    this.file.view.setInt32(at, rel);
    this.file.view.setInt32(at + 4, position);
    this.file.commit();
    this.push(rel, position);
  }

  /** Position of the batch holding the largest indexed offset <= target (0 when none is). */
  lookup(target: number): number {
    const rel = target - this.baseOffset;
    let lo = 0;
    let hi = this.count - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.entries[mid * 2] <= rel) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found < 0 ? 0 : this.entries[found * 2 + 1];
  }

  /** Drops every entry (before a rebuild from the log). */
  reset(): void {
    this.count = 0;
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

  /** Drops entries at or past a log position (after the log is truncated there). */
  truncateToPosition(position: number): void {
    while (this.count > 0 && this.entries[this.count * 2 - 1] >= position) this.count--;
    this.file.truncateEntries(this.count);
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
