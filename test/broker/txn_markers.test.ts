// The partition side of transactions over real sockets against a real broker (ZooKeeper, so
// inter-broker requests exist; SASL PLAIN with Kafka's AclAuthorizer: admin is a super user, so
// it may send inter-broker requests as a broker does with CLUSTER_ACTION; alice may not).
// Hand-built transactional batches are produced; WriteTxnMarkers (27) is sent as a transaction
// coordinator sends it. A read_committed Fetch stops at the last stable offset while a
// transaction is open, and goes on after its commit; aborted records come back with
// abortedTransactions (a read_committed client drops them), a read_uncommitted Fetch has them
// and no list; ListOffsets read_committed answers the last stable offset; markers from alice are
// CLUSTER_AUTHORIZATION_FAILED (until alice gets ALTER on the cluster, which Kafka 3.8 accepts too), a stale coordinator epoch TRANSACTION_COORDINATOR_FENCED, an old
// producer epoch INVALID_PRODUCER_EPOCH, an unknown producer's marker is written (as Kafka does);
// a clean restart keeps the open transaction.
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ErrorCode } from "../../src/util/errors.ts";
import { AclOperation, clusterResourceName, ResourceType } from "../../src/authorizer/mod.ts";
import { grant, saslAclBroker } from "../helpers/acls.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { saslLogin } from "../helpers/sasl.ts";
import { committedValues, fetchIsolated, listLatest, plainBatch, produceAs, txnBatch, valuesOf, writeMarker } from "../helpers/txn.ts";
import { createTopic, produce, WireClient } from "../helpers/wire.ts";
import { sharedZooKeeper, skipUnlessZooKeeper } from "../helpers/zookeeper.ts";

const zk = sharedZooKeeper();
const T = "txn-part";

async function login(b: TestBroker, user: string, password: string): Promise<WireClient> {
  const c = await WireClient.connect(b.port);
  assert.equal((await saslLogin(c, "PLAIN", user, password)).errorCode, 0, `${user} logs in`);
  return c;
}

async function startZkBroker(dir?: string): Promise<TestBroker> {
  const server = await zk.get();
  // Hand-built transactions (no coordinator behind their producer ids): KIP-890's verification off.
  return await startBroker({ ...saslAclBroker, "transaction.partition.verification.enable": "false", "sasl.mechanism.inter.broker.protocol": "PLAIN", "zookeeper.connect": `127.0.0.1:${server.port}/strand-txn-part`, "zookeeper.session.timeout.ms": "6000" }, dir);
}

async function waitLeader(c: WireClient, topic: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const r = await produce(c, topic, 0, plainBatch(1, "plain-"));
    if (r.errorCode === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`${topic}-0 got no leader`);
}

test("transactions over the wire: last stable offset, read_committed Fetch and ListOffsets, aborted ranges, marker authorization and fencing, clean restart", { skip: skipUnlessZooKeeper(), timeout: 180_000 }, async () => {
  let b = await startZkBroker();
  let admin = await login(b, "admin", "admin-secret");
  const alice = await login(b, "alice", "alice-secret");
  try {
    assert.equal((await createTopic(admin, T)).errorCode, 0);
    await waitLeader(admin, T); // offset 0: plain-0
    const p1 = 4000n;
    const p2 = 4001n;
    // Producer 1 opens a transaction at 1; a plain record follows at 3.
    assert.equal((await produceAs(admin, "hand-built", T, 0, txnBatch(p1, 0, 0, 2, "c"))).baseOffset, 1n);
    assert.equal((await produce(admin, T, 0, plainBatch(1, "after-"))).errorCode, 0);
    let rc = await fetchIsolated(admin, T, 0n, 1);
    assert.equal(rc.errorCode, 0);
    assert.equal(rc.highWatermark, 4n);
    assert.equal(rc.lastStableOffset, 1n, "the open transaction holds the last stable offset at its first offset");
    assert.deepEqual(valuesOf(rc.records), ["plain-0"], "read_committed stops at the last stable offset");
    assert.deepEqual(rc.abortedTransactions, []);
    let ru = await fetchIsolated(admin, T, 0n, 0);
    assert.deepEqual(valuesOf(ru.records), ["plain-0", "c0", "c1", "after-0"], "read_uncommitted reads to the high watermark");
    assert.equal(ru.lastStableOffset, 1n, "every answer carries the last stable offset");
    assert.equal(ru.abortedTransactions, null);
    assert.deepEqual(await listLatest(admin, T, 1), { errorCode: 0, offset: 1n });
    assert.deepEqual(await listLatest(admin, T, 0), { errorCode: 0, offset: 4n });
    // A read_committed fetch at the last stable offset gets nothing, and no error.
    rc = await fetchIsolated(admin, T, 1n, 1);
    assert.equal(rc.errorCode, 0);
    assert.deepEqual(valuesOf(rc.records), []);

    // alice is no broker: refused, nothing written.
    const refused = await writeMarker(alice, { producerId: p1, producerEpoch: 0, committed: true, coordinatorEpoch: 0, partitions: [[T, 0]] });
    assert.deepEqual(refused, { [`${T}-0`]: ErrorCode.CLUSTER_AUTHORIZATION_FAILED });
    assert.equal((await fetchIsolated(admin, T, 0n, 1)).lastStableOffset, 1n);
    // Kafka 3.8 lets ALTER on the cluster send it too (then CLUSTER_ACTION is not asked).
    await grant(b, "User:alice", AclOperation.ALTER, ResourceType.CLUSTER, clusterResourceName);
    assert.deepEqual(await writeMarker(alice, { producerId: 999_998n, producerEpoch: 0, committed: false, coordinatorEpoch: 0, partitions: [[T, 0]] }), { [`${T}-0`]: 0 });
    assert.equal((await fetchIsolated(admin, T, 0n, 1)).lastStableOffset, 1n, "a marker of another producer leaves the transaction open");

    // The coordinator commits: marker at 5 (alice's at 4); read_committed now reads it all.
    assert.deepEqual(await writeMarker(admin, { producerId: p1, producerEpoch: 0, committed: true, coordinatorEpoch: 3, partitions: [[T, 0]] }), { [`${T}-0`]: 0 });
    rc = await fetchIsolated(admin, T, 0n, 1);
    assert.equal(rc.lastStableOffset, 6n);
    assert.deepEqual(committedValues(rc), ["plain-0", "c0", "c1", "after-0"]);
    assert.deepEqual(await listLatest(admin, T, 1), { errorCode: 0, offset: 6n });

    // Fencing: an older coordinator epoch, an older producer epoch; an unknown partition.
    const fenced = await writeMarker(admin, { producerId: p1, producerEpoch: 0, committed: false, coordinatorEpoch: 2, partitions: [[T, 0], ["no-such-topic", 0]] });
    assert.deepEqual(fenced, { [`${T}-0`]: ErrorCode.TRANSACTION_COORDINATOR_FENCED, "no-such-topic-0": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
    assert.equal((await produceAs(admin, "hand-built", T, 0, txnBatch(p1, 1, 0, 1, "e1-"))).errorCode, 0, "producer 1 bumped to epoch 1");
    const oldEpoch = await writeMarker(admin, { producerId: p1, producerEpoch: 0, committed: false, coordinatorEpoch: 3, partitions: [[T, 0]] });
    assert.deepEqual(oldEpoch, { [`${T}-0`]: ErrorCode.INVALID_PRODUCER_EPOCH });
    // A producer this partition never saw: Kafka writes its marker; nothing is unstable for it.
    assert.deepEqual(await writeMarker(admin, { producerId: 999_999n, producerEpoch: 0, committed: false, coordinatorEpoch: 0, partitions: [[T, 0]] }), { [`${T}-0`]: 0 });

    // Producer 2's transaction is aborted; producer 1's (epoch 1, at 6) is still open.
    const p2Base = (await produceAs(admin, "hand-built", T, 0, txnBatch(p2, 0, 0, 3, "a"))).baseOffset;
    assert.deepEqual(await writeMarker(admin, { producerId: p2, producerEpoch: 0, committed: false, coordinatorEpoch: 0, partitions: [[T, 0]] }), { [`${T}-0`]: 0 });
    rc = await fetchIsolated(admin, T, 0n, 1);
    assert.equal(rc.lastStableOffset, 6n, "producer 1's new transaction is open at 6");
    assert.deepEqual(await writeMarker(admin, { producerId: p1, producerEpoch: 1, committed: true, coordinatorEpoch: 3, partitions: [[T, 0]] }), { [`${T}-0`]: 0 });
    rc = await fetchIsolated(admin, T, 0n, 1);
    assert.equal(rc.lastStableOffset, rc.highWatermark);
    assert.deepEqual(rc.abortedTransactions, [{ producerId: p2, firstOffset: p2Base }]);
    assert.deepEqual(committedValues(rc), ["plain-0", "c0", "c1", "after-0", "e1-0"], "a read_committed client drops the aborted records");
    ru = await fetchIsolated(admin, T, 0n, 0);
    assert.deepEqual(valuesOf(ru.records), ["plain-0", "c0", "c1", "after-0", "e1-0", "a0", "a1", "a2"], "read_uncommitted sees them");
    assert.equal(ru.abortedTransactions, null);
    // Fetch v4 (the first with isolation_level) answers the same.
    assert.deepEqual((await fetchIsolated(admin, T, 0n, 1, 4)).abortedTransactions, [{ producerId: p2, firstOffset: p2Base }]);

    // A transaction left open across a clean restart.
    const p3Base = (await produceAs(admin, "hand-built", T, 0, txnBatch(4002n, 0, 0, 2, "open"))).baseOffset;
    const dir = b.logDir;
    admin.close();
    alice.close();
    await b.stop(true);
    b = await startZkBroker(dir);
    admin = await login(b, "admin", "admin-secret");
    await waitLeader(admin, T);
    rc = await fetchIsolated(admin, T, 0n, 1);
    assert.equal(rc.lastStableOffset, p3Base, "the open transaction survived the restart");
    assert.deepEqual(rc.abortedTransactions, [{ producerId: p2, firstOffset: p2Base }], "served from the .txnindex");
    assert.ok(existsSync(join(dir, `${T}-0`)) && readdirSync(join(dir, `${T}-0`)).some((n) => n.endsWith(".txnindex")));
    assert.deepEqual(await writeMarker(admin, { producerId: 4002n, producerEpoch: 0, committed: true, coordinatorEpoch: 0, partitions: [[T, 0]] }), { [`${T}-0`]: 0 });
    rc = await fetchIsolated(admin, T, 0n, 1);
    assert.equal(rc.lastStableOffset, rc.highWatermark);
    assert.deepEqual(committedValues(rc).slice(-3), ["open0", "open1", "plain-0"], "committed after the restart (plain-0: the leader probe)");
  } finally {
    admin.close();
    alice.close();
    await b.stop();
    await zk.stop();
  }
});
