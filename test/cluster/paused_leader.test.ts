// Issue 6 acceptance: a leader paused (SIGSTOP) past zookeeper.session.timeout.ms loses its
// leadership (its session expires, the controller elects another ISR member with a higher leader
// epoch, writes go on), and when it resumes (SIGCONT) it cannot acknowledge a write under its old
// epoch: an acks=all Produce that reached its socket while it was paused gets an error (or no
// answer), never success. It then rejoins as a follower, its metadata agreeing with ZooKeeper's
// state; a preferred election makes it leader again (it is the preferred replica), every
// broker's metadata follows; the usual end checks follow.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ProduceApi } from "../../src/protocol/api/mod.ts";
import { type Cluster, skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { buildBatch } from "../helpers/record_batch.ts";
import { WireClient } from "../helpers/wire.ts";
import { createTopic, finalCheck, NumberedProducer, sleep, waitIsrFull } from "./workload.ts";

const skip = skipUnlessZooKeeper();

/**
 * Waits until broker b's metadata for partition 0 (its admin API) names the leader and leader epoch
 * ZooKeeper's state znode holds, at an epoch above `epochAbove`.
 */
async function waitMetadataAgrees(c: Cluster, b: number, topic: string, epochAbove: number): Promise<void> {
  let seen = "";
  try {
    await c.waitFor(async () => {
      const v = (await c.broker(b).adminPartitions(topic))?.[0];
      const zk = await c.partitionState(topic, 0);
      seen = `broker ${b}: leader ${v?.leader} epoch ${v?.leader_epoch}; ZooKeeper: leader ${zk?.leader} epoch ${zk?.leaderEpoch}`;
      return v !== undefined && zk !== null && v.leader === zk.leader && v.leader_epoch === zk.leaderEpoch && zk.leaderEpoch > epochAbove;
    }, 30_000, `broker ${b}'s metadata (admin API) to agree with ZooKeeper on ${topic}-0's leader, at an epoch above ${epochAbove}`);
  } catch (e) {
    throw new Error(`${(e as Error).message} (last seen: ${seen})`);
  }
}

test("cluster: a leader SIGSTOPped past its session timeout loses leadership and cannot ack under its old epoch", { skip, timeout: 200_000 }, async () => {
  await withCluster(3, { budgetMs: 190_000, label: "strand-cluster-pause-" }, async (c) => {
    const topic = "paused";
    await createTopic(c, topic, { partitions: 1, replicationFactor: 3, configs: { "min.insync.replicas": "2" } });
    const producer = new NumberedProducer(() => c.liveBootstrap, topic, [0]);
    let stale: WireClient | null = null;
    let preferredElection = "";
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

      // It learns the new state and catches up: back in the ISR, and its metadata (admin API, as
      // Metadata answers) names what ZooKeeper names, at a leader epoch newer than the one it led
      // under. Not "a leader other than itself": the victim is the partition's preferred replica,
      // and the new controller's first automatic preferred-leader check runs 5 s after its
      // election (Kafka's schedule), about when the victim resumes; once the victim is back in the
      // ISR, that check rightly moves leadership back to it (with a newer epoch).
      await waitIsrFull(c, topic, 0, 90_000);
      await waitMetadataAgrees(c, victim, topic, old.leaderEpoch);
      // The same move, made deterministic: a preferred election (what the automatic check does)
      // gives leadership back to the resumed broker, and every broker's metadata follows.
      assert.equal((await c.replicasOf(topic, 0))[0], victim, `${victim}, the first leader, is the preferred replica`);
      const elected = await fetch(`${c.broker(next).adminUrl}/v1/partitions/${topic}/0/elect-leader`, { method: "POST", signal: AbortSignal.timeout(10_000) });
      const election = await elected.json() as { result?: string };
      assert.ok(elected.ok && (election.result === "NONE" || election.result === "ELECTION_NOT_NEEDED"), `preferred election: ${elected.status} ${JSON.stringify(election)}`);
      preferredElection = `preferred election of ${topic}-0: ${election.result}` +
        (election.result === "ELECTION_NOT_NEEDED" ? " (the controller's automatic check had moved leadership back already)" : "");
      c.note(preferredElection);
      await c.waitFor(async () => (await c.leaderOf(topic, 0)) === victim, 30_000, `${victim} to lead ${topic}-0 again`);
      for (const b of [0, 1, 2]) await waitMetadataAgrees(c, b, topic, fresh.leaderEpoch);
      await producer.waitAcks(c, 20, 30_000, "after the resume");
    } finally {
      stale?.close();
      await producer.stop();
    }
    console.log(`${preferredElection}; ${await finalCheck(c, producer)}`);
  });
});
