// Log (one partition) on real files: offsets assigned on append, every offset readable across
// many segments, rolls at segment.bytes and at a full index, read limits, reopening, recovery of
// a torn active segment and of missing indexes, and OFFSET_OUT_OF_RANGE outside the log.
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { test } from "node:test";
import { Log, type LogConfig, segmentFileName } from "../../src/log/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Platform } from "../../src/platform/types.ts";
import { ErrorCode, KafkaError } from "../../src/util/errors.ts";
import { type LogFields, type Logger, silentLogger } from "../../src/util/logger.ts";
import { buildBatch, concatBytes, type ParsedBatch, parseBatches, text, valueRecords } from "../helpers/record_batch.ts";
import { withTempDir } from "../helpers/temp_dir.ts";

const platform: Platform = await loadPlatform();

function logConfig(over: Partial<LogConfig> = {}): LogConfig {
  return { segmentBytes: 1 << 30, segmentMs: 7 * 24 * 3_600_000, indexIntervalBytes: 4096, segmentIndexBytes: 10 << 20, ...over };
}

const openLog = (dir: string, config: LogConfig, logger: Logger = silentLogger) => Log.open(platform, dir, "t", 0, config, logger);

/** Appends one batch of n records (values `${prefix}${offset}`); returns its first offset. */
function appendRecords(log: Log, n: number, valueBytes = 20, epoch = 0, baseTimestamp?: number): number {
  const first = log.logEndOffset;
  // Client batches carry base offset 0; the log assigns the real one.
  const records = Array.from({ length: n }, (_, i) => ({ value: `v${first + i}`.padEnd(valueBytes, ".") }));
  const opts = baseTimestamp === undefined ? {} : { baseTimestamp: BigInt(baseTimestamp) };
  const info = log.appendAsLeader(buildBatch(records, opts), n, epoch);
  assert.equal(info.firstOffset, first);
  assert.equal(info.lastOffset, first + n - 1);
  return first;
}

function segmentBases(dir: string): number[] {
  return nodeFs.readdirSync(dir).filter((n) => n.endsWith(".log")).map((n) => Number(n.slice(0, 20))).sort((a, b) => a - b);
}

/** read(o) for every offset in [from, to): the first batch returned holds o. */
function assertEveryOffsetReadable(log: Log, from: number, to: number): void {
  for (let o = from; o < to; o++) {
    const r = log.read(o, 1, true);
    const batches = parseBatches(r.records);
    assert.ok(batches.length >= 1, `offset ${o}: a batch`);
    const b = batches[0];
    assert.ok(b.baseOffset <= BigInt(o) && BigInt(o) <= b.baseOffset + BigInt(b.lastOffsetDelta), `offset ${o} in batch ${b.baseOffset}+${b.lastOffsetDelta}`);
    const rec = b.records.find((x) => x.offset === BigInt(o));
    assert.equal(text(rec?.value ?? null)?.replace(/\.+$/, ""), `v${o}`, `offset ${o}: its record`);
    assert.ok(b.crcValid, `offset ${o}: CRC valid`);
  }
}

function allBatches(log: Log): ParsedBatch[] {
  const out: ParsedBatch[] = [];
  for (let o = log.logStartOffset; o < log.logEndOffset;) {
    const batches = parseBatches(log.read(o, 1 << 20, true).records);
    out.push(...batches);
    const last = batches[batches.length - 1];
    o = Number(last.baseOffset) + last.lastOffsetDelta + 1;
  }
  return out;
}

test("log: appends assign offsets from the log end offset and stamp the leader epoch, CRC still valid", async () => {
  await withTempDir((dir) => {
    const log = openLog(dir, logConfig());
    try {
      assert.equal(log.logEndOffset, 0);
      assert.equal(log.logStartOffset, 0);
      appendRecords(log, 3, 10, 7);
      appendRecords(log, 1, 10, 7);
      appendRecords(log, 5, 10, 9);
      assert.equal(log.logEndOffset, 9);
      const batches = allBatches(log);
      assert.deepEqual(batches.map((b) => [b.baseOffset, b.partitionLeaderEpoch, b.crcValid]), [
        [0n, 7, true],
        [3n, 7, true],
        [4n, 9, true],
      ]);
      // A produce request's record set may hold several batches: each gets its own base offset.
      const set = concatBytes(buildBatch(valueRecords(2)), buildBatch(valueRecords(3)));
      const info = log.appendAsLeader(set, 5, 9);
      assert.deepEqual([info.firstOffset, info.lastOffset], [9, 13]);
      assert.deepEqual(parseBatches(log.read(9, 1 << 20, false).records).map((b) => b.baseOffset), [9n, 11n]);
    } finally {
      log.close();
    }
  });
});

test("log: every offset of a many-segment log is found in the batch holding it", async () => {
  await withTempDir((dir) => {
    const log = openLog(dir, logConfig({ segmentBytes: 1500, indexIntervalBytes: 300 }));
    try {
      for (let i = 0; i < 120; i++) appendRecords(log, 1 + (i % 5), 30);
      const end = log.logEndOffset;
      assert.equal(end, 120 / 5 * 15);
      assert.ok(log.segmentCount > 10, `segments: ${log.segmentCount}`);
      assertEveryOffsetReadable(log, 0, end);
      // Files: one .log and one .index per segment, named by base offset; none above segment.bytes.
      const bases = segmentBases(dir);
      assert.equal(bases.length, log.segmentCount);
      for (const base of bases) {
        assert.ok(nodeFs.existsSync(`${dir}/${segmentFileName(base, ".index")}`));
        assert.ok(nodeFs.statSync(`${dir}/${segmentFileName(base, ".log")}`).size <= 1500);
      }
      // Each segment starts where the previous one ended.
      const batches = allBatches(log);
      assert.deepEqual(batches.map((b) => b.crcValid).filter((v) => !v), []);
      for (const base of bases) assert.ok(batches.some((b) => b.baseOffset === BigInt(base)), `segment ${base} starts a batch`);
    } finally {
      log.close();
    }
  });
});

test("log: a segment rolls when the next batch would pass segment.bytes", async () => {
  await withTempDir((dir) => {
    const size = buildBatch(valueRecords(2, "x", 40)).length;
    const log = openLog(dir, logConfig({ segmentBytes: size * 3 }));
    try {
      for (let i = 0; i < 10; i++) appendRecords(log, 2, 40);
      // Batches are all `size` bytes: exactly three fit a segment.
      assert.deepEqual(segmentBases(dir), [0, 6, 12, 18]);
      for (const base of [0, 6, 12]) assert.equal(nodeFs.statSync(`${dir}/${segmentFileName(base, ".log")}`).size, size * 3);
      // A batch larger than segment.bytes still goes in, alone in its segment.
      const big = buildBatch(valueRecords(1, "big", size * 4));
      const info = log.appendAsLeader(big, 1, 0);
      assert.equal(info.firstOffset, 20);
      assert.deepEqual(segmentBases(dir), [0, 6, 12, 18, 20]);
      appendRecords(log, 1);
      assert.deepEqual(segmentBases(dir), [0, 6, 12, 18, 20, 21]);
    } finally {
      log.close();
    }
  });
});

test("log: a segment rolls when its index is full", async () => {
  await withTempDir((dir) => {
    // index.interval.bytes 0: an entry per append; room for three offset-index entries per
    // segment (and two time-index entries, of which the same timestamp uses one).
    const log = openLog(dir, logConfig({ indexIntervalBytes: 0, segmentIndexBytes: 24 }));
    try {
      for (let i = 0; i < 7; i++) appendRecords(log, 1);
      assert.deepEqual(segmentBases(dir), [0, 3, 6]);
      assertEveryOffsetReadable(log, 0, 7);
    } finally {
      log.close();
    }
  });
});

test("log: reads return whole batches within maxBytes, or one whole batch bigger than it with minOneBatch", async () => {
  await withTempDir((dir) => {
    const log = openLog(dir, logConfig());
    try {
      for (let i = 0; i < 5; i++) appendRecords(log, 2, 100);
      const one = parseBatches(log.read(0, 1 << 20, false).records)[0].sizeBytes;
      const sizes = (o: number, max: number, minOne: boolean) => parseBatches(log.read(o, max, minOne).records).map((b) => Number(b.baseOffset));
      assert.deepEqual(sizes(0, one * 3, false), [0, 2, 4]);
      assert.deepEqual(sizes(0, one * 3 - 1, false), [0, 2]);
      assert.deepEqual(sizes(0, one - 1, false), []);
      assert.deepEqual(sizes(0, one - 1, true), [0]);
      assert.deepEqual(sizes(3, 1, true), [2], "an offset inside a batch returns that whole batch");
      assert.deepEqual(sizes(0, 1 << 20, false), [0, 2, 4, 6, 8]);
      // A batch far bigger than maxBytes still comes back whole with minOneBatch.
      log.appendAsLeader(buildBatch(valueRecords(1, "big", 100_000)), 1, 0);
      const big = log.read(10, 1000, true);
      assert.equal(parseBatches(big.records)[0].records[0].value?.length, 100_000);
      assert.equal(log.read(10, 1000, false).records.length, 0);
    } finally {
      log.close();
    }
  });
});

test("log: reads stop at the given max offset (the high watermark) on batch boundaries", async () => {
  await withTempDir((dir) => {
    const log = openLog(dir, logConfig());
    try {
      for (let i = 0; i < 4; i++) appendRecords(log, 3);
      const bases = (max: number) => parseBatches(log.read(0, 1 << 20, true, max).records).map((b) => Number(b.baseOffset));
      assert.deepEqual(bases(12), [0, 3, 6, 9]);
      assert.deepEqual(bases(9), [0, 3, 6]);
      assert.deepEqual(bases(7), [0, 3, 6], "a batch starting below the max offset is returned whole");
      assert.deepEqual(bases(6), [0, 3]);
    } finally {
      log.close();
    }
  });
});

test("log: OFFSET_OUT_OF_RANGE below the log start offset and above the log end offset", async () => {
  await withTempDir((dir) => {
    let log = openLog(dir, logConfig({ segmentBytes: 600 }));
    for (let i = 0; i < 20; i++) appendRecords(log, 2, 50);
    const end = log.logEndOffset;
    log.close();
    // Retention removed the oldest segment while the broker was down.
    const bases = segmentBases(dir);
    assert.ok(bases.length >= 3);
    nodeFs.rmSync(`${dir}/${segmentFileName(bases[0], ".log")}`);
    nodeFs.rmSync(`${dir}/${segmentFileName(bases[0], ".index")}`);
    log = openLog(dir, logConfig({ segmentBytes: 600 }));
    try {
      assert.equal(log.logStartOffset, bases[1]);
      assert.equal(log.logEndOffset, end);
      const oor = (o: number) =>
        assert.throws(() => log.read(o, 1 << 20, true), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.OFFSET_OUT_OF_RANGE, `offset ${o}`);
      oor(0);
      oor(bases[1] - 1);
      oor(end + 1);
      oor(end + 1000);
      oor(-1);
      assert.equal(log.read(end, 1 << 20, true).records.length, 0, "at the end: empty, no error");
      assert.equal(log.read(bases[1], 1 << 20, true).logStartOffset, bases[1]);
      assertEveryOffsetReadable(log, bases[1], end);
    } finally {
      log.close();
    }
  });
});

test("log: reopening after close restores the log end offset, start offset and every record", async () => {
  await withTempDir((dir) => {
    const config = logConfig({ segmentBytes: 1000, indexIntervalBytes: 200 });
    let log = openLog(dir, config);
    for (let i = 0; i < 40; i++) appendRecords(log, 1 + (i % 3), 30);
    const end = log.logEndOffset;
    const segments = log.segmentCount;
    const before = allBatches(log).map((b) => [b.baseOffset, b.sizeBytes]);
    log.flush();
    log.close();
    log = openLog(dir, config);
    try {
      assert.equal(log.logEndOffset, end);
      assert.equal(log.logStartOffset, 0);
      assert.equal(log.segmentCount, segments);
      assert.deepEqual(allBatches(log).map((b) => [b.baseOffset, b.sizeBytes]), before);
      assertEveryOffsetReadable(log, 0, end);
      assert.equal(appendRecords(log, 2), end, "appends continue at the log end offset");
      assertEveryOffsetReadable(log, 0, end + 2);
    } finally {
      log.close();
    }
    // An empty log reopens empty.
    const emptyDir = `${dir}/empty-0`;
    const empty = openLog(emptyDir, config);
    empty.close();
    const again = openLog(emptyDir, config);
    try {
      assert.equal(again.logEndOffset, 0);
      assert.equal(again.segmentCount, 1);
    } finally {
      again.close();
    }
  });
});

function capturingLogger(lines: { fields: LogFields; msg: string }[]): Logger {
  const l: Logger = {
    debug() {},
    info() {},
    warn(fields, msg) {
      lines.push({ fields, msg });
    },
    error(fields, msg) {
      lines.push({ fields, msg });
    },
    child() {
      return l;
    },
  };
  return l;
}

/** Writes junk at the end of the active segment's file, reopens, checks recovery. */
async function tornActiveSegment(junk: Uint8Array | ((activeSize: number) => number), what: string): Promise<void> {
  await withTempDir((dir) => {
    const config = logConfig({ segmentBytes: 800, indexIntervalBytes: 100 });
    let log = openLog(dir, config);
    for (let i = 0; i < 25; i++) appendRecords(log, 2, 25);
    let end = log.logEndOffset;
    log.close();
    const bases = segmentBases(dir);
    const active = `${dir}/${segmentFileName(bases[bases.length - 1], ".log")}`;
    const sizeBefore = nodeFs.statSync(active).size;
    if (junk instanceof Uint8Array) nodeFs.appendFileSync(active, junk);
    else {
      nodeFs.truncateSync(active, junk(sizeBefore));
      // Cutting into the last batch loses it: the end moves back by its two records.
      end -= 2;
    }
    const warnings: { fields: LogFields; msg: string }[] = [];
    log = openLog(dir, config, capturingLogger(warnings));
    try {
      assert.equal(log.logEndOffset, end, `${what}: log end offset`);
      assert.equal(warnings.length, 1, `${what}: one warning`);
      assert.match(warnings[0].msg, /torn tail/);
      assert.ok((warnings[0].fields.truncatedBytes as number) > 0);
      assertEveryOffsetReadable(log, 0, end);
      assert.equal(appendRecords(log, 3), end, `${what}: the next append gets the right offset`);
      assertEveryOffsetReadable(log, 0, end + 3);
    } finally {
      log.close();
    }
    // And it stays recovered: a third open finds nothing to cut.
    const quiet: { fields: LogFields; msg: string }[] = [];
    log = openLog(dir, config, capturingLogger(quiet));
    try {
      assert.deepEqual(quiet, []);
      assert.equal(log.logEndOffset, end + 3);
    } finally {
      log.close();
    }
  });
}

test("log: torn tail of garbage in the active segment is cut at reopen", async () => {
  await tornActiveSegment(new TextEncoder().encode("GARBAGE".repeat(40)), "garbage");
});

test("log: torn tail of half a batch in the active segment is cut at reopen", async () => {
  await tornActiveSegment(buildBatch(valueRecords(5, "half", 30), { baseOffset: 50n }).subarray(0, 90), "half a batch");
  await tornActiveSegment((size) => size - 10, "the last batch cut short");
});

test("log: torn tail of zeros in the active segment is cut at reopen", async () => {
  await tornActiveSegment(new Uint8Array(8192), "zeros");
});

test("log: an active segment torn down to nothing keeps its base offset as the log end offset", async () => {
  await withTempDir((dir) => {
    const config = logConfig({ segmentBytes: 500 });
    let log = openLog(dir, config);
    for (let i = 0; i < 12; i++) appendRecords(log, 1, 100);
    log.close();
    const bases = segmentBases(dir);
    const activeBase = bases[bases.length - 1];
    assert.ok(activeBase > 0);
    nodeFs.writeFileSync(`${dir}/${segmentFileName(activeBase, ".log")}`, new Uint8Array(300)); // all zeros
    log = openLog(dir, config);
    try {
      assert.equal(log.logEndOffset, activeBase);
      assert.equal(appendRecords(log, 1), activeBase);
      assertEveryOffsetReadable(log, 0, activeBase + 1);
    } finally {
      log.close();
    }
  });
});

test("log: missing .index files are tolerated: reopen finds the end and every offset", async () => {
  await withTempDir((dir) => {
    const config = logConfig({ segmentBytes: 1200, indexIntervalBytes: 150 });
    let log = openLog(dir, config);
    for (let i = 0; i < 50; i++) appendRecords(log, 1 + (i % 4), 20);
    const end = log.logEndOffset;
    log.close();
    for (const n of nodeFs.readdirSync(dir)) if (n.endsWith(".index")) nodeFs.rmSync(`${dir}/${n}`);
    log = openLog(dir, config);
    try {
      assert.equal(log.logEndOffset, end);
      assertEveryOffsetReadable(log, 0, end);
      assert.equal(appendRecords(log, 2), end);
      assertEveryOffsetReadable(log, 0, end + 2);
    } finally {
      log.close();
    }
  });
});

test("log: offsetForTimestamp and maxTimestampOffset search across segments", async () => {
  await withTempDir((dir) => {
    const log = openLog(dir, logConfig({ segmentBytes: 300 }));
    try {
      const ts = [5000n, 1000n, 9000n, 3000n, 7000n];
      for (const t of ts) log.appendAsLeader(buildBatch(valueRecords(2, "t", 40), { baseTimestamp: t }), 2, 0);
      assert.ok(log.segmentCount > 1);
      assert.deepEqual(log.offsetForTimestamp(0), { offset: 0, timestamp: 5000 });
      assert.deepEqual(log.offsetForTimestamp(6000), { offset: 4, timestamp: 9000 });
      assert.equal(log.offsetForTimestamp(9001), null);
      // The first record carrying the max timestamp (Kafka 3.8): both records of the batch do.
      assert.deepEqual(log.maxTimestampOffset(), { offset: 4, timestamp: 9000 });
    } finally {
      log.close();
    }
  });
});

test("log: delete removes the partition directory", async () => {
  await withTempDir((dir) => {
    const logDir = `${dir}/t-0`;
    const log = openLog(logDir, logConfig());
    appendRecords(log, 3);
    log.delete();
    assert.equal(nodeFs.existsSync(logDir), false);
  });
});

test("log: record sets of several batches, indexed on every append, read back by every offset, also after reopen", async () => {
  await withTempDir((dir) => {
    const config = logConfig({ indexIntervalBytes: 0, segmentBytes: 2000 });
    let log = openLog(dir, config);
    const set = (first: number, sizes: number[]) => {
      let o = first;
      return concatBytes(...sizes.map((n) => buildBatch(Array.from({ length: n }, () => ({ value: `v${o++}` })))));
    };
    for (let i = 0; i < 30; i++) {
      const sizes = [1 + (i % 3), 2, 1 + (i % 2)];
      const n = sizes.reduce((a, b) => a + b, 0);
      const info = log.appendAsLeader(set(log.logEndOffset, sizes), n, 0);
      assert.equal(info.lastOffset - info.firstOffset + 1, n);
    }
    const end = log.logEndOffset;
    assertEveryOffsetReadable(log, 0, end);
    log.close();
    log = openLog(dir, config);
    try {
      assert.equal(log.logEndOffset, end);
      assertEveryOffsetReadable(log, 0, end);
    } finally {
      log.close();
    }
  });
});

test("log: a segment older than segment.ms rolls at the next append", async () => {
  await withTempDir((dir) => {
    let now = 1_000_000;
    const clock = { ...platform.clock, nowMs: () => now };
    const timed: Platform = { ...platform, clock };
    const log = Log.open(timed, dir, "t", 0, logConfig({ segmentMs: 60_000 }), silentLogger);
    try {
      appendRecords(log, 1, 20, 0, now);
      now += 60_000;
      appendRecords(log, 1, 20, 0, now);
      assert.deepEqual(segmentBases(dir), [0], "not older than segment.ms yet");
      now += 1;
      appendRecords(log, 1, 20, 0, now);
      assert.deepEqual(segmentBases(dir), [0, 2]);
      assertEveryOffsetReadable(log, 0, 3);
    } finally {
      log.close();
    }
  });
});

test("log: segment.jitter.ms rolls each segment up to that much early, one random draw per segment (Kafka's rollJitterMs)", async () => {
  await withTempDir((dir) => {
    let now = 1_000_000;
    // The random source answers 0x7fffffff, then 0x00000005: jitter = r % min(jitter, segment.ms).
    const draws = [[0x7f, 0xff, 0xff, 0xff], [0, 0, 0, 5]];
    let drawn = 0;
    const timed: Platform = {
      ...platform,
      clock: { ...platform.clock, nowMs: () => now },
      randomBytes: (out: Uint8Array) => out.set(draws[drawn++ % draws.length]),
    };
    const log = Log.open(timed, dir, "t", 0, logConfig({ segmentMs: 60_000, segmentJitterMs: 10_000 }), silentLogger);
    try {
      appendRecords(log, 1, 20, 0, now);
      // First segment: 0x7fffffff % 10000 = 3647 ms early, so it rolls past 60000 - 3647.
      now += 60_000 - 3_647;
      appendRecords(log, 1, 20, 0, now);
      assert.deepEqual(segmentBases(dir), [0], "not yet: exactly segment.ms - jitter");
      now += 1;
      appendRecords(log, 1, 20, 0, now);
      assert.deepEqual(segmentBases(dir), [0, 2]);
      // Second segment: 5 ms early; the draw is kept across appends.
      now += 60_000 - 5;
      appendRecords(log, 1, 20, 0, now);
      assert.deepEqual(segmentBases(dir), [0, 2]);
      assert.equal(drawn, 2, "one draw per segment, not per append");
      now += 1;
      appendRecords(log, 1, 20, 0, now);
      assert.deepEqual(segmentBases(dir), [0, 2, 4]);
      assertEveryOffsetReadable(log, 0, 5);
    } finally {
      log.close();
    }
  });
});

test("log: without segment.jitter.ms no random draw is made and the roll is at segment.ms", async () => {
  await withTempDir((dir) => {
    let now = 1_000_000;
    const timed: Platform = {
      ...platform,
      clock: { ...platform.clock, nowMs: () => now },
      randomBytes: () => assert.fail("no jitter, no draw"),
    };
    const log = Log.open(timed, dir, "t", 0, logConfig({ segmentMs: 60_000 }), silentLogger);
    try {
      appendRecords(log, 1, 20, 0, now);
      now += 60_000;
      appendRecords(log, 1, 20, 0, now);
      assert.deepEqual(segmentBases(dir), [0]);
    } finally {
      log.close();
    }
  });
});

test("log: segment.ms is timed by the batches' timestamps (Kafka's timeWaitedForRoll), not the wall clock, when they carry one", async () => {
  await withTempDir((dir) => {
    const now = 1_000_000;
    const timed: Platform = { ...platform, clock: { ...platform.clock, nowMs: () => now } };
    const log = Log.open(timed, dir, "t", 0, logConfig({ segmentMs: 60_000 }), silentLogger);
    try {
      appendRecords(log, 1, 20, 0, 5_000_000);
      appendRecords(log, 1, 20, 0, 5_060_000);
      assert.deepEqual(segmentBases(dir), [0], "exactly segment.ms after the first batch");
      // The wall clock has not moved: the producer's timestamps alone age the segment.
      appendRecords(log, 1, 20, 0, 5_060_001);
      assert.deepEqual(segmentBases(dir), [0, 2]);
    } finally {
      log.close();
    }
  });
});

test("log: a reopened segment keeps its age: segment.ms counts from its first batch, not the file's last modification", async () => {
  await withTempDir((dir) => {
    const hour = 3_600_000;
    const start = Date.now() - 2 * hour;
    let log = Log.open(platform, dir, "t", 0, logConfig({ segmentMs: hour }), silentLogger);
    appendRecords(log, 1, 20, 0, start);
    log.close();
    // Reopened now: the file was modified a moment ago, its first batch is two hours old.
    log = Log.open(platform, dir, "t", 0, logConfig({ segmentMs: hour }), silentLogger);
    try {
      appendRecords(log, 1, 20, 0, Date.now());
      assert.deepEqual(segmentBases(dir), [0, 1]);
    } finally {
      log.close();
    }
  });
});

test("log: a reopened segment whose first batch is recent does not roll on the next append, however old its file", async () => {
  await withTempDir((dir) => {
    const hour = 3_600_000;
    let log = Log.open(platform, dir, "t", 0, logConfig({ segmentMs: hour }), silentLogger);
    appendRecords(log, 1, 20, 0, Date.now());
    log.close();
    // The file looks two hours old; its first batch is not: segment.ms counts from the batch.
    const old = new Date(Date.now() - 2 * hour);
    nodeFs.utimesSync(`${dir}/00000000000000000000.log`, old, old);
    log = Log.open(platform, dir, "t", 0, logConfig({ segmentMs: hour }), silentLogger);
    try {
      appendRecords(log, 1, 20, 0, Date.now());
      assert.deepEqual(segmentBases(dir), [0]);
    } finally {
      log.close();
    }
  });
});

test("log: batches without a timestamp (-1) age a segment by the wall clock since its creation", async () => {
  await withTempDir((dir) => {
    let now = 1_000_000;
    const timed: Platform = { ...platform, clock: { ...platform.clock, nowMs: () => now } };
    const log = Log.open(timed, dir, "t", 0, logConfig({ segmentMs: 60_000 }), silentLogger);
    try {
      appendRecords(log, 1, 20, 0, -1);
      now += 60_000;
      appendRecords(log, 1, 20, 0, -1);
      assert.deepEqual(segmentBases(dir), [0]);
      now += 1;
      appendRecords(log, 1, 20, 0, -1);
      assert.deepEqual(segmentBases(dir), [0, 2]);
    } finally {
      log.close();
    }
  });
});
