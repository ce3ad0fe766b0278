// The whole cluster from any broker's admin API (src/admin/cluster_views.ts): three brokers in this
// process on one ZooKeeper, each with its admin API on a free port, published under
// /strand/admin_endpoints/<id>. Broker 0's API lists every broker with its admin URL, the groups
// of every coordinator, a group coordinated by another broker with its lag (high watermarks of
// partitions the coordinator does not lead come from their leaders), and every broker's counters.
// A peer that accepts and never answers, or answers as another broker, shows as unreachable
// instead of hanging the answer or passing for the broker asked.
import assert from "node:assert/strict";
import { test } from "node:test";
import { AdminEndpointZNode } from "../../src/registry/mod.ts";
import { getJson, threeBrokerCluster } from "../helpers/admin_cluster.ts";
import { sharedZooKeeper, skipUnlessZooKeeper, startFakeServer } from "../helpers/zookeeper.ts";

const zk = sharedZooKeeper();

test("cluster views: broker 0's admin API shows every broker, every coordinator's groups with lag, and every broker's counters; a hung or wrong peer is reported, not waited on", { skip: skipUnlessZooKeeper(), timeout: 120_000 }, async () => {
  const { brokers, zkc, group, coordinator, close } = await threeBrokerCluster(zk, "strand-cluster-views");
  const a = brokers[0].adminUrl;
  const hung = await startFakeServer(() => {/* accepts, never answers */});
  try {
    const listed = await getJson(`${a}/v1/cluster/brokers`) as { id: number; admin_url: string; admin_reachable: boolean }[];
    assert.deepEqual(listed.map((b) => [b.id, b.admin_url, b.admin_reachable]), brokers.map((b, id) => [id, b.adminUrl, true]));

    const groups = await getJson(`${a}/v1/cluster/groups`);
    assert.deepEqual(groups.unreachable, []);
    assert.deepEqual(groups.groups.filter((g: { group_id: string }) => g.group_id === group).map((g: { coordinator_id: number }) => g.coordinator_id), [coordinator]);
    assert.equal((await getJson(`${a}/v1/groups`)).some((g: { group_id: string }) => g.group_id === group), false, "broker 0 alone does not know the group");

    const detail = await getJson(`${a}/v1/cluster/groups/${group}`);
    assert.equal(detail.coordinator_id, coordinator);
    assert.deepEqual(detail.offsets.map((o: { partition: number; committed_offset: number; high_watermark: number; lag: number }) => [o.partition, o.committed_offset, o.high_watermark, o.lag]), [[0, 1, 5, 4], [1, 2, 5, 3], [2, 3, 5, 2]]);
    assert.equal(detail.total_lag, 9);
    assert.equal((await fetch(`${a}/v1/cluster/groups/no-such-group`)).status, 404);

    const stats = await getJson(`${a}/v1/cluster/stats`);
    assert.deepEqual(stats.brokers.map((b: { broker_id: number; error: string | null }) => [b.broker_id, b.error]), [[0, null], [1, null], [2, null]]);
    for (const b of stats.brokers) {
      assert.deepEqual(b.stats.topics.filter((t: { topic: string }) => t.topic === "orders").map((t: { messages_in: number }) => t.messages_in), [5], `broker ${b.broker_id} appended its partition's 5 records`);
    }

    // Broker 2's published address now leads to a server that never answers, then to broker 1.
    const znode = AdminEndpointZNode.path(2);
    await zkc.setData(znode, AdminEndpointZNode.encode([`http://127.0.0.1:${hung.port}`]), -1);
    // Peers' addresses are read again at most every second: ask until the new one is used.
    let slow = await getJson(`${a}/v1/cluster/stats`);
    while (slow.brokers[2].stats !== null) slow = await getJson(`${a}/v1/cluster/stats`);
    assert.deepEqual(slow.brokers.map((b: { broker_id: number; stats: unknown }) => [b.broker_id, b.stats === null]), [[0, false], [1, false], [2, true]]);
    assert.match(slow.brokers[2].error, /timed out|abort|timeout/i);
    const reach = await getJson(`${a}/v1/cluster/brokers`) as { id: number; admin_reachable: boolean }[];
    assert.deepEqual(reach.map((b) => b.admin_reachable), [true, true, false]);
    await zkc.setData(znode, AdminEndpointZNode.encode([brokers[1].adminUrl]), -1);
    let wrong = await getJson(`${a}/v1/cluster/groups`);
    while (wrong.unreachable.length === 0 || /timed out|abort|timeout/i.test(wrong.unreachable[0].error)) wrong = await getJson(`${a}/v1/cluster/groups`);
    assert.deepEqual(wrong.unreachable.map((u: { broker_id: number; error: string }) => [u.broker_id, /answered as broker 1, not 2/.test(u.error)]), [[2, true]]);
  } finally {
    await hung.close();
    await close();
    await zk.stop();
  }
});
