// The transaction handlers AddPartitionsToTxn (24), AddOffsetsToTxn (25), EndTxn (26),
// DescribeTransactions (65) and ListTransactions (66) (also registered now: txn_wiring.test.ts
// repeats the ACL cases on a real broker), called as the dispatcher would call them (request and
// answer through the codec) over the real TransactionCoordinator (manual clock, in-memory
// __transaction_state, fake marker sender) and Kafka's ACL evaluation (AclCache, as the
// authorizer): KafkaApis 3.8's checks and error codes for each version.
import assert from "node:assert/strict";
import { test } from "node:test";
import { addPartitionsToTxnHandler } from "../../src/broker/api/24_add_partitions_to_txn.ts";
import { addOffsetsToTxnHandler } from "../../src/broker/api/25_add_offsets_to_txn.ts";
import { endTxnHandler } from "../../src/broker/api/26_end_txn.ts";
import { describeTransactionsHandler } from "../../src/broker/api/65_describe_transactions.ts";
import { listTransactionsHandler } from "../../src/broker/api/66_list_transactions.ts";
import { MetadataCache } from "../../src/broker/metadata_cache.ts";
import type { BrokerServices } from "../../src/broker/services.ts";
import { AclCache, AclOperation, AclPermissionType, PatternType, ResourceType } from "../../src/authorizer/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { txnHarness } from "../coordinator/txn_harness.ts";
import { recordingLogger } from "../helpers/faulty_platform.ts";
import { callHandler } from "../helpers/handler_call.ts";

const call = (h: Parameters<typeof callHandler>[0], s: BrokerServices, version: number, body: Struct, principal = "User:alice") => callHandler(h, s, version, body, { principal });


function allow(acls: AclCache, type: ResourceType, name: string, ...ops: AclOperation[]): void {
  acls.set(
    { resourceType: type, name, patternType: PatternType.LITERAL },
    ops.map((operation) => ({ principal: "User:alice", host: "*", operation, permissionType: AclPermissionType.ALLOW })),
  );
}

async function setup(withAcls: boolean) {
  const h = await txnHarness();
  const metadata = new MetadataCache(0);
  const state = (partition: number) => ({ topic: "t", partition, topicId: new Uint8Array(16), controllerEpoch: 1, leader: 1, leaderEpoch: 0, isr: [1], replicas: [1], partitionEpoch: 0 });
  metadata.updateTopic({ name: "t", topicId: new Uint8Array(16).fill(1), isInternal: false, partitions: [0, 1, 2].map(state), configs: {} });
  metadata.updateTopic({ name: "u", topicId: new Uint8Array(16).fill(2), isInternal: false, partitions: [{ ...state(0), topic: "u" }], configs: {} });
  const acls = withAcls ? new AclCache({ superUsers: ["User:admin"], allowEveryoneIfNoAclFound: false }) : null;
  // A ZooKeeper-mode broker whose inter-broker listener is BROKER (v4+ is an inter-broker request: inter_broker.ts).
  const config = { zookeeperConnect: "127.0.0.1:2181", security: { interBrokerListener: "BROKER" } };
  const s = { metadata, authorizer: acls, txnCoordinator: h.c, config, clock: { monotonicMs: () => 0 }, logger: recordingLogger() } as unknown as BrokerServices;
  return { h, s, acls };
}

const v3 = (id: string, producerId: bigint, producerEpoch: number, topics: { name: string; partitions: number[] }[]) => ({
  v3AndBelowTransactionalId: id,
  v3AndBelowProducerId: producerId,
  v3AndBelowProducerEpoch: producerEpoch,
  v3AndBelowTopics: topics,
});

function codes(answer: Struct): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of answer.resultsByTopicV3AndBelow as { name: string; resultsByPartition: { partitionIndex: number; partitionErrorCode: number }[] }[]) {
    for (const p of t.resultsByPartition) out[`${t.name}-${p.partitionIndex}`] = p.partitionErrorCode;
  }
  return out;
}

test("AddPartitionsToTxn v0-3: the coordinator's answer for every partition; PRODUCER_FENCED is INVALID_PRODUCER_EPOCH below v2", async () => {
  const { h, s } = await setup(false);
  const a = await h.c.handleInitProducerId("tx", 60_000, null);
  for (const version of [0, 1, 2, 3]) {
    const ok = await call(addPartitionsToTxnHandler, s, version, v3("tx", a.producerId, 0, [{ name: "t", partitions: [0, 1] }]));
    assert.deepEqual(codes(ok), { "t-0": 0, "t-1": 0 }, `v${version}`);
    const fenced = await call(addPartitionsToTxnHandler, s, version, v3("tx", a.producerId, 9, [{ name: "t", partitions: [2] }]));
    assert.deepEqual(codes(fenced), { "t-2": version < 2 ? ErrorCode.INVALID_PRODUCER_EPOCH : ErrorCode.PRODUCER_FENCED }, `v${version}`);
  }
  // An unknown partition fails the request: the rest OPERATION_NOT_ATTEMPTED, nothing added.
  const unknown = await call(addPartitionsToTxnHandler, s, 3, v3("tx", a.producerId, 0, [{ name: "t", partitions: [2, 7] }, { name: "nope", partitions: [0] }]));
  assert.deepEqual(codes(unknown), { "t-2": ErrorCode.OPERATION_NOT_ATTEMPTED, "t-7": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "nope-0": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
  assert.ok(!h.c.describe("tx").txn!.partitions.some((p) => p.partition === 2));
});

test("AddPartitionsToTxn with ACLs: TRANSACTIONAL_ID WRITE first, then WRITE per topic; internal topics are never writable this way", async () => {
  const { h, s, acls } = await setup(true);
  const a = await h.c.handleInitProducerId("tx", 60_000, null);
  const req = v3("tx", a.producerId, 0, [{ name: "t", partitions: [0] }, { name: "u", partitions: [0] }]);
  assert.deepEqual(codes(await call(addPartitionsToTxnHandler, s, 3, req)), { "t-0": ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "u-0": ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED });
  allow(acls!, ResourceType.TRANSACTIONAL_ID, "tx", AclOperation.WRITE);
  allow(acls!, ResourceType.TOPIC, "t", AclOperation.WRITE);
  assert.deepEqual(codes(await call(addPartitionsToTxnHandler, s, 3, req)), { "t-0": ErrorCode.OPERATION_NOT_ATTEMPTED, "u-0": ErrorCode.TOPIC_AUTHORIZATION_FAILED });
  allow(acls!, ResourceType.TOPIC, "u", AclOperation.WRITE);
  assert.deepEqual(codes(await call(addPartitionsToTxnHandler, s, 3, req)), { "t-0": 0, "u-0": 0 });
  allow(acls!, ResourceType.TOPIC, "__consumer_offsets", AclOperation.WRITE);
  const internal = await call(addPartitionsToTxnHandler, s, 3, v3("tx", a.producerId, 0, [{ name: "__consumer_offsets", partitions: [0] }]));
  assert.deepEqual(codes(internal), { "__consumer_offsets-0": ErrorCode.TOPIC_AUTHORIZATION_FAILED });
  // The super user may do it all (but not write internal topics through AddPartitionsToTxn either).
  assert.deepEqual(codes(await call(addPartitionsToTxnHandler, s, 3, v3("tx", a.producerId, 0, [{ name: "t", partitions: [1] }]), "User:admin")), { "t-1": 0 });
});

test("AddPartitionsToTxn v4+ (from partition leaders): CLUSTER_ACTION or CLUSTER_AUTHORIZATION_FAILED; verifyOnly answers per partition; batched transactions", async () => {
  const { h, s, acls } = await setup(true);
  const a = await h.c.handleInitProducerId("tx", 60_000, null);
  assert.equal(await h.c.handleAddPartitions("tx", a.producerId, 0, [{ topic: "t", partition: 0 }]), 0);
  const body = {
    transactions: [
      { transactionalId: "tx", producerId: a.producerId, producerEpoch: 0, verifyOnly: true, topics: [{ name: "t", partitions: [0, 1] }] },
      { transactionalId: "other", producerId: 5n, producerEpoch: 0, verifyOnly: true, topics: [{ name: "t", partitions: [2] }] },
    ],
  };
  const denied = await call(addPartitionsToTxnHandler, s, 5, body);
  assert.deepEqual([denied.errorCode, denied.resultsByTransaction], [ErrorCode.CLUSTER_AUTHORIZATION_FAILED, []]);
  allow(acls!, ResourceType.CLUSTER, "kafka-cluster", AclOperation.CLUSTER_ACTION);
  const r = await call(addPartitionsToTxnHandler, s, 5, body);
  assert.equal(r.errorCode, 0);
  // Without an authorizer only the inter-broker listener may send it; in single-node mode nobody.
  const open = { ...s, authorizer: null } as unknown as BrokerServices;
  assert.equal((await callHandler(addPartitionsToTxnHandler, open, 5, body, { listener: "CLIENT" })).errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
  assert.equal((await callHandler(addPartitionsToTxnHandler, open, 5, body, { listener: "BROKER" })).errorCode, 0);
  const single = { ...s, config: { zookeeperConnect: null, security: { interBrokerListener: "BROKER" } } } as unknown as BrokerServices;
  assert.equal((await call(addPartitionsToTxnHandler, single, 5, body)).errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "CLUSTER_ACTION does not help in single-node mode");
  const flat = (r.resultsByTransaction as { transactionalId: string; topicResults: { name: string; resultsByPartition: { partitionIndex: number; partitionErrorCode: number }[] }[] }[])
    .flatMap((t) => t.topicResults.flatMap((x) => x.resultsByPartition.map((p) => `${t.transactionalId} ${x.name}-${p.partitionIndex} ${p.partitionErrorCode}`)));
  assert.deepEqual(flat, [`tx t-0 0`, `tx t-1 ${ErrorCode.TRANSACTION_ABORTABLE}`, `other t-2 ${ErrorCode.INVALID_PRODUCER_ID_MAPPING}`]);
});

test("AddOffsetsToTxn: TRANSACTIONAL_ID WRITE, then GROUP READ; the group's offsets partition joins the transaction", async () => {
  const { h, s, acls } = await setup(true);
  const a = await h.c.handleInitProducerId("tx", 60_000, null);
  const body = { transactionalId: "tx", producerId: a.producerId, producerEpoch: 0, groupId: "g" };
  assert.equal((await call(addOffsetsToTxnHandler, s, 3, body)).errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
  allow(acls!, ResourceType.TRANSACTIONAL_ID, "tx", AclOperation.WRITE);
  assert.equal((await call(addOffsetsToTxnHandler, s, 3, body)).errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
  allow(acls!, ResourceType.GROUP, "g", AclOperation.READ);
  assert.equal((await call(addOffsetsToTxnHandler, s, 3, body)).errorCode, 0);
  assert.equal(h.c.describe("tx").txn!.partitions[0].topic, "__consumer_offsets");
  assert.equal((await call(addOffsetsToTxnHandler, s, 1, { ...body, producerEpoch: 4 })).errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);
  assert.equal((await call(addOffsetsToTxnHandler, s, 4, { ...body, producerEpoch: 4 })).errorCode, ErrorCode.PRODUCER_FENCED);
});

test("EndTxn: TRANSACTIONAL_ID WRITE; commits through the coordinator; without a coordinator COORDINATOR_NOT_AVAILABLE", async () => {
  const { h, s, acls } = await setup(true);
  const a = await h.c.handleInitProducerId("tx", 60_000, null);
  assert.equal(await h.c.handleAddPartitions("tx", a.producerId, 0, [{ topic: "t", partition: 0 }]), 0);
  const body = { transactionalId: "tx", producerId: a.producerId, producerEpoch: 0, committed: true };
  assert.equal((await call(endTxnHandler, s, 3, body)).errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
  allow(acls!, ResourceType.TRANSACTIONAL_ID, "tx", AclOperation.WRITE);
  assert.equal((await call(endTxnHandler, s, 0, { ...body, producerEpoch: 3 })).errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);
  assert.equal((await call(endTxnHandler, s, 2, { ...body, producerEpoch: 3 })).errorCode, ErrorCode.PRODUCER_FENCED);
  assert.equal((await call(endTxnHandler, s, 4, body)).errorCode, 0);
  await h.clock.advance(0);
  assert.equal(h.c.describe("tx").txn!.state, "CompleteCommit");
  const none = { ...s, txnCoordinator: null } as BrokerServices;
  assert.equal((await call(endTxnHandler, none, 4, body)).errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE);
  assert.equal((await call(addOffsetsToTxnHandler, none, 4, { ...body, groupId: "g" })).errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
});

test("DescribeTransactions: DESCRIBE on each id, topics only as far as DESCRIBE on them; unknown ids TRANSACTIONAL_ID_NOT_FOUND", async () => {
  const { h, s, acls } = await setup(true);
  const a = await h.c.handleInitProducerId("tx", 45_000, null);
  assert.equal(await h.c.handleAddPartitions("tx", a.producerId, 0, [{ topic: "t", partition: 1 }, { topic: "u", partition: 0 }, { topic: "t", partition: 0 }]), 0);
  const start = h.c.describe("tx").txn!.txnStartTimestampMs;
  allow(acls!, ResourceType.TRANSACTIONAL_ID, "tx", AclOperation.DESCRIBE);
  allow(acls!, ResourceType.TRANSACTIONAL_ID, "nobody", AclOperation.DESCRIBE);
  allow(acls!, ResourceType.TOPIC, "t", AclOperation.DESCRIBE);
  const r = await call(describeTransactionsHandler, s, 0, { transactionalIds: ["tx", "nobody", "secret"] });
  const states = r.transactionStates as Struct[];
  assert.deepEqual(states[0], {
    errorCode: 0,
    transactionalId: "tx",
    transactionState: "Ongoing",
    transactionTimeoutMs: 45_000,
    transactionStartTimeMs: BigInt(start),
    producerId: a.producerId,
    producerEpoch: 0,
    topics: [{ topic: "t", partitions: [1, 0] }],
  });
  assert.deepEqual(states.slice(1).map((x) => [x.transactionalId, x.errorCode]), [["nobody", ErrorCode.TRANSACTIONAL_ID_NOT_FOUND], ["secret", ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]]);
});

test("ListTransactions: filters by state, producer id and duration (v1) as Kafka; unknown state names reported; only ids the principal may DESCRIBE", async () => {
  const { h, s, acls } = await setup(true);
  const a = await h.c.handleInitProducerId("tx-a", 60_000, null);
  await h.c.handleInitProducerId("tx-b", 60_000, null);
  await h.c.handleInitProducerId("tx-hidden", 60_000, null);
  assert.equal(await h.c.handleAddPartitions("tx-a", a.producerId, 0, [{ topic: "t", partition: 0 }]), 0);
  for (const id of ["tx-a", "tx-b"]) allow(acls!, ResourceType.TRANSACTIONAL_ID, id, AclOperation.DESCRIBE);
  const list = async (body: Struct, version = 1) => {
    const r = await call(listTransactionsHandler, s, version, { stateFilters: [], producerIdFilters: [], durationFilter: -1n, ...body });
    return { errorCode: r.errorCode, unknown: r.unknownStateFilters, ids: (r.transactionStates as Struct[]).map((t) => `${t.transactionalId}:${t.transactionState}`) };
  };
  assert.deepEqual(await list({}, 0), { errorCode: 0, unknown: [], ids: ["tx-a:Ongoing", "tx-b:Empty"] });
  assert.deepEqual(await list({ stateFilters: ["Ongoing", "Hanging"] }), { errorCode: 0, unknown: ["Hanging"], ids: ["tx-a:Ongoing"] });
  assert.deepEqual((await list({ producerIdFilters: [a.producerId] })).ids, ["tx-a:Ongoing"]);
  await h.clock.advance(5_000);
  // Running longer than 10 s: none yet (Empty ones have no start, so they count as old, as in Kafka).
  assert.deepEqual((await list({ durationFilter: 10_000n, stateFilters: ["Ongoing"] })).ids, []);
  assert.deepEqual((await list({ durationFilter: 1_000n, stateFilters: ["Ongoing"] })).ids, ["tx-a:Ongoing"]);
  assert.deepEqual((await list({ durationFilter: 10_000n })).ids, ["tx-b:Empty"]);
});
