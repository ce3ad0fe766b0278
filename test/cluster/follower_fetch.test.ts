// Fetch from the closest replica (KIP-392) in a real three-broker cluster, one rack per broker
// (broker.rack=rack-<id>), replica.selector.class=RackAwareReplicaSelector, with librdkafka
// (python3-confluent-kafka) consuming with client.rack: a consumer in rack-2 is sent by the leader
// (broker 0) to the follower on broker 2 (preferred_read_replica), which serves it every record,
// in order, as the brokers' kafka_server_brokertopicmetrics_bytesout_total shows (consumer bytes
// out: broker 2 only, the leader none); a consumer in the leader's rack reads from the leader.
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { type Cluster, skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { createTopic } from "./workload.ts";

const skip = skipUnlessZooKeeper() || skipUnless("confluent_kafka");
const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "rdkafka_rack.py");
const COUNT = 300;
const TOPIC = "near";

async function bytesOut(c: Cluster, id: number): Promise<number> {
  const res = await fetch(`${c.broker(id).adminUrl}/metrics`, { signal: AbortSignal.timeout(5_000) });
  const text = await res.text();
  const line = text.split("\n").find((l) => l.startsWith(`kafka_server_brokertopicmetrics_bytesout_total{topic="${TOPIC}"}`));
  return line === undefined ? 0 : Number(line.split(" ").pop());
}

async function rdkafka(args: string[]): Promise<Record<string, unknown>> {
  const r = await run("/usr/bin/python3", [SCRIPT, ...args], { timeoutMs: 120_000 });
  const done = r.stdout.toString().split("\n").find((l) => l.startsWith("DONE "));
  assert.ok(done !== undefined, `rdkafka_rack.py ${args[0]} finished (exit ${r.code}): ${r.stderr.slice(-2000)}`);
  return JSON.parse(done.slice(5));
}

test("cluster: librdkafka with client.rack reads from the follower in its rack (KIP-392), every record in order", { skip, timeout: 240_000 }, async () => {
  await withCluster(3, {
    budgetMs: 230_000,
    label: "strand-cluster-rack-",
    overrides: { "replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector" },
    brokerOverrides: (id) => ({ "broker.rack": `rack-${id}` }),
  }, async (c) => {
    await createTopic(c, TOPIC, { assignment: [[0, 1, 2]] });
    await c.waitFullyReplicated(TOPIC, 0, 30_000);
    assert.equal(await c.leaderOf(TOPIC, 0), 0);

    const produced = await rdkafka(["produce", c.liveBootstrap, TOPIC, String(COUNT)]);
    assert.deepEqual(produced, { unflushed: 0, errors: [] });
    const expected = Array.from({ length: COUNT }, (_, i) => String(i));

    const far = await rdkafka(["consume", c.liveBootstrap, TOPIC, String(COUNT), "rack-2", "60"]);
    assert.deepEqual(far.errors, []);
    assert.deepEqual(far.values, expected, "the rack-2 consumer read every record, in order");
    const [out0, out1, out2] = [await bytesOut(c, 0), await bytesOut(c, 1), await bytesOut(c, 2)];
    console.log(`consumer bytes out after the rack-2 consumer: broker 0 (leader) ${out0}, broker 1 ${out1}, broker 2 ${out2}`);
    assert.ok(out2 > COUNT, "the follower in rack-2 served the records");
    assert.equal(out0, 0, "the leader sent the consumer away without records");
    assert.equal(out1, 0);

    const near = await rdkafka(["consume", c.liveBootstrap, TOPIC, String(COUNT), "rack-0", "60"]);
    assert.deepEqual(near.values, expected);
    const leaderOut = await bytesOut(c, 0);
    console.log(`consumer bytes out after the rack-0 consumer: broker 0 (leader) ${leaderOut}, broker 2 ${await bytesOut(c, 2)}`);
    assert.ok(leaderOut > COUNT, "a consumer in the leader's rack reads the leader");
    assert.equal(await bytesOut(c, 2), out2, "and not the rack-2 follower");
  });
});
