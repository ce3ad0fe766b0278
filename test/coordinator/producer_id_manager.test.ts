// ProducerIdManager (Kafka's ZkProducerIdManager) on both registry backends: ids unique across
// brokers sharing /latest_producer_id_block and across restarts, Kafka's JSON in the node, a
// conditional write that loses the race retried, the next block fetched before the current one
// runs out, a corrupt node refused rather than ids handed out again, an unreachable registry
// answered as retriable and recovered from.
import assert from "node:assert/strict";
import { test } from "node:test";
import { allocateProducerIdBlock, ProducerIdManager, ProducerIdsUnavailable } from "../../src/coordinator/mod.ts";
import { EmbeddedRegistryStore, ensureKafkaPaths, ProducerIdBlockZNode, type Registry, RegistryError, ZooKeeperRegistry } from "../../src/registry/mod.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { ZooKeeperClient } from "../../src/zk/mod.ts";
import { bytes, str, testPlatform, withDir } from "../registry/helpers.ts";
import { sharedZooKeeper, skipUnlessZooKeeper } from "../helpers/zookeeper.ts";

const path = ProducerIdBlockZNode.path;

/** Two brokers' managers asking at once, interleaved; every id handed out once. */
async function interleaved(a: ProducerIdManager, b: ProducerIdManager, each: number): Promise<bigint[]> {
  const asks: Promise<bigint>[] = [];
  for (let i = 0; i < each; i++) asks.push(a.generateProducerId(), b.generateProducerId());
  return await Promise.all(asks);
}

function assertUnique(ids: bigint[], what: string): void {
  assert.equal(new Set(ids).size, ids.length, `${what}: no id handed out twice`);
  for (const id of ids) assert.ok(id >= 0n, `${what}: ids are not negative`);
}

/** A registry whose calls can be counted, failed, or interleaved with another writer's. */
function wrapped(inner: Registry) {
  const w = {
    reads: 0,
    writes: 0,
    fail: null as RegistryError | null,
    /** Runs once, after the next read of the block node and before its write. */
    afterRead: null as (() => Promise<void>) | null,
    registry: Object.create(inner) as Registry,
  };
  w.registry.getData = async (p, watch) => {
    if (w.fail !== null) throw w.fail;
    w.reads++;
    const out = await inner.getData(p, watch);
    const hook = w.afterRead;
    w.afterRead = null;
    if (hook !== null) await hook();
    return out;
  };
  w.registry.setData = async (p, data, version) => {
    if (w.fail !== null) throw w.fail;
    w.writes++;
    return await inner.setData(p, data, version);
  };
  return w;
}

/** An embedded registry in a temp dir with Kafka's paths made, closed afterwards. */
async function withRegistry(body: (r: Registry, store: EmbeddedRegistryStore) => Promise<void>): Promise<void> {
  await withDir(async (dir, platform) => {
    const store = EmbeddedRegistryStore.open(platform, dir);
    try {
      const r = store.session();
      await ensureKafkaPaths(r);
      await body(r, store);
    } finally {
      await store.close();
    }
  });
}

test("producer ids (embedded): two brokers interleaved and a restart never hand out an id twice; the node holds Kafka's JSON", async () => {
  await withDir(async (dir, platform) => {
    let store = EmbeddedRegistryStore.open(platform, dir);
    let r = store.session();
    await ensureKafkaPaths(r);
    const a = new ProducerIdManager(1, r, silentLogger);
    const b = new ProducerIdManager(2, store.session(), silentLogger);
    const first = await interleaved(a, b, 2500);
    assertUnique(first, "two brokers");
    assert.ok(first.some((id) => id < 1000n), "the first block starts at 0");
    const node = JSON.parse(str((await r.getData(path)).data));
    assert.deepEqual(Object.keys(node).sort(), ["block_end", "block_start", "broker", "version"]);
    assert.equal(node.version, 1);
    assert.equal(typeof node.block_start, "string", "Kafka writes the ids as strings");
    assert.equal(BigInt(node.block_end) - BigInt(node.block_start), 999n);
    const maxBefore = first.reduce((m, x) => (x > m ? x : m), -1n);
    assert.ok(BigInt(node.block_end) >= maxBefore, "every id handed out lies in a block the node has passed");

    // Restart: the store is reopened; a new manager starts past every block taken before.
    await store.close();
    store = EmbeddedRegistryStore.open(platform, dir);
    r = store.session();
    const again = new ProducerIdManager(1, r, silentLogger);
    const later = [await again.generateProducerId(), await again.generateProducerId()];
    assert.ok(later[0] > maxBefore && later[1] === later[0] + 1n, `after restart ${later} follow ${maxBefore}`);
    assertUnique([...first, ...later], "across the restart");
    await store.close();
  });
});

test("producer ids: a write that loses the race to another broker is retried on the new version", async () => {
  await withRegistry(async (r, store) => {
    const w = wrapped(r);
    // Between this broker's read and its write, broker 2 takes a block.
    let theirs = null as Awaited<ReturnType<typeof allocateProducerIdBlock>> | null;
    w.afterRead = async () => {
      theirs = await allocateProducerIdBlock(store.session(), 2);
    };
    const ours = await allocateProducerIdBlock(w.registry, 1);
    assert.ok(theirs !== null);
    assert.equal(theirs!.firstProducerId, 0n, "broker 2 got the first block");
    assert.equal(ours.firstProducerId, 1000n, "broker 1 retried and got the next one");
    assert.equal(w.reads, 2, "read again after the conflict");
    assert.equal(w.writes, 2, "the first write was refused (BadVersion), the second succeeded");
    const node = ProducerIdBlockZNode.decode((await r.getData(path)).data)!;
    assert.deepEqual(node, { assignedBrokerId: 1, firstProducerId: 1000n, size: 1000 });
  });
});

test("producer ids: the next block is fetched when 90% of the current one is used, so the first id of a block does not wait", async () => {
  await withRegistry(async (r) => {
    const w = wrapped(r);
    const m = new ProducerIdManager(0, w.registry, silentLogger, 20);
    m.startup();
    for (let i = 0; i < 17; i++) assert.equal(await m.generateProducerId(), BigInt(i));
    assert.equal(w.writes, 1, "one block so far");
    await m.generateProducerId(); // id 17: two left, under 10%
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(w.writes, 2, "the next block was taken in the background");
    // The registry goes away: the ids of both blocks are still handed out, in order.
    w.fail = new RegistryError("ConnectionLoss", path);
    const rest: bigint[] = [];
    for (let i = 18; i < 40; i++) rest.push(await m.generateProducerId());
    assert.deepEqual(rest, Array.from({ length: 22 }, (_, i) => BigInt(18 + i)));
    // Past them, with the registry still unreachable: retriable, and no id invented.
    await assert.rejects(m.generateProducerId(), ProducerIdsUnavailable);
    await assert.rejects(m.generateProducerId(), ProducerIdsUnavailable);
    w.fail = null;
    assert.equal(await m.generateProducerId(), 40n, "back: the next block, where the last ended");
  });
});

test("producer ids: a node that does not hold a block is refused (no id from 0 again); an empty node starts at 0", async () => {
  await withRegistry(async (r) => {
    assert.equal((await r.getData(path)).data.length, 0, "created empty at start-up, as Kafka's createTopLevelPaths");
    assert.equal((await allocateProducerIdBlock(r, 0)).firstProducerId, 0n);
    await r.setData(path, bytes(`{"version":1,"broker":0,"block_start":"x"}`));
    const m = new ProducerIdManager(0, r, silentLogger);
    await assert.rejects(m.generateProducerId(), /does not hold a producer id block/);
    assert.equal(str((await r.getData(path)).data), `{"version":1,"broker":0,"block_start":"x"}`, "left as found");
    // The last block possible: the next would overflow int64.
    await r.setData(path, ProducerIdBlockZNode.encode({ assignedBrokerId: 0, firstProducerId: (1n << 63n) - 1000n, size: 1000 }));
    await assert.rejects(allocateProducerIdBlock(r, 0), /every producer id has been handed out/);
  });
});

const skip = skipUnlessZooKeeper();
const zk = sharedZooKeeper();

test("producer ids (ZooKeeper): two brokers' sessions take blocks from one node, no id twice, the node readable as Kafka's", { skip }, async () => {
  const server = await zk.get();
  const chroot = `/pid-${process.pid}-${Date.now().toString(36)}`;
  const platform = await testPlatform();
  const open = () => ZooKeeperRegistry.open(platform, { connectString: `${server.connectString}${chroot}`, sessionTimeoutMs: 6_000 });
  const r1 = await open();
  const r2 = await open();
  try {
    await ensureKafkaPaths(r1);
    const a = new ProducerIdManager(1, r1, silentLogger);
    const b = new ProducerIdManager(2, r2, silentLogger);
    const ids = await interleaved(a, b, 1500);
    assertUnique(ids, "two brokers on ZooKeeper");
    // Both brokers racing for blocks at once: some of their writes conflict, all retried.
    const racing = await Promise.all(Array.from({ length: 6 }, (_, i) => allocateProducerIdBlock(i % 2 === 0 ? r1 : r2, i)));
    const starts = racing.map((x) => x.firstProducerId);
    assert.equal(new Set(starts).size, 6, "six distinct blocks");
    const root = await ZooKeeperClient.connect(platform, { connectString: server.connectString, sessionTimeoutMs: 6_000 });
    try {
      const { data } = await root.getData(`${chroot}${path}`);
      const node = JSON.parse(str(data));
      const maxStart = starts.reduce((m, x) => (x > m ? x : m), 0n);
      assert.equal(node.block_start, maxStart.toString(), "the node names the last block taken");
      assert.equal(node.block_end, (maxStart + 999n).toString());
    } finally {
      await root.close();
    }
  } finally {
    await r1.close();
    await r2.close();
    await zk.stop();
  }
});
