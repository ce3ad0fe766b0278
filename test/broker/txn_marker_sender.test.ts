// WriteTxnMarkers over a real socket (src/broker/txn_marker_sender.ts) to a fake partition leader
// (test/helpers/fake_kafka.ts): the request as Kafka 3.8 sends it (v1, markers grouped by topic,
// the coordinator epoch), each partition's answer handed back in the order sent, a reconnect after
// the connection drops, and a rejection (so the channel sends again) for an unknown broker or an
// answer that leaves a partition out; then a whole commit through the coordinator.
import assert from "node:assert/strict";
import { test } from "node:test";
import { MetadataCache } from "../../src/broker/metadata_cache.ts";
import { InterBrokerTxnMarkerSender } from "../../src/broker/txn_marker_sender.ts";
import { metadataLeaderLookup } from "../../src/broker/txn_wiring.ts";
import type { TxnMarkerEntry } from "../../src/coordinator/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { type FakeRequest, startFakeKafka } from "../helpers/fake_kafka.ts";
import { txnHarness } from "../coordinator/txn_harness.ts";

const platform = await loadPlatform();

interface Leader {
  requests: FakeRequest[];
  /** Error code per "topic-partition" for the next answers (consumed); NONE otherwise. */
  errors: Map<string, number[]>;
  /** Leave these partitions out of the answer. */
  omit: Set<string>;
}

async function fakeLeader() {
  const l: Leader = { requests: [], errors: new Map(), omit: new Set() };
  const fake = await startFakeKafka(platform, (req, reply) => {
    l.requests.push(req);
    assert.equal(req.apiKey, 27);
    const markers = (req.body.markers as Struct[]).map((m) => ({
      producerId: m.producerId,
      topics: (m.topics as { name: string; partitionIndexes: number[] }[]).map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.filter((i) => !l.omit.has(`${t.name}-${i}`)).map((i) => ({
          partitionIndex: i,
          errorCode: l.errors.get(`${t.name}-${i}`)?.shift() ?? 0,
        })),
      })),
    }));
    reply({ markers });
  });
  return { l, fake };
}

const marker = (producerId: bigint, committed: boolean, partitions: [string, number][]): TxnMarkerEntry => ({
  producerId,
  producerEpoch: 3,
  coordinatorEpoch: 9,
  committed,
  partitions: partitions.map(([topic, partition]) => ({ topic, partition })),
});

test("WriteTxnMarkers v1: the request Kafka sends, answers in the order sent; reconnects; rejects what it cannot carry", async () => {
  const { l, fake } = await fakeLeader();
  const sender = new InterBrokerTxnMarkerSender(platform, 0, (id) => (id === 1 ? { host: "127.0.0.1", port: fake.port } : undefined), { requestTimeoutMs: 5000 }, silentLogger);
  try {
    l.errors.set("b-0", [ErrorCode.NOT_LEADER_OR_FOLLOWER]);
    const got = await sender.send(1, [marker(7n, true, [["a", 1], ["b", 0], ["a", 0]]), marker(8n, false, [["c", 2]])]);
    assert.deepEqual(got, [[0, ErrorCode.NOT_LEADER_OR_FOLLOWER, 0], [0]]);
    assert.equal(l.requests.length, 1);
    assert.equal(l.requests[0].apiVersion, 1);
    assert.equal(l.requests[0].clientId, "strand-txn-markers-0");
    assert.deepEqual(l.requests[0].body, {
      markers: [
        { producerId: 7n, producerEpoch: 3, transactionResult: true, topics: [{ name: "a", partitionIndexes: [1, 0] }, { name: "b", partitionIndexes: [0] }], coordinatorEpoch: 9 },
        { producerId: 8n, producerEpoch: 3, transactionResult: false, topics: [{ name: "c", partitionIndexes: [2] }], coordinatorEpoch: 9 },
      ],
    });
    // The connection drops: the next send connects again.
    fake.dropConnections();
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(await sender.send(1, [marker(7n, true, [["a", 1]])]), [[0]]);
    await assert.rejects(sender.send(2, [marker(7n, true, [["a", 1]])]), /broker 2 has no known endpoint/);
    l.omit.add("a-5");
    await assert.rejects(sender.send(1, [marker(7n, true, [["a", 5]])]), /no result for producer 7 on a-5/);
  } finally {
    sender.shutdown();
    await fake.stop();
  }
});

test("a commit through the coordinator and the network sender: markers at the coordinator epoch, a retriable error sent again, then CompleteCommit", async () => {
  const { l, fake } = await fakeLeader();
  const sender = new InterBrokerTxnMarkerSender(platform, 0, (id) => (id === 1 ? { host: "127.0.0.1", port: fake.port } : undefined), { requestTimeoutMs: 5000 }, silentLogger);
  try {
    const h = await txnHarness({}, { markerSender: sender });
    const a = await h.c.handleInitProducerId("tx", 60_000, null);
    assert.equal(await h.c.handleAddPartitions("tx", a.producerId, 0, [{ topic: "t", partition: 0 }, { topic: "t", partition: 1 }]), 0);
    l.errors.set("t-1", [ErrorCode.NOT_ENOUGH_REPLICAS]);
    assert.equal(await h.c.handleEndTxn("tx", a.producerId, 0, true), 0);
    for (let i = 0; i < 200 && h.c.describe("tx").txn!.state !== "CompleteCommit"; i++) {
      await new Promise((r) => setTimeout(r, 10));
      await h.clock.advance(50);
    }
    assert.equal(h.c.describe("tx").txn!.state, "CompleteCommit");
    const sent = l.requests.map((r) => (r.body.markers as Struct[]).map((m) => `${m.producerId}/${m.producerEpoch}@${m.coordinatorEpoch} ${m.transactionResult} ${(m.topics as Struct[]).map((t) => `${t.name}:${t.partitionIndexes}`).join(" ")}`));
    assert.deepEqual(sent, [[`${a.producerId}/0@1 true t:0,1`], [`${a.producerId}/0@1 true t:1`]]);
    assert.deepEqual(h.logger.errors, []);
    h.c.shutdown();
  } finally {
    sender.shutdown();
    await fake.stop();
  }
});

test("markers go to the leader the metadata names: a live broker's id, -1 without a live leader, null for an unknown partition", () => {
  const metadata = new MetadataCache(0);
  metadata.setBrokers([{ id: 1, host: "h1", port: 9092, rack: null }]);
  const state = (partition: number, leader: number) => ({ topic: "t", partition, topicId: new Uint8Array(16), controllerEpoch: 1, leader, leaderEpoch: 0, isr: [1], replicas: [1, 2], partitionEpoch: 0 });
  metadata.updateTopic({ name: "t", topicId: new Uint8Array(16).fill(3), isInternal: false, partitions: [state(0, 1), state(1, 2), state(2, -1)], configs: {} });
  const leaderOf = metadataLeaderLookup(metadata);
  assert.deepEqual([leaderOf("t", 0), leaderOf("t", 1), leaderOf("t", 2), leaderOf("t", 3), leaderOf("gone", 0)], [1, -1, -1, null, null]);
});
