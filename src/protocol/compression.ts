// Kafka's compression codecs (attributes & 7) as pure functions on bytes:
//
//   0 none · 1 gzip (RFC 1952) · 2 snappy (xerial framing or raw, compression_snappy.ts) ·
//   3 lz4 (LZ4 frame, compression_lz4.ts) · 4 zstd (frames, compression_zstd.ts; batch v2 only)
//
// gzip and zstd come from node:zlib, a compute module that Bun 1.4 and Deno 2.9 both provide,
// loaded at the first use (zlib.ts).
// Decompression never throws: it returns the bytes or a Kafka error code with a reason
// (CORRUPT_MESSAGE for input that does not decode, MESSAGE_TOO_LARGE when the output would pass
// the caller's bound, limits.decompressedBytesMax by default, UNSUPPORTED_COMPRESSION_TYPE for
// codecs 5-7). Compression only fails on a programmer error (an unknown codec).

import { assert, decompressedBytesMax, ErrorCode } from "../util/mod.ts";
import { lz4Compress, lz4Decompress } from "./compression_lz4.ts";
import { snappyCompress, snappyDecompress } from "./compression_snappy.ts";
import { zstdDecompress } from "./compression_zstd.ts";
import { Compression } from "./record_batch.ts";
import { nodeZlib } from "./zlib.ts";

export type Decompressed =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; errorCode: number; message: string };

export interface DecompressOptions {
  /** Most bytes the output may have. */
  maxBytes?: number;
  /** LZ4 from a magic-0 message: Kafka wrote its frame header checksum wrongly, so skip it. */
  lz4LegacyHeaderChecksum?: boolean;
}

export const codecNames = ["none", "gzip", "snappy", "lz4", "zstd"] as const;

/**
 * Compression levels (Kafka's compression.gzip.level / compression.zstd.level, KIP-390); a level
 * left out is the codec's default. lz4 has none here: lz4js writes one fast level only.
 */
export interface CompressionLevels {
  gzip?: number;
  zstd?: number;
}

export function compress(codec: number, data: Uint8Array, levels: CompressionLevels = {}): Uint8Array {
  switch (codec) {
    case Compression.none:
      return data;
    case Compression.gzip:
      return toUint8(nodeZlib().gzipSync(data, { level: levels.gzip ?? -1 }));
    case Compression.snappy:
      return snappyCompress(data);
    case Compression.lz4:
      return lz4Compress(data);
    case Compression.zstd: {
      const zlib = nodeZlib();
      return toUint8(
        levels.zstd === undefined
          ? zlib.zstdCompressSync(data)
          : zlib.zstdCompressSync(data, { params: { [zlib.constants.ZSTD_c_compressionLevel]: levels.zstd } }),
      );
    }
    default:
      assert(false, `compression codec ${codec} is 0-4`);
  }
}

export function decompress(codec: number, data: Uint8Array, opts: DecompressOptions = {}): Decompressed {
  const maxBytes = opts.maxBytes ?? decompressedBytesMax;
  switch (codec) {
    case Compression.none:
      return data.length <= maxBytes ? { ok: true, bytes: data } : tooLarge(`${data.length} bytes`, maxBytes);
    case Compression.gzip:
      return viaZlib(() => nodeZlib().gunzipSync(data, { maxOutputLength: maxBytes }), "gzip", maxBytes);
    case Compression.zstd:
      return fromDecoded(zstdDecompress(data, maxBytes), maxBytes);
    case Compression.snappy:
      return fromDecoded(snappyDecompress(data, maxBytes), maxBytes);
    case Compression.lz4:
      return fromDecoded(lz4Decompress(data, maxBytes, opts.lz4LegacyHeaderChecksum ?? false), maxBytes);
    default:
      return { ok: false, errorCode: ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, message: `compression codec ${codec}` };
  }
}

function toUint8(b: Uint8Array): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

function tooLarge(what: string, maxBytes: number): Decompressed {
  return { ok: false, errorCode: ErrorCode.MESSAGE_TOO_LARGE, message: `decompressed ${what} past the limit of ${maxBytes}` };
}

/**
 * zlib throws on corrupt input and a RangeError (ERR_BUFFER_TOO_LARGE) past maxOutputLength; a
 * gzip member cut short is "unexpected end of file".
 */
function viaZlib(run: () => Uint8Array, name: string, maxBytes: number): Decompressed {
  try {
    return { ok: true, bytes: toUint8(run()) };
  } catch (e) {
    if (e instanceof RangeError) return tooLarge(name, maxBytes);
    return { ok: false, errorCode: ErrorCode.CORRUPT_MESSAGE, message: `corrupt ${name} data: ${(e as Error).message}` };
  }
}

function fromDecoded(d: Uint8Array | { error: string; tooLarge?: boolean }, maxBytes: number): Decompressed {
  if (d instanceof Uint8Array) return { ok: true, bytes: d };
  if (d.tooLarge) return tooLarge(d.error, maxBytes);
  return { ok: false, errorCode: ErrorCode.CORRUPT_MESSAGE, message: d.error };
}
