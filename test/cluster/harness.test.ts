// The cluster harness itself, on what needs no replication: three broker processes on one
// ZooKeeper, a topic of three single-replica partitions (one per broker), the numbered acks=all
// producer, a SIGKILL and restart of one broker (its partition offline meanwhile, the others
// writable), and the end-of-test checks (every acked record once, in order, at its offset).
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { test } from "node:test";
import { skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { createTopic, finalCheck, NumberedProducer } from "./workload.ts";

const skip = skipUnlessZooKeeper();

test("cluster harness: 3 brokers, RF=1 topic, produce, SIGKILL + restart of a broker, nothing acked lost", { skip, timeout: 150_000 }, async () => {
  await withCluster(3, { budgetMs: 140_000, label: "strand-cluster-harness-" }, async (c) => {
    assert.deepEqual(await c.liveBrokerIds(), [0, 1, 2]);
    assert.ok((await c.controllerId()) >= 0);
    // One partition on each broker.
    await createTopic(c, "rf1", { assignment: [[0], [1], [2]] });
    for (const p of [0, 1, 2]) assert.equal(await c.leaderOf("rf1", p), p);

    const producer = new NumberedProducer(() => c.liveBootstrap, "rf1", [0, 1, 2]);
    try {
      await producer.waitAcks(c, 60, 30_000);
      // Broker 1 dies: partition 1 goes offline; 0 and 2 keep taking writes.
      const victim = c.broker(1);
      await victim.kill("SIGKILL");
      assert.ok(!victim.alive);
      assert.equal(victim.lastExit?.status, 137, "SIGKILL status");
      await c.waitFor(async () => (await c.leaderOf("rf1", 1)) === -1, c.sessionTimeoutMs + 20_000, "rf1-1 offline");
      const t = Date.now();
      await producer.waitAcks(c, 20, 30_000, "with broker 1 down");
      assert.equal(producer.firstAckAfter(t, 1), null, "no ack from a partition without a leader");
      await c.restart(1);
      assert.equal(await c.waitLeader("rf1", 1, 30_000), 1);
      await c.waitFor(() => producer.firstAckAfter(t, 1) !== null, 30_000, "acks on rf1-1 again");
      // SIGTERM: a clean stop exits 0 and leaves Kafka's clean-shutdown marker.
      assert.equal(await c.broker(2).stop(), 0);
      assert.ok(existsSync(`${c.broker(2).logDir}/.kafka_cleanshutdown`));
      await c.restart(2);
      await c.waitLeader("rf1", 2, 30_000);
      await producer.waitAcks(c, 20, 30_000, "after the restarts");
    } finally {
      await producer.stop();
    }
    console.log(await finalCheck(c, producer));
    assert.ok(producer.acked.size >= 100);
  });
});
