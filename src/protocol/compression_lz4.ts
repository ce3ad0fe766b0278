// LZ4 frames (lz4 frame format spec v1.6), Kafka's compression codec 3:
//
//   magic 0x184D2204 (LE) · FLG · BD · [content size u64 LE] · HC · blocks · [content xxh32]
//   FLG: version 01 (bits 7-6), block independence (5), block checksum (4), content size (3),
//        content checksum (2), reserved (1), dictionary id (0)
//   BD:  block max size 64 KiB..4 MiB (bits 6-4 = 4..7)
//   HC:  (xxh32(FLG..before HC) >> 8) & 0xff
//   block: u32 LE size (high bit set: stored uncompressed; 0: end mark) · data · [xxh32]
//
// Kafka's magic-0 messages were written with a broken HC (hashed from the magic number on, not
// from FLG; KAFKA-3160); Kafka reads magic 0 ignoring HC, and so does `legacyHeaderChecksum`.
// Magic 1 and record batches v2 carry the correct HC, which is checked.
//
// The block codec is written here, not taken from lz4js: lz4js 0.2.0's decoder trusts its input
// (reads past the end and writes past the buffer go unnoticed), and its encoder may start the
// last match closer than 12 bytes to a block's end, which the reference decoder refuses for a
// full block (found by round trips through the `lz4` command). lz4js is still used for xxh32.
// Writes what Kafka's Java client writes: independent 64 KiB blocks, no checksums but HC.

import xxh32 from "lz4js/xxh32.js";

const frameMagic = 0x184d2204;
const blockBytes = 64 * 1024;
const minMatch = 4;
/** The last match starts at least this far from a block's end (MFLIMIT). */
const matchStartLimit = 12;
/** A block always ends with at least this many literals (LASTLITERALS). */
const lastLiterals = 5;
const hashBits = 14;

export type Decoded = Uint8Array | { error: string; tooLarge?: boolean };

function hash32(data: Uint8Array, start: number, end: number): number {
  return xxh32.hash(0, data, start, end - start) >>> 0;
}

function readU32LE(b: Uint8Array, p: number): number {
  return (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
}

function writeU32LE(b: Uint8Array, p: number, v: number): void {
  b[p] = v & 0xff;
  b[p + 1] = (v >>> 8) & 0xff;
  b[p + 2] = (v >>> 16) & 0xff;
  b[p + 3] = (v >>> 24) & 0xff;
}

// ---- block encoder: greedy, one hash table of 4-byte sequences ---------------------------------

function writeLength(dst: Uint8Array, d: number, n: number): number {
  for (; n >= 255; n -= 255) dst[d++] = 255;
  dst[d++] = n;
  return d;
}

function writeSequence(dst: Uint8Array, d: number, src: Uint8Array, lit: number, litLen: number, offset: number, matchLen: number): number {
  const m = matchLen - minMatch;
  dst[d++] = ((litLen < 15 ? litLen : 15) << 4) | (offset === 0 ? 0 : m < 15 ? m : 15);
  if (litLen >= 15) d = writeLength(dst, d, litLen - 15);
  dst.set(src.subarray(lit, lit + litLen), d);
  d += litLen;
  if (offset === 0) return d; // the last sequence: literals only
  dst[d++] = offset & 0xff;
  dst[d++] = offset >>> 8;
  if (m >= 15) d = writeLength(dst, d, m - 15);
  return d;
}

/** Compresses src[start, end) as one block into dst (sized by the caller); returns the end. */
function encodeBlock(src: Uint8Array, start: number, end: number, dst: Uint8Array, table: Int32Array): number {
  table.fill(-1);
  const view = new DataView(src.buffer, src.byteOffset, src.byteLength);
  let anchor = start;
  let d = 0;
  const matchLimit = end - lastLiterals;
  for (let i = start; i + matchStartLimit <= end;) {
    const seq = view.getUint32(i, true);
    const h = Math.imul(seq, 2654435761) >>> (32 - hashBits);
    const ref = table[h];
    table[h] = i;
    if (ref < 0 || i - ref > 0xffff || view.getUint32(ref, true) !== seq) {
      i++;
      continue;
    }
    let len = minMatch;
    while (i + len < matchLimit && src[ref + len] === src[i + len]) len++;
    d = writeSequence(dst, d, src, anchor, i - anchor, i - ref, len);
    i += len;
    anchor = i;
  }
  return writeSequence(dst, d, src, anchor, end - anchor, 0, 0);
}

// ---- block decoder: every length checked against the input left and the output room ------------

/**
 * Decodes one block src[s, sEnd) into dst at d, never writing at or past dLimit nor reading a
 * match before dMin. Returns the new output position, -1 for corrupt input, -2 for no room.
 */
function decodeBlock(src: Uint8Array, s: number, sEnd: number, dst: Uint8Array, d: number, dMin: number, dLimit: number): number {
  for (;;) {
    if (s >= sEnd) return -1;
    const token = src[s++];
    let lit = token >>> 4;
    if (lit === 15) {
      for (let b = 255; b === 255; lit += b) {
        if (s >= sEnd) return -1;
        b = src[s++];
      }
    }
    if (lit > sEnd - s) return -1;
    if (lit > dLimit - d) return -2;
    dst.set(src.subarray(s, s + lit), d);
    s += lit;
    d += lit;
    if (s === sEnd) return d;
    if (sEnd - s < 2) return -1;
    const offset = src[s] | (src[s + 1] << 8);
    s += 2;
    if (offset === 0 || offset > d - dMin) return -1;
    let len = token & 15;
    if (len === 15) {
      for (let b = 255; b === 255; len += b) {
        if (s >= sEnd) return -1;
        b = src[s++];
      }
    }
    len += minMatch;
    if (len > dLimit - d) return -2;
    if (offset >= len) dst.copyWithin(d, d - offset, d - offset + len);
    else for (let i = 0; i < len; i++) dst[d + i] = dst[d + i - offset];
    d += len;
  }
}

// ---- frames -----------------------------------------------------------------------------------

export function lz4Compress(data: Uint8Array): Uint8Array {
  const blocks = Math.max(1, Math.ceil(data.length / blockBytes));
  // Worst case: every block stored raw, plus a size word each, the header and the end mark.
  const out = new Uint8Array(7 + blocks * (4 + blockBytes + 16) + 4);
  writeU32LE(out, 0, frameMagic);
  out[4] = 0x60; // version 01, independent blocks
  out[5] = 0x40; // 64 KiB blocks
  out[6] = (hash32(out, 4, 6) >>> 8) & 0xff;
  let o = 7;
  const table = new Int32Array(1 << hashBits);
  const scratch = new Uint8Array(blockBytes + blockBytes / 255 + 16);
  for (let p = 0; p < data.length; p += blockBytes) {
    const end = Math.min(data.length, p + blockBytes);
    const n = encodeBlock(data, p, end, scratch, table);
    if (n < end - p) {
      writeU32LE(out, o, n);
      out.set(scratch.subarray(0, n), o + 4);
      o += 4 + n;
    } else {
      writeU32LE(out, o, (0x80000000 | (end - p)) >>> 0);
      out.set(data.subarray(p, end), o + 4);
      o += 4 + end - p;
    }
  }
  writeU32LE(out, o, 0);
  return out.slice(0, o + 4);
}

/**
 * A frame from lz4Compress with its header checksum recomputed the way Kafka wrote magic-0 LZ4
 * messages (hashed from the magic number on; KAFKA-3160), which 0.8-0.9 consumers expect.
 */
export function lz4LegacyHeaderChecksum(frame: Uint8Array): Uint8Array {
  frame[6] = (hash32(frame, 0, 6) >>> 8) & 0xff;
  return frame;
}

interface FrameHeader {
  end: number;
  independent: boolean;
  blockChecksum: boolean;
  contentChecksum: boolean;
  contentSize: number;
  blockMax: number;
}

function readHeader(src: Uint8Array, legacyHeaderChecksum: boolean): FrameHeader | string {
  if (src.length < 7 || readU32LE(src, 0) !== frameMagic) return "not an LZ4 frame (magic number)";
  const flg = src[4];
  const bd = src[5];
  if ((flg & 0xc0) !== 0x40 || (flg & 0x02) !== 0 || (bd & 0x8f) !== 0) return "unknown LZ4 frame version or reserved bits set";
  if ((flg & 0x01) !== 0) return "LZ4 dictionary ids are not supported";
  const sizeBytes = flg & 0x08 ? 8 : 0;
  const end = 6 + sizeBytes + 1;
  if (src.length < end) return "LZ4 frame header runs past the end";
  if (!legacyHeaderChecksum && ((hash32(src, 4, end - 1) >>> 8) & 0xff) !== src[end - 1]) {
    return "LZ4 frame header checksum mismatch";
  }
  const bsId = (bd >>> 4) & 7;
  if (bsId < 4) return `LZ4 block size id ${bsId}`;
  const contentSize = sizeBytes ? readU32LE(src, 6) + readU32LE(src, 10) * 2 ** 32 : -1;
  return {
    end,
    independent: (flg & 0x20) !== 0,
    blockChecksum: (flg & 0x10) !== 0,
    contentChecksum: (flg & 0x04) !== 0,
    contentSize,
    blockMax: 1 << (8 + 2 * bsId),
  };
}

/** Decodes one LZ4 frame, producing at most maxBytes; never throws. */
export function lz4Decompress(src: Uint8Array, maxBytes: number, legacyHeaderChecksum = false): Decoded {
  const h = readHeader(src, legacyHeaderChecksum);
  if (typeof h === "string") return { error: h };
  if (h.contentSize > maxBytes) return { error: `LZ4 content size ${h.contentSize}`, tooLarge: true };
  let out = new Uint8Array(Math.min(maxBytes, h.contentSize >= 0 ? h.contentSize : h.blockMax, src.length * 8 + 64));
  let s = h.end;
  let d = 0;
  for (;;) {
    if (src.length - s < 4) return { error: "LZ4 frame ends without an end mark" };
    const word = readU32LE(src, s);
    s += 4;
    if (word === 0) break;
    const size = word & 0x7fffffff;
    const after = s + size + (h.blockChecksum ? 4 : 0);
    if (size > h.blockMax || after > src.length) return { error: `LZ4 block of ${size} bytes` };
    if (h.blockChecksum && hash32(src, s, s + size) !== readU32LE(src, s + size)) return { error: "LZ4 block checksum mismatch" };
    const limit = Math.min(d + h.blockMax, maxBytes);
    if (limit > out.length) {
      const grown = new Uint8Array(Math.min(maxBytes, Math.max(out.length * 2, limit)));
      grown.set(out.subarray(0, d));
      out = grown;
    }
    let next: number;
    if (word & 0x80000000) {
      next = size <= limit - d ? d + size : -2;
      if (next >= 0) out.set(src.subarray(s, s + size), d);
    } else next = decodeBlock(src, s, s + size, out, d, h.independent ? d : 0, limit);
    if (next === -1) return { error: "corrupt LZ4 block" };
    if (next === -2 && limit === maxBytes && d + h.blockMax > maxBytes) {
      return { error: `LZ4 output past ${maxBytes} bytes`, tooLarge: true };
    }
    if (next === -2) return { error: "LZ4 block larger than its frame's block size" };
    d = next;
    s = after;
  }
  if (h.contentChecksum) {
    if (src.length - s < 4) return { error: "LZ4 content checksum missing" };
    if (hash32(out, 0, d) !== readU32LE(src, s)) return { error: "LZ4 content checksum mismatch" };
    s += 4;
  }
  if (s !== src.length) return { error: `${src.length - s} bytes after the LZ4 frame` };
  if (h.contentSize >= 0 && h.contentSize !== d) return { error: `LZ4 content size ${h.contentSize} but ${d} bytes decoded` };
  return out.subarray(0, d);
}
