// ZooKeeper out of reach: every admin request that waits on the registry is answered with a
// retriable Kafka error (REQUEST_TIMED_OUT; LEADER_NOT_AVAILABLE for a topic Metadata would
// auto-create; COORDINATOR_NOT_AVAILABLE while __consumer_offsets cannot be made), never a
// closed connection, and the broker serves them again once ZooKeeper is back. The broker reaches
// a real ZooKeeper through a TCP proxy the test cuts.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  AlterConfigsApi,
  CreatePartitionsApi,
  CreateTopicsApi,
  DeleteTopicsApi,
  DescribeConfigsApi,
  FindCoordinatorApi,
  IncrementalAlterConfigsApi,
  MetadataApi,
  OffsetCommitApi,
  OffsetFetchApi,
} from "../../src/protocol/api/mod.ts";
import type { ApiSchema, Struct } from "../../src/protocol/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker } from "../helpers/broker.ts";
import { skipUnlessZooKeeper, startProxy, startZooKeeper } from "../helpers/zookeeper.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";

const T = ErrorCode.REQUEST_TIMED_OUT;
type Case = [string, ApiSchema, number, Struct, (r: Struct) => number[]];
const codes = (items: unknown, key = "errorCode") => (items as Record<string, number>[]).map((x) => x[key]);
const cases: Case[] = [
  ["CreateTopics", CreateTopicsApi, 5, { topics: [{ name: "u", numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false }, (r) => codes(r.topics)],
  ["DeleteTopics", DeleteTopicsApi, 4, { topicNames: ["t"], timeoutMs: 5000 }, (r) => codes(r.responses)],
  ["CreatePartitions", CreatePartitionsApi, 2, { topics: [{ name: "t", count: 3, assignments: null }], timeoutMs: 5000, validateOnly: false }, (r) => codes(r.results)],
  ["IncrementalAlterConfigs", IncrementalAlterConfigsApi, 1, { resources: [{ resourceType: 2, resourceName: "t", configs: [{ name: "retention.ms", configOperation: 0, value: "1000" }] }], validateOnly: false }, (r) => codes(r.responses)],
  ["AlterConfigs", AlterConfigsApi, 1, { resources: [{ resourceType: 2, resourceName: "t", configs: [{ name: "retention.ms", value: "1000" }] }], validateOnly: false }, (r) => codes(r.responses)],
  ["DescribeConfigs", DescribeConfigsApi, 1, { resources: [{ resourceType: 2, resourceName: "t", configurationKeys: null }], includeSynonyms: false }, (r) => codes(r.results)],
  ["Metadata (auto-create)", MetadataApi, 9, { topics: [{ name: "auto1" }], allowAutoTopicCreation: true, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }, (r) => codes(r.topics)],
  ["FindCoordinator", FindCoordinatorApi, 2, { key: "g", keyType: 0 }, (r) => [r.errorCode as number]],
  ["OffsetCommit v0", OffsetCommitApi, 0, { groupId: "g", topics: [{ name: "t", partitions: [{ partitionIndex: 0, committedOffset: 1n, committedMetadata: "" }] }] }, (r) => (r.topics as { partitions: unknown }[]).flatMap((t) => codes(t.partitions))],
  ["OffsetFetch v0", OffsetFetchApi, 0, { groupId: "g", topics: [{ name: "t", partitionIndexes: [0] }] }, (r) => (r.topics as { partitions: unknown }[]).flatMap((t) => codes(t.partitions))],
];
const expected: Record<string, number> = {
  "Metadata (auto-create)": ErrorCode.LEADER_NOT_AVAILABLE,
  FindCoordinator: ErrorCode.COORDINATOR_NOT_AVAILABLE,
};

test("ZooKeeper out of reach: admin requests are answered with retriable errors, never a closed connection, and served again once it is back", { skip: skipUnlessZooKeeper(), timeout: 180_000 }, async () => {
  const zk = await startZooKeeper();
  const proxy = await startProxy(zk.port);
  const b = await startBroker({ "zookeeper.connect": proxy.connectString, "zookeeper.session.timeout.ms": "6000", "offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "1" });
  try {
    const c = await WireClient.connect(b.port);
    assert.equal((await createTopic(c, "t", { numPartitions: 1 })).errorCode, 0);
    c.close();
    proxy.block();
    const answers = await Promise.all(cases.map(async ([name, api, v, body, errors]) => {
      const cc = await WireClient.connect(b.port);
      try {
        return [name, errors(await cc.request(api, v, body, 60_000))] as const;
      } catch (e) {
        return [name, String(e)] as const;
      } finally {
        cc.close();
      }
    }));
    assert.deepEqual(answers, cases.map(([name, , , , ]) => [name, [expected[name] ?? T]]));
    proxy.unblock();
    // Back: the broker's registry session is renewed and the same requests succeed.
    const deadline = Date.now() + 60_000;
    let created = -1;
    while (created !== 0 && Date.now() < deadline) {
      const cc = await WireClient.connect(b.port);
      created = await createTopic(cc, "after", { numPartitions: 1 }).then((r) => r.errorCode, () => -1);
      cc.close();
      if (created !== 0) await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(created, 0, "a topic is created once ZooKeeper is reachable again");
  } finally {
    await b.stop();
    await proxy.close();
    await zk.destroy();
  }
});
