// Issue 6 acceptance: topic deletion, partition addition (CreatePartitions) and partition
// reassignment (AlterPartitionReassignments / ListPartitionReassignments), all through kafkajs's
// admin client, while numbered acks=all producers write:
// - "doomed" (RF 3) is deleted while written to: gone from ZooKeeper and every broker's
//   metadata and log dirs; recreated under the same name, it starts empty at offset 0;
// - "load" (RF 2, 2 partitions) grows to 4 partitions; the producer writes to the new ones;
// - both original partitions move to another replica set (one broker added, one removed, the
//   preferred leader changed); the removed replica's directory goes; nothing acked is lost.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Kafka, logLevel } from "kafkajs";
import { skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { createTopic, finalCheck, NumberedProducer, readPartition, waitIsrFull } from "./workload.ts";

const skip = skipUnlessZooKeeper();

test("cluster: topic deletion, partition addition and reassignment under load lose no record", { skip, timeout: 220_000 }, async () => {
  await withCluster(3, { budgetMs: 210_000, label: "strand-cluster-admin-" }, async (c) => {
    await createTopic(c, "load", { partitions: 2, replicationFactor: 2, configs: { "min.insync.replicas": "1" } });
    await createTopic(c, "doomed", { partitions: 2, replicationFactor: 3 });
    const load = new NumberedProducer(() => c.liveBootstrap, "load", [0, 1]);
    const doomed = new NumberedProducer(() => c.liveBootstrap, "doomed", [0, 1]);
    const kafka = new Kafka({ clientId: "cluster-admin-ops", brokers: c.bootstrap.split(","), logLevel: logLevel.NOTHING, retry: { retries: 3 } });
    const admin = kafka.admin();
    await admin.connect();
    try {
      await load.waitAcks(c, 50, 30_000);
      await doomed.waitAcks(c, 30, 30_000);

      // Deletion under load.
      await admin.deleteTopics({ topics: ["doomed"], timeout: 20_000 });
      await c.waitFor(async () => !(await c.exists("/brokers/topics/doomed")) && !(await c.exists("/admin/delete_topics/doomed")), 30_000, "doomed gone from ZooKeeper");
      await c.waitFor(async () => {
        for (const b of c.brokers) {
          if ((await b.adminPartitions("doomed")) !== null) return false;
          if ([0, 1].some((p) => existsSync(join(b.logDir, `doomed-${p}`)))) return false;
        }
        return true;
      }, 30_000, "doomed gone from every broker's metadata and log dirs");
      await doomed.stop();
      // The same name again: a new, empty topic.
      await createTopic(c, "doomed", { partitions: 1, replicationFactor: 3 });
      const reborn = new NumberedProducer(() => c.liveBootstrap, "doomed", [0], { prefix: "r" });
      try {
        await reborn.waitAcks(c, 10, 30_000);
      } finally {
        await reborn.stop();
      }
      await waitIsrFull(c, "doomed", 0, 30_000);
      const pc = await readPartition(c, "doomed", 0);
      assert.ok(pc.records.length > 0 && pc.records[0].offset === 0, "the recreated topic starts at offset 0");
      assert.deepEqual(pc.records.filter((r) => !r.value?.startsWith("r")), [], "no record of the deleted topic");
      await load.waitAcks(c, 20, 30_000, "after the deletion");

      // Partitions 2 and 3.
      await admin.createPartitions({ topicPartitions: [{ topic: "load", count: 4 }], timeout: 20_000 });
      await c.waitFor(async () => (await c.assignment("load"))?.size === 4, 20_000, "load has 4 partitions in ZooKeeper");
      for (const p of [2, 3]) await c.waitLeader("load", p, 30_000);
      load.addPartition(2);
      load.addPartition(3);
      await c.waitFor(() => load.firstAckAfter(0, 2) !== null && load.firstAckAfter(0, 3) !== null, 30_000, "acks on the new partitions");

      // Reassignment: each original partition to [the broker it lacks, its first replica].
      const before = await c.assignment("load");
      const targets = [0, 1].map((p) => {
        const r = before!.get(p)!;
        const missing = [0, 1, 2].find((b) => !r.includes(b))!;
        return { partition: p, from: r, to: [missing, r[0]] };
      });
      c.note(`reassigning ${JSON.stringify(targets)}`);
      await admin.alterPartitionReassignments({ topics: [{ topic: "load", partitionAssignment: targets.map((t) => ({ partition: t.partition, replicas: t.to })) }], timeout: 20_000 });
      await c.waitFor(async () => {
        const listed = await admin.listPartitionReassignments({ topics: [{ topic: "load", partitions: [0, 1] }], timeout: 10_000 });
        const a = await c.assignment("load");
        return listed.topics.every((t) => t.partitions.length === 0) &&
          targets.every((t) => JSON.stringify(a?.get(t.partition)) === JSON.stringify(t.to));
      }, 90_000, "the reassignment to complete");
      for (const t of targets) {
        await waitIsrFull(c, "load", t.partition, 30_000);
        const removed = t.from.filter((b) => !t.to.includes(b));
        for (const b of removed) {
          await c.waitFor(() => !existsSync(join(c.broker(b).logDir, `load-${t.partition}`)), 30_000, `load-${t.partition} removed from broker ${b}`);
        }
      }
      await load.waitAcks(c, 30, 30_000, "after the reassignment");
    } finally {
      await admin.disconnect();
      await doomed.stop();
      await load.stop();
    }
    console.log(await finalCheck(c, load));
  });
});
