// Controlled shutdown, ISR change notifications, preferred and unclean elections on request,
// the automatic leader rebalance, and /admin/preferred_replica_election, on the embedded
// registry with a recording channel.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  IsrChangeNotificationZNode,
  PreferredReplicaElectionZNode,
  TopicPartitionStateZNode,
} from "../../src/registry/mod.ts";
import { ErrorCode } from "../../src/util/mod.ts";
import { eventually, type HeldTimersClock, withHarness } from "./harness.ts";

test("controlled shutdown moves the broker's leaderships, drops it from ISRs, stops its fetches", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2, 3], [2, 1, 3], [1]]);
    h.channel.clear();
    const r = await h.controller.controlledShutdown(1, await h.brokerEpoch(1));
    assert.equal(r.errorCode, ErrorCode.NONE);
    // A partition with one replica cannot move and is not counted (Kafka's rule): it goes
    // offline when the broker stops.
    assert.deepEqual(r.remaining, []);
    assert.equal((await h.state("t", 2)).leader, 1);
    const p0 = await h.state("t", 0);
    assert.deepEqual([p0.leader, p0.isr, p0.leaderEpoch], [2, [2, 3], 1]);
    const p1 = await h.state("t", 1);
    assert.deepEqual([p1.leader, p1.isr, p1.leaderEpoch], [2, [2, 3], 1]);
    // Broker 1 hears it now follows 2 for partition 0, and stops fetching partition 1.
    assert.equal(h.channel.leaderAndIsrTo(1, "t", 0).at(-1)!.leader, 2);
    assert.deepEqual(h.channel.stopReplicasTo(1).map((s) => [s.partitions, s.deletePartitions]), [[[{ topic: "t", partition: 1 }], false]]);
    assert.equal(h.channel.leaderAndIsrTo(1, "t", 1).length, 0, "partition 1's shrink goes to the others only");
    assert.ok(h.channel.leaderAndIsrTo(3, "t", 1).length > 0);
    // A shutting-down broker is no leader candidate: the preferred election of p0 fails.
    await h.leaderWritesIsr("t", 0, [2, 3, 1]);
    await eventually(() => h.channel.sent.some((s) => s.kind === "updateMetadata" && s.topics.some((t) => t.partitions[0].isr.length === 3)), "ISR change seen");
    const [e] = await h.controller.electLeaders(0, [{ topic: "t", partition: 0 }]);
    assert.equal(e.errorCode, ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE);
    // Once it is gone and back, it is a candidate again.
    await h.killBroker(1);
    await h.startBroker(1);
    await h.brokerSeen(1);
    await h.leaderWritesIsr("t", 0, [2, 3, 1]);
    await h.waitState("t", 0, (s) => s.isr.length === 3);
    await eventually(async () => (await h.controller.electLeaders(0, [{ topic: "t", partition: 0 }]))[0].errorCode === ErrorCode.NONE, "preferred election");
  });
});

test("controlled shutdown wants the broker's registration exactly (older, newer and -1 refused) and refuses unknown brokers", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2]]);
    const epoch = await h.brokerEpoch(1);
    // -1 is what v1 (no broker epoch field) and a sender that cannot name the registration carry.
    for (const e of [epoch - 1n, epoch + 1n, -1n]) {
      assert.equal((await h.controller.controlledShutdown(1, e)).errorCode, ErrorCode.STALE_BROKER_EPOCH, `epoch ${e}`);
    }
    assert.equal((await h.state("t", 0)).leader, 1, "nothing moved");
    assert.equal((await h.controller.controlledShutdown(9, -1n)).errorCode, ErrorCode.BROKER_NOT_AVAILABLE);
    const r = await h.controller.controlledShutdown(1, epoch);
    assert.deepEqual([r.errorCode, r.remaining], [ErrorCode.NONE, []]);
    assert.equal((await h.state("t", 0)).leader, 2);
  });
});

test("controlled shutdown of the only ISR member leaves the partition led by it (remaining)", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2]]);
    await h.leaderWritesIsr("t", 0, [1]);
    await eventually(() => h.channel.sent.some((s) => s.kind === "updateMetadata" && s.topics.some((t) => t.partitions[0].isr.length === 1)), "ISR change seen");
    const r = await h.controller.controlledShutdown(1, await h.brokerEpoch(1));
    assert.deepEqual(r.remaining, [{ topic: "t", partition: 0 }]);
    assert.equal((await h.state("t", 0)).leader, 1);
  });
});

test("ISR change notifications: the states are re-read, every broker hears them, the notices are deleted", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2, 3], [2, 3, 1]]);
    h.channel.clear();
    await h.leaderWritesIsr("t", 0, [1, 2]);
    await h.leaderWritesIsr("t", 1, [2, 3]);
    await eventually(() => h.channel.sent.filter((s) => s.kind === "updateMetadata").some((s) => {
      const t = s.topics.find((x) => x.name === "t");
      return t !== undefined && t.partitions[0].isr.length === 2 && t.partitions[1].isr.length === 2;
    }), "metadata with both ISRs");
    const um = h.channel.sent.filter((s) => s.kind === "updateMetadata").at(-1)!;
    assert.equal(um.topics[0].partitions[0].partitionEpoch, 1, "the leader's write's version");
    await eventually(async () => (await h.admin.getChildren(IsrChangeNotificationZNode.path)).length === 0, "notices deleted");
    assert.equal(h.channel.sent.filter((s) => s.kind === "leaderAndIsr").length, 0, "no LeaderAndIsr for an ISR change");
    // The controller's next write builds on the leader's ISR (no conflict).
    await h.killBroker(1);
    const s = await h.waitState("t", 0, (s) => s.leader === 2);
    assert.deepEqual(s.isr, [2]);
  });
});

test("ElectLeaders: preferred election and its errors, unclean election on request", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2, 3], [2, 3]]);
    await h.killBroker(1);
    await h.waitState("t", 0, (s) => s.leader === 2);
    await h.startBroker(1);
    await h.brokerSeen(1);
    const tp0 = { topic: "t", partition: 0 };
    let [r] = await h.controller.electLeaders(0, [tp0]);
    assert.equal(r.errorCode, ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, "1 is not in the ISR yet");
    await h.leaderWritesIsr("t", 0, [2, 3, 1]);
    await eventually(async () => (await h.controller.electLeaders(0, [tp0]))[0].errorCode === ErrorCode.NONE, "preferred election");
    const s = await h.state("t", 0);
    assert.deepEqual([s.leader, s.isr, s.leaderEpoch], [1, [2, 3, 1], 2]);
    assert.equal(h.channel.leaderAndIsrTo(3, "t", 0).at(-1)!.leader, 1);
    [r] = await h.controller.electLeaders(0, [tp0]);
    assert.equal(r.errorCode, ErrorCode.ELECTION_NOT_NEEDED);
    const unknown = await h.controller.electLeaders(0, [{ topic: "t", partition: 7 }, { topic: "nope", partition: 0 }]);
    assert.deepEqual(unknown.map((x) => x.errorCode), [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    // null: every partition; none needs an election.
    const all = await h.controller.electLeaders(0, null);
    assert.deepEqual(all.map((x) => [x.partition, x.errorCode]), [[0, ErrorCode.ELECTION_NOT_NEEDED], [1, ErrorCode.ELECTION_NOT_NEEDED]]);
    // Unclean on request: only for a partition without a live leader.
    [r] = await h.controller.electLeaders(1, [{ topic: "t", partition: 1 }]);
    assert.equal(r.errorCode, ErrorCode.ELECTION_NOT_NEEDED);
    await h.killBroker(2);
    await h.waitState("t", 1, (s) => s.leader === 3);
    await h.killBroker(3);
    await h.waitState("t", 1, (s) => s.leader === -1);
    [r] = await h.controller.electLeaders(1, [{ topic: "t", partition: 1 }]);
    assert.equal(r.errorCode, ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE);
    await h.startBroker(2);
    await h.brokerSeen(2);
    assert.equal((await h.state("t", 1)).leader, -1, "2 is outside the ISR [3]: no clean leader");
    [r] = await h.controller.electLeaders(1, [{ topic: "t", partition: 1 }]);
    assert.equal(r.errorCode, ErrorCode.NONE);
    const s1 = await h.state("t", 1);
    assert.deepEqual([s1.leader, s1.isr], [2, [2]]);
  });
});

test("ElectLeaders: a preferred replica the leader just put back in the ISR is elected before the ISR change notification arrives", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2, 3]]);
    await h.killBroker(1);
    await h.waitState("t", 0, (s) => s.leader === 2);
    await h.startBroker(1);
    await h.brokerSeen(1);
    // The leader has written 1 back into the ISR; its notification has not reached the controller
    // (none is written here), so the controller's cached ISR is still [2, 3]. Kafka elects from the
    // state it reads from ZooKeeper, and so must strand.
    await h.leaderWritesIsr("t", 0, [2, 3, 1], false);
    const [r] = await h.controller.electLeaders(0, [{ topic: "t", partition: 0 }]);
    assert.equal(r.errorCode, ErrorCode.NONE, r.errorMessage ?? "");
    const s = await h.state("t", 0);
    assert.deepEqual([s.leader, s.isr], [1, [2, 3, 1]]);
  });
});

test("a controller that is not active answers NOT_CONTROLLER", async () => {
  await withHarness({}, async (h) => {
    const other = h.newController(h.sessions.get(1)!, 1);
    await other.startup();
    try {
      assert.equal(other.isActive, false);
      assert.deepEqual((await other.electLeaders(0, [{ topic: "t", partition: 0 }])).map((r) => r.errorCode), [ErrorCode.NOT_CONTROLLER]);
      assert.equal((await other.controlledShutdown(2, -1n)).errorCode, ErrorCode.NOT_CONTROLLER);
      assert.deepEqual(
        (await other.alterPartitionReassignments([{ topic: "t", partition: 0, replicas: [1] }])).map((r) => r.errorCode),
        [ErrorCode.NOT_CONTROLLER],
      );
      assert.deepEqual(other.listPartitionReassignments(null), []);
    } finally {
      await other.shutdown();
    }
  });
});

test("auto leader rebalance: past leader.imbalance.per.broker.percentage, leadership returns to the preferred replicas", async () => {
  await withHarness({ clock: "manual", controller: { autoLeaderRebalanceEnable: true, leaderImbalanceCheckIntervalMs: 1000, leaderImbalancePerBrokerPercentage: 10 } }, async (h) => {
    const clock = h.clock as HeldTimersClock;
    await h.createTopic("t", [[1, 2], [1, 2], [2, 1]]);
    assert.deepEqual(clock.fire(), [5000], "the first check 5 s after the election");
    await h.killBroker(1);
    await h.waitState("t", 0, (s) => s.leader === 2);
    await h.waitState("t", 1, (s) => s.leader === 2);
    await h.startBroker(1);
    await h.brokerSeen(1);
    await h.leaderWritesIsr("t", 0, [2, 1]);
    await h.leaderWritesIsr("t", 1, [2, 1]);
    await eventually(() => h.channel.sent.some((s) => s.kind === "updateMetadata" && s.topics.some((t) => t.partitions[1].isr.length === 2)), "ISR changes seen");
    await eventually(() => clock.fire().length > 0, "the next check scheduled");
    await h.waitState("t", 0, (s) => s.leader === 1, "p0 back on 1");
    await h.waitState("t", 1, (s) => s.leader === 1, "p1 back on 1");
    assert.equal((await h.state("t", 2)).leader, 2);
  });
});

test("/admin/preferred_replica_election is carried out and deleted", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2]]);
    await h.killBroker(1);
    await h.waitState("t", 0, (s) => s.leader === 2);
    await h.startBroker(1);
    await h.brokerSeen(1);
    await h.leaderWritesIsr("t", 0, [2, 1]);
    await eventually(() => h.channel.sent.some((s) => s.kind === "updateMetadata" && s.topics.some((t) => t.partitions[0].isr.length === 2)), "ISR change seen");
    await h.admin.create(PreferredReplicaElectionZNode.path, PreferredReplicaElectionZNode.encode([{ topic: "t", partition: 0 }]));
    await h.waitState("t", 0, (s) => s.leader === 1, "preferred leader 1");
    await eventually(async () => (await h.admin.exists(PreferredReplicaElectionZNode.path)) === null, "request deleted");
    assert.ok((await h.admin.exists(TopicPartitionStateZNode.path("t", 0))) !== null);
  });
});
