// Log compaction on real files (issue 3, item 7): the latest record per key kept at its original
// offset, tombstones kept until delete.retention.ms then removed, the active segment untouched,
// min.cleanable.dirty.ratio, min.compaction.lag.ms and max.compaction.lag.ms, the four codecs
// rewritten and re-read, headers kept, a decompression bomb kept as it is, a crash at every rename
// of a swap losing nothing, the dedupe buffer bound (several passes), cleaner-offset-checkpoint,
// a read holding a replaced segment, and the LogManager running the cleaner by itself.
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { test } from "node:test";
import { gzipSync } from "node:zlib";
import { parseBrokerConfig } from "../../src/broker/mod.ts";
import {
  CleanerOffsetCheckpointFile,
  effectiveLogConfig,
  groupSegmentsBySize,
  Log,
  type LogConfig,
  logConfigDefaults,
  LogCleaner,
  type CleanerConfig,
  LogManager,
  type LogLoadState,
  murmur3x86_128,
  OffsetMap,
  type TopicLogConfig,
} from "../../src/log/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { FileSystem, Platform } from "../../src/platform/types.ts";
import { compress, DeleteHorizonAttribute, forEachBatch, readBatchRecords } from "../../src/protocol/mod.ts";
import { crc32c } from "../../src/util/crc32c.ts";
import { type LogFields, type Logger, silentLogger } from "../../src/util/logger.ts";
import { buildBatch, type TestRecord } from "../helpers/record_batch.ts";
import { withTempDir } from "../helpers/temp_dir.ts";

const platform: Platform = await loadPlatform();
const T0 = 1_700_000_000_000;
const DAY = 86_400_000;

const compactConfig = (over: Partial<LogConfig> = {}): LogConfig => ({
  ...logConfigDefaults,
  cleanupPolicy: "compact",
  segmentBytes: 1 << 20,
  indexIntervalBytes: 256,
  minCleanableDirtyRatio: 0.5,
  deleteRetentionMs: DAY,
  ...over,
});

function openLog(dir: string, config = compactConfig(), p = platform, state?: LogLoadState): Log {
  return Log.open(p, `${dir}/t-0`, "t", 0, config, silentLogger, state);
}

function cleanerFor(dir: string, logs: () => Log[], over: Partial<CleanerConfig> = {}, p = platform, logger: Logger = silentLogger): LogCleaner {
  return new LogCleaner(p, [dir], logs, { ioBufferBytes: 4096, ...over }, logger);
}

type Rec = { key: string | null; value: string | null; headers?: [string, string | null][] };

/** Appends one batch of records (optionally compressed), stamped tsMs; the high watermark follows. */
function append(log: Log, records: Rec[], codec = 0, tsMs = T0): void {
  const batch = compressBatch(buildBatch(records.map((r): TestRecord => ({ key: r.key, value: r.value, headers: r.headers })), { baseTimestamp: BigInt(tsMs) }), codec);
  log.appendAsLeader(batch, records.length, 0);
  log.updateHighWatermark(log.logEndOffset);
}

/** The batch with its records section compressed by `codec` (header fixed up, CRC32C recomputed). */
function compressBatch(batch: Uint8Array, codec: number): Uint8Array {
  if (codec === 0) return batch;
  const body = compress(codec, batch.subarray(61));
  const out = new Uint8Array(61 + body.length);
  out.set(batch.subarray(0, 61));
  out.set(body, 61);
  const dv = new DataView(out.buffer);
  dv.setInt32(8, out.length - 12);
  dv.setInt16(21, dv.getInt16(21) | codec);
  dv.setUint32(17, crc32c(out, 21, out.length));
  return out;
}

interface ReadRecord {
  offset: number;
  key: string | null;
  value: string | null;
  headers: [string, string | null][];
}
interface ReadBatch {
  baseOffset: number;
  lastOffset: number;
  codec: number;
  attributes: number;
  crcValid: boolean;
  records: ReadRecord[] | null;
  bytes: Uint8Array;
}

const dec = (b: Uint8Array | null) => (b === null ? null : new TextDecoder().decode(b));

/** Every batch of one .log file, its records decoded (null when unreadable). */
function readLogFile(path: string): ReadBatch[] {
  const bytes = new Uint8Array(nodeFs.readFileSync(path));
  const out: ReadBatch[] = [];
  forEachBatch(bytes, (pos, size) => {
    const dv = new DataView(bytes.buffer, bytes.byteOffset + pos, size);
    const decoded = readBatchRecords(bytes, pos);
    out.push({
      baseOffset: Number(dv.getBigInt64(0)),
      lastOffset: Number(dv.getBigInt64(0)) + dv.getInt32(23),
      codec: dv.getInt16(21) & 7,
      attributes: dv.getInt16(21),
      crcValid: crc32c(bytes, pos + 21, pos + size) === dv.getUint32(17),
      records: decoded.ok
        ? decoded.records.map((r) => ({ offset: r.offset, key: dec(r.key), value: dec(r.value), headers: r.headers.map((h): [string, string | null] => [h.key, dec(h.value)]) }))
        : null,
      bytes: bytes.slice(pos, pos + size),
    });
  });
  return out;
}

/** Live segment base offsets and other files of a partition dir. */
function files(dir: string): { live: number[]; other: string[] } {
  const names = nodeFs.readdirSync(`${dir}/t-0`);
  return {
    live: names.filter((n) => /^\d{20}\.log$/.test(n)).map((n) => Number(n.slice(0, 20))).sort((a, b) => a - b),
    other: names.filter((n) => !/^\d{20}\.(log|index|timeindex)$/.test(n)).sort(),
  };
}

const logPath = (dir: string, base: number) => `${dir}/t-0/${String(base).padStart(20, "0")}.log`;

/** Every record of the log's live segment files, oldest first. */
function allRecords(dir: string): ReadRecord[] {
  return files(dir).live.flatMap((b) => readLogFile(logPath(dir, b)).flatMap((batch) => batch.records ?? []));
}

/** The log's records through Log.read from its start (what a consumer sees). */
function consume(log: Log): ReadRecord[] {
  const out: ReadRecord[] = [];
  let offset = log.logStartOffset;
  while (offset < log.logEndOffset) {
    const { records } = log.read(offset, 1 << 20, true);
    if (records.length === 0) break;
    forEachBatch(records, (pos) => {
      const d = readBatchRecords(records, pos);
      assert.ok(d.ok);
      for (const r of d.records) if (r.offset >= offset) out.push({ offset: r.offset, key: dec(r.key), value: dec(r.value), headers: [] });
      offset = d.batch.lastOffset + 1;
    });
  }
  return out;
}

/** The latest (offset, value) of each key among records, as a compacted log must end. */
function latestByKey(records: ReadRecord[]): Map<string | null, { offset: number; value: string | null }> {
  const m = new Map<string | null, { offset: number; value: string | null }>();
  for (const r of records) m.set(r.key, { offset: r.offset, value: r.value });
  return m;
}

/** Appends `rounds` rounds of keys k0..k{keys-1}, `perBatch` records a batch, then rolls. */
function fillRounds(log: Log, keys: number, rounds: number, perBatch: number, codec = 0, tsMs = T0): void {
  const all: Rec[] = [];
  for (let r = 0; r < rounds; r++) for (let k = 0; k < keys; k++) all.push({ key: `k${k}`, value: `v${r}-k${k}` });
  for (let i = 0; i < all.length; i += perBatch) append(log, all.slice(i, i + perBatch), codec, tsMs);
}

test("cleaner: keeps the latest value per key at its original offset; batches keep their offsets; the active segment is untouched", async () => {
  await withTempDir(async (dir) => {
    const log = openLog(dir);
    try {
      fillRounds(log, 10, 3, 4);
      log.roll();
      fillRounds(log, 10, 1, 5); // the active segment: its duplicates stay
      const activeBase = log.activeSegment.baseOffset;
      const activeBefore = nodeFs.readFileSync(logPath(dir, activeBase));
      const before = allRecords(dir).filter((r) => r.offset < activeBase);
      const batchesBefore = readLogFile(logPath(dir, 0));
      const cleaner = cleanerFor(dir, () => [log]);
      const result = await cleaner.cleanLog(log, T0 + 1000);
      assert.ok(result !== null);
      assert.equal(result.endOffset, activeBase);
      assert.equal(result.recordsRead, 30);
      assert.equal(result.recordsRetained, 10);

      const cleaned = readLogFile(logPath(dir, 0));
      const kept = cleaned.flatMap((b) => b.records!);
      assert.deepEqual(
        kept.map((r) => [r.offset, r.key, r.value]),
        [...latestByKey(before)].map(([k, v]) => [v.offset, k, v.value]).sort((a, b) => (a[0] as number) - (b[0] as number)),
        "each key once, with its latest value, at the offset it had",
      );
      // Every output batch is one input batch, its base and last offsets unchanged.
      const spans = new Set(batchesBefore.map((b) => `${b.baseOffset}-${b.lastOffset}`));
      for (const b of cleaned) {
        assert.ok(spans.has(`${b.baseOffset}-${b.lastOffset}`), `batch ${b.baseOffset}-${b.lastOffset} keeps its offsets`);
        assert.ok(b.crcValid);
      }
      assert.deepEqual(nodeFs.readFileSync(logPath(dir, activeBase)), activeBefore, "active segment bytes unchanged");
      assert.equal(allRecords(dir).filter((r) => r.offset >= activeBase).length, 10);
      // Readers see the same through the log, and past the high watermark nothing changed.
      assert.deepEqual(consume(log).map((r) => r.offset), allRecords(dir).map((r) => r.offset));
      assert.equal(log.logEndOffset, activeBase + 10);
      // A second pass finds nothing dirty.
      assert.equal(await cleaner.cleanFilthiestLog(T0 + 2000), null);
    } finally {
      log.close();
    }
  });
});

test("cleaner: a tombstone is kept (with a delete horizon) until delete.retention.ms has passed, then removed", async () => {
  await withTempDir(async (dir) => {
    const retention = 60_000;
    const log = openLog(dir, compactConfig({ deleteRetentionMs: retention, minCleanableDirtyRatio: 0.99 }));
    try {
      append(log, [{ key: "a", value: "a1" }, { key: "b", value: "b1" }]);
      append(log, [{ key: "a", value: null }, { key: "c", value: "c1" }]);
      log.roll();
      append(log, [{ key: "z", value: "active" }]);
      const cleaner = cleanerFor(dir, () => [log]);
      const now = T0 + 10_000;
      assert.ok((await cleaner.cleanFilthiestLog(now)) !== null, "all dirty: cleaned");
      let recs = allRecords(dir).filter((r) => r.offset < 4);
      assert.deepEqual(recs.map((r) => [r.offset, r.key, r.value]), [[1, "b", "b1"], [2, "a", null], [3, "c", "c1"]]);
      const horizonBatch = readLogFile(logPath(dir, 0)).find((b) => b.baseOffset === 2)!;
      assert.ok((horizonBatch.attributes & DeleteHorizonAttribute) !== 0, "the batch holding the tombstone got a delete horizon");
      assert.equal(Number(new DataView(horizonBatch.bytes.buffer).getBigInt64(27)), now + retention, "baseTimestamp holds the horizon");
      assert.ok(horizonBatch.records!.every((r) => r.offset >= 2));

      // Before the horizon: still there, and nothing is due.
      assert.equal(await cleaner.cleanFilthiestLog(now + retention - 1), null);
      await cleaner.cleanLog(log, now + retention - 1);
      assert.ok(allRecords(dir).some((r) => r.key === "a" && r.value === null), "kept before delete.retention.ms");
      // At the horizon the log is due even though nothing is dirty, and the tombstone goes.
      const due = await cleaner.cleanFilthiestLog(now + retention);
      assert.ok(due !== null, "a passed delete horizon makes the log cleanable");
      recs = allRecords(dir).filter((r) => r.offset < 4);
      assert.deepEqual(recs.map((r) => [r.offset, r.key, r.value]), [[1, "b", "b1"], [3, "c", "c1"]]);
      assert.equal(await cleaner.cleanFilthiestLog(now + 10 * retention), null, "nothing more to do");
      // Timestamps survive the horizon rewrite.
      const c = readLogFile(logPath(dir, 0)).flatMap((b) => b.records!).find((r) => r.key === "c");
      assert.ok(c !== undefined);
    } finally {
      log.close();
    }
  });
});

test("cleaner: min.cleanable.dirty.ratio decides when a log is cleaned", async () => {
  await withTempDir(async (dir) => {
    const log = openLog(dir, compactConfig({ minCleanableDirtyRatio: 0.5 }));
    try {
      fillRounds(log, 20, 2, 1); // 40 dirty batches
      log.roll();
      const cleaner = cleanerFor(dir, () => [log]);
      assert.ok((await cleaner.cleanFilthiestLog(T0)) !== null);
      const cleanBytes = log.logSegments[0].sizeBytes;
      // A little more (dirty ratio well below 0.5): not cleaned.
      fillRounds(log, 3, 1, 1);
      log.roll();
      const c1 = cleaner.logToClean(log, T0);
      assert.ok(c1.cleanableRatio > 0 && c1.cleanableRatio < 0.5, `ratio ${c1.cleanableRatio}`);
      assert.equal(await cleaner.cleanFilthiestLog(T0), null);
      assert.equal(log.logSegments[0].sizeBytes, cleanBytes);
      // Enough to pass it: cleaned.
      fillRounds(log, 20, 2, 1);
      log.roll();
      const c2 = cleaner.logToClean(log, T0);
      assert.ok(c2.cleanableRatio > 0.5, `ratio ${c2.cleanableRatio}`);
      const r = await cleaner.cleanFilthiestLog(T0);
      assert.ok(r !== null);
      assert.equal(r.endOffset, log.activeSegment.baseOffset);
      assert.equal(new Set(allRecords(dir).map((x) => x.key)).size, allRecords(dir).length, "each key once");
    } finally {
      log.close();
    }
  });
});

test("cleaner: min.compaction.lag.ms keeps young segments dirty; max.compaction.lag.ms forces old ones", async () => {
  await withTempDir(async (dir) => {
    const log = openLog(dir, compactConfig({ minCompactionLagMs: 60_000, minCleanableDirtyRatio: 0.5 }));
    try {
      fillRounds(log, 5, 2, 1, 0, T0);
      log.roll();
      fillRounds(log, 5, 2, 1, 0, T0 + 100_000);
      log.roll();
      const cleaner = cleanerFor(dir, () => [log]);
      // At T0 + 30 s every segment is younger than the lag: nothing is cleanable.
      const young = cleaner.logToClean(log, T0 + 30_000);
      assert.equal(young.firstUncleanableOffset, 0);
      assert.equal(await cleaner.cleanFilthiestLog(T0 + 30_000), null);
      // At T0 + 90 s the first segment is old enough, the second is not.
      const r = await cleaner.cleanFilthiestLog(T0 + 90_000);
      assert.ok(r !== null);
      assert.equal(r.endOffset, 10, "cleaning stops at the first segment within the lag");
      assert.equal(allRecords(dir).filter((x) => x.offset < 10).length, 5);
      assert.equal(allRecords(dir).filter((x) => x.offset >= 10).length, 10, "the young segment is untouched");
    } finally {
      log.close();
    }
  });
  await withTempDir(async (dir) => {
    // A ratio that is never reached, but a dirty segment older than max.compaction.lag.ms.
    const log = openLog(dir, compactConfig({ minCleanableDirtyRatio: 1, maxCompactionLagMs: 10_000 }));
    try {
      fillRounds(log, 5, 2, 1, 0, T0);
      log.roll();
      const cleaner = cleanerFor(dir, () => [log]);
      assert.equal(await cleaner.cleanFilthiestLog(T0 + 5_000), null);
      assert.ok(cleaner.logToClean(log, T0 + 20_000).needCompactionNow);
      assert.ok((await cleaner.cleanFilthiestLog(T0 + 20_000)) !== null);
      assert.equal(allRecords(dir).length, 5);
    } finally {
      log.close();
    }
  });
});

for (const [codec, name] of [[1, "gzip"], [2, "snappy"], [3, "lz4"], [4, "zstd"]] as const) {
  test(`cleaner: ${name} batches are decompressed, filtered and recompressed with the same codec`, async () => {
    await withTempDir(async (dir) => {
      const log = openLog(dir);
      try {
        fillRounds(log, 8, 3, 6, codec);
        append(log, [{ key: "k1", value: "last".repeat(50) }], codec);
        log.roll();
        append(log, [{ key: "x", value: "x" }]);
        const before = allRecords(dir).filter((r) => r.offset < log.activeSegment.baseOffset);
        const cleaner = cleanerFor(dir, () => [log]);
        assert.ok((await cleaner.cleanLog(log, T0)) !== null);
        const batches = readLogFile(logPath(dir, 0));
        assert.ok(batches.length > 0);
        for (const b of batches) {
          assert.equal(b.codec, codec, `batch ${b.baseOffset} keeps ${name}`);
          assert.ok(b.crcValid);
          assert.ok(b.records !== null, "re-readable");
        }
        const kept = batches.flatMap((b) => b.records!);
        assert.deepEqual(
          kept.map((r) => [r.offset, r.key, r.value]),
          [...latestByKey(before)].map(([k, v]) => [v.offset, k, v.value]).sort((a, b) => (a[0] as number) - (b[0] as number)),
        );
        assert.deepEqual(consume(log).filter((r) => r.offset < log.activeSegment.baseOffset).map((r) => r.value), kept.map((r) => r.value));
      } finally {
        log.close();
      }
    });
  });
}

test("cleaner: record headers survive a rewritten batch", async () => {
  await withTempDir(async (dir) => {
    const log = openLog(dir);
    try {
      append(log, [
        { key: "a", value: "old", headers: [["h", "x"]] },
        { key: "b", value: "b1", headers: [["trace-id", "abc"], ["empty", null], ["ünïcode", "é"]] },
        { key: "c", value: "c1", headers: [] },
      ], 1);
      append(log, [{ key: "a", value: "new", headers: [["h", "y"], ["h", "z"]] }], 1);
      log.roll();
      const cleaner = cleanerFor(dir, () => [log]);
      await cleaner.cleanLog(log, T0);
      const kept = allRecords(dir);
      assert.deepEqual(kept.map((r) => [r.offset, r.key, r.value, r.headers]), [
        [1, "b", "b1", [["trace-id", "abc"], ["empty", null], ["ünïcode", "é"]]],
        [2, "c", "c1", []],
        [3, "a", "new", [["h", "y"], ["h", "z"]]],
      ]);
    } finally {
      log.close();
    }
  });
});

test("cleaner: a decompression bomb is kept as it is, logged, never inflated; the rest is cleaned", async () => {
  await withTempDir(async (dir) => {
    const warnings: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (_f: LogFields, msg: string) => void warnings.push(msg), child: () => logger };
    const log = openLog(dir);
    try {
      append(log, [{ key: "a", value: "a1" }]);
      // A gzip batch whose records section inflates to 65 MiB of zeros, past the 64 MiB bound.
      const bomb = buildBatch([{ key: "bomb", value: "x" }], { baseTimestamp: BigInt(T0) });
      const body = gzipSync(new Uint8Array(65 << 20));
      const b = new Uint8Array(61 + body.length);
      b.set(bomb.subarray(0, 61));
      b.set(body, 61);
      const dv = new DataView(b.buffer);
      dv.setInt32(8, b.length - 12);
      dv.setInt16(21, 1);
      dv.setUint32(17, crc32c(b, 21, b.length));
      assert.ok(b.length < 200_000, "small on disk");
      log.appendAsLeader(b, 1, 0);
      append(log, [{ key: "a", value: "a2" }]);
      log.roll();
      log.updateHighWatermark(log.logEndOffset);
      const cleaner = cleanerFor(dir, () => [log], {}, platform, logger);
      const r = await cleaner.cleanLog(log, T0);
      assert.ok(r !== null);
      assert.equal(r.unreadableBatches, 1);
      const batches = readLogFile(logPath(dir, 0));
      assert.deepEqual(batches.map((x) => x.baseOffset), [1, 2], "a1 removed, the bomb and a2 kept");
      assert.ok(batches[0].records === null, "the bomb still does not decode");
      assert.equal(batches[0].bytes.length, b.length);
      assert.ok(warnings.some((w) => w.includes("kept a batch")), "logged");
    } finally {
      log.close();
    }
  });
});

/**
 * A platform whose fs.rename throws at the n-th call of a swap: a crash at that point of it.
 * (The leader epoch checkpoint's own temp-file renames, which appends make, are not counted.)
 */
function crashingAtRename(n: number): Platform {
  let calls = 0;
  const fs = Object.create(platform.fs) as FileSystem;
  fs.rename = (from: string, to: string) => {
    if (from.endsWith("leader-epoch-checkpoint.tmp")) return platform.fs.rename(from, to);
    if (++calls === n) throw new Error(`simulated crash before renaming ${from}`);
    platform.fs.rename(from, to);
  };
  const p = Object.create(platform) as Platform;
  Object.defineProperty(p, "fs", { value: fs });
  return p;
}

test("cleaner: a crash at any rename of a swap loses nothing; the reopened log is consistent", async () => {
  // The same log, cleaned with a crash injected before the 1st, 2nd, … rename of the swap
  // (`.cleaned` → `.swap`, old → `.deleted`, `.swap` → final), then reopened as after kill -9.
  const build = (dir: string, p: Platform) => {
    const log = openLog(dir, compactConfig({ fileDeleteDelayMs: 60_000 }), p);
    fillRounds(log, 6, 2, 2);
    log.roll();
    fillRounds(log, 6, 1, 3);
    log.roll();
    append(log, [{ key: "k0", value: "active" }]);
    log.flush();
    return log;
  };
  let expectedAfter: ReadRecord[] = [];
  let expectedBefore: ReadRecord[] = [];
  await withTempDir(async (dir) => {
    const log = build(dir, platform);
    expectedBefore = consume(log);
    await cleanerFor(dir, () => [log]).cleanLog(log, T0);
    expectedAfter = consume(log);
    log.close();
  });
  assert.ok(expectedAfter.length < expectedBefore.length);
  const latestBefore = latestByKey(expectedBefore);
  const renamesInSwap = 3 + 3 * 2 + 3; // cleaned→swap, two old segments → .deleted, swap→final
  const seen = new Set<string>();
  for (let n = 1; n <= renamesInSwap + 1; n++) {
    await withTempDir(async (dir) => {
      const p = crashingAtRename(n);
      const log = build(dir, p);
      const crashed = await cleanerFor(dir, () => [log], {}, p).cleanLog(log, T0).then(() => false, () => true);
      assert.equal(crashed, n <= renamesInSwap, `crash at rename ${n}`);
      log.closeForFailure(); // its handles and removal timers go, nothing is written
      // No close (a crash does not close); reopen as after an unclean stop.
      const state: LogLoadState = { hadCleanShutdown: false, recoveryPoint: 0, logStartOffset: 0, highWatermark: null };
      const reopened = openLog(dir, compactConfig(), platform, state);
      try {
        const left = files(dir).other;
        assert.deepEqual(left.filter((f) => f.endsWith(".cleaned") || f.endsWith(".swap")), [], `no half-swapped files after rename ${n}`);
        const got = consume(reopened);
        // Either the old segments or the cleaned one, never a mix that loses a record.
        const whole = JSON.stringify(got) === JSON.stringify(expectedBefore) || JSON.stringify(got) === JSON.stringify(expectedAfter);
        assert.ok(whole, `after rename ${n}: ${JSON.stringify(got.map((r) => r.offset))}`);
        seen.add(got.length === expectedBefore.length ? "before" : "after");
        assert.deepEqual(latestByKey(got), latestBefore, "the latest value of every key is there");
        assert.equal(reopened.logEndOffset, expectedBefore[expectedBefore.length - 1].offset + 1);
        // Indexes agree with the files: every offset is found by a read starting there.
        for (const r of got) assert.equal(consumeFrom(reopened, r.offset)[0]?.offset, r.offset);
        // And the reopened log can be cleaned again.
        reopened.updateHighWatermark(reopened.logEndOffset);
        await cleanerFor(dir, () => [reopened]).cleanLog(reopened, T0);
        assert.deepEqual(consume(reopened), expectedAfter);
      } finally {
        reopened.close();
      }
    });
  }
  assert.deepEqual([...seen].sort(), ["after", "before"], "crashes land on both sides of the swap");
});

function consumeFrom(log: Log, offset: number): ReadRecord[] {
  const { records } = log.read(offset, 1 << 20, true);
  const out: ReadRecord[] = [];
  forEachBatch(records, (pos) => {
    const d = readBatchRecords(records, pos);
    if (d.ok) for (const r of d.records) if (r.offset >= offset) out.push({ offset: r.offset, key: dec(r.key), value: dec(r.value), headers: [] });
  });
  return out;
}

test("cleaner: a tiny dedupe buffer cleans in several passes, each within the map's bound", async () => {
  await withTempDir(async (dir) => {
    const log = openLog(dir, compactConfig({ minCleanableDirtyRatio: 0 }));
    try {
      fillRounds(log, 50, 2, 1);
      log.roll();
      const bufferBytes = 24 * 12; // 12 slots, 10 keys at load factor 0.9
      const cleaner = cleanerFor(dir, () => [log], { dedupeBufferBytes: bufferBytes });
      const results = [];
      for (let i = 0; i < 50; i++) {
        const r = await cleaner.cleanFilthiestLog(T0);
        if (r === null) break;
        results.push(r);
      }
      assert.ok(results.length >= 5, `${results.length} passes`);
      for (const r of results) assert.ok(r.mapKeys <= 10, `a pass held ${r.mapKeys} keys`);
      assert.ok(results.slice(0, -1).every((r) => r.mapFull));
      const ends = results.map((r) => r.endOffset);
      assert.deepEqual(ends, [...ends].sort((a, b) => a - b), "each pass goes further");
      assert.equal(ends[ends.length - 1], 100);
      const recs = allRecords(dir);
      assert.equal(recs.length, 50);
      assert.ok(recs.every((r) => r.value!.startsWith("v1-")));

      // A first dirty batch with more keys than the map holds cannot be cleaned: skipped, logged.
      append(log, Array.from({ length: 20 }, (_, i) => ({ key: `big${i}`, value: "v" })));
      log.roll();
      assert.equal(await cleaner.cleanLog(log, T0), null);
    } finally {
      log.close();
    }
  });
});

test("cleaner: cleaner-offset-checkpoint in Kafka's format, read back by a new cleaner", async () => {
  await withTempDir(async (dir) => {
    const log = openLog(dir);
    try {
      fillRounds(log, 5, 2, 1);
      log.roll();
      append(log, [{ key: "x", value: "x" }]);
      const cleaner = cleanerFor(dir, () => [log]);
      await cleaner.cleanLog(log, T0);
      const text = nodeFs.readFileSync(`${dir}/${CleanerOffsetCheckpointFile}`, "utf8");
      assert.equal(text, "0\n1\nt 0 10\n");
      const again = cleanerFor(dir, () => [log]);
      again.startup(); // reads the checkpoints
      await again.shutdown();
      assert.equal(again.checkpointOf(log), 10);
      assert.equal(again.logToClean(log, T0).firstDirtyOffset, 10);
      // A checkpoint past the log end (a truncated log) counts as absent.
      nodeFs.writeFileSync(`${dir}/${CleanerOffsetCheckpointFile}`, "0\n1\nt 0 999\n");
      const reset = cleanerFor(dir, () => [log], { enable: false });
      reset.startup();
      assert.equal(reset.logToClean(log, T0).firstDirtyOffset, 0);
    } finally {
      log.close();
    }
  });
});

test("cleaner: a read holding a replaced segment completes; the old files wait as .deleted", async () => {
  await withTempDir(async (dir) => {
    const log = openLog(dir, compactConfig({ fileDeleteDelayMs: 60_000 }));
    try {
      fillRounds(log, 5, 3, 1);
      log.roll();
      const old = log.logSegments[0];
      const oldBytes = old.read(0, 1 << 20, true);
      await cleanerFor(dir, () => [log]).cleanLog(log, T0);
      assert.notEqual(log.logSegments[0], old, "a new segment object");
      assert.deepEqual(old.read(0, 1 << 20, true), oldBytes, "the old segment still reads whole");
      assert.ok(files(dir).other.includes("00000000000000000000.log.deleted"));
      assert.equal(consume(log).length, 5);
    } finally {
      log.close();
    }
    assert.deepEqual(files(dir).other.filter((f) => f.endsWith(".deleted")), []);
  });
});

test("cleaner: small cleaned segments are grouped up to segment.bytes", async () => {
  await withTempDir(async (dir) => {
    const log = openLog(dir, compactConfig({ segmentBytes: 4000 }));
    try {
      for (let s = 0; s < 6; s++) {
        fillRounds(log, 4, 3, 1);
        log.roll();
      }
      const sizes = log.logSegments.slice(0, -1).map((s) => s.sizeBytes);
      const groups = groupSegmentsBySize(log.logSegments.slice(0, -1), 4000, 1 << 20, log.logSegments);
      assert.ok(groups.length < sizes.length && groups.length > 1, `${sizes.length} segments in ${groups.length} groups`);
      for (const g of groups) assert.ok(g.length === 1 || g.reduce((n, s) => n + s.sizeBytes, 0) <= 4000);
      await cleanerFor(dir, () => [log]).cleanLog(log, T0);
      assert.equal(files(dir).live.length, groups.length + 1);
      assert.equal(allRecords(dir).length, 4);
      // A second pass merges the now small segments further.
      fillRounds(log, 4, 1, 1);
      log.roll();
      await cleanerFor(dir, () => [log]).cleanLog(log, T0);
      assert.equal(files(dir).live.length, 2, "one cleaned segment and the active one");
    } finally {
      log.close();
    }
  });
});

test("cleaner: the LogManager runs it on its own, and only for compacted topics", async () => {
  await withTempDir(async (dir) => {
    const defaults: TopicLogConfig = { ...logConfigDefaults, maxMessageBytes: 1 << 20 };
    const lm = new LogManager(platform, [dir], defaults, silentLogger, { cleaner: { backoffMs: 20 } });
    await lm.startup(0, "cluster");
    try {
      const compacted = lm.getOrCreateLog("c", 0, { ...compactConfig(), maxMessageBytes: 1 << 20 } as TopicLogConfig);
      const plain = lm.getOrCreateLog("d", 0, { ...compactConfig(), cleanupPolicy: "delete", maxMessageBytes: 1 << 20 } as TopicLogConfig);
      for (const log of [compacted, plain]) {
        fillRounds(log, 5, 4, 1, 0, Date.now());
        log.roll();
      }
      const deadline = Date.now() + 10_000;
      while (lm.cleaner.passes === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.ok(lm.cleaner.passes >= 1, "cleaned in the background");
      assert.equal(consume(compacted).length, 5);
      assert.equal(consume(plain).length, 20, "a delete-policy log is not compacted");
      assert.match(nodeFs.readFileSync(`${dir}/${CleanerOffsetCheckpointFile}`, "utf8"), /^0\n1\nc 0 20\n$/);
    } finally {
      lm.shutdown();
    }
  });
});

test("offset map: 128-bit MurmurHash3 keys, latest offset wins, grows up to its bound", () => {
  const out = new Int32Array(4);
  murmur3x86_128(new Uint8Array(0), out);
  assert.deepEqual([...out], [0, 0, 0, 0], "MurmurHash3 x86_128 of nothing, seed 0");
  const map = new OffsetMap(24 * 5000);
  assert.equal(map.slotsMax, 5000);
  assert.equal(map.maxEntries, 4500);
  const k = (i: number) => new TextEncoder().encode(`key-${i}`);
  for (let i = 0; i < 4500; i++) map.put(k(i), i);
  for (let i = 0; i < 4500; i++) map.put(k(i), i + 10_000);
  map.put(k(7), 3); // older: ignored
  assert.equal(map.size, 4500);
  assert.ok(!map.fits(1));
  for (let i = 0; i < 4500; i++) assert.equal(map.get(k(i)), i + 10_000);
  assert.equal(map.get(k(99_999)), -1);
  assert.ok(map.allocatedBytes <= 24 * 5000);
});

test("cleaner configs: topic overrides over the log.cleaner.* broker defaults", () => {
  const { config: broker } = parseBrokerConfig(new Map([
    ["log.cleaner.delete.retention.ms", "1000"],
    ["log.cleaner.min.cleanable.ratio", "0.25"],
    ["log.cleaner.backoff.ms", "50"],
    ["log.cleaner.threads", "0"],
  ]));
  assert.equal(broker.logCleaner.deleteRetentionMs, 1000);
  assert.equal(broker.logCleaner.minCleanableRatio, 0.25);
  assert.equal(broker.logCleaner.backoffMs, 50);
  assert.equal(broker.logCleaner.enable, true);
  assert.equal(broker.logCleaner.dedupeBufferBytes, 134_217_728);
  assert.equal(broker.logCleaner.maxCompactionLagMs, Number.MAX_SAFE_INTEGER);
  assert.equal(new LogCleaner(platform, [], () => [], { threads: broker.logCleaner.threads }, silentLogger).enabled, false, "threads 0 disables it");
  assert.throws(() => parseBrokerConfig(new Map([["log.cleaner.min.cleanable.ratio", "1.5"]])), /log.cleaner.min.cleanable.ratio/);
  const defaults: TopicLogConfig = { ...logConfigDefaults, maxMessageBytes: 1 << 20, deleteRetentionMs: 1000, minCleanableDirtyRatio: 0.25 };
  const inherited = effectiveLogConfig(defaults, { "cleanup.policy": "compact, delete" });
  assert.equal(inherited.cleanupPolicy, "compact,delete");
  assert.equal(inherited.deleteRetentionMs, 1000);
  assert.equal(inherited.minCleanableDirtyRatio, 0.25);
  const own = effectiveLogConfig(defaults, {
    "delete.retention.ms": "5",
    "min.cleanable.dirty.ratio": "0.01",
    "min.compaction.lag.ms": "7",
    "max.compaction.lag.ms": "9223372036854775807",
  });
  assert.deepEqual([own.deleteRetentionMs, own.minCleanableDirtyRatio, own.minCompactionLagMs], [5, 0.01, 7]);
  assert.ok((own.maxCompactionLagMs ?? 0) > Number.MAX_SAFE_INTEGER / 2);
});

test("cleaner: an idempotent producer's last batch is kept though every record in it is obsolete; its earlier ones go", async () => {
  await withTempDir(async (dir) => {
    const log = openLog(dir);
    try {
      const idem = (pid: bigint, seq: number, key: string) =>
        buildBatch([{ key, value: `${pid}-${seq}` }], { producerId: pid, producerEpoch: 0, baseSequence: seq, baseTimestamp: BigInt(T0) });
      for (const b of [idem(5n, 0, "a"), idem(6n, 0, "b"), idem(6n, 1, "c")]) {
        log.appendAsLeader(b, 1, 0);
        log.updateHighWatermark(log.logEndOffset);
      }
      append(log, [{ key: "a", value: "new-a" }, { key: "b", value: "new-b" }, { key: "c", value: "new-c" }]);
      log.roll();
      append(log, [{ key: "z", value: "active" }]);
      const result = await cleanerFor(dir, () => [log]).cleanLog(log, T0 + 1000);
      assert.ok(result !== null);
      const kept = readLogFile(logPath(dir, 0)).map((b) => [b.baseOffset, b.records!.map((r) => r.value)]);
      // 5's only batch (offset 0) and 6's last (offset 2) stay; 6's first (offset 1) goes.
      assert.deepEqual(kept, [[0, ["5-0"]], [2, ["6-1"]], [3, ["new-a", "new-b", "new-c"]]]);
    } finally {
      log.close();
    }
  });
});
