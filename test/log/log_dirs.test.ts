// Several log dirs (issue 3, item 6): placement of new partitions on the online dir holding the
// fewest; a dir that fails (an I/O error from append, read, flush, roll, retention, a checkpoint,
// or loading it at start-up) goes offline alone, logged once, its logs closed; the others keep
// working; an offline dir gets no checkpoints and no clean-shutdown marker, and is recovered when
// it comes back. Broker-level: DescribeLogDirs sizes against the files on disk, produce / fetch /
// ListOffsets / Metadata with one dir failed, start-up with a dir unreadable, every dir failed.
// Failures are simulated by a platform wrapper (root ignores chmod) or by real files in the way.
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { test } from "node:test";
import { KafkaStorageError, type Log, type LogConfig, logConfigDefaults, LogDirsFailedError, LogManager } from "../../src/log/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Platform } from "../../src/platform/types.ts";
import { DescribeLogDirsApi, MetadataApi } from "../../src/protocol/api/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { LogDirEventNotificationZNode } from "../../src/registry/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { startBroker, tempDir } from "../helpers/broker.ts";
import { faultyPlatform, recordingLogger } from "../helpers/faulty_platform.ts";
import { buildBatch } from "../helpers/record_batch.ts";
import { createTopic, fetchOnce, listOffset, produce, WireClient } from "../helpers/wire.ts";

const platform: Platform = await loadPlatform();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cfg: LogConfig = { ...logConfigDefaults, segmentBytes: 2000, indexIntervalBytes: 200 };

/** A temp root with dirs a, b, c (not created: the LogManager makes them); removed afterwards. */
async function withDirs(fn: (root: string, dirs: string[]) => Promise<void>): Promise<void> {
  const root = tempDir("strand-logdirs-");
  try {
    await fn(root, ["a", "b", "c"].map((d) => `${root}/${d}`));
  } finally {
    nodeFs.rmSync(root, { recursive: true, force: true });
  }
}

function appendN(log: Log, n: number): void {
  for (let i = 0; i < n; i++) {
    const o = log.logEndOffset;
    log.appendAsLeader(buildBatch([{ value: `v${o}`.padEnd(100, ".") }]), 1, 0);
  }
  log.updateHighWatermark(log.logEndOffset);
}

/** Partition keys per dir, as the LogManager placed them. */
function placement(lm: LogManager): Map<string, string[]> {
  const out = new Map<string, string[]>(lm.logDirs.map((d) => [d, []]));
  for (const log of lm.allLogs()) out.get(log.logDir)!.push(`${log.topic}-${log.partition}`);
  return out;
}

function storageCode(fn: () => unknown): number | string {
  try {
    fn();
    return "no error";
  } catch (e) {
    return e instanceof KafkaStorageError ? e.code : `${(e as Error).name}: ${(e as Error).message}`;
  }
}

// ---- LogManager ------------------------------------------------------------------------------

test("log dirs: new partitions go to the online dir holding the fewest, never to an offline one", async () => {
  await withDirs(async (_root, dirs) => {
    const faulty = faultyPlatform(platform);
    const lm = new LogManager(faulty, dirs, cfg, silentLogger);
    await lm.startup(0, "cluster");
    try {
      for (let p = 0; p < 5; p++) lm.getOrCreateLog("t", p, cfg);
      assert.deepEqual([...placement(lm).values()].map((v) => v.length), [2, 2, 1], "round by fewest, first dir first");
      lm.getOrCreateLog("u", 0, cfg);
      assert.deepEqual([...placement(lm).values()].map((v) => v.length), [2, 2, 2]);
      for (const d of dirs) for (const key of placement(lm).get(d)!) assert.ok(nodeFs.existsSync(`${d}/${key}`), `${key} on disk in ${d}`);

      faulty.fail(dirs[1]);
      lm.checkpointHighWatermarks(); // the checkpoint write is what notices
      assert.deepEqual(lm.offlineLogDirs, [dirs[1]]);
      for (let p = 0; p < 4; p++) lm.getOrCreateLog("v", p, cfg);
      const counts = [...placement(lm).values()].map((v) => v.length);
      assert.deepEqual(counts, [4, 0, 4], "the offline dir's logs are gone from the manager; new ones avoid it");

      // A partition that lived in the failed dir is never made again elsewhere; a partition the
      // controller did not just create is refused while any dir is offline (Kafka's isNew rule).
      assert.equal(storageCode(() => lm.getOrCreateLog("t", 1, cfg)), ErrorCode.KAFKA_STORAGE_ERROR);
      assert.equal(storageCode(() => lm.getOrCreateLog("w", 0, cfg, false)), ErrorCode.KAFKA_STORAGE_ERROR);
      assert.equal(storageCode(() => lm.getOrCreateLog("w", 0, cfg, true)), "no error");
    } finally {
      lm.shutdown();
    }
  });
});

test("log dirs: an append's I/O error takes only its dir offline, logged once; the other dirs keep appending and reading", async () => {
  await withDirs(async (_root, dirs) => {
    const faulty = faultyPlatform(platform);
    const logger = recordingLogger();
    const lm = new LogManager(faulty, dirs, cfg, logger);
    const told: { dir: string; partitions: string[] }[] = [];
    lm.dirFailureListeners.push((dir, ps) => told.push({ dir, partitions: ps.map((p) => `${p.topic}-${p.partition}`).sort() }));
    await lm.startup(0, "cluster");
    try {
      const logs = [0, 1, 2, 3, 4, 5].map((p) => lm.getOrCreateLog("t", p, cfg));
      for (const log of logs) appendN(log, 5);
      const inB = logs.filter((l) => l.logDir === dirs[1]);
      assert.equal(inB.length, 2);

      faulty.fail(dirs[1]);
      let err: unknown;
      try {
        appendN(inB[0], 1);
      } catch (e) {
        err = e;
      }
      assert.ok(err instanceof KafkaStorageError, `a KafkaStorageError, got ${err}`);
      assert.equal(err.code, ErrorCode.KAFKA_STORAGE_ERROR);
      assert.equal(err.logDir, dirs[1]);
      assert.deepEqual(told, [{ dir: dirs[1], partitions: inB.map((l) => `${l.topic}-${l.partition}`).sort() }]);
      assert.ok(inB.every((l) => l.isOffline), "every log of the dir is closed");

      // Later operations on the dir's logs fail at once, without touching the files again.
      const failuresBefore = faulty.failures.length;
      assert.equal(storageCode(() => inB[1].read(0, 1 << 20, true)), ErrorCode.KAFKA_STORAGE_ERROR);
      assert.equal(storageCode(() => inB[1].appendAsLeader(buildBatch([{ value: "x" }]), 1, 0)), ErrorCode.KAFKA_STORAGE_ERROR);
      assert.equal(storageCode(() => inB[1].offsetForTimestamp(0)), ErrorCode.KAFKA_STORAGE_ERROR);
      assert.equal(faulty.failures.length, failuresBefore, "an offline log does not touch its files");
      lm.flushAll();
      lm.cleanupLogs();
      lm.checkpointRecoveryOffsets();
      assert.equal(faulty.failures.length, failuresBefore, "the tasks skip the offline dir");

      for (const log of logs.filter((l) => l.logDir !== dirs[1])) {
        appendN(log, 20); // rolls too (segment.bytes 2000)
        assert.equal(log.logEndOffset, 25);
        assert.ok(log.segmentCount > 1);
        assert.ok(log.read(0, 1 << 20, true).records.length > 0);
      }
      const errors = logger.lines.filter((l) => l.level === "error");
      assert.equal(errors.length, 1, `one error line: ${JSON.stringify(errors)}`);
      assert.equal(errors[0].fields.dir, dirs[1]);
      assert.match(String(errors[0].fields.err), /EIO/);
      assert.equal(told.length, 1, "listeners told once");
    } finally {
      lm.shutdown();
    }
  });
});

test("log dirs: a failing read, flush, roll, retention or checkpoint takes the dir offline", async () => {
  const kinds: Record<string, (lm: LogManager, log: Log) => void> = {
    read: (_lm, log) => void storageCode(() => log.read(0, 1 << 20, true)),
    flush: (lm) => lm.flushAll(),
    roll: (_lm, log) => void storageCode(() => log.roll()),
    retention: (lm) => lm.cleanupLogs(),
    "recovery-point checkpoint": (lm) => lm.checkpointRecoveryOffsets(),
    "high-watermark checkpoint": (lm) => lm.checkpointHighWatermarks(),
  };
  for (const [kind, run] of Object.entries(kinds)) {
    await withDirs(async (_root, dirs) => {
      const faulty = faultyPlatform(platform);
      const retained = { ...cfg, retentionMs: 0 }; // every closed segment is past retention
      const lm = new LogManager(faulty, dirs.slice(0, 2), retained, silentLogger);
      await lm.startup(0, "cluster");
      try {
        const a = lm.getOrCreateLog("t", 0, retained);
        const b = lm.getOrCreateLog("t", 1, retained);
        appendN(a, 40);
        appendN(b, 40); // several segments each; the tail unflushed
        faulty.fail(dirs[1]);
        run(lm, b);
        assert.deepEqual(lm.offlineLogDirs, [dirs[1]], kind);
        assert.ok(b.isOffline && !a.isOffline, kind);
        appendN(a, 1);
        assert.equal(a.logEndOffset, 41, kind);
      } finally {
        lm.shutdown();
      }
    });
  }
});

test("log dirs: shutdown leaves an offline dir without checkpoints or marker; the next start-up recovers its logs", async () => {
  await withDirs(async (_root, dirs) => {
    const faulty = faultyPlatform(platform);
    const lm = new LogManager(faulty, dirs, cfg, silentLogger);
    await lm.startup(0, "cluster");
    const logs = [0, 1, 2].map((p) => lm.getOrCreateLog("t", p, cfg));
    for (const log of logs) appendN(log, 30);
    lm.checkpointRecoveryOffsets();
    const before = nodeFs.readFileSync(`${dirs[2]}/recovery-point-offset-checkpoint`, "utf8");
    faulty.fail(dirs[2]);
    lm.flushAll();
    assert.deepEqual(lm.offlineLogDirs, [dirs[2]]);
    lm.shutdown();
    for (const d of dirs.slice(0, 2)) assert.ok(nodeFs.existsSync(`${d}/.kafka_cleanshutdown`), `marker in ${d}`);
    assert.ok(!nodeFs.existsSync(`${dirs[2]}/.kafka_cleanshutdown`), "no marker in the failed dir");
    assert.equal(nodeFs.readFileSync(`${dirs[2]}/recovery-point-offset-checkpoint`, "utf8"), before, "its checkpoints untouched");

    // The disk is back: its log is recovered (no marker) and holds every record.
    const logger = recordingLogger();
    const again = new LogManager(platform, dirs, cfg, logger);
    await again.startup(0, "cluster");
    try {
      assert.deepEqual(again.offlineLogDirs, []);
      for (let p = 0; p < 3; p++) assert.equal(again.getLog("t", p)?.logEndOffset, 30, `t-${p}`);
      assert.ok(logger.lines.some((l) => l.msg.includes("not shut down cleanly") && l.fields.dir === dirs[2]));
      assert.ok(!logger.lines.some((l) => l.msg.includes("not shut down cleanly") && l.fields.dir !== dirs[2]));
    } finally {
      again.shutdown();
    }
  });
});

test("log dirs: start-up with a dir that cannot be made or a log that cannot be opened leaves only that dir offline", async () => {
  await withDirs(async (root, dirs) => {
    let lm = new LogManager(platform, dirs, cfg, silentLogger);
    await lm.startup(0, "cluster");
    for (let p = 0; p < 3; p++) appendN(lm.getOrCreateLog("t", p, cfg), 10);
    const where = placement(lm);
    lm.shutdown();

    // dir c: a regular file where the dir should be (an unmountable or unreadable disk).
    nodeFs.rmSync(dirs[2], { recursive: true });
    nodeFs.writeFileSync(dirs[2], "not a dir");
    // dir b: a segment replaced by a directory, so opening it fails (EISDIR).
    const [keyB] = where.get(dirs[1])!;
    const seg = `${dirs[1]}/${keyB}/00000000000000000000.log`;
    nodeFs.rmSync(seg);
    nodeFs.mkdirSync(seg);
    const logger = recordingLogger();
    lm = new LogManager(platform, dirs, cfg, logger);
    await lm.startup(0, "cluster");
    try {
      assert.deepEqual(lm.offlineLogDirs, [dirs[1], dirs[2]].sort());
      assert.deepEqual(lm.onlineDirs, [dirs[0]]);
      const [keyA] = where.get(dirs[0])!;
      const a = lm.allLogs();
      assert.deepEqual(a.map((l) => `${l.topic}-${l.partition}`), [keyA]);
      appendN(a[0], 1);
      assert.equal(a[0].logEndOffset, 11);
      const failed = logger.lines.filter((l) => l.level === "error" && l.msg.includes("log dir failed")).map((l) => l.fields.dir);
      assert.deepEqual(failed.sort(), [dirs[1], dirs[2]].sort());
    } finally {
      lm.shutdown();
    }
    assert.equal(nodeFs.readFileSync(dirs[2], "utf8"), "not a dir", "nothing written into a failed dir");

    // Every dir failing stops start-up with Kafka's reason.
    nodeFs.rmSync(dirs[0], { recursive: true });
    nodeFs.writeFileSync(dirs[0], "");
    const none = new LogManager(platform, [dirs[0], dirs[2]], cfg, silentLogger);
    await assert.rejects(none.startup(0, "cluster"), (e: Error) => e instanceof LogDirsFailedError && /none of the log dirs/.test(e.message));
    assert.ok(nodeFs.existsSync(root));
  });
});

test("log dirs: the same partition in two dirs stops start-up, naming both", async () => {
  await withDirs(async (_root, dirs) => {
    for (const d of dirs.slice(0, 2)) {
      const lm = new LogManager(platform, [d], cfg, silentLogger);
      await lm.startup(0, "cluster");
      appendN(lm.getOrCreateLog("dup", 0, cfg), 1);
      lm.shutdown();
    }
    const lm = new LogManager(platform, dirs.slice(0, 2), cfg, silentLogger);
    await assert.rejects(lm.startup(0, "cluster"), (e: Error) => e.message.includes("dup-0") && e.message.includes(dirs[0]) && e.message.includes(dirs[1]));
    lm.shutdown();
  });
});

// ---- Broker ----------------------------------------------------------------------------------

interface DirResult {
  errorCode: number;
  logDir: string;
  topics: { name: string; partitions: { partitionIndex: number; partitionSize: bigint; offsetLag: bigint; isFutureKey: boolean }[] }[];
  totalBytes: bigint;
  usableBytes: bigint;
}

async function describeLogDirs(c: WireClient, version: number, topics: { topic: string; partitions: number[] }[] | null): Promise<DirResult[]> {
  const res = await c.request(DescribeLogDirsApi, version, { topics });
  assert.equal(res.throttleTimeMs, 0);
  if (version >= 3) assert.equal(res.errorCode, 0);
  return res.results as DirResult[];
}

/** Sum of the `.log` files of a partition directory: what Kafka's log.size reports. */
function segmentBytesOnDisk(partitionDir: string): bigint {
  let total = 0;
  for (const n of nodeFs.readdirSync(partitionDir)) if (n.endsWith(".log")) total += nodeFs.statSync(`${partitionDir}/${n}`).size;
  return BigInt(total);
}

function dirOfPartition(dirs: string[], topic: string, p: number): string {
  const found = dirs.filter((d) => nodeFs.existsSync(`${d}/${topic}-${p}`));
  assert.equal(found.length, 1, `${topic}-${p} is in exactly one dir`);
  return found[0];
}

async function metadataPartitions(c: WireClient, topic: string): Promise<Struct[]> {
  const res = await c.request(MetadataApi, 12, { topics: [{ topicId: new Uint8Array(16), name: topic }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  const t = (res.topics as Struct[])[0];
  return (t.partitions as Struct[]).sort((a, b) => (a.partitionIndex as number) - (b.partitionIndex as number));
}

function dirsOverride(root: string): { dirs: string[]; overrides: Record<string, string> } {
  const dirs = ["a", "b", "c"].map((d) => `${root}/${d}`);
  return { dirs, overrides: { "log.dirs": dirs.join(","), "log.segment.bytes": "1500", "log.retention.ms": "-1" } };
}

test("log dirs: a topic spreads over three dirs; DescribeLogDirs v0-4 reports each partition's size as on disk", async () => {
  const root = tempDir("strand-logdirs-broker-");
  const { dirs, overrides } = dirsOverride(root);
  const b = await startBroker(overrides, root);
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "spread", { numPartitions: 6 })).errorCode, 0);
    const sent = [3, 0, 25, 7, 1, 12];
    for (let p = 0; p < 6; p++) {
      for (let i = 0; i < sent[p]; i++) assert.equal((await produce(c, "spread", p, buildBatch([{ value: `r${i}`.padEnd(90, "-") }]), 1)).errorCode, 0);
    }
    const where = [0, 1, 2, 3, 4, 5].map((p) => dirOfPartition(dirs, "spread", p));
    assert.deepEqual(dirs.map((d) => where.filter((w) => w === d).length), [2, 2, 2], "two partitions per dir");

    for (const version of [0, 1, 2, 3, 4]) {
      const results = await describeLogDirs(c, version, null);
      assert.deepEqual(results.map((r) => [r.logDir, r.errorCode]), dirs.map((d) => [d, 0]), `v${version}: every dir, in log.dirs order`);
      for (const r of results) {
        const spread = r.topics.find((t) => t.name === "spread");
        assert.ok(spread, `v${version} ${r.logDir} lists the topic`);
        const expected = [0, 1, 2, 3, 4, 5].filter((p) => where[p] === r.logDir);
        assert.deepEqual(spread.partitions.map((p) => p.partitionIndex), expected);
        for (const p of spread.partitions) {
          assert.equal(p.partitionSize, segmentBytesOnDisk(`${r.logDir}/spread-${p.partitionIndex}`), `v${version} spread-${p.partitionIndex}`);
          assert.equal(p.offsetLag, 0n);
          assert.equal(p.isFutureKey, false);
        }
        if (version >= 4) {
          const fs = nodeFs.statfsSync(r.logDir);
          const unit = BigInt((fs as { frsize?: number }).frsize ?? fs.bsize);
          assert.equal(r.totalBytes, BigInt(fs.blocks) * unit);
          assert.ok(r.usableBytes > 0n && r.usableBytes <= r.totalBytes);
        } else {
          assert.equal(r.totalBytes, -1n, "absent before v4: the default");
        }
      }
    }
    const sizes = (await describeLogDirs(c, 4, null)).flatMap((r) => r.topics.flatMap((t) => t.partitions.map((p) => [p.partitionIndex, p.partitionSize])));
    assert.ok(sizes.some(([p, s]) => p === 2 && (s as bigint) > 1500n), "a partition past one segment counts every segment");
    assert.ok(sizes.some(([p, s]) => p === 1 && s === 0n), "an empty partition is listed with size 0");

    // Only the partitions asked for; unknown ones are not listed; a dir with none lists no topic.
    const some = await describeLogDirs(c, 2, [{ topic: "spread", partitions: [2, 5, 40] }, { topic: "nope", partitions: [0] }]);
    const listed = some.flatMap((r) => r.topics.flatMap((t) => t.partitions.map((p) => `${r.logDir}:${t.name}-${p.partitionIndex}`)));
    assert.deepEqual(listed.sort(), [`${where[2]}:spread-2`, `${where[5]}:spread-5`].sort());
    assert.deepEqual((await describeLogDirs(c, 4, [])).map((r) => r.topics), [[], [], []], "an empty list asks for nothing");
  } finally {
    c.close();
    await b.stop();
  }
});

test("log dirs: a failed dir takes only its partitions offline; produce, fetch, ListOffsets and Metadata say so; the rest keeps serving", async () => {
  const root = tempDir("strand-logdirs-broker-");
  const { dirs, overrides } = dirsOverride(root);
  const faulty = faultyPlatform(await loadPlatform());
  const logger = recordingLogger();
  const b = await startBroker(overrides, root, logger, faulty);
  const c = await WireClient.connect(b.port);
  const zk = b.registrySession();
  try {
    assert.equal((await createTopic(c, "io", { numPartitions: 6 })).errorCode, 0);
    for (let p = 0; p < 6; p++) {
      for (let i = 0; i < 3; i++) assert.equal((await produce(c, "io", p, buildBatch([{ value: `before-${i}` }]), 1)).errorCode, 0);
    }
    const where = [0, 1, 2, 3, 4, 5].map((p) => dirOfPartition(dirs, "io", p));
    const failed = dirs[1]; // not dirs[0]: the embedded registry lives there
    const down = [0, 1, 2, 3, 4, 5].filter((p) => where[p] === failed);
    const up = [0, 1, 2, 3, 4, 5].filter((p) => where[p] !== failed);
    // A consumer waiting on a partition of the dir must be answered when it fails, not at max wait.
    const waiting = WireClient.connect(b.port).then(async (w) => {
      const started = Date.now();
      const r = await fetchOnce(w, "io", down[1], 3n, { maxWaitMs: 20_000, minBytes: 1 });
      w.close();
      return { errorCode: r.errorCode, ms: Date.now() - started };
    });
    await sleep(100);

    faulty.fail(failed);
    const first = await produce(c, "io", down[0], buildBatch([{ value: "lost" }]), 1);
    assert.equal(first.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, "the append that hits the failure");
    const waited = await waiting;
    assert.equal(waited.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    assert.ok(waited.ms < 10_000, `the waiting fetch was answered at once (${waited.ms} ms)`);

    for (const p of down) {
      assert.equal((await produce(c, "io", p, buildBatch([{ value: "x" }]), 1)).errorCode, ErrorCode.KAFKA_STORAGE_ERROR, `produce io-${p}`);
      assert.equal((await fetchOnce(c, "io", p, 0n)).errorCode, ErrorCode.KAFKA_STORAGE_ERROR, `fetch io-${p}`);
      assert.equal((await listOffset(c, "io", p, -1n)).errorCode, ErrorCode.KAFKA_STORAGE_ERROR, `list offsets io-${p}`);
    }
    for (const p of up) {
      const r = await produce(c, "io", p, buildBatch([{ value: "after" }]), 1);
      assert.deepEqual([r.errorCode, r.baseOffset], [0, 3n], `produce io-${p}`);
      const f = await fetchOnce(c, "io", p, 0n);
      assert.equal(f.errorCode, 0);
      assert.equal(f.highWatermark, 4n);
      assert.deepEqual(await listOffset(c, "io", p, -1n), { errorCode: 0, offset: 4n });
    }

    const md = await metadataPartitions(c, "io");
    for (const p of md) {
      const i = p.partitionIndex as number;
      if (down.includes(i)) {
        assert.deepEqual([p.errorCode, p.leaderId, p.offlineReplicas], [ErrorCode.LEADER_NOT_AVAILABLE, -1, [0]], `io-${i}`);
      } else {
        assert.deepEqual([p.errorCode, p.leaderId, p.offlineReplicas], [0, 0, []], `io-${i}`);
      }
    }
    const described = await describeLogDirs(c, 4, null);
    assert.deepEqual(described.map((r) => r.errorCode), dirs.map((d) => (d === failed ? ErrorCode.KAFKA_STORAGE_ERROR : 0)));
    const offline = described.find((r) => r.logDir === failed)!;
    assert.deepEqual([offline.topics, offline.totalBytes, offline.usableBytes], [[], -1n, -1n]);

    // New partitions go to the healthy dirs only.
    assert.equal((await createTopic(c, "fresh", { numPartitions: 4 })).errorCode, 0);
    for (let p = 0; p < 4; p++) {
      assert.notEqual(dirOfPartition(dirs.filter((d) => d !== failed), "fresh", p), failed);
      assert.equal((await produce(c, "fresh", p, buildBatch([{ value: "new" }]), 1)).errorCode, 0);
    }

    // Logged once at error level naming the dir; the controller was told through the znode
    // (and, as Kafka's does, read and deleted it).
    const errors = logger.lines.filter((l) => l.level === "error");
    assert.deepEqual(errors.map((l) => [l.msg, l.fields.dir]), [["log dir failed; its partitions are offline", failed]]);
    const deadline = Date.now() + 5000;
    while (!logger.lines.some((l) => l.msg === "brokers reported log dir failures") && Date.now() < deadline) await sleep(20);
    const reported = logger.lines.find((l) => l.msg === "brokers reported log dir failures");
    assert.deepEqual(reported?.fields.brokers, [0]);
    assert.ok(logger.lines.some((l) => l.msg === "told the controller of a log dir failure" && String(l.fields.znode).startsWith("/log_dir_event_notification/log_dir_event_")));
    assert.deepEqual(await zk.getChildren(LogDirEventNotificationZNode.path), [], "the controller deleted the notification");
    // Then asked the broker, which answered KAFKA_STORAGE_ERROR for the failed dir's replicas: with
    // no other replica to lead, those partitions are offline in the registry too (the ISR keeps
    // its last member), and the others keep their leader.
    const state = async (p: number) => JSON.parse(new TextDecoder().decode((await zk.getData(`/brokers/topics/io/partitions/${p}/state`)).data));
    const stateDeadline = Date.now() + 10_000;
    while ((await state(down[0])).leader !== -1 && Date.now() < stateDeadline) await sleep(20);
    for (const p of [0, 1, 2, 3, 4, 5]) {
      const st = await state(p);
      assert.deepEqual([st.leader, st.isr], down.includes(p) ? [-1, [0]] : [0, [0]], `io-${p} in the registry`);
    }
  } finally {
    c.close();
    await zk.close();
    await b.stop();
  }
});

test("log dirs: the broker starts with one dir unreadable and serves the partitions of the others", async () => {
  const root = tempDir("strand-logdirs-broker-");
  const { dirs, overrides } = dirsOverride(root);
  let b = await startBroker(overrides, root);
  let c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "boot", { numPartitions: 3 })).errorCode, 0);
    for (let p = 0; p < 3; p++) assert.equal((await produce(c, "boot", p, buildBatch([{ value: `p${p}` }]), 1)).errorCode, 0);
    const where = [0, 1, 2].map((p) => dirOfPartition(dirs, "boot", p));
    const lost = where[2];
    assert.notEqual(lost, dirs[0]);
    c.close();
    await b.stop(true);

    // The dir turns into something that is not a dir (a disk that fails to mount).
    nodeFs.rmSync(lost, { recursive: true });
    nodeFs.writeFileSync(lost, "");
    const logger = recordingLogger();
    b = await startBroker({ ...overrides, port: String(b.port) }, root, logger);
    c = await WireClient.connect(b.port);
    for (let p = 0; p < 3; p++) {
      const f = await fetchOnce(c, "boot", p, 0n);
      if (where[p] === lost) {
        assert.equal(f.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, `boot-${p}: its log is in the lost dir and is not made again elsewhere`);
        assert.equal((await produce(c, "boot", p, buildBatch([{ value: "x" }]), 1)).errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
      } else {
        assert.equal(f.errorCode, 0, `boot-${p}`);
        assert.equal(f.highWatermark, 1n);
        assert.equal((await produce(c, "boot", p, buildBatch([{ value: "y" }]), 1)).errorCode, 0);
      }
    }
    assert.equal(dirs.filter((d) => nodeFs.existsSync(`${d}/boot-2`) && d !== lost).length, 0, "boot-2 was not recreated");
    const described = await describeLogDirs(c, 4, null);
    assert.deepEqual(described.map((r) => r.errorCode), dirs.map((d) => (d === lost ? ErrorCode.KAFKA_STORAGE_ERROR : 0)));
    assert.ok(logger.lines.some((l) => l.level === "error" && l.fields.dir === lost));
  } finally {
    c.close();
    await b.stop();
  }
});

test("log dirs: when every dir has failed the broker shuts itself down", async () => {
  const root = tempDir("strand-logdirs-broker-");
  const { dirs, overrides } = dirsOverride(root);
  const faulty = faultyPlatform(await loadPlatform());
  const logger = recordingLogger();
  // Two dirs: the first holds the embedded registry, which stays on the real platform.
  const b = await startBroker({ ...overrides, "log.dirs": dirs.slice(1).join(","), "replica.high.watermark.checkpoint.interval.ms": "50" }, root, logger, faulty);
  try {
    let fatal: Error | null = null;
    void b.broker.fatal.then((e) => (fatal = e));
    faulty.fail(dirs[1]);
    await sleep(300);
    assert.equal(fatal, null, "one dir left: still serving");
    faulty.fail(dirs[2]);
    const deadline = Date.now() + 5000;
    while (fatal === null && Date.now() < deadline) await sleep(20);
    assert.ok(fatal !== null && (fatal as Error).message.includes("every log dir has failed"), `fatal: ${fatal}`);
    assert.ok(logger.lines.some((l) => l.level === "error" && l.msg === "every log dir has failed; shutting down"));
    await assert.rejects(WireClient.connect(b.port).then((w) => w.request(DescribeLogDirsApi, 0, { topics: null }, 2000)));
  } finally {
    await b.stop();
  }
});
