// Log storage benchmark, run by Bun and by Deno (`npm run bench:log` runs it under both):
//   bun test/bench/log_bench.ts [--append-mib 256] [--mib 1024] [--rounds 7] [--lookups 20000] [--dir D]
//
// Measures the Log class directly (no sockets, no protocol), each figure next to a baseline
// measured in the same run on the same disk:
//   append   Log.appendAsLeader of ~16 KiB batches of 100-byte and of 1 KiB records (--append-mib
//            of each per round), against `dd if=/dev/zero bs=16k` writing as many bytes into the
//            same directory: both into the page cache, no fsync on either side. The batches come
//            from a ring of 8 distinct ones (128 KiB, cache-warm), as a produced batch is when the
//            broker appends it, just after its CRC32C check read it; dd's buffer is warm too.
//            Median of --rounds rounds, with `sync` before each so one round's writeback does
//            not slow the next. A second baseline, dd with bs = the batch size, makes the same
//            write calls as the log: ext4 takes markedly longer per byte for writes that are not
//            whole pages (measured here: 15,556-byte writes run at ~60% of 16,384-byte ones,
//            in dd and in the runtimes alike), and produced batches are never whole pages.
//   idempotent the same append of 100-byte records with a producer id and increasing sequences
//            (the producer state's checks and updates on every batch: Kafka's
//            analyzeAndValidateProducerState), against the plain append in the same rounds,
//            alternating which goes first: issue 15's target is idempotent within 10% of plain; the
//            small batches make the per-batch cost as visible as it gets. `--only idempotent` runs
//            this part alone.
//   read     sequential Log.read of a --mib partition of 1 KiB records, in 1 MiB fetches, against
//            `dd of=/dev/null bs=1M` of its segment files (both from the page cache).
//   lookup   p50/p99 latency on that partition of Log.read(random offset, 1 byte, minOneBatch):
//            segment search, offset index, header scan and reading the one batch; and of
//            Log.offsetForTimestamp(random timestamp): segment search, time index, offset index,
//            header scan and decoding the batch's records.
//   recovery Log.open after an unclean shutdown with recovery point 0 (Kafka's LogLoader path:
//            every batch of every segment read in large chunks, length/offsets/CRC32C checked,
//            both indexes rebuilt): MB/s of segment scanned. Also CRC32C alone over the same bytes
//            in memory, the CPU bound of that scan.
//   cleaning LogCleaner.cleanLog of a --clean-mib compacted partition of ~1 KiB records in
//            ~16 KiB batches, 10,000 keys each written about 13 times, uncompressed and gzip:
//            MB/s of segment read (offset map, filter, rewrite, swap), and the share kept.
//            `--only clean` runs this part alone.
// The partition for read/lookup/recovery is written (untimed) from batches with increasing
// timestamps, one per batch, so every timestamp lookup has a known answer.
// The last line of output is `RESULT <json>` for the driver.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as nodePath from "node:path";
import process from "node:process";
import { Log, LogCleaner, type LogConfig, type LogLoadState } from "../../src/log/mod.ts";
import { RecordBatchBuilder } from "../../src/protocol/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import { crc32c } from "../../src/util/crc32c.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { assert } from "../../src/util/assert.ts";
import { buildBatch } from "../helpers/record_batch.ts";

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : dflt;
}

const MiB = 1024 * 1024;
const bigMib = Number(arg("mib", "1024"));
const appendMib = Number(arg("append-mib", "256"));
const rounds = Number(arg("rounds", "7"));
const lookups = Number(arg("lookups", "20000"));
const cleanMib = Number(arg("clean-mib", "128"));
const only = arg("only", "");
const root = fs.mkdtempSync(nodePath.join(arg("dir", os.tmpdir()), "strand-logbench-"));
const platform = await loadPlatform();
const runtime = `${platform.name} ${platform.version}`;
const batchBytesTarget = 16 * 1024;
const timestamp0 = 1_700_000_000_000;

const config: LogConfig = {
  segmentBytes: 1 << 30, // Kafka's default log.segment.bytes
  segmentMs: 7 * 24 * 3_600_000,
  indexIntervalBytes: 4096,
  segmentIndexBytes: 10 * MiB,
};

const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

function out(line: string): void {
  console.log(line);
}

/** Drops dirty pages to disk so one measurement does not pay for the previous one's writeback. */
function syncDisk(): void {
  spawnSync("sync");
}

/** dd's own figure for copying `bytes` with block size bs: seconds. */
function dd(args: string[]): number {
  const r = spawnSync("dd", args, { encoding: "utf8" });
  const m = /copied, ([\d.e+-]+) s/.exec(r.stderr ?? "");
  if (r.status !== 0 || m === null) throw new Error(`dd ${args.join(" ")} failed: ${r.stderr}`);
  return Number(m[1]);
}

interface Batches {
  recordBytes: number;
  recordsPerBatch: number;
  batchBytes: number;
  template: Uint8Array;
}

/** A batch of about 16 KiB of recordBytes-byte values (with producerId: an idempotent producer's, sequence 0). */
function batchShape(recordBytes: number, fill = "x", producerId?: bigint): Batches {
  const value = fill.repeat(recordBytes);
  const one = buildBatch([{ value }]).length - 61;
  const recordsPerBatch = Math.max(1, Math.floor((batchBytesTarget - 61) / one));
  const producer = producerId === undefined ? {} : { producerId, producerEpoch: 0, baseSequence: 0 };
  const template = buildBatch(Array.from({ length: recordsPerBatch }, () => ({ value })), producer);
  return { recordBytes, recordsPerBatch, batchBytes: template.length, template };
}

/** Eight distinct batches of the shape (different bytes, same size). */
function ring(recordBytes: number, producerId?: bigint): Batches[] {
  return Array.from({ length: 8 }, (_, k) => batchShape(recordBytes, "xyzwvuts"[k], producerId));
}

/** Appends count batches from the ring; an idempotent ring's batches get the next sequence each (the log checks no CRC). */
function appendRing(dir: string, batches: Batches[], count: number, idempotent = false): { seconds: number; log: Log } {
  const log = Log.open(platform, dir, "bench", 0, config, silentLogger);
  const n = batches[0].recordsPerBatch;
  const views = batches.map((b) => new DataView(b.template.buffer, b.template.byteOffset, b.template.byteLength));
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    if (idempotent) views[i & 7].setInt32(53, i * n); // baseSequence
    log.appendAsLeader(batches[i & 7].template, n, 0);
  }
  const seconds = (performance.now() - t0) / 1000;
  return { seconds, log };
}

/**
 * A partition of `totalBytes` of the shape, batch k stamped timestamp0 + k (CRC recomputed), for
 * read, lookup and recovery. Untimed.
 */
function buildPartition(dir: string, b: Batches, totalBytes: number): Log {
  const log = Log.open(platform, dir, "bench", 0, config, silentLogger);
  const count = Math.floor(totalBytes / b.batchBytes);
  const buf = new Uint8Array(b.batchBytes);
  const dv = new DataView(buf.buffer);
  for (let k = 0; k < count; k++) {
    buf.set(b.template);
    dv.setBigInt64(27, BigInt(timestamp0 + k));
    dv.setBigInt64(35, BigInt(timestamp0 + k));
    dv.setUint32(17, crc32c(buf, 21, b.batchBytes));
    log.appendAsLeader(buf, b.recordsPerBatch, 0);
  }
  return log;
}

function segmentFiles(dir: string, suffix: string): string[] {
  return fs.readdirSync(dir).filter((n) => n.endsWith(suffix)).sort().map((n) => `${dir}/${n}`);
}

interface AppendResult {
  recordBytes: number;
  batchBytes: number;
  recordsPerBatch: number;
  bytes: number;
  logMBps: number;
  ddMBps: number;
  ratio: number;
  /** dd writing blocks of the batch size: the same write calls as the log. */
  ddSameSizeMBps: number;
  ratioSameSize: number;
  recordsPerSec: number;
}

/** Rounds of (dd, Log append of `bytes`). */
function benchAppend(batches: Batches[], bytes: number): AppendResult {
  const b = batches[0];
  const count = Math.floor(bytes / b.batchBytes);
  const written = count * b.batchBytes;
  const logTimes: number[] = [];
  const ddTimes: number[] = [];
  const ddSameTimes: number[] = [];
  for (let r = 0; r < rounds; r++) {
    syncDisk();
    const ddFile = `${root}/dd.bin`;
    ddTimes.push(dd(["if=/dev/zero", `of=${ddFile}`, "bs=16k", `count=${Math.ceil(written / 16384)}`]));
    fs.rmSync(ddFile);
    syncDisk();
    ddSameTimes.push(dd(["if=/dev/zero", `of=${ddFile}`, `bs=${b.batchBytes}`, `count=${count}`]));
    fs.rmSync(ddFile);
    syncDisk();
    const dir = `${root}/append-${r}`;
    const { seconds, log } = appendRing(dir, batches, count);
    logTimes.push(seconds);
    log.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const logMBps = written / 1e6 / median(logTimes);
  const ddMBps = written / 1e6 / median(ddTimes);
  const ddSameSizeMBps = written / 1e6 / median(ddSameTimes);
  return {
    recordBytes: b.recordBytes,
    batchBytes: b.batchBytes,
    recordsPerBatch: b.recordsPerBatch,
    bytes: written,
    logMBps,
    ddMBps,
    ratio: logMBps / ddMBps,
    ddSameSizeMBps,
    ratioSameSize: logMBps / ddSameSizeMBps,
    recordsPerSec: (count * b.recordsPerBatch) / median(logTimes),
  };
}

/** Rounds of plain and idempotent appends of the same bytes, alternating which goes first. */
function benchIdempotent(bytes: number): { plainMBps: number; idempotentMBps: number; ratio: number; batchBytes: number } {
  const plain = ring(100);
  const idem = ring(100, 4242n);
  const count = Math.floor(bytes / plain[0].batchBytes);
  const written = count * plain[0].batchBytes;
  const times = { plain: [] as number[], idem: [] as number[] };
  for (let r = 0; r < rounds; r++) {
    for (const kind of r % 2 === 0 ? ["plain", "idem"] as const : ["idem", "plain"] as const) {
      syncDisk();
      const dir = `${root}/idem-${kind}-${r}`;
      const { seconds, log } = appendRing(dir, kind === "idem" ? idem : plain, count, kind === "idem");
      if (kind === "idem") assert(log.producerState.lastEntry(4242n) !== undefined, "the producer state saw the idempotent batches");
      times[kind].push(seconds);
      log.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  const plainMBps = written / 1e6 / median(times.plain);
  const idempotentMBps = written / 1e6 / median(times.idem);
  return { plainMBps, idempotentMBps, ratio: idempotentMBps / plainMBps, batchBytes: plain[0].batchBytes };
}

function benchRead(log: Log, dir: string): { logMBps: number; ddMBps: number; ratio: number } {
  const readAll = () => {
    let bytes = 0;
    const t0 = performance.now();
    for (let o = log.logStartOffset; o < log.logEndOffset;) {
      const r = log.read(o, MiB, true).records;
      if (r.length === 0) throw new Error(`empty read at ${o}`);
      bytes += r.length;
      // The next offset is one past the last batch's last offset (its header is in the bytes).
      let pos = 0;
      const dv = new DataView(r.buffer, r.byteOffset, r.byteLength);
      let lastBatch = 0;
      while (pos < r.length) {
        lastBatch = pos;
        pos += 12 + dv.getInt32(pos + 8);
      }
      o = Number(dv.getBigInt64(lastBatch)) + dv.getInt32(lastBatch + 23) + 1;
    }
    return { bytes, seconds: (performance.now() - t0) / 1000 };
  };
  readAll(); // warm: pages in cache, code compiled
  const times: number[] = [];
  let bytes = 0;
  for (let r = 0; r < rounds; r++) {
    const x = readAll();
    times.push(x.seconds);
    bytes = x.bytes;
  }
  const ddTimes: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let s = 0;
    for (const f of segmentFiles(dir, ".log")) s += dd([`if=${f}`, "of=/dev/null", "bs=1M"]);
    ddTimes.push(s);
  }
  const logMBps = bytes / 1e6 / median(times);
  const ddMBps = bytes / 1e6 / median(ddTimes);
  return { logMBps, ddMBps, ratio: logMBps / ddMBps };
}

interface Latency {
  p50Us: number;
  p99Us: number;
  meanUs: number;
}

function latencies(n: number, fn: (i: number) => void): Latency {
  for (let i = 0; i < Math.min(n, 2000); i++) fn(i); // warm up
  const us: number[] = new Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    fn(i);
    const t = (performance.now() - t0) * 1000;
    us[i] = t;
    total += t;
  }
  us.sort((a, b) => a - b);
  return { p50Us: percentile(us, 0.5), p99Us: percentile(us, 0.99), meanUs: total / n };
}

/** xorshift32: the same random offsets under both runtimes. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x1_0000_0000;
  };
}

function benchLookups(log: Log, b: Batches): { offset: Latency; timestamp: Latency } {
  const end = log.logEndOffset;
  const batchCount = end / b.recordsPerBatch;
  const rand = rng(42);
  const offsets = Array.from({ length: lookups }, () => Math.floor(rand() * end));
  const stamps = Array.from({ length: lookups }, () => timestamp0 + Math.floor(rand() * batchCount));
  const offset = latencies(lookups, (i) => {
    const r = log.read(offsets[i], 1, true);
    if (r.records.length === 0) throw new Error(`offset ${offsets[i]}: nothing read`);
  });
  const timestamp = latencies(lookups, (i) => {
    const found = log.offsetForTimestamp(stamps[i]);
    // Batch k has timestamp timestamp0 + k and holds offsets from k * recordsPerBatch.
    const expected = (stamps[i] - timestamp0) * b.recordsPerBatch;
    if (found === null || found.offset !== expected) {
      throw new Error(`timestamp ${stamps[i]}: found ${JSON.stringify(found)}, expected offset ${expected}`);
    }
  });
  return { offset, timestamp };
}

function benchRecovery(dir: string, expectedEnd: number, b: Batches) {
  let bytes = 0;
  for (const f of segmentFiles(dir, ".log")) bytes += fs.statSync(f).size;
  const unclean: LogLoadState = { hadCleanShutdown: false, recoveryPoint: 0, logStartOffset: 0, highWatermark: null };
  const times: number[] = [];
  for (let r = 0; r < Math.min(rounds, 3); r++) {
    const t0 = performance.now();
    const log = Log.open(platform, dir, "bench", 0, config, silentLogger, unclean);
    times.push((performance.now() - t0) / 1000);
    if (log.logEndOffset !== expectedEnd) throw new Error(`recovered end ${log.logEndOffset}, expected ${expectedEnd}`);
    log.close();
  }
  // The CPU bound: CRC32C of as many bytes, from a buffer of batches in memory.
  const chunk = new Uint8Array(8 * MiB);
  for (let at = 0; at + b.batchBytes <= chunk.length; at += b.batchBytes) chunk.set(b.template, at);
  const t0 = performance.now();
  let x = 0;
  for (let done = 0; done < bytes; done += chunk.length) x ^= crc32c(chunk, 0, Math.min(chunk.length, bytes - done));
  const crcSeconds = (performance.now() - t0) / 1000;
  if (x === 0.5) out("");
  return { bytes, scanMBps: bytes / 1e6 / median(times), crcMBps: bytes / 1e6 / crcSeconds };
}

/** One cleaning pass over a compacted partition of `mib` MiB written with `codec`. */
async function benchCleaning(codec: number, mib: number) {
  const dir = `${root}/clean${codec}-0`;
  const cfg: LogConfig = { ...config, segmentBytes: 64 * MiB, cleanupPolicy: "compact" };
  const log = Log.open(platform, dir, "clean", 0, cfg, silentLogger);
  const keys = 10_000;
  const perBatch = 16;
  const filler = Array.from({ length: 4096 }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26))).join("");
  const enc = new TextEncoder();
  let written = 0;
  for (let i = 0; written < mib * MiB; i++) {
    const b = new RecordBatchBuilder();
    for (let j = 0; j < perBatch; j++) {
      const n = i * perBatch + j;
      const at = (n * 131) % 3000;
      b.append(BigInt(timestamp0 + i), enc.encode(`key-${(n * 7) % keys}`), enc.encode(`${n}:${filler.slice(at, at + 1000)}`));
    }
    const batch = b.build(codec);
    log.appendAsLeader(batch, perBatch, 0);
    written += batch.length;
  }
  log.roll();
  log.updateHighWatermark(log.logEndOffset);
  const cleaner = new LogCleaner(platform, [root], () => [log], {}, silentLogger);
  // The longest the event loop went without running a 1 ms timer while the pass ran.
  let last = performance.now();
  let maxStallMs = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    maxStallMs = Math.max(maxStallMs, now - last);
    last = now;
  }, 1);
  const t0 = performance.now();
  const r = await cleaner.cleanLog(log, Date.now());
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(tick);
  if (r === null) throw new Error("the cleaning pass did not run");
  log.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return {
    codec,
    bytes: r.bytesRead,
    MBps: r.bytesRead / 1e6 / seconds,
    recordsPerSec: r.recordsRead / seconds,
    keptShare: r.bytesWritten / r.bytesRead,
    records: r.recordsRead,
    retained: r.recordsRetained,
    maxStallMs,
  };
}

async function cleaningFigures() {
  const plain = await benchCleaning(0, cleanMib);
  const gzip = await benchCleaning(1, Math.max(8, cleanMib / 4));
  for (const c of [plain, gzip]) {
    out(`cleaning ${c.codec === 0 ? "uncompressed" : "gzip"} (${fmt(c.bytes / MiB)} MiB, ${fmt(c.records)} records, ${fmt(c.retained)} kept, ` +
      `${fmt(c.keptShare * 100, 1)}% of bytes): ${fmt(c.MBps)} MB/s of segment read, ${fmt(c.recordsPerSec)} records/s; ` +
      `event loop stalled at most ${fmt(c.maxStallMs)} ms`);
  }
  return { plain, gzip };
}

function idempotentFigures() {
  const r = benchIdempotent(appendMib * MiB);
  out(`idempotent append (producer state checked and updated per ${r.batchBytes}-byte batch), median of ${rounds} rounds: ` +
    `${fmt(r.idempotentMBps)} MB/s against plain ${fmt(r.plainMBps)} MB/s: ratio ${fmt(r.ratio, 3)} (issue 15's target: at least 0.90)`);
  return r;
}

if (only === "idempotent") {
  try {
    out("RESULT " + JSON.stringify({ runtime, idempotent: idempotentFigures() }));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
  process.exit(0);
}

if (only === "clean") {
  try {
    const cleaning = await cleaningFigures();
    out("RESULT " + JSON.stringify({ runtime, cleaning }));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
  process.exit(0);
}

try {
  out(`strand log bench on ${runtime}: append ${appendMib} MiB of 100-byte and of 1 KiB records in ` +
    `~16 KiB batches; read, lookups and recovery on a ${bigMib} MiB partition; ${rounds} rounds (median); dir ${root}`);
  const appendSmall = benchAppend(ring(100), appendMib * MiB);
  const bigRing = ring(1024);
  const appendBig = benchAppend(bigRing, appendMib * MiB);
  out("append (page cache, no fsync), median of rounds:");
  for (const a of [appendSmall, appendBig]) {
    out(`  ${String(a.recordBytes).padStart(4)}-byte records, ${a.recordsPerBatch} per ${a.batchBytes}-byte batch: ` +
      `${fmt(a.logMBps).padStart(6)} MB/s (${fmt(a.recordsPerSec)} records/s)`);
    out(`      dd bs=16k ${fmt(a.ddMBps).padStart(6)} MB/s: ratio ${fmt(a.ratio, 2)}   ` +
      `dd bs=${a.batchBytes} ${fmt(a.ddSameSizeMBps).padStart(6)} MB/s: ratio ${fmt(a.ratioSameSize, 2)}`);
  }
  const idempotent = idempotentFigures();
  const partDir = `${root}/bench-0`;
  const log = buildPartition(partDir, bigRing[0], bigMib * MiB);
  const read = benchRead(log, partDir);
  out(`read (page cache, 1 MiB fetches): ${fmt(read.logMBps)} MB/s  dd bs=1M ${fmt(read.ddMBps)} MB/s  ratio ${fmt(read.ratio, 2)}`);
  const look = benchLookups(log, bigRing[0]);
  out(`lookup on ${fmt(log.sizeBytes / MiB)} MiB, ${log.segmentCount} segment(s), ${fmt(log.logEndOffset)} offsets, ${fmt(lookups)} random:`);
  out(`  read(offset) of one batch:  p50 ${fmt(look.offset.p50Us, 1)} µs  p99 ${fmt(look.offset.p99Us, 1)} µs  mean ${fmt(look.offset.meanUs, 1)} µs`);
  out(`  offsetForTimestamp:         p50 ${fmt(look.timestamp.p50Us, 1)} µs  p99 ${fmt(look.timestamp.p99Us, 1)} µs  mean ${fmt(look.timestamp.meanUs, 1)} µs`);
  const end = log.logEndOffset;
  log.close();
  const rec = benchRecovery(partDir, end, bigRing[0]);
  out(`recovery (unclean shutdown, recovery point 0: every batch CRC32C-checked, indexes rebuilt): ${fmt(rec.scanMBps)} MB/s ` +
    `of segment (${fmt(rec.bytes / MiB)} MiB); CRC32C alone in memory ${fmt(rec.crcMBps)} MB/s`);
  const cleaning = await cleaningFigures();
  out("RESULT " + JSON.stringify({ runtime, appendSmall, appendBig, idempotent, read, lookup: look, recovery: rec, cleaning }));
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
