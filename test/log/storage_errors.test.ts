// Transient storage errors (issue 11, defects 5 and 6): out of file descriptors (EMFILE) and a
// full disk (ENOSPC) refuse the operation with KAFKA_STORAGE_ERROR and never take the dir offline;
// a write cut short leaves no torn batch; the same operation succeeds once the fault is gone;
// log.dir.min.free.bytes refuses appends before the disk is full (internal topics excepted) and
// lets them resume by itself. Faults come from the faulty platform wrapper (test/helpers).
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { test } from "node:test";
import { KafkaStorageError, type Log, type LogConfig, logConfigDefaults, LogManager } from "../../src/log/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Platform } from "../../src/platform/types.ts";
import { ReplicaManager } from "../../src/replication/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { tempDir } from "../helpers/broker.ts";
import { faultyPlatform, recordingLogger } from "../helpers/faulty_platform.ts";
import { buildBatch, parseBatches, text } from "../helpers/record_batch.ts";

const platform: Platform = await loadPlatform();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cfg: LogConfig = { ...logConfigDefaults, segmentBytes: 2000, indexIntervalBytes: 200 };

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const root = tempDir("strand-storage-errors-");
  try {
    await fn(`${root}/data`);
  } finally {
    nodeFs.rmSync(root, { recursive: true, force: true });
  }
}

function append(log: Log, value: string): void {
  log.appendAsLeader(buildBatch([{ value: value.padEnd(100, ".") }]), 1, 0);
}

/** The error an operation throws, as [kind, code, message] (or "no error"). */
function storageFailure(fn: () => unknown): { kind: string; code: number; message: string } | "no error" {
  try {
    fn();
    return "no error";
  } catch (e) {
    if (!(e instanceof KafkaStorageError)) throw e;
    return { kind: e.kind, code: e.code, message: e.message };
  }
}

/** Every record value of the log, in order (reads go segment by segment). */
function values(log: Log): string[] {
  const out: string[] = [];
  for (let offset = log.logStartOffset; offset < log.logEndOffset;) {
    const batches = parseBatches(log.read(offset, 1 << 24, true).records);
    assert.ok(batches.length > 0, `a batch at ${offset}`);
    for (const b of batches) out.push(...b.records.map((r) => (text(r.value) ?? "").replace(/\.+$/, "")));
    offset = Number(batches[batches.length - 1].baseOffset) + batches[batches.length - 1].lastOffsetDelta + 1;
  }
  return out;
}

function logFileBytes(dir: string): number {
  let n = 0;
  for (const f of nodeFs.readdirSync(dir)) if (f.endsWith(".log")) n += nodeFs.statSync(`${dir}/${f}`).size;
  return n;
}

test("storage errors: ENOSPC part way through an append refuses it, cuts the torn bytes, keeps the dir online; the append succeeds once space is back", async () => {
  await withDir(async (dir) => {
    const faulty = faultyPlatform(platform);
    const logger = recordingLogger();
    const lm = new LogManager(faulty, [dir], cfg, logger);
    const failed: string[] = [];
    lm.dirFailureListeners.push((d) => failed.push(d));
    await lm.startup(0, "cluster");
    try {
      const log = lm.getOrCreateLog("t", 0, cfg);
      for (let i = 0; i < 3; i++) append(log, `a${i}`);
      const bytesBefore = logFileBytes(log.dir);
      const lift = faulty.inject(dir, "ENOSPC", { ops: ["write"], partialWrite: true });
      const r = storageFailure(() => append(log, "torn"));
      assert.notEqual(r, "no error");
      if (r !== "no error") {
        assert.equal(r.code, ErrorCode.KAFKA_STORAGE_ERROR);
        assert.equal(r.kind, "no-space");
        assert.match(r.message, /is full \(ENOSPC\)/);
      }
      assert.equal(log.logEndOffset, 3, "nothing was appended");
      assert.equal(logFileBytes(log.dir), bytesBefore, "the half-written batch was cut from the file");
      assert.deepEqual(lm.onlineDirs, [dir], "the dir stays online");
      assert.deepEqual(failed, []);
      assert.equal(log.isOffline, false);
      // Every append is refused until the free-space check finds room (no write is even tried).
      lift();
      const tries = faulty.failures.length;
      assert.notEqual(storageFailure(() => append(log, "still refused")), "no error");
      assert.equal(faulty.failures.length, tries, "refused before touching the file");
      assert.deepEqual(values(log), ["a0", "a1", "a2"], "reads go on");
      lm.checkSpace();
      append(log, "a3");
      assert.deepEqual(values(log), ["a0", "a1", "a2", "a3"]);
      assert.ok(logger.lines.some((l) => l.level === "warn" && /log dir .* is full/.test(l.msg)), "the refusal was logged");
      assert.ok(logger.lines.some((l) => l.level === "info" && l.msg === "log dir has room again: appends resume"));
      assert.ok(!logger.lines.some((l) => l.level === "error"), "no error-level line");
    } finally {
      lm.shutdown();
    }
    // Recovery after an unclean stop finds only whole batches.
    nodeFs.rmSync(`${dir}/.kafka_cleanshutdown`, { force: true });
    const again = new LogManager(platform, [dir], cfg, silentLogger);
    await again.startup(0, "cluster");
    try {
      assert.deepEqual(values(again.getLog("t", 0)!), ["a0", "a1", "a2", "a3"]);
    } finally {
      again.shutdown();
    }
  });
});

test("storage errors: ENOSPC while an index entry is written takes the whole append back", async () => {
  await withDir(async (dir) => {
    const faulty = faultyPlatform(platform);
    const lm = new LogManager(faulty, [dir], { ...cfg, segmentBytes: 1 << 20, indexIntervalBytes: 1 }, silentLogger);
    await lm.startup(0, "cluster");
    try {
      const log = lm.getOrCreateLog("t", 0, { ...cfg, segmentBytes: 1 << 20, indexIntervalBytes: 1 });
      // Index entries are buffered and written in groups: fill the buffer to the point where the
      // next append writes it, with the fault on the index files only.
      let n = 0;
      let lift: (() => void) | null = null;
      for (; n < 2000 && lift === null; n++) {
        const failuresBefore = faulty.failures.length;
        const stop = faulty.inject(`${log.dir}/00000000000000000000.index`, "ENOSPC", { ops: ["write"] });
        const r = storageFailure(() => append(log, `v${n}`));
        if (r === "no error") {
          stop();
          continue;
        }
        assert.ok(faulty.failures.length > failuresBefore);
        lift = stop;
      }
      assert.ok(lift !== null, "an index write was met");
      const end = log.logEndOffset;
      assert.equal(end, n - 1, "the refused append left nothing");
      assert.equal(logFileBytes(log.dir), log.activeSegment.sizeBytes, "the file ends where the segment does");
      lift!();
      lm.checkSpace();
      append(log, "after");
      assert.equal(log.logEndOffset, end + 1);
      assert.equal(values(log).at(-1), "after");
      assert.equal(log.read(end, 1 << 20, true).records.length > 0, true);
    } finally {
      lm.shutdown();
    }
  });
});

test("storage errors: EMFILE at a roll refuses the append, leaks nothing, keeps the dir online; the roll succeeds once descriptors are free", async () => {
  await withDir(async (dir) => {
    const faulty = faultyPlatform(platform);
    const logger = recordingLogger();
    const lm = new LogManager(faulty, [dir], cfg, logger);
    await lm.startup(0, "cluster");
    try {
      const log = lm.getOrCreateLog("t", 0, cfg);
      while (log.segmentCount === 1) {
        const lift = faulty.inject(dir, "EMFILE", { ops: ["open"] });
        const r = storageFailure(() => append(log, `v${log.logEndOffset}`));
        lift();
        if (r === "no error") continue;
        assert.equal(r.code, ErrorCode.KAFKA_STORAGE_ERROR);
        assert.equal(r.kind, "resource");
        assert.match(r.message, /out of file descriptors/);
        assert.deepEqual(lm.onlineDirs, [dir]);
        const names = nodeFs.readdirSync(log.dir).filter((f) => f.endsWith(".log"));
        assert.deepEqual(names, ["00000000000000000000.log"], "the half-made segment was removed");
        // With descriptors back, the same append rolls and succeeds.
        append(log, `v${log.logEndOffset}`);
      }
      assert.equal(log.segmentCount, 2);
      const warns = logger.lines.filter((l) => l.level === "warn" && /file descriptors/.test(l.msg));
      assert.equal(warns.length, 1, "logged at warn");
      assert.ok(!logger.lines.some((l) => l.level === "error"));
    } finally {
      lm.shutdown();
    }
  });
});

test("storage errors: warn lines for repeated transient errors are rate-limited per dir and kind; checkpoint writes at ENOSPC do not throw", async () => {
  await withDir(async (dir) => {
    const faulty = faultyPlatform(platform);
    const logger = recordingLogger();
    const lm = new LogManager(faulty, [dir], cfg, logger);
    await lm.startup(0, "cluster");
    try {
      const log = lm.getOrCreateLog("t", 0, cfg);
      append(log, "x");
      const lift = faulty.inject(dir, "ENOSPC", { ops: ["write", "writeAtomic"] });
      for (let i = 0; i < 20; i++) {
        lm.checkpointHighWatermarks();
        lm.checkpointRecoveryOffsets();
      }
      lift();
      assert.deepEqual(lm.onlineDirs, [dir]);
      const warns = logger.lines.filter((l) => l.level === "warn" && /is full/.test(l.msg));
      assert.ok(warns.length >= 1 && warns.length <= 2, `rate-limited (got ${warns.length} lines)`);
      assert.equal(lm.transientErrorCounts.get(`${dir}\tENOSPC`), 40);
      assert.deepEqual(nodeFs.readdirSync(dir).filter((f) => f.endsWith(".tmp")), [], "no torn temp file left");
      lm.checkSpace();
      lm.checkpointHighWatermarks();
    } finally {
      lm.shutdown();
    }
  });
});

test("storage errors: log.dir.min.free.bytes refuses appends below it (naming the dir and free bytes), lets internal topics through, and resumes by itself", async () => {
  await withDir(async (dir) => {
    const faulty = faultyPlatform(platform);
    const logger = recordingLogger();
    const lm = new LogManager(faulty, [dir], cfg, logger, { minFreeBytes: 1_000_000 });
    await lm.startup(0, "cluster");
    try {
      const log = lm.getOrCreateLog("t", 0, cfg);
      const offsets = lm.getOrCreateLog("__consumer_offsets", 0, cfg);
      append(log, "before");
      faulty.setUsableBytes(dir, 999_000);
      lm.checkSpace();
      const r = storageFailure(() => append(log, "refused"));
      assert.notEqual(r, "no error");
      if (r !== "no error") {
        assert.equal(r.code, ErrorCode.KAFKA_STORAGE_ERROR);
        assert.ok(r.message.includes(dir) && r.message.includes("999000") && r.message.includes("log.dir.min.free.bytes=1000000"), r.message);
      }
      append(offsets, "commit"); // the reserve is for these
      assert.deepEqual(values(log), ["before"], "reads go on");
      assert.equal(lm.describeDirs()[0].appendRefusal !== null, true);

      // Between checks, appended bytes count against the last figure: a burst cannot run far past.
      faulty.setUsableBytes(dir, 1_000_300);
      lm.checkSpace();
      append(log, "fits");
      assert.notEqual(storageFailure(() => append(log, "past the threshold")), "no error");

      faulty.setUsableBytes(dir, null);
      lm.checkSpace();
      append(log, "resumed");
      assert.deepEqual(values(log), ["before", "fits", "resumed"]);
      assert.equal(lm.describeDirs()[0].appendRefusal, null);
      const refusals = logger.lines.filter((l) => l.level === "warn" && /below log.dir.min.free.bytes/.test(l.msg));
      assert.equal(refusals.length, 2, "one line each time appends stop");
    } finally {
      lm.shutdown();
    }
  });
});

test("storage errors: a log that cannot be opened at start-up for lack of descriptors stays in its dir, which stays online, and opens once they are free", async () => {
  await withDir(async (dir) => {
    const first = new LogManager(platform, [dir], cfg, silentLogger);
    await first.startup(0, "cluster");
    const log = first.getOrCreateLog("t", 0, cfg);
    for (let i = 0; i < 30; i++) append(log, `m${i}`);
    first.getOrCreateLog("u", 0, cfg);
    first.shutdown();

    const faulty = faultyPlatform(platform);
    const lift = faulty.inject(`${dir}/t-0`, "EMFILE", { ops: ["open"] });
    const logger = recordingLogger();
    const lm = new LogManager(faulty, [dir], cfg, logger);
    await lm.startup(0, "cluster");
    try {
      assert.deepEqual(lm.onlineDirs, [dir], "the dir is online");
      assert.ok(lm.getLog("u", 0) !== undefined, "the other log loaded");
      assert.deepEqual(lm.unloadedLogKeys, ["t-0"]);
      const r = storageFailure(() => lm.getOrCreateLog("t", 0, cfg, false));
      assert.ok(r !== "no error" && r.kind === "resource", JSON.stringify(r));
      lift();
      const reopened = lm.getOrCreateLog("t", 0, cfg, false);
      assert.equal(reopened.logEndOffset, 30, "the same log, not a new empty one");
      assert.equal(values(reopened)[29], "m29");
      assert.deepEqual(lm.unloadedLogKeys, []);
      assert.ok(!logger.lines.some((l) => l.level === "error"));
    } finally {
      lm.shutdown();
    }
  });
});

test("storage errors: a shutdown whose flush meets ENOSPC leaves no clean-shutdown marker (the logs are recovered next time)", async () => {
  await withDir(async (dir) => {
    const faulty = faultyPlatform(platform);
    const lm = new LogManager(faulty, [dir], cfg, silentLogger);
    await lm.startup(0, "cluster");
    const log = lm.getOrCreateLog("t", 0, cfg);
    append(log, "x");
    faulty.inject(dir, "ENOSPC", { ops: ["write", "writeAtomic", "fsync"] });
    lm.shutdown();
    assert.equal(nodeFs.existsSync(`${dir}/.kafka_cleanshutdown`), false);
    const again = new LogManager(platform, [dir], cfg, silentLogger);
    await again.startup(0, "cluster");
    try {
      assert.deepEqual(values(again.getLog("t", 0)!), ["x"]);
    } finally {
      again.shutdown();
    }
  });
});

test("storage errors: the ReplicaManager answers KAFKA_STORAGE_ERROR for a produce at ENOSPC, succeeds after; a partition whose log cannot be opened (EMFILE) is retried until it can", async () => {
  await withDir(async (dir) => {
    const faulty = faultyPlatform(platform);
    const lm = new LogManager(faulty, [dir], cfg, silentLogger);
    await lm.startup(0, "cluster");
    const rm = new ReplicaManager(0, lm, platform.clock, silentLogger);
    const topicCfg = { ...cfg, maxMessageBytes: 1 << 20, minInsyncReplicas: 1 };
    const state = (topic: string) => ({
      topic,
      partition: 0,
      topicId: new Uint8Array(16),
      controllerEpoch: 1,
      leader: 0,
      leaderEpoch: 0,
      isr: [0],
      replicas: [0],
      partitionEpoch: 0,
      isNew: true,
    });
    try {
      assert.equal(rm.becomeLeaderOrFollower(state("t"), topicCfg), ErrorCode.NONE);
      const ok = rm.appendToPartition("t", 0, buildBatch([{ value: "a" }]), 1 << 20);
      assert.equal(ok.errorCode, ErrorCode.NONE);
      const lift = faulty.inject(dir, "ENOSPC", { ops: ["write"], partialWrite: true });
      const refused = rm.appendToPartition("t", 0, buildBatch([{ value: "b" }]), 1 << 20);
      assert.equal(refused.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
      assert.match(refused.errorMessage ?? "", /full/);
      lift();
      lm.checkSpace();
      assert.equal(rm.appendToPartition("t", 0, buildBatch([{ value: "c" }]), 1 << 20).baseOffset, 1);

      const stop = faulty.inject(dir, "EMFILE", { ops: ["open"] });
      // NONE to the controller (it must not take the replica offline for a passing failure); the
      // partition itself answers KAFKA_STORAGE_ERROR until its log opens.
      assert.equal(rm.becomeLeaderOrFollower(state("u"), topicCfg), ErrorCode.NONE);
      assert.equal(rm.isOffline("u", 0), true);
      assert.match(rm.unavailableReason("u", 0) ?? "", /cannot be opened for now/);
      assert.equal(rm.appendToPartition("u", 0, buildBatch([{ value: "x" }]), 1 << 20).errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
      stop();
      const deadline = Date.now() + 20_000;
      while (rm.isOffline("u", 0) && Date.now() < deadline) await sleep(50);
      assert.equal(rm.isOffline("u", 0), false, "the retry opened it");
      assert.equal(rm.getPartition("u", 0)?.isLeader, true);
      assert.equal(rm.appendToPartition("u", 0, buildBatch([{ value: "x" }]), 1 << 20).errorCode, ErrorCode.NONE);
      assert.deepEqual(lm.onlineDirs, [dir]);
    } finally {
      rm.shutdown();
      lm.shutdown();
    }
  });
});

test("storage errors: becoming leader while leader-epoch-checkpoint cannot be written (ENOSPC) succeeds; the file is written at the next flush", async () => {
  await withDir(async (dir) => {
    const faulty = faultyPlatform(platform);
    const lm = new LogManager(faulty, [dir], cfg, silentLogger);
    await lm.startup(0, "cluster");
    const rm = new ReplicaManager(0, lm, platform.clock, silentLogger);
    const topicCfg = { ...cfg, maxMessageBytes: 1 << 20, minInsyncReplicas: 1 };
    const state = (leaderEpoch: number, partitionEpoch: number) => ({
      topic: "t", partition: 0, topicId: new Uint8Array(16), controllerEpoch: 1, leader: 0, leaderEpoch, isr: [0], replicas: [0], partitionEpoch, isNew: true,
    });
    try {
      assert.equal(rm.becomeLeaderOrFollower(state(0, 0), topicCfg), ErrorCode.NONE);
      assert.equal(rm.appendToPartition("t", 0, buildBatch([{ value: "a" }]), 1 << 20).errorCode, ErrorCode.NONE);
      // The checkpoint is written unsynced on becoming leader (plain writes) and synced at flush
      // (writeFileAtomic): both fail.
      const lift = faulty.inject(dir, "ENOSPC", { ops: ["writeAtomic", "write"] });
      assert.equal(rm.becomeLeaderOrFollower(state(1, 1), topicCfg), ErrorCode.NONE, "no exception out of LeaderAndIsr");
      assert.equal(rm.getPartition("t", 0)?.leaderEpoch, 1);
      const file = `${dir}/t-0/leader-epoch-checkpoint`;
      // A new leader's entry waits for the next flush anyway (assignDeferred): maybe no file yet.
      const before = nodeFs.existsSync(file) ? nodeFs.readFileSync(file, "utf8") : "";
      assert.doesNotMatch(before, /^1 1$/m, "not written yet");
      lift();
      lm.checkSpace();
      const log = lm.getLog("t", 0)!;
      log.flush();
      assert.match(nodeFs.readFileSync(file, "utf8"), /^1 1$/m, "written by the flush");
      assert.equal(rm.appendToPartition("t", 0, buildBatch([{ value: "b" }]), 1 << 20).baseOffset, 1);
    } finally {
      rm.shutdown();
      lm.shutdown();
    }
  });
});

test("storage errors: a log dir that cannot be read at start-up for lack of descriptors is tried again, not taken offline", async () => {
  await withDir(async (dir) => {
    const faulty = faultyPlatform(platform);
    const logger = recordingLogger();
    // meta.properties cannot be written (EMFILE) for the first second or so of the start-up.
    const lift = faulty.inject(dir, "EMFILE", { ops: ["writeAtomic"] });
    setTimeout(lift, 1_500);
    const lm = new LogManager(faulty, [dir], cfg, logger);
    await lm.startup(0, "cluster");
    try {
      assert.deepEqual(lm.onlineDirs, [dir]);
      assert.ok(nodeFs.existsSync(`${dir}/meta.properties`));
      const retries = logger.lines.filter((l) => l.msg === "cannot load log dir for now; retrying");
      assert.ok(retries.length >= 1, "retried");
      assert.ok(retries.every((l) => l.level === "warn"));
      append(lm.getOrCreateLog("t", 0, cfg), "x");
    } finally {
      lm.shutdown();
    }
  });
});
