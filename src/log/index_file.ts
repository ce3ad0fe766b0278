// IndexFile: the file under an OffsetIndex or a TimeIndex: fixed-size entries, appended, with
// the newest entries held in a small write buffer.
//
// Format: nothing of its own; `entryBytes`-byte entries back to back (the index classes define
// what an entry holds). The index keeps every entry in memory and answers lookups from there; the
// file exists so the next start-up does not have to rebuild the index from the log.
//
// Why a write buffer: with ~16 KiB produce batches and index.interval.bytes 4096, every append
// adds an entry to both indexes, and two small pwrite calls next to the log's one cost about a
// third of the append throughput (measured by `npm run bench:log`). Entries are therefore
// gathered, `indexWriteBufferEntries` at a time, and written in one call.
//
// Invariants:
// - The file holds a prefix of the entries: entry i is at byte i * entryBytes; entries past the
//   file's end are in the buffer. The file is exact after writePending(), truncateEntries(),
//   sync() and close().
// - A file cut short (a crash before the buffer was written) is a valid, shorter index; the
//   segment's open walks the log from the last entry it has, and crash recovery rebuilds both
//   indexes from the log.
//
// No descriptor is held between writes: the file is opened for each write of the buffer (one
// per indexWriteBufferEntries entries), truncation and fsync, and closed at once. Lookups are
// answered from memory, so a segment needs only its .log open, and a partition one descriptor
// per segment rather than three (Kafka, which mmaps its indexes and closes their files, needs one
// too). 10,000 new partitions then fit a 20,000-descriptor limit.
//
// Kafka preallocates index files to segment.index.bytes (mmap) and trims them at roll. Here
// files only ever hold whole entries, so there is nothing to trim and no zero-filled tail to
// mistake for entries after a crash; preallocation would not save a write call either, since the
// platform has no mmap.

import type { FileHandle, Platform } from "../platform/mod.ts";
import { assert, indexWriteBufferEntries } from "../util/mod.ts";

const noBuffer = new DataView(new ArrayBuffer(0));

export class IndexFile {
  /**
   * The write buffer, made at the first entry after a write and let go at each write: an idle
   * partition's indexes (thousands of new partitions) hold none of it.
   */
  private pending: Uint8Array | null = null;
  /** DataView over the write buffer: the index writes its next entry at `reserve()`'s offset. */
  view: DataView = noBuffer;
  private pendingBytes = 0;
  private writtenBytes: number;
  private closed = false;

  private constructor(
    private readonly platform: Platform,
    public path: string,
    readonly entryBytes: number,
    sizeBytes: number,
  ) {
    // A torn last entry (a crash mid-write) counts until the index truncates it away at load.
    this.writtenBytes = sizeBytes;
  }

  /**
   * Opens (creating if missing) and reads the file, and returns it, the bytes of its whole
   * entries, and its size (a torn last entry makes it differ from bytes.length).
   */
  static open(platform: Platform, path: string, entryBytes: number): { file: IndexFile; bytes: Uint8Array; sizeBytes: number } {
    const handle = platform.fs.open(path, "readwrite");
    let size: number;
    let bytes: Uint8Array;
    let n: number;
    try {
      size = handle.size();
      bytes = new Uint8Array(size - (size % entryBytes));
      n = bytes.length > 0 ? handle.readAt(bytes, 0) : 0;
    } finally {
      handle.close();
    }
    return { file: new IndexFile(platform, path, entryBytes, size), bytes: bytes.subarray(0, n - (n % entryBytes)), sizeBytes: size };
  }

  /** The file at path, which its creator has just made empty (LogManager.prepareNewLogs): no I/O. */
  static created(platform: Platform, path: string, entryBytes: number): IndexFile {
    return new IndexFile(platform, path, entryBytes, 0);
  }

  /** Runs fn on the file, opened for it alone. */
  private withHandle(fn: (h: FileHandle) => void): void {
    assert(!this.closed, "an index file is not written after close");
    const h = this.platform.fs.open(this.path, "readwrite");
    try {
      fn(h);
    } finally {
      h.close();
    }
  }

  /** Entries in the file and the buffer. */
  get entryCount(): number {
    return (this.writtenBytes + this.pendingBytes) / this.entryBytes;
  }

  /** Entries in the buffer, not yet written. */
  get pendingEntries(): number {
    return this.pendingBytes / this.entryBytes;
  }

  /** Offset in `view` for the next entry; the caller fills entryBytes there, then commit(). */
  reserve(): number {
    if (this.pendingBytes === this.entryBytes * indexWriteBufferEntries) this.writePending();
    if (this.pending === null) {
      this.pending = new Uint8Array(this.entryBytes * indexWriteBufferEntries);
      this.view = new DataView(this.pending.buffer);
    }
    return this.pendingBytes;
  }

  commit(): void {
    this.pendingBytes += this.entryBytes;
  }

  /** Writes the buffered entries to the file. */
  writePending(): void {
    if (this.pendingBytes === 0) return;
    const pending = this.pending as Uint8Array;
    // At the entries' end rather than the file's: bytes a failed write left past it are overwritten.
    this.withHandle((h) => h.writeAt(pending.subarray(0, this.pendingBytes), this.writtenBytes));
    this.writtenBytes += this.pendingBytes;
    this.pendingBytes = 0;
    this.pending = null;
    this.view = noBuffer;
  }

  /** Keeps the first `count` entries and leaves the file exact (truncations are rare). */
  truncateEntries(count: number): void {
    const keep = count * this.entryBytes;
    assert(keep <= this.writtenBytes + this.pendingBytes, "index truncation keeps existing entries");
    if (keep >= this.writtenBytes) {
      this.pendingBytes = keep - this.writtenBytes;
      this.writePending();
      return;
    }
    this.pendingBytes = 0;
    this.withHandle((h) => h.truncate(keep));
    this.writtenBytes = keep;
  }

  /** Writes the buffer and fsyncs. */
  sync(): void {
    this.writePending();
    this.withHandle((h) => h.sync());
  }

  /** Renames the file (segment deletion adds `.deleted`); later writes go to the new name. */
  renameTo(platform: Platform, path: string): void {
    platform.fs.rename(this.path, path);
    this.path = path;
  }

  /** Writes the buffer; no write follows. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.writePending();
    this.closed = true;
  }

  /**
   * Closes without writing the buffer (Kafka's closeHandlers): for a file on a failed log dir,
   * where a write would only fail again. The dir's logs are recovered at the next start-up.
   */
  closeHandlers(): void {
    this.closed = true;
    this.pendingBytes = 0;
  }
}
