// The authorizer's audit log and metrics over real sockets, as Kafka's AclAuthorizer: each decision
// a line to the logger named kafka.authorizer.logger (denied at info, allowed at debug, Kafka's
// words); a Metadata for all topics only filters, so the topics it hides are no denied attempt;
// /metrics counts decisions and the ACLs held (Kafka's kafka.server:type=authorizer-metrics).
import assert from "node:assert/strict";
import { test } from "node:test";
import { AclAuthorizer, AclOperation, AclPermissionType, authorizerLoggerName, PatternType, ResourceType } from "../../src/authorizer/mod.ts";
import { MetadataApi } from "../../src/protocol/api/mod.ts";
import { EmbeddedRegistryStore } from "../../src/registry/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { authorizerLogLinesPerSecondMax } from "../../src/util/limits.ts";
import { grant, saslAclBroker } from "../helpers/acls.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { recordingLogger } from "../helpers/faulty_platform.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { saslLogin } from "../helpers/sasl.ts";
import { createTopic, produce, WireClient } from "../helpers/wire.ts";
import { testPlatform } from "../registry/helpers.ts";

async function as(b: TestBroker, user: string): Promise<WireClient> {
  const c = await WireClient.connect(b.broker.port);
  assert.equal((await saslLogin(c, "PLAIN", user, `${user}-secret`)).errorCode, 0, `login of ${user}`);
  return c;
}

async function metrics(b: TestBroker): Promise<Map<string, number>> {
  const text = await (await fetch(`${b.adminUrl}/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    const m = /^(kafka_server_authorizer_metrics_\w+) (\S+)$/.exec(line);
    if (m !== null) out.set(m[1], Number(m[2]));
  }
  return out;
}

const prefix = "kafka_server_authorizer_metrics_";

test("authorizer: each decision logged to kafka.authorizer.logger in Kafka's words, counted on /metrics", { timeout: 60_000 }, async () => {
  const logger = recordingLogger();
  const b = await startBroker({ ...saslAclBroker, "admin.listeners": "http://127.0.0.1:0" }, undefined, logger);
  try {
    const admin = await as(b, "admin");
    for (const t of ["audit-t", "audit-hidden"]) assert.equal((await createTopic(admin, t)).errorCode, 0);
    admin.close();
    const audit = () => logger.lines.filter((l) => l.fields.logger === authorizerLoggerName);
    const alice = await as(b, "alice");

    const before = await metrics(b);
    assert.equal(before.get(`${prefix}acls_total_count`), 0);
    let n = audit().length;
    assert.equal((await produce(alice, "audit-t", 0, buildBatch(valueRecords(1)))).errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const denied = audit().slice(n);
    assert.deepEqual(denied.map((l) => [l.level, l.msg]), [[
      "info",
      "Principal = User:alice is Denied Operation = Write from host = 127.0.0.1 on resource = Topic:LITERAL:audit-t for request = Produce with resourceRefCount = 1",
    ]]);
    const after = await metrics(b);
    assert.equal(after.get(`${prefix}authorization_denied_total`), before.get(`${prefix}authorization_denied_total`)! + 1);
    assert.equal(after.get(`${prefix}authorization_allowed_total`), before.get(`${prefix}authorization_allowed_total`));
    assert.equal(after.get(`${prefix}authorization_request_total`), before.get(`${prefix}authorization_request_total`)! + 1);

    await grant(b, "User:alice", AclOperation.WRITE, ResourceType.TOPIC, "audit-t");
    assert.equal((await metrics(b)).get(`${prefix}acls_total_count`), 1);
    n = audit().length;
    const allowedBefore = (await metrics(b)).get(`${prefix}authorization_allowed_total`)!;
    assert.equal((await produce(alice, "audit-t", 0, buildBatch(valueRecords(1)))).errorCode, 0);
    assert.deepEqual(audit().slice(n).map((l) => [l.level, l.msg]), [[
      "debug",
      "Principal = User:alice is Allowed Operation = Write from host = 127.0.0.1 on resource = Topic:LITERAL:audit-t for request = Produce with resourceRefCount = 1",
    ]]);
    assert.equal((await metrics(b)).get(`${prefix}authorization_allowed_total`), allowedBefore + 1);

    // All topics: audit-hidden is left out without an info line (Kafka: trace); named: denied, logged.
    n = audit().length;
    const all = await alice.request(MetadataApi, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    assert.deepEqual((all.topics as { name: string }[]).map((t) => t.name), ["audit-t"]);
    assert.deepEqual(audit().slice(n).filter((l) => l.level === "info"), []);
    const named = await alice.request(MetadataApi, 12, { topics: [{ topicId: new Uint8Array(16), name: "audit-hidden" }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    assert.equal((named.topics as { errorCode: number }[])[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    assert.ok(
      audit().slice(n).some((l) => l.level === "info" && l.msg.includes("is Denied Operation = Describe from host = 127.0.0.1 on resource = Topic:LITERAL:audit-hidden for request = Metadata")),
      "a named topic denied is logged",
    );
    alice.close();
  } finally {
    await b.stop();
  }
});

test("authorizer: a denied flood logs at most authorizerLogLinesPerSecondMax lines a second; the next line counts those unsaid", async () => {
  const platform = await testPlatform();
  const store = EmbeddedRegistryStore.inMemory(platform);
  const session = store.session();
  let nowMs = 0;
  const clock = { ...platform.clock, monotonicMs: () => nowMs };
  const logger = recordingLogger();
  const a = new AclAuthorizer(session, { superUsers: [], allowEveryoneIfNoAclFound: false }, clock, logger);
  try {
    await a.start();
    const who = { principal: "User:mallory", host: "10.0.0.9", listener: "PLAINTEXT", request: "Produce" };
    // Allowed decisions (debug) do not use up the denials' cap.
    const created = await a.createAcls([{
      pattern: { resourceType: ResourceType.TOPIC, name: "ok", patternType: PatternType.LITERAL },
      entry: { principal: "User:mallory", host: "*", operation: AclOperation.WRITE, permissionType: AclPermissionType.ALLOW },
    }]);
    assert.deepEqual(created.map((r) => r.errorCode), [0]);
    for (let i = 0; i < authorizerLogLinesPerSecondMax; i++) assert.equal(a.authorize(who, AclOperation.WRITE, ResourceType.TOPIC, "ok"), true);
    const flood = authorizerLogLinesPerSecondMax + 500;
    for (let i = 0; i < flood; i++) assert.equal(a.authorize(who, AclOperation.WRITE, ResourceType.TOPIC, "t"), false);
    const audit = () => logger.lines.filter((l) => l.fields.logger === authorizerLoggerName);
    assert.equal(audit().filter((l) => l.msg.includes("is Denied")).length, authorizerLogLinesPerSecondMax);
    assert.equal(a.metrics().deniedTotal, flood, "every decision is counted, logged or not");
    nowMs += 1000;
    a.authorize(who, AclOperation.WRITE, ResourceType.TOPIC, "t");
    const last = audit().at(-1)!;
    assert.equal(last.fields.unsaidSinceLast, 500);
    assert.match(last.msg, /^Principal = User:mallory is Denied Operation = Write from host = 10\.0\.0\.9 on resource = Topic:LITERAL:t for request = Produce/);
  } finally {
    await a.shutdown();
    await session.close();
  }
});
