// AlterPartition (56) outside a cluster, and the config that chooses it. On a single node nobody
// may send it, authorizer or not (src/broker/inter_broker.ts): refused CLUSTER_AUTHORIZATION_FAILED
// over a real socket, even for a principal granted CLUSTER_ACTION by a real ACL, and the
// partition's ISR is untouched. inter.broker.protocol.version: Kafka's release strings, >= 2.7
// sends AlterPartition (KIP-497), below keeps the leaders' own ZooKeeper writes; anything else
// stops start-up naming the key.
import assert from "node:assert/strict";
import { test } from "node:test";
import { AclOperation, ResourceType } from "../../src/authorizer/mod.ts";
import { ConfigError, parseBrokerConfig } from "../../src/broker/config.ts";
import { AlterPartitionApi, type Struct } from "../../src/protocol/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { grant, saslAclBroker } from "../helpers/acls.ts";
import { startBroker } from "../helpers/broker.ts";
import { saslLogin } from "../helpers/sasl.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";

const parse = (pairs: Record<string, string>) => parseBrokerConfig(new Map(Object.entries(pairs)));

function shrinkTo(brokerId: number, topic: string, isr: number[]): Struct {
  return { brokerId, brokerEpoch: -1n, topics: [{ topicName: topic, partitions: [{ partitionIndex: 0, leaderEpoch: 0, newIsr: isr, leaderRecoveryState: 0, partitionEpoch: 0 }] }] };
}

test("inter.broker.protocol.version: 2.7 and later (default 3.8-IV0) use AlterPartition, earlier the leaders' own writes; unknown versions stop start-up", () => {
  assert.equal(parse({}).config.replication.alterPartitionEnable, true);
  for (const v of ["2.7", "2.7-IV2", "2.8.1", "3.0", "3.8-IV0"]) assert.equal(parse({ "inter.broker.protocol.version": v }).config.replication.alterPartitionEnable, true, v);
  for (const v of ["0.8.2", "0.10.2-IV0", "1.1", "2.6", "2.6-IV0"]) assert.equal(parse({ "inter.broker.protocol.version": v }).config.replication.alterPartitionEnable, false, v);
  for (const v of ["3.9", "4.0", "2.x", "", "0.7"]) {
    assert.throws(() => parse({ "inter.broker.protocol.version": v }), (e: unknown) => e instanceof ConfigError && /inter\.broker\.protocol\.version/.test(e.message), v);
  }
});

test("AlterPartition on a single node: refused without an authorizer, and with a real ACL granting CLUSTER_ACTION; the ISR is untouched", async () => {
  const plain = await startBroker();
  try {
    const c = await WireClient.connect(plain.port);
    try {
      assert.equal((await createTopic(c, "t")).errorCode, 0);
      for (const v of [0, 1]) assert.equal((await c.request(AlterPartitionApi, v, shrinkTo(plain.broker.services.brokerId, "t", []))).errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      assert.deepEqual(plain.broker.services.replicaManager.getPartition("t", 0)!.state.isr, [plain.broker.services.brokerId]);
    } finally {
      c.close();
    }
  } finally {
    await plain.stop();
  }
  const b = await startBroker(saslAclBroker);
  try {
    const admin = await WireClient.connect(b.port);
    const alice = await WireClient.connect(b.port);
    try {
      assert.equal((await saslLogin(admin, "PLAIN", "admin", "admin-secret")).errorCode, 0);
      assert.equal((await saslLogin(alice, "PLAIN", "alice", "alice-secret")).errorCode, 0);
      assert.equal((await createTopic(admin, "t")).errorCode, 0);
      await grant(b, "User:alice", AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, "kafka-cluster");
      const r = await alice.request(AlterPartitionApi, 2, {
        brokerId: b.broker.services.brokerId,
        brokerEpoch: -1n,
        topics: [{ topicId: b.broker.services.metadata.getTopic("t")!.topicId, partitions: [{ partitionIndex: 0, leaderEpoch: 0, newIsr: [], leaderRecoveryState: 0, partitionEpoch: 0 }] }],
      });
      assert.deepEqual([r.errorCode, r.topics], [ErrorCode.CLUSTER_AUTHORIZATION_FAILED, []]);
      assert.equal((await admin.request(AlterPartitionApi, 1, shrinkTo(b.broker.services.brokerId, "t", []))).errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "a super user neither");
      assert.deepEqual(b.broker.services.replicaManager.getPartition("t", 0)!.state.isr, [b.broker.services.brokerId]);
    } finally {
      admin.close();
      alice.close();
    }
  } finally {
    await b.stop();
  }
});
