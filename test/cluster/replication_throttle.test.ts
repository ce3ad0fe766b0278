// Replication throttling in a real two-broker cluster (KIP-73, as kafka-reassign-partitions.sh
// --throttle sets it up): the topic names its leader replica in leader.replication.throttled.replicas
// and its follower replica in follower.replication.throttled.replicas; the leader's
// leader.replication.throttled.rate is set for broker 0 and follower.replication.throttled.rate for
// every broker (the cluster default), both through IncrementalAlterConfigs. A follower that was
// down while ~600 KB were written comes back and catches up at the throttled rate: well behind
// seconds after it started fetching (unthrottled, it takes well under a second). Once the rates are
// deleted it catches up and rejoins the ISR, with the leader's bytes.
import assert from "node:assert/strict";
import { test } from "node:test";
import { IncrementalAlterConfigsApi, ProduceApi } from "../../src/protocol/api/mod.ts";
import { skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { WireClient } from "../helpers/wire.ts";
import { createTopic, sleep } from "./workload.ts";

const skip = skipUnlessZooKeeper();
const BROKER = 4;
const SET = 0;
const DELETE = 1;
const RATE = 10_000; // bytes per second, each side

async function alterBroker(port: number, resourceName: string, op: number, value: string | null): Promise<void> {
  const c = await WireClient.connect(port);
  try {
    const res = await c.request(IncrementalAlterConfigsApi, 1, {
      resources: [{
        resourceType: BROKER,
        resourceName,
        configs: [
          ...(resourceName === "0" ? [{ name: "leader.replication.throttled.rate", configOperation: op, value }] : []),
          ...(resourceName === "" ? [{ name: "follower.replication.throttled.rate", configOperation: op, value }] : []),
        ],
      }],
      validateOnly: false,
    });
    assert.deepEqual((res.responses as { errorCode: number; errorMessage: string | null }[]).map((r) => [r.errorCode, r.errorMessage]), [[0, null]]);
  } finally {
    c.close();
  }
}

test("cluster: a throttled follower catches up at leader/follower.replication.throttled.rate, and at full speed once the rates are removed", { skip, timeout: 200_000 }, async () => {
  await withCluster(2, { budgetMs: 190_000, label: "strand-cluster-throttle-", overrides: { "replica.fetch.max.bytes": "8192" } }, async (c) => {
    const topic = "throttled";
    await createTopic(c, topic, {
      assignment: [[0, 1]],
      configs: { "leader.replication.throttled.replicas": "0:0", "follower.replication.throttled.replicas": "0:1" },
    });
    await c.waitFullyReplicated(topic, 0, 30_000);
    await c.broker(1).kill("SIGTERM");
    await c.waitFor(async () => (await c.partitionState(topic, 0))?.isr.join() === "0", 60_000, "ISR [0] once broker 1 stopped");

    // ~600 KB while the follower is away.
    const p = await WireClient.connect(c.broker(0).port);
    let total = 0;
    try {
      for (let i = 0; i < 120; i++) {
        const res = await p.request(ProduceApi, 8, {
          transactionalId: null,
          acks: 1,
          timeoutMs: 10_000,
          topicData: [{ name: topic, partitionData: [{ index: 0, records: buildBatch(valueRecords(5, `b${i}-`, 1000)) }] }],
        });
        const r = (res.responses as { partitionResponses: { errorCode: number }[] }[])[0].partitionResponses[0];
        assert.equal(r.errorCode, 0);
        total += 5;
      }
    } finally {
      p.close();
    }
    await alterBroker(c.broker(0).port, "0", SET, String(RATE));
    await alterBroker(c.broker(0).port, "", SET, String(RATE));

    await c.restart(1);
    const followerEnd = async () => (await c.broker(1).adminPartitions(topic))?.find((v) => v.partition === 0)?.log_end_offset ?? null;
    await c.waitFor(async () => ((await followerEnd()) ?? 0) > 0, 60_000, "broker 1 fetching again");
    // Throttled, ~10 KB/s after a first burst of at most one 10 s window's worth (~100 KB): far
    // from the ~600 KB the leader holds.
    await sleep(4_000);
    const behind = await followerEnd();
    assert.ok(behind !== null && behind < total / 2, `throttled follower at ${behind} of ${total} after 4 s`);
    assert.deepEqual((await c.partitionState(topic, 0))?.isr, [0], "not back in the ISR while throttled");

    await alterBroker(c.broker(0).port, "0", DELETE, null);
    await alterBroker(c.broker(0).port, "", DELETE, null);
    const done = await c.waitFullyReplicated(topic, 0, 60_000);
    assert.equal(done.highWatermark, total);
  });
});
