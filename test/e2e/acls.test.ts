// DescribeAcls, CreateAcls, DeleteAcls (29-31) over real sockets, as Kafka's AclApis answers them:
// advertised v0-3; SECURITY_DISABLED without an authorizer; CLUSTER ALTER/DESCRIBE needed (a SASL
// user without them gets CLUSTER_AUTHORIZATION_FAILED, a super user or a granted one does not);
// bindings validated whole; v0 literal only; and the ACLs then decide what a user may do.
import assert from "node:assert/strict";
import { test } from "node:test";
import { AclOperation as Op, AclPermissionType as Perm, PatternType as PT, ResourceType as RT } from "../../src/authorizer/mod.ts";
import { ApiVersionsApi, CreateAclsApi, DeleteAclsApi, DescribeAclsApi } from "../../src/protocol/api/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { saslLogin } from "../helpers/sasl.ts";
import { WireClient } from "../helpers/wire.ts";

const jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" ' +
  'user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";';
const aclBroker = {
  listeners: "SASL_PLAINTEXT://127.0.0.1:0",
  "sasl.enabled.mechanisms": "PLAIN",
  "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas,
  "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
  "super.users": "User:admin",
};

async function as(b: TestBroker, user: string): Promise<WireClient> {
  const c = await WireClient.connect(b.broker.port);
  const r = await saslLogin(c, "PLAIN", user, `${user}-secret`);
  assert.equal(r.errorCode, 0, `login of ${user}`);
  return c;
}

function creation(rt: RT, name: string, pt: PT, principal: string, op: Op, perm: Perm = Perm.ALLOW, host = "*") {
  return { resourceType: rt, resourceName: name, resourcePatternType: pt, principal, host, operation: op, permissionType: perm };
}

const anyFilter = {
  resourceTypeFilter: RT.ANY,
  resourceNameFilter: null,
  patternTypeFilter: PT.ANY,
  principalFilter: null,
  hostFilter: null,
  operation: Op.ANY,
  permissionType: Perm.ANY,
};

test("acl APIs: advertised v0-3; without an authorizer every version answers SECURITY_DISABLED", async () => {
  const b = await startBroker();
  try {
    const c = await WireClient.connect(b.broker.port);
    const versions = await c.request(ApiVersionsApi, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" });
    const byKey = new Map((versions.apiKeys as { apiKey: number; minVersion: number; maxVersion: number }[]).map((a) => [a.apiKey, a]));
    for (const k of [29, 30, 31]) assert.deepEqual([byKey.get(k)?.minVersion, byKey.get(k)?.maxVersion], [0, 3], `API ${k}`);
    for (let v = 0; v <= 3; v++) {
      const d = await c.request(DescribeAclsApi, v, anyFilter);
      assert.equal(d.errorCode, ErrorCode.SECURITY_DISABLED, `DescribeAcls v${v}`);
      assert.equal(d.errorMessage, "No Authorizer is configured on the broker");
      const cr = await c.request(CreateAclsApi, v, { creations: [creation(RT.TOPIC, "t", PT.LITERAL, "User:a", Op.READ)] });
      assert.deepEqual((cr.results as { errorCode: number }[]).map((r) => r.errorCode), [ErrorCode.SECURITY_DISABLED], `CreateAcls v${v}`);
      const dl = await c.request(DeleteAclsApi, v, { filters: [anyFilter, anyFilter] });
      assert.deepEqual((dl.filterResults as { errorCode: number }[]).map((r) => r.errorCode), [54, 54], `DeleteAcls v${v}`);
    }
    c.close();
  } finally {
    await b.stop();
  }
});

test("acl APIs: a user without CLUSTER ALTER/DESCRIBE is refused; the super user manages ACLs, every version", async () => {
  const b = await startBroker(aclBroker);
  try {
    const alice = await as(b, "alice");
    const d = await alice.request(DescribeAclsApi, 3, anyFilter);
    assert.equal(d.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    const cr = await alice.request(CreateAclsApi, 3, { creations: [creation(RT.TOPIC, "t", PT.LITERAL, "User:alice", Op.ALL)] });
    assert.deepEqual((cr.results as { errorCode: number }[]).map((r) => r.errorCode), [ErrorCode.CLUSTER_AUTHORIZATION_FAILED]);
    const dl = await alice.request(DeleteAclsApi, 3, { filters: [anyFilter] });
    assert.deepEqual((dl.filterResults as { errorCode: number }[]).map((r) => r.errorCode), [ErrorCode.CLUSTER_AUTHORIZATION_FAILED]);

    const admin = await as(b, "admin");
    for (let v = 0; v <= 3; v++) {
      const created = await admin.request(CreateAclsApi, v, {
        creations: [creation(RT.TOPIC, `orders-v${v}`, PT.LITERAL, "User:alice", Op.READ), creation(RT.GROUP, `g${v}`, PT.LITERAL, "User:*", Op.READ, Perm.DENY, "10.1.1.1")],
      });
      assert.deepEqual((created.results as { errorCode: number }[]).map((r) => r.errorCode), [0, 0], `CreateAcls v${v}`);
    }
    const prefixed = await admin.request(CreateAclsApi, 1, { creations: [creation(RT.TOPIC, "pay-", PT.PREFIXED, "User:bob", Op.WRITE)] });
    assert.equal((prefixed.results as { errorCode: number }[])[0].errorCode, 0);

    const all = await admin.request(DescribeAclsApi, 3, anyFilter);
    assert.equal(all.errorCode, 0);
    const resources = all.resources as { resourceType: number; resourceName: string; patternType: number; acls: { principal: string; host: string; operation: number; permissionType: number }[] }[];
    assert.equal(resources.length, 9);
    const orders = resources.find((r) => r.resourceName === "orders-v2")!;
    assert.deepEqual(orders, { resourceType: RT.TOPIC, resourceName: "orders-v2", patternType: PT.LITERAL, acls: [{ principal: "User:alice", host: "*", operation: Op.READ, permissionType: Perm.ALLOW }] });
    assert.deepEqual(resources.find((r) => r.patternType === PT.PREFIXED)?.resourceName, "pay-");
    // v0 sees literal patterns only (its ANY means LITERAL).
    const v0 = await admin.request(DescribeAclsApi, 0, anyFilter);
    assert.equal((v0.resources as unknown[]).length, 8);
    // MATCH: what applies to topic "pay-eu".
    const match = await admin.request(DescribeAclsApi, 1, { ...anyFilter, resourceTypeFilter: RT.TOPIC, resourceNameFilter: "pay-eu", patternTypeFilter: PT.MATCH });
    assert.deepEqual((match.resources as { resourceName: string }[]).map((r) => r.resourceName), ["pay-"]);

    // Grant alice CLUSTER ALTER: now she may create (ALTER implies DESCRIBE, so she may describe too).
    const grant = await admin.request(CreateAclsApi, 2, { creations: [creation(RT.CLUSTER, "kafka-cluster", PT.LITERAL, "User:alice", Op.ALTER)] });
    assert.equal((grant.results as { errorCode: number }[])[0].errorCode, 0);
    const byAlice = await alice.request(CreateAclsApi, 3, { creations: [creation(RT.TOPIC, "t", PT.LITERAL, "User:alice", Op.ALL)] });
    assert.deepEqual((byAlice.results as { errorCode: number }[]).map((r) => r.errorCode), [0]);
    assert.equal((await alice.request(DescribeAclsApi, 3, anyFilter)).errorCode, 0);
    const bob = await as(b, "bob");
    assert.equal((await bob.request(DescribeAclsApi, 3, anyFilter)).errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);

    // DeleteAcls: per filter, what it removed.
    const del = await admin.request(DeleteAclsApi, 3, {
      filters: [
        { ...anyFilter, resourceTypeFilter: RT.GROUP },
        { ...anyFilter, principalFilter: "User:bob", patternTypeFilter: PT.PREFIXED },
        { ...anyFilter, resourceTypeFilter: RT.TOPIC, resourceNameFilter: "nothing" },
      ],
    });
    const fr = del.filterResults as { errorCode: number; matchingAcls: { resourceName: string; principal: string; patternType: number; errorCode: number }[] }[];
    assert.deepEqual(fr.map((r) => r.errorCode), [0, 0, 0]);
    assert.deepEqual(fr[0].matchingAcls.map((m) => m.resourceName).sort(), ["g0", "g1", "g2", "g3"]);
    assert.deepEqual(fr[1].matchingAcls.map((m) => [m.resourceName, m.principal, m.patternType, m.errorCode]), [["pay-", "User:bob", PT.PREFIXED, 0]]);
    assert.deepEqual(fr[2].matchingAcls, []);
    const left = await admin.request(DescribeAclsApi, 3, anyFilter);
    assert.deepEqual((left.resources as { resourceName: string }[]).map((r) => r.resourceName).sort(), ["kafka-cluster", "orders-v0", "orders-v1", "orders-v2", "orders-v3", "t"]);
    for (const c of [alice, admin, bob]) c.close();
  } finally {
    await b.stop();
  }
});

test("acl APIs: each binding is validated whole; the others in the request still apply", async () => {
  const b = await startBroker(aclBroker);
  try {
    const admin = await as(b, "admin");
    const r = await admin.request(CreateAclsApi, 3, {
      creations: [
        creation(RT.TOPIC, "ok", PT.LITERAL, "User:alice", Op.READ),
        creation(RT.ANY, "x", PT.LITERAL, "User:alice", Op.READ),
        creation(RT.UNKNOWN, "x", PT.LITERAL, "User:alice", Op.READ),
        creation(99 as RT, "x", PT.LITERAL, "User:alice", Op.READ),
        creation(RT.TOPIC, "x", PT.ANY, "User:alice", Op.READ),
        creation(RT.TOPIC, "x", PT.MATCH, "User:alice", Op.READ),
        creation(RT.TOPIC, "x", PT.LITERAL, "alice", Op.READ),
        creation(RT.TOPIC, "x", PT.LITERAL, "User:alice", Op.ANY),
        creation(RT.TOPIC, "x", PT.LITERAL, "User:alice", Op.READ, Perm.ANY),
        creation(RT.TOPIC, "", PT.LITERAL, "User:alice", Op.READ),
        creation(RT.CLUSTER, "my-cluster", PT.LITERAL, "User:alice", Op.ALTER),
        creation(RT.TOPIC, "a/b", PT.LITERAL, "User:alice", Op.READ),
      ],
    });
    const results = r.results as { errorCode: number; errorMessage: string | null }[];
    assert.deepEqual(results.map((x) => x.errorCode), [0, ...Array(11).fill(ErrorCode.INVALID_REQUEST)]);
    assert.match(results[6].errorMessage!, /no colon is present/);
    assert.match(results[10].errorMessage!, /only valid name for the CLUSTER resource is kafka-cluster/);
    const d = await admin.request(DescribeAclsApi, 3, anyFilter);
    assert.deepEqual((d.resources as { resourceName: string }[]).map((x) => x.resourceName), ["ok"]);
    const bad = await admin.request(DescribeAclsApi, 3, { ...anyFilter, operation: Op.UNKNOWN });
    assert.equal(bad.errorCode, ErrorCode.INVALID_REQUEST);
    const badDelete = await admin.request(DeleteAclsApi, 3, { filters: [{ ...anyFilter, permissionType: 7 }, { ...anyFilter, resourceTypeFilter: RT.TOPIC, resourceNameFilter: "ok" }] });
    const fr = badDelete.filterResults as { errorCode: number; matchingAcls: unknown[] }[];
    assert.deepEqual(fr.map((x) => [x.errorCode, x.matchingAcls.length]), [[ErrorCode.INVALID_REQUEST, 0], [0, 1]]);
    admin.close();
  } finally {
    await b.stop();
  }
});

test("acl APIs: the ACLs survive a restart (loaded before the listener opens)", async () => {
  const b = await startBroker({ ...aclBroker, "allow.everyone.if.no.acl.found": "false" });
  try {
    const admin = await as(b, "admin");
    const r = await admin.request(CreateAclsApi, 3, { creations: [creation(RT.TOPIC, "kept", PT.PREFIXED, "User:alice", Op.READ)] });
    assert.equal((r.results as { errorCode: number }[])[0].errorCode, 0);
    admin.close();
    await b.restart();
    const again = await as(b, "admin");
    const d = await again.request(DescribeAclsApi, 3, anyFilter);
    assert.deepEqual((d.resources as { resourceName: string; patternType: number }[]).map((x) => [x.resourceName, x.patternType]), [["kept", PT.PREFIXED]]);
    const who = { principal: "User:alice", host: "127.0.0.1", listener: "SASL_PLAINTEXT" };
    assert.equal(b.broker.services.authorizer!.authorize(who, Op.READ, RT.TOPIC, "kept-1"), true);
    assert.equal(b.broker.services.authorizer!.authorize(who, Op.WRITE, RT.TOPIC, "kept-1"), false);
    again.close();
  } finally {
    await b.stop();
  }
});
