// OffsetIndex: the sparse `<baseOffset>.index` file beside each segment.
//
// File format (Kafka's): a sequence of 8-byte entries, big-endian:
//   relativeOffset int32  (offset - segment base offset) of the LAST offset of an indexed batch
//   position       int32  byte position in the .log file where that batch starts
// Entries are strictly increasing in both fields. One entry is added when more than
// index.interval.bytes have been appended since the previous one, so a lookup lands within about
// that many bytes of the target and finishes with a short scan of batch headers.
//
// Kafka preallocates the file and trims it at roll; strand appends entries as they are made, so
// the file always holds exactly its entries. A file whose size is not a multiple of 8 (torn
// write) is cut down to whole entries on load; entries pointing past the log's end are dropped.

import type { FileHandle, Platform } from "../platform/mod.ts";
import { assert } from "../util/mod.ts";

const ENTRY_BYTES = 8;

export class OffsetIndex {
  private entries: Int32Array; // [relOffset0, pos0, relOffset1, pos1, ...]
  private count = 0;
  private file: FileHandle;

  private constructor(
    readonly path: string,
    readonly baseOffset: number,
    file: FileHandle,
    readonly maxEntries: number,
  ) {
    this.file = file;
    this.entries = new Int32Array(64);
  }

  /** Opens (creating if missing) and loads the index, keeping only entries below logSizeBytes. */
  static open(platform: Platform, path: string, baseOffset: number, maxIndexBytes: number, logSizeBytes: number) {
    const file = platform.fs.open(path, "readwrite");
    const idx = new OffsetIndex(path, baseOffset, file, Math.floor(maxIndexBytes / ENTRY_BYTES));
    idx.load(logSizeBytes);
    return idx;
  }

  private load(logSizeBytes: number): void {
    const size = this.file.size();
    const whole = size - (size % ENTRY_BYTES);
    const buf = new Uint8Array(whole);
    const n = whole > 0 ? this.file.readAt(buf, 0) : 0;
    const dv = new DataView(buf.buffer, 0, n - (n % ENTRY_BYTES));
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
    if (this.count * ENTRY_BYTES !== size) this.file.truncate(this.count * ENTRY_BYTES);
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

  get entryCount(): number {
    return this.count;
  }
  get isFull(): boolean {
    return this.count >= this.maxEntries;
  }
  get sizeBytes(): number {
    return this.count * ENTRY_BYTES;
  }

  /** Last indexed position, or 0: recovery after a clean stop scans from here. */
  get lastPosition(): number {
    return this.count === 0 ? 0 : this.entries[this.count * 2 - 1];
  }

  append(offset: number, position: number): void {
    const rel = offset - this.baseOffset;
    assert(rel >= 0 && rel <= 0x7fffffff, "index relative offset fits int32");
    if (this.count > 0) {
      assert(rel > this.entries[this.count * 2 - 2], "index offsets increase");
      assert(position > this.entries[this.count * 2 - 1], "index positions increase");
    }
    if (this.isFull) return;
    const b = new Uint8Array(ENTRY_BYTES);
    const dv = new DataView(b.buffer);
    dv.setInt32(0, rel);
    dv.setInt32(4, position);
    this.file.append(b);
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

  /** Drops entries at or past a log position (after the log is truncated there). */
  truncateToPosition(position: number): void {
    while (this.count > 0 && this.entries[this.count * 2 - 1] >= position) this.count--;
    this.file.truncate(this.count * ENTRY_BYTES);
  }

  flush(): void {
    this.file.sync();
  }

  close(): void {
    this.file.close();
  }
}
