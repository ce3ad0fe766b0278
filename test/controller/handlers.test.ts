// The controller's request handlers (CreatePartitions 37, ElectLeaders 43,
// AlterPartitionReassignments 45, ListPartitionReassignments 46), requests and answers through
// the codec, against a real controller and topic admin on the embedded registry.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createPartitionsHandler } from "../../src/broker/api/37_create_partitions.ts";
import { electLeadersHandler } from "../../src/broker/api/43_elect_leaders.ts";
import { alterPartitionReassignmentsHandler } from "../../src/broker/api/45_alter_partition_reassignments.ts";
import { listPartitionReassignmentsHandler } from "../../src/broker/api/46_list_partition_reassignments.ts";
import type { ApiHandler } from "../../src/broker/dispatch.ts";
import type { BrokerServices } from "../../src/broker/services.ts";
import { type KafkaController, ZkTopicAdmin } from "../../src/controller/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { testPlatform } from "../registry/helpers.ts";
import { eventually, type Harness, withHarness } from "./harness.ts";
import { callHandler } from "../helpers/handler_call.ts";

const call = (h: ApiHandler<BrokerServices>, s: BrokerServices, version: number, body: Struct) => callHandler(h, s, version, body, { conn: false });


async function services(h: Harness, controller: KafkaController = h.controller): Promise<BrokerServices> {
  const topicAdmin = new ZkTopicAdmin(await testPlatform(), h.admin, { getTopic: () => undefined, waitUntil: () => Promise.resolve(true) });
  return { controller, topicAdmin, authorizer: null } as unknown as BrokerServices;
}

test("CreatePartitions (37): results per topic, duplicates refused, validate_only, every version", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2]]);
    const s = await services(h);
    for (const version of [0, 1, 2, 3]) {
      const r = await call(createPartitionsHandler, s, version, {
        topics: [
          { name: "t", count: 2 + version, assignments: null },
          { name: "nope", count: 3, assignments: null },
          { name: "d", count: 3, assignments: null },
          { name: "d", count: 3, assignments: null },
        ],
        timeoutMs: 0,
        validateOnly: false,
      });
      assert.deepEqual((r.results as Struct[]).map((x) => [x.name, x.errorCode]), [
        ["t", ErrorCode.NONE],
        ["nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
        ["d", ErrorCode.INVALID_REQUEST],
        ["d", ErrorCode.INVALID_REQUEST],
      ]);
      assert.equal((r.results as Struct[])[0].errorMessage, null);
    }
    assert.equal((await h.assignment("t")).size, 5);
    const v = await call(createPartitionsHandler, s, 2, { topics: [{ name: "t", count: 6, assignments: [{ brokerIds: [3, 1] }] }], timeoutMs: 0, validateOnly: true });
    assert.equal((v.results as Struct[])[0].errorCode, ErrorCode.NONE);
    assert.equal((await h.assignment("t")).size, 5);
    await h.waitState("t", 4, () => true);
  });
});

test("ElectLeaders (43): v0 preferred, v1+ election type, null lists only elections done, NOT_CONTROLLER elsewhere", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2], [2, 1]]);
    await h.killBroker(1);
    await h.waitState("t", 0, (x) => x.leader === 2);
    await h.startBroker(1);
    await h.brokerSeen(1);
    await h.leaderWritesIsr("t", 0, [2, 1]);
    await eventually(() => h.channel.sent.some((x) => x.kind === "updateMetadata" && x.topics.some((t) => t.partitions[0].isr.length === 2)), "ISR change seen");
    const s = await services(h);
    const none = await call(electLeadersHandler, s, 1, { electionType: 0, topicPartitions: [{ topic: "t", partitions: [1, 9] }], timeoutMs: 1000 });
    assert.deepEqual(none.replicaElectionResults, [{
      topic: "t",
      partitionResult: [
        { partitionId: 1, errorCode: ErrorCode.ELECTION_NOT_NEEDED, errorMessage: "Leader election not needed for topic partition." },
        { partitionId: 9, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: "The partition does not exist." },
      ],
    }]);
    // All partitions (null), v0: p1 needs none and is left out; p0 goes back to 1.
    const all = await call(electLeadersHandler, s, 0, { topicPartitions: null, timeoutMs: 1000 });
    const results = (all.replicaElectionResults as Struct[]).flatMap((t) => t.partitionResult as Struct[]);
    assert.ok(results.every((x) => x.partitionId === 0 && x.errorCode === ErrorCode.NONE), JSON.stringify(results));
    await h.waitState("t", 0, (x) => x.leader === 1);
    const bad = await call(electLeadersHandler, s, 2, { electionType: 5, topicPartitions: null, timeoutMs: 1000 });
    assert.equal(bad.errorCode, ErrorCode.INVALID_REQUEST);
    const other = h.newController(h.sessions.get(2)!, 2);
    await other.startup();
    try {
      const r = await call(electLeadersHandler, await services(h, other), 2, { electionType: 1, topicPartitions: [{ topic: "t", partitions: [0] }], timeoutMs: 1 });
      assert.equal(((r.replicaElectionResults as Struct[])[0].partitionResult as Struct[])[0].errorCode, ErrorCode.NOT_CONTROLLER);
    } finally {
      await other.shutdown();
    }
  });
});

test("AlterPartitionReassignments (45) and ListPartitionReassignments (46)", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2], [2, 3]]);
    const s = await services(h);
    const alter = await call(alterPartitionReassignmentsHandler, s, 0, {
      timeoutMs: 1000,
      topics: [{ name: "t", partitions: [{ partitionIndex: 0, replicas: [2, 3] }, { partitionIndex: 1, replicas: null }] }],
    });
    assert.deepEqual([alter.errorCode, alter.errorMessage], [ErrorCode.NONE, null]);
    assert.deepEqual(alter.responses, [{
      name: "t",
      partitions: [
        { partitionIndex: 0, errorCode: ErrorCode.NONE, errorMessage: null },
        { partitionIndex: 1, errorCode: ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, errorMessage: "No partition reassignment is in progress for t-1." },
      ],
    }]);
    const list = await call(listPartitionReassignmentsHandler, s, 0, { timeoutMs: 1000, topics: null });
    assert.deepEqual(list.topics, [{ name: "t", partitions: [{ partitionIndex: 0, replicas: [2, 3, 1], addingReplicas: [3], removingReplicas: [1] }] }]);
    const some = await call(listPartitionReassignmentsHandler, s, 0, { timeoutMs: 1000, topics: [{ name: "t", partitionIndexes: [1] }] });
    assert.deepEqual(some.topics, []);
    const other = h.newController(h.sessions.get(2)!, 2);
    await other.startup();
    try {
      const o = await services(h, other);
      assert.equal((await call(alterPartitionReassignmentsHandler, o, 0, { timeoutMs: 1, topics: [] })).errorCode, ErrorCode.NOT_CONTROLLER);
      assert.equal((await call(listPartitionReassignmentsHandler, o, 0, { timeoutMs: 1, topics: null })).errorCode, ErrorCode.NOT_CONTROLLER);
    } finally {
      await other.shutdown();
    }
  });
});
