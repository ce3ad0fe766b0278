// LogSegment on real files: appends and reads by offset, the sparse index it keeps, maxBytes
// boundaries of reads, reopening, and recovery of a torn tail (garbage, half a batch, zeros, a
// garbled last batch) and of a missing or damaged .index.
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { test } from "node:test";
import { logConfigDefaults } from "../../src/log/log_config.ts";
import { LogSegment, segmentFileName, type SegmentConfig, wholeBatchesLength } from "../../src/log/segment.ts";
import { segmentRelativeOffsetMax } from "../../src/util/limits.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Platform } from "../../src/platform/types.ts";
import { buildBatch, concatBytes, parseBatches, text, valueRecords } from "../helpers/record_batch.ts";
import { withTempDir } from "../helpers/temp_dir.ts";

const platform: Platform = await loadPlatform();

const config = (indexIntervalBytes = 4096, segmentIndexBytes = 10 * 1024 * 1024): SegmentConfig => ({ indexIntervalBytes, segmentIndexBytes });

interface Appended {
  position: number;
  size: number;
  baseOffset: number;
  lastOffset: number;
  bytes: Uint8Array;
}

/** Appends `counts.length` batches (counts[i] records each, values padded) from `firstOffset`. */
function appendBatches(seg: LogSegment, counts: number[], firstOffset = seg.nextOffset, valueBytes = 20): Appended[] {
  const out: Appended[] = [];
  let next = firstOffset;
  for (const n of counts) {
    const bytes = buildBatch(valueRecords(n, `o${next}-`, valueBytes), { baseOffset: BigInt(next), partitionLeaderEpoch: 0 });
    const position = seg.sizeBytes;
    seg.append(bytes, next, next + n - 1);
    out.push({ position, size: bytes.length, baseOffset: next, lastOffset: next + n - 1, bytes });
    next += n;
  }
  return out;
}

const logPath = (dir: string, base: number) => `${dir}/${segmentFileName(base, ".log")}`;
const indexPath = (dir: string, base: number) => `${dir}/${segmentFileName(base, ".index")}`;

/** Every offset finds the batch holding it, and a read from there starts with that batch. */
function assertEveryOffsetFound(seg: LogSegment, batches: Appended[]): void {
  for (const b of batches) {
    for (let o = b.baseOffset; o <= b.lastOffset; o++) {
      assert.equal(seg.positionOf(o), b.position, `offset ${o} is in the batch at ${b.position}`);
      const got = seg.read(seg.positionOf(o), b.size, false);
      assert.deepEqual(got, b.bytes, `offset ${o}: the read returns its batch`);
    }
  }
  assert.equal(seg.positionOf(batches[batches.length - 1].lastOffset + 1), -1, "nothing past the last offset");
}

test("segment: file name is the 20-digit base offset", () => {
  assert.equal(segmentFileName(0, ".log"), "00000000000000000000.log");
  assert.equal(segmentFileName(1234567, ".index"), "00000000000001234567.index");
});

test("segment: every offset of a multi-batch segment finds its batch; reads return the stored bytes", async () => {
  await withTempDir((dir) => {
    const seg = LogSegment.create(platform, dir, 100, config(256));
    try {
      assert.equal(seg.nextOffset, 100);
      assert.equal(seg.positionOf(100), -1, "empty segment has nothing");
      assert.deepEqual(seg.read(0, 1 << 20, true), new Uint8Array(0));
      const batches = appendBatches(seg, [1, 5, 2, 1, 7, 3, 1, 1, 10, 4]);
      assert.equal(seg.nextOffset, 135);
      assert.equal(seg.sizeBytes, batches.reduce((n, b) => n + b.size, 0));
      assertEveryOffsetFound(seg, batches);
      // Offsets below the base: the first batch.
      assert.equal(seg.positionOf(0), 0);
      // The whole segment in one read is every batch, as appended.
      assert.deepEqual(seg.read(0, 1 << 20, false), concatBytes(...batches.map((b) => b.bytes)));
      assert.equal(nodeFs.statSync(logPath(dir, 100)).size, seg.sizeBytes);
    } finally {
      seg.close();
    }
  });
});

test("segment: an index entry is added once more than index.interval.bytes were appended", async () => {
  await withTempDir((dir) => {
    const interval = 500;
    const seg = LogSegment.create(platform, dir, 0, config(interval));
    try {
      const counts = Array.from({ length: 60 }, (_, i) => 1 + (i % 4));
      const batches = appendBatches(seg, counts, 0, 30);
      const maxBatch = Math.max(...batches.map((b) => b.size));
      // The index file, read raw: big-endian (relative offset, position) pairs. Entries are
      // written in groups; flush() writes those still buffered.
      seg.flush();
      const raw = nodeFs.readFileSync(indexPath(dir, 0));
      assert.equal(raw.length, seg.index.entryCount * 8);
      assert.ok(seg.index.entryCount >= 3, `entries: ${seg.index.entryCount}`);
      const dv = new DataView(raw.buffer, raw.byteOffset, raw.length);
      let prevPos = 0;
      let prevEnd = 0;
      for (let i = 0; i < raw.length; i += 8) {
        const rel = dv.getInt32(i);
        const pos = dv.getInt32(i + 4);
        const b = batches.find((x) => x.position === pos);
        assert.ok(b !== undefined, `entry ${i / 8} points at a batch start (${pos})`);
        assert.equal(rel, b.lastOffset, "the entry holds that batch's last offset (relative)");
        // Not more often than every interval bytes, and not much less often.
        const end = pos + b.size;
        const since = end - prevEnd;
        assert.ok(since > interval, `entry ${i / 8}: ${since} bytes since the previous one`);
        assert.ok(since <= interval + maxBatch, `entry ${i / 8}: ${since} bytes since the previous one`);
        assert.ok(i === 0 || pos > prevPos);
        prevPos = pos;
        prevEnd = end;
      }
      assertEveryOffsetFound(seg, batches);
    } finally {
      seg.close();
    }
  });
});

test("segment: index lookups land at or before the batch holding the target, never after it", async () => {
  await withTempDir((dir) => {
    const seg = LogSegment.create(platform, dir, 1000, config(0)); // an entry for every append
    try {
      const batches = appendBatches(seg, [3, 1, 4, 1, 5, 9, 2, 6]);
      assert.equal(seg.index.entryCount, batches.length);
      for (const b of batches) {
        for (let o = b.baseOffset; o <= b.lastOffset; o++) {
          const p = seg.index.lookup(o);
          assert.ok(p <= b.position, `lookup(${o}) = ${p} is not past the batch at ${b.position}`);
          // It is the start of the latest batch whose last offset is <= o.
          const expected = [...batches].reverse().find((x) => x.lastOffset <= o)?.position ?? 0;
          assert.equal(p, expected, `lookup(${o})`);
        }
      }
      assert.equal(seg.index.lookup(0), 0, "below the base offset");
      assert.equal(seg.index.lookup(1_000_000), batches[batches.length - 1].position);
    } finally {
      seg.close();
    }
  });
});

test("segment: reads stop at maxBytes on whole batches; minOneBatch returns a whole batch bigger than maxBytes", async () => {
  await withTempDir((dir) => {
    const seg = LogSegment.create(platform, dir, 0, config());
    try {
      const batches = appendBatches(seg, [2, 3, 1, 4], 0, 50);
      const [a, b, c] = batches;
      const sizes = (bytes: Uint8Array) => parseBatches(bytes).map((x) => x.sizeBytes);
      assert.deepEqual(sizes(seg.read(0, a.size + b.size, false)), [a.size, b.size], "exactly two batches");
      assert.deepEqual(sizes(seg.read(0, a.size + b.size - 1, false)), [a.size], "one byte short: one batch");
      assert.deepEqual(sizes(seg.read(0, a.size + b.size + c.size - 1, true)), [a.size, b.size], "minOneBatch does not add a partial one");
      assert.deepEqual(seg.read(0, a.size - 1, false), new Uint8Array(0), "no partial batch");
      assert.deepEqual(seg.read(0, 0, false), new Uint8Array(0));
      assert.deepEqual(seg.read(0, a.size - 1, true), a.bytes, "minOneBatch: the whole first batch");
      assert.deepEqual(seg.read(0, 1, true), a.bytes);
      assert.deepEqual(seg.read(b.position, 0, true), b.bytes, "from the middle, too");
      assert.deepEqual(seg.read(seg.sizeBytes, 1 << 20, true), new Uint8Array(0), "at the end: nothing");
      assert.equal(wholeBatchesLength(seg.read(0, 1 << 20, false), seg.sizeBytes), seg.sizeBytes);
    } finally {
      seg.close();
    }
  });
});

test("segment: reopening after close restores size, next offset and index", async () => {
  await withTempDir((dir) => {
    let seg = LogSegment.create(platform, dir, 50, config(200));
    const batches = appendBatches(seg, [4, 4, 4, 4, 4, 4, 4, 4]);
    const entries = seg.index.entryCount;
    const size = seg.sizeBytes;
    seg.flush();
    seg.close();
    const opened = LogSegment.open(platform, dir, 50, config(200));
    seg = opened.segment;
    try {
      assert.equal(opened.truncatedBytes, 0);
      assert.equal(seg.sizeBytes, size);
      assert.equal(seg.nextOffset, 82);
      assert.equal(seg.index.entryCount, entries);
      assertEveryOffsetFound(seg, batches);
      // Appends continue where the segment ended.
      const more = appendBatches(seg, [2]);
      assert.equal(more[0].position, size);
      assert.equal(seg.nextOffset, 84);
      assertEveryOffsetFound(seg, [...batches, ...more]);
    } finally {
      seg.close();
    }
  });
});

/** Appends junk to the .log file behind the segment's back, then reopens and checks recovery. */
async function tornTail(junk: (lastBatch: Uint8Array) => Uint8Array, what: string): Promise<void> {
  await withTempDir((dir) => {
    const seg = LogSegment.create(platform, dir, 0, config(100));
    const batches = appendBatches(seg, [3, 1, 2, 5]);
    const size = seg.sizeBytes;
    seg.close();
    const extra = junk(batches[batches.length - 1].bytes);
    nodeFs.appendFileSync(logPath(dir, 0), extra);
    const { segment, truncatedBytes } = LogSegment.open(platform, dir, 0, config(100));
    try {
      assert.equal(truncatedBytes, extra.length, `${what}: the junk is cut off`);
      assert.equal(segment.sizeBytes, size, what);
      assert.equal(nodeFs.statSync(logPath(dir, 0)).size, size, `${what}: the file is truncated`);
      assert.equal(segment.nextOffset, 11, what);
      assertEveryOffsetFound(segment, batches);
      const more = appendBatches(segment, [2]);
      assert.equal(more[0].baseOffset, 11);
      assert.equal(more[0].position, size);
      assertEveryOffsetFound(segment, [...batches, ...more]);
    } finally {
      segment.close();
    }
  });
}

test("segment: torn tail of garbage is truncated at reopen", async () => {
  await tornTail(() => new TextEncoder().encode("this is not a record batch, not at all, but it is long enough to hold a header"), "garbage");
});

test("segment: torn tail of half a batch is truncated at reopen", async () => {
  await tornTail((last) => {
    const b = buildBatch(valueRecords(4, "torn", 40), { baseOffset: 11n });
    return b.subarray(0, Math.floor(b.length / 2) + 0 * last.length);
  }, "half a batch");
  // Only the header, and only the first few bytes of one.
  await tornTail(() => buildBatch(valueRecords(4), { baseOffset: 11n }).subarray(0, 61), "header only");
  await tornTail(() => buildBatch(valueRecords(4), { baseOffset: 11n }).subarray(0, 7), "7 bytes");
});

test("segment: torn tail of zeros (preallocated or unwritten pages) is truncated at reopen", async () => {
  await tornTail(() => new Uint8Array(4096), "4 KiB of zeros");
  await tornTail(() => new Uint8Array(13), "13 zeros");
});

test("segment: a tail batch repeating an earlier offset (a replayed write) is truncated at reopen", async () => {
  await tornTail((last) => last, "the last batch again");
});

test("segment: a last batch whose bytes are garbled inside (CRC mismatch) is cut off at reopen", async () => {
  await withTempDir((dir) => {
    const seg = LogSegment.create(platform, dir, 0, config(1 << 20));
    const batches = appendBatches(seg, [3, 2, 4], 0, 100);
    seg.close();
    // The length and header made it to disk; a page in the middle of the records did not.
    const last = batches[2];
    const fd = nodeFs.openSync(logPath(dir, 0), "r+");
    nodeFs.writeSync(fd, new Uint8Array(64), 0, 64, last.position + 100);
    nodeFs.closeSync(fd);
    const { segment, truncatedBytes } = LogSegment.open(platform, dir, 0, config(1 << 20));
    try {
      assert.equal(truncatedBytes, last.size, "the batch failing its CRC is cut off");
      assert.equal(segment.nextOffset, 5);
      assert.equal(segment.sizeBytes, last.position);
    } finally {
      segment.close();
    }
  });
});

test("segment: a missing .index is tolerated: recovery walks the log and lookups still find every offset", async () => {
  await withTempDir((dir) => {
    const seg = LogSegment.create(platform, dir, 0, config(100));
    const batches = appendBatches(seg, [2, 2, 2, 2, 2, 2, 2, 2, 2, 2]);
    assert.ok(seg.index.entryCount > 0);
    seg.close();
    nodeFs.rmSync(indexPath(dir, 0));
    const { segment, truncatedBytes } = LogSegment.open(platform, dir, 0, config(100));
    try {
      assert.equal(truncatedBytes, 0);
      assert.equal(segment.nextOffset, 20);
      assert.ok(nodeFs.existsSync(indexPath(dir, 0)), "the index file is there again");
      assertEveryOffsetFound(segment, batches);
      // New entries are added as appends continue.
      const more = appendBatches(segment, [2, 2, 2, 2, 2]);
      assert.ok(segment.index.entryCount > 0);
      assertEveryOffsetFound(segment, [...batches, ...more]);
    } finally {
      segment.close();
    }
  });
});

test("segment: a torn .index (partial entry, entries past the log end) is cut back at reopen", async () => {
  await withTempDir((dir) => {
    const seg = LogSegment.create(platform, dir, 0, config(0));
    const batches = appendBatches(seg, [1, 1, 1, 1, 1]);
    const entries = seg.index.entryCount;
    seg.close();
    // An entry for a batch that never reached the .log, then half an entry.
    const extra = new Uint8Array(8 + 3);
    new DataView(extra.buffer).setInt32(0, 7);
    new DataView(extra.buffer).setInt32(4, batches[4].position + batches[4].size);
    nodeFs.appendFileSync(indexPath(dir, 0), extra);
    const { segment, truncatedBytes } = LogSegment.open(platform, dir, 0, config(0));
    try {
      assert.equal(truncatedBytes, 0);
      assert.equal(segment.index.entryCount, entries);
      assert.equal(nodeFs.statSync(indexPath(dir, 0)).size, entries * 8);
      assert.equal(segment.nextOffset, 5);
      assertEveryOffsetFound(segment, batches);
    } finally {
      segment.close();
    }
  });
});

test("segment: torn tail under the last index entry: the index is cut back with the log", async () => {
  await withTempDir((dir) => {
    const seg = LogSegment.create(platform, dir, 0, config(0));
    const batches = appendBatches(seg, [2, 2, 2, 2]);
    seg.close();
    // The last batch loses its second half; the index still has an entry pointing at it.
    const last = batches[3];
    nodeFs.truncateSync(logPath(dir, 0), last.position + Math.floor(last.size / 2));
    const { segment, truncatedBytes } = LogSegment.open(platform, dir, 0, config(0));
    try {
      assert.equal(truncatedBytes, Math.floor(last.size / 2));
      assert.equal(segment.nextOffset, 6);
      assert.equal(segment.index.entryCount, 3, "the entry for the lost batch is gone");
      assert.equal(nodeFs.statSync(indexPath(dir, 0)).size, 24);
      assertEveryOffsetFound(segment, batches.slice(0, 3));
      const more = appendBatches(segment, [3]);
      assert.equal(more[0].baseOffset, 6);
      assertEveryOffsetFound(segment, [...batches.slice(0, 3), ...more]);
    } finally {
      segment.close();
    }
  });
});

test("segment: timestamps: findOffsetByTimestamp and maxTimestampAndOffset answer with the record", async () => {
  await withTempDir((dir) => {
    const seg = LogSegment.create(platform, dir, 0, config());
    try {
      // Batch i: offsets 2i (timestamp 1000 + 100i) and 2i + 1 (10 ms later).
      for (let i = 0; i < 4; i++) {
        const bytes = buildBatch([{ value: "a" }, { value: "b", timestampDelta: 10 }], {
          baseOffset: BigInt(i * 2),
          baseTimestamp: 1000n + BigInt(i) * 100n,
        });
        seg.append(bytes, i * 2, i * 2 + 1);
      }
      assert.deepEqual(seg.findOffsetByTimestamp(0), { offset: 0, timestamp: 1000 });
      assert.deepEqual(seg.findOffsetByTimestamp(1001), { offset: 1, timestamp: 1010 });
      assert.deepEqual(seg.findOffsetByTimestamp(1010), { offset: 1, timestamp: 1010 });
      assert.deepEqual(seg.findOffsetByTimestamp(1011), { offset: 2, timestamp: 1100 });
      assert.deepEqual(seg.findOffsetByTimestamp(1310), { offset: 7, timestamp: 1310 });
      assert.equal(seg.findOffsetByTimestamp(1311), null);
      // A starting offset (the log start offset) skips the records below it.
      assert.deepEqual(seg.findOffsetByTimestamp(0, 3), { offset: 3, timestamp: 1110 });
      assert.deepEqual(seg.maxTimestampAndOffset(), { offset: 7, timestamp: 1310 });
      assert.equal(seg.maxTimestampMs, 1310);
      assert.equal(seg.largestTimestampMs(), 1310);
    } finally {
      seg.close();
    }
  });
});

test("segment: a batch above the 8 MiB read chunk that fits maxBytes is returned without minOneBatch", async () => {
  await withTempDir((dir) => {
    const seg = LogSegment.create(platform, dir, 0, config());
    try {
      const big = buildBatch(valueRecords(1, "big", 9 << 20), { baseOffset: 0n });
      seg.append(big, 0, 0);
      const small = buildBatch(valueRecords(1), { baseOffset: 1n });
      seg.append(small, 1, 1);
      assert.equal(seg.read(0, 20 << 20, false).length, big.length, "the whole big batch fits maxBytes");
      assert.equal(seg.read(0, big.length - 1, false).length, 0, "but not when it does not fit");
      assert.equal(seg.read(0, 1, true).length, big.length);
    } finally {
      seg.close();
    }
  });
});

test("segment: shouldRoll (Kafka's LogSegment.shouldRoll): full, or past the int32 relative offset; an empty segment takes any append it can index", async () => {
  await withTempDir((dir) => {
    const seg = LogSegment.create(platform, dir, 100, config());
    const rollConfig = { ...logConfigDefaults, segmentBytes: 1000, segmentMs: 1e15 };
    const incoming = (bytes: number, lastOffset: number) => ({ bytes, lastOffset, maxTimestamp: Date.now() });
    try {
      assert.equal(seg.shouldRoll(rollConfig, incoming(5000, 200), Date.now()), false, "empty: takes even an oversized batch");
      assert.equal(seg.shouldRoll(rollConfig, incoming(10, 100 + segmentRelativeOffsetMax + 1), Date.now()), true, "empty, offset overflow");
      const [a] = appendBatches(seg, [2]);
      assert.equal(seg.shouldRoll(rollConfig, incoming(1000 - a.size, 110), Date.now()), false, "fits segment.bytes exactly");
      assert.equal(seg.shouldRoll(rollConfig, incoming(1001 - a.size, 110), Date.now()), true, "one byte over segment.bytes");
      assert.equal(seg.shouldRoll(rollConfig, incoming(10, 100 + segmentRelativeOffsetMax), Date.now()), false, "last relative offset that fits");
      assert.equal(seg.shouldRoll(rollConfig, incoming(10, 101 + segmentRelativeOffsetMax), Date.now()), true, "offset overflow");
    } finally {
      seg.close();
    }
  });
});
