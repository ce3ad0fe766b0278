// Issue 6 acceptance: a topic with replication factor 3 and min.insync.replicas=2; a producer
// with acks=all writes numbered records while the partition leader is killed with SIGKILL every
// few seconds and restarted. Each failover (the controller sees the dead broker's ZooKeeper
// session expire, then elects the next ISR member) must let writes go on while the victim is down;
// at the end every acknowledged record is read exactly once, in order, at the offset its ack
// named, and the three replicas' segment files hold identical batches.
import { test } from "node:test";
import { skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { bounceRounds, createTopic, finalCheck, NumberedProducer } from "./workload.ts";

const skip = skipUnlessZooKeeper();

test("cluster: acks=all loses nothing while the leader is SIGKILLed and restarted, round after round", { skip, timeout: 240_000 }, async () => {
  await withCluster(3, { budgetMs: 230_000, label: "strand-cluster-kill-" }, async (c) => {
    const topic = "kills";
    await createTopic(c, topic, { partitions: 2, replicationFactor: 3, configs: { "min.insync.replicas": "2" } });
    const producer = new NumberedProducer(() => c.liveBootstrap, topic, [0, 1]);
    try {
      await producer.waitAcks(c, 50, 30_000, "before the first kill");
      const rounds = await bounceRounds(c, { topic, partitions: [0, 1], rounds: 6, signal: "SIGKILL", victim: "leader", producer });
      console.log(rounds.join("\n"));
      await producer.waitAcks(c, 20, 30_000, "after the last round");
    } finally {
      await producer.stop();
    }
    console.log(await finalCheck(c, producer));
  });
});
