// Snappy, Kafka's compression codec 2. Two layouts arrive:
//
// - xerial framing, as Kafka's Java client (snappy-java's SnappyOutputStream) and kafka-python
//   write it: magic `\x82SNAPPY\x00` · version int32 · compatible version int32 ·
//   [chunk length int32 BE · raw snappy chunk]*, each chunk at most 32 KiB uncompressed;
// - raw snappy (uncompressed length varint · elements), as librdkafka writes it.
//
// Decoding takes either (snappy-java falls back to raw when the magic is absent, as here).
// Encoding writes the xerial framing, as Kafka's broker does when it recompresses; snappyjs
// compresses each chunk. The raw decoder is written here, not taken from snappyjs: snappyjs
// 0.7.0 trusts its input (a 4-byte literal length can go negative and walk the input backwards,
// hanging on hostile bytes, and output past the declared length goes unnoticed).
//
// Raw snappy elements (tag byte, low 2 bits the kind): 00 literal of (tag >> 2) + 1 bytes, or
// for 60-63 a length - 1 in the next 1-4 bytes LE; 01 copy of 4 + ((tag >> 2) & 7) bytes from
// offset ((tag >> 5) << 8) | next byte; 10 copy of (tag >> 2) + 1 bytes, offset LE16; 11 the
// same with offset LE32.

import snappy from "snappyjs";

export type Decoded = Uint8Array | { error: string; tooLarge?: boolean };

const xerialMagic = new Uint8Array([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const xerialHeaderBytes = 16;
const xerialChunkBytes = 32 * 1024;

function isXerial(src: Uint8Array): boolean {
  if (src.length < xerialHeaderBytes) return false;
  for (let i = 0; i < xerialMagic.length; i++) if (src[i] !== xerialMagic[i]) return false;
  return true;
}

/** Decodes src[s, end) into dst, which has exactly the declared length; returns an error or null. */
function decodeElements(src: Uint8Array, s: number, end: number, dst: Uint8Array): string | null {
  let d = 0;
  while (s < end) {
    const tag = src[s++];
    const kind = tag & 3;
    let len: number;
    if (kind === 0) {
      len = (tag >>> 2) + 1;
      if (len > 60) {
        const n = len - 60;
        if (end - s < n) return "snappy literal length runs past the end";
        len = 1;
        for (let i = 0; i < n; i++) len += src[s + i] * 2 ** (8 * i);
        s += n;
      }
      if (len > end - s || len > dst.length - d) return "snappy literal runs past the end";
      dst.set(src.subarray(s, s + len), d);
      s += len;
      d += len;
      continue;
    }
    let offset: number;
    const n = kind === 1 ? 1 : kind === 2 ? 2 : 4;
    if (end - s < n) return "snappy copy runs past the end";
    if (kind === 1) {
      len = 4 + ((tag >>> 2) & 7);
      offset = ((tag >>> 5) << 8) | src[s];
    } else {
      len = (tag >>> 2) + 1;
      offset = src[s] | (src[s + 1] << 8);
      if (kind === 3) offset += src[s + 2] * 65536 + src[s + 3] * 16777216;
    }
    s += n;
    if (offset === 0 || offset > d || len > dst.length - d) return `snappy copy of ${len} from offset ${offset} at ${d}`;
    if (offset >= len) dst.copyWithin(d, d - offset, d - offset + len);
    else for (let i = 0; i < len; i++) dst[d + i] = dst[d + i - offset];
    d += len;
  }
  return d === dst.length ? null : `snappy stream declared ${dst.length} bytes but holds ${d}`;
}

function decodeRaw(src: Uint8Array, maxBytes: number): Decoded {
  let n = 0;
  let s = 0;
  for (let shift = 0; ; shift += 7) {
    if (s >= src.length || shift > 28) return { error: "snappy stream without a valid length" };
    const b = src[s++];
    n += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) break;
  }
  // No element expands more than 64 bytes from 3 (a 2-byte-offset copy), so a longer claim is a lie.
  if (n > (src.length - s) * 22) return { error: `snappy stream of ${src.length} bytes claims ${n}` };
  if (n > maxBytes) return { error: `snappy stream of ${n} bytes`, tooLarge: true };
  const out = new Uint8Array(n);
  const error = decodeElements(src, s, src.length, out);
  return error === null ? out : { error };
}

export function snappyDecompress(src: Uint8Array, maxBytes: number): Decoded {
  if (!isXerial(src)) return decodeRaw(src, maxBytes);
  const dv = new DataView(src.buffer, src.byteOffset, src.byteLength);
  const parts: Uint8Array[] = [];
  let total = 0;
  for (let p = xerialHeaderBytes; p < src.length;) {
    if (src.length - p < 4) return { error: "xerial snappy chunk length runs past the end" };
    const size = dv.getInt32(p);
    p += 4;
    if (size < 0 || size > src.length - p) return { error: `xerial snappy chunk of ${size} bytes` };
    const part = decodeRaw(src.subarray(p, p + size), maxBytes - total);
    if (!(part instanceof Uint8Array)) return part;
    parts.push(part);
    total += part.length;
    p += size;
  }
  const out = new Uint8Array(total);
  let o = 0;
  for (const part of parts) {
    out.set(part, o);
    o += part.length;
  }
  return out;
}

export function snappyCompress(data: Uint8Array): Uint8Array {
  const chunks: Uint8Array[] = [];
  let total = xerialHeaderBytes;
  for (let p = 0; p < data.length; p += xerialChunkBytes) {
    const c = snappy.compress(data.subarray(p, Math.min(data.length, p + xerialChunkBytes))) as Uint8Array;
    chunks.push(c);
    total += 4 + c.length;
  }
  const out = new Uint8Array(total);
  const dv = new DataView(out.buffer);
  out.set(xerialMagic, 0);
  dv.setInt32(8, 1); // version
  dv.setInt32(12, 1); // minimum compatible version
  let o = xerialHeaderBytes;
  for (const c of chunks) {
    dv.setInt32(o, c.length);
    out.set(c, o + 4);
    o += 4 + c.length;
  }
  return out;
}
