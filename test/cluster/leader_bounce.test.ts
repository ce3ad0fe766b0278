// Issue 6 acceptance: the leader-kill scenario with clean bounces. SIGTERM starts a controlled
// shutdown (ControlledShutdown to the controller: leadership moves away before the process exits),
// so each round checks that every partition the victim led had a new leader while the victim was
// still running, and that it exited 0; then the usual end checks (every acked record once, in
// order; identical replica files).
import { test } from "node:test";
import { skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { bounceRounds, createTopic, finalCheck, NumberedProducer } from "./workload.ts";

const skip = skipUnlessZooKeeper();

test("cluster: acks=all loses nothing through SIGTERM bounces of the leader; leadership moves before exit", { skip, timeout: 200_000 }, async () => {
  await withCluster(3, { budgetMs: 190_000, label: "strand-cluster-bounce-" }, async (c) => {
    const topic = "bounces";
    await createTopic(c, topic, { partitions: 2, replicationFactor: 3, configs: { "min.insync.replicas": "2" } });
    const producer = new NumberedProducer(() => c.liveBootstrap, topic, [0, 1]);
    try {
      await producer.waitAcks(c, 50, 30_000, "before the first bounce");
      const rounds = await bounceRounds(c, { topic, partitions: [0, 1], rounds: 6, signal: "SIGTERM", victim: "leader", producer });
      console.log(rounds.join("\n"));
      await producer.waitAcks(c, 20, 30_000, "after the last round");
    } finally {
      await producer.stop();
    }
    console.log(await finalCheck(c, producer));
  });
});
