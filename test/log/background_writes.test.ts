// Writes moved off the event loop for issue 11's 50 ms bound, on real files: a checkpoint written
// in the background (OffsetCheckpointFile.writeAsync) never replaces newer content written at
// once meanwhile, and two background writes end with the later one; the LogManager's scheduled
// checkpoints land in Kafka's format; a new leader's epoch entry (assignDeferred) is written at
// the next flush or close, and after a crash before that it comes back from its batches;
// deleteLog renames and removes a log's dir in the background (renamesSettled, removalsSettled).
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import * as os from "node:os";
import * as nodePath from "node:path";
import { test } from "node:test";
import {
  KafkaStorageError,
  LeaderEpochCheckpointFileName,
  Log,
  type LogConfig,
  type LogLoadState,
  LogManager,
  OffsetCheckpointFile,
  parseLeaderEpochCheckpoint,
} from "../../src/log/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Platform } from "../../src/platform/types.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { buildBatch } from "../helpers/record_batch.ts";

const platform: Platform = await loadPlatform();
const cfg: LogConfig = { segmentBytes: 1 << 30, segmentMs: 7 * 24 * 3_600_000, indexIntervalBytes: 4096, segmentIndexBytes: 10 << 20 };

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = nodeFs.mkdtempSync(nodePath.join(os.tmpdir(), "strand-bgwrites-"));
  try {
    await fn(dir);
  } finally {
    nodeFs.rmSync(dir, { recursive: true, force: true });
  }
}

const entry = (topic: string, offset: number) => [{ topic, partition: 0, offset }];

test("background writes: a checkpoint written at once while a background write runs is not replaced by the older content", async () => {
  await withDir(async (dir) => {
    const file = new OffsetCheckpointFile(platform, `${dir}/recovery-point-offset-checkpoint`);
    const older = file.writeAsync(entry("t", 10)); // its temp file is being made on the I/O pool
    file.write(entry("t", 5)); // a truncation's checkpoint, at once: newer
    await older;
    await file.settled();
    assert.deepEqual([...file.read().values()], entry("t", 5), "the write at once stays");
    // The next background write replaces it as usual.
    await file.writeAsync(entry("t", 7));
    assert.deepEqual([...file.read().values()], entry("t", 7));
  });
});

test("background writes: background writes asked for while one runs end with the last one's content, in Kafka's format", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/replication-offset-checkpoint`;
    const file = new OffsetCheckpointFile(platform, path);
    const writes = [1, 2, 3, 4].map((n) => file.writeAsync(entry("t", n)));
    await Promise.all(writes);
    assert.equal(nodeFs.readFileSync(path, "utf8"), "0\n1\nt 0 4\n");
    // The same with the rename on the I/O pool (the high-watermark file's writer).
    const offLoop = new OffsetCheckpointFile(platform, path, true);
    await Promise.all([5, 6, 7].map((n) => offLoop.writeAsync(entry("t", n))));
    assert.equal(nodeFs.readFileSync(path, "utf8"), "0\n1\nt 0 7\n");
  });
});

test("background writes: the LogManager's scheduled checkpoints are written off the loop and land whole", async () => {
  await withDir(async (dir) => {
    const lm = new LogManager(platform, [dir], cfg, silentLogger, { highWatermarkCheckpointMs: 20, flushRecoveryOffsetCheckpointMs: 20 });
    await lm.startup(0, "cluster");
    try {
      for (let p = 0; p < 3; p++) lm.getOrCreateLog("t", p, cfg).appendAsLeader(buildBatch([{ value: "v" }]), 1, 0);
      lm.getLog("t", 1)!.flush();
      const read = (name: string) => new OffsetCheckpointFile(platform, `${dir}/${name}`).read();
      const written = () => read("recovery-point-offset-checkpoint").get("t-1")?.offset === 1 && read("replication-offset-checkpoint").size === 3;
      for (let i = 0; i < 1000 && !written(); i++) await new Promise((r) => setTimeout(r, 10));
      const points = read("recovery-point-offset-checkpoint");
      assert.deepEqual([0, 1, 2].map((p) => points.get(`t-${p}`)?.offset), [0, 1, 0]);
      assert.equal(read("replication-offset-checkpoint").size, 3);
    } finally {
      await lm.shutdownGradually();
    }
    assert.ok(!nodeFs.readdirSync(dir).some((n) => n.endsWith(".tmp") && !n.endsWith(".async.tmp")), "no Kafka temp file left");
  });
});

test("background writes: a new leader's epoch entry is written at the next flush or close; after a crash before that, recovery adds it back from its batches", async () => {
  await withDir(async (dir) => {
    const logDir = `${dir}/t-0`;
    const epochs = () => {
      const path = `${logDir}/${LeaderEpochCheckpointFileName}`;
      return nodeFs.existsSync(path) ? parseLeaderEpochCheckpoint(nodeFs.readFileSync(path, "utf8")) : [];
    };
    // Written at close.
    let log = Log.open(platform, logDir, "t", 0, cfg, silentLogger);
    log.maybeAssignEpochStartOffset(3, 0);
    assert.deepEqual(epochs(), [], "not written on becoming leader");
    log.close();
    assert.deepEqual(epochs(), [{ epoch: 3, startOffset: 0 }], "written at close");

    // Written at flush.
    log = Log.open(platform, logDir, "t", 0, cfg, silentLogger);
    log.maybeAssignEpochStartOffset(4, 0);
    log.flush();
    assert.deepEqual(epochs(), [{ epoch: 3, startOffset: 0 }, { epoch: 4, startOffset: 0 }].slice(1), "epoch 3 had no batch: replaced");
    log.close();

    // A crash after appends in a new epoch, before any flush: the file lacks the epoch, the
    // batches carry it, and recovery from the recovery point adds it back.
    log = Log.open(platform, logDir, "t", 0, cfg, silentLogger);
    log.maybeAssignEpochStartOffset(7, 0);
    log.appendAsLeader(buildBatch([{ value: "a" }, { value: "b" }]), 2, 7);
    assert.ok(!epochs().some((e) => e.epoch === 7), "epoch 7 not written yet");
    // No close: the process died. Its files are reopened as start-up would after an unclean stop.
    const unclean: LogLoadState = { hadCleanShutdown: false, recoveryPoint: 0, logStartOffset: 0, highWatermark: null };
    const reopened = Log.open(platform, logDir, "t", 0, cfg, silentLogger, unclean);
    try {
      assert.equal(reopened.logEndOffset, 2);
      assert.deepEqual(reopened.leaderEpochCache.entries, [{ epoch: 7, startOffset: 0 }]);
    } finally {
      reopened.close();
    }
  });
});

test("background writes: deleteLog stops serving the log at once, renames and removes its dir in the background; the partition is refused (retriable) until its path is free", async () => {
  await withDir(async (dir) => {
    const lm = new LogManager(platform, [dir], cfg, silentLogger);
    await lm.startup(0, "cluster");
    try {
      lm.getOrCreateLog("gone", 0, cfg).appendAsLeader(buildBatch([{ value: "v" }]), 1, 0);
      lm.deleteLog("gone", 0);
      assert.equal(lm.getLog("gone", 0), undefined, "not served any more");
      assert.throws(
        () => lm.getOrCreateLog("gone", 0, cfg),
        (e: unknown) => e instanceof KafkaStorageError && e.kind === "resource",
        "created again only once the old dir has its -delete name",
      );
      await lm.renamesSettled();
      assert.ok(!nodeFs.existsSync(`${dir}/gone-0`), "renamed");
      // The same partition can be created again now, from nothing.
      assert.equal(lm.getOrCreateLog("gone", 0, cfg).logEndOffset, 0);
      await lm.removalsSettled();
      assert.deepEqual(nodeFs.readdirSync(dir).filter((n) => n.endsWith("-delete")), [], "the renamed dir is removed");
    } finally {
      lm.shutdown();
    }
  });
});

test("background writes: what the loader changes in leader-epoch-checkpoint is written at the log's next flush or close, not while opening it", async () => {
  await withDir(async (dir) => {
    const logDir = `${dir}/t-0`;
    const path = `${logDir}/${LeaderEpochCheckpointFileName}`;
    // A new leader's epoch at offset 0 of a log that got no batch: the load drops it (Kafka's
    // truncateFromEnd to the log end offset).
    let log = Log.open(platform, logDir, "t", 0, cfg, silentLogger);
    log.maybeAssignEpochStartOffset(2, 0);
    log.close();
    assert.equal(nodeFs.readFileSync(path, "utf8"), "0\n1\n2 0\n");
    log = Log.open(platform, logDir, "t", 0, cfg, silentLogger);
    assert.deepEqual(log.leaderEpochCache.entries, []);
    assert.equal(nodeFs.readFileSync(path, "utf8"), "0\n1\n2 0\n", "not rewritten while opening");
    // A crash now: the next load drops it again.
    const again = Log.open(platform, logDir, "t", 0, cfg, silentLogger, { hadCleanShutdown: false, recoveryPoint: 0, logStartOffset: 0, highWatermark: null });
    assert.deepEqual(again.leaderEpochCache.entries, []);
    again.closeForFailure();
    log.close();
    assert.equal(nodeFs.readFileSync(path, "utf8"), "0\n0\n", "written at close");
  });
});

test("background writes: a gradual shutdown writes new leaders' epochs, the three checkpoints and the marker in the background, and the next start-up finds them", async () => {
  await withDir(async (dir) => {
    let lm = new LogManager(platform, [dir], cfg, silentLogger);
    await lm.startup(0, "cluster");
    for (let p = 0; p < 3; p++) {
      const log = lm.getOrCreateLog("t", p, cfg);
      log.maybeAssignEpochStartOffset(5, 0); // written at the next flush or close
      log.appendAsLeader(buildBatch([{ value: "a" }, { value: "b" }]), 2, 5);
    }
    assert.ok(!nodeFs.existsSync(`${dir}/t-0/${LeaderEpochCheckpointFileName}`));
    await lm.shutdownGradually();
    for (let p = 0; p < 3; p++) {
      assert.equal(nodeFs.readFileSync(`${dir}/t-${p}/${LeaderEpochCheckpointFileName}`, "utf8"), "0\n1\n5 0\n");
    }
    assert.ok(nodeFs.existsSync(`${dir}/.kafka_cleanshutdown`), "the clean-shutdown marker");
    const points = new OffsetCheckpointFile(platform, `${dir}/recovery-point-offset-checkpoint`).read();
    assert.deepEqual([0, 1, 2].map((p) => points.get(`t-${p}`)?.offset), [2, 2, 2], "flushed before the checkpoint");
    assert.deepEqual(nodeFs.readdirSync(dir).filter((n) => n.endsWith(".tmp")), [], "no temp file left");

    lm = new LogManager(platform, [dir], cfg, silentLogger);
    await lm.startup(0, "cluster");
    try {
      assert.equal(lm.getLog("t", 1)?.logEndOffset, 2);
      assert.deepEqual(lm.getLog("t", 1)?.leaderEpochCache.entries, [{ epoch: 5, startOffset: 0 }]);
    } finally {
      await lm.shutdownGradually();
    }
  });
});
