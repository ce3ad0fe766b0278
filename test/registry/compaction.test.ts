// The embedded registry's snapshot rewrite (compaction) while writes go on: the journal is set
// aside, the snapshot written a slice at a time (fuzzy: nodes in whatever state their turn finds
// them), the set-aside journal removed once the snapshot is durable. A copy of the dir taken at
// any moment (what a kill -9 then would leave, page cache included) must open to exactly the tree
// the store held at that moment; a rewrite that fails half-way (a full disk in the middle of the
// snapshot) loses nothing and is completed by a later one.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { loadPlatform } from "../../src/platform/mod.ts";
import { EmbeddedRegistryStore, journalFileName, type Registry, type RegistryPlatform, snapshotFileName } from "../../src/registry/mod.ts";
import { type Logger, registryCompactRetryMs, silentLogger } from "../../src/util/mod.ts";
import { faultyPlatform } from "../helpers/faulty_platform.ts";
import { bytes, withDir } from "./helpers.ts";

const setAsideFiles = (dir: string) => readdirSync(dir).filter((f) => f.startsWith(`${journalFileName}.`));
const tick = () => new Promise((r) => setTimeout(r, 0));

/** Every node under path with its data and stat, in a stable order. */
async function dump(r: Registry, path = "/"): Promise<string[]> {
  const { data, stat } = await r.getData(path);
  const out = [`${path} ${Buffer.from(data).toString("base64")} ${JSON.stringify(stat, (_k, v) => (typeof v === "bigint" ? String(v) : v))}`];
  for (const child of await r.getChildren(path)) out.push(...(await dump(r, path === "/" ? `/${child}` : `${path}/${child}`)));
  return out;
}

/**
 * A copy of dir, as a kill -9 now would leave it (page cache included). The rewrite's renames and
 * removals run on the I/O pool and may land while the files are copied one by one: the copy is
 * taken again until the dir's entries stayed the same throughout (appends and writes all run on
 * this thread, so they cannot land meanwhile).
 */
function copyOf(dir: string): string {
  const entries = () => readdirSync(dir).sort().map((f) => `${f}:${statSync(`${dir}/${f}`, { throwIfNoEntry: false })?.ino}`).join(",");
  for (;;) {
    const before = entries();
    const copy = mkdtempSync(join(tmpdir(), "strand-registry-image-"));
    try {
      cpSync(dir, copy, { recursive: true });
      if (entries() === before) return copy;
    } catch (e) {
      if ((e as { code?: string }).code !== "ENOENT") throw e;
    }
    rmSync(copy, { recursive: true, force: true });
  }
}

/** Opens a copy made by copyOf, returns its tree, and removes it. */
async function treeOf(platform: RegistryPlatform, copy: string): Promise<string[]> {
  try {
    const store = await EmbeddedRegistryStore.openGradually(platform, copy);
    const tree = await dump(store.session());
    await store.close();
    return tree;
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

/** A tree of some 1,500 nodes, written in multis (a journal of some 250 KB). */
async function bigTree(r: Registry): Promise<void> {
  for (let t = 0; t < 15; t++) {
    const ops = [{ op: "create" as const, path: `/t${t}`, data: bytes(`topic ${t}`) }];
    for (let p = 0; p < 100; p++) ops.push({ op: "create", path: `/t${t}/p${p}`, data: bytes(`{"leader":0,"epoch":${p}}`) });
    await r.multi(ops);
  }
}

/** Changes of every kind: data, deletions, a node deleted and made again, new nodes. */
async function churn(r: Registry, i: number): Promise<void> {
  await r.setData(`/t${i % 15}/p${i % 100}`, bytes(`changed ${i} `.repeat(40))).catch(() => {}); // deleted below
  if (i % 4 === 1) await r.delete(`/t${(i + 7) % 15}/p${(i * 13) % 100}`).catch(() => {});
  if (i % 4 === 2) await r.create(`/t${(i + 7) % 15}/p${((i - 1) * 13) % 100}`, bytes(`again ${i}`)).catch(() => {});
  if (i % 4 === 3) await r.create(`/n${i}`, bytes(`new ${i}`));
}

test("compaction: writes go on during the rewrite, and a copy of the dir taken at any step opens to the tree of that moment", async () => {
  await withDir(async (dir, platform) => {
    const store = EmbeddedRegistryStore.open(platform, dir, { journalCompactBytes: 300_000 });
    const r = store.session();
    await bigTree(r);
    assert.deepEqual(setAsideFiles(dir), [], "no rewrite yet");
    let i = 0;
    while (setAsideFiles(dir).length === 0) await churn(r, i++);
    // The rewrite is under way: the journal was set aside and the snapshot is being written. A
    // copy and the store's tree are taken in one turn (reads of the embedded store take no I/O).
    const images: Array<{ copy: string; tree: string[]; during: boolean }> = [];
    for (;;) {
      const during = setAsideFiles(dir).length > 0 || existsSync(`${dir}/${snapshotFileName}.tmp`);
      images.push({ copy: copyOf(dir), tree: await dump(r), during });
      if (!during) break;
      await churn(r, i++);
    }
    for (const [n, { copy, tree }] of images.entries()) assert.deepEqual(await treeOf(platform, copy), tree, `copy #${n}`);
    assert.ok(images.filter((m) => m.during).length >= 1, `${images.length} copies taken`);
    assert.ok(existsSync(`${dir}/${snapshotFileName}`));
    // The store carries on; a clean close leaves the snapshot and an empty journal.
    await churn(r, i++);
    const final = await dump(r);
    await store.close();
    assert.deepEqual(setAsideFiles(dir), []);
    const reopened = EmbeddedRegistryStore.open(platform, dir);
    assert.deepEqual(await dump(reopened.session()), final);
    await reopened.close();
  });
});

test("compaction: a rewrite that fails half-way through the snapshot (disk full) loses nothing, is warned, and the next one completes it", async () => {
  await withDir(async (dir) => {
    const faulty = faultyPlatform(await loadPlatform());
    let nowMs = 1_000_000;
    const clock = { ...faulty.clock, nowMs: () => nowMs };
    const warned: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (_f: unknown, msg: string) => void warned.push(msg), child: () => logger };
    const store = EmbeddedRegistryStore.open({ fs: faulty.fs, clock }, dir, { journalCompactBytes: 300_000, logger });
    const r = store.session();
    await bigTree(r);
    assert.deepEqual(setAsideFiles(dir), [], "no rewrite yet");
    // The snapshot's temp file takes half of one write, then the disk is full.
    const lift = faulty.inject(`${dir}/${snapshotFileName}.tmp`, "ENOSPC", { ops: ["write"], partialWrite: true });
    let i = 0;
    while (faulty.failures.length === 0) {
      await churn(r, i++);
      await tick();
    }
    while (!warned.includes("registry snapshot rewrite failed; the journals keep every change")) await tick();
    assert.equal(setAsideFiles(dir).length, 1, "the set-aside journal stays");
    assert.equal(existsSync(`${dir}/${snapshotFileName}`), false, "no snapshot was made");
    for (let k = 0; k < 20; k++) await churn(r, i++);
    assert.deepEqual(await treeOf(faulty, copyOf(dir)), await dump(r), "nothing lost: a copy opens to the whole tree");
    assert.equal(faulty.failures.length, 1, "not tried again before the pause");

    lift();
    nowMs += registryCompactRetryMs;
    while (setAsideFiles(dir).length > 0 || !existsSync(`${dir}/${snapshotFileName}`)) {
      await churn(r, i++);
      await tick();
    }
    assert.deepEqual(await treeOf(faulty, copyOf(dir)), await dump(r), "the next rewrite holds everything");
    const final = await dump(r);
    await store.close();
    const reopened = EmbeddedRegistryStore.open(faulty, dir);
    assert.deepEqual(await dump(reopened.session()), final);
    await reopened.close();
  });
});

test("compaction: a clean stop while the disk stays full keeps the journal a failed rewrite set aside, and the next start has every change", async () => {
  await withDir(async (dir) => {
    const faulty = faultyPlatform(await loadPlatform());
    const store = EmbeddedRegistryStore.open(faulty, dir, { journalCompactBytes: 300_000 });
    const r = store.session();
    await bigTree(r);
    faulty.inject(`${dir}/${snapshotFileName}.tmp`, "ENOSPC", { ops: ["write"] });
    // One write takes the journal past its bound: the rewrite starts, and fails, with no write after.
    await r.setData("/t0", bytes("x".repeat(100_000)));
    while (faulty.failures.length === 0) await tick();
    assert.equal(setAsideFiles(dir).length, 1);
    // No write since the failed rewrite: the stop's own rewrite (failing too) must not put the
    // empty journal in place of the set-aside one, which has the same zxid.
    const tree = await dump(r);
    await store.close();
    assert.equal(setAsideFiles(dir).length, 1);
    const reopened = EmbeddedRegistryStore.open(faulty, dir);
    assert.deepEqual(await dump(reopened.session()), tree);
    await reopened.close();
  });
});
