// The ZooKeeper registry backend against a real ZooKeeper 3.8: the shared contract (each fixture
// in a fresh chroot), then what only this backend does: the chroot made when missing and kept
// apart from its neighbours, Kafka's ACLs under zookeeper.set.acl, error mapping, bad input.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Registry, RegistryError, ZooKeeperRegistry } from "../../src/registry/mod.ts";
import { digestId, Perms, ZooKeeperClient } from "../../src/zk/mod.ts";
import { sharedZooKeeper, skipUnlessZooKeeper } from "../helpers/zookeeper.ts";
import { registryContract, rejectsWith } from "./contract.ts";
import { bytes, testPlatform } from "./helpers.ts";

const skip = skipUnlessZooKeeper();
const zk = sharedZooKeeper();
const sessionTimeoutMs = 6_000;
let chroots = 0;

function uniqueChroot(label: string): string {
  return `/${label}-${process.pid}-${++chroots}-${Date.now().toString(36)}`;
}

/** A client on the whole tree (no chroot), for setting up and inspecting. */
async function rootClient(): Promise<ZooKeeperClient> {
  const server = await zk.get();
  return await ZooKeeperClient.connect(await testPlatform(), { connectString: server.connectString, sessionTimeoutMs });
}

async function deleteTree(client: ZooKeeperClient, path: string): Promise<void> {
  const { children } = await client.getChildren(path).catch(() => ({ children: [] as string[] }));
  for (const child of children) await deleteTree(client, `${path}/${child}`);
  await client.delete(path).catch(() => {});
}

async function open(chroot: string, extra: Partial<Parameters<typeof ZooKeeperRegistry.open>[1]> = {}): Promise<ZooKeeperRegistry> {
  const server = await zk.get();
  return await ZooKeeperRegistry.open(await testPlatform(), {
    connectString: `${server.connectString}${chroot}`,
    sessionTimeoutMs,
    ...extra,
  });
}

registryContract("zookeeper", async () => {
  const chroot = uniqueChroot("contract");
  const sessions: Registry[] = [];
  return {
    async session() {
      const r = await open(chroot);
      sessions.push(r);
      return r;
    },
    async close() {
      for (const s of sessions) await s.close();
      const root = await rootClient();
      try {
        await deleteTree(root, chroot);
      } finally {
        await root.close();
      }
    },
  };
}, { skip });

test("zookeeper registry: the chroot is created when missing, nested too, and isolates its tree", { skip }, async () => {
  const base = uniqueChroot("iso");
  const a = await open(`${base}/cluster-a/x`);
  const b = await open(`${base}/cluster-b`);
  const root = await rootClient();
  try {
    await a.ensurePath("/brokers/ids");
    await a.create("/brokers/ids/1", bytes("a1"), "ephemeral");
    await b.ensurePath("/brokers/ids");
    assert.deepEqual(await b.getChildren("/brokers/ids"), [], "b sees only its own tree");
    assert.deepEqual(await a.getChildren("/"), ["brokers"]);
    assert.notEqual(await root.exists(`${base}/cluster-a/x/brokers/ids/1`), null, "the server path carries the chroot");
    assert.equal((await a.exists("/brokers/ids/1"))!.ephemeralOwner, a.sessionId);
    // Watch events come back chroot-free.
    const events: string[] = [];
    await a.exists("/later", (e) => events.push(`${e.type} ${e.path}`));
    await root.create(`${base}/cluster-a/x/later`);
    await waitFor(() => events.length > 0);
    assert.deepEqual(events, ["created /later"]);
    await rejectsWith(a.delete("/"), "BadArguments");
    await rejectsWith(a.create("/", bytes("")), "NodeExists");
  } finally {
    await a.close();
    await b.close();
    await deleteTree(root, base);
    await root.close();
  }
});

test("zookeeper registry: ZooKeeper's errors arrive as RegistryErrors of the same name", { skip }, async () => {
  const chroot = uniqueChroot("errors");
  const r = await open(chroot);
  try {
    await r.create("/a", bytes("x"));
    await rejectsWith(r.create("/a", bytes("y")), "NodeExists", "/a");
    await rejectsWith(r.getData("/nope"), "NoNode", "/nope");
    await rejectsWith(r.setData("/a", bytes("z"), 7), "BadVersion", "/a");
    await r.create("/a/b", bytes(""));
    await rejectsWith(r.delete("/a"), "NotEmpty", "/a");
    await assert.rejects(r.multi([{ op: "check", path: "/a", version: 0 }, { op: "delete", path: "/gone" }]), (e: unknown) => {
      assert.ok(e instanceof RegistryError);
      assert.equal(e.code, "NoNode");
      assert.equal(e.path, "/gone");
      assert.match(e.message, /op 1 of multi/);
      return true;
    });
    await rejectsWith(r.multi([{ op: "delete", path: "/" }]), "BadArguments", "/");
    await rejectsWith(r.create("/big", new Uint8Array(0x100000)), "BadArguments", "/big");
  } finally {
    await r.close();
    const root = await rootClient();
    await deleteTree(root, chroot);
    await root.close();
  }
});

test("zookeeper registry: zookeeper.set.acl gives Kafka's ACLs; another identity cannot write", { skip }, async () => {
  const chroot = uniqueChroot("acl");
  const r = await open(chroot, { setAcl: true, digestAuth: "strand:s3cret" });
  const root = await rootClient();
  const intruder = await open(chroot, { digestAuth: "mallory:guess" });
  const anonymous = await open(chroot);
  try {
    await r.ensurePath("/brokers/topics");
    await r.ensurePath("/config/users");
    await r.ensurePath("/consumers");
    // ZooKeeper shows a digest only to a session with ADMIN rights on the node; others see "x".
    assert.deepEqual((await root.getACL(`${chroot}/brokers/topics`)).acl[0].id, { scheme: "digest", id: "strand:x" });
    await root.addAuth("digest", "strand:s3cret");
    const topics = await root.getACL(`${chroot}/brokers/topics`);
    const digest = "strand:" + (await sha1Base64("strand:s3cret"));
    assert.equal(digest, await digestId("strand:s3cret"));
    assert.deepEqual(topics.acl, [
      { perms: Perms.ALL, id: { scheme: "digest", id: digest } },
      { perms: Perms.READ, id: { scheme: "world", id: "anyone" } },
    ]);
    const users = await root.getACL(`${chroot}/config/users`);
    assert.deepEqual(users.acl, [{ perms: Perms.ALL, id: { scheme: "digest", id: digest } }], "sensitive: no world read");
    const consumers = await root.getACL(`${chroot}/consumers`);
    assert.deepEqual(consumers.acl, [{ perms: Perms.ALL, id: { scheme: "world", id: "anyone" } }]);
    const chrootAcl = await root.getACL(chroot);
    assert.equal(chrootAcl.acl[0].id.scheme, "digest", "the chroot strand created is protected too");
    // Others may read where world-read is granted, but not write or create.
    assert.deepEqual(await anonymous.getChildren("/brokers"), ["topics"]);
    await rejectsWith(intruder.create("/brokers/topics/t", bytes("{}")), "NoAuth", "/brokers/topics/t");
    await rejectsWith(anonymous.setData("/brokers/topics", bytes("x")), "NoAuth");
    await rejectsWith(intruder.getChildren("/config/users"), "NoAuth");
    // The owner can.
    await r.create("/brokers/topics/t", bytes("{}"));
  } finally {
    await intruder.close();
    await anonymous.close();
    await r.close();
    // root has the owner's credential by now: it may remove the protected tree.
    await deleteTree(root, chroot);
    await root.close();
  }
});

test("zookeeper registry: set.acl without a credential, and bad connect strings, are refused clearly", { skip }, async () => {
  const platform = await testPlatform();
  await assert.rejects(
    ZooKeeperRegistry.open(platform, { connectString: "127.0.0.1:1", sessionTimeoutMs, setAcl: true }),
    /zookeeper\.digest\.auth/,
  );
  for (const bad of ["", "host:notaport", "h1:2181,,h2:2181", "h1:99999", "h1:2181/chroot/", "h1:2181/a//b"]) {
    await assert.rejects(ZooKeeperRegistry.open(platform, { connectString: bad, sessionTimeoutMs }), (e: unknown) => {
      assert.ok(e instanceof RegistryError, String(e));
      assert.equal(e.code, "BadArguments", bad);
      assert.match(e.message, /connect string/);
      return true;
    });
  }
});

test("zookeeper registry: an unreachable ensemble fails open() after the connection timeout, naming the servers", { skip }, async () => {
  const platform = await testPlatform();
  const started = Date.now();
  await assert.rejects(
    ZooKeeperRegistry.open(platform, { connectString: "127.0.0.1:1,127.0.0.1:2/strand", sessionTimeoutMs, connectionTimeoutMs: 1_500 }),
    (e: unknown) => {
      assert.ok(e instanceof RegistryError);
      assert.equal(e.code, "ConnectionLoss");
      assert.match(e.message, /127\.0\.0\.1:1/);
      assert.match(e.message, /1500 ms/);
      return true;
    },
  );
  const tookMs = Date.now() - started;
  assert.ok(tookMs >= 1_400 && tookMs < 6_000, `took ${tookMs} ms`);
});

test("zookeeper registry: stop the shared ZooKeeper", async () => {
  await zk.stop();
});

async function sha1Base64(s: string): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-1", new TextEncoder().encode(s)));
  return btoa(String.fromCharCode(...hash));
}

async function waitFor(cond: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
