// The controller when brokers die and return (Kafka's onBrokerFailure / onBrokerStartup), its own
// election and fencing, and conditional partition-state writes, on the embedded registry with a
// recording channel.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ControllerEpochZNode, ControllerZNode, type Op, RegistryError, TopicPartitionStateZNode } from "../../src/registry/mod.ts";
import { eventually, withHarness } from "./harness.ts";

test("the first controller bumps /controller_epoch; another broker takes over when its session ends", async () => {
  await withHarness({ brokers: [0, 1, 2] }, async (h) => {
    assert.equal(await h.controllerEpoch(), 1);
    assert.equal(h.controller.epoch, 1);
    assert.deepEqual([...h.channel.brokers.keys()].sort(), [0, 1, 2]);
    const s1 = h.sessions.get(1)!;
    const second = h.newController(s1, 1);
    await second.startup();
    assert.equal(second.isActive, false);
    await h.createTopic("t", [[1, 2]]);
    // Broker 0 (the controller) goes: broker 1's controller is elected with epoch 2.
    await h.controller.shutdown();
    await eventually(() => second.isActive, "broker 1 to become controller");
    assert.equal(await h.controllerEpoch(), 2);
    assert.equal(ControllerZNode.decode((await s1.getData(ControllerZNode.path)).data), 1);
    await second.shutdown();
  });
});

test("a new topic's partitions get states, LeaderAndIsr with isNew to their replicas, metadata everywhere", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2, 3], [2, 3, 1]]);
    const s0 = await h.waitState("t", 0, () => true);
    assert.deepEqual([s0.leader, s0.isr, s0.leaderEpoch, s0.partitionEpoch, s0.controllerEpoch], [1, [1, 2, 3], 0, 0, 1]);
    const s1 = await h.state("t", 1);
    assert.deepEqual([s1.leader, s1.isr], [2, [2, 3, 1]]);
    await eventually(() => h.channel.leaderAndIsrTo(3, "t", 1).length === 1, "LeaderAndIsr to broker 3");
    const [p] = h.channel.leaderAndIsrTo(3, "t", 0);
    assert.equal(p.isNew, true);
    assert.equal(p.partitionEpoch, 0);
    assert.equal(h.channel.leaderAndIsrTo(0, "t", 0).length, 0, "broker 0 holds no replica");
    await eventually(() => h.channel.sent.filter((s) => s.kind === "updateMetadata" && s.topics.some((t) => t.name === "t")).length >= 4, "metadata to every broker");
  });
});

test("the leader's broker dies: the first live ISR replica leads, with a new leader epoch", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2, 3]]);
    h.channel.clear();
    await h.killBroker(1);
    const s = await h.waitState("t", 0, (s) => s.leader !== 1, "a new leader");
    assert.deepEqual([s.leader, s.isr, s.leaderEpoch, s.partitionEpoch], [2, [2, 3], 1, 1]);
    await eventually(() => h.channel.leaderAndIsrTo(3, "t", 0).length > 0, "LeaderAndIsr to broker 3");
    const [sent] = h.channel.leaderAndIsrTo(2, "t", 0);
    assert.deepEqual([sent.leader, sent.leaderEpoch, sent.partitionEpoch, sent.isr], [2, 1, 1, [2, 3]]);
    assert.equal(h.channel.brokers.has(1), false, "the channel was told broker 1 left");
    await eventually(() => h.channel.sent.some((x) => x.kind === "updateMetadata" && x.brokerId === 0), "metadata to broker 0");
  });
});

test("a dead follower leaves the ISR (new leader epoch), and the live replicas hear it", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2, 3]]);
    h.channel.clear();
    await h.killBroker(3);
    const s = await h.waitState("t", 0, (s) => !s.isr.includes(3), "3 out of the ISR");
    assert.deepEqual([s.leader, s.isr, s.leaderEpoch], [1, [1, 2], 1]);
    await eventually(() => h.channel.leaderAndIsrTo(1, "t", 0).length > 0 && h.channel.leaderAndIsrTo(2, "t", 0).length > 0, "LeaderAndIsr to 1 and 2");
    assert.equal(h.channel.leaderAndIsrTo(3, "t", 0).length, 0);
  });
});

test("without unclean election a partition whose ISR is all dead stays offline, keeping its last ISR member", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2]]);
    await h.killBroker(1);
    await h.waitState("t", 0, (s) => s.leader === 2 && s.isr.length === 1, "2 leads alone");
    await h.killBroker(2);
    const off = await h.waitState("t", 0, (s) => s.leader === -1, "offline");
    assert.deepEqual(off.isr, [2], "the last ISR member is kept");
    // Broker 1 returns: it is not in the ISR, so the partition stays offline.
    h.channel.clear();
    await h.startBroker(1);
    await eventually(() => h.channel.leaderAndIsrTo(1, "t", 0).length > 0, "broker 1 hears its partition");
    assert.equal((await h.state("t", 0)).leader, -1);
    assert.equal(h.channel.leaderAndIsrTo(1, "t", 0)[0].leader, -1);
    // Broker 2 (the last ISR member) returns: it leads again.
    await h.startBroker(2);
    const back = await h.waitState("t", 0, (s) => s.leader !== -1, "a leader again");
    assert.deepEqual([back.leader, back.isr], [2, [2]]);
    await eventually(() => h.channel.leaderAndIsrTo(1, "t", 0).some((p) => p.leader === 2), "broker 1 told to follow 2");
  });
});

test("unclean.leader.election.enable (topic config) lets a replica outside the ISR lead", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2]], { "unclean.leader.election.enable": "true" });
    await h.killBroker(1);
    await h.waitState("t", 0, (s) => s.leader === 2 && s.isr.length === 1, "2 leads alone");
    await h.killBroker(2);
    await h.waitState("t", 0, (s) => s.leader === -1, "offline");
    await h.startBroker(1);
    const s = await h.waitState("t", 0, (s) => s.leader === 1, "1 leads (unclean)");
    assert.deepEqual(s.isr, [1]);
  });
});

test("the broker default for unclean election applies when the topic sets none; the topic's false overrides it", async () => {
  await withHarness({ controller: { uncleanLeaderElectionEnable: true } }, async (h) => {
    await h.createTopic("a", [[1, 2]]);
    await h.createTopic("b", [[1, 2]], { "unclean.leader.election.enable": "false" });
    await h.killBroker(1);
    await h.waitState("a", 0, (s) => s.leader === 2);
    await h.waitState("b", 0, (s) => s.leader === 2);
    await h.killBroker(2);
    await h.waitState("a", 0, (s) => s.leader === -1);
    await h.waitState("b", 0, (s) => s.leader === -1);
    await h.startBroker(1);
    await h.waitState("a", 0, (s) => s.leader === 1, "a: unclean leader 1");
    await eventually(() => h.channel.leaderAndIsrTo(1, "b", 0).length > 0, "broker 1 hears b");
    assert.equal((await h.state("b", 0)).leader, -1, "b stays offline");
  });
});

test("a returning broker hears every partition it holds, as a follower, and the metadata", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2, 3], [3, 1, 2]]);
    await h.killBroker(1);
    await h.waitState("t", 0, (s) => s.leader === 2);
    await h.waitState("t", 1, (s) => !s.isr.includes(1));
    h.channel.clear();
    await h.startBroker(1);
    await eventually(() => h.channel.leaderAndIsrTo(1, "t", 0).length > 0 && h.channel.leaderAndIsrTo(1, "t", 1).length > 0, "both partitions to 1");
    assert.equal(h.channel.leaderAndIsrTo(1, "t", 0)[0].leader, 2);
    assert.equal(h.channel.leaderAndIsrTo(1, "t", 1)[0].leader, 3);
    assert.equal(h.channel.brokers.has(1), true);
    await eventually(() => h.channel.sent.some((s) => s.kind === "updateMetadata" && s.brokerId === 1), "metadata to 1");
    // The leader adds it back to the ISR (not the controller).
    assert.deepEqual((await h.state("t", 0)).isr, [2, 3]);
  });
});

test("a broker that registers again with a new epoch is handled as failed, then started", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2]]);
    const before = await h.brokerEpoch(1);
    // The old session closes and the new registration lands before the controller reads them.
    const old = h.sessions.get(1)!;
    h.sessions.delete(1);
    await old.close();
    await h.startBroker(1);
    assert.ok((await h.brokerEpoch(1)) > before);
    await eventually(() => h.channel.brokers.get(1)?.epoch !== before, "the channel re-added broker 1");
    // It lost its state: leadership went to 2, and 1 left the ISR.
    const s = await h.waitState("t", 0, (s) => s.leader === 2);
    assert.deepEqual(s.isr, [2]);
  });
});

test("a deposed controller's writes fail: nothing is written under the old epoch, and it resigns", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2, 3]]);
    // Another controller's election bumps the epoch znode (and so its version).
    const { data, stat } = await h.admin.getData(ControllerEpochZNode.path);
    await h.admin.setData(ControllerEpochZNode.path, ControllerEpochZNode.encode(ControllerEpochZNode.decode(data)! + 1), stat.version);
    const before = await h.state("t", 0);
    h.channel.clear();
    await h.killBroker(1);
    // The fenced write failed: the controller resigned, then (holding /controller itself in this
    // test) ran again and won epoch 3, and only then moved the leadership.
    const s = await h.waitState("t", 0, (s) => s.leader !== 1, "a new leader");
    assert.equal(s.controllerEpoch, 3);
    assert.equal(s.partitionEpoch, before.partitionEpoch + 1, "exactly one write: the new controller's");
    assert.equal(h.controller.epoch, 3);
    assert.ok(h.channel.sent.every((x) => x.controllerEpoch === 3), "nothing sent under epoch 1 after the bump");
  });
});

test("a partition epoch conflict (the leader changed the ISR meanwhile) is re-read and decided again", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2, 3]]);
    // The leader shrinks the ISR without telling the controller (no notification): the
    // controller's cached partition epoch is now stale.
    await h.leaderWritesIsr("t", 0, [1, 2], false);
    await h.killBroker(1);
    const s = await h.waitState("t", 0, (s) => s.leader !== 1, "a new leader");
    // Decided on the fresh state: 3 is not in the ISR, so it is not put back.
    assert.deepEqual([s.leader, s.isr, s.leaderEpoch, s.partitionEpoch], [2, [2], 1, 2]);
  });
});

test("a new controller loads the states, elects for partitions whose leader died meanwhile, and tells every broker", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2, 3]]);
    await h.controller.shutdown();
    await h.killBroker(1);
    h.channel.clear();
    const next = h.newController(h.sessions.get(2)!, 2);
    await next.startup();
    try {
      assert.ok(next.isActive);
      const s = await h.waitState("t", 0, (s) => s.leader === 2);
      assert.equal(s.controllerEpoch, 2);
      assert.deepEqual(s.isr, [2, 3]);
      assert.ok(h.channel.leaderAndIsrTo(3, "t", 0).length > 0);
      assert.ok(h.channel.sent.filter((x) => x.kind === "updateMetadata").length >= 3);
    } finally {
      await next.shutdown();
    }
    assert.equal((await h.admin.exists(TopicPartitionStateZNode.path("t", 0)))!.version, 1);
  });
});

test("an event that fails half-way (a lost connection) is recovered by reading everything again", async () => {
  await withHarness({}, async (h) => {
    await h.createTopic("t", [[1, 2, 3]]);
    await h.controller.shutdown();
    const session = h.sessions.get(2)!;
    const faults = { multi: 0 };
    const flaky = new Proxy(session, {
      get(target, prop) {
        if (prop === "multi") {
          return (ops: Op[]) => {
            if (faults.multi > 0) {
              faults.multi--;
              return Promise.reject(new RegistryError("ConnectionLoss", ops[0]?.path ?? "/"));
            }
            return target.multi(ops);
          };
        }
        const v = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const next = h.newController(flaky, 2);
    await next.startup();
    try {
      assert.ok(next.isActive);
      faults.multi = 1;
      await h.killBroker(1);
      // The election's write was lost; a second later the controller reads everything again.
      const s = await h.waitState("t", 0, (s) => s.leader === 2, "leader elected after the resync");
      assert.deepEqual(s.isr, [2, 3]);
      assert.equal(s.controllerEpoch, 2, "same controller epoch");
      assert.equal(faults.multi, 0);
    } finally {
      await next.shutdown();
    }
  });
});
