// Real clients' ACL admin calls against a broker with Kafka's AclAuthorizer: kafkajs 2.2.4
// (createAcls/describeAcls/deleteAcls, which speak v0-1 of the APIs) and kafka-python 2.0.2
// (python3-kafka's KafkaAdminClient create_acls/describe_acls/delete_acls). The broker's one
// listener is PLAINTEXT, so the clients are User:ANONYMOUS, made a super user.
// confluent-kafka-python as Debian ships it (1.7.0) has no ACL methods (they came in 1.9), so
// librdkafka's own ACL calls (2.0.2, what confluent-kafka 1.9+ wraps) are driven through ctypes.
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  AclOperationTypes,
  AclPermissionTypes,
  AclResourceTypes,
  type Admin,
  Kafka,
  logLevel,
  ResourcePatternTypes,
} from "kafkajs";
import { startBroker } from "../helpers/broker.ts";
import { run, skipUnless } from "../helpers/tools.ts";

const PYTHON = "/usr/bin/python3";
const PY_DIR = join(dirname(fileURLToPath(import.meta.url)), "py");
const withAuthorizer = { "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer", "super.users": "User:ANONYMOUS" };

test("kafkajs admin: createAcls, describeAcls (ANY and MATCH), deleteAcls", async () => {
  const b = await startBroker(withAuthorizer);
  let admin: Admin | undefined;
  try {
    admin = new Kafka({ clientId: "strand-acl", brokers: [b.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 2 } }).admin();
    await admin.connect();
    const created = await admin.createAcls({
      acl: [
        {
          resourceType: AclResourceTypes.TOPIC,
          resourceName: "js-orders",
          resourcePatternType: ResourcePatternTypes.LITERAL,
          principal: "User:alice",
          host: "*",
          operation: AclOperationTypes.READ,
          permissionType: AclPermissionTypes.ALLOW,
        },
        {
          resourceType: AclResourceTypes.TOPIC,
          resourceName: "js-",
          resourcePatternType: ResourcePatternTypes.PREFIXED,
          principal: "User:bob",
          host: "*",
          operation: AclOperationTypes.WRITE,
          permissionType: AclPermissionTypes.DENY,
        },
        {
          resourceType: AclResourceTypes.GROUP,
          resourceName: "js-group",
          resourcePatternType: ResourcePatternTypes.LITERAL,
          principal: "User:alice",
          host: "*",
          operation: AclOperationTypes.READ,
          permissionType: AclPermissionTypes.ALLOW,
        },
      ],
    });
    assert.equal(created, true);
    const all = await admin.describeAcls({
      resourceType: AclResourceTypes.ANY,
      resourcePatternType: ResourcePatternTypes.ANY,
      operation: AclOperationTypes.ANY,
      permissionType: AclPermissionTypes.ANY,
    });
    assert.ok(Array.isArray(all.resources), "kafkajs returns only the resources (it throws on an error code)");
    assert.deepEqual(
      all.resources.map((r) => [r.resourceType, r.resourceName, r.resourcePatternType, r.acls.map((a) => [a.principal, a.operation, a.permissionType])]).sort(),
      [
        [AclResourceTypes.GROUP, "js-group", ResourcePatternTypes.LITERAL, [["User:alice", AclOperationTypes.READ, AclPermissionTypes.ALLOW]]],
        [AclResourceTypes.TOPIC, "js-", ResourcePatternTypes.PREFIXED, [["User:bob", AclOperationTypes.WRITE, AclPermissionTypes.DENY]]],
        [AclResourceTypes.TOPIC, "js-orders", ResourcePatternTypes.LITERAL, [["User:alice", AclOperationTypes.READ, AclPermissionTypes.ALLOW]]],
      ].sort(),
    );
    const match = await admin.describeAcls({
      resourceType: AclResourceTypes.TOPIC,
      resourceName: "js-orders",
      resourcePatternType: ResourcePatternTypes.MATCH,
      operation: AclOperationTypes.ANY,
      permissionType: AclPermissionTypes.ANY,
    });
    assert.deepEqual(match.resources.map((r) => r.resourceName).sort(), ["js-", "js-orders"]);
    const deleted = await admin.deleteAcls({
      filters: [{
        resourceType: AclResourceTypes.ANY,
        resourcePatternType: ResourcePatternTypes.ANY,
        principal: "User:alice",
        operation: AclOperationTypes.ANY,
        permissionType: AclPermissionTypes.ANY,
      }],
    });
    assert.equal(deleted.filterResponses.length, 1);
    assert.deepEqual(deleted.filterResponses[0].matchingAcls.map((m) => m.resourceName).sort(), ["js-group", "js-orders"]);
    const left = await admin.describeAcls({
      resourceType: AclResourceTypes.ANY,
      resourcePatternType: ResourcePatternTypes.ANY,
      operation: AclOperationTypes.ANY,
      permissionType: AclPermissionTypes.ANY,
    });
    assert.deepEqual(left.resources.map((r) => r.resourceName), ["js-"]);
  } finally {
    await admin?.disconnect();
    await b.stop();
  }
});

test("kafkajs admin: createAcls without an authorizer fails with SECURITY_DISABLED", async () => {
  const b = await startBroker();
  let admin: Admin | undefined;
  try {
    admin = new Kafka({ clientId: "strand-acl", brokers: [b.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
    await admin.connect();
    await assert.rejects(
      admin.createAcls({
        acl: [{
          resourceType: AclResourceTypes.TOPIC,
          resourceName: "t",
          resourcePatternType: ResourcePatternTypes.LITERAL,
          principal: "User:alice",
          host: "*",
          operation: AclOperationTypes.READ,
          permissionType: AclPermissionTypes.ALLOW,
        }],
      }),
      (e: Error & { type?: string }) => e.type === "SECURITY_DISABLED" || /security/i.test(e.message),
    );
  } finally {
    await admin?.disconnect();
    await b.stop();
  }
});

test("kafka-python admin: create_acls, describe_acls (ANY and MATCH), delete_acls", { skip: skipUnless("kafka") }, async () => {
  const b = await startBroker(withAuthorizer);
  try {
    const r = await run(PYTHON, [join(PY_DIR, "kafka_python_acls.py"), b.bootstrap], { timeoutMs: 60_000 });
    const last = r.stdout.toString().trim().split("\n").pop() ?? "";
    const why = `${last} ${r.stderr.slice(-2000)}`;
    const out = JSON.parse(last);
    assert.deepEqual(out.errors, [], why);
    assert.equal(out.created, 3, why);
    assert.deepEqual(out.createFailed, [], why);
    assert.equal(out.describeError, "NoError", why);
    assert.deepEqual(out.described, [
      ["py-", "PREFIXED", "User:bob", "10.0.0.1", "WRITE", "DENY"],
      ["py-group", "LITERAL", "User:alice", "*", "READ", "ALLOW"],
      ["py-orders", "LITERAL", "User:alice", "*", "READ", "ALLOW"],
    ], why);
    assert.deepEqual(out.matched, ["py-", "py-orders"], why);
    assert.deepEqual(out.deleted, [["User:bob", "py-", "NoError"]], why);
    assert.deepEqual(out.left, ["py-group", "py-orders"], why);
    assert.equal(r.code, 0, why);
  } finally {
    await b.stop();
  }
});

test("librdkafka (what confluent-kafka wraps): CreateAcls, DescribeAcls (ANY and MATCH), DeleteAcls", { skip: skipUnless("confluent_kafka") }, async () => {
  const b = await startBroker(withAuthorizer);
  try {
    const r = await run(PYTHON, [join(PY_DIR, "librdkafka_acls.py"), b.bootstrap], { timeoutMs: 60_000 });
    const last = r.stdout.toString().trim().split("\n").pop() ?? "";
    const why = `${last} ${r.stderr.slice(-2000)}`;
    const out = JSON.parse(last);
    assert.deepEqual(out.errors, [], why);
    assert.deepEqual(out.created, [0, 0, 0], why);
    // [resource type, name, pattern type, principal, host, operation, permission type] as codes.
    const orders = [2, "rd-orders", 3, "User:alice", "*", 3, 3];
    const prefix = [2, "rd-", 4, "User:bob", "10.0.0.1", 4, 2];
    const group = [3, "rd-group", 3, "User:alice", "*", 3, 3];
    const rows = (list: unknown[]) => list.map((x) => JSON.stringify(x)).sort();
    assert.deepEqual(rows(out.described), rows([prefix, group, orders]), why);
    assert.deepEqual(rows(out.matched), rows([prefix, orders]), why);
    assert.deepEqual(rows(out.deleted), rows([group, orders]), why);
    assert.deepEqual(rows(out.left), rows([prefix]), why);
    assert.equal(r.code, 0, why);
  } finally {
    await b.stop();
  }
});
