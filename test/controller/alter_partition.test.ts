// AlterPartition (56) on the controller (src/controller/alter_partition.ts), on the embedded
// registry with a recording channel: a leader's proposal is written to the state znode with the
// controller epoch, answered with the new partition epoch, and told to every broker by
// UpdateMetadata (no LeaderAndIsr: the leader epoch does not change); Kafka 3.8's codes for a
// member that is not live (v0-1 OPERATION_NOT_ATTEMPTED, v2+ INELIGIBLE_REPLICA), an epoch newer
// than the controller's (NOT_CONTROLLER), a write the controller had not read (INVALID_UPDATE_VERSION,
// then the controller has read it and the next proposal passes); a reassignment waiting for a new
// replica completes when AlterPartition brings it into the ISR.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AlterPartitionItem } from "../../src/controller/mod.ts";
import { ErrorCode } from "../../src/util/mod.ts";
import { eventually, type Harness, withHarness } from "./harness.ts";

type Item = AlterPartitionItem & { topicId: Uint8Array | null };

async function propose(h: Harness, leader: number, topic: string, isr: number[], opts: { version?: number; partitionEpoch?: number; leaderEpoch?: number } = {}) {
  const s = await h.state(topic, 0);
  const item: Item = {
    topic,
    topicId: null,
    partition: 0,
    leaderEpoch: opts.leaderEpoch ?? s.leaderEpoch,
    newIsr: isr,
    newIsrEpochs: null,
    partitionEpoch: opts.partitionEpoch ?? s.partitionEpoch,
  };
  const r = await h.controller.alterPartition(leader, await h.brokerEpoch(leader), opts.version ?? 2, [item]);
  assert.equal(r.errorCode, ErrorCode.NONE);
  return r.partitions[0];
}

test("AlterPartition: the controller writes the proposed ISR, answers the new partition epoch and tells every broker", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2, 3]]);
    const before = await h.state("t", 0);
    assert.deepEqual([before.leader, before.isr], [1, [1, 2, 3]]);
    h.channel.clear();
    const r = await propose(h, 1, "t", [1, 2]);
    assert.equal(r.errorCode, ErrorCode.NONE);
    const after = await h.state("t", 0);
    assert.deepEqual([after.isr, after.leaderEpoch, after.partitionEpoch, after.controllerEpoch], [[1, 2], before.leaderEpoch, before.partitionEpoch + 1, await h.controllerEpoch()]);
    assert.deepEqual([r.state!.isr, r.state!.partitionEpoch], [[1, 2], after.partitionEpoch]);
    await eventually(() => h.channel.sent.filter((x) => x.kind === "updateMetadata").length === 4, "UpdateMetadata to the four brokers");
    assert.ok(h.channel.sent.every((x) => x.kind === "updateMetadata"), "no LeaderAndIsr: the leader epoch stays");
    assert.deepEqual(h.channel.sent[0].topics[0].partitions[0].isr, [1, 2]);
    // A wrong broker epoch is refused for the whole request; so is a broker that is not registered.
    const stale = await h.controller.alterPartition(1, (await h.brokerEpoch(1)) + 1n, 2, []);
    assert.equal(stale.errorCode, ErrorCode.STALE_BROKER_EPOCH);
    assert.equal((await h.controller.alterPartition(9, 5n, 2, [])).errorCode, ErrorCode.STALE_BROKER_EPOCH);
  });
});

test("AlterPartition: a member that is not live is OPERATION_NOT_ATTEMPTED (v0-1) or INELIGIBLE_REPLICA (v2+); epochs newer than the controller's NOT_CONTROLLER", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2, 3]]);
    assert.equal((await propose(h, 1, "t", [1, 2])).errorCode, ErrorCode.NONE);
    await h.killBroker(3);
    await eventually(() => !h.channel.brokers.has(3), "the controller saw broker 3 go");
    assert.equal((await propose(h, 1, "t", [1, 2, 3], { version: 1 })).errorCode, ErrorCode.OPERATION_NOT_ATTEMPTED);
    assert.equal((await propose(h, 1, "t", [1, 2, 3], { version: 2 })).errorCode, ErrorCode.INELIGIBLE_REPLICA);
    const s = await h.state("t", 0);
    assert.equal((await propose(h, 1, "t", [1], { partitionEpoch: s.partitionEpoch + 1 })).errorCode, ErrorCode.NOT_CONTROLLER);
    assert.equal((await propose(h, 1, "t", [1], { leaderEpoch: s.leaderEpoch + 1 })).errorCode, ErrorCode.NOT_CONTROLLER);
    assert.deepEqual((await h.state("t", 0)).isr, [1, 2], "nothing refused was written");
  });
});

test("AlterPartition: a state write the controller had not read answers INVALID_UPDATE_VERSION, then the controller has read it", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2, 3]]);
    const seen = await h.state("t", 0);
    // An old-style leader (inter.broker.protocol.version < 2.7) writes without telling the controller.
    await h.leaderWritesIsr("t", 0, [1, 3], false);
    const r = await propose(h, 1, "t", [1, 2], { partitionEpoch: seen.partitionEpoch });
    assert.equal(r.errorCode, ErrorCode.INVALID_UPDATE_VERSION);
    assert.deepEqual((await h.state("t", 0)).isr, [1, 3]);
    const again = await propose(h, 1, "t", [1, 3, 2]);
    assert.equal(again.errorCode, ErrorCode.NONE);
    assert.deepEqual((await h.state("t", 0)).isr, [1, 3, 2]);
  });
});

test("AlterPartition: a reassignment completes once the leader brings the new replica into the ISR", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2]]);
    const [r] = await h.controller.alterPartitionReassignments([{ topic: "t", partition: 0, replicas: [1, 3] }]);
    assert.equal(r.errorCode, ErrorCode.NONE);
    await eventually(async () => (await h.assignment("t")).get(0)!.addingReplicas.length === 1, "the move started");
    assert.equal((await propose(h, 1, "t", [1, 2, 3])).errorCode, ErrorCode.NONE);
    await eventually(async () => (await h.assignment("t")).get(0)!.addingReplicas.length === 0, "the move completed");
    assert.deepEqual((await h.assignment("t")).get(0)!.replicas, [1, 3]);
    assert.deepEqual((await h.waitState("t", 0, (s) => !s.isr.includes(2))).isr, [1, 3]);
  });
});
