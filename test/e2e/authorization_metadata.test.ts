// Authorization as clients see it: Metadata hides topics a principal may not DESCRIBE (left out of
// "all topics", TOPIC_AUTHORIZATION_FAILED when named, by id with the id echoed and no name),
// auto-creation needs CREATE, and the authorized-operations bit sets of Metadata and DescribeGroups
// are the principal's (every supported operation when no authorizer is configured, as Kafka). Then
// kafkajs over SASL PLAIN: a denied produce and a denied consume report the authorization error,
// and listTopics shows only what alice may describe.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Kafka, logLevel } from "kafkajs";
import { AclOperation as Op, ResourceType as Res } from "../../src/authorizer/mod.ts";
import { DescribeGroupsApi, MetadataApi } from "../../src/protocol/api/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { enableAcls, grant, saslAclBroker } from "../helpers/acls.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { commitOffsets, findCoordinator } from "../helpers/groups.ts";
import { saslLogin } from "../helpers/sasl.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";

const ALICE = "User:alice";
const zeroId = new Uint8Array(16);
const bits = (...ops: number[]) => ops.reduce((a, op) => a | (1 << op), 0);
const TOPIC_OPS = bits(Op.READ, Op.WRITE, Op.CREATE, Op.DESCRIBE, Op.DELETE, Op.ALTER, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS);
const CLUSTER_OPS = bits(Op.CREATE, Op.CLUSTER_ACTION, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS, Op.IDEMPOTENT_WRITE, Op.ALTER, Op.DESCRIBE);
const GROUP_OPS = bits(Op.READ, Op.DESCRIBE, Op.DELETE);

async function login(b: TestBroker, user: string, password: string): Promise<WireClient> {
  const c = await WireClient.connect(b.broker.port);
  assert.equal((await saslLogin(c, "PLAIN", user, password)).errorCode, 0, `login of ${user}`);
  return c;
}

// deno-lint-ignore no-explicit-any
type Any = any;

test("authorization: Metadata hides topics without DESCRIBE, answers 29 when named, needs CREATE to auto-create, and returns the principal's operations", async () => {
  const b = await startBroker({ ...saslAclBroker, "auto.create.topics.enable": "true" });
  const admin = await login(b, "admin", "admin-secret");
  const alice = await login(b, "alice", "alice-secret");
  try {
    for (const t of ["a", "b"]) assert.equal((await createTopic(admin, t)).errorCode, 0);
    await findCoordinator(admin, "g"); // __consumer_offsets exists too
    enableAcls(b);
    await grant(b, ALICE, Op.READ, Res.TOPIC, "a");
    const names = (r: Any) => (r.topics as Any[]).map((t) => t.name).sort();
    // All topics, in v1 and v12: only "a" (b and __consumer_offsets are not revealed).
    assert.deepEqual(names(await alice.request(MetadataApi, 1, { topics: null })), ["a"]);
    const all = await alice.request(MetadataApi, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: true });
    assert.deepEqual(names(all), ["a"]);
    assert.equal((all.topics as Any[])[0].topicAuthorizedOperations, bits(Op.READ, Op.DESCRIBE));
    assert.deepEqual(names(await admin.request(MetadataApi, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false })), ["__consumer_offsets", "a", "b"]);
    // Named: 29, no id, no partitions; by id (v12): 29, the id echoed, no name.
    const named = await alice.request(MetadataApi, 12, { topics: [{ topicId: zeroId, name: "b" }, { topicId: zeroId, name: "nope" }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    assert.deepEqual((named.topics as Any[]).map((t) => [t.name, t.errorCode, [...t.topicId].every((x) => x === 0), t.partitions.length]), [
      ["b", ErrorCode.TOPIC_AUTHORIZATION_FAILED, true, 0],
      ["nope", ErrorCode.TOPIC_AUTHORIZATION_FAILED, true, 0],
    ]);
    const bId = b.broker.services.metadata.getTopic("b")!.topicId;
    const byId = await alice.request(MetadataApi, 12, { topics: [{ topicId: bId, name: null }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    const t0 = (byId.topics as Any[])[0];
    assert.deepEqual([t0.name, t0.errorCode, [...t0.topicId]], [null, ErrorCode.TOPIC_AUTHORIZATION_FAILED, [...bId]]);
    // With DESCRIBE on a topic that does not exist: UNKNOWN_TOPIC_OR_PARTITION without auto-creation;
    // with it, CREATE is needed (29 and nothing created), then it is created.
    await grant(b, ALICE, Op.DESCRIBE, Res.TOPIC, "auto");
    const ask = (allow: boolean) => alice.request(MetadataApi, 12, { topics: [{ topicId: zeroId, name: "auto" }], allowAutoTopicCreation: allow, includeTopicAuthorizedOperations: false });
    assert.equal(((await ask(false)).topics as Any[])[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(((await ask(true)).topics as Any[])[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    assert.equal(b.broker.services.metadata.getTopic("auto"), undefined, "not created without CREATE");
    await grant(b, ALICE, Op.CREATE, Res.TOPIC, "auto");
    assert.ok([ErrorCode.NONE, ErrorCode.LEADER_NOT_AVAILABLE].includes(((await ask(true)).topics as Any[])[0].errorCode), "created with CREATE on the topic");
    // Cluster operations (v8-10): 0 without DESCRIBE on the cluster, else the granted bits.
    const cluster = async () => (await alice.request(MetadataApi, 10, { topics: [], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: true, includeTopicAuthorizedOperations: false })).clusterAuthorizedOperations;
    assert.equal(await cluster(), 0);
    await grant(b, ALICE, Op.DESCRIBE, Res.CLUSTER, "kafka-cluster");
    await grant(b, ALICE, Op.CREATE, Res.CLUSTER, "kafka-cluster");
    assert.equal(await cluster(), bits(Op.CREATE, Op.DESCRIBE));
    // Super user: everything.
    const super_ = await admin.request(MetadataApi, 10, { topics: [{ topicId: zeroId, name: "b" }], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: true, includeTopicAuthorizedOperations: true });
    assert.deepEqual([super_.clusterAuthorizedOperations, (super_.topics as Any[])[0].topicAuthorizedOperations], [CLUSTER_OPS, TOPIC_OPS]);
  } finally {
    admin.close();
    alice.close();
    await b.stop();
  }
});

test("authorization: with no authorizer, Metadata and DescribeGroups report every supported operation, as Kafka does", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.broker.port);
  try {
    assert.equal((await createTopic(c, "a")).errorCode, 0);
    const m = await c.request(MetadataApi, 10, { topics: [{ topicId: zeroId, name: "a" }], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: true, includeTopicAuthorizedOperations: true });
    assert.deepEqual([m.clusterAuthorizedOperations, (m.topics as Any[])[0].topicAuthorizedOperations], [CLUSTER_OPS, TOPIC_OPS]);
    // Not asked for: Integer.MIN_VALUE, as before.
    const quiet = await c.request(MetadataApi, 10, { topics: [{ topicId: zeroId, name: "a" }], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false });
    assert.deepEqual([quiet.clusterAuthorizedOperations, (quiet.topics as Any[])[0].topicAuthorizedOperations], [-2147483648, -2147483648]);
    await findCoordinator(c, "g");
    assert.deepEqual(await commitOffsets(c, "g", { a: { 0: 1n } }), [0]);
    const d = await c.request(DescribeGroupsApi, 5, { groups: ["g"], includeAuthorizedOperations: true });
    assert.equal((d.groups as Any[])[0].authorizedOperations, GROUP_OPS);
  } finally {
    c.close();
    await b.stop();
  }
});

function kafkaAs(b: TestBroker, username: string, password: string) {
  return new Kafka({
    brokers: [`127.0.0.1:${b.broker.port}`],
    clientId: `acl-${username}`,
    sasl: { mechanism: "plain", username, password },
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
  });
}

/** The error's Kafka type, looking through kafkajs's wrappers (cause, originalError). */
function errorTypes(e: unknown): string[] {
  const out: string[] = [];
  for (let x = e as Any, i = 0; x != null && i < 5; x = x.cause ?? x.originalError, i++) if (typeof x.type === "string") out.push(x.type);
  return out;
}

test("authorization: kafkajs over SASL PLAIN sees TOPIC/GROUP_AUTHORIZATION_FAILED for a denied produce and consume, and listTopics shows only what it may describe", async () => {
  const b = await startBroker(saslAclBroker);
  const adminKafka = kafkaAs(b, "admin", "admin-secret");
  const alice = kafkaAs(b, "alice", "alice-secret");
  try {
    const ka = adminKafka.admin();
    await ka.connect();
    await ka.createTopics({ topics: [{ topic: "open", numPartitions: 1 }, { topic: "closed", numPartitions: 1 }] });
    const p0 = adminKafka.producer();
    await p0.connect();
    await p0.send({ topic: "closed", messages: [{ value: "secret" }] });
    await p0.disconnect();
    await ka.disconnect();
    enableAcls(b);
    await grant(b, ALICE, Op.WRITE, Res.TOPIC, "open");
    await grant(b, ALICE, Op.READ, Res.TOPIC, "open");
    await grant(b, ALICE, Op.DESCRIBE, Res.TOPIC, "closed");
    await grant(b, ALICE, Op.READ, Res.GROUP, "alice-group");
    // DESCRIBE only: FindCoordinator answers (kafkajs hides its GROUP_AUTHORIZATION_FAILED behind
    // "Failed to find group coordinator"), JoinGroup is refused.
    await grant(b, ALICE, Op.DESCRIBE, Res.GROUP, "other-group");

    const aa = alice.admin();
    await aa.connect();
    assert.deepEqual((await aa.listTopics()).sort(), ["closed", "open"]);
    await aa.disconnect();

    const producer = alice.producer();
    await producer.connect();
    await producer.send({ topic: "open", messages: [{ value: "ok" }] });
    const denied = await producer.send({ topic: "closed", messages: [{ value: "no" }] }).then(() => null, (e) => e);
    assert.ok(denied !== null, "a produce without WRITE fails");
    assert.ok(errorTypes(denied).includes("TOPIC_AUTHORIZATION_FAILED"), `produce error: ${errorTypes(denied)} ${denied}`);
    await producer.disconnect();

    // Consuming "closed" (DESCRIBE but no READ) in a group alice may use: the fetch is refused.
    const crashed = async (groupId: string, topic: string) => {
      const consumer = alice.consumer({ groupId, retry: { retries: 0 } });
      try {
        await consumer.connect();
        await consumer.subscribe({ topic, fromBeginning: true });
        return await new Promise<unknown>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error("the consumer did not fail within 30 s")), 30_000);
          consumer.on(consumer.events.CRASH, (ev: Any) => {
            clearTimeout(timer);
            resolve(ev.payload.error);
          });
          consumer.run({ eachMessage: async () => {} }).catch((e) => {
            clearTimeout(timer);
            resolve(e);
          });
        });
      } finally {
        await consumer.disconnect();
      }
    };
    const fetchDenied = await crashed("alice-group", "closed");
    assert.ok(errorTypes(fetchDenied).includes("TOPIC_AUTHORIZATION_FAILED"), `consume error: ${errorTypes(fetchDenied)} ${fetchDenied}`);
    const groupDenied = await crashed("other-group", "open");
    assert.ok(errorTypes(groupDenied).includes("GROUP_AUTHORIZATION_FAILED"), `group error: ${errorTypes(groupDenied)} ${groupDenied}`);
    // Nothing of "closed" reached alice; admin still reads exactly what was written.
    const offsets = await (async () => {
      const a2 = adminKafka.admin();
      await a2.connect();
      try {
        return await a2.fetchTopicOffsets("closed");
      } finally {
        await a2.disconnect();
      }
    })();
    assert.equal(offsets[0].high, "1");
  } finally {
    await b.stop();
  }
});
