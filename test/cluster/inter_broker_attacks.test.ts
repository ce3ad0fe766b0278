// The attacks on the inter-broker APIs against a two-broker cluster on a real ZooKeeper 3.8
// (Debian package zookeeper), brokers in this process over real sockets, each with a client
// listener (CLIENT) and a separate inter-broker listener (BROKER, inter.broker.listener.name):
//
// - On the client listener every inter-broker request is refused as Kafka refuses a sender
//   without CLUSTER_ACTION (CLUSTER_AUTHORIZATION_FAILED; a follower's Fetch and
//   OffsetForLeaderEpoch TOPIC_AUTHORIZATION_FAILED per partition), whatever its epochs.
// - On the inter-broker listener (no authorizer: the listener is the gate) the epochs decide:
//   StopReplica v0 (no broker epoch) STALE_BROKER_EPOCH; controller epoch 2^31-1, or the right
//   epoch with another controller id, STALE_CONTROLLER_EPOCH, and never adopted: the real
//   controller is still obeyed afterwards; a broker epoch that is not the registration's
//   STALE_BROKER_EPOCH; a follower fetch with an id that is no live broker NOT_LEADER_OR_FOLLOWER.
// - Even a LeaderAndIsr with the registry's controller and epochs (an insider who read ZooKeeper)
//   naming a leader that is not a registered broker, "at" a socket the test owns, makes nobody
//   connect there.
// - With an authorizer, CLUSTER_ACTION on the cluster is asked and decides the gate.
// After all of it: the logs and records are intact on both replicas, nothing was deleted, and a
// topic created afterwards is replicated, produced to (acks=all) and read.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { test } from "node:test";
import { AclOperation, type Authorizer } from "../../src/authorizer/mod.ts";
import { leaderAndIsrRequest, stopReplicaRequest, type TopicInfo, updateMetadataRequest } from "../../src/controller/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import {
  AddPartitionsToTxnApi,
  ControlledShutdownApi,
  FetchApi,
  LeaderAndIsrApi,
  OffsetForLeaderEpochApi,
  StopReplicaApi,
  type Struct,
  UpdateMetadataApi,
  WriteTxnMarkersApi,
} from "../../src/protocol/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { ZooKeeperClient } from "../../src/zk/mod.ts";
import { type InProcessNode, startInProcessNode, waitUntil } from "../helpers/in_process_cluster.ts";
import { buildBatch, parseBatches, text, valueRecords } from "../helpers/record_batch.ts";
import { createTopic, fetchOnce, produce, WireClient } from "../helpers/wire.ts";
import { sharedZooKeeper, skipUnlessZooKeeper } from "../helpers/zookeeper.ts";

const skip = skipUnlessZooKeeper();
const zk = sharedZooKeeper();
const MAX_EPOCH = 2147483647;
const dec = new TextDecoder();

type Node = InProcessNode;

const startNode = (id: number, connect: string) => startInProcessNode(id, connect);
const waitFor = waitUntil;

async function decoyListener(): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
  let n = 0;
  const server = net.createServer((s) => {
    n++;
    s.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return { port, connections: () => n, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

function followerFetchBody(replicaId: number, topic: string, fetchOffset: bigint): Struct {
  return {
    replicaId,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition: 0, fetchOffset, partitionMaxBytes: 1 << 20 }] }],
    forgottenTopicsData: [],
    rackId: "",
  };
}

/** What ZooKeeper says: the controller, its epoch, and each broker's registration czxid. */
async function registryTruth(connect: string): Promise<{ controllerId: number; controllerEpoch: number; czxid: Map<number, bigint> }> {
  const c = await ZooKeeperClient.connect(await loadPlatform(), { connectString: connect, sessionTimeoutMs: 4_000 });
  try {
    const controllerId = JSON.parse(dec.decode((await c.getData("/controller")).data)).brokerid as number;
    const controllerEpoch = Number(dec.decode((await c.getData("/controller_epoch")).data));
    const czxid = new Map<number, bigint>();
    for (const id of [0, 1]) czxid.set(id, (await c.exists(`/brokers/ids/${id}`))!.czxid);
    return { controllerId, controllerEpoch, czxid };
  } finally {
    await c.close();
  }
}

const codes = (r: Struct, list: string) => [r.errorCode as number, ...((r[list] ?? []) as { errorCode: number }[]).map((p) => p.errorCode)];
const laiCodes = (r: Struct) => [r.errorCode as number, ...(r.topics as { partitionErrors: { errorCode: number }[] }[]).flatMap((t) => t.partitionErrors.map((p) => p.errorCode))];

function stateOf(n: Node, topic: string, leader: number, epochs: { controllerEpoch: number; leaderEpoch: number }): TopicInfo {
  const topicId = n.b.broker.services.metadata.getTopic(topic)!.topicId;
  return {
    name: topic,
    topicId,
    partitions: [{ topic, partition: 0, topicId, controllerEpoch: epochs.controllerEpoch, leader, leaderEpoch: epochs.leaderEpoch, isr: [leader, n.id], replicas: [leader, n.id], partitionEpoch: 1000 }],
    configs: {},
    configsZxid: -1n,
  };
}

async function valuesFrom(n: Node, topic: string): Promise<string[]> {
  const c = await WireClient.connect(n.b.port);
  try {
    const p = await fetchOnce(c, topic, 0, 0n);
    assert.equal(p.errorCode, 0, `fetch ${topic}-0 from broker ${n.id}`);
    return parseBatches(p.records ?? new Uint8Array(0)).flatMap((b) => b.records.map((r) => text(r.value) ?? ""));
  } finally {
    c.close();
  }
}

test("cluster: inter-broker attacks on the client and the inter-broker listener are refused; nothing deleted; the real controller still obeyed", { skip }, async () => {
  const server = await zk.get();
  const connect = `${server.connectString}/ib-attacks-${process.pid}`;
  const nodes: Node[] = [];
  const decoy = await decoyListener();
  try {
    nodes.push(await startNode(0, connect));
    nodes.push(await startNode(1, connect));
    await waitFor(() => nodes.every((n) => n.b.broker.services.metadata.aliveBrokers().length === 2), "both brokers in every broker's metadata");
    const admin = await WireClient.connect(nodes[0].b.port);
    try {
      assert.equal((await createTopic(admin, "victim", { replicationFactor: 2 })).errorCode, 0);
      assert.equal((await createTopic(admin, "decoy", { replicationFactor: 2 })).errorCode, 0);
    } finally {
      admin.close();
    }
    const partitionOf = (n: Node, t: string) => n.b.broker.services.replicaManager.getPartition(t, 0);
    await waitFor(() => nodes.every((n) => partitionOf(n, "victim") !== undefined && partitionOf(n, "decoy") !== undefined), "replicas on both brokers");
    const leader = nodes.find((n) => partitionOf(n, "victim")!.isLeader)!;
    const follower = nodes.find((n) => n !== leader)!;
    const lc = await WireClient.connect(leader.b.port);
    try {
      assert.equal((await produce(lc, "victim", 0, buildBatch(valueRecords(3, "kept-")))).errorCode, 0, "acks=all: both replicas have it");
    } finally {
      lc.close();
    }
    await waitFor(() => partitionOf(follower, "victim")!.log.logEndOffset === 3, "the follower has the records");
    // The real controller's requests and the real follower's fetches were never refused.
    for (const n of nodes) assert.deepEqual(n.logger.lines.filter((l) => /refused/.test(l.msg)), [], `broker ${n.id} refused nothing genuine`);
    const truth = await registryTruth(connect);

    for (const target of nodes) {
      const other = nodes.find((n) => n !== target)!;
      const brokerEpoch = truth.czxid.get(target.id)!;
      const fake = stateOf(target, "victim", 7, { controllerEpoch: MAX_EPOCH, leaderEpoch: 1000 });
      const decoyLeader = [{ id: 7, host: "127.0.0.1", port: decoy.port, rack: null, epoch: -1n }];
      const del = [{ topic: "victim", partition: 0, deletePartition: true, leaderEpoch: -2 }];

      // The client listener: refused whatever the request says.
      const c = await WireClient.connect(target.b.port);
      try {
        const denied = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
        assert.deepEqual(codes(await c.request(StopReplicaApi, 0, stopReplicaRequest(0, 1, -1n, del, 0)), "partitionErrors"), [denied, denied]);
        const real = stopReplicaRequest(truth.controllerId, truth.controllerEpoch, brokerEpoch, del, 3);
        assert.deepEqual(codes(await c.request(StopReplicaApi, 3, real), "partitionErrors"), [denied, denied], "even with the registry's epochs");
        assert.deepEqual(codes(await c.request(UpdateMetadataApi, 7, updateMetadataRequest(truth.controllerId, MAX_EPOCH, brokerEpoch, [], [], ["victim"], 7)), "x"), [denied]);
        assert.deepEqual(laiCodes(await c.request(LeaderAndIsrApi, 6, leaderAndIsrRequest(truth.controllerId, MAX_EPOCH, brokerEpoch, [fake], decoyLeader, 6))), [denied, denied]);
        const fetched = await c.request(FetchApi, 11, followerFetchBody(other.id, "victim", 3n));
        assert.deepEqual((fetched.responses as { partitions: { errorCode: number }[] }[])[0].partitions.map((p) => p.errorCode), [ErrorCode.TOPIC_AUTHORIZATION_FAILED]);
        const ofle = await c.request(OffsetForLeaderEpochApi, 3, { replicaId: other.id, topics: [{ topic: "victim", partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] }] });
        assert.deepEqual((ofle.topics as { partitions: { errorCode: number }[] }[])[0].partitions.map((p) => p.errorCode), [ErrorCode.TOPIC_AUTHORIZATION_FAILED]);
        assert.equal((await c.request(ControlledShutdownApi, 3, { brokerId: other.id, brokerEpoch: truth.czxid.get(other.id)! })).errorCode, denied);
        // A partition leader's transaction checks (v4) and a coordinator's markers: brokers' requests too.
        const txn = { transactionalId: "tx", producerId: 1000n, producerEpoch: 0, verifyOnly: false, topics: [{ name: "victim", partitions: [0] }] };
        assert.equal((await c.request(AddPartitionsToTxnApi, 4, { transactions: [txn] })).errorCode, denied);
        const marker = { producerId: 1000n, producerEpoch: 0, transactionResult: false, topics: [{ name: "victim", partitionIndexes: [0] }], coordinatorEpoch: MAX_EPOCH };
        const markers = await c.request(WriteTxnMarkersApi, 1, { markers: [marker] });
        assert.deepEqual((markers.markers as { topics: { partitions: { errorCode: number }[] }[] }[])[0].topics[0].partitions.map((p) => p.errorCode), [denied]);
      } finally {
        c.close();
      }
      const refusals = target.logger.lines.filter((l) => l.level === "warn" && /refused: not from a broker/.test(l.msg));
      assert.equal(refusals.length, 1, "one line per 10 s at most");
      for (const l of refusals) assert.match(String(l.fields.reason), /listener CLIENT is not the inter-broker listener BROKER/);

      // The inter-broker listener: the epochs decide.
      const ib = await WireClient.connect(target.brokerPort);
      try {
        const stale = ErrorCode.STALE_CONTROLLER_EPOCH;
        assert.deepEqual(codes(await ib.request(StopReplicaApi, 0, stopReplicaRequest(truth.controllerId, 1, -1n, del, 0)), "partitionErrors"), [77, 77]);
        assert.deepEqual(codes(await ib.request(StopReplicaApi, 3, stopReplicaRequest(truth.controllerId, MAX_EPOCH, brokerEpoch, del, 3)), "partitionErrors"), [stale, stale]);
        assert.deepEqual(codes(await ib.request(StopReplicaApi, 3, stopReplicaRequest(9, truth.controllerEpoch, brokerEpoch, del, 3)), "partitionErrors"), [stale, stale]);
        assert.deepEqual(codes(await ib.request(StopReplicaApi, 3, stopReplicaRequest(truth.controllerId, truth.controllerEpoch, brokerEpoch + 1n, del, 3)), "partitionErrors"), [77, 77]);
        assert.deepEqual(codes(await ib.request(UpdateMetadataApi, 7, updateMetadataRequest(truth.controllerId, MAX_EPOCH, brokerEpoch, [], [], ["victim"], 7)), "x"), [stale]);
        assert.deepEqual(laiCodes(await ib.request(LeaderAndIsrApi, 6, leaderAndIsrRequest(truth.controllerId, MAX_EPOCH, brokerEpoch, [fake], decoyLeader, 6))), [stale, stale]);
        const fetched = await ib.request(FetchApi, 11, followerFetchBody(7, "victim", 3n));
        assert.deepEqual((fetched.responses as { partitions: { errorCode: number }[] }[])[0].partitions.map((p) => p.errorCode), [ErrorCode.NOT_LEADER_OR_FOLLOWER]);
        if (target.b.broker.isActiveController) {
          for (const e of [-1n, truth.czxid.get(other.id)! - 1n]) {
            assert.equal((await ib.request(ControlledShutdownApi, 3, { brokerId: other.id, brokerEpoch: e })).errorCode, 77);
          }
        }
      } finally {
        ib.close();
      }
      // Seven forged requests refused by their epochs, then a burst: one warn line (the first, naming
      // its sender); the rest are counted for the next line, at most one per 10 s.
      const burst = await WireClient.connect(target.brokerPort);
      try {
        for (let i = 0; i < 100; i++) {
          const forged = stopReplicaRequest(truth.controllerId, MAX_EPOCH - i, brokerEpoch, del, 3);
          assert.deepEqual(codes(await burst.request(StopReplicaApi, 3, forged), "partitionErrors"), [ErrorCode.STALE_CONTROLLER_EPOCH, ErrorCode.STALE_CONTROLLER_EPOCH]);
        }
      } finally {
        burst.close();
      }
      const fenced = target.logger.lines.filter((l) => l.level === "warn" && /refused: (stale broker epoch|not from the current controller)/.test(l.msg));
      assert.deepEqual(fenced.map((l) => [l.msg, l.fields.notSaidSinceLast]), [["StopReplica refused: stale broker epoch", 0]], "one line for the whole burst");
      assert.match(String(fenced[0].fields.remote), /^127\.0\.0\.1:\d+$/);
    }

    // An insider with the registry's epochs names a leader that is no registered broker, at the
    // test's socket: the broker that is not the controller takes the state but never connects
    // there. The controller's own broker refuses it: its controller never speaks over the network.
    const fooled = nodes.find((n) => n.id !== truth.controllerId)!;
    const controllerNode = nodes.find((n) => n.id === truth.controllerId)!;
    for (const n of [controllerNode, fooled]) {
      const insider = await WireClient.connect(n.brokerPort);
      try {
        const state = stateOf(n, "decoy", 7, { controllerEpoch: truth.controllerEpoch, leaderEpoch: 500 });
        const r = await insider.request(LeaderAndIsrApi, 6, leaderAndIsrRequest(truth.controllerId, truth.controllerEpoch, truth.czxid.get(n.id)!, [state], [{ id: 7, host: "127.0.0.1", port: decoy.port, rack: null, epoch: -1n }], 6));
        const expected = n === fooled ? 0 : ErrorCode.STALE_CONTROLLER_EPOCH;
        assert.deepEqual(laiCodes(r), [expected, expected], `broker ${n.id}`);
      } finally {
        insider.close();
      }
    }
    await waitFor(() => partitionOf(fooled, "decoy")!.state.leader === 7, "the insider's state applied");
    assert.ok(fooled.logger.lines.some((l) => l.level === "warn" && /not a registered broker/.test(l.msg) && l.fields.leader === 7));
    assert.notEqual(partitionOf(controllerNode, "decoy")!.state.leader, 7);

    // Nothing deleted, nothing moved: both replicas hold the records, the leader is the same.
    for (const n of nodes) {
      assert.ok(existsSync(join(n.b.logDir, "victim-0")), `broker ${n.id}'s victim-0 is there`);
      assert.equal(partitionOf(n, "victim")!.log.logEndOffset, 3);
      assert.ok(!n.logger.lines.some((l) => /deleted log/.test(l.msg)), `broker ${n.id} deleted no log`);
    }
    assert.ok(partitionOf(leader, "victim")!.isLeader);
    assert.deepEqual(await valuesFrom(leader, "victim"), ["kept-0", "kept-1", "kept-2"]);

    // With an authorizer, CLUSTER_ACTION on the cluster decides the gate (here: granted on the
    // inter-broker listener only, so the brokers' own requests still flow; every other operation
    // is allowed, so the client below may create a topic).
    const asked: string[] = [];
    const authorizer: Authorizer = {
      authorize: (who, op, type, name) => {
        asked.push(`${who.listener} ${op} ${type} ${name}`);
        return op !== AclOperation.CLUSTER_ACTION || who.listener === "BROKER";
      },
      authorizedOperations: () => 0,
      authorizeByResourceType: () => true,
    };
    for (const n of nodes) n.b.broker.services.authorizer = authorizer;
    const c = await WireClient.connect(follower.b.port);
    try {
      const del = [{ topic: "victim", partition: 0, deletePartition: true, leaderEpoch: -2 }];
      const real = stopReplicaRequest(truth.controllerId, truth.controllerEpoch, truth.czxid.get(follower.id)!, del, 3);
      assert.deepEqual(codes(await c.request(StopReplicaApi, 3, real), "partitionErrors"), [31, 31]);
    } finally {
      c.close();
    }
    assert.ok(asked.includes("CLIENT 9 4 kafka-cluster"), asked.join("; "));

    // The real controller is still obeyed: a new topic is replicated, produced to with acks=all, read.
    const c2 = await WireClient.connect(nodes[0].b.port);
    try {
      assert.equal((await createTopic(c2, "after", { replicationFactor: 2 })).errorCode, 0);
    } finally {
      c2.close();
    }
    await waitFor(() => nodes.every((n) => partitionOf(n, "after") !== undefined), "the new topic on both brokers");
    const afterLeader = nodes.find((n) => partitionOf(n, "after")!.isLeader)!;
    await waitFor(() => partitionOf(afterLeader, "after")!.state.isr.length === 2, "both replicas in sync");
    const c3 = await WireClient.connect(afterLeader.b.port);
    try {
      assert.equal((await produce(c3, "after", 0, buildBatch(valueRecords(2, "after-")))).errorCode, 0);
    } finally {
      c3.close();
    }
    assert.deepEqual(await valuesFrom(afterLeader, "after"), ["after-0", "after-1"]);
    await waitFor(() => nodes.every((n) => partitionOf(n, "after")!.log.logEndOffset === 2), "the follower replicated the new topic");
    assert.ok(asked.some((a) => a === "BROKER 9 4 kafka-cluster"), "the brokers' own inter-broker requests were authorized");
    assert.equal(decoy.connections(), 0, "nobody connected to the address only a request named");
    // Nothing the brokers said to each other was refused: every refusal logged answered the test's requests.
    for (const n of nodes) {
      const refused = n.logger.lines.filter((l) => /refused/.test(l.msg));
      assert.ok(refused.every((l) => l.fields.principal === undefined || l.fields.listener === "CLIENT"), `broker ${n.id}: ${JSON.stringify(refused.filter((l) => l.fields.listener !== "CLIENT"))}`);
    }
  } finally {
    for (const n of nodes.reverse()) await n.b.stop();
    await decoy.close();
  }
});

test("cluster attacks: stop the server", { skip }, async () => {
  await zk.stop();
});
