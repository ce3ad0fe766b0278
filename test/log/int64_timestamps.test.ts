// Timestamps over the whole int64 range in the log (issue 11, defect 1): Kafka accepts a batch
// stamped 2^63-1 (or any negative value) with its default configs, so the time index, the
// segments' max timestamps, recovery, retention by time, ListOffsets by timestamp and the
// cleaner must keep such values exactly and never fail on them — above all at start-up, which
// must survive any batch that was once accepted (also: the cleaner keeps, as they are, batches
// whose records' offset deltas do not increase, instead of failing every pass on them).
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { test } from "node:test";
import {
  addTimestamp,
  Log,
  type LogConfig,
  logConfigDefaults,
  LogCleaner,
  type LogLoadState,
  LogSegment,
  segmentFileName,
  TimeIndex,
  timestampAt,
  timestampFromBigInt,
} from "../../src/log/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Platform } from "../../src/platform/types.ts";
import { crc32c } from "../../src/util/crc32c.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { buildBatch, parseBatches, text } from "../helpers/record_batch.ts";
import { withTempDir } from "../helpers/temp_dir.ts";

const platform: Platform = await loadPlatform();
const MAX = 0x7fff_ffff_ffff_ffffn; // 2^63-1
const MIN = -0x8000_0000_0000_0000n;
const T0 = 1_700_000_000_000;

const config = (over: Partial<LogConfig> = {}): LogConfig => ({ ...logConfigDefaults, segmentBytes: 2000, indexIntervalBytes: 100, ...over });
const unclean: LogLoadState = { hadCleanShutdown: false, recoveryPoint: 0, logStartOffset: 0, highWatermark: null };

/** Appends one one-record batch stamped ts (baseTimestamp = maxTimestamp = ts); returns its offset. */
function appendAt(log: Log, ts: bigint, pad = 80): number {
  const o = log.logEndOffset;
  log.appendAsLeader(buildBatch([{ value: `v${o}`.padEnd(pad, ".") }], { baseTimestamp: ts }), 1, 0);
  log.updateHighWatermark(log.logEndOffset);
  return o;
}

function timeIndexEntries(path: string): [bigint, number][] {
  const raw = nodeFs.readFileSync(path);
  const dv = new DataView(raw.buffer, raw.byteOffset, raw.length);
  const out: [bigint, number][] = [];
  for (let p = 0; p + 12 <= raw.length; p += 12) out.push([dv.getBigInt64(p), dv.getInt32(p + 8)]);
  return out;
}

/** Offsets and values read back through Log.read from offset 0. */
function readAll(log: Log): { offset: bigint; timestamp: bigint; value: string | null }[] {
  const out: { offset: bigint; timestamp: bigint; value: string | null }[] = [];
  for (let next = log.logStartOffset; next < log.logEndOffset;) {
    const r = log.read(next, 1 << 20, true);
    assert.ok(r.records.length > 0, `a read at ${next} returns a batch`);
    for (const b of parseBatches(r.records)) {
      assert.ok(b.crcValid);
      // base + delta wraps as Kafka's Long arithmetic does (the helper does not wrap).
      for (const rec of b.records) out.push({ offset: rec.offset, timestamp: BigInt.asIntN(64, rec.timestamp), value: text(rec.value) });
      next = Number(b.baseOffset) + b.lastOffsetDelta + 1;
    }
  }
  return out;
}

test("timestamp: canonical number/bigint form compares exactly over int64", () => {
  const b = new Uint8Array(8);
  const dv = new DataView(b.buffer);
  for (const v of [0n, -1n, 5n, MAX, MAX - 1n, MIN, MIN + 1n, 2n ** 53n, 2n ** 53n - 1n, -(2n ** 53n), -(2n ** 53n) + 1n, 2n ** 32n - 1n, -(2n ** 32n)]) {
    dv.setBigInt64(0, v);
    const ts = timestampAt(b, 0);
    assert.equal(BigInt(ts), v, `${v} read exactly`);
    assert.equal(typeof ts, Number.isSafeInteger(Number(v)) && BigInt(Number(v)) === v ? "number" : "bigint", `${v} in canonical form`);
    assert.equal(timestampFromBigInt(v), ts, `${v}: one value, one form`);
  }
  assert.ok(timestampFromBigInt(MAX) > timestampFromBigInt(MAX - 1n), "2^63-1 > 2^63-2 (a float would make them equal)");
  assert.ok(timestampFromBigInt(2n ** 53n + 1n) > 2 ** 53);
  assert.ok(timestampFromBigInt(MIN) < -1);
  assert.equal(addTimestamp(T0, 1000), T0 + 1000);
  assert.equal(addTimestamp(T0, 2 ** 63), MAX, "a horizon saturates, never wraps into the past");
  assert.equal(addTimestamp(MAX, 1), MAX);
});

test("time index: entries up to 2^63-1 are kept exactly, on disk and after reload; lookups compare exactly", async () => {
  await withTempDir((dir) => {
    const path = `${dir}/${segmentFileName(100, ".timeindex")}`;
    const big = [2n ** 53n + 1n, 2n ** 53n + 2n, MAX - 1n, MAX].map(timestampFromBigInt);
    const idx = TimeIndex.open(platform, path, 100, 1 << 20, 1 << 30);
    idx.maybeAppend(T0, 101);
    idx.maybeAppend(-5, 102); // negative: never above the last entry
    big.forEach((ts, i) => idx.maybeAppend(ts, 103 + i));
    idx.maybeAppend(MAX, 110, true); // not above the last: ignored even when forced
    assert.equal(idx.entryCount, 5);
    assert.equal(idx.lastTimestamp, MAX);
    assert.equal(idx.lookup(timestampFromBigInt(MAX)), 106);
    assert.equal(idx.lookup(timestampFromBigInt(MAX - 2n)), 104, "between 2^53+2 and 2^63-2: the 2^53+2 entry");
    assert.equal(idx.lookup(timestampFromBigInt(2n ** 53n + 1n)), 103);
    assert.equal(idx.lookup(2 ** 53), 101);
    assert.equal(idx.lookup(-7), 100, "a negative target: the base offset");
    idx.close();
    assert.deepEqual(timeIndexEntries(path), [[BigInt(T0), 1], [2n ** 53n + 1n, 3], [2n ** 53n + 2n, 4], [MAX - 1n, 5], [MAX, 6]]);
    const again = TimeIndex.open(platform, path, 100, 1 << 20, 1 << 30);
    try {
      assert.equal(again.damaged, false, "entries past 2^53 are valid, not damage");
      assert.equal(again.entryCount, 5);
      assert.equal(again.lastTimestamp, MAX);
      assert.equal(again.lookup(timestampFromBigInt(MAX - 1n)), 105);
    } finally {
      again.close();
    }
    // A file starting with a negative entry (never written: damage) is cut there.
    const bad = new Uint8Array(24);
    const dv = new DataView(bad.buffer);
    dv.setBigInt64(0, -5n);
    dv.setInt32(8, 0);
    dv.setBigInt64(12, BigInt(T0));
    dv.setInt32(20, 1);
    const badPath = `${dir}/${segmentFileName(200, ".timeindex")}`;
    nodeFs.writeFileSync(badPath, bad);
    const damaged = TimeIndex.open(platform, badPath, 200, 1 << 20, 1 << 30);
    try {
      assert.equal(damaged.damaged, true);
      assert.equal(damaged.entryCount, 0);
    } finally {
      damaged.close();
    }
  });
});

test("log: a 2^63-1 batch, then more: appends, SIGTERM-like close, reopen, unclean reopen; ListOffsets answers exactly", async () => {
  await withTempDir((dir) => {
    let log = Log.open(platform, dir, "t", 0, config(), silentLogger);
    const stamps = [BigInt(T0), MAX, BigInt(T0 + 1), -5n, MIN, 2n ** 53n + 3n, BigInt(T0 + 2)];
    const expected: { offset: bigint; timestamp: bigint }[] = [];
    try {
      for (let round = 0; round < 6; round++) {
        for (const ts of stamps) expected.push({ offset: BigInt(appendAt(log, ts)), timestamp: ts });
      }
      assert.ok(log.segmentCount > 2, "several segments (rolls with a 2^63-1 max)");
    } finally {
      log.close();
    }
    const check = (l: Log, what: string) => {
      assert.deepEqual(readAll(l).map((r) => ({ offset: r.offset, timestamp: r.timestamp })), expected, `${what}: every record back`);
      // ListOffsets: the first record with timestamp >= target.
      const first = (target: bigint) => expected.find((e) => e.timestamp >= target);
      for (const target of [MAX, MAX - 1n, 2n ** 53n + 3n, 2n ** 53n, BigInt(T0 + 1), BigInt(T0), 0n]) {
        const found = l.offsetForTimestamp(timestampFromBigInt(target));
        const want = first(target)!;
        assert.ok(found !== null, `${what}: found >= ${target}`);
        assert.equal(BigInt(found.offset), want.offset, `${what}: offset for ${target}`);
        assert.equal(BigInt(found.timestamp), want.timestamp, `${what}: timestamp for ${target}`);
      }
      const max = l.maxTimestampOffset();
      assert.ok(max !== null);
      assert.equal(BigInt(max.timestamp), MAX);
      assert.equal(BigInt(max.offset), 1n, `${what}: the first record carrying 2^63-1`);
      // More appends after the reopen keep working.
      appendAt(l, MAX);
      appendAt(l, BigInt(T0 + 3));
      expected.push({ offset: BigInt(l.logEndOffset - 2), timestamp: MAX }, { offset: BigInt(l.logEndOffset - 1), timestamp: BigInt(T0 + 3) });
    };
    log = Log.open(platform, dir, "t", 0, config(), silentLogger);
    try {
      check(log, "clean reopen");
    } finally {
      log.close();
    }
    // kill -9 stand-in: every segment recovered from the log (indexes rebuilt), then removed
    // indexes as a second variant.
    log = Log.open(platform, dir, "t", 0, config(), silentLogger, unclean);
    try {
      check(log, "unclean reopen");
    } finally {
      log.close();
    }
    for (const n of nodeFs.readdirSync(dir)) if (n.endsWith(".timeindex") || n.endsWith(".index")) nodeFs.rmSync(`${dir}/${n}`);
    log = Log.open(platform, dir, "t", 0, config(), silentLogger, unclean);
    try {
      check(log, "reopen without indexes");
    } finally {
      log.close();
    }
    // Each closed segment's time index ends with its max timestamp, exactly.
    const bases = nodeFs.readdirSync(dir).filter((n) => n.endsWith(".timeindex")).sort();
    assert.ok(bases.some((n) => timeIndexEntries(`${dir}/${n}`).some(([ts]) => ts === MAX)), "2^63-1 is in a time index");
  });
});

test("segment: a small batch stamped 2^63-1 alone (no index point) survives an unclean stop (recovery's closing entry)", async () => {
  await withTempDir((dir) => {
    const seg = LogSegment.create(platform, dir, 0, { indexIntervalBytes: 4096, segmentIndexBytes: 1 << 20 });
    const batch = buildBatch([{ value: "x" }], { baseTimestamp: MAX });
    seg.append(batch, 0, 0);
    assert.equal(seg.maxTimestampMs, MAX);
    seg.closeHandlers(); // no closing entry written: as after kill -9
    const { segment } = LogSegment.open(platform, dir, 0, { indexIntervalBytes: 4096, segmentIndexBytes: 1 << 20 }, true);
    try {
      assert.equal(segment.recover().truncatedBytes, 0);
      assert.equal(segment.maxTimestampMs, MAX);
      assert.deepEqual(segment.findOffsetByTimestamp(timestampFromBigInt(MAX)), { timestamp: MAX, offset: 0 });
    } finally {
      segment.close();
    }
    assert.deepEqual(timeIndexEntries(`${dir}/${segmentFileName(0, ".timeindex")}`), [[MAX, 0]]);
    // And a clean open after that.
    const { segment: s2 } = LogSegment.open(platform, dir, 0, { indexIntervalBytes: 4096, segmentIndexBytes: 1 << 20 });
    try {
      assert.equal(s2.maxTimestampMs, MAX);
    } finally {
      s2.close();
    }
  });
});

test("retention: a segment stamped 2^63-1 is never old (Kafka's rule); one with only negative timestamps goes by its file time", async () => {
  await withTempDir(async (dir) => {
    const log = Log.open(platform, dir, "t", 0, config({ segmentBytes: 300, retentionMs: 60_000, fileDeleteDelayMs: 60_000 }), silentLogger);
    try {
      appendAt(log, MAX, 200); // segment 0
      appendAt(log, -5n, 200); // segment 1: no usable timestamp
      appendAt(log, MIN, 200); // segment 2
      appendAt(log, BigInt(T0), 200); // segment 3
      appendAt(log, BigInt(T0), 200); // active
      assert.equal(log.segmentCount, 5);
      const now = Date.now();
      assert.equal(log.deleteOldSegments(now), 0, "segment 0 (2^63-1) blocks time retention, as in Kafka");
      // Far in the future: segments 1 and 2 (file time) and 3 (T0) are old, but deletion stops at
      // the first young segment, the 2^63-1 one.
      assert.equal(log.deleteOldSegments(now + 10 * 365 * 86_400_000), 0);
      assert.equal(log.logStartOffset, 0);
    } finally {
      log.close();
    }
    const log2 = Log.open(platform, `${dir}/b`, "t", 1, config({ segmentBytes: 300, retentionMs: 60_000, fileDeleteDelayMs: 60_000 }), silentLogger);
    try {
      appendAt(log2, -5n, 200);
      appendAt(log2, MIN, 200);
      appendAt(log2, MAX, 200);
      appendAt(log2, BigInt(T0), 200);
      assert.equal(log2.deleteOldSegments(Date.now()), 0, "segments with negative timestamps go by their file's time: young");
      assert.equal(log2.deleteOldSegments(Date.now() + 120_000), 2, "then old: deleted up to the 2^63-1 segment");
      assert.equal(log2.logStartOffset, 2);
    } finally {
      log2.close();
    }
  });
});

test("cleaner: compacts batches stamped 2^63-1, negative and far apart, keeping every timestamp exactly; tombstones get a horizon", async () => {
  await withTempDir(async (dir) => {
    const cfg = config({ cleanupPolicy: "compact", segmentBytes: 1 << 20, minCleanableDirtyRatio: 0.01, deleteRetentionMs: 2 ** 62 });
    const log = Log.open(platform, `${dir}/t-0`, "t", 0, cfg, silentLogger);
    try {
      const add = (records: { key: string; value: string | null; timestampDelta?: number }[], base: bigint) => {
        log.appendAsLeader(buildBatch(records, { baseTimestamp: base }), records.length, 0);
        log.updateHighWatermark(log.logEndOffset);
      };
      add([{ key: "a", value: "a1" }, { key: "b", value: "b1" }], MAX);
      // Records spanning the whole range in one batch: deltas that wrap int64 when rebuilt.
      add([{ key: "a", value: "a2" }, { key: "c", value: null }, { key: "d", value: "d1" }], MIN);
      add([{ key: "e", value: "e1" }, { key: "e", value: "e2" }], -5n);
      log.roll();
      add([{ key: "z", value: "active" }], BigInt(T0));
      const cleaner = new LogCleaner(platform, [dir], () => [log], { ioBufferBytes: 4096 }, silentLogger);
      const result = await cleaner.cleanLog(log, T0);
      assert.ok(result !== null, "cleaned");
      const recs = readAll(log);
      assert.deepEqual(
        recs.map((r) => [Number(r.offset), r.timestamp, r.value]),
        [[1, MAX, "b1"], [2, MIN, "a2"], [3, MIN, null], [4, MIN, "d1"], [6, -5n, "e2"], [7, BigInt(T0), "active"]],
      );
      // The tombstone's horizon is T0 + 2^62 (no wrap), and the log reopens cleanly.
      const bytes = new Uint8Array(nodeFs.readFileSync(`${dir}/t-0/${segmentFileName(0, ".log")}`));
      let pos = 0;
      for (const b of parseBatches(bytes)) {
        if (Number(b.baseOffset) === 2) {
          assert.ok((b.attributes & 0x40) !== 0, "the tombstone's batch has a delete horizon");
          assert.equal(new DataView(bytes.buffer, bytes.byteOffset + pos).getBigInt64(27), BigInt(T0) + 2n ** 62n);
        }
        pos += b.sizeBytes;
      }
    } finally {
      log.close();
    }
    const again = Log.open(platform, `${dir}/t-0`, "t", 0, cfg, silentLogger, unclean);
    try {
      assert.equal(BigInt(again.maxTimestampOffset()!.timestamp), MAX);
    } finally {
      again.close();
    }
  });
});

/** The batch with every record's offset delta set to 0 (a malformed batch a client could send). */
function zeroOffsetDeltas(batch: Uint8Array): Uint8Array {
  const out = batch.slice();
  const dv = new DataView(out.buffer);
  let pos = 61;
  for (let i = 0; i < dv.getInt32(57); i++) {
    const len = out[pos] >> 1; // one-byte zigzag varints: short test records, deltas < 64
    out[pos + 3] = 0; // length · attributes · timestampDelta (0) · offsetDelta
    pos += 1 + len;
  }
  dv.setUint32(17, crc32c(out, 21, out.length));
  return out;
}

test("cleaner: a stored batch whose records' offset deltas do not increase is kept as it is, never rebuilt (no failed pass)", async () => {
  await withTempDir(async (dir) => {
    const cfg = config({ cleanupPolicy: "compact", segmentBytes: 1 << 20, minCleanableDirtyRatio: 0.01 });
    const log = Log.open(platform, `${dir}/t-0`, "t", 0, cfg, silentLogger);
    try {
      const add = (batch: Uint8Array, n: number) => {
        log.appendAsLeader(batch, n, 0);
        log.updateHighWatermark(log.logEndOffset);
      };
      add(buildBatch([{ key: "k", value: "old" }]), 1);
      const bad = zeroOffsetDeltas(buildBatch([{ key: "k", value: "b0" }, { key: "y", value: "b1" }, { key: "z", value: "b2" }]));
      add(bad, 3);
      add(buildBatch([{ key: "k", value: "new" }]), 1);
      log.roll();
      add(buildBatch([{ key: "a", value: "active" }]), 1);
      const cleaner = new LogCleaner(platform, [dir], () => [log], { ioBufferBytes: 4096 }, silentLogger);
      const result = await cleaner.cleanLog(log, T0);
      assert.ok(result !== null, "the pass completes");
      assert.equal(result.unreadableBatches, 1);
      const stored = log.read(1, 1 << 20, true).records;
      const dv = new DataView(stored.buffer, stored.byteOffset);
      assert.equal(Number(dv.getBigInt64(0)), 1, "the malformed batch is still at offset 1");
      assert.deepEqual(stored.subarray(8 + 4 + 4, dv.getInt32(8) + 12), bad.subarray(16), "byte for byte (after the broker-assigned fields)");
      assert.deepEqual(readAll(log).map((r) => r.value).slice(-2), ["new", "active"]);
      assert.ok(!readAll(log).some((r) => r.value === "old"), "the older record of k is gone");
    } finally {
      log.close();
    }
  });
});

test("segment: a time index naming offsets past the log's end (the log lost whole batches) is rebuilt at open; appends go on", async () => {
  await withTempDir((dir) => {
    const cfg = { indexIntervalBytes: 1, segmentIndexBytes: 1 << 20 };
    const seg = LogSegment.create(platform, dir, 0, cfg);
    const sizes: number[] = [];
    for (let i = 0; i < 4; i++) {
      const b = buildBatch([{ value: `v${i}` }], { baseOffset: BigInt(i), baseTimestamp: i === 3 ? MAX : BigInt(T0 + i) });
      seg.append(b, i, i);
      sizes.push(b.length);
    }
    seg.close();
    // The last batch (2^63-1) is gone from the log, at a batch boundary; its time-index entry is not.
    nodeFs.truncateSync(`${dir}/${segmentFileName(0, ".log")}`, sizes[0] + sizes[1] + sizes[2]);
    const { segment } = LogSegment.open(platform, dir, 0, cfg);
    try {
      assert.equal(segment.nextOffset, 3);
      assert.equal(segment.maxTimestampMs, T0 + 2, "the max of the batches still there");
      segment.append(buildBatch([{ value: "again" }], { baseOffset: 3n, baseTimestamp: BigInt(T0 + 10) }), 3, 3);
      assert.equal(segment.maxTimestampMs, T0 + 10);
    } finally {
      segment.close();
    }
    assert.deepEqual(timeIndexEntries(`${dir}/${segmentFileName(0, ".timeindex")}`).map(([ts, rel]) => [Number(ts), rel]), [[T0, 0], [T0 + 1, 1], [T0 + 2, 2], [T0 + 10, 3]]);
  });
});
