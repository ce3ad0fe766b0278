// AlterPartition (56, KIP-497) on a three-broker cluster over a real ZooKeeper 3.8 (Debian package
// zookeeper), brokers in this process over real sockets, each with a client listener (CLIENT) and
// an inter-broker one (BROKER):
//
// - A follower whose fetcher is stopped falls out of the ISR after replica.lag.time.max.ms and
//   comes back once it fetches again; both changes go leader → controller as AlterPartition (the
//   leader logs "ISR changed through AlterPartition", the controller "ISR changed by
//   AlterPartition"), none through the leaders' own ZooKeeper writes, and ZooKeeper's state znode
//   has the ISR the controller answered, with the partition epoch it answered.
// - Broker 2 runs with inter.broker.protocol.version=2.6 (a cluster in the middle of an upgrade):
//   the partitions it leads change their ISR the old way (the leader writes the state znode and
//   /isr_change_notification), and the controller still tells every broker.
// - A forged AlterPartition from a plain client (the CLIENT listener) is CLUSTER_AUTHORIZATION_FAILED
//   and changes nothing, whatever epochs it names; on the inter-broker listener Kafka 3.8's codes
//   answer each bad proposal: a stale partition epoch INVALID_UPDATE_VERSION, an old leader epoch
//   FENCED_LEADER_EPOCH, a wrong broker epoch STALE_BROKER_EPOCH, a non-controller NOT_CONTROLLER,
//   an unknown partition UNKNOWN_TOPIC_OR_PARTITION, an unknown topic id UNKNOWN_TOPIC_ID, a
//   member at the wrong broker epoch (v3) INELIGIBLE_REPLICA; the state already asked for is
//   answered as it is. With an authorizer, CLUSTER_ACTION decides instead of the listener.
import assert from "node:assert/strict";
import { test } from "node:test";
import { AclOperation, type Authorizer } from "../../src/authorizer/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import { AlterPartitionApi, CreateTopicsApi, type Struct } from "../../src/protocol/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { ZooKeeperClient } from "../../src/zk/mod.ts";
import { type InProcessNode, startInProcessNode, waitUntil } from "../helpers/in_process_cluster.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { produce, WireClient } from "../helpers/wire.ts";
import { sharedZooKeeper, skipUnlessZooKeeper } from "../helpers/zookeeper.ts";

const skip = skipUnlessZooKeeper();
const zk = sharedZooKeeper();
const dec = new TextDecoder();
const LAG_MS = 3_000;

type Node = InProcessNode;

const startNode = (id: number, connect: string, extra: Record<string, string> = {}) =>
  startInProcessNode(id, connect, { "replica.lag.time.max.ms": String(LAG_MS), "auto.leader.rebalance.enable": "false", ...extra });
const waitFor = (cond: () => boolean | Promise<boolean>, what: string) => waitUntil(cond, what, 30_000);

/** ZooKeeper's state znode of topic-0 and the registration czxid of each broker. */
async function zkTruth(connect: string, topic: string): Promise<{ isr: number[]; leader: number; leaderEpoch: number; version: number; czxid: Map<number, bigint> }> {
  const c = await ZooKeeperClient.connect(await loadPlatform(), { connectString: connect, sessionTimeoutMs: 4_000 });
  try {
    const { data, stat } = await c.getData(`/brokers/topics/${topic}/partitions/0/state`);
    const s = JSON.parse(dec.decode(data));
    const czxid = new Map<number, bigint>();
    for (const id of [0, 1, 2]) czxid.set(id, (await c.exists(`/brokers/ids/${id}`))!.czxid);
    return { isr: s.isr, leader: s.leader, leaderEpoch: s.leader_epoch, version: stat.version, czxid };
  } finally {
    await c.close();
  }
}

// deno-lint-ignore no-explicit-any
const fetchersOf = (n: Node) => (n.b.broker as any).network.fetchers as {
  removeFetcherForPartitions(p: { topic: string; partition: number }[]): void;
  addFetcherForPartitions(p: { topic: string; partition: number; leaderId: number; leaderEpoch: number }[]): void;
};

/** Stops a follower's fetching of topic-0 until the leader drops it from the ISR, then resumes it until it is back. */
async function lagAndCatchUp(nodes: Node[], connect: string, topic: string, follower: Node): Promise<{ shrunk: number[]; grown: number[] }> {
  const leader = nodes.find((n) => n.b.broker.services.replicaManager.getPartition(topic, 0)?.isLeader)!;
  fetchersOf(follower).removeFetcherForPartitions([{ topic, partition: 0 }]);
  const c = await WireClient.connect(leader.b.port);
  try {
    assert.equal((await produce(c, topic, 0, buildBatch(valueRecords(5, "behind-")), 1)).errorCode, ErrorCode.NONE);
  } finally {
    c.close();
  }
  await waitFor(async () => !(await zkTruth(connect, topic)).isr.includes(follower.id), `${topic}: broker ${follower.id} out of the ISR in ZooKeeper`);
  const shrunk = (await zkTruth(connect, topic)).isr;
  const state = leader.b.broker.services.replicaManager.getPartition(topic, 0)!.state;
  fetchersOf(follower).addFetcherForPartitions([{ topic, partition: 0, leaderId: leader.id, leaderEpoch: state.leaderEpoch }]);
  await waitFor(async () => (await zkTruth(connect, topic)).isr.includes(follower.id), `${topic}: broker ${follower.id} back in the ISR`);
  return { shrunk, grown: (await zkTruth(connect, topic)).isr };
}

function proposal(brokerId: number, brokerEpoch: bigint, topic: string, p: { partition?: number; leaderEpoch: number; isr: number[]; partitionEpoch: number }): Struct {
  return {
    brokerId,
    brokerEpoch,
    topics: [{ topicName: topic, partitions: [{ partitionIndex: p.partition ?? 0, leaderEpoch: p.leaderEpoch, newIsr: p.isr, leaderRecoveryState: 0, partitionEpoch: p.partitionEpoch }] }],
  };
}

/** What a leader logs when it changed an ISR: itself in ZooKeeper, or through the controller. */
const isrWrite = new Set(["ISR changed", "ISR changed through AlterPartition"]);

const answer = (r: Struct) => {
  const p = (r.topics as { partitions: { errorCode: number; isr: number[]; partitionEpoch: number }[] }[])[0]?.partitions[0];
  return { top: r.errorCode as number, code: p?.errorCode ?? null, isr: p?.isr ?? null, partitionEpoch: p?.partitionEpoch ?? null };
};

test("AlterPartition: ISR shrink and expand go through the controller; a 2.6 leader writes ZooKeeper itself; forged and stale proposals refused with Kafka's codes", { skip }, async () => {
  const server = await zk.get();
  const connect = `${server.connectString}/alter-partition-${process.pid}`;
  const nodes: Node[] = [];
  try {
    nodes.push(await startNode(0, connect));
    nodes.push(await startNode(1, connect));
    nodes.push(await startNode(2, connect, { "inter.broker.protocol.version": "2.6" }));
    await waitFor(() => nodes.every((n) => n.b.broker.services.metadata.aliveBrokers().length === 3), "three brokers in every broker's metadata");
    const admin = await WireClient.connect(nodes[0].b.port);
    try {
      const r = await admin.request(CreateTopicsApi, 7, {
        topics: [
          { name: "ap", numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [0, 1, 2] }], configs: [] },
          { name: "old", numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [2, 0, 1] }], configs: [] },
        ],
        timeoutMs: 10_000,
        validateOnly: false,
      });
      assert.deepEqual((r.topics as { errorCode: number }[]).map((t) => t.errorCode), [0, 0]);
    } finally {
      admin.close();
    }
    const partitionOf = (n: Node, t: string) => n.b.broker.services.replicaManager.getPartition(t, 0);
    await waitFor(() => nodes.every((n) => partitionOf(n, "ap") !== undefined && partitionOf(n, "old") !== undefined), "replicas everywhere");
    await waitFor(async () => (await zkTruth(connect, "ap")).isr.length === 3 && (await zkTruth(connect, "old")).isr.length === 3, "full ISRs");
    const controllerId = nodes[0].b.broker.services.metadata.controllerId;
    const controller = nodes.find((n) => n.id === controllerId)!;
    const notController = nodes.find((n) => n.id !== controllerId)!;

    // KIP-497: broker 0 leads "ap"; broker 1 falls behind and catches up.
    const ap = await lagAndCatchUp(nodes, connect, "ap", nodes[1]);
    assert.ok(!ap.shrunk.includes(1) && ap.shrunk.includes(0), `shrunk to ${ap.shrunk}`);
    assert.ok(ap.grown.includes(1));
    const viaApi = controller.logger.lines.filter((l) => l.msg === "ISR changed by AlterPartition" && l.fields.topic === "ap");
    assert.ok(viaApi.some((l) => !(l.fields.isr as number[]).includes(1)), "the controller wrote the shrink");
    assert.ok((viaApi.at(-1)!.fields.isr as number[]).includes(1), "and the expansion");
    const leaderSaid = nodes[0].logger.lines.filter((l) => l.fields.topic === "ap" && isrWrite.has(l.msg)).map((l) => l.msg);
    assert.ok(leaderSaid.length >= 2 && leaderSaid.every((m) => m === "ISR changed through AlterPartition"), `the leader wrote nothing itself: ${leaderSaid}`);
    const truth = await zkTruth(connect, "ap");
    assert.equal(viaApi.at(-1)!.fields.partitionEpoch, truth.version, "the partition epoch answered is the znode's version");
    await waitFor(() => nodes.every((n) => n.b.broker.services.metadata.getTopic("ap")!.partitions[0].isr.length === 3), "every broker's metadata has the ISR back");

    // A mixed cluster: broker 2 (inter.broker.protocol.version=2.6) leads "old" and writes ZooKeeper itself.
    const old = await lagAndCatchUp(nodes, connect, "old", nodes[0]);
    assert.ok(!old.shrunk.includes(0) && old.shrunk.includes(2), `shrunk to ${old.shrunk}`);
    const oldSaid = nodes[2].logger.lines.filter((l) => l.fields.topic === "old" && isrWrite.has(l.msg)).map((l) => l.msg);
    assert.ok(oldSaid.length >= 2 && oldSaid.every((m) => m === "ISR changed"), `the 2.6 leader's own writes: ${oldSaid}`);
    assert.equal(controller.logger.lines.filter((l) => l.msg === "ISR changed by AlterPartition" && l.fields.topic === "old").length, 0);
    await waitFor(() => nodes.every((n) => n.b.broker.services.metadata.getTopic("old")!.partitions[0].isr.length === 3), "the notification reached every broker's metadata");

    // Forged and stale proposals. The real leader (0) and its registration; the current epochs.
    const cur = partitionOf(nodes[0], "ap")!.state;
    const epoch0 = truth.czxid.get(0)!;
    const good = { leaderEpoch: cur.leaderEpoch, isr: [0, 1], partitionEpoch: cur.partitionEpoch };
    const client = await WireClient.connect(controller.b.port);
    const inter = await WireClient.connect(controller.brokerPort);
    const other = await WireClient.connect(notController.brokerPort);
    try {
      const forged = answer(await client.request(AlterPartitionApi, 1, proposal(0, epoch0, "ap", good)));
      assert.deepEqual(forged, { top: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, code: null, isr: null, partitionEpoch: null }, "a plain client may not");
      const ask = async (body: Struct, version = 1) => answer(await inter.request(AlterPartitionApi, version, body));
      assert.equal((await ask(proposal(0, epoch0, "ap", { ...good, partitionEpoch: cur.partitionEpoch - 1 }))).code, ErrorCode.INVALID_UPDATE_VERSION);
      assert.equal((await ask(proposal(0, epoch0, "ap", { ...good, leaderEpoch: cur.leaderEpoch - 1 }))).code, ErrorCode.FENCED_LEADER_EPOCH);
      assert.equal((await ask(proposal(0, epoch0 + 1n, "ap", good))).top, ErrorCode.STALE_BROKER_EPOCH);
      assert.equal((await ask(proposal(0, epoch0, "ap", { ...good, partition: 7 }))).code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      assert.equal((await ask(proposal(1, truth.czxid.get(1)!, "ap", good))).code, ErrorCode.INVALID_REQUEST, "only the leader proposes");
      assert.equal(answer(await other.request(AlterPartitionApi, 1, proposal(0, epoch0, "ap", good))).top, ErrorCode.NOT_CONTROLLER);
      const byId = (id: Uint8Array, members: { brokerId: number; brokerEpoch: bigint }[]) => ({
        brokerId: 0,
        brokerEpoch: epoch0,
        topics: [{ topicId: id, partitions: [{ partitionIndex: 0, leaderEpoch: cur.leaderEpoch, newIsrWithEpochs: members, leaderRecoveryState: 0, partitionEpoch: cur.partitionEpoch }] }],
      });
      assert.equal((await ask(byId(new Uint8Array(16).fill(9), [{ brokerId: 0, brokerEpoch: epoch0 }]), 3)).code, ErrorCode.UNKNOWN_TOPIC_ID);
      const staleMember = [{ brokerId: 0, brokerEpoch: epoch0 }, { brokerId: 1, brokerEpoch: truth.czxid.get(1)! - 1n }];
      assert.equal((await ask(byId(cur.topicId, staleMember), 3)).code, ErrorCode.INELIGIBLE_REPLICA);
      // The state already there: answered as it is (a leader's retry after a lost answer), nothing written.
      const same = await ask(proposal(0, epoch0, "ap", { ...good, isr: cur.isr }));
      assert.deepEqual(same, { top: 0, code: 0, isr: cur.isr, partitionEpoch: cur.partitionEpoch });
      assert.equal((await zkTruth(connect, "ap")).version, truth.version, "nothing refused was written");
      assert.deepEqual((await zkTruth(connect, "ap")).isr, truth.isr);

      // With an authorizer, CLUSTER_ACTION decides: refused on the inter-broker listener without it,
      // let through on the client listener with it (then judged on its epochs).
      let allow = false;
      const asked: string[] = [];
      const authorizer: Authorizer = {
        authorize: (who, op) => {
          if (op === AclOperation.CLUSTER_ACTION) asked.push(who.listener);
          return op !== AclOperation.CLUSTER_ACTION || allow;
        },
        authorizedOperations: () => 0,
        authorizeByResourceType: () => true,
      };
      controller.b.broker.services.authorizer = authorizer;
      try {
        assert.equal((await ask(proposal(0, epoch0, "ap", good))).top, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "no CLUSTER_ACTION, even from the BROKER listener");
        allow = true;
        const through = answer(await client.request(AlterPartitionApi, 1, proposal(0, epoch0, "ap", { ...good, partitionEpoch: cur.partitionEpoch - 1 })));
        assert.equal(through.code, ErrorCode.INVALID_UPDATE_VERSION, "CLUSTER_ACTION lets the client listener in; the epochs still decide");
        assert.ok(asked.includes("CLIENT") && asked.includes("BROKER"));
      } finally {
        controller.b.broker.services.authorizer = null;
      }
    } finally {
      client.close();
      inter.close();
      other.close();
    }
  } finally {
    for (const n of nodes.reverse()) await n.b.stop();
  }
});

test("AlterPartition: stop the server", { skip }, async () => {
  await zk.stop();
});
