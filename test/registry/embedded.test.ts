// The embedded registry: the shared contract (in memory and saved to disk), then what only the
// embedded store promises: microtask delivery, persistence across reopen, refusal of corrupt
// snapshots, and its limits.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { test } from "node:test";
import {
  EmbeddedRegistryStore,
  journalFileName,
  nodeDataBytesMax,
  RegistryError,
  snapshotFileName,
  type Stat,
} from "../../src/registry/mod.ts";
import type { Logger } from "../../src/util/mod.ts";
import { registryContract, rejectsWith } from "./contract.ts";
import { bytes, instrumented, recorder, str, tempDir, testPlatform, withDir } from "./helpers.ts";

const none = new Uint8Array(0);

registryContract("embedded in memory", async () => {
  const store = EmbeddedRegistryStore.inMemory(await testPlatform());
  return { session: async () => store.session(), close: () => store.close() };
});

registryContract("embedded on disk", async () => {
  const { dir, cleanup } = tempDir();
  const store = EmbeddedRegistryStore.open(await testPlatform(), dir);
  return {
    session: async () => store.session(),
    close: async () => {
      await store.close();
      cleanup();
    },
  };
});

function capturingLogger(): Logger & { errors: string[] } {
  const errors: string[] = [];
  const logger = {
    errors,
    debug() {},
    info() {},
    warn() {},
    error(fields: Record<string, unknown>, msg: string) {
      errors.push(`${msg} ${JSON.stringify(fields)}`);
    },
    child: () => logger,
  };
  return logger;
}

test("embedded: watchers run in a microtask after the change, never inside the call", async () => {
  const store = EmbeddedRegistryStore.inMemory(await testPlatform());
  const r = store.session();
  const w = recorder();
  await r.exists("/a", w.watcher);
  const pending = r.create("/a", none);
  assert.deepEqual(w.events, [], "not called synchronously");
  await pending;
  assert.deepEqual(w.events, [{ type: "created", path: "/a" }], "delivered by the time the caller resumes");
  // The change is visible to the watcher when it runs.
  let seen: Uint8Array | null = null;
  await r.getData("/a", () => void r.getData("/a").then((d) => (seen = d.data)));
  await r.setData("/a", bytes("new"));
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(str(seen!), "new");
  await store.close();
});

test("embedded: a throwing watcher is logged and the others still run", async () => {
  const logger = capturingLogger();
  const store = EmbeddedRegistryStore.inMemory(await testPlatform(), { logger });
  const r = store.session();
  const after = recorder();
  await r.exists("/a", () => {
    throw new Error("boom");
  });
  await r.exists("/a", after.watcher);
  await r.create("/a", none);
  assert.equal(after.events.length, 1);
  assert.equal(logger.errors.length, 1);
  assert.match(logger.errors[0], /registry watcher threw.*boom/);
  await store.close();
});

test("embedded: persistent nodes, versions and counters survive reopen; ephemerals do not", async () => {
  await withDir(async (dir, platform) => {
    const first = EmbeddedRegistryStore.open(platform, dir);
    const r = first.session();
    await r.ensurePath("/brokers/topics");
    await r.create("/brokers/topics/t", new Uint8Array([0, 1, 2, 255]));
    await r.setData("/brokers/topics/t", new Uint8Array([0, 1, 2, 254]));
    await r.create("/brokers/ids", none);
    await r.create("/brokers/ids/0", bytes("me"), "ephemeral");
    await r.create("/seq", none);
    await r.create("/seq/x-", none, "persistent-sequential");
    await r.create("/seq/x-", none, "persistent-sequential");
    await r.setData("/", bytes("root data"));
    const before = (await r.exists("/brokers/topics/t")) as Stat;
    const lastZxid = first.zxid;
    // No close: as after a crash, the ephemeral is in memory only.

    const second = EmbeddedRegistryStore.open(platform, dir);
    const s = second.session();
    const { data, stat } = await s.getData("/brokers/topics/t");
    assert.deepEqual([...data], [0, 1, 2, 254]);
    assert.deepEqual(stat, before);
    assert.equal(await s.exists("/brokers/ids/0"), null);
    assert.deepEqual(await s.getChildren("/brokers/ids"), []);
    assert.deepEqual(await s.getChildren("/"), ["brokers", "seq"]);
    assert.equal(str((await s.getData("/")).data), "root data");
    // Sequence numbers continue where they stopped; none is handed out twice.
    assert.equal(await s.create("/seq/x-", none, "persistent-sequential"), "/seq/x-0000000002");
    // zxids and session ids keep growing across the restart.
    assert.ok(second.zxid > lastZxid);
    assert.ok(((await s.exists("/seq/x-0000000002")) as Stat).czxid > lastZxid);
    assert.notEqual(s.sessionId, r.sessionId);
    await first.close();
    await second.close();
  });
});

test("embedded: the snapshot is JSON with base64 data and no ephemerals", async () => {
  await withDir(async (dir, platform) => {
    const store = EmbeddedRegistryStore.open(platform, dir);
    const r = store.session();
    await r.create("/a", bytes("hello"));
    await r.create("/e", bytes("ephemeral"), "ephemeral");
    await store.close(); // the snapshot is written at a clean close (and when the journal is big)
    const doc = JSON.parse(readFileSync(`${dir}/${snapshotFileName}`, "utf8"));
    assert.equal(doc.format, "strand-registry-snapshot");
    assert.equal(doc.version, 1);
    assert.equal(doc.zxid, String(store.zxid));
    const paths = doc.nodes.map((n: { path: string }) => n.path);
    assert.deepEqual(paths, ["/", "/a"]);
    const a = doc.nodes[1];
    assert.equal(a.data, btoa("hello"));
    assert.equal(typeof a.czxid, "string");
    assert.equal(doc.nodes[0].cversion, 3, "the root counted both children's creations and /e's deletion");
  });
});

test("embedded: only changes to persistent state are journaled, one record per transaction", async () => {
  await withDir(async (dir, base) => {
    const { platform, state } = instrumented(base);
    const store = EmbeddedRegistryStore.open(platform, dir);
    state.writes = 0; // the new journal's header
    const r = store.session();
    await r.create("/p", none);
    assert.equal(state.writes, 1);
    await r.create("/p/e", none, "ephemeral"); // the parent's cversion changed
    assert.equal(state.writes, 2);
    await r.setData("/p/e", bytes("x"));
    await r.getData("/p");
    await r.multi([{ op: "check", path: "/p", version: 0 }]);
    assert.equal(state.writes, 2, "ephemeral data, reads and checks are not saved");
    await r.setData("/p", bytes("y"));
    assert.equal(state.writes, 3);
    await r.multi([{ op: "create", path: "/p/1", data: none }, { op: "create", path: "/p/2", data: none }]);
    assert.equal(state.writes, 4, "one write per multi");
    assert.equal(state.snapshots, 0, "the journal is small: the snapshot is not rewritten");
    await store.close();
    assert.equal(state.snapshots, 1, "a clean close leaves a snapshot");
  });
});

test("embedded: a failed journal write fails the change and undoes it", async () => {
  await withDir(async (dir, base) => {
    const { platform, state } = instrumented(base);
    const store = EmbeddedRegistryStore.open(platform, dir);
    const r = store.session();
    await r.create("/a", bytes("v0"));
    const w = recorder();
    await r.getData("/a", w.watcher);
    const zxid = store.zxid;
    state.failWrites = true;
    await rejectsWith(r.setData("/a", bytes("v1")), "SystemError");
    await rejectsWith(r.create("/b", none), "SystemError");
    state.failWrites = false;
    assert.equal(store.zxid, zxid);
    assert.equal(str((await r.getData("/a")).data), "v0");
    assert.equal(await r.exists("/b"), null);
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.deepEqual(w.events, [], "no watch fired for an undone change");
    await r.setData("/a", bytes("v1"));
    assert.equal(w.events.length, 1);
    await store.close();
    // The half-written records were cut off: the journal replays cleanly.
    const reopened = EmbeddedRegistryStore.open(base, dir);
    const s = reopened.session();
    assert.equal(str((await s.getData("/a")).data), "v1");
    assert.equal(await s.exists("/b"), null);
    await reopened.close();
  });
});

test("embedded: a failed write on session close is logged, and the ephemerals still go", async () => {
  await withDir(async (dir, base) => {
    const { platform, state } = instrumented(base);
    const logger = capturingLogger();
    const store = EmbeddedRegistryStore.open(platform, dir, { logger });
    const r = store.session();
    const owner = store.session();
    await owner.create("/e", none, "ephemeral");
    state.failWrites = true;
    await owner.close();
    state.failWrites = false;
    assert.equal(await r.exists("/e"), null);
    assert.equal(logger.errors.length, 1);
    await store.close();
  });
});

test("embedded: a corrupt snapshot stops the open with an error naming the file", async () => {
  await withDir(async (dir, platform) => {
    const file = `${dir}/${snapshotFileName}`;
    const store = EmbeddedRegistryStore.open(platform, dir);
    await store.session().create("/a", none);
    await store.close();
    const good = readFileSync(file, "utf8");
    const doc = JSON.parse(good);
    const variants: Array<[string, string]> = [
      ["truncated", good.slice(0, good.length - 20)],
      ["empty", ""],
      ["not UTF-8", "\xff\xfe"],
      ["wrong format", JSON.stringify({ ...doc, format: "something-else" })],
      ["future version", JSON.stringify({ ...doc, version: 2 })],
      ["bad zxid", JSON.stringify({ ...doc, zxid: "12x" })],
      ["nodes not a list", JSON.stringify({ ...doc, nodes: {} })],
      ["bad base64", JSON.stringify({ ...doc, nodes: [doc.nodes[0], { ...doc.nodes[1], data: "!!" }] })],
      [
        "bad version field",
        JSON.stringify({ ...doc, nodes: [doc.nodes[0], { ...doc.nodes[1], version: "1" }] }),
      ],
      ["bad path", JSON.stringify({ ...doc, nodes: [doc.nodes[0], { ...doc.nodes[1], path: "/a/" }] })],
      ["orphan", JSON.stringify({ ...doc, nodes: [doc.nodes[0], { ...doc.nodes[1], path: "/x/y" }] })],
      ["duplicate", JSON.stringify({ ...doc, nodes: [...doc.nodes, doc.nodes[1]] })],
      ["no root", JSON.stringify({ ...doc, nodes: [doc.nodes[1]] })],
    ];
    for (const [what, content] of variants) {
      writeFileSync(file, what === "not UTF-8" ? new Uint8Array([0xff, 0xfe]) : content);
      assert.throws(() => EmbeddedRegistryStore.open(platform, dir), (e: unknown) => {
        assert.ok(e instanceof Error && !(e instanceof RegistryError), what);
        assert.ok(e.message.includes(file), `${what}: message names the file: ${e.message}`);
        assert.match(e.message, /corrupt/, what);
        return true;
      });
    }
    writeFileSync(file, good);
    const reopened = EmbeddedRegistryStore.open(platform, dir);
    assert.notEqual(await reopened.session().exists("/a"), null);
    await reopened.close();
  });
});

test("embedded: open creates the directory; a missing snapshot is an empty tree", async () => {
  await withDir(async (dir, platform) => {
    const nested = `${dir}/log-dir/.strand-registry`;
    const store = EmbeddedRegistryStore.open(platform, nested);
    const r = store.session();
    assert.deepEqual(await r.getChildren("/"), []);
    await r.create("/x", none);
    assert.ok(readFileSync(`${nested}/${journalFileName}`).length > 30, "a record follows the header");
    await store.close();
  });
});

test("embedded: node data larger than ZooKeeper's limit is refused", async () => {
  const store = EmbeddedRegistryStore.inMemory(await testPlatform());
  const r = store.session();
  await r.create("/max", new Uint8Array(nodeDataBytesMax));
  await rejectsWith(r.create("/big", new Uint8Array(nodeDataBytesMax + 1)), "BadArguments", "/big");
  await rejectsWith(r.setData("/max", new Uint8Array(nodeDataBytesMax + 1)), "BadArguments", "/max");
  await rejectsWith(r.create("/mode", none, "sideways" as never), "BadArguments");
  await rejectsWith(r.multi([{ op: "rename" } as never]), "BadArguments");
  await store.close();
});

test("embedded: closing the store closes every session and removes their ephemerals", async () => {
  await withDir(async (dir, platform) => {
    const store = EmbeddedRegistryStore.open(platform, dir);
    const a = store.session();
    const b = store.session();
    await a.create("/a", none, "ephemeral");
    await b.create("/b", none);
    await store.close();
    await rejectsWith(a.exists("/a"), "SessionExpired");
    assert.throws(() => store.session(), /closed/);
    const reopened = EmbeddedRegistryStore.open(platform, dir);
    assert.deepEqual(await reopened.session().getChildren("/"), ["b"]);
    await reopened.close();
  });
});

test("embedded: a multi failure names the failing op", async () => {
  const store = EmbeddedRegistryStore.inMemory(await testPlatform());
  const r = store.session();
  await assert.rejects(
    r.multi([{ op: "create", path: "/a", data: none }, { op: "delete", path: "/zzz" }]),
    (e: unknown) => e instanceof RegistryError && e.code === "NoNode" && /op 1 of multi/.test(e.message),
  );
  await store.close();
});

test("embedded: a closing session hears nothing, not even its own ephemerals' deletion", async () => {
  const store = EmbeddedRegistryStore.inMemory(await testPlatform());
  const owner = store.session();
  const other = store.session();
  await owner.create("/e", none, "ephemeral");
  const own = recorder();
  const theirs = recorder();
  await owner.exists("/e", own.watcher);
  await other.exists("/e", theirs.watcher);
  await owner.close();
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(own.events, []);
  assert.deepEqual(theirs.events, [{ type: "deleted", path: "/e" }]);
  await store.close();
});

test("embedded: openGradually reads the tree open reads, and refuses what open refuses with the same error", async () => {
  await withDir(async (dir, platform) => {
    const file = `${dir}/${snapshotFileName}`;
    const store = EmbeddedRegistryStore.open(platform, dir);
    const r = store.session();
    await r.create("/t", bytes("topics"));
    await Promise.all(Array.from({ length: 300 }, (_, i) => r.create(`/t/${i}`, bytes(`state ${i}`))));
    await r.setData("/t/7", bytes("changed"));
    await store.close();
    const dump = async (s: EmbeddedRegistryStore) => {
      const session = s.session();
      const out: string[] = [];
      for (const path of ["/", "/t", ...(await session.getChildren("/t")).map((c) => `/t/${c}`)]) {
        const { data, stat } = await session.getData(path);
        out.push(`${path} ${str(data)} ${JSON.stringify(stat, (_, v) => typeof v === "bigint" ? String(v) : v)}`);
      }
      await s.close();
      return out;
    };
    const whole = await dump(EmbeddedRegistryStore.open(platform, dir));
    const gradual = await dump(await EmbeddedRegistryStore.openGradually(platform, dir));
    assert.equal(gradual.length, 302);
    assert.deepEqual(gradual, whole);

    // Damage within the one-node-per-line layout that the gradual parse reads line by line.
    const good = readFileSync(file, "utf8");
    const lines = good.split("\n");
    assert.equal(lines.length, 302 + 3, "close wrote one node per line (head, nodes, end, empty)");
    assert.doesNotThrow(() => JSON.parse(good), "and one JSON document");
    const variants: Array<[string, string]> = [
      ["a line that is not JSON", [...lines.slice(0, 3), "{", ...lines.slice(4)].join("\n")],
      ["a missing comma", [...lines.slice(0, 2), lines[2].slice(0, -1), ...lines.slice(3)].join("\n")],
      ["bad base64", good.replace(/"data":"[^"]*"/g, (m, at) => at > lines[0].length + lines[1].length + 2 && at < good.length / 2 ? '"data":"!!"' : m)],
      ["a duplicate node", [...lines.slice(0, 3), lines[2], ...lines.slice(3)].join("\n")],
      ["truncated", good.slice(0, good.length - 40)],
      ["not UTF-8 in a line", good.replace('"path":"/t/5"', '"path":"/t/\u00ff5"').replace("\u00ff", "\xff")],
    ];
    for (const [what, content] of variants) {
      writeFileSync(file, what === "not UTF-8 in a line" ? Uint8Array.from(content, (c) => c.charCodeAt(0) & 0xff) : content);
      let expected = "";
      assert.throws(() => EmbeddedRegistryStore.open(platform, dir), (e: unknown) => {
        expected = (e as Error).message;
        return /corrupt/.test(expected) && expected.includes(file);
      }, what);
      await assert.rejects(EmbeddedRegistryStore.openGradually(platform, dir), (e: unknown) => {
        assert.equal((e as Error).message, expected, what);
        return true;
      });
    }
  });
});
