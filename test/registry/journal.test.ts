// The embedded registry's journal (src/registry/journal.ts): records replayed on open after the
// snapshot, a torn last record dropped, corruption anywhere else refused with the file named,
// snapshot rewrites that set the journal aside, old snapshot-only dirs, and the group commit (one
// fsync for the writes of one turn; a failed fsync fails them and stops later writes), and a full
// disk (a refused write names its errno and leaves no half record; snapshot rewrites back off).
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { test } from "node:test";
import { loadPlatform } from "../../src/platform/mod.ts";
import {
  EmbeddedRegistryStore,
  journalFileName,
  RegistryError,
  registryStorageErrno,
  snapshotFileName,
  type Stat,
} from "../../src/registry/mod.ts";
import { crc32c, type Logger, registryCompactRetryMs, registryReadChunkBytes } from "../../src/util/mod.ts";
import { faultyPlatform } from "../helpers/faulty_platform.ts";
import { rejectsWith } from "./contract.ts";
import { bytes, instrumented, str, withDir } from "./helpers.ts";

const none = new Uint8Array(0);
const headerBytes = "strand-registry-journal v1\n".length;

function capturing(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const logger = {
    lines,
    debug() {},
    info() {},
    warn(fields: Record<string, unknown>, msg: string) {
      lines.push(`warn ${msg} ${JSON.stringify(fields)}`);
    },
    error(fields: Record<string, unknown>, msg: string) {
      lines.push(`error ${msg} ${JSON.stringify(fields)}`);
    },
    child: () => logger,
  };
  return logger;
}

/** The byte offsets at which each record of a journal file starts, and the file's length. */
function recordStarts(file: string): { starts: number[]; length: number } {
  const b = readFileSync(file);
  const starts: number[] = [];
  for (let pos = headerBytes; pos < b.length; pos += 8 + b.readUInt32BE(pos)) starts.push(pos);
  return { starts, length: b.length };
}

/** Writes a small tree (no close: as after a crash, nothing but the journal holds it). */
async function writeTree(store: EmbeddedRegistryStore): Promise<void> {
  const r = store.session();
  await r.ensurePath("/brokers/topics");
  await r.create("/brokers/topics/t", bytes("v0"));
  await r.setData("/brokers/topics/t", bytes("v1"));
  await r.create("/seq", none);
  await r.create("/seq/x-", none, "persistent-sequential");
  await r.multi([{ op: "create", path: "/gone", data: none }, { op: "create", path: "/gone/child", data: bytes("c") }]);
  await r.delete("/gone/child");
  await r.delete("/gone");
  await r.create("/e", none, "ephemeral");
}

test("journal: a store that was never closed is replayed from its journal alone, stats and counters included", async () => {
  await withDir(async (dir, platform) => {
    const first = EmbeddedRegistryStore.open(platform, dir);
    await writeTree(first);
    const r = first.session();
    const before = (await r.exists("/brokers/topics/t")) as Stat;
    const rootBefore = (await r.exists("/")) as Stat;
    assert.equal(existsSync(`${dir}/${snapshotFileName}`), false, "no snapshot: everything is in the journal");
    assert.ok(recordStarts(`${dir}/${journalFileName}`).starts.length >= 8);

    const second = EmbeddedRegistryStore.open(platform, dir);
    const s = second.session();
    assert.deepEqual((await s.exists("/brokers/topics/t")) as Stat, before);
    assert.equal(str((await s.getData("/brokers/topics/t")).data), "v1");
    assert.equal(await s.exists("/gone"), null);
    assert.equal(await s.exists("/e"), null, "ephemerals are not journaled");
    const root = (await s.exists("/")) as Stat;
    assert.equal(root.cversion, rootBefore.cversion, "the root's child counter survives, ephemeral creation included");
    assert.deepEqual(await s.getChildren("/"), ["brokers", "seq"]);
    assert.equal(await s.create("/seq/x-", none, "persistent-sequential"), "/seq/x-0000000001");
    assert.ok(second.zxid > first.zxid);
    await second.close();
    await first.close().catch(() => {});
  });
});

test("journal: a snapshot and a journal of several read chunks each open whole, gradually or at once", async () => {
  await withDir(async (dir, platform) => {
    // Nodes of ~1 MB (base64 in the files): the files span several registryReadChunkBytes reads,
    // with chunk boundaries inside records and lines.
    const big = (i: number) => new Uint8Array(900_000).map((_, j) => (i * 31 + j) % 251);
    const first = EmbeddedRegistryStore.open(platform, dir);
    const r = first.session();
    for (let i = 0; i < 3; i++) await r.create(`/big${i}`, big(i));
    await first.close(); // the snapshot holds them
    const second = await EmbeddedRegistryStore.openGradually(platform, dir);
    const s = second.session();
    for (let i = 3; i < 6; i++) await s.create(`/big${i}`, big(i)); // the journal holds these
    assert.ok(readFileSync(`${dir}/${snapshotFileName}`).length > 3 * registryReadChunkBytes);
    assert.ok(readFileSync(`${dir}/${journalFileName}`).length > 3 * registryReadChunkBytes);
    for (const third of [await EmbeddedRegistryStore.openGradually(platform, dir), EmbeddedRegistryStore.open(platform, dir)]) {
      const t = third.session();
      for (let i = 0; i < 6; i++) assert.deepEqual((await t.getData(`/big${i}`)).data, big(i), `/big${i}`);
      await t.close();
    }
    await second.close();
  });
});

test("journal: a torn last record (short, or whole with a bad CRC) is dropped on open, with a warning", async () => {
  await withDir(async (dir, platform) => {
    const file = `${dir}/${journalFileName}`;
    const store = EmbeddedRegistryStore.open(platform, dir);
    const r = store.session();
    await r.create("/a", bytes("a"));
    await r.create("/b", bytes("b"));
    const { starts, length } = recordStarts(file);
    const good = readFileSync(file);
    const last = starts[starts.length - 1];
    const variants: Array<[string, Uint8Array]> = [
      ["half a length", good.subarray(0, last + 3)],
      ["half a payload", good.subarray(0, length - 5)],
      ["a flipped last byte", Buffer.concat([good.subarray(0, length - 1), Buffer.from([good[length - 1] ^ 0xff])])],
    ];
    for (const [what, content] of variants) {
      writeFileSync(file, content);
      rmSync(`${dir}/${snapshotFileName}`, { force: true }); // the previous round's clean close wrote one
      const logger = capturing();
      const reopened = EmbeddedRegistryStore.open(platform, dir, { logger });
      const s = reopened.session();
      assert.equal(str((await s.getData("/a")).data), "a", what);
      assert.equal(await s.exists("/b"), null, `${what}: the torn transaction is gone`);
      assert.ok(logger.lines.some((l) => /warn .*incomplete record/.test(l) && l.includes(file)), what);
      assert.equal(readFileSync(file).length, last, `${what}: the tail was cut off`);
      // The journal goes on after the cut: a new record replays.
      await s.create("/c", none);
      const again = EmbeddedRegistryStore.open(platform, dir);
      assert.notEqual(await again.session().exists("/c"), null, what);
      await again.close();
      await reopened.close();
    }
    await store.close().catch(() => {});
  });
});

test("journal: damage before the last record stops the open with an error naming the file", async () => {
  await withDir(async (dir, platform) => {
    const file = `${dir}/${journalFileName}`;
    const store = EmbeddedRegistryStore.open(platform, dir);
    const r = store.session();
    for (const name of ["a", "b", "c"]) await r.create(`/${name}`, bytes(name));
    const good = readFileSync(file);
    const { starts } = recordStarts(file);
    const flipped = Buffer.from(good);
    flipped[starts[0] + 12] ^= 0x01; // inside the first record's payload
    const hugeLength = Buffer.from(good);
    hugeLength.writeUInt32BE(0x7fffffff, starts[1]);
    const badHeader = Buffer.from(good);
    badHeader[0] = "X".charCodeAt(0);
    const variants: Array<[string, Uint8Array, RegExp]> = [
      ["a flipped byte in the first record", flipped, /CRC mismatch in the record at byte \d+, which is followed by/],
      ["a length beyond the limit", hugeLength, /declares 2147483647 bytes/],
      ["a bad header", badHeader, /no journal header/],
    ];
    for (const [what, content, why] of variants) {
      writeFileSync(file, content);
      assert.throws(() => EmbeddedRegistryStore.open(platform, dir), (e: unknown) => {
        assert.ok(e instanceof Error && !(e instanceof RegistryError), what);
        assert.ok(e.message.includes(file), `${what}: names the file: ${e.message}`);
        assert.match(e.message, /corrupt/, what);
        assert.match(e.message, why, what);
        return true;
      });
    }
    // A record that passes its CRC but is not a transaction is corruption too, wherever it is.
    const payload = bytes(`{"zxid":"not a number","put":[],"del":[]}`);
    const record = Buffer.alloc(8 + payload.length);
    record.writeUInt32BE(payload.length, 0);
    record.writeUInt32BE(crc32c(payload), 4);
    record.set(payload, 8);
    writeFileSync(file, Buffer.concat([good, record]));
    assert.throws(() => EmbeddedRegistryStore.open(platform, dir), (e: unknown) => {
      assert.ok(e instanceof Error && e.message.includes(file) && /corrupt \(record #3: zxid is not a decimal zxid\)/.test(e.message), String(e));
      return true;
    });
    writeFileSync(file, good);
    await store.close().catch(() => {});
  });
});

test("journal: past its bound the snapshot is rewritten and the journal emptied; both together replay", async () => {
  await withDir(async (dir, platform) => {
    const file = `${dir}/${journalFileName}`;
    const store = EmbeddedRegistryStore.open(platform, dir, { journalCompactBytes: 2_000 });
    const r = store.session();
    await r.create("/topics", none);
    let compactions = 0;
    let lastSize = recordStarts(file).length;
    for (let i = 0; i < 60; i++) {
      await r.create(`/topics/t${i}`, bytes(`payload ${i} `.repeat(10)));
      const size = recordStarts(file).length;
      if (size < lastSize) compactions++;
      lastSize = size;
    }
    assert.ok(compactions >= 2, `the journal was emptied ${compactions} times`);
    assert.ok(existsSync(`${dir}/${snapshotFileName}`));
    const snapshotZxid = JSON.parse(readFileSync(`${dir}/${snapshotFileName}`, "utf8")).zxid;
    assert.ok(recordStarts(file).starts.length > 0, "records after the last snapshot are in the journal");
    await r.setData("/topics/t0", bytes("changed"));

    const reopened = EmbeddedRegistryStore.open(platform, dir);
    const s = reopened.session();
    assert.equal((await s.getChildren("/topics")).length, 60);
    assert.equal(str((await s.getData("/topics/t0")).data), "changed");
    assert.equal(str((await s.getData("/topics/t59")).data), "payload 59 ".repeat(10));
    assert.ok(BigInt(snapshotZxid) < reopened.zxid);
    await reopened.close();
    await store.close().catch(() => {});
  });
});

test("journal: records the snapshot already holds (a set-aside journal a crash kept after the rewrite) are skipped", async () => {
  await withDir(async (dir, platform) => {
    const file = `${dir}/${journalFileName}`;
    const store = EmbeddedRegistryStore.open(platform, dir);
    const r = store.session();
    await r.create("/s", none);
    await r.create("/s/x-", none, "persistent-sequential");
    await r.create("/v", bytes("0"));
    await r.setData("/v", bytes("1"));
    const journal = readFileSync(file);
    await store.close(); // a clean close writes the snapshot and empties the journal
    assert.equal(readFileSync(file).length, headerBytes);
    writeFileSync(`${file}.0000000000000001`, journal); // as if its removal never happened
    const reopened = EmbeddedRegistryStore.open(platform, dir);
    const s = reopened.session();
    assert.equal((await s.getData("/v")).stat.version, 1, "the setData was not applied twice");
    assert.equal(await s.create("/s/x-", none, "persistent-sequential"), "/s/x-0000000001");
    await reopened.close();
  });
});

test("journal: a dir with only an old snapshot.json opens as it is, and carries on with a journal", async () => {
  await withDir(async (dir, platform) => {
    const node = (path: string, data: string, cversion: number) =>
      JSON.stringify({ path, data: btoa(data), czxid: "5", mzxid: "5", pzxid: "6", ctime: 1, mtime: 1, version: 0, cversion });
    // The format every strand before the journal wrote, one node per line.
    const old = `{"format":"strand-registry-snapshot","version":1,"zxid":"6","nodes":[\n` +
      `${node("/", "", 1)},\n${node("/brokers", "b", 0)}\n]}\n`;
    writeFileSync(`${dir}/${snapshotFileName}`, old);
    assert.equal(existsSync(`${dir}/${journalFileName}`), false);
    const store = EmbeddedRegistryStore.open(platform, dir);
    const r = store.session();
    assert.equal(str((await r.getData("/brokers")).data), "b");
    assert.ok(store.zxid > 6n);
    await r.create("/brokers/ids", none);
    assert.equal(readFileSync(`${dir}/${snapshotFileName}`, "utf8"), old, "the snapshot is not rewritten for one write");
    const again = EmbeddedRegistryStore.open(platform, dir);
    assert.deepEqual(await again.session().getChildren("/brokers"), ["ids"]);
    await again.close();
    await store.close().catch(() => {});
  });
});

test("journal: the writes of one turn share one fsync; each awaited write waits for its own", async () => {
  await withDir(async (dir, base) => {
    const { platform, state } = instrumented(base);
    const store = EmbeddedRegistryStore.open(platform, dir);
    const r = store.session();
    const other = store.session();
    await r.create("/p", none);
    const seen: string[] = [];
    await other.getChildren("/p", (ev) => seen.push(ev.type));
    state.syncs = 0;
    const writes = Array.from({ length: 200 }, (_, i) => r.create(`/p/c${i}`, bytes(String(i))));
    assert.deepEqual(seen, [], "no watch fires before the commit");
    await Promise.all(writes);
    assert.equal(state.syncs, 1, "200 writes issued together: one fsync");
    assert.deepEqual(seen, ["childrenChanged"], "the watch fired at the commit, before the callers resumed");
    for (let i = 0; i < 3; i++) await r.setData("/p", bytes(String(i)));
    assert.equal(state.syncs, 4, "one fsync per write awaited in turn");
    await r.getData("/p");
    await r.multi([{ op: "check", path: "/p", version: 3 }]);
    assert.equal(state.syncs, 4, "reads and checks write nothing");
    await store.close();
  });
});

test("journal: a failed fsync fails every write waiting on it, and later writes are refused", async () => {
  await withDir(async (dir, base) => {
    const { platform, state } = instrumented(base);
    const logger = capturing();
    const store = EmbeddedRegistryStore.open(platform, dir, { logger });
    const r = store.session();
    await r.create("/a", none);
    state.failSyncs = true;
    const results = await Promise.allSettled([r.create("/b", none), r.setData("/a", bytes("x"))]);
    for (const res of results) {
      assert.equal(res.status, "rejected");
      const e = (res as PromiseRejectedResult).reason;
      assert.ok(e instanceof RegistryError && e.code === "SystemError", String(e));
    }
    state.failSyncs = false;
    await rejectsWith(r.create("/c", none), "SystemError");
    assert.equal(str((await r.getData("/a")).data), "x", "reads still answer");
    assert.ok(logger.lines.some((l) => /error registry journal fsync failed/.test(l)));
    await store.close();
    // What was appended before the failure may or may not be on disk; the store opens either way.
    const reopened = EmbeddedRegistryStore.open(base, dir);
    assert.notEqual(await reopened.session().exists("/a"), null);
    await reopened.close();
  });
});

test("journal at ENOSPC: the refused write carries its errno, a half record whose cut-off failed too is cut before the next append, and the journal replays cleanly", async () => {
  await withDir(async (dir, base) => {
    const faulty = faultyPlatform(await loadPlatform());
    const store = EmbeddedRegistryStore.open(faulty, dir);
    const r = store.session();
    await r.create("/a", bytes("v0"));
    const full = faulty.inject(dir, "ENOSPC", { ops: ["write"], partialWrite: true });
    const stuck = faulty.inject(dir, "EIO", { ops: ["ftruncate"] });
    const err = await r.setData("/a", bytes("refused")).then(() => null, (e: unknown) => e);
    assert.equal(registryStorageErrno(err), "ENOSPC", String(err));
    assert.ok(err instanceof RegistryError && err.message.includes(journalFileName), "names the journal");
    assert.ok(recordStarts(`${dir}/${journalFileName}`).length > recordStarts(`${dir}/${journalFileName}`).starts.at(-1)!, "half a record is left");
    full();
    stuck();
    await r.setData("/a", bytes("v1"));
    await r.create("/b", bytes("b"));
    assert.equal(str((await r.getData("/a")).data), "v1");
    // Read as a crash would leave it (no snapshot rewrite at close): every record whole.
    const reopened = EmbeddedRegistryStore.open(base, `${dir}`);
    const s = reopened.session();
    assert.equal(str((await s.getData("/a")).data), "v1");
    assert.equal((await s.getData("/a")).stat.version, 1, "the refused write is not there");
    assert.equal(str((await s.getData("/b")).data), "b");
    await reopened.close();
    await store.close();
  });
});

test("journal at ENOSPC: a snapshot rewrite that fails is warned (not error) and tried again only after a pause, not at every commit", async () => {
  await withDir(async (dir) => {
    const faulty = faultyPlatform(await loadPlatform());
    let nowMs = 1_000_000;
    const clock = { ...faulty.clock, nowMs: () => nowMs };
    const logger = capturing();
    const store = EmbeddedRegistryStore.open({ fs: faulty.fs, clock }, dir, { logger, journalCompactBytes: 1 });
    const r = store.session();
    const lift = faulty.inject(`${dir}/${snapshotFileName}.tmp`, "ENOSPC", { ops: ["open"] });
    const tries = () => faulty.failures.filter((f) => f.startsWith("open")).length;
    await r.create("/a", bytes("x".repeat(1000)));
    assert.equal(tries(), 1);
    for (let i = 0; i < 5; i++) await r.setData("/a", bytes(`v${i}`));
    assert.equal(tries(), 1, "not tried again at each commit");
    assert.ok(logger.lines.some((l) => l.startsWith("warn registry snapshot rewrite failed")), logger.lines.join("\n"));
    assert.deepEqual(logger.lines.filter((l) => l.startsWith("error")), []);
    nowMs += registryCompactRetryMs;
    await r.setData("/a", bytes("again"));
    assert.equal(tries(), 2, "tried again after the pause");
    lift();
    nowMs += registryCompactRetryMs;
    await r.setData("/a", bytes("last"));
    const setAside = () => readdirSync(dir).filter((f) => f.startsWith(`${journalFileName}.`));
    while (setAside().length > 0) await new Promise((resolve) => setTimeout(resolve, 1));
    assert.ok(existsSync(`${dir}/${snapshotFileName}`), "the rewrite went through and removed the set-aside journals");
    await store.close();
    const reopened = EmbeddedRegistryStore.open(faulty, dir);
    assert.equal(str((await reopened.session().getData("/a")).data), "last");
    await reopened.close();
  });
});
