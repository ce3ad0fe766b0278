// ACLs for tests, through the real thing: a broker with Kafka's AclAuthorizer
// (authorizer.class.name) whose super user is admin, and grant()/revokeAll() as CreateAcls and
// DeleteAcls sent by admin over a SASL PLAIN connection, then waited for in the broker's cache
// (what every later request is checked against). Super users may do everything.
import assert from "node:assert/strict";
import {
  AclOperation,
  AclPermissionType,
  aclStoreOf,
  PatternType,
  type RequestPrincipal,
  ResourceType,
} from "../../src/authorizer/mod.ts";
import { CreateAclsApi, DeleteAclsApi } from "../../src/protocol/api/mod.ts";
import type { TestBroker } from "./broker.ts";
import { saslLogin } from "./sasl.ts";
import { WireClient } from "./wire.ts";

/** A broker whose one listener is SASL_PLAINTEXT with PLAIN users admin (the super user) and alice, and ACLs on. */
export const saslAclBroker = {
  listeners: "SASL_PLAINTEXT://127.0.0.1:0",
  "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
  "listener.name.sasl_plaintext.plain.sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required ' +
    'username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";',
  "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
  "super.users": "User:admin",
};

/** Checks that ACLs are on (saslAclBroker starts the broker with them; nothing to switch at run time). */
export function enableAcls(tb: TestBroker): void {
  assert.notEqual(tb.broker.services.authorizer, null, "the broker runs with authorizer.class.name (saslAclBroker)");
}

async function asAdmin<T>(tb: TestBroker, fn: (c: WireClient) => Promise<T>): Promise<T> {
  const c = await WireClient.connect(tb.broker.port);
  try {
    assert.equal((await saslLogin(c, "PLAIN", "admin", "admin-secret")).errorCode, 0, "admin logs in");
    return await fn(c);
  } finally {
    c.close();
  }
}

/** Waits (bounded) until the broker's authorizer answers `want` for the check. */
async function until(tb: TestBroker, who: RequestPrincipal, op: AclOperation, type: ResourceType, name: string, want: boolean): Promise<void> {
  const a = tb.broker.services.authorizer!;
  for (let i = 0; i < 200 && a.authorize(who, op, type, name) !== want; i++) await new Promise((r) => setTimeout(r, 25));
  assert.equal(a.authorize(who, op, type, name), want, `the ACL change reached the broker's cache within 5 s`);
}

/** Allows `principal` ("User:alice") `operation` on the resource (a literal name, or "*"), from any host. */
export async function grant(tb: TestBroker, principal: string, operation: AclOperation, resourceType: ResourceType, name: string): Promise<void> {
  enableAcls(tb);
  await asAdmin(tb, async (c) => {
    const r = await c.request(CreateAclsApi, 3, {
      creations: [{ resourceType, resourceName: name, resourcePatternType: PatternType.LITERAL, principal, host: "*", operation, permissionType: AclPermissionType.ALLOW }],
    });
    assert.deepEqual((r.results as { errorCode: number; errorMessage: string | null }[]).map((x) => [x.errorCode, x.errorMessage]), [[0, null]], "CreateAcls");
  });
  await until(tb, { principal, host: "127.0.0.1", listener: "SASL_PLAINTEXT" }, operation, resourceType, name, true);
}

/** Removes every ACL (the super users stay). */
export async function revokeAll(tb: TestBroker): Promise<void> {
  enableAcls(tb);
  const all = {
    resourceTypeFilter: ResourceType.ANY,
    resourceNameFilter: null,
    patternTypeFilter: PatternType.ANY,
    principalFilter: null,
    hostFilter: null,
    operation: AclOperation.ANY,
    permissionType: AclPermissionType.ANY,
  };
  await asAdmin(tb, async (c) => {
    const r = await c.request(DeleteAclsApi, 3, { filters: [all] });
    assert.deepEqual((r.filterResults as { errorCode: number }[]).map((x) => x.errorCode), [0], "DeleteAcls");
  });
  const store = aclStoreOf(tb.broker.services.authorizer)!;
  const any = { resourceType: ResourceType.ANY, name: null, patternType: PatternType.ANY, principal: null, host: null, operation: AclOperation.ANY, permissionType: AclPermissionType.ANY };
  for (let i = 0; i < 200 && store.acls(any).length > 0; i++) await new Promise((r) => setTimeout(r, 25));
  assert.deepEqual(store.acls(any), [], "every ACL is gone from the broker's cache");
}
