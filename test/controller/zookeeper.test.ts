// The controller against a real ZooKeeper 3.8 (each test in a fresh chroot): elections when a
// broker's session ends, fencing of a deposed controller, a controller failover, and a
// reassignment completed by the leader's ISR change, with the same harness as the embedded tests.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ControllerEpochZNode } from "../../src/registry/mod.ts";
import { ErrorCode } from "../../src/util/mod.ts";
import { sharedZooKeeper, skipUnlessZooKeeper } from "../helpers/zookeeper.ts";
import { eventually, type HarnessOptions, withHarness } from "./harness.ts";

const skip = skipUnlessZooKeeper();
const zk = sharedZooKeeper();
let chroots = 0;

async function onZooKeeper(options: HarnessOptions = {}): Promise<HarnessOptions> {
  const server = await zk.get();
  return { ...options, zookeeper: `${server.connectString}/controller-${process.pid}-${++chroots}-${Date.now().toString(36)}` };
}

test("zookeeper: a dead leader's partitions move, a dead follower leaves the ISR, an all-dead ISR stays offline", { skip }, async () => {
  await withHarness(await onZooKeeper(), async (h) => {
    await h.createTopic("t", [[1, 2, 3], [2, 3]]);
    await h.killBroker(1);
    const s0 = await h.waitState("t", 0, (s) => s.leader === 2);
    assert.deepEqual([s0.isr, s0.leaderEpoch, s0.partitionEpoch], [[2, 3], 1, 1]);
    await h.killBroker(3);
    await h.waitState("t", 0, (s) => s.isr.length === 1);
    await h.waitState("t", 1, (s) => s.isr.length === 1);
    await h.killBroker(2);
    const off = await h.waitState("t", 1, (s) => s.leader === -1);
    assert.deepEqual(off.isr, [2]);
    await h.startBroker(2);
    await h.waitState("t", 1, (s) => s.leader === 2, "the last ISR member leads again");
    await h.waitState("t", 0, (s) => s.leader === 2);
  });
});

test("zookeeper: a deposed controller's fenced write fails and writes nothing", { skip }, async () => {
  await withHarness(await onZooKeeper(), async (h) => {
    await h.createTopic("t", [[1, 2]]);
    const { data, stat } = await h.admin.getData(ControllerEpochZNode.path);
    await h.admin.setData(ControllerEpochZNode.path, ControllerEpochZNode.encode(ControllerEpochZNode.decode(data)! + 1), stat.version);
    const before = await h.state("t", 0);
    await h.killBroker(1);
    const s = await h.waitState("t", 0, (s) => s.leader === 2);
    assert.equal(s.controllerEpoch, 3);
    assert.equal(s.partitionEpoch, before.partitionEpoch + 1);
    assert.ok(h.channel.sent.filter((x) => x.kind === "leaderAndIsr").every((x) => x.controllerEpoch !== 1 || x.topics[0].partitions[0].leader === 1));
  });
});

test("zookeeper: controller failover, then a reassignment completed by the leader's ISR change", { skip }, async () => {
  await withHarness(await onZooKeeper(), async (h) => {
    await h.createTopic("t", [[1, 2]]);
    const second = h.newController(h.sessions.get(1)!, 1);
    await second.startup();
    try {
      await h.controller.shutdown();
      await eventually(() => second.isActive, "broker 1's controller elected");
      assert.equal(await h.controllerEpoch(), 2);
      const [r] = await second.alterPartitionReassignments([{ topic: "t", partition: 0, replicas: [2, 3] }]);
      assert.equal(r.errorCode, ErrorCode.NONE);
      await h.leaderWritesIsr("t", 0, [1, 2, 3]);
      const s = await h.waitState("t", 0, (s) => s.leader === 2, "2 leads the new replica set");
      assert.deepEqual(s.isr, [2, 3]);
      await eventually(async () => (await h.assignment("t")).get(0)!.replicas.length === 2, "assignment written");
      assert.deepEqual(second.listPartitionReassignments(null), []);
    } finally {
      await second.shutdown();
    }
  });
});

test("zookeeper: stop the server", { skip }, async () => {
  await zk.stop();
});
