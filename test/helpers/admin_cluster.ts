// Three brokers in this process on one ZooKeeper, each with its admin API on a free port, for the
// tests of the cluster-wide admin views and dashboard (test/admin/cluster_*.test.ts).
import assert from "node:assert/strict";
import { loadPlatform } from "../../src/platform/mod.ts";
import { CreateTopicsApi } from "../../src/protocol/mod.ts";
import { AdminEndpointZNode } from "../../src/registry/mod.ts";
import { ZooKeeperClient } from "../../src/zk/mod.ts";
import { startBroker, type TestBroker, tempDir } from "./broker.ts";
import { commitOffsets, findCoordinator } from "./groups.ts";
import { buildBatch, valueRecords } from "./record_batch.ts";
import { produce, WireClient } from "./wire.ts";
import { sleep, type ZkServer } from "./zookeeper.ts";

export async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

export const getJson = async (url: string) => {
  const res = await fetch(url);
  const body = await res.json();
  assert.equal(res.status, 200, `${url}: ${JSON.stringify(body)}`);
  return body;
};

/**
 * Three brokers with admin APIs; topic "orders" with three single-replica partitions, one led by
 * each broker, with 5 records each; a group whose coordinator is not broker 0, committed at
 * 1, 2, 3 (lag 4 + 3 + 2 = 9).
 */
export async function threeBrokerCluster(zk: { get(): Promise<ZkServer> }, label: string, extra: Record<string, string> = {}) {
  const server = await zk.get();
  const chroot = `/${label}-${process.pid}`;
  const root = tempDir(`${label}-`);
  const brokers: TestBroker[] = [];
  for (const id of [0, 1, 2]) {
    brokers.push(await startBroker({
      "broker.id": String(id),
      "zookeeper.connect": server.connectString + chroot,
      "zookeeper.session.timeout.ms": "6000",
      "admin.listeners": "http://127.0.0.1:0",
      "auto.create.topics.enable": "false",
      "offsets.topic.num.partitions": "3",
      "offsets.topic.replication.factor": "1",
      "group.initial.rebalance.delay.ms": "0",
      ...extra,
    }, `${root}/b${id}`));
  }
  const zkc = await ZooKeeperClient.connect(await loadPlatform(), { connectString: server.connectString + chroot, sessionTimeoutMs: 10_000 });
  const close = async () => {
    await zkc.close();
    for (const b of [...brokers].reverse()) await b.stop().catch(() => {});
  };
  try {
    const c = await WireClient.connect(brokers[0].port);
    const created = await c.request(CreateTopicsApi, 7, {
      topics: [{ name: "orders", numPartitions: -1, replicationFactor: -1, assignments: [0, 1, 2].map((p) => ({ partitionIndex: p, brokerIds: [p] })), configs: [] }],
      timeoutMs: 10_000,
      validateOnly: false,
    });
    assert.equal((created.topics as { errorCode: number }[])[0].errorCode, 0);
    for (const p of [0, 1, 2]) {
      const w = await WireClient.connect(brokers[p].port);
      await until(async () => (await produce(w, "orders", p, buildBatch(valueRecords(5)))).errorCode === 0, `a produce to orders-${p}`);
      w.close();
    }
    let group = "";
    let coordinator = -1;
    for (let i = 0; coordinator <= 0; i++) {
      group = `lagging-${i}`;
      coordinator = (await findCoordinator(c, group)).nodeId;
    }
    c.close();
    const w = await WireClient.connect(brokers[coordinator].port);
    assert.deepEqual(await commitOffsets(w, group, { orders: { 0: 1n, 1: 2n, 2: 3n } }), [0, 0, 0]);
    w.close();
    // Every broker's admin API published, and every broker's metadata knows every broker.
    await until(async () => (await zkc.getChildren(AdminEndpointZNode.parentPath)).children.length === 3, "three admin endpoints published");
    await until(async () => (await getJson(`${brokers[0].adminUrl}/v1/brokers`)).length === 3, "broker 0 knows the three brokers");
    return { brokers, zkc, group, coordinator, close };
  } catch (e) {
    await close();
    throw e;
  }
}

