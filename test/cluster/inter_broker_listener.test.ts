// Three broker processes on a real ZooKeeper, each with a client listener (PLAINTEXT) and a
// separate inter-broker listener (BROKER, inter.broker.listener.name): the controller's requests,
// the replica fetches and controlled shutdown all travel on BROKER, so a leader SIGKILLed under
// acks=all load loses nothing and the restarted broker rejoins the ISR; meanwhile, on the client
// listener, the inter-broker requests are refused whatever they carry (even the registry's own
// controller epochs and broker epochs): StopReplica answers CLUSTER_AUTHORIZATION_FAILED and
// deletes nothing, a follower fetch with a real broker's id TOPIC_AUTHORIZATION_FAILED.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Kafka, logLevel } from "kafkajs";
import { stopReplicaRequest } from "../../src/controller/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import { FetchApi, StopReplicaApi } from "../../src/protocol/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { ZooKeeperClient } from "../../src/zk/mod.ts";
import { skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { leaderKilledUnderAcksAll } from "../helpers/kafkajs_roundtrip.ts";
import { parseBatches, text } from "../helpers/record_batch.ts";
import { fetchOnce, WireClient } from "../helpers/wire.ts";

const skip = skipUnlessZooKeeper();
const dec = new TextDecoder();

test("cluster with a separate inter-broker listener: failover under acks=all loses nothing; the client listener refuses inter-broker requests", { skip, timeout: 240_000 }, async () => {
  await withCluster(3, { budgetMs: 230_000, label: "strand-cluster-ibl-", interBrokerListener: true }, async (c) => {
    const kafka = () => new Kafka({ clientId: "ibl-cluster", brokers: c.liveBootstrap.split(","), logLevel: logLevel.NOTHING, retry: { retries: 10 } });
    const acked = await leaderKilledUnderAcksAll(c, kafka, "ibl", "the inter-broker listener");

    const zk = await ZooKeeperClient.connect(await loadPlatform(), { connectString: `${c.zk.connectString}${c.chroot}`, sessionTimeoutMs: 10_000 });
    let controllerId: number;
    let controllerEpoch: number;
    const czxid = new Map<number, bigint>();
    try {
      controllerId = JSON.parse(dec.decode((await zk.getData("/controller")).data)).brokerid as number;
      controllerEpoch = Number(dec.decode((await zk.getData("/controller_epoch")).data));
      for (const b of c.brokers) czxid.set(b.id, (await zk.exists(`/brokers/ids/${b.id}`))!.czxid);
    } finally {
      await zk.close();
    }
    for (const b of c.brokers) {
      const w = await WireClient.connect(b.port);
      try {
        const del = [{ topic: "ibl", partition: 0, deletePartition: true, leaderEpoch: -2 }];
        for (const [version, body] of [
          [0, stopReplicaRequest(0, 1, -1n, del, 0)],
          [3, stopReplicaRequest(controllerId, controllerEpoch, czxid.get(b.id)!, del, 3)],
          [3, stopReplicaRequest(controllerId, 2147483647, czxid.get(b.id)!, del, 3)],
        ] as const) {
          const r = await w.request(StopReplicaApi, version, body);
          assert.equal(r.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, `broker ${b.id} StopReplica v${version}`);
        }
        const other = c.brokers.find((x) => x.id !== b.id)!.id;
        const fetched = await w.request(FetchApi, 11, {
          replicaId: other,
          maxWaitMs: 0,
          minBytes: 0,
          maxBytes: 1 << 20,
          isolationLevel: 0,
          sessionId: 0,
          sessionEpoch: -1,
          topics: [{ topic: "ibl", partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
          forgottenTopicsData: [],
          rackId: "",
        });
        const codes = (fetched.responses as { partitions: { errorCode: number }[] }[])[0].partitions.map((p) => p.errorCode);
        assert.deepEqual(codes, [ErrorCode.TOPIC_AUTHORIZATION_FAILED], `broker ${b.id}: a client fetching as broker ${other}`);
      } finally {
        w.close();
      }
      assert.ok(existsSync(join(b.logDir, "ibl-0")), `broker ${b.id} still holds ibl-0`);
      assert.match(b.output(), /refused: not from a broker/);
    }

    // Every acknowledged record is still there, once, in order, read from the leader.
    const leader = await c.waitLeader("ibl", 0, 30_000);
    const w = await WireClient.connect(c.broker(leader).port);
    try {
      const got: string[] = [];
      while (got.length < acked.length) {
        const p = await fetchOnce(w, "ibl", 0, BigInt(got.length), { version: 10 });
        assert.equal(p.errorCode, 0);
        const values = parseBatches(p.records ?? new Uint8Array(0)).flatMap((batch) => batch.records)
          .filter((r) => r.offset >= BigInt(got.length)).map((r) => text(r.value) ?? "");
        if (values.length === 0) break;
        got.push(...values);
      }
      assert.deepEqual(got, acked);
    } finally {
      w.close();
    }
  });
});
