// Issue 11, defect 2 (log side): a deleted partition's dir is renamed `<topic>-<p>.<uuid>-delete`
// with the topic cut short so the name fits 255 bytes (Kafka's LocalLog.logDeleteDirName), so a
// legal 249-character topic can be deleted; start-up removes such leftovers whatever their name,
// a leftover it cannot remove is logged and left, and a directory whose name is not a partition's
// is ignored — none of them takes the dir offline.
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { test } from "node:test";
import { type LogConfig, logConfigDefaults, logDeleteDirName, LogManager } from "../../src/log/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Platform } from "../../src/platform/types.ts";
import { tempDir } from "../helpers/broker.ts";
import { faultyPlatform, recordingLogger } from "../helpers/faulty_platform.ts";
import { buildBatch } from "../helpers/record_batch.ts";

const platform: Platform = await loadPlatform();
const cfg: LogConfig = { ...logConfigDefaults };
const LONG = "t".repeat(200) + "x".repeat(49); // 249 characters: Kafka's longest legal topic
const UUID = "0123456789abcdef0123456789abcdef";

test("delete dir name: Kafka's format, the topic cut so the name fits 255 bytes", () => {
  assert.equal(logDeleteDirName("orders", 3, UUID), `orders-3.${UUID}-delete`);
  for (const p of [0, 7, 99_999, 2_147_483_647]) {
    const name = logDeleteDirName(LONG, p, UUID);
    assert.equal(name.length, 255, `partition ${p}: exactly 255 bytes`);
    assert.ok(name.endsWith(`-${p}.${UUID}-delete`));
    assert.ok(LONG.startsWith(name.slice(0, name.length - `-${p}.${UUID}-delete`.length)), "a prefix of the topic");
  }
  const fits = "a".repeat(255 - `-0.${UUID}-delete`.length);
  assert.equal(logDeleteDirName(fits, 0, UUID), `${fits}-0.${UUID}-delete`, "a name that fits is not cut");
});

test("delete dir name: a 249-character topic's log is deleted; the dir stays online and nothing is left", async () => {
  const dir = tempDir("strand-deldir-");
  const logger = recordingLogger();
  const lm = new LogManager(platform, [dir], cfg, logger);
  await lm.startup(0, "cluster");
  try {
    for (const p of [0, 1]) lm.getOrCreateLog(LONG, p, cfg).appendAsLeader(buildBatch([{ value: "v" }]), 1, 0);
    lm.getOrCreateLog("short", 0, cfg);
    assert.ok(nodeFs.existsSync(`${dir}/${LONG}-0`));
    lm.deleteLog(LONG, 0);
    lm.deleteLog(LONG, 1);
    assert.deepEqual(lm.offlineLogDirs, [], "no dir failure");
    assert.equal(lm.getLog(LONG, 0), undefined);
    await lm.removalsSettled(); // the renamed dirs are removed in the background
    const left = nodeFs.readdirSync(dir).filter((n) => n.startsWith("t"));
    assert.deepEqual(left, [], "neither the log dirs nor -delete leftovers remain");
    assert.ok(lm.getOrCreateLog("short", 0, cfg) !== undefined);
  } finally {
    lm.shutdown();
    nodeFs.rmSync(dir, { recursive: true, force: true });
  }
});

test("delete dir name: start-up removes truncated -delete leftovers, logs one it cannot remove, ignores unparseable dirs", async () => {
  const dir = tempDir("strand-deldir-");
  try {
    // A previous run: one live log, then the leftovers.
    const first = new LogManager(platform, [dir], cfg, recordingLogger());
    await first.startup(0, "cluster");
    first.getOrCreateLog("live", 0, cfg).appendAsLeader(buildBatch([{ value: "kept" }]), 1, 0);
    first.shutdown();
    const truncated = logDeleteDirName(LONG, 4, UUID);
    const stuck = logDeleteDirName(LONG, 5, UUID);
    for (const d of [truncated, stuck]) {
      nodeFs.mkdirSync(`${dir}/${d}`);
      nodeFs.writeFileSync(`${dir}/${d}/00000000000000000000.log`, "x");
    }
    for (const d of ["lost+found", `live-0.${UUID}-future`, `live-0.${UUID}-stray`, "-", "x-", "-3", "t-99999999999999999999"]) nodeFs.mkdirSync(`${dir}/${d}`);

    const faulty = faultyPlatform(platform);
    faulty.fail(`${dir}/${stuck}`); // its removal fails with an I/O error
    const logger = recordingLogger();
    const lm = new LogManager(faulty, [dir], cfg, logger);
    await lm.startup(0, "cluster");
    try {
      assert.deepEqual(lm.offlineLogDirs, [], "the dir is online");
      assert.ok(!nodeFs.existsSync(`${dir}/${truncated}`), "the truncated -delete leftover is removed");
      assert.ok(nodeFs.existsSync(`${dir}/${stuck}`), "the one that cannot be removed is left for next time");
      assert.ok(logger.lines.some((l) => l.level === "warn" && /cannot remove a deleted log's directory/.test(l.msg)), "and logged");
      assert.deepEqual(lm.allLogs().map((l) => `${l.topic}-${l.partition}`), ["live-0"], "only the real log is loaded");
      assert.equal(lm.getLog("live", 0)!.logEndOffset, 1);
      for (const d of ["lost+found", `live-0.${UUID}-future`, `live-0.${UUID}-stray`]) assert.ok(nodeFs.existsSync(`${dir}/${d}`), `${d} left alone`);
    } finally {
      lm.shutdown();
    }
  } finally {
    nodeFs.rmSync(dir, { recursive: true, force: true });
  }
});
