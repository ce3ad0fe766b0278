// Issue 6 acceptance: the leader-kill scenario with the active controller as the victim. Three
// partitions of replication factor 3 (their leaders spread over the brokers, so the controller
// leads some); each round SIGKILLs whichever broker holds /controller: a new controller must be
// elected with a higher /controller_epoch, move the dead broker's leaderships, and writes with
// acks=all must go on while it is down. End checks as in leader_kill.
import { test } from "node:test";
import { skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { bounceRounds, createTopic, finalCheck, NumberedProducer } from "./workload.ts";

const skip = skipUnlessZooKeeper();

test("cluster: acks=all loses nothing while the controller is SIGKILLed and restarted", { skip, timeout: 220_000 }, async () => {
  await withCluster(3, { budgetMs: 210_000, label: "strand-cluster-controller-" }, async (c) => {
    const topic = "controller-kills";
    await createTopic(c, topic, { partitions: 3, replicationFactor: 3, configs: { "min.insync.replicas": "2" } });
    const producer = new NumberedProducer(() => c.liveBootstrap, topic, [0, 1, 2]);
    try {
      await producer.waitAcks(c, 50, 30_000, "before the first kill");
      const rounds = await bounceRounds(c, { topic, partitions: [0, 1, 2], rounds: 4, signal: "SIGKILL", victim: "controller", producer });
      console.log(rounds.join("\n"));
      await producer.waitAcks(c, 20, 30_000, "after the last round");
    } finally {
      await producer.stop();
    }
    console.log(await finalCheck(c, producer));
  });
});
