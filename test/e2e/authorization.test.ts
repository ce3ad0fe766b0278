// Every advertised client API, over a real SASL_PLAINTEXT socket as the PLAIN user alice: denied
// without the ACL (Kafka's code: TOPIC_AUTHORIZATION_FAILED 29, GROUP_AUTHORIZATION_FAILED 30,
// CLUSTER_AUTHORIZATION_FAILED 31, in the place Kafka answers it, and nothing changed, as the
// super user admin reads it back), partly denied with only some of the ACLs it needs, then allowed
// once granted. ACLs come from test/helpers/acls.ts grant(). A last check: the table covers every
// API the broker advertises except the ones that need no ACL and the inter-broker ones.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AclOperation as Op, ResourceType as Res } from "../../src/authorizer/mod.ts";
import {
  AlterClientQuotasApi,
  CreateAclsApi,
  DescribeClientQuotasApi,
  DescribeClusterApi,
  DeleteAclsApi,
  DescribeAclsApi,
  AlterConfigsApi,
  AlterPartitionReassignmentsApi,
  AlterUserScramCredentialsApi,
  ApiVersionsApi,
  CreatePartitionsApi,
  CreateTopicsApi,
  DeleteGroupsApi,
  DeleteRecordsApi,
  DeleteTopicsApi,
  DescribeConfigsApi,
  DescribeGroupsApi,
  DescribeLogDirsApi,
  DescribeProducersApi,
  DescribeUserScramCredentialsApi,
  ElectLeadersApi,
  FetchApi,
  FindCoordinatorApi,
  InitProducerIdApi,
  HeartbeatApi,
  IncrementalAlterConfigsApi,
  JoinGroupApi,
  LeaveGroupApi,
  ListGroupsApi,
  ListOffsetsApi,
  ListPartitionReassignmentsApi,
  MetadataApi,
  OffsetCommitApi,
  OffsetDeleteApi,
  OffsetFetchApi,
  OffsetForLeaderEpochApi,
  ProduceApi,
  SyncGroupApi,
  AddOffsetsToTxnApi,
  AddPartitionsToTxnApi,
  DescribeTransactionsApi,
  EndTxnApi,
  ListTransactionsApi,
  TxnOffsetCommitApi,
} from "../../src/protocol/api/mod.ts";
import type { ApiSchema, Struct } from "../../src/protocol/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { enableAcls, grant, revokeAll, saslAclBroker } from "../helpers/acls.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { commitOffsets, fetchOffsets, findCoordinator, subscriptionV0 } from "../helpers/groups.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { findTxnCoordinator, initTxn } from "../helpers/txn.ts";
import { saslLogin, scramUpsertion } from "../helpers/sasl.ts";
import { createTopic, listOffset, produce, WireClient } from "../helpers/wire.ts";

const ALICE = "User:alice";
const zeroId = new Uint8Array(16);
const OMITTED = -2147483648;

async function login(b: TestBroker, user: string, password: string): Promise<WireClient> {
  const c = await WireClient.connect(b.broker.port);
  const r = await saslLogin(c, "PLAIN", user, password);
  assert.equal(r.errorCode, 0, `login of ${user}`);
  return c;
}

type Grant = [Op, Res, string];
// deno-lint-ignore no-explicit-any
type Any = any;

interface Case {
  api: ApiSchema;
  version: number;
  request: () => Struct;
  /** The ACLs that let alice do it. */
  grants: Grant[];
  /** Checks the answer without any ACL. */
  denied: (r: Any) => void;
  /** Checks the answer once granted. */
  allowed: (r: Any) => void;
  /** What the super user reads back: the same before and after the denied request. */
  state?: () => Promise<unknown>;
  /** Denied with only some of the ACLs (or another request). */
  partial?: { grants: Grant[]; request?: () => Struct; check: (r: Any) => void }[];
}

const partition0 = (r: Any, topics = "responses", parts = "partitionResponses") => r[topics][0][parts][0];

const noAuthCodes = (r: unknown, where: string) => {
  const found: number[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === "object" && !(v instanceof Uint8Array)) {
      for (const [k, x] of Object.entries(v)) {
        if (/errorCode$/i.test(k) && typeof x === "number" && x >= 29 && x <= 31) found.push(x);
        else walk(x);
      }
    }
  };
  walk(r);
  assert.deepEqual(found, [], `${where}: no authorization error once granted`);
};

test("authorization: every client API denied without its ACL (Kafka's code, nothing changed) and allowed with it", async () => {
  const b = await startBroker(saslAclBroker);
  const admin = await login(b, "admin", "admin-secret");
  const alice = await login(b, "alice", "alice-secret");
  try {
    // Set up as the super user, before ACLs are on (and again after: super users pass).
    for (const t of ["t", "dr", "cp", "del"]) assert.equal((await createTopic(admin, t)).errorCode, 0, t);
    assert.equal((await produce(admin, "t", 0, buildBatch(valueRecords(3)))).errorCode, 0);
    assert.equal((await produce(admin, "dr", 0, buildBatch(valueRecords(3)))).errorCode, 0);
    await findCoordinator(admin, "g");
    assert.deepEqual(await commitOffsets(admin, "g", { t: { 0: 1n } }), [0]);
    assert.deepEqual(await commitOffsets(admin, "dg", { t: { 0: 1n } }), [0]);
    assert.deepEqual(await commitOffsets(admin, "od", { t: { 0: 1n } }), [0]);
    assert.equal((await findTxnCoordinator(admin, "tx")).errorCode, 0);
    const txp = await initTxn(admin, "tx");
    assert.equal(txp.errorCode, 0);
    const txnFields = { transactionalId: "tx", producerId: txp.producerId, producerEpoch: txp.producerEpoch };
    enableAcls(b);
    const delId = b.broker.services.metadata.getTopic("del")!.topicId;
    const carol = await scramUpsertion("carol", "SCRAM-SHA-256", "carol-secret");

    const adminMetadata = async (name: string) => {
      const r = await admin.request(MetadataApi, 12, { topics: [{ topicId: zeroId, name }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
      const t = (r.topics as Any[])[0];
      return { errorCode: t.errorCode, partitions: t.partitions.length };
    };
    const groupState = async (g: string) => {
      const r = await admin.request(DescribeGroupsApi, 5, { groups: [g], includeAuthorizedOperations: false });
      const d = (r.groups as Any[])[0];
      return { state: d.groupState, members: d.members.length };
    };
    const topicConfig = async (key: string) => {
      const r = await admin.request(DescribeConfigsApi, 4, { resources: [{ resourceType: 2, resourceName: "t", configurationKeys: [key] }] });
      return (r.results as Any[])[0].configs.map((c: Any) => c.value);
    };

    const cases: Case[] = [
      {
        api: ProduceApi,
        version: 9,
        request: () => ({ transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: "t", partitionData: [{ index: 0, records: buildBatch(valueRecords(1)) }] }] }),
        grants: [[Op.WRITE, Res.TOPIC, "t"]],
        denied: (r) => assert.equal(partition0(r).errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED),
        allowed: (r) => assert.equal(partition0(r).errorCode, 0),
        state: () => listOffset(admin, "t", 0, -1n),
      },
      {
        api: FetchApi,
        version: 12,
        request: () => ({
          replicaId: -1,
          maxWaitMs: 0,
          minBytes: 0,
          maxBytes: 1 << 20,
          isolationLevel: 0,
          sessionId: 0,
          sessionEpoch: -1,
          topics: [{ topic: "t", partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
          forgottenTopicsData: [],
          rackId: "",
        }),
        grants: [[Op.READ, Res.TOPIC, "t"]],
        denied: (r) => {
          const p = partition0(r, "responses", "partitions");
          assert.equal(p.errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
          assert.equal(p.records.length, 0);
        },
        allowed: (r) => {
          const p = partition0(r, "responses", "partitions");
          assert.equal(p.errorCode, 0);
          assert.ok(p.records.length > 0);
        },
      },
      {
        api: ListOffsetsApi,
        version: 7,
        request: () => ({ replicaId: -1, isolationLevel: 0, topics: [{ name: "t", partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }] }),
        grants: [[Op.DESCRIBE, Res.TOPIC, "t"]],
        denied: (r) => {
          assert.equal(partition0(r, "topics", "partitions").errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
          assert.equal(partition0(r, "topics", "partitions").offset, -1n);
        },
        allowed: (r) => assert.ok(partition0(r, "topics", "partitions").offset > 0n),
      },
      {
        // Anyone may describe the cluster; its authorized operations need DESCRIBE on it.
        api: DescribeClusterApi,
        version: 1,
        request: () => ({ includeClusterAuthorizedOperations: true, endpointType: 1 }),
        grants: [[Op.DESCRIBE, Res.CLUSTER, "kafka-cluster"]],
        denied: (r) => assert.deepEqual([r.errorCode, r.clusterAuthorizedOperations, r.brokers.length], [0, 0, 1]),
        allowed: (r) => assert.deepEqual([r.errorCode, r.clusterAuthorizedOperations, r.brokers.length], [0, 1 << Op.DESCRIBE, 1]),
      },
      {
        api: ListOffsetsApi,
        version: 0,
        request: () => ({ replicaId: -1, topics: [{ name: "t", partitions: [{ partitionIndex: 0, timestamp: -1n, maxNumOffsets: 1 }] }] }),
        grants: [[Op.DESCRIBE, Res.TOPIC, "t"]],
        denied: (r) => {
          assert.equal(partition0(r, "topics", "partitions").errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
          assert.deepEqual(partition0(r, "topics", "partitions").oldStyleOffsets, []);
        },
        allowed: (r) => assert.ok(partition0(r, "topics", "partitions").oldStyleOffsets[0] > 0n),
      },
      {
        api: MetadataApi,
        version: 12,
        request: () => ({ topics: [{ topicId: zeroId, name: "t" }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: true }),
        grants: [[Op.DESCRIBE, Res.TOPIC, "t"]],
        denied: (r) => {
          const t = r.topics[0];
          assert.equal(t.errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
          assert.deepEqual([t.name, [...t.topicId], t.partitions, t.topicAuthorizedOperations], ["t", [...zeroId], [], OMITTED]);
        },
        allowed: (r) => {
          assert.equal(r.topics[0].errorCode, 0);
          assert.equal(r.topics[0].partitions.length, 1);
          assert.equal(r.topics[0].topicAuthorizedOperations, 1 << Op.DESCRIBE);
        },
        partial: [{
          // Auto-creation needs CREATE: DESCRIBE alone answers 29, and nothing is created.
          grants: [[Op.DESCRIBE, Res.TOPIC, "auto"]],
          request: () => ({ topics: [{ topicId: zeroId, name: "auto" }], allowAutoTopicCreation: true, includeTopicAuthorizedOperations: false }),
          check: (r) => assert.equal(r.topics[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED),
        }],
      },
      {
        api: OffsetCommitApi,
        version: 8,
        request: () => ({
          groupId: "g",
          generationIdOrMemberEpoch: -1,
          memberId: "",
          groupInstanceId: null,
          topics: [{ name: "t", partitions: [{ partitionIndex: 0, committedOffset: 2n, committedLeaderEpoch: -1, committedMetadata: null }] }],
        }),
        grants: [[Op.READ, Res.GROUP, "g"], [Op.READ, Res.TOPIC, "t"]],
        denied: (r) => assert.equal(partition0(r, "topics", "partitions").errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED),
        allowed: (r) => assert.equal(partition0(r, "topics", "partitions").errorCode, 0),
        state: () => fetchOffsets(admin, "g", { t: [0] }),
        partial: [{ grants: [[Op.READ, Res.GROUP, "g"]], check: (r) => assert.equal(partition0(r, "topics", "partitions").errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED) }],
      },
      {
        api: OffsetFetchApi,
        version: 8,
        request: () => ({ groups: [{ groupId: "g", topics: [{ name: "t", partitionIndexes: [0] }] }], requireStable: false }),
        grants: [[Op.DESCRIBE, Res.GROUP, "g"], [Op.DESCRIBE, Res.TOPIC, "t"]],
        denied: (r) => assert.equal(r.groups[0].errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED),
        allowed: (r) => assert.ok(r.groups[0].topics[0].partitions[0].committedOffset >= 1n),
        partial: [
          {
            grants: [[Op.DESCRIBE, Res.GROUP, "g"]],
            check: (r) => {
              const p = r.groups[0].topics[0].partitions[0];
              assert.deepEqual([r.groups[0].errorCode, p.errorCode, p.committedOffset], [0, ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1n]);
            },
          },
          {
            // All topics: those without DESCRIBE are left out.
            grants: [[Op.DESCRIBE, Res.GROUP, "g"]],
            request: () => ({ groups: [{ groupId: "g", topics: null }], requireStable: false }),
            check: (r) => assert.deepEqual([r.groups[0].errorCode, r.groups[0].topics], [0, []]),
          },
        ],
      },
      {
        api: FindCoordinatorApi,
        version: 4,
        request: () => ({ keyType: 0, coordinatorKeys: ["g"] }),
        grants: [[Op.DESCRIBE, Res.GROUP, "g"]],
        denied: (r) => assert.deepEqual([r.coordinators[0].errorCode, r.coordinators[0].nodeId], [ErrorCode.GROUP_AUTHORIZATION_FAILED, -1]),
        allowed: (r) => assert.equal(r.coordinators[0].errorCode, 0),
      },
      {
        api: JoinGroupApi,
        version: 9,
        request: () => ({
          groupId: "jg",
          sessionTimeoutMs: 10_000,
          rebalanceTimeoutMs: 10_000,
          memberId: "",
          groupInstanceId: null,
          protocolType: "consumer",
          protocols: [{ name: "range", metadata: subscriptionV0(["t"]) }],
          reason: null,
        }),
        grants: [[Op.READ, Res.GROUP, "jg"]],
        denied: (r) => assert.deepEqual([r.errorCode, r.memberId, r.generationId], [ErrorCode.GROUP_AUTHORIZATION_FAILED, "", -1]),
        allowed: (r) => assert.equal(r.errorCode, ErrorCode.MEMBER_ID_REQUIRED),
        state: () => groupState("jg"),
      },
      {
        api: HeartbeatApi,
        version: 4,
        request: () => ({ groupId: "g", generationId: 1, memberId: "m", groupInstanceId: null }),
        grants: [[Op.READ, Res.GROUP, "g"]],
        denied: (r) => assert.equal(r.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED),
        allowed: (r) => assert.notEqual(r.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED),
      },
      {
        api: LeaveGroupApi,
        version: 5,
        request: () => ({ groupId: "g", members: [{ memberId: "m", groupInstanceId: null, reason: null }] }),
        grants: [[Op.READ, Res.GROUP, "g"]],
        denied: (r) => assert.deepEqual([r.errorCode, r.members], [ErrorCode.GROUP_AUTHORIZATION_FAILED, []]),
        allowed: (r) => assert.equal(r.members.length, 1),
      },
      {
        api: SyncGroupApi,
        version: 5,
        request: () => ({ groupId: "g", generationId: 1, memberId: "m", groupInstanceId: null, protocolType: "consumer", protocolName: "range", assignments: [] }),
        grants: [[Op.READ, Res.GROUP, "g"]],
        denied: (r) => assert.equal(r.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED),
        allowed: (r) => assert.notEqual(r.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED),
      },
      {
        api: DescribeGroupsApi,
        version: 5,
        request: () => ({ groups: ["g"], includeAuthorizedOperations: true }),
        grants: [[Op.DESCRIBE, Res.GROUP, "g"]],
        denied: (r) => {
          const g = r.groups[0];
          assert.deepEqual([g.errorCode, g.groupState, g.members, g.authorizedOperations], [ErrorCode.GROUP_AUTHORIZATION_FAILED, "", [], OMITTED]);
        },
        allowed: (r) => assert.deepEqual([r.groups[0].errorCode, r.groups[0].groupState, r.groups[0].authorizedOperations], [0, "Empty", 1 << Op.DESCRIBE]),
      },
      {
        api: ListGroupsApi,
        version: 4,
        request: () => ({ statesFilter: [] }),
        grants: [[Op.DESCRIBE, Res.GROUP, "g"]],
        denied: (r) => assert.deepEqual([r.errorCode, r.groups], [0, []]),
        allowed: (r) => assert.deepEqual(r.groups.map((g: Any) => g.groupId), ["g"]),
        partial: [{
          // DESCRIBE on the cluster lists every group (and is not "denied": a different grant).
          grants: [[Op.DESCRIBE, Res.CLUSTER, "kafka-cluster"]],
          check: (r) => assert.deepEqual(r.groups.map((g: Any) => g.groupId).sort(), ["dg", "g", "jg", "od"]),
        }],
      },
      {
        api: CreateTopicsApi,
        version: 7,
        request: () => ({ topics: [{ name: "made", numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false }),
        grants: [[Op.CREATE, Res.TOPIC, "made"], [Op.DESCRIBE_CONFIGS, Res.TOPIC, "made"]],
        denied: (r) => assert.equal(r.topics[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED),
        allowed: (r) => {
          const t = r.topics[0];
          assert.deepEqual([t.errorCode, t.topicConfigErrorCode, t.numPartitions], [0, 0, 1]);
          assert.ok(t.configs.length > 0);
        },
        state: () => adminMetadata("made"),
        partial: [{
          // CREATE on the cluster creates; without DESCRIBE_CONFIGS the configs are not shown.
          grants: [[Op.CREATE, Res.CLUSTER, "kafka-cluster"]],
          request: () => ({ topics: [{ name: "made2", numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false }),
          check: (r) => {
            const t = r.topics[0];
            assert.deepEqual([t.errorCode, t.topicConfigErrorCode, t.numPartitions, t.configs], [0, ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1, null]);
          },
        }],
      },
      {
        api: DeleteTopicsApi,
        version: 6,
        request: () => ({ topics: [{ name: "del", topicId: zeroId }], timeoutMs: 10_000 }),
        grants: [[Op.DELETE, Res.TOPIC, "del"]],
        denied: (r) => assert.deepEqual([r.responses[0].errorCode, r.responses[0].name], [ErrorCode.TOPIC_AUTHORIZATION_FAILED, "del"]),
        allowed: (r) => assert.equal(r.responses[0].errorCode, 0),
        state: () => adminMetadata("del"),
        partial: [{
          // By id, without DESCRIBE, the name is not revealed.
          grants: [],
          request: () => ({ topics: [{ name: null, topicId: delId }], timeoutMs: 10_000 }),
          check: (r) => assert.deepEqual([r.responses[0].errorCode, r.responses[0].name], [ErrorCode.TOPIC_AUTHORIZATION_FAILED, null]),
        }],
      },
      {
        api: DeleteRecordsApi,
        version: 2,
        request: () => ({ topics: [{ name: "dr", partitions: [{ partitionIndex: 0, offset: 1n }] }], timeoutMs: 5000 }),
        grants: [[Op.DELETE, Res.TOPIC, "dr"]],
        denied: (r) => assert.equal(partition0(r, "topics", "partitions").errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED),
        allowed: (r) => assert.deepEqual([partition0(r, "topics", "partitions").errorCode, partition0(r, "topics", "partitions").lowWatermark], [0, 1n]),
        state: () => listOffset(admin, "dr", 0, -2n),
      },
      {
        api: OffsetForLeaderEpochApi,
        version: 4,
        request: () => ({ replicaId: -1, topics: [{ topic: "t", partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] }] }),
        grants: [[Op.DESCRIBE, Res.TOPIC, "t"]],
        denied: (r) => assert.deepEqual([partition0(r, "topics", "partitions").errorCode, partition0(r, "topics", "partitions").endOffset], [ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1n]),
        allowed: (r) => assert.equal(partition0(r, "topics", "partitions").errorCode, 0),
      },
      {
        api: DescribeConfigsApi,
        version: 4,
        request: () => ({ resources: [{ resourceType: 2, resourceName: "t", configurationKeys: null }, { resourceType: 4, resourceName: "0", configurationKeys: null }] }),
        grants: [[Op.DESCRIBE_CONFIGS, Res.TOPIC, "t"], [Op.DESCRIBE_CONFIGS, Res.CLUSTER, "kafka-cluster"]],
        denied: (r) => assert.deepEqual(r.results.map((x: Any) => [x.errorCode, x.configs.length]), [[ErrorCode.TOPIC_AUTHORIZATION_FAILED, 0], [ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 0]]),
        allowed: (r) => assert.ok(r.results.every((x: Any) => x.errorCode === 0 && x.configs.length > 0)),
      },
      {
        api: AlterConfigsApi,
        version: 2,
        request: () => ({
          resources: [{ resourceType: 2, resourceName: "t", configs: [{ name: "retention.ms", value: "123456" }] }, { resourceType: 4, resourceName: "0", configs: [] }],
          validateOnly: false,
        }),
        grants: [[Op.ALTER_CONFIGS, Res.TOPIC, "t"], [Op.ALTER_CONFIGS, Res.CLUSTER, "kafka-cluster"]],
        denied: (r) => assert.deepEqual(r.responses.map((x: Any) => x.errorCode), [ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED]),
        allowed: (r) => assert.deepEqual(r.responses.map((x: Any) => x.errorCode), [0, 0]),
        state: () => topicConfig("retention.ms"),
      },
      {
        api: IncrementalAlterConfigsApi,
        version: 1,
        request: () => ({
          resources: [{ resourceType: 2, resourceName: "t", configs: [{ name: "retention.ms", configOperation: 0, value: "654321" }] }, { resourceType: 4, resourceName: "", configs: [] }],
          validateOnly: false,
        }),
        grants: [[Op.ALTER_CONFIGS, Res.TOPIC, "t"], [Op.ALTER_CONFIGS, Res.CLUSTER, "kafka-cluster"]],
        denied: (r) => assert.deepEqual(r.responses.map((x: Any) => x.errorCode), [ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED]),
        allowed: (r) => assert.deepEqual(r.responses.map((x: Any) => x.errorCode), [0, 0]),
        state: () => topicConfig("retention.ms"),
      },
      {
        api: DescribeLogDirsApi,
        version: 4,
        request: () => ({ topics: null }),
        grants: [[Op.DESCRIBE, Res.CLUSTER, "kafka-cluster"]],
        denied: (r) => assert.deepEqual([r.errorCode, r.results], [ErrorCode.CLUSTER_AUTHORIZATION_FAILED, []]),
        allowed: (r) => assert.deepEqual([r.errorCode, r.results.length], [0, 1]),
      },
      {
        api: CreatePartitionsApi,
        version: 3,
        request: () => ({ topics: [{ name: "cp", count: 2, assignments: null }], timeoutMs: 10_000, validateOnly: false }),
        grants: [[Op.ALTER, Res.TOPIC, "cp"]],
        denied: (r) => assert.equal(r.results[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED),
        allowed: (r) => assert.equal(r.results[0].errorCode, 0),
        state: () => adminMetadata("cp"),
      },
      {
        api: DeleteGroupsApi,
        version: 2,
        request: () => ({ groupsNames: ["dg"] }),
        grants: [[Op.DELETE, Res.GROUP, "dg"]],
        denied: (r) => assert.equal(r.results[0].errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED),
        allowed: (r) => assert.equal(r.results[0].errorCode, 0),
        state: () => groupState("dg"),
      },
      {
        api: ElectLeadersApi,
        version: 2,
        request: () => ({ electionType: 0, topicPartitions: [{ topic: "t", partitions: [0] }], timeoutMs: 10_000 }),
        grants: [[Op.ALTER, Res.CLUSTER, "kafka-cluster"]],
        denied: (r) => {
          assert.equal(r.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
          assert.equal(r.replicaElectionResults[0].partitionResult[0].errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
        },
        allowed: (r) => assert.equal(r.replicaElectionResults[0].partitionResult[0].errorCode, ErrorCode.ELECTION_NOT_NEEDED),
      },
      {
        api: AlterPartitionReassignmentsApi,
        version: 0,
        request: () => ({ timeoutMs: 10_000, topics: [{ name: "t", partitions: [{ partitionIndex: 0, replicas: null }] }] }),
        grants: [[Op.ALTER, Res.CLUSTER, "kafka-cluster"]],
        denied: (r) => assert.deepEqual([r.errorCode, r.responses[0].partitions[0].errorCode], [ErrorCode.CLUSTER_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED]),
        allowed: (r) => assert.deepEqual([r.errorCode, r.responses[0].partitions[0].errorCode], [0, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS]),
      },
      {
        api: ListPartitionReassignmentsApi,
        version: 0,
        request: () => ({ timeoutMs: 10_000, topics: null }),
        grants: [[Op.DESCRIBE, Res.CLUSTER, "kafka-cluster"]],
        denied: (r) => assert.equal(r.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
        allowed: (r) => assert.equal(r.errorCode, 0),
      },
      {
        api: OffsetDeleteApi,
        version: 0,
        request: () => ({ groupId: "od", topics: [{ name: "t", partitions: [{ partitionIndex: 0 }] }] }),
        grants: [[Op.DELETE, Res.GROUP, "od"], [Op.READ, Res.TOPIC, "t"]],
        denied: (r) => assert.deepEqual([r.errorCode, r.topics], [ErrorCode.GROUP_AUTHORIZATION_FAILED, []]),
        allowed: (r) => assert.deepEqual([r.errorCode, r.topics[0].partitions[0].errorCode], [0, 0]),
        state: () => fetchOffsets(admin, "od", { t: [0] }),
        partial: [{
          grants: [[Op.DELETE, Res.GROUP, "od"]],
          check: (r) => assert.deepEqual([r.errorCode, r.topics[0].partitions[0].errorCode], [0, ErrorCode.TOPIC_AUTHORIZATION_FAILED]),
        }],
      },
      {
        api: DescribeUserScramCredentialsApi,
        version: 0,
        request: () => ({ users: [{ name: "alice" }] }),
        grants: [[Op.DESCRIBE, Res.CLUSTER, "kafka-cluster"]],
        denied: (r) => assert.deepEqual([r.errorCode, r.results.map((x: Any) => x.errorCode)], [ErrorCode.CLUSTER_AUTHORIZATION_FAILED, [ErrorCode.CLUSTER_AUTHORIZATION_FAILED]]),
        allowed: (r) => assert.equal(r.errorCode, 0),
      },
      {
        api: AlterUserScramCredentialsApi,
        version: 0,
        request: () => ({ deletions: [], upsertions: [carol] }),
        grants: [[Op.ALTER, Res.CLUSTER, "kafka-cluster"]],
        denied: (r) => assert.deepEqual(r.results.map((x: Any) => [x.user, x.errorCode]), [["carol", ErrorCode.CLUSTER_AUTHORIZATION_FAILED]]),
        allowed: (r) => assert.deepEqual(r.results.map((x: Any) => [x.user, x.errorCode]), [["carol", 0]]),
        state: async () => {
          const r = await admin.request(DescribeUserScramCredentialsApi, 0, { users: [{ name: "carol" }] });
          return (r.results as Any[]).map((x) => [x.errorCode, x.credentialInfos.length]);
        },
      },
      {
        api: DescribeAclsApi,
        version: 3,
        request: () => ({ resourceTypeFilter: Res.ANY, resourceNameFilter: null, patternTypeFilter: 1, principalFilter: null, hostFilter: null, operation: Op.ANY, permissionType: 1 }),
        grants: [[Op.DESCRIBE, Res.CLUSTER, "kafka-cluster"]],
        denied: (r) => assert.deepEqual([r.errorCode, r.resources], [ErrorCode.CLUSTER_AUTHORIZATION_FAILED, []]),
        allowed: (r) => assert.deepEqual([r.errorCode, r.resources.length], [0, 1], "the grant itself is listed"),
      },
      {
        api: CreateAclsApi,
        version: 3,
        request: () => ({ creations: [{ resourceType: Res.TOPIC, resourceName: "by-alice", resourcePatternType: 3, principal: "User:alice", host: "*", operation: Op.ALL, permissionType: 3 }] }),
        grants: [[Op.ALTER, Res.CLUSTER, "kafka-cluster"]],
        denied: (r) => assert.deepEqual(r.results.map((x: Any) => x.errorCode), [ErrorCode.CLUSTER_AUTHORIZATION_FAILED]),
        allowed: (r) => assert.deepEqual(r.results.map((x: Any) => x.errorCode), [0]),
      },
      {
        api: DeleteAclsApi,
        version: 3,
        request: () => ({ filters: [{ resourceTypeFilter: Res.TOPIC, resourceNameFilter: "by-alice", patternTypeFilter: 3, principalFilter: null, hostFilter: null, operation: Op.ANY, permissionType: 1 }] }),
        grants: [[Op.ALTER, Res.CLUSTER, "kafka-cluster"]],
        denied: (r) => assert.deepEqual(r.filterResults.map((x: Any) => x.errorCode), [ErrorCode.CLUSTER_AUTHORIZATION_FAILED]),
        allowed: (r) => assert.deepEqual(r.filterResults.map((x: Any) => x.errorCode), [0]),
      },
      {
        api: DescribeClientQuotasApi,
        version: 1,
        request: () => ({ components: [], strict: false }),
        grants: [[Op.DESCRIBE_CONFIGS, Res.CLUSTER, "kafka-cluster"]],
        denied: (r) => assert.deepEqual([r.errorCode, r.entries], [ErrorCode.CLUSTER_AUTHORIZATION_FAILED, null]),
        allowed: (r) => assert.equal(r.errorCode, 0),
      },
      {
        api: AlterClientQuotasApi,
        version: 1,
        request: () => ({ entries: [{ entity: [{ entityType: "user", entityName: "alice" }], ops: [{ key: "producer_byte_rate", value: 1048576, remove: false }] }], validateOnly: false }),
        grants: [[Op.ALTER_CONFIGS, Res.CLUSTER, "kafka-cluster"]],
        denied: (r) => assert.deepEqual(r.entries.map((x: Any) => x.errorCode), [ErrorCode.CLUSTER_AUTHORIZATION_FAILED]),
        allowed: (r) => assert.deepEqual(r.entries.map((x: Any) => x.errorCode), [0]),
        state: async () => {
          const r = await admin.request(DescribeClientQuotasApi, 1, { components: [{ entityType: "user", matchType: 0, match: "alice" }], strict: true });
          return r.entries;
        },
      },
      {
        api: DescribeProducersApi,
        version: 0,
        request: () => ({ topics: [{ name: "t", partitionIndexes: [0] }] }),
        grants: [[Op.READ, Res.TOPIC, "t"]],
        denied: (r) => assert.equal(r.topics[0].partitions[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED),
        allowed: (r) => assert.deepEqual([r.topics[0].partitions[0].errorCode, r.topics[0].partitions[0].activeProducers], [0, []]),
        partial: [{ grants: [[Op.DESCRIBE, Res.TOPIC, "t"]], check: (r) => assert.equal(r.topics[0].partitions[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED) }],
      },
      {
        api: InitProducerIdApi,
        version: 4,
        request: () => ({ transactionalId: null, transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1 }),
        grants: [[Op.IDEMPOTENT_WRITE, Res.CLUSTER, "kafka-cluster"]],
        denied: (r) => assert.deepEqual([r.errorCode, r.producerId], [ErrorCode.CLUSTER_AUTHORIZATION_FAILED, -1n]),
        allowed: (r) => assert.deepEqual([r.errorCode, r.producerEpoch], [0, 0]),
        partial: [
          { grants: [[Op.WRITE, Res.TOPIC, "t"]], check: (r) => assert.equal(r.errorCode, 0) },
          { grants: [[Op.DESCRIBE, Res.TOPIC, "t"]], check: (r) => assert.equal(r.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED) },
          {
            grants: [[Op.IDEMPOTENT_WRITE, Res.CLUSTER, "kafka-cluster"]],
            request: () => ({ transactionalId: "tx", transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1 }),
            check: (r) => assert.equal(r.errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
          },
        ],
      },
      {
        api: AddPartitionsToTxnApi,
        version: 3,
        request: () => ({ v3AndBelowTransactionalId: "tx", v3AndBelowProducerId: txp.producerId, v3AndBelowProducerEpoch: txp.producerEpoch, v3AndBelowTopics: [{ name: "t", partitions: [0] }] }),
        grants: [[Op.WRITE, Res.TRANSACTIONAL_ID, "tx"], [Op.WRITE, Res.TOPIC, "t"]],
        denied: (r) => assert.equal(r.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
        allowed: (r) => assert.equal(r.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode, 0),
        partial: [{ grants: [[Op.WRITE, Res.TRANSACTIONAL_ID, "tx"]], check: (r) => assert.equal(r.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED) }],
      },
      {
        api: AddOffsetsToTxnApi,
        version: 3,
        request: () => ({ ...txnFields, groupId: "g" }),
        grants: [[Op.WRITE, Res.TRANSACTIONAL_ID, "tx"], [Op.READ, Res.GROUP, "g"]],
        denied: (r) => assert.equal(r.errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
        allowed: (r) => assert.equal(r.errorCode, 0),
        partial: [{ grants: [[Op.WRITE, Res.TRANSACTIONAL_ID, "tx"]], check: (r) => assert.equal(r.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED) }],
      },
      {
        api: TxnOffsetCommitApi,
        version: 3,
        request: () => ({ ...txnFields, groupId: "g", generationId: -1, memberId: "", groupInstanceId: null, topics: [{ name: "t", partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] }] }),
        grants: [[Op.WRITE, Res.TRANSACTIONAL_ID, "tx"], [Op.READ, Res.GROUP, "g"], [Op.READ, Res.TOPIC, "t"]],
        denied: (r) => assert.equal(r.topics[0].partitions[0].errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
        allowed: (r) => assert.equal(r.topics[0].partitions[0].errorCode, 0),
        partial: [
          { grants: [[Op.WRITE, Res.TRANSACTIONAL_ID, "tx"]], check: (r) => assert.equal(r.topics[0].partitions[0].errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED) },
          { grants: [[Op.WRITE, Res.TRANSACTIONAL_ID, "tx"], [Op.READ, Res.GROUP, "g"]], check: (r) => assert.equal(r.topics[0].partitions[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED) },
        ],
      },
      {
        api: DescribeTransactionsApi,
        version: 0,
        request: () => ({ transactionalIds: ["tx"] }),
        grants: [[Op.DESCRIBE, Res.TRANSACTIONAL_ID, "tx"]],
        denied: (r) => assert.equal(r.transactionStates[0].errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
        allowed: (r) => assert.deepEqual([r.transactionStates[0].errorCode, r.transactionStates[0].transactionState], [0, "Ongoing"]),
      },
      {
        api: ListTransactionsApi,
        version: 1,
        request: () => ({ stateFilters: [], producerIdFilters: [], durationFilter: -1n }),
        grants: [[Op.DESCRIBE, Res.TRANSACTIONAL_ID, "tx"]],
        denied: (r) => assert.deepEqual([r.errorCode, r.transactionStates], [0, []]),
        allowed: (r) => assert.deepEqual(r.transactionStates.map((t: Any) => t.transactionalId), ["tx"]),
      },
      {
        api: EndTxnApi,
        version: 3,
        request: () => ({ ...txnFields, committed: false }),
        grants: [[Op.WRITE, Res.TRANSACTIONAL_ID, "tx"]],
        denied: (r) => assert.equal(r.errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
        allowed: (r) => assert.equal(r.errorCode, 0),
      },
    ];

    for (const c of cases) {
      const where = `${c.api.name} v${c.version}`;
      await revokeAll(b);
      const before = await c.state?.();
      c.denied(await alice.request(c.api, c.version, c.request()));
      if (c.state) assert.deepEqual(await c.state(), before, `${where}: nothing changed when denied`);
      for (const p of c.partial ?? []) {
        await revokeAll(b);
        for (const g of p.grants) await grant(b, ALICE, ...g);
        p.check(await alice.request(c.api, c.version, (p.request ?? c.request)()));
      }
      await revokeAll(b);
      for (const g of c.grants) await grant(b, ALICE, ...g);
      const r = await alice.request(c.api, c.version, c.request());
      noAuthCodes(r, where);
      c.allowed(r);
    }

    // The table covers every advertised API but those Kafka checks nothing on and the
    // inter-broker ones (LeaderAndIsr, StopReplica, UpdateMetadata, ControlledShutdown, WriteTxnMarkers,
    // AlterPartition: test/cluster/alter_partition.test.ts).
    const versions = await alice.request(ApiVersionsApi, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" });
    const exempt = new Set([4, 5, 6, 7, 17, 18, 27, 36, 56]);
    const covered = new Set(cases.map((c) => c.api.apiKey));
    const missing = (versions.apiKeys as { apiKey: number }[]).map((k) => k.apiKey).filter((k) => !exempt.has(k) && !covered.has(k));
    assert.deepEqual(missing, [], "every advertised API is in the table");
  } finally {
    admin.close();
    alice.close();
    await b.stop();
  }
});

test("authorization: older versions answer a denial in their own shape (acks=0 produce closes, OffsetFetch v0/v1/v2, FindCoordinator v0, JoinGroup v5, DescribeLogDirs v1, Fetch by topic id)", async () => {
  const b = await startBroker(saslAclBroker);
  const admin = await login(b, "admin", "admin-secret");
  const alice = await login(b, "alice", "alice-secret");
  try {
    assert.equal((await createTopic(admin, "t")).errorCode, 0);
    await findCoordinator(admin, "g");
    assert.deepEqual(await commitOffsets(admin, "g", { t: { 0: 1n } }), [0]);
    enableAcls(b);
    const offsetFetch = (v: number) => alice.request(OffsetFetchApi, v, { groupId: "g", topics: [{ name: "t", partitionIndexes: [0] }], requireStable: false });
    const v0 = await offsetFetch(0);
    assert.deepEqual((v0.topics as Any[])[0].partitions.map((p: Any) => [p.errorCode, p.committedOffset]), [[ErrorCode.GROUP_AUTHORIZATION_FAILED, -1n]]);
    assert.deepEqual((await offsetFetch(1)).topics, []);
    const v2 = await offsetFetch(2);
    assert.deepEqual([v2.errorCode, v2.topics], [ErrorCode.GROUP_AUTHORIZATION_FAILED, []]);
    const fc = await alice.request(FindCoordinatorApi, 0, { key: "g" });
    assert.deepEqual([fc.errorCode, fc.nodeId], [ErrorCode.GROUP_AUTHORIZATION_FAILED, -1]);
    const join = await alice.request(JoinGroupApi, 5, {
      groupId: "g",
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 10_000,
      memberId: "",
      groupInstanceId: null,
      protocolType: "consumer",
      protocols: [{ name: "range", metadata: subscriptionV0(["t"]) }],
    });
    assert.deepEqual([join.errorCode, join.protocolName, join.leader], [ErrorCode.GROUP_AUTHORIZATION_FAILED, "", ""]);
    assert.deepEqual((await alice.request(DescribeLogDirsApi, 1, { topics: null })).results, []);
    const id = b.broker.services.metadata.getTopic("t")!.topicId;
    const f = await alice.request(FetchApi, 13, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1 << 20,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topicId: id, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
      forgottenTopicsData: [],
      rackId: "",
    });
    assert.equal(partition0(f, "responses", "partitions").errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    // acks=0: Kafka answers nothing and closes the connection on any error; nothing is appended.
    const before = await listOffset(admin, "t", 0, -1n);
    const quiet = await login(b, "alice", "alice-secret");
    const silent = quiet.request(ProduceApi, 8, { transactionalId: null, acks: 0, timeoutMs: 5000, topicData: [{ name: "t", partitionData: [{ index: 0, records: buildBatch(valueRecords(1)) }] }] }, 3000)
      .then(() => "answered", () => "no answer");
    assert.equal(await quiet.waitClosed(), true, "closed after a denied acks=0 produce");
    assert.equal(await silent, "no answer");
    quiet.close();
    assert.deepEqual(await listOffset(admin, "t", 0, -1n), before);
  } finally {
    admin.close();
    alice.close();
    await b.stop();
  }
});
