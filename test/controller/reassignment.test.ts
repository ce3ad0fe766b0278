// Partition reassignment (AlterPartitionReassignments, ListPartitionReassignments and
// /admin/reassign_partitions) and CreatePartitions, on the embedded registry with a recording
// channel: the move waits for the new replicas to join the ISR, then drops the old ones.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type TopicMetadataView, ZkTopicAdmin } from "../../src/controller/mod.ts";
import { DeleteTopicsTopicZNode, ReassignPartitionsZNode } from "../../src/registry/mod.ts";
import { ErrorCode } from "../../src/util/mod.ts";
import { testPlatform } from "../registry/helpers.ts";
import { eventually, type Harness, withHarness } from "./harness.ts";

const noMetadata: TopicMetadataView = {
  getTopic: () => undefined,
  waitUntil: () => Promise.resolve(false),
};

async function topicAdmin(h: Harness): Promise<ZkTopicAdmin> {
  return new ZkTopicAdmin(await testPlatform(), h.admin, noMetadata);
}

test("a reassignment adds the new replicas, waits for them to join the ISR, then removes the old ones", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2]]);
    h.channel.clear();
    const [r] = await h.controller.alterPartitionReassignments([{ topic: "t", partition: 0, replicas: [2, 3] }]);
    assert.deepEqual([r.errorCode, r.errorMessage], [ErrorCode.NONE, null]);
    // Phase A: RS = [2, 3, 1] with 3 adding and 1 removing, in the topic znode and the state.
    const a = (await h.assignment("t")).get(0)!;
    assert.deepEqual(a, { replicas: [2, 3, 1], addingReplicas: [3], removingReplicas: [1] });
    const s = await h.state("t", 0);
    assert.deepEqual([s.leader, s.isr, s.leaderEpoch], [1, [1, 2], 1]);
    const to3 = h.channel.leaderAndIsrTo(3, "t", 0);
    assert.equal(to3.length, 1, "the new replica hears of the partition");
    assert.deepEqual([to3[0].replicas, to3[0].addingReplicas, to3[0].removingReplicas], [[2, 3, 1], [3], [1]]);
    assert.deepEqual(h.controller.listPartitionReassignments(null), [{ topic: "t", partition: 0, replicas: [2, 3, 1], addingReplicas: [3], removingReplicas: [1] }]);
    assert.deepEqual(h.controller.listPartitionReassignments([{ topic: "t", partition: 1 }]), []);
    // CreatePartitions refuses while a move runs.
    const refused = await (await topicAdmin(h)).createPartitions("t", 2, null, false, 0);
    assert.equal(refused.errorCode, ErrorCode.REASSIGNMENT_IN_PROGRESS);
    // The leader adds 3 to the ISR: the move completes. 1 (the leader) is not in the target: 2 leads.
    await h.leaderWritesIsr("t", 0, [1, 2, 3]);
    const done = await h.waitState("t", 0, (s) => s.leader !== 1, "the move completed");
    assert.deepEqual([done.leader, done.isr], [2, [2, 3]]);
    await eventually(async () => (await h.assignment("t")).get(0)!.addingReplicas.length === 0, "assignment written");
    assert.deepEqual((await h.assignment("t")).get(0), { replicas: [2, 3], addingReplicas: [], removingReplicas: [] });
    assert.deepEqual(h.channel.stopReplicasTo(1).map((x) => [x.partitions, x.deletePartitions]), [[[{ topic: "t", partition: 0 }], true]]);
    assert.deepEqual(h.channel.leaderAndIsrTo(3, "t", 0).at(-1)!.replicas, [2, 3]);
    assert.deepEqual(h.controller.listPartitionReassignments(null), []);
    await eventually(() => h.channel.sent.some((x) => x.kind === "updateMetadata" && x.topics.some((t) => t.partitions[0].replicas.length === 2)), "metadata with the new replicas");
  });
});

test("reassignment requests are validated as Kafka validates them", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2]]);
    const rs = await h.controller.alterPartitionReassignments([
      { topic: "t", partition: 0, replicas: [] },
      { topic: "t", partition: 0, replicas: [1, 1] },
      { topic: "t", partition: 0, replicas: [1, -2] },
      { topic: "t", partition: 0, replicas: [1, 9] },
      { topic: "t", partition: 5, replicas: [1] },
      { topic: "t", partition: 0, replicas: null },
    ]);
    assert.deepEqual(rs.map((r) => r.errorCode), [
      ErrorCode.INVALID_REPLICA_ASSIGNMENT,
      ErrorCode.INVALID_REPLICA_ASSIGNMENT,
      ErrorCode.INVALID_REPLICA_ASSIGNMENT,
      ErrorCode.INVALID_REPLICA_ASSIGNMENT,
      ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      ErrorCode.NO_REASSIGNMENT_IN_PROGRESS,
    ]);
    assert.match(rs[3].errorMessage!, /not alive/);
    // A target that is the current set reordered is not a move: it completes at once.
    const [r] = await h.controller.alterPartitionReassignments([{ topic: "t", partition: 0, replicas: [2, 1] }]);
    assert.equal(r.errorCode, ErrorCode.NONE);
    assert.deepEqual((await h.assignment("t")).get(0), { replicas: [2, 1], addingReplicas: [], removingReplicas: [] });
    assert.deepEqual(h.controller.listPartitionReassignments(null), []);
  });
});

test("cancelling a reassignment moves back to the origin replicas and drops the added ones", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2]]);
    await h.controller.alterPartitionReassignments([{ topic: "t", partition: 0, replicas: [1, 3] }]);
    assert.deepEqual((await h.assignment("t")).get(0), { replicas: [1, 3, 2], addingReplicas: [3], removingReplicas: [2] });
    const [r] = await h.controller.alterPartitionReassignments([{ topic: "t", partition: 0, replicas: null }]);
    assert.equal(r.errorCode, ErrorCode.NONE);
    assert.deepEqual((await h.assignment("t")).get(0), { replicas: [1, 2], addingReplicas: [], removingReplicas: [] });
    assert.deepEqual(h.channel.stopReplicasTo(3).map((x) => x.deletePartitions), [true]);
    const s = await h.state("t", 0);
    assert.deepEqual([s.leader, s.isr], [1, [1, 2]]);
    assert.deepEqual(h.controller.listPartitionReassignments(null), []);
  });
});

test("a new target replaces a move in progress; replicas it no longer adds are dropped", async () => {
  await withHarness({ brokers: [0, 1, 2, 3, 4] }, async (h) => {
    await h.createTopic("t", [[1, 2]]);
    await h.controller.alterPartitionReassignments([{ topic: "t", partition: 0, replicas: [1, 3] }]);
    await h.leaderWritesIsr("t", 0, [1, 2]); // unrelated ISR write: the move keeps waiting
    await h.controller.alterPartitionReassignments([{ topic: "t", partition: 0, replicas: [1, 4] }]);
    assert.deepEqual((await h.assignment("t")).get(0), { replicas: [1, 4, 2], addingReplicas: [4], removingReplicas: [2] });
    assert.deepEqual(h.channel.stopReplicasTo(3).map((x) => x.deletePartitions), [true]);
    await h.leaderWritesIsr("t", 0, [1, 2, 4]);
    await eventually(async () => (await h.assignment("t")).get(0)!.replicas.length === 2, "the move completed");
    const s = await h.state("t", 0);
    assert.deepEqual([s.leader, s.isr], [1, [1, 4]]);
  });
});

test("a new controller resumes a move from the topic znode and completes it", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2]]);
    await h.controller.alterPartitionReassignments([{ topic: "t", partition: 0, replicas: [3, 2] }]);
    await h.controller.shutdown();
    const next = h.newController(h.sessions.get(2)!, 2);
    await next.startup();
    try {
      assert.ok(next.isActive);
      assert.deepEqual(next.listPartitionReassignments(null).map((r) => [r.replicas, r.addingReplicas, r.removingReplicas]), [[[3, 2, 1], [3], [1]]]);
      await h.leaderWritesIsr("t", 0, [1, 2, 3]);
      const s = await h.waitState("t", 0, (s) => s.leader === 3, "3 (first of the target) leads");
      assert.deepEqual(s.isr, [2, 3]);
      await eventually(() => next.listPartitionReassignments(null).length === 0, "the move completed");
      assert.deepEqual((await h.assignment("t")).get(0)!.replicas, [3, 2]);
    } finally {
      await next.shutdown();
    }
  });
});

test("/admin/reassign_partitions: valid moves start, invalid ones are dropped, the znode goes once all finish", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2], [2, 3]]);
    await h.admin.create(ReassignPartitionsZNode.path, ReassignPartitionsZNode.encode([
      { topic: "t", partition: 0, replicas: [2, 3] },
      { topic: "t", partition: 1, replicas: [2, 9] },
      { topic: "nope", partition: 0, replicas: [1] },
    ]));
    await eventually(() => h.controller.listPartitionReassignments(null).length === 1, "the valid move started");
    await eventually(async () => {
      const node = await h.admin.getData(ReassignPartitionsZNode.path).catch(() => null);
      return node !== null && ReassignPartitionsZNode.decode(node.data)!.length === 1;
    }, "the znode keeps only the running move");
    await h.leaderWritesIsr("t", 0, [1, 2, 3]);
    await eventually(async () => (await h.admin.exists(ReassignPartitionsZNode.path)) === null, "znode deleted");
    assert.deepEqual((await h.assignment("t")).get(0)!.replicas, [2, 3]);
    assert.deepEqual((await h.assignment("t")).get(1)!.replicas, [2, 3]);
  });
});

test("CreatePartitions writes the new assignment; the controller creates the partitions", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2], [2, 3]]);
    const admin = await topicAdmin(h);
    h.channel.clear();
    assert.deepEqual(await admin.createPartitions("t", 4, null, false, 0), { errorCode: ErrorCode.NONE, errorMessage: null });
    const a = await h.assignment("t");
    assert.equal(a.size, 4);
    // Kafka continues from partition 0's first replica (broker 1, index 1 of [0,1,2,3]).
    assert.deepEqual([a.get(2)!.replicas, a.get(3)!.replicas], [[3, 1], [0, 2]]);
    const s3 = await h.waitState("t", 3, () => true);
    assert.deepEqual([s3.leader, s3.isr, s3.leaderEpoch], [0, [0, 2], 0]);
    await eventually(() => h.channel.leaderAndIsrTo(2, "t", 3).length > 0, "LeaderAndIsr for the new partition");
    assert.equal(h.channel.leaderAndIsrTo(2, "t", 3)[0].isNew, true);
    assert.equal(h.channel.leaderAndIsrTo(2, "t", 1).length, 0, "old partitions are not sent again");
    await eventually(() => h.channel.sent.some((x) => x.kind === "updateMetadata" && x.topics.some((t) => t.partitions.length === 4)), "metadata with 4 partitions");
    // An explicit assignment.
    assert.equal((await admin.createPartitions("t", 5, [[3, 1]], false, 0)).errorCode, ErrorCode.NONE);
    assert.deepEqual((await h.assignment("t")).get(4)!.replicas, [3, 1]);
    await h.waitState("t", 4, (s) => s.leader === 3);
  });
});

test("CreatePartitions validation: counts, assignments, unknown and deleting topics, validateOnly", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2], [2, 3]]);
    const admin = await topicAdmin(h);
    const code = async (count: number, assignment: number[][] | null, validateOnly = false, topic = "t") =>
      (await admin.createPartitions(topic, count, assignment, validateOnly, 0)).errorCode;
    assert.equal(await code(1, null), ErrorCode.INVALID_PARTITIONS);
    assert.equal(await code(2, null), ErrorCode.INVALID_PARTITIONS);
    assert.equal(await code(3, null, false, "nope"), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(await code(3, [[1, 9]]), ErrorCode.INVALID_REPLICA_ASSIGNMENT);
    assert.equal(await code(4, [[1, 2]]), ErrorCode.INVALID_REPLICA_ASSIGNMENT, "two new partitions, one assignment");
    assert.equal(await code(3, [[1]]), ErrorCode.INVALID_REPLICA_ASSIGNMENT, "inconsistent replication factor");
    assert.equal(await code(3, [[1, 1]]), ErrorCode.INVALID_REPLICA_ASSIGNMENT, "duplicate broker");
    assert.equal(await code(3, [[]]), ErrorCode.INVALID_REPLICA_ASSIGNMENT);
    assert.equal(await code(3, null, true), ErrorCode.NONE);
    assert.equal((await h.assignment("t")).size, 2, "validateOnly wrote nothing");
    assert.equal(await code(3, [[3, 1]], true), ErrorCode.NONE);
    await h.admin.create(DeleteTopicsTopicZNode.path("t"), new Uint8Array(0));
    assert.equal(await code(3, null), ErrorCode.INVALID_TOPIC_EXCEPTION);
    // The deletion's last step is the /admin/delete_topics entry (its partition states go first).
    await eventually(async () => (await h.admin.exists(DeleteTopicsTopicZNode.path("t"))) === null, "topic deleted");
    assert.equal(await code(3, null), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });
});
