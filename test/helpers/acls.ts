// ACLs for tests, granted through ONE function, grant(): until the real AclAuthorizer is merged it
// installs a small in-memory Authorizer on the in-process broker (literal names or "*", allow only,
// Kafka's implied operations: DESCRIBE by READ/WRITE/DELETE/ALTER, DESCRIBE_CONFIGS by
// ALTER_CONFIGS, everything by ALL). Once CreateAcls exists, grant() becomes a CreateAcls call and
// the tests stay as they are. Super users (Kafka's super.users) may do everything.
import {
  AclOperation,
  type Authorizer,
  type RequestPrincipal,
  ResourceType,
} from "../../src/authorizer/mod.ts";
import type { TestBroker } from "./broker.ts";

/** A broker whose one listener is SASL_PLAINTEXT, with PLAIN users admin (the super user) and alice. */
export const saslAclBroker = {
  listeners: "SASL_PLAINTEXT://127.0.0.1:0",
  "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
  "listener.name.sasl_plaintext.plain.sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required ' +
    'username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";',
};

const supported: Record<number, number[]> = {
  [ResourceType.TOPIC]: [3, 4, 5, 6, 7, 8, 10, 11],
  [ResourceType.GROUP]: [3, 8, 6],
  [ResourceType.CLUSTER]: [5, 9, 10, 11, 12, 7, 8],
  [ResourceType.TRANSACTIONAL_ID]: [8, 4],
};

const implied: Record<number, number[]> = {
  [AclOperation.DESCRIBE]: [AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER],
  [AclOperation.DESCRIBE_CONFIGS]: [AclOperation.ALTER_CONFIGS],
};

class TestAuthorizer implements Authorizer {
  readonly acls: { principal: string; operation: number; resourceType: number; name: string }[] = [];
  constructor(readonly superUsers: Set<string>) {}

  authorize(who: RequestPrincipal, operation: AclOperation, resourceType: ResourceType, name: string): boolean {
    if (this.superUsers.has(who.principal)) return true;
    const ops = [operation, AclOperation.ALL, ...(implied[operation] ?? [])];
    return this.acls.some((a) =>
      (a.principal === who.principal || a.principal === "User:*") && a.resourceType === resourceType &&
      (a.name === name || a.name === "*") && ops.includes(a.operation as AclOperation)
    );
  }

  authorizedOperations(who: RequestPrincipal, resourceType: ResourceType, name: string): number {
    let bits = 0;
    for (const op of supported[resourceType] ?? []) if (this.authorize(who, op as AclOperation, resourceType, name)) bits |= 1 << op;
    return bits;
  }
}

const installed = new WeakMap<object, TestAuthorizer>();

/**
 * Turns authorization on for the broker (nobody but the super users may do anything until
 * granted). Idempotent; grant() calls it.
 */
export function enableAcls(tb: TestBroker, superUsers: string[] = ["User:admin"]): void {
  const s = tb.broker.services;
  if (s.authorizer !== null && installed.get(tb.broker) === s.authorizer) return;
  const a = new TestAuthorizer(new Set(superUsers));
  installed.set(tb.broker, a);
  s.authorizer = a;
}

/** Allows `principal` ("User:alice") `operation` on the resource (a literal name, or "*"). */
export async function grant(tb: TestBroker, principal: string, operation: AclOperation, resourceType: ResourceType, name: string): Promise<void> {
  enableAcls(tb);
  installed.get(tb.broker)!.acls.push({ principal, operation, resourceType, name });
  await Promise.resolve();
}

/** Removes every ACL granted (the super users stay). */
export async function revokeAll(tb: TestBroker): Promise<void> {
  enableAcls(tb);
  installed.get(tb.broker)!.acls.length = 0;
  await Promise.resolve();
}
