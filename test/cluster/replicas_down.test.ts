// Issue 6 acceptance, the Jepsen 2013 case: replication factor 3, min.insync.replicas=2,
// unclean.leader.election.enable=false.
// 1. Both followers SIGKILLed: once the ISR is the leader alone, acks=all writes are refused with
//    NOT_ENOUGH_REPLICAS (checked with raw Produce requests), and no write sent after the
//    followers died is ever acknowledged.
// 2. The leader dies too, then a stale follower (not in the ISR) comes back: the partition stays
//    offline (leader -1, ISR still the dead leader) rather than electing it, and nothing is acked.
// 3. The old leader returns and leads again; the other follower returns; every acked record is
//    there, refused ones are not, and the replicas' files are identical.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ProduceApi } from "../../src/protocol/api/mod.ts";
import { skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { buildBatch } from "../helpers/record_batch.ts";
import { WireClient } from "../helpers/wire.ts";
import { createTopic, finalCheck, NumberedProducer, sleep } from "./workload.ts";

const skip = skipUnlessZooKeeper();
const NOT_ENOUGH_REPLICAS = 19;

/** One raw acks=-1 Produce of one record; the partition's error code, or null when no answer came. */
async function produceOnce(port: number, topic: string, partition: number, value: string, timeoutMs = 15_000): Promise<{ errorCode: number | null; offset: number }> {
  let c: WireClient | null = null;
  try {
    c = await WireClient.connect(port);
    const res = await c.request(ProduceApi, 8, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 3_000,
      topicData: [{ name: topic, partitionData: [{ index: partition, records: buildBatch([{ value }]) }] }],
    }, timeoutMs);
    const p = (res.responses as { partitionResponses: { errorCode: number; baseOffset: bigint }[] }[])[0].partitionResponses[0];
    return { errorCode: p.errorCode, offset: Number(p.baseOffset) };
  } catch {
    return { errorCode: null, offset: -1 };
  } finally {
    c?.close();
  }
}

test("cluster: with two of three replicas down acks=all is refused, never acked and lost; an all-dead ISR stays offline", { skip, timeout: 220_000 }, async () => {
  await withCluster(3, { budgetMs: 210_000, label: "strand-cluster-jepsen-" }, async (c) => {
    const topic = "jepsen";
    await createTopic(c, topic, { partitions: 1, replicationFactor: 3, configs: { "min.insync.replicas": "2", "unclean.leader.election.enable": "false" } });
    const producer = new NumberedProducer(() => c.liveBootstrap, topic, [0], { timeoutMs: 3_000 });
    try {
      await producer.waitAcks(c, 50, 30_000, "with every replica up");
      const leader = await c.waitLeader(topic, 0, 10_000);
      const [f1, f2] = [0, 1, 2].filter((b) => b !== leader);

      // 1. Both followers die.
      await c.broker(f1).kill("SIGKILL");
      await c.broker(f2).kill("SIGKILL");
      const tFollowersDead = Date.now();
      await c.waitFor(async () => {
        const s = await c.partitionState(topic, 0);
        return s !== null && s.leader === leader && s.isr.length === 1 && s.isr[0] === leader;
      }, c.sessionTimeoutMs + 40_000, `ISR of ${topic}-0 shrunk to [${leader}]`);
      await sleep(1_000); // the leader has applied the shrink (it made it, or LeaderAndIsr told it)
      for (let i = 0; i < 5; i++) {
        const claimed = producer.claim();
        const r = await produceOnce(c.broker(leader).port, topic, 0, claimed.value);
        producer.settle(claimed, 0, r.errorCode, r.offset);
        assert.equal(r.errorCode, NOT_ENOUGH_REPLICAS, `acks=all with ISR [${leader}] < min.insync.replicas 2: NOT_ENOUGH_REPLICAS, got ${r.errorCode}`);
      }
      await sleep(2_000);
      const ackedAlone = producer.ackedStartedSince(tFollowersDead);
      assert.deepEqual(ackedAlone, [], "no write sent after both followers died is acknowledged");
      assert.ok(producer.refused.size >= 5);

      // 2. The leader dies too; a stale follower returns: no unclean election.
      await c.broker(leader).kill("SIGKILL");
      await c.restart(f1);
      await c.waitFor(async () => (await c.controllerId()) === f1, c.sessionTimeoutMs + 20_000, `broker ${f1} controller (the only live broker)`);
      await sleep(2_000); // time for it to (wrongly) elect a leader
      const tOffline = Date.now();
      while (Date.now() - tOffline < 8_000) {
        const s = await c.partitionState(topic, 0);
        assert.ok(s !== null);
        assert.equal(s.leader, -1, `${topic}-0 stays offline with its ISR [${leader}] dead; state leader ${s.leader} epoch ${s.leaderEpoch} isr [${s.isr}]`);
        assert.deepEqual(s.isr, [leader], "the ISR keeps its last member");
        await sleep(250);
      }
      const claimed = producer.claim();
      const r = await produceOnce(c.broker(f1).port, topic, 0, claimed.value);
      producer.settle(claimed, 0, r.errorCode, r.offset);
      assert.notEqual(r.errorCode, 0, "a stale replica does not take writes");
      assert.deepEqual(producer.ackedStartedSince(tFollowersDead), [], "nothing acknowledged while the partition is offline");

      // 3. The ISR member returns and leads; the other follower returns.
      await c.restart(leader);
      assert.equal(await c.waitLeader(topic, 0, 30_000), leader, "the last ISR member leads again");
      await c.restart(f2);
      await producer.waitAcks(c, 30, 60_000, "once the ISR member is back");
    } finally {
      await producer.stop();
    }
    console.log(await finalCheck(c, producer));
  });
});
