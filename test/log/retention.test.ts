// Retention, roll and flush on real files (issue 3, items 3 and 4): segments deleted by time
// (retention.ms, against each segment's newest batch timestamp) and by size (retention.bytes),
// oldest first, never the active one, never past the high watermark; deleted segments renamed
// `.deleted` and removed after file.delete.delay.ms; the log start offset moving with them (and
// by DeleteRecords); rolls by size and by time; flush.messages / flush.ms moving the recovery
// point; topic overrides over broker defaults; Kafka's precedence of the retention keys.
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { test } from "node:test";
import { parseBrokerConfig } from "../../src/broker/mod.ts";
import { effectiveLogConfig, Log, type LogConfig, logConfigDefaults, LogManager, type TopicLogConfig } from "../../src/log/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Platform } from "../../src/platform/types.ts";
import { ErrorCode, KafkaError } from "../../src/util/errors.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { buildBatch } from "../helpers/record_batch.ts";
import { withTempDir } from "../helpers/temp_dir.ts";

const platform: Platform = await loadPlatform();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const T0 = 1_700_000_000_000;
const config = (over: Partial<LogConfig> = {}): LogConfig => ({ ...logConfigDefaults, segmentBytes: 1000, indexIntervalBytes: 200, ...over });

/** Appends `n` one-record batches, batch i stamped T0 + i seconds; the high watermark follows. */
function appendStamped(log: Log, n: number): void {
  for (let i = 0; i < n; i++) {
    const o = log.logEndOffset;
    log.appendAsLeader(buildBatch([{ value: `v${o}`.padEnd(100, ".") }], { baseTimestamp: BigInt(T0 + o * 1000) }), 1, 0);
  }
  log.updateHighWatermark(log.logEndOffset);
}

/** Segment files in dir: live bases and deleted ones, by name. */
function files(dir: string): { live: number[]; deleted: string[] } {
  const names = nodeFs.readdirSync(dir);
  return {
    live: names.filter((n) => /^\d{20}\.log$/.test(n)).map((n) => Number(n.slice(0, 20))).sort((a, b) => a - b),
    deleted: names.filter((n) => n.endsWith(".deleted")).sort(),
  };
}

function assertOutOfRange(log: Log, offset: number): void {
  assert.throws(() => log.read(offset, 1 << 20, true), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.OFFSET_OUT_OF_RANGE);
}

test("retention: by time, segments whose newest batch is older than retention.ms go, oldest first; the active one stays", async () => {
  await withTempDir(async (dir) => {
    const log = Log.open(platform, dir, "t", 0, config({ retentionMs: 20_000, fileDeleteDelayMs: 60_000 }), silentLogger);
    try {
      appendStamped(log, 40);
      const bases = files(dir).live;
      assert.ok(bases.length >= 5, "several segments");
      // At T0 + 30 s with 20 s retention, batches stamped before T0 + 10 s are expired: the
      // segments whose newest batch (offset next base - 1) is below 10 go.
      const now = T0 + 30_000;
      const expired = bases.filter((b, i) => i + 1 < bases.length && (bases[i + 1] - 1) * 1000 + T0 < now - 20_000);
      assert.ok(expired.length >= 1 && expired.length < bases.length - 1);
      assert.equal(log.deleteOldSegments(now), expired.length);
      const after = files(dir);
      assert.deepEqual(after.live, bases.slice(expired.length));
      for (const b of expired) {
        const name = String(b).padStart(20, "0");
        assert.ok(after.deleted.includes(`${name}.log.deleted`) && after.deleted.includes(`${name}.index.deleted`), `segment ${b} renamed .deleted`);
      }
      assert.ok(after.deleted.every((n) => expired.includes(Number(n.slice(0, 20)))), "only expired segments renamed");
      assert.equal(log.logStartOffset, after.live[0], "the log start offset moves to the first remaining segment");
      assertOutOfRange(log, after.live[0] - 1);
      assert.equal(log.read(after.live[0], 1 << 20, true).records.length > 0, true);
      // Far in the future everything is expired, but the active segment stays.
      log.deleteOldSegments(T0 + 10_000_000);
      assert.deepEqual(files(dir).live, [bases[bases.length - 1]]);
      assert.equal(log.logStartOffset, bases[bases.length - 1]);
      assert.equal(log.logEndOffset, 40);
    } finally {
      log.close();
    }
    assert.deepEqual(files(dir).deleted, [], "closing the log removes deleted files still waiting");
  });
});

test("retention: by size, the oldest segments go while the rest stays at or above retention.bytes", async () => {
  await withTempDir((dir) => {
    const log = Log.open(platform, dir, "t", 0, config({ retentionBytes: 2500, retentionMs: -1 }), silentLogger);
    try {
      appendStamped(log, 60);
      const sizeOf = (b: number) => nodeFs.statSync(`${dir}/${String(b).padStart(20, "0")}.log`).size;
      const before = files(dir).live;
      const total = before.reduce((n, b) => n + sizeOf(b), 0);
      assert.equal(total, log.sizeBytes);
      const n = log.deleteOldSegments(Date.now());
      assert.ok(n >= 1);
      const after = files(dir).live;
      const remaining = after.reduce((s, b) => s + sizeOf(b), 0);
      assert.ok(remaining >= 2500, "never below retention.bytes");
      assert.ok(remaining - sizeOf(after[0]) < 2500, "one more deletion would go below it");
      assert.deepEqual(after, before.slice(n));
      assert.equal(log.deleteOldSegments(Date.now()), 0, "a second check deletes nothing more");
    } finally {
      log.close();
    }
  });
});

test("retention: nothing at or past the high watermark is deleted; -1 means no limit", async () => {
  await withTempDir((dir) => {
    const log = Log.open(platform, dir, "t", 0, config({ retentionMs: 0, retentionBytes: 0 }), silentLogger);
    try {
      appendStamped(log, 30);
      const bases = files(dir).live;
      log.updateHighWatermark(bases[2]); // consumers have seen only the first two segments
      assert.equal(log.deleteOldSegments(T0 + 10_000_000), 2);
      assert.deepEqual(files(dir).live, bases.slice(2));
    } finally {
      log.close();
    }
  });
  await withTempDir((dir) => {
    const log = Log.open(platform, dir, "t", 0, config({ retentionMs: -1, retentionBytes: -1 }), silentLogger);
    try {
      appendStamped(log, 30);
      assert.equal(log.deleteOldSegments(T0 + 10_000_000_000), 0);
    } finally {
      log.close();
    }
  });
});

test("retention: `.deleted` files are removed after file.delete.delay.ms, and leftovers at the next open", async () => {
  await withTempDir(async (dir) => {
    const log = Log.open(platform, dir, "t", 0, config({ retentionBytes: 0, fileDeleteDelayMs: 150 }), silentLogger);
    try {
      appendStamped(log, 20);
      const n = log.deleteOldSegments(Date.now());
      assert.ok(n >= 1);
      const deletedLogs = () => files(dir).deleted.filter((f) => f.endsWith(".log.deleted")).length;
      assert.equal(deletedLogs(), n, "renamed at once");
      await sleep(30);
      assert.equal(deletedLogs(), n, "still there within the delay");
      await sleep(400);
      assert.deepEqual(files(dir).deleted, [], "removed after the delay");
    } finally {
      log.close();
    }
    // A stop before the delay passed leaves `.deleted` files: the next open removes them.
    nodeFs.writeFileSync(`${dir}/00000000000000000000.log.deleted`, "old");
    nodeFs.writeFileSync(`${dir}/00000000000000000000.index.deleted`, "old");
    const again = Log.open(platform, dir, "t", 0, config(), silentLogger);
    again.close();
    assert.deepEqual(files(dir).deleted, []);
  });
});

test("retention: cleanup.policy=compact keeps expired segments; the log start offset still deletes what lies below it", async () => {
  await withTempDir((dir) => {
    const log = Log.open(platform, dir, "t", 0, config({ retentionMs: 0, retentionBytes: 0, cleanupPolicy: "compact" }), silentLogger);
    try {
      appendStamped(log, 30);
      const bases = files(dir).live;
      assert.equal(log.deleteOldSegments(T0 + 10_000_000), 0);
      // DeleteRecords moves the start into the third segment: the first two go at the next check.
      assert.equal(log.maybeIncrementLogStartOffset(bases[2] + 1, "test"), true);
      assertOutOfRange(log, bases[2]);
      assert.equal(log.deleteOldSegments(T0), 2);
      assert.deepEqual(files(dir).live, bases.slice(2));
      assert.equal(log.logStartOffset, bases[2] + 1, "the start stays where DeleteRecords put it");
      assert.equal(log.maybeIncrementLogStartOffset(3, "test"), false, "it never moves back");
      assert.throws(() => log.maybeIncrementLogStartOffset(31, "test"), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.OFFSET_OUT_OF_RANGE);
    } finally {
      log.close();
    }
  });
});

test("roll: by segment.bytes and by segment.ms (topic overrides over broker defaults), looking at the files", async () => {
  await withTempDir(async (dir) => {
    const defaults: TopicLogConfig = { ...logConfigDefaults, maxMessageBytes: 1 << 20 };
    const lm = new LogManager(platform, [dir], defaults, silentLogger);
    await lm.startup(0, "c");
    try {
      const bySize = lm.getOrCreateLog("size", 0, effectiveLogConfig(defaults, { "segment.bytes": "600" }));
      appendStamped(bySize, 20); // ~170 bytes a batch: 3 a segment
      assert.deepEqual(files(`${dir}/size-0`).live, [0, 3, 6, 9, 12, 15, 18]);
      for (const b of files(`${dir}/size-0`).live.slice(0, -1)) {
        assert.ok(nodeFs.statSync(`${dir}/size-0/${String(b).padStart(20, "0")}.log`).size <= 600);
      }
      // segment.ms is timed by the batches' timestamps (Kafka's timeWaitedForRoll): stamped now.
      const byTime = lm.getOrCreateLog("time", 0, effectiveLogConfig(defaults, { "segment.ms": "80" }));
      // The batches' own times decide (a loaded machine may take 80 ms over five appends).
      const appendAt = (n: number, atMs: number) => {
        for (let i = 0; i < n; i++) byTime.appendAsLeader(buildBatch([{ value: "t" }], { baseTimestamp: BigInt(atMs) }), 1, 0);
      };
      const firstMs = Date.now();
      appendAt(5, firstMs);
      assert.deepEqual(files(`${dir}/time-0`).live, [0], "young segment: no roll");
      await sleep(150);
      appendAt(2, Math.max(Date.now(), firstMs + 150));
      assert.deepEqual(files(`${dir}/time-0`).live, [0, 5], "rolled at the first append after segment.ms");
      assert.equal(byTime.recoveryPoint, 5, "a roll flushes the finished segment");
    } finally {
      lm.shutdown();
    }
  });
});

test("retention: the LogManager's task runs every log.retention.check.interval.ms with each topic's retention", async () => {
  await withTempDir(async (dir) => {
    const defaults: TopicLogConfig = { ...logConfigDefaults, segmentBytes: 600, maxMessageBytes: 1 << 20 };
    const lm = new LogManager(platform, [dir], defaults, silentLogger, { retentionCheckMs: 20 });
    await lm.startup(0, "c");
    try {
      // The batches are stamped in 2023: the 7-day default would expire them, so "kept" says -1.
      const kept = lm.getOrCreateLog("kept", 0, effectiveLogConfig(defaults, { "retention.ms": "-1" }));
      const trimmed = lm.getOrCreateLog("trimmed", 0, effectiveLogConfig(defaults, { "retention.ms": "-1", "retention.bytes": "700" }));
      const expired = lm.getOrCreateLog("expired", 0, effectiveLogConfig(defaults, {}));
      appendStamped(kept, 20);
      appendStamped(trimmed, 20);
      appendStamped(expired, 20);
      await sleep(200);
      assert.equal(files(`${dir}/kept-0`).live.length, 7, "no limits: every segment kept");
      assert.deepEqual(files(`${dir}/expired-0`).live, [18], "7-day default: all but the active segment expired");
      const left = files(`${dir}/trimmed-0`).live;
      assert.ok(left.length <= 2, `retention.bytes=700 leaves at most two segments (${left})`);
      assert.equal(trimmed.logStartOffset, left[0]);
    } finally {
      lm.shutdown();
    }
  });
});

test("flush: flush.messages moves the recovery point every N messages; the flush task honours flush.ms", async () => {
  await withTempDir(async (dir) => {
    const log = Log.open(platform, dir, "t", 0, config({ segmentBytes: 1 << 20, flushMessages: 5 }), silentLogger);
    try {
      assert.equal(log.recoveryPoint, 0);
      appendStamped(log, 4);
      assert.equal(log.recoveryPoint, 0, "4 unflushed messages: no flush yet");
      appendStamped(log, 1);
      assert.equal(log.recoveryPoint, 5);
      appendStamped(log, 7);
      assert.equal(log.recoveryPoint, 10);
    } finally {
      log.close();
    }
  });
  await withTempDir(async (dir) => {
    const defaults: TopicLogConfig = { ...logConfigDefaults, maxMessageBytes: 1 << 20 };
    const lm = new LogManager(platform, [dir], defaults, silentLogger);
    await lm.startup(0, "c");
    try {
      const slow = lm.getOrCreateLog("slow", 0, effectiveLogConfig(defaults, { "flush.ms": "1000000" }));
      const fast = lm.getOrCreateLog("fast", 0, effectiveLogConfig(defaults, { "flush.ms": "100" }));
      appendStamped(slow, 3);
      appendStamped(fast, 3);
      const now = Date.now();
      lm.flushDirtyLogs(now + 50);
      assert.equal(fast.recoveryPoint, 0, "flushed less than flush.ms ago");
      lm.flushDirtyLogs(now + 200);
      assert.equal(fast.recoveryPoint, 3);
      assert.equal(slow.recoveryPoint, 0);
    } finally {
      lm.shutdown();
    }
  });
});

test("config: log.retention.ms wins over minutes, minutes over hours; negative is unlimited; flush.ms falls back to the scheduler interval", () => {
  const parse = (kv: Record<string, string>) => parseBrokerConfig(new Map(Object.entries(kv))).config;
  assert.equal(parse({}).logRetentionMs, 168 * 3_600_000);
  assert.equal(parse({ "log.retention.hours": "1" }).logRetentionMs, 3_600_000);
  assert.equal(parse({ "log.retention.hours": "1", "log.retention.minutes": "2" }).logRetentionMs, 120_000);
  assert.equal(parse({ "log.retention.hours": "1", "log.retention.minutes": "2", "log.retention.ms": "5" }).logRetentionMs, 5);
  assert.equal(parse({ "log.retention.ms": "-1" }).logRetentionMs, -1);
  assert.equal(parse({ "log.retention.hours": "-5" }).logRetentionMs, -1);
  assert.equal(parse({}).logRetentionBytes, -1);
  assert.equal(parse({}).logRetentionCheckIntervalMs, 300_000);
  assert.equal(parse({}).logSegmentDeleteDelayMs, 60_000);
  assert.equal(parse({}).numRecoveryThreadsPerDataDir, 1);
  assert.equal(parse({}).logFlushOffsetCheckpointIntervalMs, 60_000);
  assert.equal(parse({}).logFlushStartOffsetCheckpointIntervalMs, 60_000);
  assert.equal(parse({}).logFlushIntervalMs, Number.MAX_SAFE_INTEGER);
  assert.equal(parse({ "log.flush.scheduler.interval.ms": "3000" }).logFlushIntervalMs, 3000);
  assert.equal(parse({ "log.flush.scheduler.interval.ms": "3000", "log.flush.interval.ms": "700" }).logFlushIntervalMs, 700);
  assert.equal(parse({ "log.cleanup.policy": "compact, delete" }).logCleanupPolicy, "compact,delete");
  assert.throws(() => parse({ "log.cleanup.policy": "shred" }), /log.cleanup.policy/);
  assert.throws(() => parse({ "num.recovery.threads.per.data.dir": "0" }), /num.recovery.threads.per.data.dir/);
  // Topic overrides: retention.ms -1 and friends, over the broker's values.
  const defaults: TopicLogConfig = { ...logConfigDefaults, maxMessageBytes: 1 };
  const eff = effectiveLogConfig(defaults, { "retention.ms": "-1", "retention.bytes": "10", "flush.messages": "3", "file.delete.delay.ms": "0", "cleanup.policy": "compact" });
  assert.equal(eff.retentionMs, -1);
  assert.equal(eff.retentionBytes, 10);
  assert.equal(eff.flushMessages, 3);
  assert.equal(eff.fileDeleteDelayMs, 0);
  assert.equal(eff.cleanupPolicy, "compact");
  assert.equal(effectiveLogConfig(defaults, {}).retentionMs, 7 * 24 * 3_600_000);
});
