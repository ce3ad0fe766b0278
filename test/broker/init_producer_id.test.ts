// InitProducerId (22) over real sockets: every version v0-4 advertised and answered with a new
// id and epoch 0; ids never repeat across connections and a restart; the malformed id/epoch pair,
// the empty transactional id and one whose coordinator is not loaded answered with Kafka's codes; the block
// in the registry in Kafka's JSON (the transactional path is in txn_wiring.test.ts). Authorization with real ACLs (KafkaApis 3.8): IDEMPOTENT_WRITE
// on the cluster, or WRITE on any topic; a transactional id needs WRITE on it. With ZooKeeper cut
// off (a TCP proxy), ids come from the block at hand, then a retriable code, never a closed
// connection.
import assert from "node:assert/strict";
import { test } from "node:test";
import { AclOperation as Op, ResourceType as Res } from "../../src/authorizer/mod.ts";
import { ApiVersionsApi, InitProducerIdApi } from "../../src/protocol/api/mod.ts";
import { ProducerIdBlockZNode } from "../../src/registry/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { grant, revokeAll, saslAclBroker } from "../helpers/acls.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { saslLogin } from "../helpers/sasl.ts";
import { WireClient } from "../helpers/wire.ts";
import { skipUnlessZooKeeper, startProxy, startZooKeeper } from "../helpers/zookeeper.ts";

const idempotent = { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 };

async function init(c: WireClient, version: number, body: Partial<typeof idempotent> | Record<string, unknown> = {}) {
  return await c.request(InitProducerIdApi, version, { ...idempotent, ...body }) as { errorCode: number; producerId: bigint; producerEpoch: number };
}

test("InitProducerId v0-4: a new id, epoch 0, never the same twice, across connections and a restart", async () => {
  const b = await startBroker();
  try {
    let c = await WireClient.connect(b.port);
    const versions = await c.request(ApiVersionsApi, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" });
    const k = (versions.apiKeys as { apiKey: number; minVersion: number; maxVersion: number }[]).find((x) => x.apiKey === 22);
    assert.deepEqual(k, { apiKey: 22, minVersion: 0, maxVersion: 4 }, "advertised v0-4");
    const ids: bigint[] = [];
    for (let v = 0; v <= 4; v++) {
      const r = await init(c, v);
      assert.deepEqual([r.errorCode, r.producerEpoch], [0, 0], `v${v}`);
      ids.push(r.producerId);
    }
    // KIP-360's bump: v3+ naming its current id and epoch still gets a new id without a transactional id.
    const bumped = await init(c, 4, { producerId: ids[4], producerEpoch: 0 });
    assert.deepEqual([bumped.errorCode, bumped.producerEpoch], [0, 0]);
    assert.notEqual(bumped.producerId, ids[4]);
    ids.push(bumped.producerId);
    const other = await WireClient.connect(b.port);
    for (let i = 0; i < 50; i++) ids.push((await init(i % 2 === 0 ? c : other, 3)).producerId);
    other.close();
    assert.equal(new Set(ids).size, ids.length, "no id twice");
    const session = b.registrySession();
    const block = ProducerIdBlockZNode.decode((await session.getData(ProducerIdBlockZNode.path)).data);
    await session.close();
    assert.ok(block !== null && block.assignedBrokerId === 0 && block.size === 1000, "Kafka's block JSON, taken by broker 0");
    c.close();

    await b.restart();
    c = await WireClient.connect(b.port);
    const after = await init(c, 4);
    assert.equal(after.errorCode, 0);
    const maxBefore = ids.reduce((m, x) => (x > m ? x : m), -1n);
    assert.ok(after.producerId > maxBefore, `after a restart ${after.producerId} is past every id handed out (${maxBefore})`);
    c.close();
  } finally {
    await b.stop();
  }
});

test("InitProducerId: half an id/epoch pair is INVALID_REQUEST; an empty transactional id INVALID_REQUEST; a transactional id before its coordinator exists NOT_COORDINATOR (retriable; the client finds its coordinator first)", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    const none = (r: { producerId: bigint; producerEpoch: number }) => assert.deepEqual([r.producerId, r.producerEpoch], [-1n, -1]);
    let r = await init(c, 3, { producerId: -1n, producerEpoch: 3 });
    assert.equal(r.errorCode, ErrorCode.INVALID_REQUEST);
    none(r);
    r = await init(c, 4, { producerId: 17n, producerEpoch: -1 });
    assert.equal(r.errorCode, ErrorCode.INVALID_REQUEST);
    r = await init(c, 2, { transactionalId: "" });
    assert.equal(r.errorCode, ErrorCode.INVALID_REQUEST);
    r = await init(c, 4, { transactionalId: "tx-1" });
    assert.equal(r.errorCode, ErrorCode.NOT_COORDINATOR);
    none(r);
    assert.equal((await init(c, 4)).errorCode, 0, "the connection still answers");
  } finally {
    c.close();
    await b.stop();
  }
});

async function login(b: TestBroker, user: string, password: string): Promise<WireClient> {
  const c = await WireClient.connect(b.port);
  assert.equal((await saslLogin(c, "PLAIN", user, password)).errorCode, 0, `login of ${user}`);
  return c;
}

test("InitProducerId with ACLs: IDEMPOTENT_WRITE on the cluster or WRITE on some topic; a transactional id needs WRITE on it", async () => {
  const b = await startBroker(saslAclBroker);
  const alice = await login(b, "alice", "alice-secret");
  const admin = await login(b, "admin", "admin-secret");
  try {
    await revokeAll(b);
    let r = await init(alice, 4);
    assert.deepEqual([r.errorCode, r.producerId], [ErrorCode.CLUSTER_AUTHORIZATION_FAILED, -1n], "nothing granted");
    assert.equal((await init(admin, 4)).errorCode, 0, "the super user");
    await grant(b, "User:alice", Op.READ, Res.TOPIC, "t");
    assert.equal((await init(alice, 4)).errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "READ on a topic is not enough");
    await grant(b, "User:alice", Op.WRITE, Res.TOPIC, "t");
    r = await init(alice, 4);
    assert.deepEqual([r.errorCode, r.producerEpoch], [0, 0], "WRITE on one topic (it need not exist)");
    await revokeAll(b);
    await grant(b, "User:alice", Op.IDEMPOTENT_WRITE, Res.CLUSTER, "kafka-cluster");
    assert.equal((await init(alice, 0)).errorCode, 0, "IDEMPOTENT_WRITE on the cluster");
    // A transactional id: its own ACL, whatever the cluster grants.
    assert.equal((await init(alice, 4, { transactionalId: "tx" })).errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    await grant(b, "User:alice", Op.WRITE, Res.TRANSACTIONAL_ID, "tx");
    assert.equal((await init(alice, 4, { transactionalId: "tx" })).errorCode, ErrorCode.NOT_COORDINATOR, "authorized; no FindCoordinator yet, so no __transaction_state partition is loaded here");
  } finally {
    alice.close();
    admin.close();
    await b.stop();
  }
});

test("InitProducerId with ZooKeeper out of reach: the ids at hand are still handed out, then COORDINATOR_LOAD_IN_PROGRESS (retriable, connection kept); served again once it is back", { skip: skipUnlessZooKeeper(), timeout: 180_000 }, async () => {
  const zk = await startZooKeeper();
  const proxy = await startProxy(zk.port);
  const b = await startBroker({ "zookeeper.connect": proxy.connectString, "zookeeper.session.timeout.ms": "6000" });
  const c = await WireClient.connect(b.port);
  try {
    const ids = new Set<bigint>();
    const take = async () => {
      const r = await init(c, 4);
      if (r.errorCode === 0) {
        assert.ok(!ids.has(r.producerId), `id ${r.producerId} handed out twice`);
        ids.add(r.producerId);
      }
      return r.errorCode;
    };
    for (let i = 0; i < 950; i++) assert.equal(await take(), 0);
    // Past 90% of the first block the next one is taken in the background; then ZooKeeper goes.
    await new Promise((r) => setTimeout(r, 500));
    proxy.block();
    let code = 0;
    let served = 0;
    for (; code === 0 && served < 5_000; served++) code = await take();
    assert.equal(code, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, `after ${served} more ids`);
    assert.ok(served >= 1_000, `the prefetched block was handed out while ZooKeeper was away (${served})`);
    assert.equal(await take(), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, "still retriable, the connection kept");
    proxy.unblock();
    const deadline = Date.now() + 60_000;
    while ((code = await take()) !== 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    assert.equal(code, 0, "ids again once ZooKeeper is back");
    const max = [...ids].reduce((m, x) => (x > m ? x : m), -1n);
    // Blocks 0 and 1 used up, block 2 taken once back: every id from 0 up, none skipped, none twice.
    assert.deepEqual([max, ids.size], [2000n, 2001]);
  } finally {
    c.close();
    await b.stop();
    await proxy.close();
    await zk.destroy();
  }
});
