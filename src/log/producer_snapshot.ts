// Producer state snapshots: `<log.dir>/<topic>-<partition>/<20-digit offset>.snapshot`, Kafka's
// format (ProducerStateManager.writeSnapshot), the producer state covering offsets below the
// file's offset:
//
//   version int16 (1) · crc uint32 (CRC32C of every byte after it) · count int32 · count entries
//   entry: producerId int64 · epoch int16 · lastSequence int32 · lastOffset int64 ·
//          offsetDelta int32 (last batch's lastOffset - firstOffset) · timestamp int64 ·
//          coordinatorEpoch int32 · currentTxnFirstOffset int64 (-1: none)
//
// Only each producer's last batch is stored, as Kafka stores it: after a load, duplicates of that
// batch are still found, of older ones not (Kafka's behaviour too). A file that does not decode
// whole (short, a wrong version or CRC, a count that does not fill it, values out of range) is
// CorruptSnapshotError, which the loader logs before skipping the file.

import type { Platform } from "../platform/mod.ts";
import { crc32c, producerSnapshotBytesMax } from "../util/mod.ts";
import type { BatchMetadata, ProducerStateEntry } from "./producer_state.ts";
import { segmentFileName } from "./segment.ts";

export const ProducerSnapshotSuffix = ".snapshot";
const snapshotVersion = 1;
const headerBytes = 10;
const entryBytes = 46;

export class CorruptSnapshotError extends Error {
  override name = "CorruptSnapshotError";
}

export function snapshotFileName(offset: number): string {
  return segmentFileName(offset, ProducerSnapshotSuffix);
}

/** Offsets of the `.snapshot` files among a partition dir's names, ascending. */
export function snapshotOffsets(names: readonly string[]): number[] {
  const out: number[] = [];
  for (const n of names) if (/^\d{20}\.snapshot$/.test(n)) out.push(Number(n.slice(0, 20)));
  return out.sort((a, b) => a - b);
}

/** Kafka's DefaultRecordBatch.decrementSequence. */
function decrementSequence(seq: number, decrement: number): number {
  return seq < decrement ? 0x7fffffff - (decrement - seq) + 1 : seq - decrement;
}

export function encodeSnapshot(entries: Iterable<ProducerStateEntry>): Uint8Array {
  const list = [...entries];
  const out = new Uint8Array(headerBytes + list.length * entryBytes);
  const dv = new DataView(out.buffer);
  dv.setInt16(0, snapshotVersion);
  dv.setInt32(6, list.length);
  let p = headerBytes;
  for (const e of list) {
    const last = e.batches.length === 0 ? null : e.batches[e.batches.length - 1];
    dv.setBigInt64(p, e.producerId);
    dv.setInt16(p + 8, e.producerEpoch);
    dv.setInt32(p + 10, last?.lastSeq ?? -1);
    dv.setBigInt64(p + 14, BigInt(last?.lastOffset ?? -1));
    dv.setInt32(p + 22, last === null ? 0 : last.lastOffset - last.firstOffset);
    dv.setBigInt64(p + 26, BigInt(Math.trunc(e.lastTimestampMs)));
    dv.setInt32(p + 34, e.coordinatorEpoch);
    dv.setBigInt64(p + 38, BigInt(e.currentTxnFirstOffset));
    p += entryBytes;
  }
  dv.setUint32(2, crc32c(out, 6, out.length));
  return out;
}

function safe(v: bigint, what: string): number {
  if (v < BigInt(Number.MIN_SAFE_INTEGER) || v > BigInt(Number.MAX_SAFE_INTEGER)) throw new CorruptSnapshotError(`${what} ${v} out of range`);
  return Number(v);
}

export function decodeSnapshot(bytes: Uint8Array): ProducerStateEntry[] {
  if (bytes.length < headerBytes) throw new CorruptSnapshotError(`${bytes.length} bytes: shorter than the header`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const version = dv.getInt16(0);
  if (version !== snapshotVersion) throw new CorruptSnapshotError(`Snapshot contained an unknown file version ${version}`);
  const stored = dv.getUint32(2);
  const computed = crc32c(bytes, 6, bytes.length);
  if (stored !== computed) throw new CorruptSnapshotError(`Snapshot is corrupt (CRC is no longer valid). Stored crc: ${stored}. Computed crc: ${computed}`);
  const count = dv.getInt32(6);
  if (count < 0 || headerBytes + count * entryBytes !== bytes.length) {
    throw new CorruptSnapshotError(`${count} entries do not fill the ${bytes.length} bytes`);
  }
  const out: ProducerStateEntry[] = [];
  for (let i = 0, p = headerBytes; i < count; i++, p += entryBytes) {
    const producerId = dv.getBigInt64(p);
    if (producerId < 0n) throw new CorruptSnapshotError(`producer id ${producerId}`);
    const lastSeq = dv.getInt32(p + 10);
    const lastOffset = safe(dv.getBigInt64(p + 14), "last offset");
    const offsetDelta = dv.getInt32(p + 22);
    const timestampMs = safe(dv.getBigInt64(p + 26), "timestamp");
    const txnFirst = dv.getBigInt64(p + 38);
    let batches: BatchMetadata[] = [];
    if (lastOffset >= 0) {
      if (offsetDelta < 0 || offsetDelta > lastOffset || lastSeq < 0) throw new CorruptSnapshotError(`entry ${i}: offset delta ${offsetDelta}, last sequence ${lastSeq}`);
      batches = [{ firstSeq: decrementSequence(lastSeq, offsetDelta), lastSeq, firstOffset: lastOffset - offsetDelta, lastOffset, timestampMs }];
    }
    out.push({
      producerId,
      producerEpoch: dv.getInt16(p + 8),
      batches,
      lastTimestampMs: timestampMs,
      coordinatorEpoch: dv.getInt32(p + 34),
      currentTxnFirstOffset: txnFirst < 0n ? -1 : safe(txnFirst, "transaction first offset"),
    });
  }
  return out;
}

/** The `.snapshot` files of one partition dir, by offset (Kafka's ProducerStateManager.snapshots). */
export class ProducerSnapshotFiles {
  private offsets: number[];

  constructor(private readonly platform: Platform, readonly dir: string, names: readonly string[]) {
    this.offsets = snapshotOffsets(names);
  }

  get latestOffset(): number | null {
    return this.offsets.length === 0 ? null : this.offsets[this.offsets.length - 1];
  }
  get all(): readonly number[] {
    return this.offsets;
  }

  path(offset: number): string {
    return `${this.dir}/${snapshotFileName(offset)}`;
  }

  /** Written whole and fsynced before it is named (writeFileAtomic), so a crash leaves no torn one. */
  write(offset: number, entries: Iterable<ProducerStateEntry>): void {
    this.platform.fs.writeFileAtomic(this.path(offset), encodeSnapshot(entries));
    if (!this.offsets.includes(offset)) {
      this.offsets.push(offset);
      this.offsets.sort((a, b) => a - b);
    }
  }

  /** The entries of the snapshot at offset; CorruptSnapshotError when they do not decode. */
  read(offset: number): ProducerStateEntry[] {
    const st = this.platform.fs.stat(this.path(offset));
    if (st !== null && st.size > producerSnapshotBytesMax) throw new CorruptSnapshotError(`${st.size} bytes, past ${producerSnapshotBytesMax}`);
    const bytes = this.platform.fs.readFile(this.path(offset));
    if (bytes === null) throw new CorruptSnapshotError("file vanished");
    return decodeSnapshot(bytes);
  }

  delete(offset: number): void {
    const at = this.offsets.indexOf(offset);
    if (at < 0) return;
    this.offsets.splice(at, 1);
    this.platform.fs.remove(this.path(offset));
  }

  /** Deletes those the predicate picks. */
  deleteWhere(doomed: (offset: number) => boolean): void {
    for (const o of this.offsets.filter(doomed)) this.delete(o);
  }
}
