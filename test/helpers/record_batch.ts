// A tiny record batch v2 builder and parser for tests, written from Kafka's format description
// (not from src/protocol/record_batch.ts, so a misreading there is not copied here):
//
//   baseOffset int64 · batchLength int32 · partitionLeaderEpoch int32 · magic int8 (2) ·
//   crc uint32 (CRC32C of attributes..end) · attributes int16 · lastOffsetDelta int32 ·
//   baseTimestamp int64 · maxTimestamp int64 · producerId int64 · producerEpoch int16 ·
//   baseSequence int32 · recordCount int32 · records
//
//   record: length varint · attributes int8 · timestampDelta varlong · offsetDelta varint ·
//           keyLength varint (-1 null) · key · valueLength varint (-1 null) · value ·
//           headerCount varint · headers (keyLength varint · key · valueLength varint · value)
import { crc32c } from "../../src/util/crc32c.ts";
import { Reader, Writer } from "../../src/util/bytes.ts";

export type Bytesish = Uint8Array | string | null;

export interface TestRecord {
  key?: Bytesish;
  value: Bytesish;
  headers?: [string, Bytesish][];
  timestampDelta?: number;
}

export interface BatchOptions {
  baseOffset?: bigint;
  partitionLeaderEpoch?: number;
  magic?: number;
  attributes?: number;
  baseTimestamp?: bigint;
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
  /** Override the header's lastOffsetDelta / recordCount (for malformed batches). */
  lastOffsetDelta?: number;
  recordCount?: number;
}

const enc = new TextEncoder();
const toBytes = (b: Bytesish): Uint8Array | null => (b === null ? null : typeof b === "string" ? enc.encode(b) : b);

function writeNullableVarBytes(w: Writer, b: Bytesish): void {
  const v = toBytes(b);
  if (v === null) w.varint(-1);
  else w.varint(v.length).bytes(v);
}

function encodeRecord(r: TestRecord, offsetDelta: number): Uint8Array {
  const body = new Writer(64);
  body.int8(0);
  body.varlong(BigInt(r.timestampDelta ?? 0));
  body.varint(offsetDelta);
  writeNullableVarBytes(body, r.key ?? null);
  writeNullableVarBytes(body, r.value);
  const headers = r.headers ?? [];
  body.varint(headers.length);
  for (const [k, v] of headers) {
    const kb = enc.encode(k);
    body.varint(kb.length).bytes(kb);
    writeNullableVarBytes(body, v);
  }
  const b = body.finish();
  const out = new Writer(b.length + 5);
  out.varint(b.length).bytes(b);
  return out.finish().slice();
}

export const BASE_TIMESTAMP = 1_700_000_000_000n;

/** One magic-2 batch with a correct CRC32C (unless the options make it malformed on purpose). */
export function buildBatch(records: TestRecord[], opts: BatchOptions = {}): Uint8Array {
  const baseTs = opts.baseTimestamp ?? BASE_TIMESTAMP;
  let maxDelta = 0;
  for (const r of records) maxDelta = Math.max(maxDelta, r.timestampDelta ?? 0);
  const w = new Writer(256);
  w.int64(opts.baseOffset ?? 0n);
  const lengthAt = w.reserve(4);
  w.int32(opts.partitionLeaderEpoch ?? -1);
  w.int8(opts.magic ?? 2);
  const crcAt = w.reserve(4);
  const crcFrom = w.pos;
  w.int16(opts.attributes ?? 0);
  w.int32(opts.lastOffsetDelta ?? records.length - 1);
  w.int64(baseTs);
  w.int64(baseTs + BigInt(maxDelta));
  w.int64(opts.producerId ?? -1n);
  w.int16(opts.producerEpoch ?? -1);
  w.int32(opts.baseSequence ?? -1);
  w.int32(opts.recordCount ?? records.length);
  records.forEach((r, i) => w.bytes(encodeRecord(r, i)));
  const out = w.finish().slice();
  const dv = new DataView(out.buffer);
  dv.setInt32(lengthAt, out.length - 12);
  dv.setUint32(crcAt, crc32c(out, crcFrom, out.length));
  return out;
}

/** `n` records with values `${prefix}${i}` (i from 0), each padded to about valueBytes. */
export function valueRecords(n: number, prefix = "v", valueBytes = 0): TestRecord[] {
  return Array.from({ length: n }, (_, i) => ({ value: `${prefix}${i}`.padEnd(valueBytes, ".") }));
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** A legacy magic-1 message set entry (offset, size, crc, magic 1, attributes, timestamp, key, value). */
export function buildMagic1Message(value: string): Uint8Array {
  const v = enc.encode(value);
  const w = new Writer(64);
  w.int64(0n);
  const sizeAt = w.reserve(4);
  w.uint32(0); // CRC32 (not checked by anyone who refuses magic 1)
  w.int8(1).int8(0).int64(BASE_TIMESTAMP);
  w.int32(-1); // null key
  w.int32(v.length).bytes(v);
  const out = w.finish().slice();
  new DataView(out.buffer).setInt32(sizeAt, out.length - 12);
  return out;
}

export interface ParsedRecord {
  offset: bigint;
  timestamp: bigint;
  key: Uint8Array | null;
  value: Uint8Array | null;
}

export interface ParsedBatch {
  baseOffset: bigint;
  partitionLeaderEpoch: number;
  magic: number;
  crc: number;
  crcValid: boolean;
  attributes: number;
  lastOffsetDelta: number;
  recordCount: number;
  sizeBytes: number;
  records: ParsedRecord[];
  producerId: bigint;
}

/** Parses concatenated uncompressed batches; throws on anything malformed. */
export function parseBatches(bytes: Uint8Array): ParsedBatch[] {
  const out: ParsedBatch[] = [];
  let pos = 0;
  while (pos < bytes.length) {
    const r = new Reader(bytes, pos);
    const baseOffset = r.int64();
    const batchLength = r.int32();
    const end = pos + 12 + batchLength;
    if (!r.ok || end > bytes.length) throw new Error(`batch at ${pos} runs past the end`);
    const partitionLeaderEpoch = r.int32();
    const magic = r.int8();
    const crc = r.uint32();
    const crcValid = crc32c(bytes, r.pos, end) === crc;
    const attributes = r.int16();
    const lastOffsetDelta = r.int32();
    const baseTimestamp = r.int64();
    r.int64(); // max timestamp
    const producerId = r.int64();
    r.int16(); // producer epoch
    r.int32(); // base sequence
    const recordCount = r.int32();
    if ((attributes & 7) !== 0) throw new Error("compressed batches are not parsed here");
    const records: ParsedRecord[] = [];
    for (let i = 0; i < recordCount; i++) {
      const len = r.varint();
      const recEnd = r.pos + len;
      r.int8();
      const tsDelta = r.varlong();
      const offDelta = r.varint();
      const kl = r.varint();
      const key = kl < 0 ? null : r.bytes(kl).slice();
      const vl = r.varint();
      const value = vl < 0 ? null : r.bytes(vl).slice();
      r.pos = recEnd;
      records.push({ offset: baseOffset + BigInt(offDelta), timestamp: baseTimestamp + tsDelta, key, value });
    }
    if (!r.ok || r.pos !== end) throw new Error(`batch at ${pos}: records do not fill the batch (${r.error})`);
    out.push({ baseOffset, partitionLeaderEpoch, magic, crc, crcValid, attributes, lastOffsetDelta, recordCount, sizeBytes: end - pos, records, producerId });
    pos = end;
  }
  return out;
}

export const text = (b: Uint8Array | null): string | null => (b === null ? null : new TextDecoder().decode(b));
