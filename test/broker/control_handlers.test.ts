// The control-plane handlers (LeaderAndIsr 4, StopReplica 5, UpdateMetadata 6, ControlledShutdown
// 7, OffsetForLeaderEpoch 23) against fake services: each request, built as the controller builds
// it and passed through the codec, becomes the same call on the services, and the answer (also
// through the codec) carries the errors Kafka answers with.
import assert from "node:assert/strict";
import { test } from "node:test";
import { leaderAndIsrHandler } from "../../src/broker/api/04_leader_and_isr.ts";
import { stopReplicaHandler } from "../../src/broker/api/05_stop_replica.ts";
import { updateMetadataHandler } from "../../src/broker/api/06_update_metadata.ts";
import { controlledShutdownHandler } from "../../src/broker/api/07_controlled_shutdown.ts";
import { offsetForLeaderEpochHandler } from "../../src/broker/api/23_offset_for_leader_epoch.ts";
import type { ApiHandler } from "../../src/broker/dispatch.ts";
import type { BrokerServices } from "../../src/broker/services.ts";
import { ControlFence } from "../../src/broker/control_fence.ts";
import { type Registry, RegistryError } from "../../src/registry/mod.ts";
import {
  decodeLeaderAndIsrResponse,
  decodeStopReplicaResponse,
  leaderAndIsrRequest,
  stopReplicaRequest,
  updateMetadataRequest,
} from "../../src/controller/control_requests.ts";
import type { BrokerInfo, TopicInfo } from "../../src/controller/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import type { PartitionState } from "../../src/replication/mod.ts";
import { ErrorCode, KafkaError } from "../../src/util/errors.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { callHandler } from "../helpers/handler_call.ts";


/** Runs a handler as the dispatcher would: request and answer through the codec. */
const call = (h: ApiHandler<BrokerServices>, s: BrokerServices, version: number, body: Struct, listener = "PLAINTEXT") => callHandler(h, s, version, body, { listener });

interface Calls {
  leaderAndIsr: unknown[][];
  updateMetadata: unknown[][];
  stopReplica: unknown[][];
}

/**
 * A registry holding what the fence reads: /controller 0 at /controller_epoch 3, and broker 1
 * registered by this session with czxid `registered`.
 */
function fakeRegistry(registered: bigint): Registry {
  const enc = new TextEncoder();
  const nodes = new Map<string, Uint8Array>([["/controller", enc.encode('{"version":2,"brokerid":0,"timestamp":"1"}')], ["/controller_epoch", enc.encode("3")]]);
  return {
    sessionId: 42n,
    getData: (path: string) => {
      const data = nodes.get(path);
      return data === undefined ? Promise.reject(new RegistryError("NoNode", path)) : Promise.resolve({ data, stat: {} });
    },
    exists: (path: string) => Promise.resolve(path === "/brokers/ids/1" ? { czxid: registered, ephemeralOwner: 42n } : null),
  } as unknown as Registry;
}

function services(opts: { epoch?: bigint; registered?: bigint; fail?: KafkaError; active?: boolean } = {}): { s: BrokerServices; calls: Calls } {
  const calls: Calls = { leaderAndIsr: [], updateMetadata: [], stopReplica: [] };
  const plane = (name: keyof Calls) => (...args: unknown[]) => {
    calls[name].push(args);
    return opts.fail ? Promise.reject(opts.fail) : Promise.resolve();
  };
  const epoch = opts.epoch ?? 100n;
  const s = {
    brokerId: 1,
    brokerEpoch: () => epoch,
    controlFence: new ControlFence(fakeRegistry(opts.registered ?? epoch), 1, () => epoch, () => 0, () => 0),
    authorizer: null,
    config: {
      listeners: [{ name: "PLAINTEXT", host: "127.0.0.1", port: 9092 }, { name: "CLIENT", host: "127.0.0.1", port: 9093 }],
      security: { interBrokerListener: "PLAINTEXT" },
      zookeeperConnect: "127.0.0.1:2181",
    },
    logger: silentLogger,
    clock: { monotonicMs: () => 0 },
    controlPlane: { leaderAndIsr: plane("leaderAndIsr"), updateMetadata: plane("updateMetadata"), stopReplica: plane("stopReplica") },
    controller: {
      isActive: opts.active ?? true,
      controlledShutdown: (brokerId: number, brokerEpoch: bigint) =>
        Promise.resolve({ errorCode: brokerEpoch === 5n ? ErrorCode.STALE_BROKER_EPOCH : ErrorCode.NONE, remaining: [{ topic: `t${brokerId}`, partition: 2 }] }),
    },
    // Knows no topic: a partition without a replica here stays UNKNOWN_TOPIC_OR_PARTITION.
    metadata: { getBroker: (id: number) => (id === 2 ? { id } : undefined), notHostedError: (_t: string, _p: number, code: number) => code },
    replicaManager: {
      lastOffsetForLeaderEpoch: (topic: string, partition: number, current: number, epoch: number, replicaId: number) => ({
        errorCode: topic === "gone" ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.NONE,
        leaderEpoch: epoch,
        endOffset: 1000 + partition + current + replicaId,
      }),
    },
  } as unknown as BrokerServices;
  return { s, calls };
}

const id = Uint8Array.from({ length: 16 }, (_, i) => i + 1);
function state(p: number, replicas: number[]): PartitionState {
  return { topic: "t", partition: p, topicId: id, controllerEpoch: 3, leader: replicas[0], leaderEpoch: 4, isr: replicas, replicas, partitionEpoch: 9 };
}
const topics: TopicInfo[] = [{ name: "t", topicId: id, partitions: [state(0, [1, 2]), state(1, [2, 3])], configs: {}, configsZxid: -1n }];
const leaders: BrokerInfo[] = [{ id: 2, host: "b2", port: 9093, rack: null, epoch: 7n }];

test("LeaderAndIsr handler: the local call, per-partition answers, and stale epochs", async () => {
  for (const v of [2, 4, 5, 6, 7]) {
    const { s, calls } = services();
    const answer = await call(leaderAndIsrHandler, s, v, leaderAndIsrRequest(0, 3, 100n, topics, leaders, v));
    assert.equal(calls.leaderAndIsr.length, 1);
    const [brokerId, controllerEpoch, gotTopics, gotLeaders] = calls.leaderAndIsr[0] as [number, number, TopicInfo[], BrokerInfo[]];
    assert.equal(brokerId, 1);
    assert.equal(controllerEpoch, 3);
    assert.deepEqual(gotTopics.map((t) => t.partitions.map((p) => p.partition)), [[0, 1]]);
    // The request's leader addresses are never used: the local channel finds leaders in the registry.
    assert.deepEqual(gotLeaders, []);
    // Partition 1's replicas do not include broker 1: ignored, as Kafka does.
    assert.deepEqual(decodeLeaderAndIsrResponse(v, answer, gotTopics), {
      errorCode: 0,
      partitions: [{ topic: "t", partition: 0, errorCode: 0 }, { topic: "t", partition: 1, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION }],
    });
  }
  // An older registration of this broker: refused before the control plane sees it.
  const stale = services({ epoch: 101n });
  const refused = await call(leaderAndIsrHandler, stale.s, 6, leaderAndIsrRequest(0, 3, 100n, topics, leaders, 6));
  assert.equal(stale.calls.leaderAndIsr.length, 0);
  assert.equal(refused.errorCode, ErrorCode.STALE_BROKER_EPOCH);
  // Unknown (-1), and newer than the registration, are refused too (strand, past Kafka) ...
  for (const epoch of [-1n, 102n]) {
    const refusedToo = services({ epoch: 101n });
    assert.equal((await call(leaderAndIsrHandler, refusedToo.s, 6, leaderAndIsrRequest(0, 3, epoch, topics, leaders, 6))).errorCode, ErrorCode.STALE_BROKER_EPOCH);
    assert.equal(refusedToo.calls.leaderAndIsr.length, 0);
  }
  // ... and v0-1, which cannot carry one.
  const v1 = services();
  assert.equal((await call(leaderAndIsrHandler, v1.s, 1, leaderAndIsrRequest(0, 3, 100n, topics, leaders, 1))).errorCode, ErrorCode.STALE_BROKER_EPOCH);
  // A newer epoch that the registry shows is this broker's registration (this broker re-registered
  // and has not learnt its czxid yet) passes.
  const renewed = services({ epoch: 101n, registered: 102n });
  assert.equal((await call(leaderAndIsrHandler, renewed.s, 6, leaderAndIsrRequest(0, 3, 102n, topics, leaders, 6))).errorCode, 0);
  assert.equal(renewed.calls.leaderAndIsr.length, 1);
  // A controller the registry does not hold (another id, another epoch): STALE_CONTROLLER_EPOCH, nothing applied.
  for (const [controllerId, controllerEpoch] of [[2, 3], [0, 4], [0, 2147483647], [1, 3]]) {
    const forged = services();
    const r = await call(leaderAndIsrHandler, forged.s, 6, leaderAndIsrRequest(controllerId, controllerEpoch, 100n, topics, leaders, 6));
    assert.equal(r.errorCode, ErrorCode.STALE_CONTROLLER_EPOCH, `controller ${controllerId} epoch ${controllerEpoch}`);
    assert.equal(forged.calls.leaderAndIsr.length, 0);
  }
  // Not on the inter-broker listener: CLUSTER_AUTHORIZATION_FAILED on every partition.
  const client = services();
  const denied = await call(leaderAndIsrHandler, client.s, 4, leaderAndIsrRequest(0, 3, 100n, topics, leaders, 4), "CLIENT");
  assert.deepEqual(decodeLeaderAndIsrResponse(4, denied, topics), {
    errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    partitions: [0, 1].map((partition) => ({ topic: "t", partition, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED })),
  });
  assert.equal(client.calls.leaderAndIsr.length, 0);
  // A stale controller: the whole request, every partition.
  const old = services({ fail: new KafkaError(ErrorCode.STALE_CONTROLLER_EPOCH, "old") });
  const body = await call(leaderAndIsrHandler, old.s, 4, leaderAndIsrRequest(0, 3, 100n, topics, leaders, 4));
  assert.deepEqual(decodeLeaderAndIsrResponse(4, body, topics), {
    errorCode: ErrorCode.STALE_CONTROLLER_EPOCH,
    partitions: [0, 1].map((partition) => ({ topic: "t", partition, errorCode: ErrorCode.STALE_CONTROLLER_EPOCH })),
  });
});

test("UpdateMetadata handler: brokers, topics and deleted topics reach the control plane", async () => {
  const brokers: BrokerInfo[] = [{ id: 1, host: "b1", port: 9092, rack: "r", epoch: 1n }, ...leaders];
  for (const v of [5, 7, 8]) {
    const { s, calls } = services();
    const answer = await call(updateMetadataHandler, s, v, updateMetadataRequest(0, 3, 100n, brokers, topics, ["gone"], v));
    assert.equal(answer.errorCode, 0);
    const [brokerId, controllerEpoch, controllerId, gotBrokers, gotTopics, deleted] = calls.updateMetadata[0] as [number, number, number, BrokerInfo[], TopicInfo[], string[]];
    assert.deepEqual([brokerId, controllerEpoch, controllerId], [1, 3, 0]);
    assert.deepEqual(gotBrokers.map((b) => [b.id, b.host, b.port]), [[1, "b1", 9092], [2, "b2", 9093]]);
    assert.deepEqual(gotTopics.map((t) => [t.name, t.partitions.length]), [["t", 2]]);
    assert.deepEqual(deleted, ["gone"]);
  }
  const stale = services({ epoch: 200n });
  assert.equal((await call(updateMetadataHandler, stale.s, 7, updateMetadataRequest(0, 3, 100n, brokers, topics, [], 7))).errorCode, ErrorCode.STALE_BROKER_EPOCH);
  assert.equal(stale.calls.updateMetadata.length, 0);
  const old = services({ fail: new KafkaError(ErrorCode.STALE_CONTROLLER_EPOCH, "old") });
  assert.equal((await call(updateMetadataHandler, old.s, 7, updateMetadataRequest(0, 3, 100n, brokers, topics, [], 7))).errorCode, ErrorCode.STALE_CONTROLLER_EPOCH);
  // v0-4 carry no broker epoch; a forged controller epoch; the client listener: refused, nothing applied.
  for (const [v, epoch, listener, code] of [
    [3, 3, "PLAINTEXT", ErrorCode.STALE_BROKER_EPOCH],
    [7, 2147483647, "PLAINTEXT", ErrorCode.STALE_CONTROLLER_EPOCH],
    [7, 3, "CLIENT", ErrorCode.CLUSTER_AUTHORIZATION_FAILED],
  ] as const) {
    const x = services();
    assert.equal((await call(updateMetadataHandler, x.s, v, updateMetadataRequest(0, epoch, 100n, brokers, topics, [], v), listener)).errorCode, code);
    assert.equal(x.calls.updateMetadata.length, 0);
  }
});

test("StopReplica handler: one call per deletePartition value, answers per partition", async () => {
  const parts = [
    { topic: "a", partition: 0, deletePartition: true, leaderEpoch: -2 },
    { topic: "a", partition: 1, deletePartition: false, leaderEpoch: 3 },
    { topic: "b", partition: 0, deletePartition: true, leaderEpoch: -2 },
  ];
  const { s, calls } = services();
  const answer = await call(stopReplicaHandler, s, 3, stopReplicaRequest(0, 3, 100n, parts, 3));
  assert.deepEqual(calls.stopReplica, [
    [1, 3, [{ topic: "a", partition: 1 }], false],
    [1, 3, [{ topic: "a", partition: 0 }, { topic: "b", partition: 0 }], true],
  ]);
  assert.deepEqual(decodeStopReplicaResponse(answer), {
    errorCode: 0,
    partitions: [{ topic: "a", partition: 0, errorCode: 0 }, { topic: "a", partition: 1, errorCode: 0 }, { topic: "b", partition: 0, errorCode: 0 }],
  });
  // v0-2: one deletePartitions for the request.
  const v1 = services();
  await call(stopReplicaHandler, v1.s, 1, stopReplicaRequest(0, 3, 100n, parts.filter((p) => p.deletePartition), 1));
  assert.deepEqual(v1.calls.stopReplica, [[1, 3, [{ topic: "a", partition: 0 }, { topic: "b", partition: 0 }], true]]);
  // Stale or forged epochs, v0 (no broker epoch), the client listener: everything refused.
  const cases: [Parameters<typeof services>[0], number, number, number, string, number][] = [
    [{ epoch: 101n }, 3, 3, 0, "PLAINTEXT", ErrorCode.STALE_BROKER_EPOCH],
    [{ fail: new KafkaError(ErrorCode.STALE_CONTROLLER_EPOCH, "old") }, 3, 3, 0, "PLAINTEXT", ErrorCode.STALE_CONTROLLER_EPOCH],
    [{}, 0, 1, 0, "PLAINTEXT", ErrorCode.STALE_BROKER_EPOCH],
    [{}, 3, 2147483647, 0, "PLAINTEXT", ErrorCode.STALE_CONTROLLER_EPOCH],
    [{}, 3, 3, 2, "PLAINTEXT", ErrorCode.STALE_CONTROLLER_EPOCH],
    [{}, 3, 3, 0, "CLIENT", ErrorCode.CLUSTER_AUTHORIZATION_FAILED],
  ];
  for (const [opts, v, controllerEpoch, controllerId, listener, code] of cases) {
    const x = services(opts);
    const sent = v === 0 ? parts.filter((p) => p.deletePartition) : parts;
    const r = decodeStopReplicaResponse(await call(stopReplicaHandler, x.s, v, stopReplicaRequest(controllerId, controllerEpoch, 100n, sent, v), listener));
    assert.equal(r.errorCode, code);
    assert.deepEqual(r.partitions.map((p) => p.errorCode), sent.map(() => code));
    if (opts?.fail === undefined) assert.equal(x.calls.stopReplica.length, 0);
  }
  // Another failure: that call's partitions carry it, the request does not.
  const broken = services({ fail: new KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, "disk") });
  const r = decodeStopReplicaResponse(await call(stopReplicaHandler, broken.s, 3, stopReplicaRequest(0, 3, 100n, parts, 3)));
  assert.equal(r.errorCode, 0);
  assert.deepEqual(r.partitions.map((p) => p.errorCode), [56, 56, 56]);
});

test("ControlledShutdown handler: the controller's answer, NOT_CONTROLLER when inactive, v1-3 only", async () => {
  assert.deepEqual(controlledShutdownHandler.api.request.versions, { min: 1, max: 3 });
  for (const v of [1, 2, 3]) {
    const { s } = services();
    assert.deepEqual(await call(controlledShutdownHandler, s, v, { brokerId: 4, brokerEpoch: 9n }), {
      errorCode: 0,
      remainingPartitions: [{ topicName: "t4", partitionIndex: 2 }],
    });
  }
  const { s } = services();
  assert.equal((await call(controlledShutdownHandler, s, 2, { brokerId: 4, brokerEpoch: 5n })).errorCode, ErrorCode.STALE_BROKER_EPOCH);
  assert.deepEqual(await call(controlledShutdownHandler, s, 3, { brokerId: 4, brokerEpoch: 9n }, "CLIENT"), {
    errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    remainingPartitions: [],
  });
  const inactive = services({ active: false });
  assert.deepEqual(await call(controlledShutdownHandler, inactive.s, 3, { brokerId: 4, brokerEpoch: 9n }), {
    errorCode: ErrorCode.NOT_CONTROLLER,
    remainingPartitions: [],
  });
});

test("OffsetForLeaderEpoch handler: the replica manager's answer per partition; unknown replicas refused", async () => {
  const req = (replicaId: number) => ({
    replicaId,
    topics: [{ topic: "t", partitions: [{ partition: 0, currentLeaderEpoch: 4, leaderEpoch: 3 }] }, { topic: "gone", partitions: [{ partition: 1, currentLeaderEpoch: 4, leaderEpoch: 3 }] }],
  });
  const { s } = services();
  const consumer = await call(offsetForLeaderEpochHandler, s, 4, req(-1));
  assert.deepEqual(consumer.topics, [
    { topic: "t", partitions: [{ errorCode: 0, partition: 0, leaderEpoch: 3, endOffset: 1003n }] },
    { topic: "gone", partitions: [{ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, partition: 1, leaderEpoch: 3, endOffset: 1004n }] },
  ]);
  // Before v3 the replica id is not on the wire: -2; before v2 no current epoch: -1; v0 answers no epoch.
  const v0 = await call(offsetForLeaderEpochHandler, s, 0, req(7));
  assert.deepEqual((v0.topics as { partitions: unknown[] }[])[0].partitions, [{ errorCode: 0, partition: 0, leaderEpoch: -1, endOffset: 997n }]);
  // Broker 2 is live; broker 7 is not.
  const follower = await call(offsetForLeaderEpochHandler, s, 4, req(2));
  assert.equal((follower.topics as { partitions: { endOffset: bigint }[] }[])[0].partitions[0].endOffset, 1006n);
  const stranger = await call(offsetForLeaderEpochHandler, s, 3, req(7));
  for (const t of stranger.topics as { partitions: { errorCode: number; endOffset: bigint }[] }[]) {
    assert.deepEqual(t.partitions.map((p) => [p.errorCode, p.endOffset]), [[ErrorCode.NOT_LEADER_OR_FOLLOWER, -1n]]);
  }
  // A follower's question on the client listener: TOPIC_AUTHORIZATION_FAILED (Kafka's answer
  // without CLUSTER_ACTION); a consumer's there is answered.
  const outside = await call(offsetForLeaderEpochHandler, s, 4, req(2), "CLIENT");
  for (const t of outside.topics as { partitions: { errorCode: number; endOffset: bigint }[] }[]) {
    assert.deepEqual(t.partitions.map((p) => [p.errorCode, p.endOffset]), [[ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1n]]);
  }
  assert.equal(((await call(offsetForLeaderEpochHandler, s, 4, req(-1), "CLIENT")).topics as { partitions: { errorCode: number }[] }[])[0].partitions[0].errorCode, 0);
});
