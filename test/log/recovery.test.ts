// Crash recovery on real files (issue 3, item 2): after an unclean stop, a segment cut at a random
// byte, a zero-filled tail, a flipped byte in the last batch or in an earlier segment each end at
// exactly the last valid batch, with rebuilt indexes and one log line per truncation; segments
// below the recovery point are not scanned; checkpoint files are Kafka's text format; the
// LogManager writes the checkpoints and the clean-shutdown marker, and recovers without them.
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { test } from "node:test";
import {
  CheckpointFormatError,
  CleanShutdownFile,
  formatCheckpoint,
  Log,
  type LogConfig,
  logConfigDefaults,
  type LogLoadState,
  LogManager,
  OffsetCheckpointFile,
  parseCheckpoint,
  segmentFileName,
} from "../../src/log/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Platform } from "../../src/platform/types.ts";
import { type LogFields, type Logger, silentLogger } from "../../src/util/logger.ts";
import { buildBatch, parseBatches, text } from "../helpers/record_batch.ts";
import { withTempDir } from "../helpers/temp_dir.ts";

const platform: Platform = await loadPlatform();

/** Deterministic PRNG (mulberry32), so a failing cut point can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const config = (over: Partial<LogConfig> = {}): LogConfig => ({ ...logConfigDefaults, segmentBytes: 4000, indexIntervalBytes: 300, ...over });
const unclean = (recoveryPoint = 0): LogLoadState => ({ hadCleanShutdown: false, recoveryPoint, logStartOffset: 0, highWatermark: null });

interface StoredBatch {
  segment: number;
  position: number;
  size: number;
  baseOffset: number;
  lastOffset: number;
}

/** A log of `batches` batches of 1-3 records (values `v<offset>`), closed; returns what is stored. */
function writeLog(dir: string, cfg: LogConfig, batches: number): StoredBatch[] {
  const log = Log.open(platform, dir, "t", 0, cfg, silentLogger);
  for (let i = 0; i < batches; i++) {
    const first = log.logEndOffset;
    const n = 1 + (i % 3);
    const records = Array.from({ length: n }, (_, k) => ({ value: `v${first + k}`.padEnd(40, "."), timestampDelta: k }));
    log.appendAsLeader(buildBatch(records), n, 0);
  }
  log.close();
  return storedBatches(dir);
}

function segmentBases(dir: string): number[] {
  return nodeFs.readdirSync(dir).filter((n) => /^\d{20}\.log$/.test(n)).map((n) => Number(n.slice(0, 20))).sort((a, b) => a - b);
}

/** Every batch in the segment files, walked by their length fields. */
function storedBatches(dir: string): StoredBatch[] {
  const out: StoredBatch[] = [];
  for (const segment of segmentBases(dir)) {
    const bytes = nodeFs.readFileSync(`${dir}/${segmentFileName(segment, ".log")}`);
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    for (let pos = 0; pos + 61 <= bytes.length;) {
      const size = 12 + dv.getInt32(pos + 8);
      const baseOffset = Number(dv.getBigInt64(pos));
      out.push({ segment, position: pos, size, baseOffset, lastOffset: baseOffset + dv.getInt32(pos + 23) });
      pos += size;
    }
  }
  return out;
}

/** The index of each segment is whole and right: every entry points at the batch ending at its offset. */
function assertIndexesMatch(dir: string, batches: StoredBatch[], cfg: LogConfig): void {
  for (const segment of segmentBases(dir)) {
    const idx = nodeFs.readFileSync(`${dir}/${segmentFileName(segment, ".index")}`);
    assert.equal(idx.length % 8, 0, "whole entries");
    const inSegment = batches.filter((b) => b.segment === segment);
    const dv = new DataView(idx.buffer, idx.byteOffset, idx.length);
    let lastPos = -1;
    for (let e = 0; e < idx.length; e += 8) {
      const rel = dv.getInt32(e);
      const pos = dv.getInt32(e + 4);
      assert.ok(pos > lastPos, "positions increase");
      lastPos = pos;
      const b = inSegment.find((x) => x.position === pos);
      assert.ok(b, `index entry at position ${pos} points at a batch`);
      assert.equal(segment + rel, b.lastOffset, "entry offset is that batch's last offset");
    }
    const bytes = inSegment.reduce((n, b) => n + b.size, 0);
    if (bytes > 3 * cfg.indexIntervalBytes) assert.ok(idx.length >= 8, `segment ${segment} of ${bytes} bytes has index entries`);
  }
}

/** Every offset in [0, end) reads back as its own record. */
function assertReadable(log: Log, end: number): void {
  assert.equal(log.logEndOffset, end);
  for (let o = 0; o < end; o++) {
    const batches = parseBatches(log.read(o, 1, true).records);
    const rec = batches[0]?.records.find((r) => r.offset === BigInt(o));
    assert.equal(text(rec?.value ?? null)?.replace(/\.+$/, ""), `v${o}`, `offset ${o}`);
  }
}

function capture(lines: { level: string; fields: LogFields; msg: string }[]): Logger {
  const at = (level: string) => (fields: LogFields, msg: string) => lines.push({ level, fields, msg });
  const l: Logger = { debug() {}, info: at("info"), warn: at("warn"), error: at("error"), child: () => l };
  return l;
}

const truncations = <L extends { msg: string }>(lines: L[]): L[] => lines.filter((l) => /truncated torn tail/.test(l.msg));

test("recovery: checkpoint files are Kafka's text format (version, count, `topic partition offset` lines)", async () => {
  const entries = [{ topic: "orders", partition: 0, offset: 1234 }, { topic: "pay-ments.eu", partition: 11, offset: 0 }];
  assert.equal(formatCheckpoint(entries), "0\n2\norders 0 1234\npay-ments.eu 11 0\n");
  assert.equal(formatCheckpoint([]), "0\n0\n");
  const parsed = parseCheckpoint("0\n2\norders 0 1234\npay-ments.eu 11 0\n");
  assert.deepEqual([...parsed.entries()], [
    ["orders-0", { topic: "orders", partition: 0, offset: 1234 }],
    ["pay-ments.eu-11", { topic: "pay-ments.eu", partition: 11, offset: 0 }],
  ]);
  assert.equal(parseCheckpoint("0\n0\n").size, 0);
  for (const bad of ["1\n0\n", "", "0\n2\na 0 1\n", "0\n1\na 0 1\nb 0 2\n", "0\n1\na x 1\n", "0\n1\na 0\n", "0\n-1\n"]) {
    assert.throws(() => parseCheckpoint(bad), CheckpointFormatError, JSON.stringify(bad));
  }
  await withTempDir((dir) => {
    const f = new OffsetCheckpointFile(platform, `${dir}/recovery-point-offset-checkpoint`);
    assert.equal(f.read().size, 0, "absent file: no entries");
    f.write(entries);
    assert.equal(nodeFs.readFileSync(f.path, "utf8"), "0\n2\norders 0 1234\npay-ments.eu 11 0\n");
    assert.equal(f.read().get("orders-0")?.offset, 1234);
    assert.deepEqual(nodeFs.readdirSync(dir), ["recovery-point-offset-checkpoint"], "no temp file left behind");
  });
});

test("recovery: a last segment cut at a random byte ends at exactly the last whole batch, indexes rebuilt", async () => {
  const random = prng(42);
  for (let round = 0; round < 20; round++) {
    await withTempDir((dir) => {
      const cfg = config();
      const batches = writeLog(dir, cfg, 120);
      const last = batches[batches.length - 1].segment;
      const inLast = batches.filter((b) => b.segment === last);
      const size = inLast.reduce((n, b) => n + b.size, 0);
      const cut = Math.floor(random() * size);
      nodeFs.truncateSync(`${dir}/${segmentFileName(last, ".log")}`, cut);
      // The index is damaged too (a torn write of its own): recovery rebuilds it from the log.
      nodeFs.writeFileSync(`${dir}/${segmentFileName(last, ".index")}`, new Uint8Array([0, 0, 0, 9, 0, 0]));
      const survivors = batches.filter((b) => b.segment !== last || b.position + b.size <= cut);
      const end = survivors[survivors.length - 1].lastOffset + 1;
      const lines: { level: string; fields: LogFields; msg: string }[] = [];
      const log = Log.open(platform, dir, "t", 0, cfg, capture(lines), unclean());
      try {
        assertReadable(log, end);
        const lastWhole = survivors.filter((b) => b.segment === last);
        const validBytes = lastWhole.reduce((n, b) => n + b.size, 0);
        assert.equal(nodeFs.statSync(`${dir}/${segmentFileName(last, ".log")}`).size, validBytes, `cut at ${cut}: file ends after the last whole batch`);
        assert.equal(truncations(lines).length, cut > validBytes ? 1 : 0, `cut at ${cut}: one log line when bytes were cut`);
        if (cut > validBytes) assert.equal(truncations(lines)[0].fields.truncatedBytes, cut - validBytes);
        assertIndexesMatch(dir, storedBatches(dir), cfg);
      } finally {
        log.close();
      }
    });
  }
});

test("recovery: a zero-filled tail (preallocated or lost pages) is cut back to the last batch", async () => {
  await withTempDir((dir) => {
    const cfg = config();
    const batches = writeLog(dir, cfg, 60);
    const last = batches[batches.length - 1];
    nodeFs.appendFileSync(`${dir}/${segmentFileName(last.segment, ".log")}`, new Uint8Array(8192));
    const lines: { level: string; fields: LogFields; msg: string }[] = [];
    const log = Log.open(platform, dir, "t", 0, cfg, capture(lines), unclean());
    try {
      assertReadable(log, last.lastOffset + 1);
      assert.equal(nodeFs.statSync(`${dir}/${segmentFileName(last.segment, ".log")}`).size, last.position + last.size);
      assert.equal(truncations(lines).length, 1);
      assert.equal(truncations(lines)[0].fields.truncatedBytes, 8192);
      assertIndexesMatch(dir, storedBatches(dir), cfg);
    } finally {
      log.close();
    }
  });
});

test("recovery: a flipped byte in the last batch fails its CRC32C; the log ends before that batch", async () => {
  await withTempDir((dir) => {
    const cfg = config();
    const batches = writeLog(dir, cfg, 60);
    const last = batches[batches.length - 1];
    const path = `${dir}/${segmentFileName(last.segment, ".log")}`;
    const bytes = nodeFs.readFileSync(path);
    bytes[last.position + last.size - 3] ^= 0x40; // inside the last record's value
    nodeFs.writeFileSync(path, bytes);
    const lines: { level: string; fields: LogFields; msg: string }[] = [];
    const log = Log.open(platform, dir, "t", 0, cfg, capture(lines), unclean());
    try {
      assertReadable(log, last.baseOffset);
      assert.equal(nodeFs.statSync(path).size, last.position);
      assert.equal(truncations(lines).length, 1);
      assert.match(String(truncations(lines)[0].fields.reason), /CRC/);
      // The log continues where the lost batch began.
      assert.equal(log.appendAsLeader(buildBatch([{ value: `v${last.baseOffset}` }]), 1, 0).firstOffset, last.baseOffset);
    } finally {
      log.close();
    }
  });
});

test("recovery: a flipped byte in an earlier unflushed segment cuts it there and removes the later segments", async () => {
  await withTempDir((dir) => {
    const cfg = config();
    const batches = writeLog(dir, cfg, 120);
    const bases = segmentBases(dir);
    assert.ok(bases.length >= 4, "several segments");
    const victim = batches.filter((b) => b.segment === bases[1])[3];
    const path = `${dir}/${segmentFileName(bases[1], ".log")}`;
    const bytes = nodeFs.readFileSync(path);
    bytes[victim.position + 40] ^= 0x01; // the max timestamp, covered by the CRC
    nodeFs.writeFileSync(path, bytes);
    const lines: { level: string; fields: LogFields; msg: string }[] = [];
    const log = Log.open(platform, dir, "t", 0, cfg, capture(lines), unclean(bases[1]));
    try {
      assertReadable(log, victim.baseOffset);
      assert.deepEqual(segmentBases(dir), [bases[0], bases[1]]);
      assert.ok(!nodeFs.readdirSync(dir).some((n) => n.startsWith(segmentFileName(bases[2], ""))), "later segments' files are gone");
      assert.equal(truncations(lines).length, 1, "one line for the truncation");
      assert.ok(lines.some((l) => /after the truncated/.test(l.msg) && (l.fields.segments as number[]).length === bases.length - 2), "one line for the removed segments");
    } finally {
      log.close();
    }
  });
});

test("recovery: segments below the recovery point are not scanned; a clean shutdown scans nothing", async () => {
  await withTempDir((dir) => {
    const cfg = config();
    const batches = writeLog(dir, cfg, 120);
    const bases = segmentBases(dir);
    // Damage the middle of the first segment: below any recovery point past it, nobody looks.
    const victim = batches.filter((b) => b.segment === bases[0])[2];
    const path = `${dir}/${segmentFileName(bases[0], ".log")}`;
    const bytes = nodeFs.readFileSync(path);
    bytes[victim.position + 40] ^= 0x01;
    nodeFs.writeFileSync(path, bytes);
    const end = batches[batches.length - 1].lastOffset + 1;
    for (const state of [unclean(bases[2]), { ...unclean(0), hadCleanShutdown: true }]) {
      const lines: { level: string; fields: LogFields; msg: string }[] = [];
      const log = Log.open(platform, dir, "t", 0, cfg, capture(lines), state);
      try {
        assert.equal(log.logEndOffset, end);
        assert.equal(truncations(lines).length, 0);
        assert.equal(log.recoveryPoint, state.hadCleanShutdown ? end : bases[2]);
      } finally {
        log.close();
      }
    }
    // Recovering from 0 finds it.
    const log = Log.open(platform, dir, "t", 0, cfg, silentLogger, unclean(0));
    try {
      assert.equal(log.logEndOffset, victim.baseOffset);
      assert.deepEqual(segmentBases(dir), [bases[0]]);
    } finally {
      log.close();
    }
  });
});

test("recovery: a segment whose .index is missing is rebuilt even after a clean shutdown", async () => {
  await withTempDir((dir) => {
    const cfg = config();
    const batches = writeLog(dir, cfg, 90);
    for (const b of segmentBases(dir)) nodeFs.rmSync(`${dir}/${segmentFileName(b, ".index")}`);
    const log = Log.open(platform, dir, "t", 0, cfg, silentLogger);
    try {
      assertReadable(log, batches[batches.length - 1].lastOffset + 1);
      assertIndexesMatch(dir, batches, cfg);
    } finally {
      log.close();
    }
  });
});

test("recovery: a batch larger than the recovery read chunk is checked piece by piece", async () => {
  await withTempDir((dir) => {
    const cfg = config({ segmentBytes: 64 << 20 });
    const log = Log.open(platform, dir, "t", 0, cfg, silentLogger);
    const big = "x".repeat(9 << 20); // past the 8 MiB chunk
    log.appendAsLeader(buildBatch([{ value: "v0" }]), 1, 0);
    log.appendAsLeader(buildBatch([{ value: big }]), 1, 0);
    log.appendAsLeader(buildBatch([{ value: "v2" }]), 1, 0);
    log.close();
    const again = Log.open(platform, dir, "t", 0, cfg, silentLogger, unclean());
    try {
      assert.equal(again.logEndOffset, 3);
    } finally {
      again.close();
    }
    const [b0, b1] = storedBatches(dir);
    const path = `${dir}/${segmentFileName(0, ".log")}`;
    const fd = nodeFs.openSync(path, "r+");
    nodeFs.writeSync(fd, new Uint8Array([0x21]), 0, 1, b1.position + b1.size - 100);
    nodeFs.closeSync(fd);
    const damaged = Log.open(platform, dir, "t", 0, cfg, silentLogger, unclean());
    try {
      assert.equal(damaged.logEndOffset, 1, "the big batch fails its CRC");
      assert.equal(nodeFs.statSync(path).size, b0.size);
    } finally {
      damaged.close();
    }
  });
});

// ---- LogManager: checkpoints, the clean-shutdown marker, recovery at start-up ------------------

function manager(dirs: string[], cfg: LogConfig, logger: Logger = silentLogger, threads = 1) {
  return new LogManager(platform, dirs, cfg, logger, { numRecoveryThreadsPerDataDir: threads });
}

function appendN(log: Log, n: number): void {
  for (let i = 0; i < n; i++) {
    const o = log.logEndOffset;
    log.appendAsLeader(buildBatch([{ value: `v${o}`.padEnd(40, ".") }]), 1, 0);
  }
  log.updateHighWatermark(log.logEndOffset);
}

test("recovery: a clean shutdown writes the three checkpoints and the marker; start-up removes the marker", async () => {
  await withTempDir(async (dir) => {
    const cfg = config();
    let lm = manager([dir], cfg);
    await lm.startup(0, "cluster");
    const a = lm.getOrCreateLog("orders", 0, cfg);
    const b = lm.getOrCreateLog("orders", 1, cfg);
    appendN(a, 100);
    appendN(b, 3);
    b.maybeIncrementLogStartOffset(2, "test");
    lm.shutdown();
    const read = (f: string) => nodeFs.readFileSync(`${dir}/${f}`, "utf8");
    const lines = (f: string) => read(f).split("\n").filter((l) => l !== "");
    assert.deepEqual(lines("recovery-point-offset-checkpoint").slice(0, 2), ["0", "2"]);
    assert.deepEqual(lines("recovery-point-offset-checkpoint").slice(2).sort(), ["orders 0 100", "orders 1 3"]);
    assert.deepEqual(lines("replication-offset-checkpoint").slice(2).sort(), ["orders 0 100", "orders 1 3"]);
    assert.equal(read("log-start-offset-checkpoint"), "0\n1\norders 1 2\n", "only logs starting past their first segment");
    assert.ok(nodeFs.existsSync(`${dir}/${CleanShutdownFile}`));

    lm = manager([dir], cfg);
    await lm.startup(0, "cluster");
    try {
      assert.ok(!nodeFs.existsSync(`${dir}/${CleanShutdownFile}`), "marker removed at start-up");
      const b2 = lm.getLog("orders", 1)!;
      assert.equal(b2.logStartOffset, 2, "log start offset from its checkpoint");
      assert.equal(b2.highWatermark, 3, "high watermark from its checkpoint");
      assert.equal(lm.getLog("orders", 0)!.recoveryPoint, 100);
    } finally {
      lm.shutdown();
    }
  });
});

test("recovery: without the marker, start-up recovers from each log's checkpointed recovery point", async () => {
  await withTempDir(async (dir) => {
    const cfg = config();
    let lm = manager([dir], cfg);
    await lm.startup(0, "cluster");
    const log = lm.getOrCreateLog("t", 0, cfg);
    appendN(log, 30); // one segment so far, unflushed
    lm.checkpointRecoveryOffsets(); // recovery point 0 on disk
    lm.shutdown();
    // Simulate the crash: no marker, the recovery point of before, and a flipped byte mid-segment.
    nodeFs.rmSync(`${dir}/${CleanShutdownFile}`);
    nodeFs.writeFileSync(`${dir}/recovery-point-offset-checkpoint`, "0\n1\nt 0 0\n");
    const batches = storedBatches(`${dir}/t-0`);
    const victim = batches[17];
    const path = `${dir}/t-0/${segmentFileName(victim.segment, ".log")}`;
    const bytes = nodeFs.readFileSync(path);
    bytes[victim.position + 30] ^= 0x80;
    nodeFs.writeFileSync(path, bytes);
    const lines: { level: string; fields: LogFields; msg: string }[] = [];
    lm = manager([dir], cfg, capture(lines));
    await lm.startup(0, "cluster");
    try {
      assert.equal(lm.getLog("t", 0)!.logEndOffset, victim.baseOffset);
      assert.ok(lines.some((l) => /not shut down cleanly/.test(l.msg)));
      assert.equal(truncations(lines).length, 1);
    } finally {
      lm.shutdown();
    }
  });
});

test("recovery: a damaged checkpoint file is treated as absent (everything is recovered), with a log line", async () => {
  await withTempDir(async (dir) => {
    const cfg = config();
    let lm = manager([dir], cfg);
    await lm.startup(0, "cluster");
    appendN(lm.getOrCreateLog("t", 0, cfg), 10);
    lm.shutdown();
    nodeFs.rmSync(`${dir}/${CleanShutdownFile}`);
    nodeFs.writeFileSync(`${dir}/recovery-point-offset-checkpoint`, "7\ngarbage");
    const lines: { level: string; fields: LogFields; msg: string }[] = [];
    lm = manager([dir], cfg, capture(lines));
    await lm.startup(0, "cluster");
    try {
      assert.equal(lm.getLog("t", 0)!.logEndOffset, 10);
      assert.ok(lines.some((l) => /cannot read checkpoint/.test(l.msg)));
    } finally {
      lm.shutdown();
    }
  });
});

test("recovery: many partitions recover a few at a time, and timers keep firing meanwhile", async () => {
  await withTempDir(async (dir) => {
    const cfg = config({ segmentBytes: 1 << 20 });
    let lm = manager([dir], cfg);
    await lm.startup(0, "cluster");
    for (let p = 0; p < 40; p++) appendN(lm.getOrCreateLog("many", p, cfg), 400);
    lm.shutdown();
    nodeFs.rmSync(`${dir}/${CleanShutdownFile}`);
    nodeFs.rmSync(`${dir}/recovery-point-offset-checkpoint`);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    lm = manager([dir], cfg, silentLogger, 3);
    try {
      await lm.startup(0, "cluster");
      clearInterval(timer);
      assert.equal(lm.allLogs().length, 40);
      for (const log of lm.allLogs()) assert.equal(log.logEndOffset, 400);
      assert.ok(ticks > 0, "the event loop ran timers during recovery");
    } finally {
      clearInterval(timer);
      lm.shutdown();
    }
  });
});

test("recovery: Log.open without a load state assumes nothing: a batch corrupted mid-log is found and the log cut there", async () => {
  await withTempDir((dir) => {
    const cfg = config();
    const stored = writeLog(dir, cfg, 60);
    assert.ok(segmentBases(dir).length >= 3, `several segments: ${segmentBases(dir)}`);
    const victim = stored.find((b) => b.segment === segmentBases(dir)[0] && b.position > 0)!;
    const path = `${dir}/${segmentFileName(victim.segment, ".log")}`;
    const bytes = nodeFs.readFileSync(path);
    bytes[victim.position + victim.size - 3] ^= 0xff; // inside a record: the CRC no longer matches
    nodeFs.writeFileSync(path, bytes);
    // No state, as a caller that cannot say how the log was stopped: recovered as after a crash
    // (a clean-shutdown default would cut torn tails only and serve the corrupt batch).
    const log = Log.open(platform, dir, "t", 0, cfg, silentLogger);
    try {
      assert.equal(log.logEndOffset, victim.baseOffset);
      assert.deepEqual(segmentBases(dir), [victim.segment], "the later segments are gone with it");
    } finally {
      log.close();
    }
  });
});
