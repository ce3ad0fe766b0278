// Legacy message sets (magic 0 and 1), written by hand from Kafka's format description, for the
// up-conversion tests; and a small record batch v2 reader that also reads compressed batches.
//
//   message: offset int64 · messageSize int32 · crc uint32 (CRC32 of magic..end) · magic int8 ·
//            attributes int8 (codec bits 0-2, LogAppendTime bit 3) · [timestamp int64, magic 1] ·
//            key (int32 length, -1 null) · value (likewise)
//
// A compressed "wrapper" message's value is the compressed inner message set; inner offsets are
// 0..n-1 in magic 1 (relative, the wrapper carrying the last), as Kafka's producers write them.
import { crc32 } from "../../src/util/crc32.ts";
import { Reader, Writer } from "../../src/util/bytes.ts";
import { compress, decompress } from "../../src/protocol/compression.ts";
import xxh32 from "lz4js/xxh32.js";

export type Bytesish = Uint8Array | string | null;

const enc = new TextEncoder();
const toBytes = (b: Bytesish): Uint8Array | null => (b === null ? null : typeof b === "string" ? enc.encode(b) : b);

export interface LegacyMessage {
  magic: 0 | 1;
  attributes?: number;
  offset?: bigint;
  timestamp?: bigint;
  key?: Bytesish;
  value: Bytesish;
}

export function legacyMessage(m: LegacyMessage): Uint8Array {
  const w = new Writer(64);
  w.int64(m.offset ?? 0n);
  const sizeAt = w.reserve(4);
  const crcAt = w.reserve(4);
  w.int8(m.magic).int8(m.attributes ?? 0);
  if (m.magic === 1) w.int64(m.timestamp ?? -1n);
  for (const b of [toBytes(m.key ?? null), toBytes(m.value)]) {
    if (b === null) w.int32(-1);
    else w.int32(b.length).bytes(b);
  }
  const out = w.finish().slice();
  const dv = new DataView(out.buffer);
  dv.setInt32(sizeAt, out.length - 12);
  dv.setUint32(crcAt, crc32(out, 16, out.length));
  return out;
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Kafka's pre-0.10 LZ4 header checksum, hashed from the magic number on (KAFKA-3160). */
export function breakLz4HeaderChecksum(frame: Uint8Array): Uint8Array {
  const out = frame.slice();
  out[6] = (xxh32.hash(0, out, 0, 6) >>> 8) & 0xff;
  return out;
}

export interface WrapperOptions {
  timestamp?: bigint;
  logAppendTime?: boolean;
  /** Compressed bytes to carry instead of compressing the inner messages. */
  payload?: Uint8Array | null;
}

/** A compressed wrapper message around inner messages (given as LegacyMessage, offsets set here). */
export function wrapper(magic: 0 | 1, codec: number, inner: LegacyMessage[], opts: WrapperOptions = {}): Uint8Array {
  const set = concat(...inner.map((m, i) => legacyMessage({ ...m, offset: magic === 1 ? BigInt(i) : 0n })));
  let value = opts.payload !== undefined ? opts.payload : compress(codec, set);
  if (opts.payload === undefined && codec === 3 && magic === 0) value = breakLz4HeaderChecksum(value as Uint8Array);
  const maxTs = inner.reduce((t, m) => (m.timestamp ?? -1n) > t ? (m.timestamp ?? -1n) : t, -1n);
  return legacyMessage({
    magic,
    attributes: codec | (opts.logAppendTime ? 8 : 0),
    offset: BigInt(inner.length - 1),
    timestamp: opts.timestamp ?? maxTs,
    key: null,
    value,
  });
}

export interface V2Record {
  offsetDelta: number;
  timestamp: bigint;
  key: string | null;
  value: string | null;
  headers: number;
}

export interface V2Batch {
  magic: number;
  codec: number;
  attributes: number;
  lastOffsetDelta: number;
  baseTimestamp: bigint;
  maxTimestamp: bigint;
  producerId: bigint;
  recordCount: number;
  records: V2Record[];
}

const dec = new TextDecoder();

/** Reads ONE record batch v2, decompressing its records when needed; throws on anything off. */
export function readV2Batch(b: Uint8Array): V2Batch {
  const r = new Reader(b);
  r.int64();
  const length = r.int32();
  if (length + 12 !== b.length) throw new Error(`batch length ${length} for ${b.length} bytes`);
  r.int32();
  const magic = r.int8();
  r.uint32();
  const attributes = r.int16();
  const lastOffsetDelta = r.int32();
  const baseTimestamp = r.int64();
  const maxTimestamp = r.int64();
  const producerId = r.int64();
  r.int16();
  r.int32();
  const recordCount = r.int32();
  const d = decompress(attributes & 7, b.subarray(61));
  if (!d.ok) throw new Error(`records do not decompress: ${d.message}`);
  const rr = new Reader(d.bytes);
  const records: V2Record[] = [];
  for (let i = 0; i < recordCount; i++) {
    const len = rr.varint();
    const end = rr.pos + len;
    rr.int8();
    const timestamp = baseTimestamp + rr.varlong();
    const offsetDelta = rr.varint();
    const kl = rr.varint();
    const key = kl < 0 ? null : dec.decode(rr.bytes(kl));
    const vl = rr.varint();
    const value = vl < 0 ? null : dec.decode(rr.bytes(vl));
    const headers = rr.varint();
    if (rr.pos !== end) throw new Error(`record ${i}: length ${len} but ${rr.pos - end + len} bytes read`);
    records.push({ offsetDelta, timestamp, key, value, headers });
  }
  if (!rr.ok || rr.remaining !== 0) throw new Error(`records section: ${rr.error ?? `${rr.remaining} bytes left`}`);
  return { magic, codec: attributes & 7, attributes, lastOffsetDelta, baseTimestamp, maxTimestamp, producerId, recordCount, records };
}
