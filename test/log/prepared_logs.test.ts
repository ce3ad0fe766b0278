// Issue 11, defect 4 (log side): a new partition's directory and files are created off the event
// loop (LogManager.prepareNewLogs, the platform's async mkdir/open), and getOrCreateLog then builds
// the log with no filesystem call of its own. The result must be the log a synchronous creation
// makes (same files, same leader-epoch-checkpoint, same state after a restart); a preparation that
// meets a leftover or a failing disk steps aside, and the synchronous path behaves as it always has.
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { test } from "node:test";
import { KafkaStorageError, type LogConfig, logConfigDefaults, LogManager } from "../../src/log/mod.ts";
import { type FileSystem, loadPlatform, type Platform } from "../../src/platform/mod.ts";
import { logFileOpsInFlightMax } from "../../src/util/mod.ts";
import { tempDir } from "../helpers/broker.ts";
import { faultyPlatform, recordingLogger } from "../helpers/faulty_platform.ts";
import { buildBatch } from "../helpers/record_batch.ts";

const platform: Platform = await loadPlatform();
const cfg: LogConfig = { ...logConfigDefaults };

/** The platform with its synchronous creating calls (open, mkdirp, rename) counted. */
function countingPlatform(): { platform: Platform; syncCreations: string[] } {
  const syncCreations: string[] = [];
  const fs: FileSystem = Object.create(platform.fs);
  fs.open = (path, mode) => {
    if (mode !== "read") syncCreations.push(`open ${path}`);
    return platform.fs.open(path, mode);
  };
  fs.mkdirp = (path) => {
    syncCreations.push(`mkdirp ${path}`);
    platform.fs.mkdirp(path);
  };
  fs.rename = (from, to) => {
    syncCreations.push(`rename ${from}`);
    platform.fs.rename(from, to);
  };
  return { platform: { ...platform, fs }, syncCreations };
}

const filesOf = (dir: string) => nodeFs.readdirSync(dir).sort();

test("prepared logs: built without a synchronous creating call, and the same as a log created synchronously", async () => {
  const dir = tempDir("strand-prepared-");
  const { platform: counting, syncCreations } = countingPlatform();
  try {
    const lm = new LogManager(counting, [dir], cfg, recordingLogger());
    await lm.startup(0, "cluster");
    await lm.prepareNewLogs([
      { topic: "new", partition: 0, isNew: true, leaderEpoch: 3 }, // this broker will lead it
      { topic: "new", partition: 1, isNew: true, leaderEpoch: null }, // a follower's
    ]);
    syncCreations.length = 0;
    const led = lm.getOrCreateLog("new", 0, cfg);
    const followed = lm.getOrCreateLog("new", 1, cfg);
    led.maybeAssignEpochStartOffset(3, 0); // what becoming its leader does
    assert.deepEqual(syncCreations, [], "no synchronous mkdir, open or rename for prepared logs");

    // The same two made the synchronous way.
    const syncLed = lm.getOrCreateLog("old", 0, cfg);
    const syncFollowed = lm.getOrCreateLog("old", 1, cfg);
    syncLed.maybeAssignEpochStartOffset(3, 0);
    syncLed.flush(); // a new leader's entry is written at the next flush (assignDeferred)
    assert.ok(syncCreations.length > 0, "the synchronous path was taken for those");

    assert.deepEqual(filesOf(`${dir}/new-0`), filesOf(`${dir}/old-0`));
    assert.deepEqual(filesOf(`${dir}/new-1`), filesOf(`${dir}/old-1`));
    assert.equal(
      nodeFs.readFileSync(`${dir}/new-0/leader-epoch-checkpoint`, "utf8"),
      nodeFs.readFileSync(`${dir}/old-0/leader-epoch-checkpoint`, "utf8"),
    );
    for (const [a, b] of [[led, syncLed], [followed, syncFollowed]]) {
      assert.deepEqual([a.logEndOffset, a.logStartOffset, a.highWatermark, a.recoveryPoint, a.latestEpoch], [
        b.logEndOffset,
        b.logStartOffset,
        b.highWatermark,
        b.recoveryPoint,
        b.latestEpoch,
      ]);
    }
    led.appendAsLeader(buildBatch([{ value: "a" }, { value: "b" }]), 2, 3);
    assert.equal(led.logEndOffset, 2);
    lm.shutdown();

    // A restart (clean, then after a crash: no marker) loads them as it loads any log.
    for (const crash of [false, true]) {
      if (crash) nodeFs.rmSync(`${dir}/.kafka_cleanshutdown`);
      const again = new LogManager(platform, [dir], cfg, recordingLogger());
      await again.startup(0, "cluster");
      try {
        const reloaded = again.getLog("new", 0)!;
        assert.deepEqual([reloaded.logEndOffset, reloaded.latestEpoch], [2, 3], `after a ${crash ? "crash" : "clean stop"}`);
        assert.equal(again.getLog("new", 1)?.logEndOffset, 0);
        assert.deepEqual(again.offlineLogDirs, []);
      } finally {
        again.shutdown();
      }
    }
  } finally {
    nodeFs.rmSync(dir, { recursive: true, force: true });
  }
});

test("prepared logs: a leftover in the partition's dir makes the preparation step aside; the log is loaded from it", async () => {
  const dir = tempDir("strand-prepared-");
  const elsewhere = tempDir("strand-prepared-");
  try {
    // The partition written by another run, in another dir.
    const earlier = new LogManager(platform, [elsewhere], cfg, recordingLogger());
    await earlier.startup(0, "cluster");
    const old = earlier.getOrCreateLog("left", 0, cfg);
    old.maybeAssignEpochStartOffset(7, 0);
    old.appendAsLeader(buildBatch([{ value: "kept" }]), 1, 7);
    earlier.shutdown();
    const lm = new LogManager(platform, [dir], cfg, recordingLogger());
    await lm.startup(0, "cluster");
    try {
      nodeFs.renameSync(`${elsewhere}/left-0`, `${dir}/left-0`); // appears after start-up
      await lm.prepareNewLogs([{ topic: "left", partition: 0, isNew: true, leaderEpoch: 8 }]);
      const log = lm.getOrCreateLog("left", 0, cfg);
      assert.deepEqual([log.logEndOffset, log.latestEpoch], [1, 7], "the leftover was loaded, not replaced");
      assert.deepEqual(lm.offlineLogDirs, []);
    } finally {
      lm.shutdown();
    }
  } finally {
    nodeFs.rmSync(dir, { recursive: true, force: true });
    nodeFs.rmSync(elsewhere, { recursive: true, force: true });
  }
});

test("prepared logs: a failing disk during preparation is reported by getOrCreateLog, as without preparation", async () => {
  const dir = tempDir("strand-prepared-");
  const faulty = faultyPlatform(platform);
  try {
    const lm = new LogManager(faulty, [dir], cfg, recordingLogger());
    await lm.startup(0, "cluster");
    try {
      faulty.fail(dir);
      await lm.prepareNewLogs([{ topic: "doomed", partition: 0, isNew: true, leaderEpoch: 0 }]); // never throws
      assert.deepEqual(lm.offlineLogDirs, [], "preparing takes no dir offline");
      assert.throws(() => lm.getOrCreateLog("doomed", 0, cfg), KafkaStorageError);
      assert.deepEqual(lm.offlineLogDirs, [dir], "the synchronous attempt did, as it always has");
    } finally {
      lm.shutdown();
    }
  } finally {
    nodeFs.rmSync(dir, { recursive: true, force: true });
  }
});

test("prepared logs: a partition deleted before it was applied leaves no open file, and can be created again", async () => {
  const dir = tempDir("strand-prepared-");
  try {
    const lm = new LogManager(platform, [dir], cfg, recordingLogger());
    await lm.startup(0, "cluster");
    try {
      await lm.prepareNewLogs([{ topic: "gone", partition: 0, isNew: true, leaderEpoch: null }]);
      lm.deleteLog("gone", 0); // a StopReplica that came first: nothing is open for it any more
      const log = lm.getOrCreateLog("gone", 0, cfg); // the synchronous path loads the empty files
      log.appendAsLeader(buildBatch([{ value: "v" }]), 1, 0);
      assert.equal(log.logEndOffset, 1);
    } finally {
      lm.shutdown();
    }
  } finally {
    nodeFs.rmSync(dir, { recursive: true, force: true });
  }
});

test("prepared logs: the async file operations of many preparations run at most logFileOpsInFlightMax at a time", async () => {
  // Under Deno each async file call is a task of tokio's blocking pool; dozens at once made the
  // event loop's thread wait on the pool's lock (see util/limits.ts, logFileOpsInFlightMax).
  const dir = tempDir("strand-prepared-");
  let running = 0;
  let most = 0;
  let calls = 0;
  const fs: FileSystem = Object.create(platform.fs);
  const counted = <T>(op: () => Promise<T>) => async (): Promise<T> => {
    calls++;
    most = Math.max(most, ++running);
    try {
      return await op();
    } finally {
      running--;
    }
  };
  fs.mkdirpAsync = (path) => counted(() => platform.fs.mkdirpAsync(path))();
  fs.openAsync = (path, mode) => counted(() => platform.fs.openAsync(path, mode))();
  try {
    const lm = new LogManager({ ...platform, fs }, [dir], cfg, recordingLogger());
    await lm.startup(0, "cluster");
    try {
      const specs = Array.from({ length: 40 }, (_, p) => ({ topic: "many", partition: p, isNew: true, leaderEpoch: p % 2 === 0 ? 1 : null }));
      await lm.prepareNewLogs(specs);
      // mkdir and three files each, and a leader epoch checkpoint for every other one.
      assert.equal(calls, 40 * 4 + 20);
      assert.ok(most <= logFileOpsInFlightMax, `at most ${logFileOpsInFlightMax} at once, saw ${most}`);
      assert.ok(most > 1, "operations still overlap");
      for (const { partition } of specs) lm.getOrCreateLog("many", partition, cfg);
      assert.equal(filesOf(`${dir}/many-7`).length, 3, "a prepared log's files are all there");
    } finally {
      lm.shutdown();
    }
  } finally {
    nodeFs.rmSync(dir, { recursive: true, force: true });
  }
});
