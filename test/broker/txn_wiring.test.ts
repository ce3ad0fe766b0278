// The transaction coordinator wired into a real broker, over real sockets: ApiVersions advertises
// AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, DescribeTransactions and ListTransactions;
// FindCoordinator key type 1 creates __transaction_state and names this broker; InitProducerId
// with a transactional id bumps the epoch and fences (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH below
// v4); AddPartitionsToTxn / AddOffsetsToTxn / EndTxn move the transaction as Kafka's coordinator
// does. Then the same APIs with real ACLs (KafkaApis 3.8's checks): FindCoordinator key type 1
// needs TRANSACTIONAL_ID DESCRIBE, InitProducerId/AddPartitionsToTxn/AddOffsetsToTxn/EndTxn
// TRANSACTIONAL_ID WRITE (+ topic WRITE, group READ), DescribeTransactions / ListTransactions
// TRANSACTIONAL_ID DESCRIBE.
import assert from "node:assert/strict";
import { test } from "node:test";
import { AclOperation as Op, ResourceType as Res } from "../../src/authorizer/mod.ts";
import {
  AddOffsetsToTxnApi,
  AddPartitionsToTxnApi,
  ApiVersionsApi,
  DescribeTransactionsApi,
  EndTxnApi,
  FindCoordinatorApi,
  ListTransactionsApi,
  TxnOffsetCommitApi,
} from "../../src/protocol/api/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { verifyTransactionalProduce } from "../../src/broker/txn_verify.ts";
import { grant, revokeAll, saslAclBroker } from "../helpers/acls.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { findCoordinator } from "../helpers/groups.ts";
import { plainLogin } from "../helpers/sasl.ts";
import { addPartitions, committedValues, fetchIsolated, findTxnCoordinator, initTxn, partitionCodes, produceAs, txnBatch, valuesOf, writeMarker } from "../helpers/txn.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";

async function describe(c: WireClient, id: string) {
  const r = await c.request(DescribeTransactionsApi, 0, { transactionalIds: [id] });
  return (r.transactionStates as { errorCode: number; transactionState: string; producerEpoch: number; topics: { topic: string; partitions: number[] }[] }[])[0];
}

test("transactions wired: advertised APIs, FindCoordinator key type 1, InitProducerId epoch bumps and fencing, AddPartitions/AddOffsets/EndTxn, Describe/List", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    const versions = await c.request(ApiVersionsApi, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" });
    const keys = new Map((versions.apiKeys as { apiKey: number; minVersion: number; maxVersion: number }[]).map((k) => [k.apiKey, [k.minVersion, k.maxVersion]]));
    assert.deepEqual([24, 25, 26, 65, 66].map((k) => keys.get(k)), [[0, 5], [0, 4], [0, 4], [0, 0], [0, 1]]);

    const found = await findTxnCoordinator(c, "tx");
    assert.deepEqual([found.errorCode, found.nodeId, found.port], [0, 0, b.port], "this broker coordinates tx");
    const batched = await findTxnCoordinator(c, "other-tx", 4);
    assert.deepEqual([batched.errorCode, batched.nodeId], [0, 0], "v4 batched keys");
    assert.ok(b.broker.services.metadata.getTopic("__transaction_state") !== undefined, "__transaction_state created on first use");
    const badType = await c.request(FindCoordinatorApi, 3, { key: "tx", keyType: 7 });
    assert.equal(badType.errorCode, ErrorCode.INVALID_REQUEST);

    const first = await initTxn(c, "tx");
    assert.deepEqual([first.errorCode, first.producerEpoch], [0, 0]);
    const second = await initTxn(c, "tx");
    assert.deepEqual([second.errorCode, second.producerId, second.producerEpoch], [0, first.producerId, 1], "same id, epoch bumped");
    // KIP-360: naming the current id/epoch bumps; naming an older epoch is fenced.
    const third = await initTxn(c, "tx", 4, { producerId: second.producerId, producerEpoch: 1 });
    assert.deepEqual([third.errorCode, third.producerEpoch], [0, 2]);
    assert.equal((await initTxn(c, "tx", 4, { producerId: 999_999n, producerEpoch: 0 })).errorCode, ErrorCode.PRODUCER_FENCED);
    assert.equal((await initTxn(c, "tx", 3, { producerId: 999_999n, producerEpoch: 0 })).errorCode, ErrorCode.INVALID_PRODUCER_EPOCH, "v3 does not know PRODUCER_FENCED");
    assert.equal((await initTxn(c, "tx", 4, { producerId: -1n, producerEpoch: 0 })).errorCode, ErrorCode.INVALID_REQUEST, "half a pair");
    assert.equal((await initTxn(c, "tx", 4, undefined, 2_000_000_000)).errorCode, ErrorCode.INVALID_TRANSACTION_TIMEOUT, "past transaction.max.timeout.ms");

    assert.equal((await createTopic(c, "t", { numPartitions: 2 })).errorCode, 0);
    assert.deepEqual(partitionCodes(await addPartitions(c, "tx", third, [{ name: "t", partitions: [0, 1] }])), { "t-0": 0, "t-1": 0 });
    assert.deepEqual(partitionCodes(await addPartitions(c, "tx", { ...third, producerEpoch: 1 }, [{ name: "t", partitions: [0] }], 1)), { "t-0": ErrorCode.INVALID_PRODUCER_EPOCH });
    assert.deepEqual(partitionCodes(await addPartitions(c, "tx", third, [{ name: "nope", partitions: [0] }, { name: "t", partitions: [0] }])), {
      "nope-0": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      "t-0": ErrorCode.OPERATION_NOT_ATTEMPTED,
    });
    const offsets = await c.request(AddOffsetsToTxnApi, 3, { transactionalId: "tx", producerId: third.producerId, producerEpoch: third.producerEpoch, groupId: "g" });
    assert.equal(offsets.errorCode, 0);
    let d = await describe(c, "tx");
    assert.equal(d.transactionState, "Ongoing");
    assert.deepEqual(d.topics.map((t) => t.topic).sort(), ["__consumer_offsets", "t"]);
    assert.deepEqual(d.topics.find((t) => t.topic === "t")!.partitions.sort(), [0, 1]);
    const listed = await c.request(ListTransactionsApi, 1, { stateFilters: ["Ongoing", "Bogus"], producerIdFilters: [], durationFilter: -1n });
    assert.deepEqual(listed.unknownStateFilters, ["Bogus"]);
    assert.deepEqual((listed.transactionStates as { transactionalId: string }[]).map((t) => t.transactionalId), ["tx"]);
    assert.equal((await describe(c, "never")).errorCode, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);

    // EndTxn: answered once PrepareCommit is in __transaction_state; a fenced epoch is refused.
    const fenced = await c.request(EndTxnApi, 3, { transactionalId: "tx", producerId: third.producerId, producerEpoch: 1, committed: true });
    assert.equal(fenced.errorCode, ErrorCode.PRODUCER_FENCED);
    const end = await c.request(EndTxnApi, 3, { transactionalId: "tx", producerId: third.producerId, producerEpoch: third.producerEpoch, committed: true });
    assert.equal(end.errorCode, 0);
    d = await describe(c, "tx");
    assert.ok(["PrepareCommit", "CompleteCommit"].includes(d.transactionState), d.transactionState);
    const again = await c.request(EndTxnApi, 3, { transactionalId: "tx", producerId: third.producerId, producerEpoch: third.producerEpoch, committed: false });
    assert.ok(([ErrorCode.INVALID_TXN_STATE, ErrorCode.CONCURRENT_TRANSACTIONS] as number[]).includes(again.errorCode as number), `aborting a commit: ${again.errorCode}`);
  } finally {
    c.close();
    await b.stop();
  }
});

const login = (b: TestBroker, user: string, password: string) => plainLogin(b.port, user, password);

test("transaction APIs with real ACLs: TRANSACTIONAL_ID DESCRIBE for FindCoordinator/Describe/List, WRITE for Init/AddPartitions/AddOffsets/EndTxn, topic WRITE, group READ", async () => {
  const b = await startBroker(saslAclBroker);
  const alice = await login(b, "alice", "alice-secret");
  const admin = await login(b, "admin", "admin-secret");
  try {
    await revokeAll(b);
    assert.equal((await createTopic(admin, "t")).errorCode, 0);
    const denied = await alice.request(FindCoordinatorApi, 3, { key: "tx", keyType: 1 });
    assert.deepEqual([denied.errorCode, denied.nodeId], [ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1]);
    assert.equal((await findTxnCoordinator(admin, "tx")).errorCode, 0, "the super user");
    assert.equal((await initTxn(alice, "tx")).errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    await grant(b, "User:alice", Op.DESCRIBE, Res.TRANSACTIONAL_ID, "tx");
    assert.equal((await findTxnCoordinator(alice, "tx")).errorCode, 0, "DESCRIBE is enough to find it");
    assert.equal((await initTxn(alice, "tx")).errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "DESCRIBE is not WRITE");
    await grant(b, "User:alice", Op.WRITE, Res.TRANSACTIONAL_ID, "tx");
    const p = await initTxn(alice, "tx");
    assert.deepEqual([p.errorCode, p.producerEpoch], [0, 0]);

    assert.deepEqual(partitionCodes(await addPartitions(alice, "tx", p, [{ name: "t", partitions: [0] }])), { "t-0": ErrorCode.TOPIC_AUTHORIZATION_FAILED });
    assert.deepEqual(partitionCodes(await addPartitions(alice, "tx2", p, [{ name: "t", partitions: [0] }])), { "t-0": ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED });
    await grant(b, "User:alice", Op.WRITE, Res.TOPIC, "t");
    assert.deepEqual(partitionCodes(await addPartitions(alice, "tx", p, [{ name: "t", partitions: [0] }])), { "t-0": 0 });
    // Transactional records need WRITE on the transactional id they are sent under (topic WRITE is not enough).
    assert.equal((await produceAs(alice, "tx2", "t", 0, txnBatch(p.producerId, p.producerEpoch, 0, 1, "x"))).errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    assert.equal((await produceAs(alice, "tx", "t", 0, txnBatch(p.producerId, p.producerEpoch, 0, 1, "x"))).errorCode, 0);
    // v4 (a partition leader's verification) is inter-broker only: nobody's in single-node mode, the super user's neither.
    const v4 = await alice.request(AddPartitionsToTxnApi, 4, { transactions: [{ transactionalId: "tx", producerId: p.producerId, producerEpoch: p.producerEpoch, verifyOnly: true, topics: [{ name: "t", partitions: [0] }] }] });
    assert.equal(v4.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    const v4admin = await admin.request(AddPartitionsToTxnApi, 4, { transactions: [{ transactionalId: "tx", producerId: p.producerId, producerEpoch: p.producerEpoch, verifyOnly: true, topics: [{ name: "t", partitions: [0] }] }] });
    assert.equal(v4admin.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);

    const addOffsets = () => alice.request(AddOffsetsToTxnApi, 3, { transactionalId: "tx", producerId: p.producerId, producerEpoch: p.producerEpoch, groupId: "g" });
    assert.equal((await addOffsets()).errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    await grant(b, "User:alice", Op.READ, Res.GROUP, "g");
    assert.equal((await addOffsets()).errorCode, 0);

    const endOther = await alice.request(EndTxnApi, 3, { transactionalId: "tx2", producerId: p.producerId, producerEpoch: p.producerEpoch, committed: false });
    assert.equal(endOther.errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);

    // Describe / List: only ids the principal may DESCRIBE.
    assert.equal((await initTxn(admin, "hidden")).errorCode, 0);
    assert.equal((await describe(alice, "hidden")).errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    assert.equal((await describe(alice, "tx")).transactionState, "Ongoing");
    const list = (c: WireClient) => c.request(ListTransactionsApi, 0, { stateFilters: [], producerIdFilters: [] });
    assert.deepEqual(((await list(alice)).transactionStates as { transactionalId: string }[]).map((t) => t.transactionalId), ["tx"]);
    assert.deepEqual(((await list(admin)).transactionStates as { transactionalId: string }[]).map((t) => t.transactionalId), ["hidden", "tx"]);
  } finally {
    alice.close();
    admin.close();
    await b.stop();
  }
});

const produceTxn = async (c: WireClient, transactionalId: string | null, topic: string, partition: number, records: Uint8Array) =>
  (await produceAs(c, transactionalId, topic, partition, records)).errorCode;

test("transactional produce, bad input (KIP-890 verification): not added to the transaction INVALID_TXN_STATE, no transactional id TRANSACTIONAL_ID_AUTHORIZATION_FAILED, an old epoch INVALID_PRODUCER_EPOCH, a client's WriteTxnMarkers refused; nothing appended; then the real thing commits", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "t", { numPartitions: 2 })).errorCode, 0);
    assert.equal((await findTxnCoordinator(c, "tx")).errorCode, 0);
    const p = await initTxn(c, "tx");
    assert.equal(p.errorCode, 0);
    const end = () => b.broker.services.replicaManager.getPartition("t", 0)!.log.logEndOffset;
    assert.equal(await produceTxn(c, "tx", "t", 0, txnBatch(p.producerId, p.producerEpoch, 0, 3, "x")), ErrorCode.INVALID_TXN_STATE, "no AddPartitionsToTxn");
    assert.equal(await produceTxn(c, null, "t", 0, txnBatch(p.producerId, p.producerEpoch, 0, 3, "x")), ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "no transactional id");
    assert.equal(await produceTxn(c, "other", "t", 0, txnBatch(p.producerId, p.producerEpoch, 0, 3, "x")), ErrorCode.INVALID_PRODUCER_ID_MAPPING, "another id's producer");
    assert.equal(end(), 0, "nothing appended");
    assert.deepEqual(partitionCodes(await addPartitions(c, "tx", p, [{ name: "t", partitions: [0] }])), { "t-0": 0 });
    assert.equal(await produceTxn(c, "tx", "t", 0, txnBatch(p.producerId, p.producerEpoch - 1, 0, 3, "x")), ErrorCode.INVALID_PRODUCER_EPOCH, "an older epoch");
    assert.equal(await produceTxn(c, "tx", "t", 1, txnBatch(p.producerId, p.producerEpoch, 0, 3, "x")), ErrorCode.INVALID_TXN_STATE, "partition 1 was not added");
    // A marker from a client (not a broker) is refused.
    const forged = await writeMarker(c, { producerId: p.producerId, producerEpoch: p.producerEpoch, committed: true, coordinatorEpoch: 0, partitions: [["t", 0]] });
    assert.deepEqual(forged, { "t-0": ErrorCode.CLUSTER_AUTHORIZATION_FAILED });
    assert.equal(end(), 0, "nothing appended");
    // TxnOffsetCommit before AddOffsetsToTxn: the group's offsets partition is not in the transaction.
    const txnCommit = (epoch: number) => c.request(TxnOffsetCommitApi, 3, {
      transactionalId: "tx", groupId: "g", producerId: p.producerId, producerEpoch: epoch, generationId: -1, memberId: "", groupInstanceId: null,
      topics: [{ name: "t", partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
    await findCoordinator(c, "g");
    const codeOf = (r: Record<string, unknown>) => (r.topics as { partitions: { errorCode: number }[] }[])[0].partitions[0].errorCode;
    assert.equal(codeOf(await txnCommit(p.producerEpoch)), ErrorCode.INVALID_TXN_STATE, "no AddOffsetsToTxn");
    assert.equal((await c.request(AddOffsetsToTxnApi, 3, { transactionalId: "tx", producerId: p.producerId, producerEpoch: p.producerEpoch, groupId: "g" })).errorCode, 0);
    assert.equal(codeOf(await txnCommit(p.producerEpoch - 1)), ErrorCode.INVALID_PRODUCER_EPOCH, "an older epoch");
    assert.equal(codeOf(await txnCommit(p.producerEpoch)), 0, "after AddOffsetsToTxn");

    assert.equal(await produceTxn(c, "tx", "t", 0, txnBatch(p.producerId, p.producerEpoch, 0, 3, "v")), 0);
    assert.equal(await produceTxn(c, "tx", "t", 0, txnBatch(p.producerId, p.producerEpoch, 3, 2, "w")), 0, "the second batch: the transaction is ongoing here");
    assert.deepEqual(valuesOf((await fetchIsolated(c, "t", 0n, 1)).records), [], "read_committed sees nothing before the commit");
    const e = await c.request(EndTxnApi, 3, { transactionalId: "tx", producerId: p.producerId, producerEpoch: p.producerEpoch, committed: true });
    assert.equal(e.errorCode, 0);
    let f = await fetchIsolated(c, "t", 0n, 1);
    for (let i = 0; i < 100 && valuesOf(f.records).length < 5; i++) {
      await new Promise((r) => setTimeout(r, 50));
      f = await fetchIsolated(c, "t", 0n, 1);
    }
    assert.deepEqual(valuesOf(f.records), ["v0", "v1", "v2", "w0", "w1"]);
    assert.equal(f.lastStableOffset, 6n, "five records and the marker");
    for (let i = 0; i < 100 && b.broker.services.txnCoordinator!.describe("tx").txn!.state !== "CompleteCommit"; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(b.broker.services.txnCoordinator!.describe("tx").txn!.state, "CompleteCommit");
  } finally {
    c.close();
    await b.stop();
  }
});

test("a producer that begins a transaction and dies: the coordinator aborts it after its timeout (epoch bumped), read_committed moves past it, the next transaction commits", async () => {
  const b = await startBroker({ "transaction.abort.timed.out.transaction.cleanup.interval.ms": "200" });
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "t")).errorCode, 0);
    assert.equal((await findTxnCoordinator(c, "dies")).errorCode, 0);
    const dead = await WireClient.connect(b.port);
    const p = await initTxn(dead, "dies", 4, undefined, 1000);
    assert.equal(p.errorCode, 0);
    assert.deepEqual(partitionCodes(await addPartitions(dead, "dies", p, [{ name: "t", partitions: [0] }])), { "t-0": 0 });
    assert.equal(await produceTxn(dead, "dies", "t", 0, txnBatch(p.producerId, p.producerEpoch, 0, 4, "lost")), 0);
    dead.close(); // the producer dies mid-transaction
    // Another producer's committed records after it: held behind the open transaction.
    const other = await initTxn(c, "lives");
    assert.deepEqual(partitionCodes(await addPartitions(c, "lives", other, [{ name: "t", partitions: [0] }])), { "t-0": 0 });
    assert.equal(await produceTxn(c, "lives", "t", 0, txnBatch(other.producerId, other.producerEpoch, 0, 2, "kept")), 0);
    assert.equal((await c.request(EndTxnApi, 3, { transactionalId: "lives", producerId: other.producerId, producerEpoch: other.producerEpoch, committed: true })).errorCode, 0);
    let f = await fetchIsolated(c, "t", 0n, 1);
    assert.equal(f.lastStableOffset, 0n, "the dead producer's transaction holds the last stable offset");
    for (let i = 0; i < 200 && (f.lastStableOffset < 8n); i++) {
      await new Promise((r) => setTimeout(r, 50));
      f = await fetchIsolated(c, "t", 0n, 1);
    }
    // 4 lost + 2 kept + the commit marker + the abort marker.
    assert.equal(f.lastStableOffset, 8n, "aborted after its 1 s timeout");
    assert.deepEqual(committedValues(f), ["kept0", "kept1"], "read_committed: the aborted records dropped");
    assert.deepEqual((f.abortedTransactions ?? []).map((a) => [a.producerId, a.firstOffset]), [[p.producerId, 0n]]);
    const d = b.broker.services.txnCoordinator!.describe("dies").txn!;
    assert.deepEqual([d.state, d.producerEpoch], ["CompleteAbort", p.producerEpoch + 1], "the abort fenced the producer");
    // The dead producer's zombie gets fenced.
    const zombie = await c.request(EndTxnApi, 3, { transactionalId: "dies", producerId: p.producerId, producerEpoch: p.producerEpoch, committed: true });
    assert.equal(zombie.errorCode, ErrorCode.PRODUCER_FENCED);
  } finally {
    c.close();
    await b.stop();
  }
});

test("hanging transactions on the admin API and /metrics: an open transaction older than transaction.max.timeout.ms (the coordinator's abort check not run yet) is shown and counted", async () => {
  const b = await startBroker({
    "admin.listeners": "http://127.0.0.1:0",
    "transaction.max.timeout.ms": "1000",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "3600000",
  });
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "t")).errorCode, 0);
    assert.equal((await findTxnCoordinator(c, "hang")).errorCode, 0);
    const p = await initTxn(c, "hang", 4, undefined, 1000);
    assert.equal(p.errorCode, 0);
    assert.deepEqual(partitionCodes(await addPartitions(c, "hang", p, [{ name: "t", partitions: [0] }])), { "t-0": 0 });
    assert.equal(await produceTxn(c, "hang", "t", 0, txnBatch(p.producerId, p.producerEpoch, 0, 2, "h")), 0);
    const view = async () => await (await fetch(`${b.adminUrl}/v1/transactions`)).json() as { coordinator: { transactional_id: string; state: string }[]; open_on_partitions: { topic: string; producer_id: string; first_offset: number; hanging: boolean }[]; hanging: number };
    let v = await view();
    assert.deepEqual(v.coordinator.map((t) => [t.transactional_id, t.state]), [["hang", "Ongoing"]]);
    assert.deepEqual(v.open_on_partitions.map((o) => [o.topic, o.producer_id, o.first_offset, o.hanging]), [["t", String(p.producerId), 0, false]]);
    await new Promise((r) => setTimeout(r, 1300));
    v = await view();
    assert.equal(v.hanging, 1, "older than transaction.max.timeout.ms");
    const metrics = await (await fetch(`${b.adminUrl}/metrics`)).text();
    assert.match(metrics, /^strand_hanging_transactions 1$/m);
    assert.match(metrics, /^strand_open_transactions 1$/m);
    assert.match(metrics, /^strand_txn_coordinator_transactions\{state="Ongoing"\} 1$/m);
  } finally {
    c.close();
    await b.stop();
  }
});

test("the verification guard (Kafka's VerificationGuard): a marker for the producer written while the coordinator was asked refuses the append (NOT_ENOUGH_REPLICAS, retriable); without one the append goes ahead", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "t", { numPartitions: 2 })).errorCode, 0);
    assert.equal((await findTxnCoordinator(c, "g-tx")).errorCode, 0);
    const p = await initTxn(c, "g-tx");
    assert.deepEqual(partitionCodes(await addPartitions(c, "g-tx", p, [{ name: "t", partitions: [0, 1] }])), { "t-0": 0, "t-1": 0 });
    const s = b.broker.services;
    const producer = { producerId: p.producerId, producerEpoch: p.producerEpoch };
    const v = await verifyTransactionalProduce(s, null, "g-tx", [{ topic: "t", partition: 0, producer }, { topic: "t", partition: 1, producer }]);
    // The transaction ends on partition 0 meanwhile (its marker is written there).
    const marker = { producerId: p.producerId, producerEpoch: p.producerEpoch, coordinatorEpoch: s.replicaManager.getPartition("__transaction_state", s.txnCoordinator!.partitionFor("g-tx"))!.leaderEpoch, committed: false };
    assert.equal(await s.replicaManager.appendTxnMarker("t", 0, marker, 10_000), 0);
    const codes = v.recheck();
    assert.deepEqual([codes.get("0:t"), codes.get("1:t")], [ErrorCode.NOT_ENOUGH_REPLICAS, 0]);
  } finally {
    c.close();
    await b.stop();
  }
});
