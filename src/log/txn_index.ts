// TransactionIndex: a segment's `<base>.txnindex` (Kafka's TransactionIndex): the aborted
// transactions whose abort marker is in the segment, in marker order, one 34-byte entry each:
//
//   version int16 (0) · producerId int64 · firstOffset int64 · lastOffset int64 (the marker's) ·
//   lastStableOffset int64 (the partition's last stable offset once the marker was written)
//
// A read_committed Fetch asks the segments from the one holding its offset on for the aborted
// transactions overlapping its range (collectAbortedTxns), so the client drops their records.
//
// Invariants: entries' lastOffset increase; the file holds whole entries (a torn tail, from a
// crash, is cut at the first read); it exists only once an entry was appended (Kafka creates it
// lazily too). The file follows its segment: renamed with it (`.deleted`, `.cleaned`, `.swap`),
// cut by a truncation (entries whose marker is at or past the new end go), removed with it. The
// entries are read from the file once, then kept in memory with the segment (small: one entry per
// aborted transaction).

import type { FileHandle, Platform } from "../platform/mod.ts";
import { BatchField, batchLogOverhead } from "../protocol/mod.ts";
import { assert, recordBatchHeaderBytes } from "../util/mod.ts";

export const TxnIndexSuffix = ".txnindex";
export const txnIndexEntryBytes = 34;
const txnIndexVersion = 0;

export interface AbortedTxn {
  producerId: bigint;
  firstOffset: number;
  lastOffset: number;
  lastStableOffset: number;
}

export function encodeAbortedTxn(t: AbortedTxn): Uint8Array {
  const out = new Uint8Array(txnIndexEntryBytes);
  const dv = new DataView(out.buffer);
  dv.setInt16(0, txnIndexVersion);
  dv.setBigInt64(2, t.producerId);
  dv.setBigInt64(10, BigInt(t.firstOffset));
  dv.setBigInt64(18, BigInt(t.lastOffset));
  dv.setBigInt64(26, BigInt(t.lastStableOffset));
  return out;
}

/** The entries of a `.txnindex` file's bytes; stops at a torn tail or an entry of another version. */
export function decodeAbortedTxns(bytes: Uint8Array): AbortedTxn[] {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const out: AbortedTxn[] = [];
  for (let p = 0; p + txnIndexEntryBytes <= bytes.length; p += txnIndexEntryBytes) {
    if (dv.getInt16(p) !== txnIndexVersion) break;
    const first = dv.getBigInt64(p + 10);
    const last = dv.getBigInt64(p + 18);
    const lso = dv.getBigInt64(p + 26);
    if (first < 0n || last < first || last > BigInt(Number.MAX_SAFE_INTEGER) || lso < 0n || lso > BigInt(Number.MAX_SAFE_INTEGER)) break;
    out.push({ producerId: dv.getBigInt64(p + 2), firstOffset: Number(first), lastOffset: Number(last), lastStableOffset: Number(lso) });
  }
  return out;
}

export class TransactionIndex {
  /** Null until first needed (read from the file, or empty). */
  private entries: AbortedTxn[] | null = null;
  private file: FileHandle | null = null;

  constructor(private readonly platform: Platform, private _path: string) {}

  get path(): string {
    return this._path;
  }

  private loaded(): AbortedTxn[] {
    if (this.entries !== null) return this.entries;
    const bytes = this.platform.fs.readFile(this._path);
    this.entries = bytes === null ? [] : decodeAbortedTxns(bytes);
    if (bytes !== null && bytes.length !== this.entries.length * txnIndexEntryBytes) {
      // A torn or foreign tail: cut, so appends follow whole entries.
      this.handle().truncate(this.entries.length * txnIndexEntryBytes);
    }
    return this.entries;
  }

  private handle(): FileHandle {
    return this.file ??= this.platform.fs.open(this._path, "readwrite");
  }

  get all(): readonly AbortedTxn[] {
    return this.loaded();
  }

  get isEmpty(): boolean {
    return this.loaded().length === 0;
  }

  append(t: AbortedTxn): void {
    const entries = this.loaded();
    const last = entries[entries.length - 1];
    assert(last === undefined || t.lastOffset > last.lastOffset, "the last offsets of a .txnindex's transactions increase");
    this.handle().append(encodeAbortedTxn(t));
    entries.push(t);
  }

  /** Drops the entries whose marker is at or past offset (a truncation of the segment). */
  truncateTo(offset: number): void {
    const entries = this.loaded();
    let keep = entries.length;
    while (keep > 0 && entries[keep - 1].lastOffset >= offset) keep--;
    if (keep === entries.length) return;
    entries.length = keep;
    this.handle().truncate(keep * txnIndexEntryBytes);
  }

  /** Replaces the entries (recovery rebuilds them from the segment's batches). */
  reset(entries: readonly AbortedTxn[]): void {
    this.truncateTo(-1);
    for (const t of entries) this.append(t);
  }

  renameTo(path: string): void {
    if (this.file !== null || this.platform.fs.stat(this._path) !== null) this.platform.fs.rename(this._path, path);
    this._path = path;
  }

  flush(): void {
    this.file?.sync();
  }

  close(): void {
    this.file?.close();
    this.file = null;
  }

  closeHandlers(): void {
    try {
      this.file?.close();
    } catch {
      // The dir failed: nothing more to do with this handle.
    }
    this.file = null;
  }

  remove(): void {
    this.closeHandlers();
    this.platform.fs.remove(this._path);
  }
}

/**
 * The aborted transactions overlapping [from, upperBound) (Kafka's
 * UnifiedLog.collectAbortedTransactions): from the segment holding `from` on, until an entry whose
 * last stable offset reaches upperBound (no later marker can end a transaction begun below it).
 */
export function collectAbortedTxns(segments: readonly { baseOffset: number; txnIndex: TransactionIndex }[], from: number, upperBound: number): AbortedTxn[] {
  const out: AbortedTxn[] = [];
  let i = segments.length - 1;
  while (i > 0 && segments[i].baseOffset > from) i--;
  for (; i < segments.length; i++) {
    for (const t of segments[i].txnIndex.all) {
      if (t.lastOffset >= from && t.firstOffset < upperBound) out.push(t);
      if (t.lastStableOffset >= upperBound) return out;
    }
  }
  return out;
}

/**
 * What a read_committed Fetch answers with its records (read from fetchOffset): the aborted
 * transactions overlapping them, as the Fetch response carries them.
 */
export function abortedTxnsForRead(segments: readonly { baseOffset: number; txnIndex: TransactionIndex }[], fetchOffset: number, records: Uint8Array): { producerId: bigint; firstOffset: number }[] {
  // One past the last batch read: the end of the fetched range (Kafka's upper bound is the
  // segment position after the fetch, which gives the same transactions for these records).
  const dv = new DataView(records.buffer, records.byteOffset, records.length);
  let upperBound = fetchOffset;
  for (let pos = 0; pos + recordBatchHeaderBytes <= records.length;) {
    upperBound = Number(dv.getBigInt64(pos + BatchField.baseOffset)) + dv.getInt32(pos + BatchField.lastOffsetDelta) + 1;
    const size = batchLogOverhead + dv.getInt32(pos + BatchField.batchLength);
    if (size <= batchLogOverhead) break;
    pos += size;
  }
  return collectAbortedTxns(segments, fetchOffset, upperBound).map((t) => ({ producerId: t.producerId, firstOffset: t.firstOffset }));
}
