// The log operations replication needs, on real files: appendAsFollower (the leader's offsets and
// epochs kept; gaps allowed; overlaps, disorder and corruption refused with nothing written; a
// trailing partial batch left out; rolls), truncateTo (inside a segment, mid-batch, at a segment
// boundary, across segments, at the log end, below the log start) and truncateFullyAndStartAt,
// each followed by appends and a reopen; the leader epoch cache through restarts, a deleted or
// damaged checkpoint, an unclean stop, log start offset moves; endOffsetForEpoch; the
// LogManager's and the cleaner's part in a truncation.
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { test } from "node:test";
import {
  type EpochEntry,
  LeaderEpochCheckpointFileName,
  Log,
  type LogConfig,
  LogCleaner,
  logConfigDefaults,
  type LogLoadState,
  LogManager,
  segmentFileName,
} from "../../src/log/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Platform } from "../../src/platform/types.ts";
import { ErrorCode, KafkaError } from "../../src/util/errors.ts";
import { type Logger, silentLogger } from "../../src/util/logger.ts";
import { recordingLogger } from "../helpers/faulty_platform.ts";
import { buildBatch, type BatchOptions, concatBytes, parseBatches, text } from "../helpers/record_batch.ts";
import { withTempDir } from "../helpers/temp_dir.ts";

const platform: Platform = await loadPlatform();

/** About three 2-record batches per segment. */
const cfg = (over: Partial<LogConfig> = {}): LogConfig => ({ ...logConfigDefaults, segmentBytes: 400, indexIntervalBytes: 100, ...over });
const unclean = (recoveryPoint = 0): LogLoadState => ({ hadCleanShutdown: false, recoveryPoint, logStartOffset: 0, highWatermark: null });
const openLog = (dir: string, config = cfg(), state?: LogLoadState, logger: Logger = silentLogger) => Log.open(platform, dir, "t", 0, config, logger, state);

/** A batch as a leader stored it: n records from base (values `v<offset>`), stamped with epoch. */
function leaderBatch(base: number, n: number, epoch: number, opts: BatchOptions = {}): Uint8Array {
  const records = Array.from({ length: n }, (_, i) => ({ value: `v${base + i}`.padEnd(20, "."), timestampDelta: i }));
  return buildBatch(records, { baseOffset: BigInt(base), partitionLeaderEpoch: epoch, ...opts });
}

/** Appends n records as the leader at the log end offset (values `v<offset>`). */
function leaderAppend(log: Log, n: number, epoch: number): void {
  const first = log.logEndOffset;
  const records = Array.from({ length: n }, (_, i) => ({ value: `v${first + i}`.padEnd(20, "."), timestampDelta: i }));
  log.appendAsLeader(buildBatch(records), n, epoch);
}

/** A log of `batches` 2-record batches as the leader; epochs[i] is batch i's epoch. */
function leaderLog(dir: string, epochs: number[], config = cfg()): Log {
  const log = openLog(dir, config);
  for (const e of epochs) leaderAppend(log, 2, e);
  return log;
}

/** Every record from the log start offset to the log end: [offset, value, batch epoch]. */
function records(log: Log): [number, string, number][] {
  const out: [number, string, number][] = [];
  for (let o = log.logStartOffset; o < log.logEndOffset;) {
    const batches = parseBatches(log.read(o, 1 << 20, true).records);
    if (batches.length === 0) break;
    for (const b of batches) {
      assert.ok(b.crcValid, `batch ${b.baseOffset}: CRC valid`);
      for (const r of b.records) if (Number(r.offset) >= o) out.push([Number(r.offset), text(r.value)!.replace(/\.+$/, ""), b.partitionLeaderEpoch]);
    }
    const last = batches[batches.length - 1];
    o = Number(last.baseOffset) + last.lastOffsetDelta + 1;
  }
  return out;
}

const expected = (from: number, to: number, epochOf: (o: number) => number): [number, string, number][] =>
  Array.from({ length: to - from }, (_, i) => [from + i, `v${from + i}`, epochOf(from + i)]);
const entries = (...pairs: [number, number][]): EpochEntry[] => pairs.map(([epoch, startOffset]) => ({ epoch, startOffset }));
const checkpointText = (dir: string) => nodeFs.readFileSync(`${dir}/${LeaderEpochCheckpointFileName}`, "utf8");
const liveBases = (dir: string) => nodeFs.readdirSync(dir).filter((n) => /^\d{20}\.log$/.test(n)).map((n) => Number(n.slice(0, 20))).sort((a, b) => a - b);
const deletedFiles = (dir: string) => nodeFs.readdirSync(dir).filter((n) => n.endsWith(".deleted")).sort();

function assertKafkaError(fn: () => unknown, code: number, what: string): void {
  assert.throws(fn, (e: unknown) => e instanceof KafkaError && e.code === code, what);
}

test("follower: contiguous batches keep the leader's offsets and epochs and read back byte for byte", async () => {
  await withTempDir((dir) => {
    const log = openLog(dir, cfg({ segmentBytes: 1 << 20 }));
    try {
      const set = concatBytes(leaderBatch(0, 3, 1), leaderBatch(3, 2, 1), leaderBatch(5, 4, 2));
      const info = log.appendAsFollower(set.slice());
      assert.deepEqual(info, { firstOffset: 0, lastOffset: 8, logAppendTimeMs: -1 });
      assert.equal(log.logEndOffset, 9);
      assert.equal(log.highWatermark, 0, "the Partition moves a follower's high watermark");
      assert.deepEqual(log.leaderEpochCache.entries, entries([1, 0], [2, 5]));
      assert.equal(checkpointText(dir), "0\n2\n1 0\n2 5\n");
      assert.deepEqual(log.read(0, 1 << 20, true).records, set, "stored exactly as fetched");
      log.appendAsFollower(leaderBatch(9, 1, 2));
      assert.equal(log.logEndOffset, 10);
      assert.deepEqual(log.leaderEpochCache.entries, entries([1, 0], [2, 5]));
      assert.deepEqual(records(log), expected(0, 10, (o) => (o < 5 ? 1 : 2)));
    } finally {
      log.close();
    }
    const reopened = openLog(dir);
    try {
      assert.equal(reopened.logEndOffset, 10);
      assert.deepEqual(reopened.leaderEpochCache.entries, entries([1, 0], [2, 5]));
    } finally {
      reopened.close();
    }
  });
});

test("follower: a gap before or between fetched batches is kept (a compacted leader log has them)", async () => {
  await withTempDir((dir) => {
    const log = openLog(dir);
    try {
      log.appendAsFollower(leaderBatch(0, 3, 0));
      log.appendAsFollower(concatBytes(leaderBatch(10, 2, 0), leaderBatch(20, 1, 3)));
      assert.equal(log.logEndOffset, 21);
      assert.deepEqual(log.leaderEpochCache.entries, entries([0, 0], [3, 20]));
      const at = (o: number) => Number(parseBatches(log.read(o, 1 << 20, true).records)[0].baseOffset);
      assert.equal(at(3), 10, "an offset in the gap reads from the next batch");
      assert.equal(at(15), 20);
      assert.deepEqual(records(log).map((r) => r[0]), [0, 1, 2, 10, 11, 20]);
    } finally {
      log.close();
    }
    const reopened = openLog(dir, cfg(), unclean());
    try {
      assert.equal(reopened.logEndOffset, 21);
      assert.deepEqual(records(reopened).map((r) => r[0]), [0, 1, 2, 10, 11, 20]);
    } finally {
      reopened.close();
    }
  });
});

test("follower: overlapping, out-of-order and corrupt sets are refused and nothing of them is written", async () => {
  await withTempDir((dir) => {
    const log = openLog(dir);
    try {
      log.appendAsFollower(leaderBatch(0, 5, 1));
      const size = log.sizeBytes;
      const refused: [string, Uint8Array, number][] = [
        ["first batch below the log end offset", leaderBatch(3, 4, 1), ErrorCode.UNKNOWN_SERVER_ERROR],
        ["overlapping batches", concatBytes(leaderBatch(5, 2, 1), leaderBatch(6, 2, 1)), ErrorCode.UNKNOWN_SERVER_ERROR],
        ["decreasing batches", concatBytes(leaderBatch(7, 2, 1), leaderBatch(5, 1, 1)), ErrorCode.UNKNOWN_SERVER_ERROR],
        ["magic 1", leaderBatch(5, 1, 1, { magic: 1 }), ErrorCode.CORRUPT_MESSAGE],
        ["negative last offset delta", leaderBatch(5, 1, 1, { lastOffsetDelta: -1 }), ErrorCode.CORRUPT_MESSAGE],
      ];
      const flipped = concatBytes(leaderBatch(5, 2, 1), leaderBatch(7, 2, 1));
      flipped[flipped.length - 3] ^= 0x40; // in the second batch's records
      refused.push(["a CRC32C mismatch in the second batch", flipped, ErrorCode.CORRUPT_MESSAGE]);
      const short = leaderBatch(5, 2, 1);
      new DataView(short.buffer).setInt32(8, 20); // batch length below a header
      refused.push(["a length below a batch header", short, ErrorCode.CORRUPT_MESSAGE]);
      for (const [what, set, code] of refused) {
        assertKafkaError(() => log.appendAsFollower(set), code, what);
        assert.equal(log.logEndOffset, 5, `${what}: log end offset unchanged`);
        assert.equal(log.sizeBytes, size, `${what}: nothing written`);
      }
      assert.deepEqual(log.leaderEpochCache.entries, entries([1, 0]));
      assert.deepEqual(records(log), expected(0, 5, () => 1));
    } finally {
      log.close();
    }
  });
});

test("follower: a trailing batch cut short by the fetch is left out; nothing whole appends nothing", async () => {
  await withTempDir((dir) => {
    const log = openLog(dir);
    try {
      const set = concatBytes(leaderBatch(0, 3, 1), leaderBatch(3, 2, 2));
      assert.deepEqual(log.appendAsFollower(set.subarray(0, set.length - 10)), { firstOffset: 0, lastOffset: 2, logAppendTimeMs: -1 });
      assert.equal(log.logEndOffset, 3);
      assert.deepEqual(log.leaderEpochCache.entries, entries([1, 0]), "the partial batch's epoch is not assigned");
      const next = leaderBatch(3, 2, 2);
      for (const cut of [0, 8, 30, next.length - 1]) {
        assert.deepEqual(log.appendAsFollower(next.subarray(0, cut)), { firstOffset: 3, lastOffset: 2, logAppendTimeMs: -1 }, `${cut} bytes`);
        assert.equal(log.logEndOffset, 3);
      }
      log.appendAsFollower(next);
      assert.deepEqual(records(log), expected(0, 5, (o) => (o < 3 ? 1 : 2)));
    } finally {
      log.close();
    }
  });
});

test("follower: an empty log whose start offset falls inside the first fetched batch starts at that batch", async () => {
  await withTempDir((dir) => {
    const log = openLog(dir);
    try {
      log.truncateFullyAndStartAt(5);
      log.appendAsFollower(leaderBatch(3, 5, 2)); // the leader's DeleteRecords moved its start to 5, mid-batch
      assert.equal(log.logStartOffset, 3);
      assert.equal(log.logEndOffset, 8);
      assert.deepEqual(log.segmentBaseOffsets, [3]);
      assert.deepEqual(log.leaderEpochCache.entries, entries([2, 3]));
      assert.deepEqual(records(log), expected(3, 8, () => 2));
      // Not on a log that has data: that is an overlap.
      assertKafkaError(() => log.appendAsFollower(leaderBatch(6, 4, 2)), ErrorCode.UNKNOWN_SERVER_ERROR, "overlap on a non-empty log");
      // Kafka's condition is on the whole set: it must reach the empty log's start offset.
      log.truncateFullyAndStartAt(20);
      assertKafkaError(() => log.appendAsFollower(leaderBatch(10, 5, 3)), ErrorCode.UNKNOWN_SERVER_ERROR, "a set wholly below the start");
      assert.equal(log.logStartOffset, 20);
      log.appendAsFollower(concatBytes(leaderBatch(10, 5, 3), leaderBatch(15, 8, 3)));
      assert.equal(log.logStartOffset, 10);
      assert.deepEqual(records(log), expected(10, 23, () => 3));
    } finally {
      log.close();
    }
  });
});

test("follower: large fetched sets roll segments at segment.bytes and read back after a reopen", async () => {
  await withTempDir((dir) => {
    const log = openLog(dir);
    try {
      const batches = Array.from({ length: 12 }, (_, i) => leaderBatch(i * 2, 2, 1 + Math.floor(i / 5)));
      log.appendAsFollower(concatBytes(...batches));
      assert.ok(log.segmentCount >= 4, `rolled: ${log.segmentBaseOffsets}`);
      for (const base of liveBases(dir)) {
        assert.ok(nodeFs.statSync(`${dir}/${segmentFileName(base, ".log")}`).size <= 400, `segment ${base} within segment.bytes`);
      }
      assert.deepEqual(log.leaderEpochCache.entries, entries([1, 0], [2, 10], [3, 20]));
      assert.deepEqual(records(log), expected(0, 24, (o) => 1 + Math.floor(o / 10)));
    } finally {
      log.close();
    }
    const reopened = openLog(dir, cfg(), unclean());
    try {
      assert.deepEqual(records(reopened), expected(0, 24, (o) => 1 + Math.floor(o / 10)));
      assert.deepEqual(reopened.leaderEpochCache.entries, entries([1, 0], [2, 10], [3, 20]));
    } finally {
      reopened.close();
    }
  });
});

test("truncateTo across several segments: later segments deleted, the one holding the offset cut, offsets clamped, then appends and reopens", async () => {
  await withTempDir((dir) => {
    // 9 batches of 2: epoch 1 writes [0, 6), epoch 2 [6, 12), epoch 3 [12, 18); 3 batches a segment.
    const log = leaderLog(dir, [1, 1, 1, 2, 2, 2, 3, 3, 3], cfg({ fileDeleteDelayMs: 60_000 }));
    try {
      assert.deepEqual(log.segmentBaseOffsets, [0, 6, 12]);
      log.updateHighWatermark(18);
      log.flush();
      assert.deepEqual(log.leaderEpochCache.entries, entries([1, 0], [2, 6], [3, 12]));
      assert.equal(log.truncateTo(4), true);
      assert.equal(log.logEndOffset, 4);
      assert.equal(log.highWatermark, 4);
      assert.equal(log.recoveryPoint, 4);
      assert.deepEqual(log.segmentBaseOffsets, [0]);
      assert.deepEqual(liveBases(dir), [0]);
      assert.deepEqual(deletedFiles(dir).filter((n) => n.endsWith(".log.deleted")), [segmentFileName(6, ".log.deleted"), segmentFileName(12, ".log.deleted")]);
      assert.deepEqual(log.leaderEpochCache.entries, entries([1, 0]));
      assert.equal(checkpointText(dir), "0\n1\n1 0\n");
      assert.deepEqual(records(log), expected(0, 4, () => 1));
      assert.equal(log.read(4, 1 << 20, true).records.length, 0);
      assertKafkaError(() => log.read(5, 1 << 20, true), ErrorCode.OFFSET_OUT_OF_RANGE, "past the new end");
      // Appends go on from the new end, in the cut segment, then roll.
      leaderAppend(log, 2, 4);
      log.appendAsFollower(concatBytes(leaderBatch(6, 2, 4), leaderBatch(8, 2, 5), leaderBatch(10, 2, 5)));
      assert.deepEqual(log.leaderEpochCache.entries, entries([1, 0], [4, 4], [5, 8]));
    } finally {
      log.close();
    }
    const want = expected(0, 12, (o) => (o < 4 ? 1 : o < 8 ? 4 : 5));
    for (const state of [undefined, unclean()]) {
      const reopened = openLog(dir, cfg(), state);
      try {
        assert.equal(reopened.logEndOffset, 12);
        assert.deepEqual(records(reopened), want);
        assert.deepEqual(reopened.leaderEpochCache.entries, entries([1, 0], [4, 4], [5, 8]));
      } finally {
        reopened.close();
      }
    }
  });
});

test("truncateTo inside a segment: at a batch boundary, or mid-batch (the straddling batch goes whole)", async () => {
  await withTempDir((dir) => {
    const log = leaderLog(dir, [1, 1, 1, 2, 2, 2]);
    try {
      assert.deepEqual(log.segmentBaseOffsets, [0, 6]);
      assert.equal(log.truncateTo(10), true); // batch boundary in the active segment
      assert.equal(log.logEndOffset, 10);
      assert.deepEqual(log.segmentBaseOffsets, [0, 6]);
      assert.equal(log.truncateTo(3), true); // inside batch [2, 3]: it goes whole
      assert.equal(log.logEndOffset, 2);
      assert.deepEqual(records(log), expected(0, 2, () => 1));
      assert.deepEqual(log.leaderEpochCache.entries, entries([1, 0]));
      log.appendAsFollower(leaderBatch(2, 3, 2));
      assert.deepEqual(records(log), expected(0, 5, (o) => (o < 2 ? 1 : 2)));
    } finally {
      log.close();
    }
    const reopened = openLog(dir, cfg(), unclean());
    try {
      assert.deepEqual(records(reopened), expected(0, 5, (o) => (o < 2 ? 1 : 2)));
      assert.deepEqual(reopened.leaderEpochCache.entries, entries([1, 0], [2, 2]));
    } finally {
      reopened.close();
    }
  });
});

test("truncateTo at a segment boundary keeps that segment, empty, as the active one", async () => {
  await withTempDir((dir) => {
    const log = leaderLog(dir, [1, 1, 1, 2, 2, 2, 3, 3, 3]);
    try {
      assert.equal(log.truncateTo(6), true);
      assert.equal(log.logEndOffset, 6);
      assert.deepEqual(log.segmentBaseOffsets, [0, 6]);
      assert.equal(log.activeSegment.sizeBytes, 0);
      assert.deepEqual(log.leaderEpochCache.entries, entries([1, 0]));
      log.appendAsFollower(leaderBatch(6, 2, 7));
      assert.deepEqual(log.segmentBaseOffsets, [0, 6]);
    } finally {
      log.close();
    }
    const reopened = openLog(dir);
    try {
      assert.deepEqual(records(reopened), expected(0, 8, (o) => (o < 6 ? 1 : 7)));
      assert.deepEqual(reopened.leaderEpochCache.entries, entries([1, 0], [7, 6]));
    } finally {
      reopened.close();
    }
  });
});

test("truncateTo at or past the log end cuts nothing but drops an epoch assigned at the log end", async () => {
  await withTempDir((dir) => {
    const log = leaderLog(dir, [1, 1]);
    try {
      log.maybeAssignEpochStartOffset(3, log.logEndOffset); // became leader, appended nothing
      assert.deepEqual(log.leaderEpochCache.entries, entries([1, 0], [3, 4]));
      const size = log.sizeBytes;
      assert.equal(log.truncateTo(4), false);
      assert.equal(log.truncateTo(100), false);
      assert.equal(log.logEndOffset, 4);
      assert.equal(log.sizeBytes, size);
      assert.deepEqual(log.leaderEpochCache.entries, entries([1, 0]));
    } finally {
      log.close();
    }
  });
});

test("truncateTo below the log start offset starts the log over there", async () => {
  await withTempDir((dir) => {
    const log = leaderLog(dir, [1, 1, 1, 2, 2]);
    try {
      log.updateHighWatermark(10);
      log.maybeIncrementLogStartOffset(7, "test");
      assert.deepEqual(log.leaderEpochCache.entries, entries([2, 7]));
      assert.equal(log.truncateTo(5), true);
      assert.equal(log.logStartOffset, 5);
      assert.equal(log.logEndOffset, 5);
      assert.equal(log.highWatermark, 5);
      assert.deepEqual(log.segmentBaseOffsets, [5]);
      assert.deepEqual(log.leaderEpochCache.entries, []);
    } finally {
      log.close();
    }
  });
});

test("truncateFullyAndStartAt deletes every segment and starts empty at the offset; appends and reopen follow", async () => {
  await withTempDir((dir) => {
    const log = leaderLog(dir, [1, 1, 1, 2, 2, 2, 3], cfg({ fileDeleteDelayMs: 60_000 }));
    try {
      log.updateHighWatermark(14);
      log.truncateFullyAndStartAt(100);
      assert.equal(log.logStartOffset, 100);
      assert.equal(log.logEndOffset, 100);
      assert.equal(log.highWatermark, 100);
      assert.equal(log.recoveryPoint, 100);
      assert.deepEqual(log.segmentBaseOffsets, [100]);
      assert.deepEqual(liveBases(dir), [100]);
      assert.equal(deletedFiles(dir).filter((n) => n.endsWith(".log.deleted")).length, 3);
      assert.deepEqual(log.leaderEpochCache.entries, []);
      assert.equal(checkpointText(dir), "0\n0\n");
      assertKafkaError(() => log.read(99, 100, true), ErrorCode.OFFSET_OUT_OF_RANGE, "below the new start");
      log.appendAsFollower(leaderBatch(100, 2, 5));
      leaderAppend(log, 2, 6);
      assert.deepEqual(log.leaderEpochCache.entries, entries([5, 100], [6, 102]));
      // Starting over at the same base offset as a live segment.
      log.truncateFullyAndStartAt(100);
      log.appendAsFollower(leaderBatch(100, 3, 7));
    } finally {
      log.close();
    }
    const reopened = openLog(dir, cfg(), unclean());
    try {
      assert.equal(reopened.logStartOffset, 100);
      assert.deepEqual(records(reopened), expected(100, 103, () => 7));
      assert.deepEqual(reopened.leaderEpochCache.entries, entries([7, 100]));
      assert.deepEqual(deletedFiles(dir), [], "leftover .deleted files are removed at open");
    } finally {
      reopened.close();
    }
  });
});

test("epoch cache: survives a restart, and is rebuilt from batch headers when deleted or damaged", async () => {
  await withTempDir((dir) => {
    const log = openLog(dir);
    assert.equal(nodeFs.existsSync(`${dir}/${LeaderEpochCheckpointFileName}`), false, "a new, empty log writes no checkpoint");
    for (const e of [0, 0, 2, 2, 2, 5]) leaderAppend(log, 2, e);
    log.appendAsFollower(leaderBatch(12, 1, 7));
    log.close();
    const want = entries([0, 0], [2, 4], [5, 10], [7, 12]);
    const text = "0\n4\n0 0\n2 4\n5 10\n7 12\n";
    assert.equal(checkpointText(dir), text);
    const reopen = (logger: Logger = silentLogger) => {
      const l = openLog(dir, cfg(), undefined, logger);
      const got = l.leaderEpochCache.entries;
      l.close();
      return got;
    };
    assert.deepEqual(reopen(), want);
    nodeFs.rmSync(`${dir}/${LeaderEpochCheckpointFileName}`);
    const logger = recordingLogger();
    assert.deepEqual(reopen(logger), want, "rebuilt when deleted");
    assert.ok(logger.lines.some((l) => l.msg.includes("rebuilt leader epoch cache")));
    assert.equal(checkpointText(dir), text, "and written again");
    for (const garbage of ["", "1\n0\n", "0\n3\n0 0\n", "zz"]) {
      nodeFs.writeFileSync(`${dir}/${LeaderEpochCheckpointFileName}`, garbage);
      const warned = recordingLogger();
      assert.deepEqual(reopen(warned), want, `rebuilt from ${JSON.stringify(garbage)}`);
      assert.ok(warned.lines.some((l) => l.level === "warn" && l.msg.includes("leader epoch checkpoint")));
      assert.equal(checkpointText(dir), text);
    }
  });
});

test("epoch cache: an unclean stop drops epochs past the recovered log end, and recovery adds the ones the file lacks", async () => {
  await withTempDir((dir) => {
    const log = leaderLog(dir, [1, 1, 1, 2, 2], cfg({ segmentBytes: 1 << 20 }));
    assert.deepEqual(log.leaderEpochCache.entries, entries([1, 0], [2, 6]));
    const activeLog = `${dir}/${segmentFileName(0, ".log")}`;
    const cutAt = log.activeSegment.positionOf(6); // where epoch 2's first batch starts
    log.closeForFailure(); // a crash: nothing more written
    // The unflushed epoch-2 batches never reached the disk.
    nodeFs.truncateSync(activeLog, cutAt);
    const recovered = openLog(dir, cfg({ segmentBytes: 1 << 20 }), unclean());
    try {
      assert.equal(recovered.logEndOffset, 6);
      assert.deepEqual(recovered.leaderEpochCache.entries, entries([1, 0]), "epoch 2 started past the recovered end");
      recovered.flush(); // the load's changes are written at the next flush or close (deferWrites)
      assert.equal(checkpointText(dir), "0\n1\n1 0\n");
      leaderAppend(recovered, 2, 3);
    } finally {
      recovered.closeForFailure();
    }
    // A checkpoint behind the data (epoch 3 missing): recovery of the segment adds it.
    nodeFs.writeFileSync(`${dir}/${LeaderEpochCheckpointFileName}`, "0\n1\n1 0\n");
    const again = openLog(dir, cfg({ segmentBytes: 1 << 20 }), unclean());
    try {
      assert.deepEqual(again.leaderEpochCache.entries, entries([1, 0], [3, 6]));
      again.flush();
      assert.equal(checkpointText(dir), "0\n2\n1 0\n3 6\n");
      assert.deepEqual(records(again), expected(0, 8, (o) => (o < 6 ? 1 : 3)));
    } finally {
      again.close();
    }
  });
});

test("epoch cache: a log ending below its checkpointed start offset starts over with no epochs", async () => {
  await withTempDir((dir) => {
    leaderLog(dir, [1, 1, 2]).close();
    const log = openLog(dir, cfg(), { hadCleanShutdown: false, recoveryPoint: 0, logStartOffset: 50, highWatermark: 50 });
    try {
      assert.equal(log.logStartOffset, 50);
      assert.equal(log.logEndOffset, 50);
      assert.deepEqual(log.leaderEpochCache.entries, []);
      assert.equal(checkpointText(dir), "0\n0\n");
    } finally {
      log.close();
    }
  });
});

test("epoch cache: DeleteRecords and retention move the first entry up to the log start offset", async () => {
  await withTempDir((dir) => {
    const log = leaderLog(dir, [1, 1, 1, 2, 2, 2, 3, 3, 3], cfg({ retentionBytes: 500 }));
    try {
      log.updateHighWatermark(18);
      log.maybeIncrementLogStartOffset(8, "DeleteRecords");
      assert.deepEqual(log.leaderEpochCache.entries, entries([2, 8], [3, 12]));
      assert.equal(checkpointText(dir), "0\n2\n2 8\n3 12\n");
      // Segment 0 lies wholly below the log start offset; retention.bytes takes segment 6 too.
      assert.equal(log.deleteOldSegments(Date.now()), 2);
      assert.equal(log.logStartOffset, 12);
      assert.deepEqual(log.leaderEpochCache.entries, entries([3, 12]));
    } finally {
      log.close();
    }
    const reopened = openLog(dir, cfg(), { hadCleanShutdown: true, recoveryPoint: 18, logStartOffset: 12, highWatermark: 18 });
    try {
      assert.deepEqual(reopened.leaderEpochCache.entries, entries([3, 12]));
    } finally {
      reopened.close();
    }
  });
});

test("endOffsetForEpoch answers from the cache with the log end offset; null when it cannot say", async () => {
  await withTempDir((dir) => {
    const log = openLog(dir);
    try {
      assert.equal(log.endOffsetForEpoch(0), null, "empty cache");
      assert.equal(log.latestEpoch, null);
      for (const e of [1, 1, 1, 3, 3, 3, 4]) leaderAppend(log, 2, e);
      assert.equal(log.latestEpoch, 4);
      assert.deepEqual(log.endOffsetForEpoch(4), { leaderEpoch: 4, endOffset: 14 });
      assert.deepEqual(log.endOffsetForEpoch(3), { leaderEpoch: 3, endOffset: 12 });
      assert.deepEqual(log.endOffsetForEpoch(2), { leaderEpoch: 1, endOffset: 6 });
      assert.deepEqual(log.endOffsetForEpoch(1), { leaderEpoch: 1, endOffset: 6 });
      assert.deepEqual(log.endOffsetForEpoch(0), { leaderEpoch: 0, endOffset: 0 }, "below the first epoch: its start");
      assert.equal(log.endOffsetForEpoch(5), null, "above the latest");
      assert.equal(log.endOffsetForEpoch(-1), null);
      assert.equal(log.leaderEpochCache.epochForOffset(7), 3);
    } finally {
      log.close();
    }
  });
});

test("LogManager: a truncation writes the dir's recovery points and moves the cleaner checkpoint back", async () => {
  await withTempDir(async (dir) => {
    nodeFs.writeFileSync(`${dir}/cleaner-offset-checkpoint`, "0\n1\nt 0 16\n");
    const lm = new LogManager(platform, [dir], cfg(), silentLogger);
    await lm.startup(1, "cluster-a");
    try {
      const log = lm.getOrCreateLog("t", 0, cfg());
      for (const e of [1, 1, 1, 2, 2, 2, 3, 3, 3]) leaderAppend(log, 2, e);
      log.flush();
      lm.checkpointRecoveryOffsets();
      assert.match(nodeFs.readFileSync(`${dir}/recovery-point-offset-checkpoint`, "utf8"), /^t 0 18$/m);
      assert.equal(lm.cleaner.checkpointOf(log), 16);
      log.truncateTo(6);
      assert.match(nodeFs.readFileSync(`${dir}/recovery-point-offset-checkpoint`, "utf8"), /^t 0 6$/m);
      assert.equal(lm.cleaner.checkpointOf(log), 6);
      assert.match(nodeFs.readFileSync(`${dir}/cleaner-offset-checkpoint`, "utf8"), /^t 0 6$/m);
      log.truncateFullyAndStartAt(50);
      assert.match(nodeFs.readFileSync(`${dir}/recovery-point-offset-checkpoint`, "utf8"), /^t 0 50$/m);
    } finally {
      lm.shutdown();
    }
  });
});

test("cleaner: a pass over a log truncated under it aborts and swaps nothing in", async () => {
  await withTempDir(async (dir) => {
    const config = cfg({ cleanupPolicy: "compact", segmentBytes: 300, minCleanableDirtyRatio: 0 });
    const log = Log.open(platform, `${dir}/t-0`, "t", 0, config, silentLogger);
    try {
      for (let i = 0; i < 12; i++) {
        log.appendAsLeader(buildBatch([{ key: `k${i % 3}`, value: `v${i}`.padEnd(30, ".") }]), 1, 1);
      }
      log.updateHighWatermark(log.logEndOffset);
      const segmentsBefore = [...log.logSegments];
      const cleaner = new LogCleaner(platform, [dir], () => [log], {}, silentLogger, () => {});
      const pass = cleaner.cleanLog(log, Date.now());
      log.truncateTo(10); // between the start of the pass and its first yield
      assert.equal(await pass, null, "the pass aborted");
      assert.deepEqual([...log.logSegments].slice(0, -1), segmentsBefore.slice(0, log.segmentCount - 1), "no segment swapped in");
      assert.equal(nodeFs.readdirSync(`${dir}/t-0`).filter((n) => n.includes(".cleaned")).length, 0);
      // A later pass works on the truncated log.
      assert.notEqual(await cleaner.cleanLog(log, Date.now()), null);
      assert.equal(log.logEndOffset, 10);
    } finally {
      log.close();
    }
  });
});
