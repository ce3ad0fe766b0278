// The AclAuthorizer over the embedded registry: ACLs written in Kafka's ZooKeeper layout (read
// back as znodes), change notifications that a second authorizer on another session follows,
// conditional writes, DeleteAcls' filters, start-up load, purging of old notifications.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type AclBinding,
  type AclBindingFilter,
  AclAuthorizer,
  aclChangeExpirationMs,
  AclOperation as Op,
  AclPermissionType as Perm,
  PatternType as PT,
  ResourceType as RT,
} from "../../src/authorizer/mod.ts";
import type { Clock } from "../../src/platform/mod.ts";
import { EmbeddedRegistryStore, type Registry } from "../../src/registry/mod.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { eventually, settle, str, testPlatform } from "../registry/helpers.ts";

const settings = { superUsers: [], allowEveryoneIfNoAclFound: false };
const alice = { principal: "User:alice", host: "10.0.0.1", listener: "PLAINTEXT" };

function binding(rt: RT, name: string, pt: PT, principal: string, op: Op, perm: Perm = Perm.ALLOW, host = "*"): AclBinding {
  return { pattern: { resourceType: rt, name, patternType: pt }, entry: { principal, host, operation: op, permissionType: perm } };
}
const all: AclBindingFilter = { resourceType: RT.ANY, name: null, patternType: PT.ANY, principal: null, host: null, operation: Op.ANY, permissionType: Perm.ANY };

async function twoAuthorizers(clock?: Clock) {
  const real = await testPlatform();
  // The registry stamps ctime from the same clock the authorizers purge by.
  const platform = clock === undefined ? real : { ...real, clock };
  const store = EmbeddedRegistryStore.inMemory(platform);
  const s1 = store.session();
  const s2 = store.session();
  const a1 = new AclAuthorizer(s1, settings, platform.clock, silentLogger);
  const a2 = new AclAuthorizer(s2, settings, platform.clock, silentLogger);
  await a1.start();
  await a2.start();
  return {
    store, s1, s2, a1, a2,
    async close() {
      await a1.shutdown();
      await a2.shutdown();
      await s1.close();
      await s2.close();
      await store.close();
    },
  };
}

async function json(r: Registry, path: string): Promise<unknown> {
  return JSON.parse(str((await r.getData(path)).data));
}

test("acl storage: Kafka's paths and payloads, and a second broker follows the notification", async () => {
  const t = await twoAuthorizers();
  try {
    for (const p of ["/kafka-acl/Topic", "/kafka-acl/TransactionalId", "/kafka-acl/DelegationToken", "/kafka-acl/User", "/kafka-acl-extended/prefixed/Group", "/kafka-acl-changes", "/kafka-acl-extended-changes"]) {
      assert.ok(await t.s1.exists(p), `${p} exists`);
    }
    const results = await t.a1.createAcls([
      binding(RT.TOPIC, "orders", PT.LITERAL, "User:alice", Op.READ),
      binding(RT.TOPIC, "orders", PT.LITERAL, "User:alice", Op.READ), // the same entry twice: stored once
      binding(RT.GROUP, "billing-", PT.PREFIXED, "User:alice", Op.ALL, Perm.DENY, "10.0.0.1"),
      binding(RT.TRANSACTIONAL_ID, "tx", PT.LITERAL, "User:*", Op.WRITE),
    ]);
    assert.deepEqual(results.map((r) => r.errorCode), [0, 0, 0, 0]);
    assert.deepEqual(await json(t.s2, "/kafka-acl/Topic/orders"), {
      version: 1,
      acls: [{ principal: "User:alice", permissionType: "Allow", operation: "Read", host: "*" }],
    });
    assert.deepEqual(await json(t.s2, "/kafka-acl-extended/prefixed/Group/billing-"), {
      version: 1,
      acls: [{ principal: "User:alice", permissionType: "Deny", operation: "All", host: "10.0.0.1" }],
    });
    assert.deepEqual(await json(t.s2, "/kafka-acl/TransactionalId/tx"), {
      version: 1,
      acls: [{ principal: "User:*", permissionType: "Allow", operation: "Write", host: "*" }],
    });
    const literal = await t.s2.getChildren("/kafka-acl-changes");
    assert.equal(literal.length, 2);
    assert.ok(literal.every((c) => /^acl_changes_\d{10}$/.test(c)), literal.join());
    const payloads = await Promise.all(literal.map(async (c) => str((await t.s2.getData(`/kafka-acl-changes/${c}`)).data)));
    assert.deepEqual(payloads.sort(), ["TOPIC:orders", "TRANSACTIONAL_ID:tx"]);
    const [ext] = await t.s2.getChildren("/kafka-acl-extended-changes");
    assert.deepEqual(await json(t.s2, `/kafka-acl-extended-changes/${ext}`), { version: 1, resourceType: "GROUP", name: "billing-", patternType: "PREFIXED" });

    assert.equal(t.a1.authorize(alice, Op.READ, RT.TOPIC, "orders"), true);
    await settle(t.s1, t.s2);
    await eventually(() => t.a2.authorize(alice, Op.READ, RT.TOPIC, "orders"), "the second authorizer sees the topic ACL");
    await eventually(() => t.a2.acls(all).length === 3, "the second authorizer holds all three");
    assert.equal(t.a2.authorize(alice, Op.DESCRIBE, RT.TOPIC, "orders"), true, "READ implies DESCRIBE");
    assert.equal(t.a2.authorize(alice, Op.READ, RT.GROUP, "billing-eu"), false);

    // Deleted through the second: the first follows.
    const deleted = await t.a2.deleteAcls([{ ...all, resourceType: RT.TOPIC, name: "orders", patternType: PT.LITERAL }]);
    assert.equal(deleted[0].errorCode, 0);
    assert.equal(deleted[0].deleted.length, 1);
    assert.equal(await t.s1.exists("/kafka-acl/Topic/orders"), null, "a resource left without ACLs loses its node");
    await settle(t.s1, t.s2);
    await eventually(() => !t.a1.authorize(alice, Op.READ, RT.TOPIC, "orders"), "the first authorizer sees the deletion");
  } finally {
    await t.close();
  }
});

test("acl storage: another writer's change in between is read again, not overwritten", async () => {
  const t = await twoAuthorizers();
  try {
    await t.a1.createAcls([binding(RT.TOPIC, "t", PT.LITERAL, "User:a", Op.READ)]);
    // a2 has not seen it yet if we write straight away without settling: its create must not clobber.
    await t.a2.createAcls([binding(RT.TOPIC, "t", PT.LITERAL, "User:b", Op.WRITE)]);
    const node = (await json(t.s1, "/kafka-acl/Topic/t")) as { acls: { principal: string }[] };
    assert.deepEqual(node.acls.map((a) => a.principal).sort(), ["User:a", "User:b"]);
    // A node changed outside any authorizer (kafka-acls.sh): the cached version is stale.
    await t.s1.setData("/kafka-acl/Topic/t", new TextEncoder().encode(JSON.stringify({ version: 1, acls: [{ principal: "User:c", permissionType: "Allow", operation: "Read", host: "*" }] })));
    await t.a1.createAcls([binding(RT.TOPIC, "t", PT.LITERAL, "User:d", Op.READ)]);
    const after = (await json(t.s1, "/kafka-acl/Topic/t")) as { acls: { principal: string }[] };
    assert.deepEqual(after.acls.map((a) => a.principal).sort(), ["User:c", "User:d"]);
  } finally {
    await t.close();
  }
});

test("acl storage: DeleteAcls filters (ANY, MATCH, principal) report what each deleted", async () => {
  const t = await twoAuthorizers();
  try {
    await t.a1.createAcls([
      binding(RT.TOPIC, "pay", PT.PREFIXED, "User:a", Op.READ),
      binding(RT.TOPIC, "payments", PT.LITERAL, "User:a", Op.READ),
      binding(RT.TOPIC, "payments", PT.LITERAL, "User:b", Op.READ),
      binding(RT.TOPIC, "*", PT.LITERAL, "User:a", Op.DESCRIBE),
      binding(RT.TOPIC, "other", PT.LITERAL, "User:a", Op.READ),
    ]);
    const r = await t.a1.deleteAcls([
      { ...all, resourceType: RT.TOPIC, name: "payments", patternType: PT.MATCH, principal: "User:a" },
      { ...all, principal: "User:b" },
      { ...all, resourceType: RT.UNKNOWN },
    ]);
    const names = (i: number) => r[i].deleted.map((d) => `${d.pattern.patternType}/${d.pattern.name}/${d.entry.principal}`).sort();
    assert.deepEqual(names(0), ["3/*/User:a", "3/payments/User:a", "4/pay/User:a"]);
    assert.deepEqual(names(1), ["3/payments/User:b"]);
    assert.equal(r[2].errorCode, 42, "a filter with UNKNOWN is refused");
    assert.deepEqual(t.a1.acls(all).map((b) => b.pattern.name), ["other"]);
    assert.deepEqual(await t.s1.getChildren("/kafka-acl/Topic"), ["other"]);
    assert.deepEqual(await t.s1.getChildren("/kafka-acl-extended/prefixed/Topic"), []);
  } finally {
    await t.close();
  }
});

test("acl storage: a new authorizer loads every ACL at start; invalid bindings are refused whole", async () => {
  const t = await twoAuthorizers();
  try {
    const r = await t.a1.createAcls([
      binding(RT.TOPIC, "a", PT.LITERAL, "User:a", Op.READ),
      binding(RT.ANY, "a", PT.LITERAL, "User:a", Op.READ),
      binding(RT.TOPIC, "a", PT.MATCH, "User:a", Op.READ),
      binding(RT.TOPIC, "a", PT.LITERAL, "nocolon", Op.READ),
      binding(RT.CLUSTER, "c", PT.LITERAL, "User:a", Op.ALTER),
      binding(RT.TOPIC, "x/y", PT.LITERAL, "User:a", Op.READ),
      binding(RT.CLUSTER, "kafka-cluster", PT.LITERAL, "User:a", Op.ALTER),
    ]);
    assert.deepEqual(r.map((x) => x.errorCode), [0, 42, 42, 42, 42, 42, 0]);
    // A node kafka-acls.sh might have written, with the enum spelling and a bad entry beside a good one.
    await t.s1.create("/kafka-acl/Group/g", new TextEncoder().encode(JSON.stringify({
      version: 1,
      acls: [{ principal: "User:z", permissionType: "ALLOW", operation: "READ", host: "*" }, { principal: "User:z", permissionType: "Maybe", operation: "Read", host: "*" }],
    })));
    await t.s1.create("/kafka-acl/Topic/garbage", new TextEncoder().encode("{not json"));
    const platform = await testPlatform();
    const s3 = t.store.session();
    const a3 = new AclAuthorizer(s3, settings, platform.clock, silentLogger);
    await a3.start();
    assert.equal(a3.authorize({ ...alice, principal: "User:a" }, Op.READ, RT.TOPIC, "a"), true);
    assert.equal(a3.authorize({ ...alice, principal: "User:a" }, Op.ALTER, RT.CLUSTER, "kafka-cluster"), true);
    assert.equal(a3.authorize({ ...alice, principal: "User:z" }, Op.READ, RT.GROUP, "g"), true);
    assert.equal(a3.acls(all).length, 3);
    await a3.shutdown();
    await s3.close();
  } finally {
    await t.close();
  }
});

test("acl storage: notifications older than 15 minutes are purged", async () => {
  const platform = await testPlatform();
  let offsetMs = 0;
  const clock: Clock = { ...platform.clock, nowMs: () => platform.clock.nowMs() + offsetMs };
  const t = await twoAuthorizers(clock);
  try {
    await t.a1.createAcls([binding(RT.TOPIC, "t", PT.LITERAL, "User:a", Op.READ)]);
    await settle(t.s1, t.s2);
    await eventually(() => t.a2.acls(all).length === 1, "seen");
    assert.equal((await t.s1.getChildren("/kafka-acl-changes")).length, 1);
    offsetMs = aclChangeExpirationMs + 1000;
    await t.a1.createAcls([binding(RT.TOPIC, "u", PT.LITERAL, "User:a", Op.READ)]);
    await settle(t.s1, t.s2);
    await eventually(() => t.a2.acls(all).length === 2, "second seen");
    await settle(t.s1, t.s2);
    const left = await t.s1.getChildren("/kafka-acl-changes");
    assert.equal(left.length, 1, `only the new notification is left: ${left}`);
  } finally {
    await t.close();
  }
});

test("acl storage: a burst of notifications converges on the other broker", async () => {
  const t = await twoAuthorizers();
  try {
    await Promise.all(Array.from({ length: 60 }, (_, i) =>
      (i % 2 === 0 ? t.a1 : t.a2).createAcls([binding(RT.TOPIC, `burst-${i % 20}`, i % 3 === 0 ? PT.PREFIXED : PT.LITERAL, `User:u${i}`, Op.READ)])
    ));
    await settle(t.s1, t.s2);
    await eventually(() => t.a1.acls(all).length === 60 && t.a2.acls(all).length === 60, "both hold all 60 ACLs");
    const literal = await t.s1.getChildren("/kafka-acl/Topic");
    assert.equal(literal.length, 20);
    let stored = 0;
    for (const name of literal) stored += ((await json(t.s1, `/kafka-acl/Topic/${name}`)) as { acls: unknown[] }).acls.length;
    for (const name of await t.s1.getChildren("/kafka-acl-extended/prefixed/Topic")) {
      stored += ((await json(t.s1, `/kafka-acl-extended/prefixed/Topic/${name}`)) as { acls: unknown[] }).acls.length;
    }
    assert.equal(stored, 60, "no write lost to a concurrent one");
  } finally {
    await t.close();
  }
});
