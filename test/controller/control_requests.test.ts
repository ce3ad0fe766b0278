// The controller's requests as wire structs and back: for every version, a channel call's values
// (TopicInfo, BrokerInfo, StopReplica partitions) built into a struct, encoded by the codec,
// decoded, and read back give the same values, except what that version does not carry (which
// comes back as the documented fixed value).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  decodeLeaderAndIsrRequest,
  decodeLeaderAndIsrResponse,
  decodeStopReplicaRequest,
  decodeStopReplicaResponse,
  decodeUpdateMetadataRequest,
  isStaleBrokerEpoch,
  LEADER_AND_ISR_VERSION,
  leaderAndIsrRequest,
  leaderAndIsrResponse,
  STOP_REPLICA_VERSION,
  type StopReplicaPartition,
  stopReplicaRequest,
  stopReplicaResponse,
  UPDATE_METADATA_VERSION,
  updateMetadataRequest,
} from "../../src/controller/control_requests.ts";
import type { BrokerInfo, TopicInfo } from "../../src/controller/mod.ts";
import { decode, encode, type Struct } from "../../src/protocol/codec.ts";
import type { MessageSchema } from "../../src/protocol/schema.ts";
import { LeaderAndIsrApi, StopReplicaApi, UpdateMetadataApi } from "../../src/protocol/api/mod.ts";
import type { PartitionState } from "../../src/replication/mod.ts";
import { Reader, Writer } from "../../src/util/bytes.ts";

/** Through the codec: encode the struct for `version`, decode the bytes, check every byte read. */
function wire(schema: MessageSchema, version: number, s: Struct): Struct {
  const w = new Writer(256);
  encode(schema, version, s, w);
  const r = new Reader(w.finish().slice());
  const back = decode(schema, version, r);
  assert.ok(r.ok, `${schema.name} v${version}: ${r.error}`);
  assert.equal(r.remaining, 0, `${schema.name} v${version}: every byte read`);
  return back;
}

function versions(schema: MessageSchema): number[] {
  const out: number[] = [];
  for (let v = schema.versions.min; v <= schema.versions.max; v++) out.push(v);
  return out;
}

const zero = new Uint8Array(16);
const idA = Uint8Array.from({ length: 16 }, (_, i) => i + 1);
const idB = Uint8Array.from({ length: 16 }, (_, i) => 0xf0 - i);

function partition(topic: string, topicId: Uint8Array, index: number, extra: Partial<PartitionState> = {}): PartitionState {
  return {
    topic,
    partition: index,
    topicId,
    controllerEpoch: 7,
    leader: 1 + index,
    leaderEpoch: 12 + index,
    isr: [1 + index, 3],
    replicas: [1 + index, 3, 2],
    partitionEpoch: 40 + index,
    ...extra,
  };
}

function topic(name: string, topicId: Uint8Array, partitions: PartitionState[]): TopicInfo {
  return { name, topicId, partitions, configs: {}, configsZxid: -1n };
}

const brokers: BrokerInfo[] = [
  { id: 1, host: "h1.example", port: 9092, rack: "r1", epoch: 0x1_0000_0001n },
  { id: 2, host: "h2.example", port: 9093, rack: null, epoch: 77n },
];

/** What a broker list looks like after the wire: epochs unknown, racks only where carried. */
/**
 * The brokers as a receiver decodes them: v1+ carry each broker's endpoints (the controller sends
 * one on `listener` for a BrokerInfo without any; v1-2 name it after its protocol).
 */
function brokersBack(list: BrokerInfo[], version: number, listener: string): BrokerInfo[] {
  return list.map((b) => {
    const back: BrokerInfo = { ...b, rack: version >= 2 ? b.rack : null, epoch: -1n };
    if (version >= 1) back.endpoints = [{ listener: version >= 3 ? listener : "PLAINTEXT", host: b.host, port: b.port, securityProtocol: "PLAINTEXT" }];
    return back;
  });
}

// ---- LeaderAndIsr -------------------------------------------------------------------------------

function leaderAndIsrTopics(): TopicInfo[] {
  return [
    topic("orders", idA, [
      partition("orders", idA, 0, { addingReplicas: [4], removingReplicas: [2], isNew: true }),
      partition("orders", idA, 1, { addingReplicas: [], removingReplicas: [], isNew: false }),
    ]),
    topic("päyments", idB, [partition("päyments", idB, 0, { addingReplicas: [], removingReplicas: [5, 6], isNew: false })]),
  ];
}

/** The topics as version v carries them. */
function leaderAndIsrBack(topics: TopicInfo[], v: number): TopicInfo[] {
  return topics.map((t) => {
    const topicId = v >= 5 ? t.topicId : zero;
    return {
      ...t,
      topicId,
      partitions: t.partitions.map((p) => ({
        ...p,
        topicId,
        addingReplicas: v >= 3 ? p.addingReplicas ?? [] : [],
        removingReplicas: v >= 3 ? p.removingReplicas ?? [] : [],
        isNew: v >= 1 ? p.isNew ?? false : false,
      })),
    };
  });
}

test("LeaderAndIsr: every version gives back the topics, partitions and live leaders it carries", () => {
  for (const v of versions(LeaderAndIsrApi.request)) {
    const topics = leaderAndIsrTopics();
    const body = wire(LeaderAndIsrApi.request, v, leaderAndIsrRequest(3, 9, 0x2_0000_0005n, topics, brokers, v));
    const back = decodeLeaderAndIsrRequest(v, body);
    assert.equal(back.controllerId, 3, `v${v}`);
    assert.equal(back.controllerEpoch, 9, `v${v}`);
    assert.equal(back.brokerEpoch, v >= 2 ? 0x2_0000_0005n : -1n, `v${v}: broker epoch`);
    assert.deepEqual(back.topics, leaderAndIsrBack(topics, v), `v${v}: topics`);
    assert.deepEqual(back.liveLeaders, brokersBack(brokers, 0, ""), `v${v}: live leaders`);
  }
});

test("LeaderAndIsr: unset optional partition fields decode as empty reassignment lists and not new", () => {
  const plain = partition("t", idA, 0);
  const body = wire(LeaderAndIsrApi.request, 6, leaderAndIsrRequest(1, 1, -1n, [topic("t", idA, [plain])], [], 6));
  const [p] = decodeLeaderAndIsrRequest(6, body).topics[0].partitions;
  assert.deepEqual(p, { ...plain, addingReplicas: [], removingReplicas: [], isNew: false });
  // The decoded topic id is a copy, not a view of the request frame.
  assert.equal(p.topicId.byteOffset, 0);
  assert.equal(p.topicId.buffer.byteLength, 16);
});

test("LeaderAndIsr: the default version is 6, and an undeclared version is a programmer error", () => {
  assert.equal(LEADER_AND_ISR_VERSION, 6);
  const body = leaderAndIsrRequest(1, 1, -1n, leaderAndIsrTopics(), []);
  assert.equal((body.ungroupedPartitionStates as unknown[]).length, 0);
  assert.equal((body.topicStates as unknown[]).length, 2);
  assert.throws(() => leaderAndIsrRequest(1, 1, -1n, [], [], 8), /LeaderAndIsr v8/);
  assert.throws(() => decodeLeaderAndIsrRequest(-1, {}), /LeaderAndIsr v-1/);
});

test("LeaderAndIsr response: partition errors round-trip in every version, by name (v0-4) or topic id (v5+)", () => {
  const topics = [
    topic("a", idA, [partition("a", idA, 0), partition("a", idA, 1)]),
    // Two topics without an id: told apart by position in v5+.
    topic("b", zero, [partition("b", zero, 0)]),
    topic("c", zero, [partition("c", zero, 2)]),
  ];
  const errors = topics.flatMap((t) => t.partitions.map((p, i) => ({ topic: t.name, topicId: t.topicId, partition: p.partition, errorCode: i === 1 ? 3 : 0 })));
  for (const v of versions(LeaderAndIsrApi.response)) {
    const body = wire(LeaderAndIsrApi.response, v, leaderAndIsrResponse(v, 0, errors));
    const back = decodeLeaderAndIsrResponse(v, body, topics);
    assert.equal(back.errorCode, 0);
    assert.deepEqual(back.partitions, errors.map(({ topic, partition, errorCode }) => ({ topic, partition, errorCode })), `v${v}`);
  }
  // A topic id the request did not carry comes back nameless.
  const unknown = wire(LeaderAndIsrApi.response, 5, leaderAndIsrResponse(5, 11, [{ topic: "x", topicId: idB, partition: 4, errorCode: 11 }]));
  assert.deepEqual(decodeLeaderAndIsrResponse(5, unknown, topics), { errorCode: 11, partitions: [{ topic: "", partition: 4, errorCode: 11 }] });
  // Found by id when not at its position.
  const moved = wire(LeaderAndIsrApi.response, 7, leaderAndIsrResponse(7, 0, [{ topic: "a", topicId: idA, partition: 1, errorCode: 0 }]));
  assert.deepEqual(decodeLeaderAndIsrResponse(7, moved, [topics[2], topics[0]]).partitions, [{ topic: "a", partition: 1, errorCode: 0 }]);
});

// ---- UpdateMetadata -----------------------------------------------------------------------------

function updateMetadataTopics(): TopicInfo[] {
  return [
    topic("orders", idA, [partition("orders", idA, 0), partition("orders", idA, 1)]),
    topic("empty-isr", idB, [partition("empty-isr", idB, 0, { isr: [], leader: -1 })]),
  ];
}

function updateMetadataBack(topics: TopicInfo[], v: number): TopicInfo[] {
  return topics.map((t) => {
    const topicId = v >= 7 ? t.topicId : zero;
    return { ...t, topicId, partitions: t.partitions.map((p) => ({ ...p, topicId })) };
  });
}

test("UpdateMetadata: every version gives back the brokers, topics and deleted topics it carries", () => {
  for (const v of versions(UpdateMetadataApi.request)) {
    const topics = updateMetadataTopics();
    const body = wire(
      UpdateMetadataApi.request,
      v,
      updateMetadataRequest(2, 5, 0x3_0000_0000n, brokers, topics, ["gone", "also-gone"], v, "INTERNAL"),
    );
    const back = decodeUpdateMetadataRequest(v, body, "INTERNAL");
    assert.equal(back.controllerId, 2, `v${v}`);
    assert.equal(back.controllerEpoch, 5, `v${v}`);
    assert.equal(back.brokerEpoch, v >= 5 ? 0x3_0000_0000n : -1n, `v${v}: broker epoch`);
    assert.deepEqual(back.brokers, brokersBack(brokers, v, "INTERNAL"), `v${v}: brokers`);
    assert.deepEqual(back.topics, updateMetadataBack(topics, v), `v${v}: topics`);
    assert.deepEqual(back.deletedTopics, ["gone", "also-gone"], `v${v}: deleted topics`);
  }
});

test("UpdateMetadata: a deleted topic is a partition led by -2; one deleted and created again is both", () => {
  const again = topic("phoenix", idB, [partition("phoenix", idB, 0)]);
  for (const v of [4, 5, UPDATE_METADATA_VERSION, 8]) {
    const body = updateMetadataRequest(1, 1, -1n, [], [again], ["phoenix"], v);
    const states = v <= 4
      ? body.ungroupedPartitionStates as { leader: number }[]
      : (body.topicStates as { partitionStates: { leader: number }[] }[]).flatMap((t) => t.partitionStates);
    assert.deepEqual(states.map((s) => s.leader), [-2, 1], `v${v}: the deletion goes first`);
    const back = decodeUpdateMetadataRequest(v, wire(UpdateMetadataApi.request, v, body));
    assert.deepEqual(back.deletedTopics, ["phoenix"]);
    assert.deepEqual(back.topics, updateMetadataBack([again], v));
  }
});

test("UpdateMetadata: endpoints on another listener fall back to the first; brokers without endpoints are left out", () => {
  const body = wire(UpdateMetadataApi.request, 7, updateMetadataRequest(1, 1, -1n, brokers, [], [], 7, "REPLICATION"));
  const liveBrokers = body.liveBrokers as { endpoints: { listener: string; host: string; port: number; securityProtocol: number }[] }[];
  assert.deepEqual(liveBrokers[0].endpoints, [{ listener: "REPLICATION", host: "h1.example", port: 9092, securityProtocol: 0 }]);
  // Another endpoint first: the one on our listener wins.
  liveBrokers[0].endpoints.unshift({ listener: "EXTERNAL", host: "public.example", port: 19092, securityProtocol: 0 });
  liveBrokers[1].endpoints = [];
  const endpoints = [
    { listener: "EXTERNAL", host: "public.example", port: 19092, securityProtocol: "PLAINTEXT" },
    { listener: "REPLICATION", host: "h1.example", port: 9092, securityProtocol: "PLAINTEXT" },
  ];
  assert.deepEqual(decodeUpdateMetadataRequest(7, body, "REPLICATION").brokers, [{ ...brokers[0], epoch: -1n, endpoints }]);
  // No endpoint on our listener: the first.
  assert.deepEqual(decodeUpdateMetadataRequest(7, body, "PLAINTEXT").brokers, [{ ...brokers[0], host: "public.example", port: 19092, epoch: -1n, endpoints }]);
  assert.equal(UPDATE_METADATA_VERSION, 7);
});

// ---- StopReplica --------------------------------------------------------------------------------

test("StopReplica: every version gives back the partitions, with deletePartition and leader epochs where carried", () => {
  const same: StopReplicaPartition[] = [
    { topic: "a", partition: 0, deletePartition: true, leaderEpoch: -2 },
    { topic: "b", partition: 3, deletePartition: true, leaderEpoch: 4 },
    { topic: "a", partition: 2, deletePartition: true, leaderEpoch: 5 },
  ];
  const mixed: StopReplicaPartition[] = [
    { topic: "a", partition: 0, deletePartition: true, leaderEpoch: -2 },
    { topic: "a", partition: 1, deletePartition: false, leaderEpoch: 9 },
  ];
  for (const v of versions(StopReplicaApi.request)) {
    for (const [partitions, del] of [[same, true], [same.map((p) => ({ ...p, deletePartition: false })), false], [mixed, null]] as const) {
      if (del === null && v < 3) {
        assert.throws(() => stopReplicaRequest(1, 2, 3n, partitions, v), /one deletePartitions/);
        continue;
      }
      const back = decodeStopReplicaRequest(v, wire(StopReplicaApi.request, v, stopReplicaRequest(1, 2, 3n, partitions, v)));
      assert.equal(back.controllerId, 1);
      assert.equal(back.controllerEpoch, 2);
      assert.equal(back.brokerEpoch, v >= 1 ? 3n : -1n, `v${v}: broker epoch`);
      // Grouped by topic from v1 on (in order of first appearance), so compare as a set.
      const key = (p: StopReplicaPartition) => `${p.topic}-${p.partition}`;
      const expected = partitions.map((p) => ({ ...p, leaderEpoch: v >= 3 ? p.leaderEpoch : -1 }));
      assert.deepEqual([...back.partitions].sort((x, y) => key(x).localeCompare(key(y))), [...expected].sort((x, y) => key(x).localeCompare(key(y))), `v${v}`);
      if (v === 0) assert.deepEqual(back.partitions.map(key), partitions.map(key), "v0 keeps the order");
    }
  }
  assert.equal(STOP_REPLICA_VERSION, 3);
  // No partitions at all is a valid request (deletePartitions false).
  assert.deepEqual(decodeStopReplicaRequest(1, wire(StopReplicaApi.request, 1, stopReplicaRequest(1, 1, -1n, [], 1))).partitions, []);
});

test("StopReplica response: the error and partition errors round-trip in every version", () => {
  const errors = [{ topic: "a", partition: 0, errorCode: 0 }, { topic: "b", partition: 1, errorCode: 56 }];
  for (const v of versions(StopReplicaApi.response)) {
    assert.deepEqual(decodeStopReplicaResponse(wire(StopReplicaApi.response, v, stopReplicaResponse(0, errors))), { errorCode: 0, partitions: errors });
    assert.deepEqual(decodeStopReplicaResponse(wire(StopReplicaApi.response, v, stopReplicaResponse(11, []))), { errorCode: 11, partitions: [] });
  }
});

test("broker epochs: unknown (-1) and newer pass, older is stale", () => {
  assert.equal(isStaleBrokerEpoch(-1n, 500n), false);
  assert.equal(isStaleBrokerEpoch(500n, 500n), false);
  assert.equal(isStaleBrokerEpoch(501n, 500n), false);
  assert.equal(isStaleBrokerEpoch(499n, 500n), true);
});

test("UpdateMetadata carries every listener of a broker, with its security protocol, and a receiver keeps them all", () => {
  const multi: BrokerInfo[] = [{
    id: 4,
    host: "10.0.0.4",
    port: 9091,
    rack: null,
    epoch: 7n,
    endpoints: [
      { listener: "INTERNAL", host: "10.0.0.4", port: 9091, securityProtocol: "PLAINTEXT" },
      { listener: "EXTERNAL", host: "kafka4.example", port: 9094, securityProtocol: "SASL_PLAINTEXT" },
    ],
  }];
  const body = wire(UpdateMetadataApi.request, 7, updateMetadataRequest(1, 1, -1n, multi, [], [], 7, "INTERNAL"));
  assert.deepEqual((body.liveBrokers as { endpoints: unknown[] }[])[0].endpoints, [
    { port: 9091, host: "10.0.0.4", listener: "INTERNAL", securityProtocol: 0 },
    { port: 9094, host: "kafka4.example", listener: "EXTERNAL", securityProtocol: 2 },
  ]);
  const back = decodeUpdateMetadataRequest(7, body, "INTERNAL").brokers[0];
  assert.deepEqual([back.host, back.port], ["10.0.0.4", 9091], "reached on the inter-broker listener");
  assert.deepEqual(back.endpoints, multi[0].endpoints);
  // Received on the other listener's name, the same broker is reached there.
  const ext = decodeUpdateMetadataRequest(7, body, "EXTERNAL").brokers[0];
  assert.deepEqual([ext.host, ext.port], ["kafka4.example", 9094]);
});
