// Issue 6 acceptance, KIP-101's double failover: a partition on brokers 0 (leader) and 1
// (follower), min.insync.replicas=1. Both crash one after the other (0, then 1 after it took
// over) and both lose their unflushed tails, by different amounts, as after a power failure: the
// harness cuts their segment files (1's in the middle of a batch, a torn write) below the high
// watermark 0 had checkpointed. 1 restarts first, leads again (it was the last ISR member) and
// takes new writes at offsets 0 still holds old records for. When 0 restarts it must truncate
// to where its log diverges from 1's, found through OffsetForLeaderEpoch (KIP-101/KIP-279),
// not to its high watermark (which would keep its stale tail): afterwards the two replicas'
// batch sequences (base offset, leader epoch, CRC) are identical, no stale record of 0 is read,
// and every record acknowledged after the crash is there.
import assert from "node:assert/strict";
import { test } from "node:test";
import { checkpointOffset, cutReplicaLog, segmentBatches, skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { assertReplicasIdentical, checkNumbered, createTopic, NumberedProducer, readPartition, sleep } from "./workload.ts";

const skip = skipUnlessZooKeeper();

test("cluster: KIP-101 double failover with lost unflushed tails leaves no divergence", { skip, timeout: 200_000 }, async () => {
  await withCluster(3, { budgetMs: 190_000, label: "strand-cluster-kip101-", overrides: { "replica.high.watermark.checkpoint.interval.ms": "200" } }, async (c) => {
    const topic = "kip101";
    await createTopic(c, topic, { assignment: [[0, 1]], configs: { "min.insync.replicas": "1" } });
    assert.equal(await c.waitLeader(topic, 0, 10_000), 0);

    // Epoch 0: records on both replicas.
    const before = new NumberedProducer(() => c.liveBootstrap, topic, [0], { prefix: "a" });
    try {
      await before.waitAcks(c, 300, 60_000);
    } finally {
      await before.stop();
    }
    const { highWatermark: end } = await c.waitFullyReplicated(topic, 0, 30_000);
    await sleep(1_000); // a high-watermark checkpoint at `end` on both

    // 0 crashes; 1 takes over (epoch 1, no writes); 1 crashes: offline, ISR [1].
    await c.broker(0).kill("SIGKILL");
    assert.equal(await c.waitLeader(topic, 0, c.sessionTimeoutMs + 20_000, 0), 1);
    await c.broker(1).kill("SIGKILL");
    await c.waitFor(async () => (await c.leaderOf(topic, 0)) === -1, c.sessionTimeoutMs + 20_000, `${topic}-0 offline`);

    // Power failure: 1 loses its last 60 records (keeping a torn piece of the next), 0 its last 20.
    const cut1 = end - 60;
    const cut0 = end - 20;
    const hw0 = checkpointOffset(c.broker(0).logDir, "replication-offset-checkpoint", topic, 0);
    assert.ok(hw0 !== null && hw0 > cut1, `precondition: broker 0 checkpointed a high watermark (${hw0}) above 1's cut (${cut1}), so truncating to the HW would keep a stale tail`);
    for (const [b, cut] of [[0, cut0], [1, cut1]]) {
      const rp = checkpointOffset(c.broker(b).logDir, "recovery-point-offset-checkpoint", topic, 0) ?? 0;
      assert.ok(rp <= cut, `precondition: broker ${b}'s recovery point ${rp} (flushed) is not above the cut ${cut}`);
    }
    cutReplicaLog(c.broker(1).logDir, topic, 0, cut1, 30);
    cutReplicaLog(c.broker(0).logDir, topic, 0, cut0);
    c.note(`cut broker 1 at ${cut1} (torn), broker 0 at ${cut0}; HW was ${end}, 0's checkpointed HW ${hw0}`);

    // 1 first: it leads (a new epoch) and takes writes at offsets from cut1 on.
    await c.restart(1);
    assert.equal(await c.waitLeader(topic, 0, 30_000), 1, "the last ISR member leads");
    const after = new NumberedProducer(() => c.liveBootstrap, topic, [0], { prefix: "b" });
    try {
      await after.waitAcks(c, 100, 60_000, "on broker 1 alone");
      // Then 0, under load: it must drop its offsets cut1..cut0 (old epoch) and follow.
      await c.restart(0);
      await after.waitAcks(c, 50, 60_000, "with broker 0 back");
    } finally {
      await after.stop();
    }
    const { replicas, highWatermark } = await c.waitFullyReplicated(topic, 0, 60_000);
    assertReplicasIdentical(c, topic, 0, replicas, highWatermark);
    const epochs = [...new Set(segmentBatches(c.broker(1).logDir, topic, 0).map((b) => b.partitionLeaderEpoch))];
    assert.ok(epochs.length >= 2, `batches of two leader epochs (${epochs})`);

    const pc = await readPartition(c, topic, 0);
    // No record of the old epoch at or past the point 1 was cut to.
    const stale = pc.records.filter((r) => r.value?.startsWith("a") && r.offset >= cut1);
    assert.deepEqual(stale, [], "no record of 0's lost tail survives");
    // Acked before the crash and below both cuts: present; after the crash: all present.
    checkNumbered(before, [pc], { ignore: (v) => v.startsWith("b"), ackedFilter: (n) => before.acked.get(n)!.offset < cut1 });
    const s = checkNumbered(after, [pc], { ignore: (v) => v.startsWith("a") });
    console.log(`kip101: cut 1 at ${cut1} and 0 at ${cut0} (HW ${end}); ${after.summary()}; read ${s.read}; leader epochs ${epochs}`);
  });
});
