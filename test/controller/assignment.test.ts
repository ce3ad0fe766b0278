// Replica assignment against the examples and distribution properties Kafka's own tests
// (AdminRackAwareTest, AdminTest) document, and topic creation with racks through ZkTopicAdmin.
import assert from "node:assert/strict";
import { test } from "node:test";
import { assignReplicasToBrokers, type BrokerRack, rackAlternatedBrokerList, type TopicMetadataView, ZkTopicAdmin } from "../../src/controller/mod.ts";
import { ErrorCode, KafkaError } from "../../src/util/mod.ts";
import { testPlatform } from "../registry/helpers.ts";
import { withHarness } from "./harness.ts";

const noRandom = (): number => {
  throw new Error("no random start expected");
};

function racked(map: Record<number, string>): BrokerRack[] {
  return Object.entries(map).map(([id, rack]) => ({ id: Number(id), rack }));
}

function obj(m: Map<number, number[]>): Record<number, number[]> {
  return Object.fromEntries(m);
}

/** Kafka's assertReplicaDistribution: every partition on rf distinct racks; leaders and replicas even. */
function checkDistribution(a: Map<number, number[]>, racks: Record<number, string>, rf: number, leaders: boolean, replicas: boolean): void {
  const leaderCount = new Map<number, number>();
  const replicaCount = new Map<number, number>();
  for (const r of a.values()) {
    assert.equal(new Set(r).size, r.length, "no broker twice");
    assert.equal(new Set(r.map((b) => racks[b])).size, rf, `replicas ${r} on ${rf} racks`);
    leaderCount.set(r[0], (leaderCount.get(r[0]) ?? 0) + 1);
    for (const b of r) replicaCount.set(b, (replicaCount.get(b) ?? 0) + 1);
  }
  const n = Object.keys(racks).length;
  if (leaders) assert.deepEqual([...leaderCount.values()], Array(n).fill(a.size / n));
  if (replicas) assert.deepEqual([...replicaCount.values()], Array(n).fill((a.size * rf) / n));
}

test("rack-unaware assignment: Kafka's documented example (5 brokers, 10 partitions, rf 3, start 0)", () => {
  const brokers = [0, 1, 2, 3, 4].map((id) => ({ id, rack: null }));
  assert.deepEqual(obj(assignReplicasToBrokers(brokers, 10, 3, 0, 0, noRandom)), {
    0: [0, 1, 2],
    1: [1, 2, 3],
    2: [2, 3, 4],
    3: [3, 4, 0],
    4: [4, 0, 1],
    5: [0, 2, 3],
    6: [1, 3, 4],
    7: [2, 4, 0],
    8: [3, 0, 1],
    9: [4, 1, 2],
  });
});

test("the rack-alternated broker list and rack-aware assignment: Kafka's documented example", () => {
  const racks = { 0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1" };
  assert.deepEqual(rackAlternatedBrokerList(new Map(Object.entries(racks).map(([k, v]) => [Number(k), v]))), [0, 3, 1, 5, 4, 2]);
  const fewer = { 0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2" };
  assert.deepEqual(rackAlternatedBrokerList(new Map(Object.entries(fewer).map(([k, v]) => [Number(k), v]))), [0, 3, 1, 4, 2]);
  assert.deepEqual(obj(assignReplicasToBrokers(racked(racks), 7, 3, 0, 0, noRandom)), {
    0: [0, 3, 1],
    1: [3, 1, 5],
    2: [1, 5, 4],
    3: [5, 4, 2],
    4: [4, 2, 0],
    5: [2, 0, 3],
    6: [0, 4, 2],
  });
});

test("rack-aware distribution: every partition spans rf racks, leaders and replicas spread evenly (random starts)", () => {
  const racks = { 0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1" };
  for (let seed = 0; seed < 20; seed++) {
    let x = seed;
    const random = (n: number) => (x = (x * 7 + 3) % 101) % n;
    checkDistribution(assignReplicasToBrokers(racked(racks), 6, 3, -1, 0, random), racks, 3, true, true);
    checkDistribution(assignReplicasToBrokers(racked(racks), 12, 2, -1, 0, random), racks, 2, true, true);
  }
  checkDistribution(assignReplicasToBrokers(racked(racks), 6, 3, 2, 0, noRandom), racks, 3, true, true);
  // Uneven racks: still rf racks per partition, leaders even.
  const uneven = { 0: "rack1", 1: "rack1", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1" };
  checkDistribution(assignReplicasToBrokers(racked(uneven), 12, 3, 1, 0, noRandom), uneven, 3, true, false);
  // Expansion from partition 12 on (CreatePartitions' form).
  const expand = { 6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack3", 11: "rack1" };
  const more = assignReplicasToBrokers(racked(expand), 12, 2, -1, 12, () => 4);
  assert.deepEqual([...more.keys()], Array.from({ length: 12 }, (_, i) => 12 + i));
  checkDistribution(more, expand, 2, true, true);
  // More replicas than racks: every rack used, then any broker.
  const three = { 0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2" };
  for (const r of assignReplicasToBrokers(racked(three), 6, 5, -1, 0, () => 1).values()) {
    assert.equal(r.length, 5);
    assert.equal(new Set(r.map((b) => three[b as keyof typeof three])).size, 3);
  }
});

test("assignment errors: mixed rack information, replication factor above the brokers, no partitions", () => {
  const fails = (fn: () => unknown, code: number, message: RegExp) =>
    assert.throws(fn, (e: unknown) => e instanceof KafkaError && e.code === code && message.test(e.message));
  fails(() => assignReplicasToBrokers([{ id: 0, rack: "a" }, { id: 1, rack: null }], 1, 1, -1, 0, () => 0), ErrorCode.UNKNOWN_SERVER_ERROR, /Not all brokers have rack information/);
  fails(() => assignReplicasToBrokers([{ id: 0, rack: null }], 1, 2, -1, 0, () => 0), ErrorCode.INVALID_REPLICATION_FACTOR, /larger than available brokers: 1/);
  fails(() => assignReplicasToBrokers([{ id: 0, rack: null }], 0, 1, -1, 0, () => 0), ErrorCode.INVALID_PARTITIONS, /larger than 0/);
});

test("CreateTopics assigns across racks when every broker has one, and refuses mixed rack information", async () => {
  const view: TopicMetadataView = { getTopic: () => undefined, waitUntil: () => Promise.resolve(true) };
  await withHarness({ brokers: [0, 1, 2, 3], racks: { 0: "a", 1: "a", 2: "b", 3: "b" } }, async (h) => {
    const admin = new ZkTopicAdmin(await testPlatform(), h.admin, view);
    const r = await admin.createTopic({ name: "t", numPartitions: 8, replicationFactor: 2, assignment: null, configs: {} }, false, 0);
    assert.equal(r.errorCode, ErrorCode.NONE);
    const rack = (b: number) => (b < 2 ? "a" : "b");
    const a = await h.assignment("t");
    for (const { replicas } of a.values()) assert.notEqual(rack(replicas[0]), rack(replicas[1]), `${replicas} spans both racks`);
    const leaders = [...a.values()].map((x) => x.replicas[0]);
    for (const b of [0, 1, 2, 3]) assert.equal(leaders.filter((l) => l === b).length, 2, `broker ${b} leads 2 of 8`);
    await h.startBroker(4); // no rack
    const mixed = await admin.createTopic({ name: "u", numPartitions: 1, replicationFactor: 1, assignment: null, configs: {} }, false, 0);
    assert.equal(mixed.errorCode, ErrorCode.UNKNOWN_SERVER_ERROR);
    assert.match(mixed.errorMessage!, /Not all brokers have rack information/);
  });
});
