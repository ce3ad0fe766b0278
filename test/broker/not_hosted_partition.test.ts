// A partition the metadata knows but of which this broker holds no replica (a replica moved
// away, a LeaderAndIsr still on its way, a client with stale metadata): Produce, ListOffsets
// (v0 and v1+), DeleteRecords and OffsetForLeaderEpoch answer NOT_LEADER_OR_FOLLOWER, as Kafka's
// ReplicaManager.getPartitionOrError does, so clients refresh their metadata and retry rather
// than take the partition for gone; a partition the metadata does not know still answers
// UNKNOWN_TOPIC_OR_PARTITION. Over a real socket, against a real broker.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { TopicLogConfig } from "../../src/log/mod.ts";
import { DeleteRecordsApi, ListOffsetsApi, OffsetForLeaderEpochApi } from "../../src/protocol/api/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker } from "../helpers/broker.ts";
import { buildBatch } from "../helpers/record_batch.ts";
import { createTopic, produce, WireClient } from "../helpers/wire.ts";

type Codes = { errorCode: number }[];

test("a partition the metadata knows but this broker does not host answers NOT_LEADER_OR_FOLLOWER; an unknown one UNKNOWN_TOPIC_OR_PARTITION", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "moved", { numPartitions: 2 })).errorCode, 0);
    // What a controller would tell this broker once partition 1 moved to broker 1 alone.
    const s = b.broker.services;
    s.metadata.setBrokers([...s.metadata.aliveBrokers(), { id: 1, host: "broker-1.example", port: 19092, rack: null }]);
    const t = s.metadata.getTopic("moved")!;
    const p1 = { ...t.partitions[1], leader: 1, leaderEpoch: t.partitions[1].leaderEpoch + 1, replicas: [1], isr: [1] };
    s.metadata.updateTopic({ ...t, partitions: [t.partitions[0], p1] });
    s.replicaManager.becomeLeaderOrFollower(p1, s.replicaManager.getPartition("moved", 1)!.log.config as TopicLogConfig);
    s.replicaManager.stopReplica("moved", 1, false);

    const batch = () => buildBatch([{ value: "x" }]);
    assert.equal((await produce(c, "moved", 0, batch(), 1)).errorCode, ErrorCode.NONE);
    assert.equal((await produce(c, "moved", 1, batch(), 1)).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal((await produce(c, "moved", 7, batch(), 1)).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);

    const listOffsets = async (version: number) => {
      const partitions = [0, 1, 7].map((partitionIndex) => ({ partitionIndex, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }));
      const res = await c.request(ListOffsetsApi, version, { replicaId: -1, isolationLevel: 0, topics: [{ name: "moved", partitions }] });
      return ((res.topics as { partitions: Codes }[])[0].partitions).map((p) => p.errorCode);
    };
    const expected = [ErrorCode.NONE, ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION];
    assert.deepEqual(await listOffsets(0), expected, "ListOffsets v0");
    assert.deepEqual(await listOffsets(7), expected, "ListOffsets v7");

    const dr = await c.request(DeleteRecordsApi, 2, {
      topics: [{ name: "moved", partitions: [0, 1, 7].map((partitionIndex) => ({ partitionIndex, offset: -1n })) }],
      timeoutMs: 5000,
    });
    assert.deepEqual(((dr.topics as { partitions: Codes }[])[0].partitions).map((p) => p.errorCode), expected, "DeleteRecords");

    const ofle = await c.request(OffsetForLeaderEpochApi, 4, {
      replicaId: -1,
      topics: [{ topic: "moved", partitions: [0, 1, 7].map((partition) => ({ partition, currentLeaderEpoch: -1, leaderEpoch: 0 })) }],
    });
    assert.deepEqual(((ofle.topics as { partitions: Codes }[])[0].partitions).map((p) => p.errorCode), expected, "OffsetForLeaderEpoch");
  } finally {
    c.close();
    await b.stop();
  }
});
