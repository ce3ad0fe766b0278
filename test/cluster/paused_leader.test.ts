// Issue 6 acceptance: a leader paused (SIGSTOP) past zookeeper.session.timeout.ms loses its
// leadership (its session expires, the controller elects another ISR member with a higher leader
// epoch, writes go on), and when it resumes (SIGCONT) it cannot acknowledge a write under its old
// epoch: an acks=all Produce that reached its socket while it was paused gets an error (or no
// answer), never success. It then rejoins as a follower; the usual end checks follow.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ProduceApi } from "../../src/protocol/api/mod.ts";
import { skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { buildBatch } from "../helpers/record_batch.ts";
import { WireClient } from "../helpers/wire.ts";
import { createTopic, finalCheck, NumberedProducer, sleep, waitIsrFull } from "./workload.ts";

const skip = skipUnlessZooKeeper();

test("cluster: a leader SIGSTOPped past its session timeout loses leadership and cannot ack under its old epoch", { skip, timeout: 200_000 }, async () => {
  await withCluster(3, { budgetMs: 190_000, label: "strand-cluster-pause-" }, async (c) => {
    const topic = "paused";
    await createTopic(c, topic, { partitions: 1, replicationFactor: 3, configs: { "min.insync.replicas": "2" } });
    const producer = new NumberedProducer(() => c.liveBootstrap, topic, [0]);
    let stale: WireClient | null = null;
    try {
      await producer.waitAcks(c, 50, 30_000, "before the pause");
      const old = (await c.partitionState(topic, 0))!;
      const victim = old.leader;
      stale = await WireClient.connect(c.broker(victim).port); // opened while it runs

      await c.broker(victim).kill("SIGSTOP");
      const tPaused = Date.now();
      const next = await c.waitLeader(topic, 0, c.sessionTimeoutMs + 30_000, victim);
      const fresh = (await c.partitionState(topic, 0))!;
      assert.ok(fresh.leaderEpoch > old.leaderEpoch, `leader epoch grew: ${old.leaderEpoch} -> ${fresh.leaderEpoch}`);
      assert.ok(!fresh.isr.includes(victim), `the paused ${victim} left the ISR: ${fresh.isr}`);
      c.note(`paused ${victim}: new leader ${next} after ${Date.now() - tPaused} ms, epoch ${fresh.leaderEpoch}`);
      await producer.waitAcks(c, 20, 30_000, `with ${victim} paused`);

      // A write lands in the paused broker's socket; it runs again with its old view.
      const claimed = producer.claim();
      const answer = stale.request(ProduceApi, 8, {
        transactionalId: null,
        acks: -1,
        timeoutMs: 5_000,
        topicData: [{ name: topic, partitionData: [{ index: 0, records: buildBatch([{ value: claimed.value }]) }] }],
      }, 60_000).then(
        (res) => (res.responses as { partitionResponses: { errorCode: number; baseOffset: bigint }[] }[])[0].partitionResponses[0],
        () => null,
      );
      await sleep(300);
      await c.broker(victim).kill("SIGCONT");
      const r = await answer;
      producer.settle(claimed, 0, r === null ? null : r.errorCode, r === null ? -1 : Number(r.baseOffset));
      c.note(`the resumed ${victim} answered the stale-epoch write with ${r === null ? "nothing" : `error ${r.errorCode}`}`);
      assert.ok(r === null || r.errorCode !== 0, `the deposed leader ${victim} acknowledged a write (offset ${r?.baseOffset}) under its old epoch`);

      // It learns it is a follower and catches up.
      await waitIsrFull(c, topic, 0, 90_000);
      await c.waitFor(async () => {
        const v = (await c.broker(victim).adminPartitions(topic))?.[0];
        return v !== undefined && v.leader !== victim;
      }, 30_000, `broker ${victim}'s metadata (admin API) to name the new leader of ${topic}-0, not itself`);
      await producer.waitAcks(c, 20, 30_000, "after the resume");
    } finally {
      stale?.close();
      await producer.stop();
    }
    console.log(await finalCheck(c, producer));
  });
});
