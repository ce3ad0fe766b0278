// Kafka's compression codecs (src/protocol/compression.ts): round trips for every codec, frames
// from the reference tools (the `lz4` command, when present), snappy in both layouts, corrupt
// input answered with an error (never a throw), and compression bombs stopped at the bound.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { gzipSync } from "node:zlib";
import { compress, decompress, type Decompressed } from "../../src/protocol/compression.ts";
import { Compression } from "../../src/protocol/record_batch.ts";
import { crc32 } from "../../src/util/crc32.ts";
import { ErrorCode } from "../../src/util/errors.ts";

const codecs = [Compression.none, Compression.gzip, Compression.snappy, Compression.lz4, Compression.zstd];
const compressed = [Compression.gzip, Compression.snappy, Compression.lz4, Compression.zstd];
const enc = new TextEncoder();

/** mulberry32: deterministic, so a failure reproduces. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Bytes drawn from an alphabet of `alphabet` letters: small alphabets compress well. */
function sample(n: number, alphabet: number, seed: number): Uint8Array {
  const r = prng(seed);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = 97 + Math.floor(r() * alphabet);
  return out;
}

function bytesOf(d: Decompressed): Uint8Array {
  assert.ok(d.ok, d.ok ? "" : `decompress failed: ${d.message}`);
  return d.bytes;
}

const inputs: [string, Uint8Array][] = [
  ["empty", new Uint8Array(0)],
  ["one byte", new Uint8Array([7])],
  ["a short text", enc.encode("hello, kafka")],
  ["300 KB of 4 letters", sample(300_000, 4, 1)],
  ["200 KB of random bytes", sample(200_000, 256, 2).map((b) => b * 31)],
  ["1 MB of zeros", new Uint8Array(1 << 20)],
  ["exactly two 64 KiB lz4 blocks", sample(2 * 65536, 3, 3)],
];

test("crc32: the IEEE check value, as zlib computes it", () => {
  assert.equal(crc32(enc.encode("123456789")), 0xcbf43926);
  assert.equal(crc32(new Uint8Array(0)), 0);
  assert.equal(crc32(enc.encode("x123456789y"), 1, 10), 0xcbf43926);
});

test("compression: every codec round-trips every input", () => {
  for (const codec of codecs) {
    for (const [name, data] of inputs) {
      const z = compress(codec, data);
      assert.deepEqual(bytesOf(decompress(codec, z)), data, `codec ${codec}, ${name}`);
    }
  }
  // Compression does compress (snappy and lz4 find repeats only, so give them some).
  const text = enc.encode(Array.from({ length: 5_000 }, (_, i) => `value-${i % 700}\n`).join(""));
  for (const codec of compressed) assert.ok(compress(codec, text).length < text.length / 2, `codec ${codec} compresses`);
});

test("compression: gzip from zlib's own writer (as Kafka's Java client and kafka-python write it)", () => {
  const data = sample(50_000, 5, 5);
  assert.deepEqual(bytesOf(decompress(Compression.gzip, gzipSync(data, { level: 9 }))), data);
  assert.equal(compress(Compression.gzip, data)[0], 0x1f, "gzip magic");
});

test("compression: snappy decodes the xerial framing and raw snappy, and writes the xerial framing", () => {
  // Raw snappy, by hand: uncompressed length 5, one literal element of 5 bytes.
  const raw = new Uint8Array([5, (5 - 1) << 2, ...enc.encode("hello")]);
  assert.deepEqual(bytesOf(decompress(Compression.snappy, raw)), enc.encode("hello"));
  // The same as two xerial chunks ("hel" and "lo"), as snappy-java's SnappyOutputStream frames.
  const xerial = new Uint8Array([
    0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00, 0, 0, 0, 1, 0, 0, 0, 1,
    0, 0, 0, 5, 3, (3 - 1) << 2, ...enc.encode("hel"),
    0, 0, 0, 4, 2, (2 - 1) << 2, ...enc.encode("lo"),
  ]);
  assert.deepEqual(bytesOf(decompress(Compression.snappy, xerial)), enc.encode("hello"));
  const z = compress(Compression.snappy, sample(100_000, 4, 6));
  assert.deepEqual([...z.subarray(0, 8)], [0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
  assert.equal(new DataView(z.buffer, z.byteOffset).getInt32(8), 1, "xerial version 1");
});

test("compression: lz4 writes independent 64 KiB blocks with a correct header checksum", () => {
  const z = compress(Compression.lz4, sample(10_000, 4, 7));
  assert.deepEqual([...z.subarray(0, 6)], [0x04, 0x22, 0x4d, 0x18, 0x60, 0x40]);
  // Kafka's magic-0 frames hashed the magic number into the header checksum (KAFKA-3160): such a
  // frame is refused as corrupt unless the caller says it came from a magic-0 message.
  const broken = z.slice();
  broken[6] ^= 0xff;
  const refused = decompress(Compression.lz4, broken);
  assert.equal(refused.ok, false);
  assert.equal(!refused.ok && refused.errorCode, ErrorCode.CORRUPT_MESSAGE);
  assert.deepEqual(bytesOf(decompress(Compression.lz4, broken, { lz4LegacyHeaderChecksum: true })), sample(10_000, 4, 7));
});

const lz4Cli = spawnSync("lz4", ["-V"], { stdio: "ignore" }).status === 0;
const lz4Skip = lz4Cli ? false : "needs the lz4 command (Debian package lz4)";
if (lz4Skip && process.env.CI === "true") throw new Error(`CI=true and the test ${lz4Skip}: .ci/run must install it`);

/** Runs the lz4 command from file to file (pipes both ways can fill up and deadlock). */
function lz4Command(args: string[], input: Uint8Array): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), "strand-lz4-"));
  try {
    writeFileSync(join(dir, "in"), input);
    const r = spawnSync("lz4", ["-f", "-q", ...args, join(dir, "in"), join(dir, "out")], { stdio: ["ignore", "ignore", "pipe"] });
    assert.equal(r.status, 0, `lz4 ${args.join(" ")}: ${r.stderr}`);
    return new Uint8Array(readFileSync(join(dir, "out")));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("compression: lz4 frames agree with the reference lz4 command both ways", { skip: lz4Skip }, () => {
  for (let i = 0; i < 40; i++) {
    // Full 64 KiB blocks, where a late match would break the end-of-block rules, and odd sizes.
    const data = sample(65536 * 2 + (i % 4) * 977, 2 + (i % 17), 100 + i);
    assert.deepEqual(lz4Command(["-d"], compress(Compression.lz4, data)), data, `lz4 -d of our frame ${i}`);
  }
  const data = sample(300_000, 6, 9);
  for (const opts of [[], ["--content-size"], ["-BD"], ["-BX"], ["-B4"], ["--no-frame-crc"], ["-9"]]) {
    const theirs = lz4Command(["-z", ...opts], data);
    assert.deepEqual(bytesOf(decompress(Compression.lz4, theirs)), data, `lz4 ${opts.join(" ")}`);
  }
});

test("compression: corrupt input gets CORRUPT_MESSAGE, never a throw", () => {
  const data = sample(40_000, 8, 10);
  for (const codec of compressed) {
    const z = compress(codec, data);
    const cases: [string, Uint8Array][] = [
      ["random bytes", sample(500, 256, 11)],
      ["truncated to half", z.subarray(0, z.length >> 1)],
      ["the first 3 bytes", z.subarray(0, 3)],
      ["missing its last byte", z.subarray(0, z.length - 1)],
      ["empty", new Uint8Array(0)],
    ];
    for (const [name, bad] of cases) {
      const d = decompress(codec, bad);
      assert.equal(d.ok, false, `codec ${codec}, ${name}: refused`);
      assert.equal(!d.ok && d.errorCode, ErrorCode.CORRUPT_MESSAGE, `codec ${codec}, ${name}`);
    }
  }
  assert.equal(decompress(Compression.snappy, new Uint8Array(0)).ok, false, "an empty snappy stream has no length");
  const unknown = decompress(5, new Uint8Array(10));
  assert.equal(!unknown.ok && unknown.errorCode, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE);
});

test("compression: thousands of mutated frames decode or fail cleanly, within the bound", () => {
  const r = prng(12);
  const data = sample(5_000, 6, 13);
  for (const codec of compressed) {
    const z = compress(codec, data);
    for (let i = 0; i < 1_500; i++) {
      const bad = z.slice();
      for (let k = 1 + Math.floor(r() * 4); k > 0; k--) bad[Math.floor(r() * bad.length)] = Math.floor(r() * 256);
      const d = decompress(codec, bad, { maxBytes: 100_000 });
      if (d.ok) assert.ok(d.bytes.length <= 100_000);
      else assert.ok([ErrorCode.CORRUPT_MESSAGE, ErrorCode.MESSAGE_TOO_LARGE].includes(d.errorCode as 2), `codec ${codec}: ${d.message}`);
    }
  }
});

test("compression: a bomb stops at the bound with MESSAGE_TOO_LARGE", () => {
  const zeros = new Uint8Array(4 << 20);
  for (const codec of compressed) {
    const z = compress(codec, zeros);
    assert.ok(z.length < 300_000, `codec ${codec}: 4 MiB of zeros compress to ${z.length}`);
    const d = decompress(codec, z, { maxBytes: 1 << 20 });
    assert.equal(!d.ok && d.errorCode, ErrorCode.MESSAGE_TOO_LARGE, `codec ${codec}`);
    assert.equal(bytesOf(decompress(codec, z, { maxBytes: 4 << 20 })).length, 4 << 20, `codec ${codec}: exactly at the bound`);
  }
  // The default bound (limits.decompressedBytesMax, 64 MiB): 80 MiB of zeros gzip to 80 KB.
  const bomb = gzipSync(new Uint8Array(80 << 20));
  const d = decompress(Compression.gzip, bomb);
  assert.equal(!d.ok && d.errorCode, ErrorCode.MESSAGE_TOO_LARGE);
  // Declared sizes are not trusted: a snappy length of 4 GiB in 6 bytes (snappy expands at most
  // about 21 times: corrupt) and an lz4 content size of 1 TiB are refused before allocating.
  const snappyLie = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f, 0]);
  assert.equal((decompress(Compression.snappy, snappyLie) as { errorCode: number }).errorCode, ErrorCode.CORRUPT_MESSAGE);
  const lz4Lie = compress(Compression.lz4, new Uint8Array(0));
  const withSize = new Uint8Array([0x04, 0x22, 0x4d, 0x18, 0x68, 0x40, 0, 0, 0, 0, 0, 1, 0, 0, 0, ...lz4Lie.subarray(7)]);
  const sized = decompress(Compression.lz4, withSize, { lz4LegacyHeaderChecksum: true });
  assert.equal(!sized.ok && sized.errorCode, ErrorCode.MESSAGE_TOO_LARGE);
});
