// The tools against a real cluster (ZooKeeper and three broker processes, test/helpers/cluster.ts):
// `cluster info` and `topics describe` through any one broker show the whole cluster as ZooKeeper
// has it; `produce` routes each partition to its leader and, when a leader is killed mid-stream,
// refreshes metadata and carries on against the new leader once one is elected; `consume`
// through a surviving broker then reads every line.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import { skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { strandCommand, strandOk } from "./strand.ts";

const skip = skipUnlessZooKeeper();

test("cli cluster: info and describe through any broker; produce survives a leader kill; consume reads it all", { skip, timeout: 180_000 }, async () => {
  await withCluster(3, { budgetMs: 170_000, label: "strand-cli-cluster-" }, async (c) => {
    const via = (i: number) => ["--bootstrap-server", c.broker(i).bootstrap];
    const info = await strandOk(["cluster", "info", ...via(2)]);
    const controller = await c.controllerId();
    assert.match(info, new RegExp(`^Controller: ${controller}$`, "m"));
    assert.match(info, /^Brokers: 3$/m);
    for (let i = 0; i < 3; i++) assert.match(info, new RegExp(`^${i}\\*?\\s+127\\.0\\.0\\.1\\s+${c.broker(i).port}\\s`, "m"));

    await strandOk(["topics", "create", ...via(1), "--topic", "ha", "--partitions", "3", "--replication-factor", "3",
      "--config", "min.insync.replicas=2"]);
    for (let p = 0; p < 3; p++) await c.waitFullyReplicated("ha", p, 30_000);
    const d = await strandOk(["topics", "describe", ...via(0), "--topic", "ha"]);
    for (let p = 0; p < 3; p++) {
      const leader = await c.leaderOf("ha", p);
      const replicas = await c.replicasOf("ha", p);
      const row = new RegExp(`^\\tTopic: ha\\tPartition: ${p}\\tLeader: ${leader}\\tReplicas: ${replicas.join(",")}\\tIsr: ([0-9,]+)$`, "m").exec(d);
      assert.ok(row, `partition ${p} as ZooKeeper has it: ${d}`);
      assert.deepEqual(row[1].split(",").map(Number).sort(), [...replicas].sort());
    }

    // A producer through broker 0 (acks=all); the leader of partition 0 is killed mid-stream.
    const victim = await c.leaderOf("ha", 0);
    const survivor = [0, 1, 2].find((i) => i !== victim)!;
    const producer = spawn(strandCommand[0], [...strandCommand[1], "produce", ...via(survivor), "--topic", "ha", "--acks", "all",
      "--parse-key"], { stdio: ["pipe", "pipe", "pipe"] });
    let err = "";
    producer.stderr!.on("data", (x) => (err += x));
    const exited = new Promise<number | null>((res) => producer.on("close", (code) => res(code)));
    const keyed = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `k${i % 30}\t${prefix}${i}\n`).join("");
    producer.stdin!.write(keyed(3000, "before-"));
    await new Promise((r) => setTimeout(r, 1000));
    await c.broker(victim).kill("SIGKILL");
    producer.stdin!.end(keyed(3000, "after-"));
    assert.equal(await exited, 0, err);
    await c.waitLeader("ha", 0, 30_000, victim);

    const out = await strandOk(["consume", ...via(survivor), "--topic", "ha", "--from-beginning", "--timeout-ms", "3000"], { timeoutMs: 60_000 });
    const want = (keyed(3000, "before-") + keyed(3000, "after-")).trimEnd().split("\n").map((l) => l.split("\t")[1]);
    assert.deepEqual([...new Set(out.trimEnd().split("\n"))].sort(), want.sort());
  });
});
