// TimeIndex on real files (issue 3, item 1): Kafka's 12-byte big-endian (timestamp, relative
// offset) entries, made at the offset index's cadence only when the max timestamp grows, with the
// segment's max timestamp as the last entry at close and roll; lookups (last entry <= target);
// loading a torn or inconsistent file; a missing or damaged .timeindex rebuilt on open to the
// same bytes; and ListOffsets-by-timestamp answers of Log (first record at or after a timestamp,
// the record with the max timestamp) checked against a brute-force search over every record.
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { test } from "node:test";
import { Log, type LogConfig, LogSegment, segmentFileName, TimeIndex } from "../../src/log/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Platform } from "../../src/platform/types.ts";
import { indexWriteBufferEntries } from "../../src/util/limits.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { buildBatch, type TestRecord } from "../helpers/record_batch.ts";
import { withTempDir } from "../helpers/temp_dir.ts";

const platform: Platform = await loadPlatform();
const BIG = 1 << 30;

/** Big-endian (timestamp int64, relative offset int32) entries, as Kafka writes them. */
function entriesBytes(pairs: [number, number][]): Uint8Array {
  const out = new Uint8Array(pairs.length * 12);
  const dv = new DataView(out.buffer);
  pairs.forEach(([ts, rel], i) => {
    dv.setBigInt64(i * 12, BigInt(ts));
    dv.setInt32(i * 12 + 8, rel);
  });
  return out;
}

function readEntries(path: string): [number, number][] {
  const raw = nodeFs.readFileSync(path);
  assert.equal(raw.length % 12, 0, `${path}: whole entries`);
  const dv = new DataView(raw.buffer, raw.byteOffset, raw.length);
  const out: [number, number][] = [];
  for (let p = 0; p < raw.length; p += 12) out.push([Number(dv.getBigInt64(p)), dv.getInt32(p + 8)]);
  return out;
}

const timeIndexPath = (dir: string, base: number) => `${dir}/${segmentFileName(base, ".timeindex")}`;

test("time index: entries are big-endian (timestamp, offset - base); only growing timestamps are kept", async () => {
  await withTempDir((dir) => {
    const path = timeIndexPath(dir, 100);
    const idx = TimeIndex.open(platform, path, 100, BIG, BIG);
    try {
      assert.equal(idx.lastTimestamp, -1);
      assert.equal(idx.lastOffset, 100);
      idx.maybeAppend(1_700_000_000_000, 104);
      idx.maybeAppend(1_700_000_000_000, 110); // not larger: skipped
      idx.maybeAppend(1_600_000_000_000, 111); // smaller: skipped
      idx.maybeAppend(1_700_000_000_005, 120);
      idx.maybeAppend(2 ** 40 * 3 + 7, 100_100); // above 2^32, to see both halves
      assert.equal(idx.entryCount, 3);
      assert.equal(idx.sizeBytes, 36);
      assert.equal(idx.lastTimestamp, 2 ** 40 * 3 + 7);
      assert.equal(idx.lastOffset, 100_100);
      assert.throws(() => idx.maybeAppend(2 ** 41 * 3, 100_099), /offsets increase/);
    } finally {
      idx.close();
    }
    assert.deepEqual(
      new Uint8Array(nodeFs.readFileSync(path)),
      entriesBytes([[1_700_000_000_000, 4], [1_700_000_000_005, 20], [2 ** 40 * 3 + 7, 100_000]]),
    );
    // And it loads back the same.
    const again = TimeIndex.open(platform, path, 100, BIG, BIG);
    try {
      assert.equal(again.damaged, false);
      assert.equal(again.entryCount, 3);
      assert.equal(again.lookup(1_700_000_000_004), 104);
    } finally {
      again.close();
    }
  });
});

test("time index: lookup gives the offset of the last entry whose timestamp is <= target, the base below the first", async () => {
  await withTempDir((dir) => {
    const idx = TimeIndex.open(platform, timeIndexPath(dir, 1000), 1000, BIG, BIG);
    try {
      assert.equal(idx.lookup(5), 1000, "empty index");
      const entries: [number, number][] = [];
      for (let i = 0; i < 500; i++) entries.push([10_000 + i * 13, 1000 + 2 + i * 5]);
      for (const [ts, o] of entries) idx.maybeAppend(ts, o);
      for (let target = 9_990; target < 10_000 + 13 * 500 + 20; target++) {
        let expected = 1000;
        for (const [ts, o] of entries) if (ts <= target) expected = o;
        assert.equal(idx.lookup(target), expected, `lookup(${target})`);
      }
    } finally {
      idx.close();
    }
  });
});

test("time index: full at segment.index.bytes / 12 entries, except the closing entry (force)", async () => {
  await withTempDir((dir) => {
    const path = timeIndexPath(dir, 0);
    const idx = TimeIndex.open(platform, path, 0, 12 * 2 + 7, BIG);
    try {
      assert.equal(idx.maxEntries, 2);
      idx.maybeAppend(10, 1);
      assert.equal(idx.isFull, false);
      idx.maybeAppend(20, 2);
      assert.equal(idx.isFull, true);
      idx.maybeAppend(30, 3);
      assert.equal(idx.entryCount, 2, "full: not taken");
      idx.maybeAppend(30, 3, true);
      assert.equal(idx.entryCount, 3, "the closing entry is taken anyway");
    } finally {
      idx.close();
    }
    assert.deepEqual(readEntries(path), [[10, 1], [20, 2], [30, 3]]);
  });
});

test("time index: truncateToOffset drops entries at or past the offset, in memory and on disk", async () => {
  await withTempDir((dir) => {
    const path = timeIndexPath(dir, 0);
    const idx = TimeIndex.open(platform, path, 0, BIG, BIG);
    try {
      for (let i = 1; i <= 5; i++) idx.maybeAppend(i * 100, i * 10);
      idx.truncateToOffset(30);
      assert.equal(idx.entryCount, 2);
      assert.deepEqual(readEntries(path), [[100, 10], [200, 20]]);
      assert.equal(idx.lookup(10_000), 20);
      idx.maybeAppend(250, 25);
      assert.equal(idx.lookup(10_000), 25);
      idx.reset();
      assert.equal(idx.entryCount, 0);
      assert.equal(nodeFs.statSync(path).size, 0);
    } finally {
      idx.close();
    }
  });
});

test("time index: loading a torn, out-of-order or out-of-range file keeps the good prefix and says damaged", async () => {
  await withTempDir((dir) => {
    const path = timeIndexPath(dir, 100);
    const good: [number, number][] = [[1000, 1], [2000, 5], [3000, 9]];
    const cases: [string, Uint8Array, number][] = [
      ["a torn last entry", new Uint8Array([...entriesBytes(good), 0, 0, 1, 2, 3]), 3],
      ["a timestamp going back", entriesBytes([...good, [2500, 12], [4000, 15]]), 3],
      ["a timestamp repeated", entriesBytes([...good, [3000, 12]]), 3],
      ["an offset going back", entriesBytes([...good, [4000, 8]]), 3],
      ["a negative timestamp", entriesBytes([...good, [-5, 12]]), 3],
      ["an offset at the log end", entriesBytes([...good, [4000, 50]]), 3],
      ["zeros (a preallocated tail)", new Uint8Array([...entriesBytes(good), ...new Uint8Array(24)]), 3],
    ];
    for (const [what, bytes, kept] of cases) {
      nodeFs.writeFileSync(path, bytes);
      const idx = TimeIndex.open(platform, path, 100, BIG, 150);
      try {
        assert.equal(idx.damaged, true, what);
        assert.equal(idx.entryCount, kept, what);
        assert.equal(idx.lookup(10_000), 109, what);
      } finally {
        idx.close();
      }
      assert.deepEqual(readEntries(path), good, `${what}: the file is cut back`);
    }
    nodeFs.writeFileSync(path, entriesBytes(good));
    const idx = TimeIndex.open(platform, path, 100, BIG, 150);
    assert.equal(idx.damaged, false, "a good file");
    idx.close();
  });
});

function segConfig(over: Partial<LogConfig> = {}): LogConfig {
  return { segmentBytes: 1 << 30, segmentMs: 7 * 24 * 3_600_000, indexIntervalBytes: 300, segmentIndexBytes: 10 << 20, ...over };
}

/** A batch of records with the given timestamps (base = the first; the max is in the header). */
function batchAt(timestamps: number[], baseOffset = 0): Uint8Array {
  const base = Math.min(...timestamps);
  const records: TestRecord[] = timestamps.map((t, i) => ({ value: `r${i}`.padEnd(60, "."), timestampDelta: t - base }));
  return buildBatch(records, { baseOffset: BigInt(baseOffset), baseTimestamp: BigInt(base) });
}

test("time index: a segment adds entries at the offset index's points when the max grows; close records the max", async () => {
  await withTempDir((dir) => {
    const seg = LogSegment.create(platform, dir, 0, segConfig());
    // Batch max timestamps go up, stall, go back and up again.
    const maxes = [100, 200, 200, 150, 300, 300, 250, 400, 380, 390, 500, 90, 95, 96];
    const batches: { position: number; size: number; lastOffset: number; max: number }[] = [];
    let next = 0;
    for (const max of maxes) {
      const bytes = batchAt([max - 3, max], next);
      batches.push({ position: seg.sizeBytes, size: bytes.length, lastOffset: next + 1, max });
      seg.append(bytes, next, next + 1);
      next += 2;
    }
    seg.flush();
    const offsets = readOffsetIndex(`${dir}/${segmentFileName(0, ".index")}`);
    assert.ok(offsets.length >= 4, `offset index entries: ${offsets.length}`);
    // At each offset-index point: a time entry exactly when the max so far grew since the last.
    const expected: [number, number][] = [];
    for (const [rel] of offsets) {
      const upTo = batches.filter((b) => b.lastOffset <= rel);
      const max = Math.max(...upTo.map((b) => b.max));
      const first = upTo.find((b) => b.max === max)!;
      if (expected.length === 0 || max > expected[expected.length - 1][0]) expected.push([max, first.lastOffset]);
    }
    assert.deepEqual(readEntries(timeIndexPath(dir, 0)), expected);
    seg.close();
    // The closing entry: the segment's max timestamp (500) and the batch carrying it.
    const withClose = [...expected];
    if (withClose[withClose.length - 1][0] < 500) withClose.push([500, batches.find((b) => b.max === 500)!.lastOffset]);
    assert.deepEqual(readEntries(timeIndexPath(dir, 0)), withClose);
    assert.equal(withClose[withClose.length - 1][0], 500);
  });
});

function readOffsetIndex(path: string): [number, number][] {
  const raw = nodeFs.readFileSync(path);
  const dv = new DataView(raw.buffer, raw.byteOffset, raw.length);
  const out: [number, number][] = [];
  for (let p = 0; p + 8 <= raw.length; p += 8) out.push([dv.getInt32(p), dv.getInt32(p + 4)]);
  return out;
}

/** Record timestamps of a log, offset by offset, in append order (for brute-force answers). */
interface Written {
  offset: number;
  timestamp: number;
}

/** Appends `batches` batches of 1-4 records with wandering timestamps; returns every record. */
function writeTimestamps(log: Log, batches: number, seed = 7): Written[] {
  let x = seed;
  const rand = () => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return x / 0x7fffffff;
  };
  const out: Written[] = [];
  let clock = 1_000_000;
  for (let i = 0; i < batches; i++) {
    // Mostly forward, sometimes back (producers' clocks differ), within a batch any order.
    clock += Math.floor(rand() * 50) - (rand() < 0.15 ? 400 : 0);
    const n = 1 + Math.floor(rand() * 4);
    const ts = Array.from({ length: n }, () => clock + Math.floor(rand() * 30));
    const first = log.logEndOffset;
    log.appendAsLeader(batchAt(ts), n, 0);
    ts.forEach((t, k) => out.push({ offset: first + k, timestamp: t }));
  }
  return out;
}

/** Kafka's answer, by brute force: the first record at or after `from` with timestamp >= target. */
function bruteForce(records: Written[], target: number, from = 0): Written | null {
  return records.find((r) => r.offset >= from && r.timestamp >= target) ?? null;
}

function assertTimestampLookups(log: Log, records: Written[], what: string): void {
  const min = Math.min(...records.map((r) => r.timestamp));
  const max = Math.max(...records.map((r) => r.timestamp));
  for (let t = min - 5; t <= max + 5; t += 7) {
    const want = bruteForce(records, t, log.logStartOffset);
    const got = log.offsetForTimestamp(t);
    assert.deepEqual(got, want === null ? null : { offset: want.offset, timestamp: want.timestamp }, `${what}: timestamp ${t}`);
  }
  const top = records.filter((r) => r.offset >= 0).reduce((a, b) => (b.timestamp > a.timestamp ? b : a));
  assert.deepEqual(log.maxTimestampOffset(), { offset: top.offset, timestamp: top.timestamp }, `${what}: max timestamp`);
}

test("time index: Log.offsetForTimestamp and maxTimestampOffset match a brute-force search over every record", async () => {
  await withTempDir((dir) => {
    const config = segConfig({ segmentBytes: 3000, indexIntervalBytes: 250 });
    let log = Log.open(platform, dir, "t", 0, config, silentLogger);
    const records = writeTimestamps(log, 300);
    try {
      assert.ok(log.segmentCount > 10, `segments: ${log.segmentCount}`);
      assertTimestampLookups(log, records, "while written");
    } finally {
      log.close();
    }
    log = Log.open(platform, dir, "t", 0, config, silentLogger);
    try {
      assertTimestampLookups(log, records, "after reopening");
      // Appends continue, and the answers with them.
      const more = writeTimestamps(log, 40, 99).map((r) => ({ ...r }));
      assertTimestampLookups(log, [...records, ...more], "after more appends");
      // A log start offset moved forward (DeleteRecords) hides the records below it.
      log.updateHighWatermark(log.logEndOffset);
      const start = records[Math.floor(records.length / 2)].offset + 1;
      log.maybeIncrementLogStartOffset(start, "test");
      assertTimestampLookups(log, [...records, ...more], "above the log start offset");
    } finally {
      log.close();
    }
  });
});

test("time index: missing or damaged .timeindex files are rebuilt on open, to the same entries", async () => {
  await withTempDir((dir) => {
    const config = segConfig({ segmentBytes: 4000, indexIntervalBytes: 200 });
    let log = Log.open(platform, dir, "t", 0, config, silentLogger);
    const records = writeTimestamps(log, 200);
    log.close();
    const bases = nodeFs.readdirSync(dir).filter((n) => n.endsWith(".log")).map((n) => Number(n.slice(0, 20))).sort((a, b) => a - b);
    assert.ok(bases.length >= 4);
    const original = bases.map((b) => nodeFs.readFileSync(timeIndexPath(dir, b)));
    const damage: ((p: string) => void)[] = [
      (p) => nodeFs.rmSync(p),
      (p) => nodeFs.appendFileSync(p, new Uint8Array([1, 2, 3, 4, 5])), // torn entry
      (p) => nodeFs.writeFileSync(p, entriesBytes([[5_000_000, 3], [4_000_000, 4]])), // out of order
      (p) => nodeFs.writeFileSync(p, new Uint8Array(0)), // emptied
    ];
    for (const [i, hurt] of damage.entries()) {
      // Damage a different closed segment each time, and the active one once.
      const victim = i === damage.length - 1 ? bases[bases.length - 1] : bases[i];
      hurt(timeIndexPath(dir, victim));
      log = Log.open(platform, dir, "t", 0, config, silentLogger);
      try {
        assert.deepEqual(
          bases.map((b) => new Uint8Array(nodeFs.readFileSync(timeIndexPath(dir, b)))),
          original.map((b) => new Uint8Array(b)),
          `damage ${i}: every .timeindex as written`,
        );
        assertTimestampLookups(log, records, `damage ${i}`);
      } finally {
        log.close();
      }
    }
  });
});

test("time index: a segment rolls when its time index is full", async () => {
  await withTempDir((dir) => {
    // An entry per append (interval 0); room for two time entries and three offset entries.
    const log = Log.open(platform, dir, "t", 0, segConfig({ indexIntervalBytes: 0, segmentIndexBytes: 24 }), silentLogger);
    try {
      for (let i = 0; i < 7; i++) log.appendAsLeader(batchAt([1000 + i]), 1, 0);
      const bases = nodeFs.readdirSync(dir).filter((n) => n.endsWith(".log")).map((n) => Number(n.slice(0, 20))).sort((a, b) => a - b);
      assert.deepEqual(bases, [0, 2, 4, 6]);
      // The rolled segments' indexes end with their max timestamp.
      assert.deepEqual(readEntries(timeIndexPath(dir, 0)), [[1000, 0], [1001, 1]]);
      assert.deepEqual(readEntries(timeIndexPath(dir, 2)), [[1002, 0], [1003, 1]]);
    } finally {
      log.close();
    }
  });
});

test("time index: truncating a segment drops later entries and recomputes its max timestamp", async () => {
  await withTempDir((dir) => {
    const seg = LogSegment.create(platform, dir, 0, segConfig({ indexIntervalBytes: 0 }));
    try {
      const positions: number[] = [];
      [100, 300, 200, 500, 400].forEach((t, i) => {
        positions.push(seg.sizeBytes);
        seg.append(batchAt([t], i), i, i);
      });
      assert.equal(seg.maxTimestampMs, 500);
      seg.truncateTo(positions[3], 3); // drops the batches at 500 and 400
      assert.equal(seg.maxTimestampMs, 300);
      assert.deepEqual(seg.maxTimestampAndOffset(), { offset: 1, timestamp: 300 });
      assert.deepEqual(seg.findOffsetByTimestamp(250), { offset: 1, timestamp: 300 });
      assert.equal(seg.findOffsetByTimestamp(301), null);
      seg.append(batchAt([350], 3), 3, 3);
      assert.deepEqual(seg.maxTimestampAndOffset(), { offset: 3, timestamp: 350 });
    } finally {
      seg.close();
    }
    assert.deepEqual(readEntries(timeIndexPath(dir, 0)), [[100, 0], [300, 1], [350, 3]]);
  });
});

test("time index: a copy of a live partition (buffered entries not yet written) opens with the right answers", async () => {
  await withTempDir((dir) => {
    // Enough index points that the files lag their in-memory entries by a buffer's worth.
    const config = segConfig({ indexIntervalBytes: 0 });
    const live = Log.open(platform, `${dir}/live`, "t", 0, config, silentLogger);
    try {
      const records = writeTimestamps(live, indexWriteBufferEntries + 300);
      const indexBytes = nodeFs.statSync(`${dir}/live/${segmentFileName(0, ".index")}`).size;
      assert.ok(indexBytes < live.activeSegment.index.sizeBytes, "the offset index file lags (buffered entries)");
      assert.equal(indexBytes % (indexWriteBufferEntries * 8), 0, "written a buffer at a time");
      // What a kill -9 would leave behind: the files as they are now.
      nodeFs.cpSync(`${dir}/live`, `${dir}/copy`, { recursive: true });
      const copy = Log.open(platform, `${dir}/copy`, "t", 0, config, silentLogger);
      try {
        assert.equal(copy.logEndOffset, live.logEndOffset);
        assertTimestampLookups(copy, records, "copy");
      } finally {
        copy.close();
      }
    } finally {
      live.close();
    }
  });
});

test("time index: on a dense index, every batch's own timestamp finds that batch's record", async () => {
  await withTempDir((dir) => {
    // One record per batch, an index entry per batch: the time index entry is the answer itself.
    const seg = LogSegment.create(platform, dir, 500, segConfig({ indexIntervalBytes: 0 }));
    try {
      const stamps = [10, 20, 30, 25, 40, 41, 42, 35, 50];
      stamps.forEach((t, i) => seg.append(batchAt([t], 500 + i), 500 + i, 500 + i));
      stamps.forEach((t, i) => {
        const first = stamps.findIndex((x) => x >= t);
        assert.deepEqual(seg.findOffsetByTimestamp(t), { offset: 500 + first, timestamp: stamps[first] }, `timestamp ${t} (batch ${i})`);
      });
      assert.deepEqual(seg.findOffsetByTimestamp(36), { offset: 504, timestamp: 40 });
    } finally {
      seg.close();
    }
  });
});

test("time index: recovery ends the rebuilt index with the segment's max timestamp (Kafka's closing entry)", async () => {
  await withTempDir((dir) => {
    // Index points every ~3 batches; the max comes in the last batch, after the last point.
    const config = segConfig({ indexIntervalBytes: 500 });
    const seg = LogSegment.create(platform, dir, 0, config);
    const stamps = [100, 110, 120, 130, 140, 150, 160, 170, 900];
    stamps.forEach((t, i) => seg.append(batchAt([t], i), i, i));
    seg.flush();
    const before = readEntries(timeIndexPath(dir, 0));
    assert.ok(before.length >= 1 && before[before.length - 1][0] < 900, "no index point after the last batch yet");
    const r = seg.recover();
    try {
      assert.equal(r.truncatedBytes, 0);
      assert.deepEqual(readEntries(timeIndexPath(dir, 0)), [...before, [900, 8]]);
      assert.equal(seg.maxTimestampMs, 900);
    } finally {
      seg.close();
    }
  });
});
