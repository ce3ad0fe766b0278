// The Registry contract, as tests any backend must pass (embedded store, ZooKeeper client).
// registryContract registers top-level node:test tests; the caller gives a factory for a fresh,
// empty tree (for ZooKeeper: a fresh chroot) on which any number of sessions can be opened.
// Everything here holds for a real ZooKeeper 3.8, so the suite is also a check of our reading
// of ZooKeeper's semantics.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Registry, RegistryError, type RegistryErrorCode, type Stat } from "../../src/registry/mod.ts";
import { bytes, eventually, recorder, settle, str } from "./helpers.ts";

export interface RegistryFixture {
  /** Opens another session on the fixture's tree. */
  session(): Promise<Registry>;
  /** Closes every session it opened and releases the tree. */
  close(): Promise<void>;
}

export type MakeRegistry = () => Promise<RegistryFixture>;

const none = new Uint8Array(0);

/** Runs fn(error) checks: the promise must reject with a RegistryError of that code. */
export async function rejectsWith(
  p: Promise<unknown>,
  code: RegistryErrorCode,
  path?: string,
): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof RegistryError, `expected a RegistryError, got ${e}`);
    assert.equal(e.code, code, `expected ${code}, got ${e.message}`);
    if (path !== undefined) assert.equal(e.path, path);
    return true;
  });
}

/** `skip`: a reason to skip every test (an external part such as ZooKeeper is missing). */
export function registryContract(label: string, makeRegistry: MakeRegistry, options: { skip?: string | false } = {}): void {
  /** Runs body with a fresh fixture and one session, closing both whatever happens. */
  const contract = (name: string, body: (r: Registry, f: RegistryFixture) => Promise<void>) =>
    test(`${label}: ${name}`, { skip: options.skip ?? false }, async () => {
      const fixture = await makeRegistry();
      try {
        await body(await fixture.session(), fixture);
      } finally {
        await fixture.close();
      }
    });

  contract("create returns the path; getData returns the data and a fresh Stat", async (r) => {
    assert.equal(await r.create("/a", bytes("hello")), "/a");
    const { data, stat } = await r.getData("/a");
    assert.equal(str(data), "hello");
    assert.equal(stat.version, 0);
    assert.equal(stat.cversion, 0);
    assert.equal(stat.aversion, 0);
    assert.equal(stat.dataLength, 5);
    assert.equal(stat.numChildren, 0);
    assert.equal(stat.ephemeralOwner, 0n);
    assert.equal(stat.czxid, stat.mzxid);
    assert.equal(stat.pzxid, stat.czxid);
    assert.ok(stat.czxid > 0n);
    assert.ok(stat.ctime > 0 && stat.ctime === stat.mtime);
    assert.deepEqual(await r.exists("/a"), stat);
    assert.equal(await r.exists("/missing"), null);
    await r.create("/empty", none);
    assert.equal((await r.getData("/empty")).data.length, 0);
  });

  contract("create fails with NodeExists, and with NoNode when the parent is missing", async (r) => {
    await r.create("/a", none);
    await rejectsWith(r.create("/a", bytes("x")), "NodeExists", "/a");
    await rejectsWith(r.create("/x/y", none), "NoNode", "/x/y");
    await rejectsWith(r.create("/", none), "NodeExists");
    assert.equal((await r.getData("/a")).stat.version, 0);
  });

  contract("every operation refuses malformed paths with BadArguments", async (r) => {
    await r.create("/a", none);
    const bad = [
      "",
      "a",
      "a/b",
      "/a/",
      "//a",
      "/a//b",
      "/a/./b",
      "/a/..",
      "/.",
      "/..",
      "/a\u0000b",
      "/a\u0001",
    ];
    for (const p of bad) {
      await rejectsWith(r.create(p, none), "BadArguments");
      await rejectsWith(r.delete(p), "BadArguments");
      await rejectsWith(r.exists(p), "BadArguments");
      await rejectsWith(r.getData(p), "BadArguments");
      await rejectsWith(r.setData(p, none), "BadArguments");
      await rejectsWith(r.getChildren(p), "BadArguments");
      await rejectsWith(r.ensurePath(p), "BadArguments");
      await rejectsWith(r.multi([{ op: "check", path: p, version: -1 }]), "BadArguments");
    }
    // A sequential create checks the path with its suffix, so a trailing slash is fine there.
    assert.equal(await r.create("/a/", none, "persistent-sequential"), "/a/0000000000");
    assert.deepEqual(await r.getChildren("/"), ["a"]);
  });

  contract("setData bumps the version and mzxid; a conditional setData checks the version", async (r) => {
    await r.create("/a", bytes("v0"));
    const before = (await r.getData("/a")).stat;
    const s1 = await r.setData("/a", bytes("v1"));
    assert.equal(s1.version, 1);
    assert.ok(s1.mzxid > before.mzxid);
    assert.equal(s1.czxid, before.czxid);
    assert.equal(s1.dataLength, 2);
    const s2 = await r.setData("/a", bytes("v2"), 1);
    assert.equal(s2.version, 2);
    await rejectsWith(r.setData("/a", bytes("stale"), 1), "BadVersion", "/a");
    const s3 = await r.setData("/a", bytes("any"), -1);
    assert.equal(s3.version, 3);
    assert.equal(str((await r.getData("/a")).data), "any");
    await rejectsWith(r.setData("/missing", none), "NoNode", "/missing");
  });

  contract("delete: NoNode, BadVersion, NotEmpty, and the root cannot be deleted", async (r) => {
    await r.create("/a", none);
    await r.create("/a/b", none);
    await rejectsWith(r.delete("/missing"), "NoNode", "/missing");
    await rejectsWith(r.delete("/a"), "NotEmpty", "/a");
    await rejectsWith(r.delete("/a/b", 3), "BadVersion", "/a/b");
    await r.delete("/a/b", 0);
    await r.setData("/a", bytes("x"));
    await rejectsWith(r.delete("/a", 0), "BadVersion");
    await r.delete("/a", 1);
    assert.equal(await r.exists("/a"), null);
    await rejectsWith(r.delete("/"), "BadArguments");
  });

  contract(
    "children: sorted names; numChildren, cversion and pzxid follow creations and deletions",
    async (r) => {
      await r.create("/p", none);
      for (const name of ["b", "c", "a", "10", "9"]) await r.create(`/p/${name}`, none);
      assert.deepEqual(await r.getChildren("/p"), ["10", "9", "a", "b", "c"]);
      let stat = (await r.exists("/p")) as Stat;
      assert.equal(stat.numChildren, 5);
      assert.equal(stat.cversion, 5);
      assert.equal(stat.version, 0, "child changes do not touch the data version");
      const lastChild = (await r.exists("/p/9")) as Stat;
      assert.equal(stat.pzxid, lastChild.czxid);
      await r.delete("/p/a");
      stat = (await r.exists("/p")) as Stat;
      assert.equal(stat.numChildren, 4);
      assert.equal(stat.cversion, 6);
      assert.ok(stat.pzxid > lastChild.czxid);
      assert.deepEqual(await r.getChildren("/p/b"), []);
      await rejectsWith(r.getChildren("/missing"), "NoNode", "/missing");
    },
  );

  contract("sequential nodes get 10-digit suffixes counting the parent's child creations", async (r) => {
    await r.create("/q", none);
    assert.equal(await r.create("/q/n-", bytes("0"), "persistent-sequential"), "/q/n-0000000000");
    assert.equal(await r.create("/q/n-", bytes("1"), "persistent-sequential"), "/q/n-0000000001");
    await r.create("/q/plain", none); // counts too: every child creation takes a number
    assert.equal(await r.create("/q/other-", none, "persistent-sequential"), "/q/other-0000000003");
    await r.delete("/q/n-0000000000"); // deletions take none, though they bump cversion
    assert.equal(((await r.exists("/q")) as Stat).cversion, 5);
    const next = await r.create("/q/n-", none, "ephemeral-sequential");
    assert.equal(next, "/q/n-0000000004");
    assert.equal(str((await r.getData("/q/n-0000000001")).data), "1");
    assert.deepEqual(await r.getChildren("/q"), [
      "n-0000000001",
      "n-0000000004",
      "other-0000000003",
      "plain",
    ]);
  });

  contract("ephemeral nodes belong to their session and cannot have children", async (r, f) => {
    const other = await f.session();
    await r.create("/e", bytes("mine"), "ephemeral");
    const stat = (await other.exists("/e")) as Stat;
    assert.equal(stat.ephemeralOwner, r.sessionId);
    await rejectsWith(r.create("/e/child", none), "NoChildrenForEphemerals");
    await rejectsWith(r.create("/e/seq-", none, "persistent-sequential"), "NoChildrenForEphemerals");
    await rejectsWith(r.ensurePath("/e/x/y"), "NoChildrenForEphemerals");
    assert.deepEqual(await r.getChildren("/e"), []);
    // Anyone may delete or change an ephemeral node, as in ZooKeeper.
    await other.setData("/e", bytes("theirs"));
    await other.delete("/e");
    assert.equal(await r.exists("/e"), null);
  });

  contract("closing a session deletes its ephemerals and fires other sessions' watches", async (r, f) => {
    const owner = await f.session();
    await r.create("/brokers", none);
    await owner.create("/brokers/1", bytes("b1"), "ephemeral");
    const seq = await owner.create("/brokers/s-", none, "ephemeral-sequential");
    await r.create("/brokers/persistent", none);
    const data = recorder();
    const children = recorder();
    await r.exists("/brokers/1", data.watcher);
    await r.getChildren("/brokers", children.watcher);
    await owner.close();
    await eventually(() => data.events.length > 0 && children.events.length > 0, "watch events");
    await settle(r);
    assert.deepEqual(data.events, [{ type: "deleted", path: "/brokers/1" }]);
    assert.deepEqual(children.events, [{ type: "childrenChanged", path: "/brokers" }]);
    assert.equal(await r.exists("/brokers/1"), null);
    assert.equal(await r.exists(seq), null);
    assert.deepEqual(await r.getChildren("/brokers"), ["persistent"]);
  });

  contract("a closed session fails with SessionExpired; close is idempotent", async (_r, f) => {
    const s = await f.session();
    await s.create("/x", none);
    await s.close();
    await s.close();
    await rejectsWith(s.create("/y", none), "SessionExpired");
    await rejectsWith(s.getData("/x"), "SessionExpired");
    await rejectsWith(s.exists("/x"), "SessionExpired");
    await rejectsWith(s.getChildren("/"), "SessionExpired");
    await rejectsWith(s.setData("/x", none), "SessionExpired");
    await rejectsWith(s.delete("/x"), "SessionExpired");
    await rejectsWith(s.multi([]), "SessionExpired");
    await rejectsWith(s.ensurePath("/z"), "SessionExpired");
  });

  contract("sessions have distinct, non-zero ids", async (r, f) => {
    const a = await f.session();
    const b = await f.session();
    assert.ok(r.sessionId !== 0n && a.sessionId !== 0n && b.sessionId !== 0n);
    assert.equal(new Set([r.sessionId, a.sessionId, b.sessionId]).size, 3);
  });

  contract("exists on a missing node watches for its creation, once", async (r, f) => {
    const other = await f.session();
    const w = recorder();
    assert.equal(await r.exists("/n", w.watcher), null);
    await other.create("/n", none);
    await eventually(() => w.events.length > 0, "created event");
    await other.setData("/n", bytes("x"));
    await other.delete("/n");
    await other.create("/n", none);
    await settle(r);
    assert.deepEqual(w.events, [{ type: "created", path: "/n" }]);
  });

  contract("a data watch fires once, for the next change", async (r, f) => {
    const other = await f.session();
    await r.create("/d", bytes("0"));
    const w = recorder();
    await r.getData("/d", w.watcher);
    await other.setData("/d", bytes("1"));
    await eventually(() => w.events.length > 0, "dataChanged event");
    await other.setData("/d", bytes("2"));
    await settle(r);
    assert.deepEqual(w.events, [{ type: "dataChanged", path: "/d" }]);
    // Set again, it fires again: one-shot per registration.
    const again = recorder();
    await r.exists("/d", again.watcher);
    await other.delete("/d");
    await eventually(() => again.events.length > 0, "deleted event");
    assert.deepEqual(again.events, [{ type: "deleted", path: "/d" }]);
  });

  contract("a child watch fires once for a child change, and on the node's deletion", async (r, f) => {
    const other = await f.session();
    await r.create("/c", none);
    const w = recorder();
    await r.getChildren("/c", w.watcher);
    await other.setData("/c", bytes("data changes are not child changes"));
    await other.create("/c/1", none);
    await eventually(() => w.events.length > 0, "childrenChanged event");
    await other.create("/c/2", none);
    await settle(r);
    assert.deepEqual(w.events, [{ type: "childrenChanged", path: "/c" }]);
    const gone = recorder();
    await r.getChildren("/c/1", gone.watcher);
    await other.delete("/c/1");
    await eventually(() => gone.events.length > 0, "deleted event");
    assert.deepEqual(gone.events, [{ type: "deleted", path: "/c/1" }]);
  });

  contract("a watcher registered several ways on a path fires once per event", async (r, f) => {
    const other = await f.session();
    await r.create("/w", none);
    const w = recorder();
    await r.exists("/w", w.watcher);
    await r.getData("/w", w.watcher);
    await r.getChildren("/w", w.watcher);
    await other.delete("/w");
    await eventually(() => w.events.length > 0, "deleted event");
    await settle(r);
    assert.deepEqual(w.events, [{ type: "deleted", path: "/w" }]);
  });

  contract("getData and getChildren on a missing node fail and set no watch", async (r, f) => {
    const other = await f.session();
    const w = recorder();
    await rejectsWith(r.getData("/m", w.watcher), "NoNode", "/m");
    await rejectsWith(r.getChildren("/m", w.watcher), "NoNode", "/m");
    await other.create("/m", none);
    await other.create("/m/child", none);
    await settle(r);
    assert.deepEqual(w.events, []);
  });

  contract("watch events reach a session in the order of the changes", async (r, f) => {
    const other = await f.session();
    const log: string[] = [];
    const a = recorder(log, "a");
    const b = recorder(log, "b");
    const c = recorder(log, "c");
    await r.create("/o", none);
    await r.exists("/o/2", b.watcher);
    await r.exists("/o/1", a.watcher);
    await r.getChildren("/o", c.watcher);
    await other.create("/o/1", none);
    await other.create("/o/2", none);
    await eventually(() => log.length === 3, "three events");
    assert.deepEqual(log, ["a:created:/o/1", "c:childrenChanged:/o", "b:created:/o/2"]);
  });

  contract("multi commits every op as one transaction", async (r) => {
    await r.create("/m", bytes("v0"));
    await r.create("/m/old", none);
    const w = recorder();
    await r.exists("/m/new", w.watcher);
    const results = await r.multi([
      { op: "check", path: "/m", version: 0 },
      { op: "create", path: "/m/new", data: bytes("n") },
      { op: "create", path: "/m/new/child", data: none },
      { op: "create", path: "/m/s-", data: none, mode: "persistent-sequential" },
      { op: "setData", path: "/m", data: bytes("v1"), version: 0 },
      { op: "delete", path: "/m/old", version: 0 },
    ]);
    assert.equal(results.length, 6);
    assert.deepEqual(results[0], { op: "check" });
    assert.deepEqual(results[1], { op: "create", path: "/m/new" });
    assert.deepEqual(results[2], { op: "create", path: "/m/new/child" });
    assert.deepEqual(results[3], { op: "create", path: "/m/s-0000000002" });
    assert.equal(results[4].op, "setData");
    assert.equal((results[4] as { stat: Stat }).stat.version, 1);
    assert.deepEqual(results[5], { op: "delete" });
    const created = (await r.exists("/m/new")) as Stat;
    const child = (await r.exists("/m/new/child")) as Stat;
    assert.equal(created.czxid, child.czxid, "one transaction, one zxid");
    assert.equal((await r.exists("/m") as Stat).mzxid, created.czxid);
    assert.deepEqual(await r.getChildren("/m"), ["new", "s-0000000002"]);
    assert.deepEqual(await r.multi([]), []);
    await settle(r);
    assert.deepEqual(w.events, [{ type: "created", path: "/m/new" }]);
  });

  contract("a failing multi changes nothing and fires no watch", async (r) => {
    await r.create("/f", bytes("v0"));
    const data = recorder();
    const children = recorder();
    await r.getData("/f", data.watcher);
    await r.getChildren("/f", children.watcher);
    const before = (await r.exists("/f")) as Stat;
    await rejectsWith(
      r.multi([
        { op: "create", path: "/f/a", data: none },
        { op: "create", path: "/f/s-", data: none, mode: "persistent-sequential" },
        { op: "setData", path: "/f", data: bytes("v1") },
        { op: "check", path: "/f", version: 0 }, // the setData above made it 1
        { op: "delete", path: "/f/missing" },
      ]),
      "BadVersion",
      "/f",
    );
    assert.deepEqual(await r.exists("/f"), before);
    assert.equal(str((await r.getData("/f")).data), "v0");
    assert.deepEqual(await r.getChildren("/f"), []);
    // The failed multi consumed no sequence number.
    assert.equal(await r.create("/f/s-", none, "persistent-sequential"), "/f/s-0000000000");
    await settle(r);
    assert.deepEqual(data.events, []);
    assert.deepEqual(
      children.events,
      [{ type: "childrenChanged", path: "/f" }],
      "only the later create fired",
    );
  });

  contract("a failing multi reports the first failing op's error", async (r) => {
    await r.create("/g", none);
    await rejectsWith(
      r.multi([
        { op: "create", path: "/g/a", data: none },
        { op: "delete", path: "/g/missing" },
        { op: "create", path: "/g", data: none },
      ]),
      "NoNode",
      "/g/missing",
    );
    await rejectsWith(r.multi([{ op: "create", path: "/g", data: none }]), "NodeExists", "/g");
    await rejectsWith(r.multi([{ op: "delete", path: "/g", version: 5 }]), "BadVersion", "/g");
    await r.create("/g/kid", none);
    await rejectsWith(r.multi([{ op: "delete", path: "/g" }]), "NotEmpty", "/g");
    await rejectsWith(r.multi([{ op: "check", path: "/nope", version: 0 }]), "NoNode", "/nope");
    assert.deepEqual(await r.getChildren("/g"), ["kid"]);
  });

  contract("ensurePath creates missing ancestors and tolerates existing nodes", async (r) => {
    await r.create("/x", bytes("keep"));
    await r.ensurePath("/x/y/z");
    await r.ensurePath("/x/y/z");
    await r.ensurePath("/");
    assert.equal(str((await r.getData("/x")).data), "keep");
    const z = (await r.exists("/x/y/z")) as Stat;
    assert.equal(z.dataLength, 0);
    assert.equal(z.ephemeralOwner, 0n);
    assert.deepEqual(await r.getChildren("/x/y"), ["z"]);
  });

  contract("stored data is independent of callers' buffers", async (r) => {
    const input = bytes("abc");
    await r.create("/b", input);
    input[0] = 0x7a;
    const { data } = await r.getData("/b");
    assert.equal(str(data), "abc");
    data[1] = 0x7a;
    assert.equal(str((await r.getData("/b")).data), "abc");
  });

  contract("zxids grow with every change", async (r) => {
    const a = await r.create("/z1", none).then(() => r.exists("/z1")) as Stat;
    const b = await r.create("/z2", none).then(() => r.exists("/z2")) as Stat;
    const c = await r.setData("/z1", bytes("x"));
    assert.ok(a.czxid < b.czxid);
    assert.ok(b.czxid < c.mzxid);
  });
}
