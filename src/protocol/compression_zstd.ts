// Zstandard (RFC 8878), Kafka's compression codec 4 (record batch v2 only), decoded by node:zlib.
// zlib's one-shot zstd decoder returns what it has when a frame is cut short, so the frame
// structure is walked here first: every frame whole (header, blocks up to the last one, content
// checksum), and the output as long as the frames declare. Skippable frames are allowed.
//
//   frame: magic 0xFD2FB528 LE · descriptor · [window] · [dictionary id] · [content size] ·
//          blocks (3-byte LE header: bit 0 last, bits 1-2 type, bits 3-23 size) · [checksum]
//   skippable frame: magic 0x184D2A5? LE · size u32 LE · bytes

import { nodeZlib } from "./zlib.ts";

export type Decoded = Uint8Array | { error: string; tooLarge?: boolean };

const frameMagic = 0xfd2fb528;
const blockBytesMax = 128 * 1024;

function u32(b: Uint8Array, p: number): number {
  return (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
}

/** Little-endian unsigned of n bytes (n <= 8; exact up to 2^53). */
function uint(b: Uint8Array, p: number, n: number): number {
  let v = 0;
  for (let i = n - 1; i >= 0; i--) v = v * 256 + b[p + i];
  return v;
}

/** Walks one frame at p; returns its end and declared content size (-1: not declared), or an error. */
function walkFrame(src: Uint8Array, p: number): { end: number; contentSize: number } | string {
  if (src.length - p < 8) return "zstd frame header runs past the end";
  const magic = u32(src, p);
  if ((magic & 0xfffffff0) === 0x184d2a50) {
    const end = p + 8 + u32(src, p + 4);
    return end <= src.length ? { end, contentSize: 0 } : "zstd skippable frame runs past the end";
  }
  if (magic !== frameMagic) return "not a zstd frame (magic number)";
  const fhd = src[p + 4];
  if (fhd & 0x08) return "zstd frame descriptor reserved bit set";
  const single = (fhd & 0x20) !== 0;
  const dictBytes = [0, 1, 2, 4][fhd & 3];
  const fcsFlag = fhd >>> 6;
  const fcsBytes = fcsFlag === 0 ? (single ? 1 : 0) : [0, 2, 4, 8][fcsFlag];
  let q = p + 5 + (single ? 0 : 1) + dictBytes;
  if (q + fcsBytes > src.length) return "zstd frame header runs past the end";
  let contentSize = fcsBytes === 0 ? -1 : uint(src, q, fcsBytes) + (fcsBytes === 2 ? 256 : 0);
  if (fcsBytes === 8 && src[q + 7] > 0x1f) contentSize = Number.MAX_SAFE_INTEGER;
  q += fcsBytes;
  for (;;) {
    if (src.length - q < 3) return "zstd block header runs past the end";
    const h = src[q] | (src[q + 1] << 8) | (src[q + 2] << 16);
    const type = (h >>> 1) & 3;
    const size = h >>> 3;
    if (type === 3 || size > blockBytesMax) return `zstd block of type ${type}, ${size} bytes`;
    q += 3 + (type === 1 ? 1 : size);
    if (q > src.length) return "zstd block runs past the end";
    if (h & 1) break;
  }
  if (fhd & 0x04) q += 4;
  return q <= src.length ? { end: q, contentSize } : "zstd content checksum runs past the end";
}

export function zstdDecompress(src: Uint8Array, maxBytes: number): Decoded {
  let declared = 0;
  for (let p = 0; p < src.length || p === 0;) {
    const f = walkFrame(src, p);
    if (typeof f === "string") return { error: f };
    declared = f.contentSize < 0 || declared < 0 ? -1 : declared + f.contentSize;
    p = f.end;
  }
  if (declared > maxBytes) return { error: `zstd content of ${declared} bytes`, tooLarge: true };
  let out: Uint8Array;
  try {
    out = nodeZlib().zstdDecompressSync(src, { maxOutputLength: maxBytes });
  } catch (e) {
    if (e instanceof RangeError) return { error: `zstd output past ${maxBytes} bytes`, tooLarge: true };
    return { error: `corrupt zstd data: ${(e as Error).message}` };
  }
  if (declared >= 0 && out.length !== declared) return { error: `zstd frames declare ${declared} bytes but hold ${out.length}` };
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}
