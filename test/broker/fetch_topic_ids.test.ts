// Fetch v13-16 over the wire, against a real broker: v13+ names topics by id (resolved through the
// metadata cache; an id the broker does not know, the zero id, or the id of a deleted topic answers
// UNKNOWN_TOPIC_ID for each of its partitions, next to topics that answer normally), answers carry
// the id; v15 takes the replica id from the tagged ReplicaState; v16 names the current leader and
// its endpoint for a partition that answers NOT_LEADER_OR_FOLLOWER (KIP-951; a follower serves
// consumers since KIP-392, so here the broker holds no replica at all). ListOffsets v8 -4.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { TopicLogConfig } from "../../src/log/mod.ts";
import { DeleteRecordsApi, DeleteTopicsApi, FetchApi, ListOffsetsApi, MetadataApi } from "../../src/protocol/api/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker } from "../helpers/broker.ts";
import { buildBatch, parseBatches, text } from "../helpers/record_batch.ts";
import { createTopic, produce, WireClient } from "../helpers/wire.ts";

interface PartitionAnswer {
  partitionIndex: number;
  errorCode: number;
  highWatermark: bigint;
  logStartOffset: bigint;
  currentLeader: { leaderId: number; leaderEpoch: number };
  records: Uint8Array | null;
}
interface TopicAnswer {
  topic: string;
  topicId: Uint8Array;
  partitions: PartitionAnswer[];
}

async function topicId(c: WireClient, name: string): Promise<Uint8Array> {
  const md = await c.request(MetadataApi, 12, { topics: [{ topicId: new Uint8Array(16), name }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  const t = (md.topics as { errorCode: number; topicId: Uint8Array }[])[0];
  assert.equal(t.errorCode, 0);
  assert.notDeepEqual(t.topicId, new Uint8Array(16), `${name} has an id`);
  return t.topicId;
}

/** A consumer's Fetch in version v (13+): one entry per topic id, partitions from offset 0. */
function fetchBody(topics: { topicId: Uint8Array; partitions: number[] }[], extra: Struct = {}): Struct {
  return {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: topics.map((t) => ({
      topicId: t.topicId,
      partitions: t.partitions.map((partition) => ({ partition, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 })),
    })),
    forgottenTopicsData: [],
    rackId: "",
    ...extra,
  };
}

const values = (records: Uint8Array | null) => parseBatches(records ?? new Uint8Array(0)).flatMap((b) => b.records.map((r) => text(r.value)));

test("fetch v13/v14: topics by id; unknown, zero and deleted ids answer UNKNOWN_TOPIC_ID per partition", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "by-id", { numPartitions: 2 })).errorCode, 0);
    assert.equal((await createTopic(c, "gone", { numPartitions: 1 })).errorCode, 0);
    assert.equal((await produce(c, "by-id", 1, buildBatch([{ value: "a" }, { value: "b" }]))).errorCode, 0);
    const id = await topicId(c, "by-id");
    const goneId = await topicId(c, "gone");
    const d = await c.request(DeleteTopicsApi, 4, { topicNames: ["gone"], timeoutMs: 10_000 });
    assert.equal((d.responses as { errorCode: number }[])[0].errorCode, 0);
    const unknown = Uint8Array.from({ length: 16 }, (_, i) => i + 1);
    for (const version of [13, 14]) {
      const res = await c.request(FetchApi, version, fetchBody([
        { topicId: unknown, partitions: [0, 3] },
        { topicId: id, partitions: [0, 1] },
        { topicId: new Uint8Array(16), partitions: [0] },
        { topicId: goneId, partitions: [0] },
      ]));
      assert.equal(res.errorCode, 0);
      assert.equal(res.sessionId, 0);
      const topics = res.responses as TopicAnswer[];
      assert.deepEqual(topics.map((t) => t.topicId), [unknown, id, new Uint8Array(16), goneId], `v${version}: ids echoed in order`);
      assert.ok(topics.every((t) => t.topic === ""), "no names on the wire in v13+");
      for (const t of [topics[0], topics[2], topics[3]]) {
        for (const p of t.partitions) {
          assert.equal(p.errorCode, ErrorCode.UNKNOWN_TOPIC_ID);
          assert.equal(p.highWatermark, -1n);
          assert.deepEqual(p.records, new Uint8Array(0));
        }
      }
      assert.deepEqual(topics[0].partitions.map((p) => p.partitionIndex), [0, 3]);
      const [p0, p1] = topics[1].partitions;
      assert.deepEqual([p0.partitionIndex, p0.errorCode, p0.highWatermark, values(p0.records)], [0, 0, 0n, []]);
      assert.deepEqual([p1.partitionIndex, p1.errorCode, p1.highWatermark, values(p1.records)], [1, 0, 2n, ["a", "b"]]);
    }

    // Re-created under the same name, the topic has a new id; the old one stays unknown.
    assert.equal((await createTopic(c, "gone", { numPartitions: 1 })).errorCode, 0);
    const newId = await topicId(c, "gone");
    assert.notDeepEqual(newId, goneId);
    const res = await c.request(FetchApi, 13, fetchBody([{ topicId: goneId, partitions: [0] }, { topicId: newId, partitions: [0] }]));
    assert.deepEqual((res.responses as TopicAnswer[]).map((t) => t.partitions[0].errorCode), [ErrorCode.UNKNOWN_TOPIC_ID, 0]);
  } finally {
    c.close();
    await b.stop();
  }
});

test("fetch v15: the replica id comes from the tagged ReplicaState; a fetch claiming a replica id is refused on a single node, a consumer's answered", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "v15")).errorCode, 0);
    assert.equal((await produce(c, "v15", 0, buildBatch([{ value: "x" }]))).errorCode, 0);
    const id = await topicId(c, "v15");
    // replicaId (v4-14) is not on the wire in v15: setting it changes nothing.
    const consumer = await c.request(FetchApi, 15, fetchBody([{ topicId: id, partitions: [0] }], { replicaId: 3 }));
    assert.equal(consumer.errorCode, 0);
    assert.deepEqual(values((consumer.responses as TopicAnswer[])[0].partitions[0].records), ["x"]);
    const replica = await c.request(FetchApi, 15, fetchBody([{ topicId: id, partitions: [0] }], { replicaState: { replicaId: 1, replicaEpoch: 7n } }));
    // A single node has no followers: every partition answers TOPIC_AUTHORIZATION_FAILED, as
    // Kafka answers a follower without CLUSTER_ACTION (src/broker/inter_broker.ts).
    assert.equal(replica.errorCode, ErrorCode.NONE);
    const parts = (replica.responses as TopicAnswer[])[0].partitions;
    assert.deepEqual(parts.map((p) => [p.errorCode, p.records!.length]), [[ErrorCode.TOPIC_AUTHORIZATION_FAILED, 0]]);
  } finally {
    c.close();
    await b.stop();
  }
});

test("fetch v16: NOT_LEADER_OR_FOLLOWER names the current leader and its endpoint (KIP-951); none otherwise", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "led", { numPartitions: 2 })).errorCode, 0);
    const id = await topicId(c, "led");
    const body = fetchBody([{ topicId: id, partitions: [0, 1] }]);
    const before = await c.request(FetchApi, 16, body);
    assert.deepEqual(before.nodeEndpoints, []);
    assert.ok((before.responses as TopicAnswer[])[0].partitions.every((p) => p.errorCode === 0 && p.currentLeader.leaderId === -1));

    // What a controller would tell this broker when partition 1's leadership moves to broker 1.
    const s = b.broker.services;
    s.metadata.setBrokers([...s.metadata.aliveBrokers(), { id: 1, host: "broker-1.example", port: 19092, rack: "rack-b" }]);
    const t = s.metadata.getTopic("led")!;
    const moved = { ...t.partitions[1], leader: 1, leaderEpoch: t.partitions[1].leaderEpoch + 1, replicas: [0, 1], isr: [0, 1] };
    s.metadata.updateTopic({ ...t, partitions: [t.partitions[0], moved] });
    s.replicaManager.becomeLeaderOrFollower(moved, s.replicaManager.getPartition("led", 1)!.log.config as TopicLogConfig);
    // A follower serves a v11+ consumer (KIP-392), so partition 1 still answers from here...
    const fromFollower = await c.request(FetchApi, 16, body);
    assert.deepEqual((fromFollower.responses as TopicAnswer[])[0].partitions.map((p) => p.errorCode), [0, 0]);
    // ...until this broker holds no replica of it: then NOT_LEADER_OR_FOLLOWER, since the
    // metadata still knows the partition (Kafka's getPartitionOrError).
    s.replicaManager.stopReplica("led", 1, false);

    const after = await c.request(FetchApi, 16, body);
    assert.equal(after.errorCode, 0);
    const [p0, p1] = (after.responses as TopicAnswer[])[0].partitions;
    assert.equal(p0.errorCode, 0);
    assert.deepEqual(p0.currentLeader, { leaderId: -1, leaderEpoch: -1 });
    assert.equal(p1.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.deepEqual(p1.currentLeader, { leaderId: 1, leaderEpoch: moved.leaderEpoch });
    assert.deepEqual(after.nodeEndpoints, [{ nodeId: 1, host: "broker-1.example", port: 19092, rack: "rack-b" }]);
    // v15 has neither: the partition only says NOT_LEADER_OR_FOLLOWER.
    const v15 = await c.request(FetchApi, 15, body);
    const q1 = (v15.responses as TopicAnswer[])[0].partitions[1];
    assert.equal(q1.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.deepEqual(q1.currentLeader, { leaderId: -1, leaderEpoch: -1 });
    assert.deepEqual(v15.nodeEndpoints, []);
  } finally {
    c.close();
    await b.stop();
  }
});

test("list offsets v8: -4 (earliest local) is the log start offset, as -2 is, with no tiered storage", async () => {
  const b = await startBroker({ "log.retention.ms": "-1" });
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "local")).errorCode, 0);
    for (let i = 0; i < 5; i++) assert.equal((await produce(c, "local", 0, buildBatch([{ value: `v${i}` }]))).errorCode, 0);
    const dr = await c.request(DeleteRecordsApi, 2, { topics: [{ name: "local", partitions: [{ partitionIndex: 0, offset: 3n }] }], timeoutMs: 5000 });
    assert.equal((dr.topics as { partitions: { errorCode: number }[] }[])[0].partitions[0].errorCode, 0);
    const ask = async (timestamp: bigint) => {
      const res = await c.request(ListOffsetsApi, 8, {
        replicaId: -1,
        isolationLevel: 0,
        topics: [{ name: "local", partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp }] }],
      });
      const p = (res.topics as { partitions: { errorCode: number; offset: bigint; timestamp: bigint }[] }[])[0].partitions[0];
      return [p.errorCode, p.offset, p.timestamp];
    };
    assert.deepEqual(await ask(-4n), [0, 3n, -1n]);
    assert.deepEqual(await ask(-2n), [0, 3n, -1n]);
    assert.deepEqual(await ask(-1n), [0, 5n, -1n]);
  } finally {
    c.close();
    await b.stop();
  }
});
