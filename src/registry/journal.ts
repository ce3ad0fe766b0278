// RegistryJournal: the embedded registry's transaction log, as ZooKeeper keeps one beside its
// snapshots. Each committed transaction that changed persistent state is appended as one record;
// the records written in one turn of the event loop are made durable by one fsync (group commit).
//
// File `<dir>/registry.journal`:
//   header  the 27 bytes "strand-registry-journal v1\n"
//   record  u32 payload length (big-endian) | u32 CRC32C of the payload | payload
// The payload is UTF-8 JSON, {"zxid":"<decimal>","put":[<node as in snapshot.json>...],
// "del":["<path>"...]}: the state after the transaction of every persistent node it created,
// changed or deleted, in the order the transaction first touched them (parents before children).
// Replaying a record is idempotent.
//
// Invariants:
// - Only the last record may be incomplete (a crash during its write, never fsynced, so never
//   acknowledged): a short tail, or a last record whose CRC does not match, is dropped on open.
//   A bad record followed by more bytes, or a declared length above the limit, is corruption
//   and stops the open with an error naming the file.
// - A failed append is cut off again (truncate to the size before it; if that fails too, before
//   the next append), so a later record never follows a partial one. A full disk therefore
//   refuses the transaction and leaves the file as it was: the next one succeeds once there is room.
//
// A snapshot rewrite sets the journal aside (renames it `registry.journal.<zxid, 16 hex digits>`,
// every record in it at or below that zxid) and starts a new one, so writes go on while the
// snapshot is written; the set-aside files are removed once a snapshot at or past their zxid is
// durable. Open replays them, oldest first, before the current journal (embedded.ts).

import { syncDirAsync } from "../log/mod.ts";
import type { FileHandle, FileSystem } from "../platform/mod.ts";
import { assert, crc32c, registryJournalRecordBytesMax, registryReadChunkBytes, utf8Bytes } from "../util/mod.ts";

export const journalFileName = "registry.journal";

/**
 * fs.readFile(path) (null when nothing is there) a registryReadChunkBytes piece at a time, with a
 * `yield` after each: the registry's snapshot and journals run to megabytes, and one synchronous
 * read of them held the event loop for tens of ms. Nothing writes the files while they are read
 * (the store is being opened); a file that shrinks meanwhile is returned as far as it was read.
 */
export function* readFileSteps(fs: FileSystem, path: string): Generator<void, Uint8Array | null> {
  if (fs.stat(path) === null) return null;
  const file = fs.open(path, "read");
  try {
    const bytes = new Uint8Array(file.size());
    let done = 0;
    while (done < bytes.length) {
      const n = file.readAt(bytes.subarray(done, Math.min(bytes.length, done + registryReadChunkBytes)), done);
      if (n === 0) return bytes.subarray(0, done);
      done += n;
      yield;
    }
    return bytes;
  } finally {
    file.close();
  }
}

/** The name of a journal set aside by a snapshot rewrite at zxid: the names sort as the zxids do. */
export function setAsideJournalFileName(zxid: bigint): string {
  return `${journalFileName}.${zxid.toString(16).padStart(16, "0")}`;
}

/** Whether name is a journal set aside by a snapshot rewrite (setAsideJournalFileName). */
export function isSetAsideJournalFileName(name: string): boolean {
  return /^registry\.journal\.[0-9a-f]{16}$/.test(name);
}
const header = utf8Bytes("strand-registry-journal v1\n");
export const journalHeaderBytes = header.length;
const recordHeaderBytes = 8;

export interface JournalContent {
  /** Payloads of the complete records, in order. */
  payloads: Uint8Array[];
  /** Bytes of the file that hold the header and complete records. */
  validBytes: number;
}

/** Reads a journal file's bytes; throws naming file when the content is corrupt. */
export function readJournal(file: string, bytes: Uint8Array): JournalContent {
  const corrupt = (why: string): never => {
    throw new Error(
      `registry journal ${file} is corrupt (${why}); restore the registry dir from a backup, or ` +
        "move the journal aside to start from the last snapshot (changes since it are then forgotten)",
    );
  };
  if (bytes.length < header.length) {
    // A crash while the file was being created: nothing was ever written after the header.
    if (header.subarray(0, bytes.length).every((b, i) => bytes[i] === b)) return { payloads: [], validBytes: 0 };
    corrupt("no journal header");
  }
  for (let i = 0; i < header.length; i++) if (bytes[i] !== header[i]) corrupt("no journal header");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const payloads: Uint8Array[] = [];
  let pos = header.length;
  while (pos < bytes.length) {
    if (bytes.length - pos < recordHeaderBytes) break; // torn: the length itself is incomplete
    const length = view.getUint32(pos);
    const crc = view.getUint32(pos + 4);
    if (length > registryJournalRecordBytesMax) {
      corrupt(`record at byte ${pos} declares ${length} bytes, more than ${registryJournalRecordBytesMax}`);
    }
    const end = pos + recordHeaderBytes + length;
    if (end > bytes.length) break; // torn: the payload is incomplete
    if (crc32c(bytes, pos + recordHeaderBytes, end) !== crc) {
      if (end === bytes.length) break; // torn: the last record was not all written
      corrupt(`CRC mismatch in the record at byte ${pos}, which is followed by ${bytes.length - end} more bytes`);
    }
    payloads.push(bytes.subarray(pos + recordHeaderBytes, end));
    pos = end;
  }
  return { payloads, validBytes: pos };
}

export class RegistryJournal {
  private unsynced = false;
  private closed = false;
  /** Where a failed append must be cut off, when cutting it failed too; null otherwise. */
  private tornAt: number | null = null;
  /** The dir whose entry for this file is not yet durable (a journal made by create()), or null. */
  private dirToSync: string | null = null;

  private constructor(
    /** Where the file is now (setAside renames it). */
    public path: string,
    private readonly fs: FileSystem,
    private readonly handle: FileHandle,
  ) {}

  /**
   * Opens the journal at path for appending after its first validBytes (a torn tail beyond them
   * is cut off); creates it, durably, when missing or empty.
   */
  static open(fs: FileSystem, dir: string, path: string, validBytes: number): RegistryJournal {
    const handle = fs.open(path, "readwrite");
    const journal = new RegistryJournal(path, fs, handle);
    if (validBytes < header.length) {
      handle.truncate(0);
      handle.append(header);
      handle.sync();
      fs.syncDir(dir);
    } else if (handle.size() > validBytes) {
      handle.truncate(validBytes);
      handle.sync();
    }
    return journal;
  }

  /**
   * A new, empty journal at path (any file there is emptied), made without waiting on the disk:
   * its header and its dir entry become durable with its first sync(), which comes before any
   * of its records is acknowledged. A crash before then leaves no file, or a header, or nothing
   * past one: each opens as an empty journal.
   */
  static create(fs: FileSystem, dir: string, path: string): RegistryJournal {
    const handle = fs.open(path, "readwrite");
    try {
      handle.truncate(0);
      handle.append(header);
    } catch (e) {
      handle.close();
      throw e;
    }
    const journal = new RegistryJournal(path, fs, handle);
    journal.dirToSync = dir;
    journal.unsynced = true;
    return journal;
  }

  /**
   * Renames the file to `to` (in the same dir); appends and syncs go on as before. The rename is
   * durable once the dir is fsynced (the next journal's first sync does it).
   */
  setAside(to: string): void {
    this.fs.rename(this.path, to);
    this.path = to;
  }

  /** Bytes of the file: header and records. */
  size(): number {
    return this.handle.size();
  }

  /** Appends one record (not yet durable: see sync). On failure the file is as it was before. */
  append(payload: Uint8Array): void {
    assert(!this.closed, "no append to a closed registry journal");
    if (payload.length > registryJournalRecordBytesMax) {
      throw new Error(`a registry transaction of ${payload.length} bytes is larger than ${registryJournalRecordBytesMax}`);
    }
    const record = new Uint8Array(recordHeaderBytes + payload.length);
    const view = new DataView(record.buffer);
    view.setUint32(0, payload.length);
    view.setUint32(4, crc32c(payload));
    record.set(payload, recordHeaderBytes);
    // A failed append whose cut-off failed too left a partial record: cut it first.
    if (this.tornAt !== null) {
      this.handle.truncate(this.tornAt);
      this.tornAt = null;
    }
    const before = this.handle.size();
    try {
      this.handle.append(record);
    } catch (e) {
      // A partial record in the middle of the file would read as corruption once another
      // record follows it. If even the truncate fails, the next append tries it first.
      try {
        this.handle.truncate(before);
      } catch {
        this.tornAt = before;
      }
      throw e;
    }
    this.unsynced = true;
  }

  /** True when something was appended since the last fsync began. */
  get dirty(): boolean {
    return this.unsynced;
  }

  /**
   * fsync, off the event loop where the platform can; appends may go on meanwhile (they are
   * for the next sync). The caller must not close the journal before it settles.
   */
  async sync(): Promise<void> {
    if (!this.unsynced || this.closed) return;
    this.unsynced = false;
    const dir = this.dirToSync;
    if (this.handle.syncAsync) await this.handle.syncAsync();
    else this.handle.sync();
    if (dir !== null) {
      await syncDirAsync(this.fs, dir);
      this.dirToSync = null;
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.handle.close();
  }
}
