// GET/POST/DELETE /v1/acls over real HTTP against a broker with Kafka's AclAuthorizer: ACLs in
// Kafka's names, filters from the query, every refused ACL named in one 400 (nothing stored),
// a DELETE needs a filter, and 501 without an authorizer.
import assert from "node:assert/strict";
import { test } from "node:test";
import { AclOperation as Op, ResourceType as RT } from "../../src/authorizer/mod.ts";
import { startBroker } from "../helpers/broker.ts";

const ADMIN = { "admin.listeners": "http://127.0.0.1:0" };

// deno-lint-ignore no-explicit-any
async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { "content-type": "application/json" };
  }
  const res = await fetch(base + path, init);
  return { status: res.status, body: await res.json() };
}

test("admin /v1/acls: create, list with filters, delete; the authorizer enforces them", async () => {
  const b = await startBroker({ ...ADMIN, "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer" });
  try {
    const api = (method: string, path: string, body?: unknown) => call(b.adminUrl, method, path, body);
    const created = await api("POST", "/v1/acls", {
      acls: [
        { resource_type: "topic", resource_name: "orders", principal: "User:alice", operation: "Read" },
        { resource_type: "Group", resource_name: "app-", pattern_type: "prefixed", principal: "User:alice", operation: "ALL", permission_type: "deny", host: "10.0.0.1" },
        { resource_type: "TRANSACTIONAL_ID", resource_name: "tx", principal: "User:*", operation: "describe-configs" },
      ],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(created.body.created[0], {
      resource_type: "Topic", resource_name: "orders", pattern_type: "LITERAL", principal: "User:alice", host: "*", operation: "Read", permission_type: "Allow",
    });
    assert.deepEqual(created.body.created[2].resource_type, "TransactionalId");
    assert.deepEqual(created.body.created[2].operation, "DescribeConfigs");

    const all = await api("GET", "/v1/acls");
    assert.equal(all.status, 200);
    assert.equal(all.body.acls.length, 3);
    const prefixed = await api("GET", "/v1/acls?pattern_type=PREFIXED");
    assert.deepEqual(prefixed.body.acls.map((a: { resource_name: string }) => a.resource_name), ["app-"]);
    const match = await api("GET", "/v1/acls?resource_type=group&resource_name=app-1&pattern_type=match");
    assert.deepEqual(match.body.acls.map((a: { permission_type: string }) => a.permission_type), ["Deny"]);
    assert.equal((await api("GET", "/v1/acls?principal=User:nobody")).body.acls.length, 0);
    assert.equal((await api("GET", "/v1/acls?operation=fly")).status, 400);
    assert.equal((await api("GET", "/v1/acls?resource=orders")).status, 400, "an unknown key is refused");

    const who = { principal: "User:alice", host: "10.0.0.1", listener: "PLAINTEXT" };
    const a = b.broker.services.authorizer!;
    assert.equal(a.authorize(who, Op.READ, RT.TOPIC, "orders"), true);
    assert.equal(a.authorize(who, Op.READ, RT.GROUP, "app-1"), false);

    const bad = await api("POST", "/v1/acls", {
      acls: [
        { resource_type: "topic", resource_name: "fine", principal: "User:bob", operation: "Read" },
        { resource_type: "topic", resource_name: "x", principal: "bob", operation: "Read" },
        { resource_type: "cluster", resource_name: "c", principal: "User:bob", operation: "Alter" },
        { resource_type: "nope", resource_name: "x", principal: "User:bob", operation: "Read" },
        { resource_type: "topic", resource_name: "x", principal: "User:bob" },
      ],
    });
    assert.equal(bad.status, 400);
    for (const want of [/acls\[1\]: .*no colon/, /acls\[2\]: .*kafka-cluster/, /acls\[3\]: resource_type "nope"/, /acls\[4\]: operation is required/]) assert.match(bad.body.error, want);
    assert.equal((await api("GET", "/v1/acls?resource_name=fine")).body.acls.length, 0, "nothing of a refused request is stored");

    assert.equal((await api("DELETE", "/v1/acls")).status, 400, "DELETE needs a filter");
    const del = await api("DELETE", "/v1/acls?resource_type=topic&resource_name=orders");
    assert.equal(del.status, 200);
    assert.deepEqual(del.body.deleted.map((d: { resource_name: string }) => d.resource_name), ["orders"]);
    assert.equal(a.authorize(who, Op.READ, RT.TOPIC, "orders"), false);
    const rest = await api("DELETE", "/v1/acls?resource_type=any");
    assert.equal(rest.body.deleted.length, 2);
    assert.equal((await api("GET", "/v1/acls")).body.acls.length, 0);
  } finally {
    await b.stop();
  }
});

test("admin /v1/acls: 501 without an authorizer", async () => {
  const b = await startBroker(ADMIN);
  try {
    const r = await call(b.adminUrl, "GET", "/v1/acls");
    assert.equal(r.status, 501);
    assert.match(r.body.error, /authorizer\.class\.name/);
    assert.equal((await call(b.adminUrl, "POST", "/v1/acls", { acls: [{}] })).status, 501);
  } finally {
    await b.stop();
  }
});
