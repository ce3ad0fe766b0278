// Kafka's ACL matching (AclAuthorizer.authorizeAction), table-driven: literal, wildcard and
// prefixed patterns, the User:* principal and * host, DENY over ALLOW, ALL, implied operations,
// super users, allow.everyone.if.no.acl.found; filters as DescribeAcls/DeleteAcls use them.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type AccessControlEntry,
  type AclBinding,
  type AclBindingFilter,
  AclCache,
  AclOperation as Op,
  AclPermissionType as Perm,
  bindingProblem,
  operationName,
  parseOperation,
  parseResourceType,
  parseSuperUsers,
  PatternType as PT,
  resourceTypeEnumName,
  resourceTypeName,
  ResourceType as RT,
} from "../../src/authorizer/mod.ts";

const alice = { principal: "User:alice", host: "10.0.0.1", listener: "PLAINTEXT" };
const bob = { principal: "User:bob", host: "10.0.0.2", listener: "PLAINTEXT" };
const admin = { principal: "User:admin", host: "10.0.0.9", listener: "PLAINTEXT" };

type Acl = [RT, string, PT, string, string, Op, Perm];

function cacheWith(acls: Acl[], allowEveryone = false): AclCache {
  const c = new AclCache({ superUsers: ["User:admin"], allowEveryoneIfNoAclFound: allowEveryone });
  const byPattern = new Map<string, { p: { resourceType: RT; name: string; patternType: PT }; e: AccessControlEntry[] }>();
  for (const [resourceType, name, patternType, principal, host, operation, permissionType] of acls) {
    const key = `${resourceType}/${patternType}/${name}`;
    const g = byPattern.get(key) ?? { p: { resourceType, name, patternType }, e: [] };
    g.e.push({ principal, host, operation, permissionType });
    byPattern.set(key, g);
  }
  for (const { p, e } of byPattern.values()) c.set(p, e);
  return c;
}

const cases: { name: string; acls: Acl[]; who: typeof alice; op: Op; rt: RT; res: string; allowed: boolean; everyone?: boolean }[] = [
  { name: "no ACL, default: denied", acls: [], who: alice, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: false },
  { name: "no ACL, allow.everyone.if.no.acl.found", acls: [], who: alice, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: true, everyone: true },
  {
    name: "ACL for another resource only, allow.everyone: allowed",
    acls: [[RT.TOPIC, "other", PT.LITERAL, "User:bob", "*", Op.READ, Perm.ALLOW]],
    who: alice, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: true, everyone: true,
  },
  {
    name: "an ACL on the resource for someone else, allow.everyone: denied",
    acls: [[RT.TOPIC, "t", PT.LITERAL, "User:bob", "*", Op.READ, Perm.ALLOW]],
    who: alice, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: false, everyone: true,
  },
  { name: "literal allow", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW]], who: alice, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: true },
  { name: "literal allow, other principal", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW]], who: bob, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: false },
  { name: "literal allow, other operation", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW]], who: alice, op: Op.WRITE, rt: RT.TOPIC, res: "t", allowed: false },
  { name: "literal allow, other name", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW]], who: alice, op: Op.READ, rt: RT.TOPIC, res: "t2", allowed: false },
  { name: "literal allow, other resource type", acls: [[RT.GROUP, "t", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW]], who: alice, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: false },
  { name: "wildcard resource", acls: [[RT.TOPIC, "*", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW]], who: alice, op: Op.READ, rt: RT.TOPIC, res: "anything", allowed: true },
  { name: "prefixed pattern matches", acls: [[RT.TOPIC, "pay", PT.PREFIXED, "User:alice", "*", Op.READ, Perm.ALLOW]], who: alice, op: Op.READ, rt: RT.TOPIC, res: "payments", allowed: true },
  { name: "prefixed pattern, exact name", acls: [[RT.TOPIC, "pay", PT.PREFIXED, "User:alice", "*", Op.READ, Perm.ALLOW]], who: alice, op: Op.READ, rt: RT.TOPIC, res: "pay", allowed: true },
  { name: "prefixed pattern does not match shorter", acls: [[RT.TOPIC, "pay", PT.PREFIXED, "User:alice", "*", Op.READ, Perm.ALLOW]], who: alice, op: Op.READ, rt: RT.TOPIC, res: "pa", allowed: false },
  { name: "prefixed '*' is a literal prefix, not a wildcard", acls: [[RT.TOPIC, "*", PT.PREFIXED, "User:alice", "*", Op.READ, Perm.ALLOW]], who: alice, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: false },
  { name: "literal pattern is not a prefix", acls: [[RT.TOPIC, "pay", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW]], who: alice, op: Op.READ, rt: RT.TOPIC, res: "payments", allowed: false },
  { name: "wildcard principal", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:*", "*", Op.READ, Perm.ALLOW]], who: bob, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: true },
  { name: "host matches", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "10.0.0.1", Op.READ, Perm.ALLOW]], who: alice, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: true },
  { name: "IPv4-mapped client address matches the IPv4 host", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "10.0.0.1", Op.READ, Perm.ALLOW]], who: { ...alice, host: "::ffff:10.0.0.1" }, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: true },
  { name: "IPv6 host in Java's full form matches the compressed client address", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "0:0:0:0:0:0:0:1", Op.READ, Perm.ALLOW]], who: { ...alice, host: "::1" }, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: true },
  { name: "IPv6 host in upper case matches", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "FE80::A:1", Op.READ, Perm.ALLOW]], who: { ...alice, host: "fe80::a:1" }, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: true },
  { name: "IPv6 client spelled otherwise matches the IPv6 host", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "2001:db8::1", Op.READ, Perm.ALLOW]], who: { ...alice, host: "2001:DB8:0:0:0:0:0:1" }, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: true },
  { name: "IPv6 DENY in full form wins for the compressed client", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW], [RT.TOPIC, "t", PT.LITERAL, "User:alice", "0:0:0:0:0:0:0:1", Op.READ, Perm.DENY]], who: { ...alice, host: "::1" }, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: false },
  { name: "another IPv6 address does not match", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "0:0:0:0:0:0:0:2", Op.READ, Perm.ALLOW]], who: { ...alice, host: "::1" }, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: false },
  { name: "host differs", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "10.0.0.3", Op.READ, Perm.ALLOW]], who: alice, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: false },
  { name: "ALL allows any operation", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.ALL, Perm.ALLOW]], who: alice, op: Op.DELETE, rt: RT.TOPIC, res: "t", allowed: true },
  {
    name: "deny wins over allow",
    acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW], [RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.READ, Perm.DENY]],
    who: alice, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: false,
  },
  {
    name: "prefixed deny wins over literal allow",
    acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW], [RT.TOPIC, "t", PT.PREFIXED, "User:alice", "*", Op.READ, Perm.DENY]],
    who: alice, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: false,
  },
  {
    name: "wildcard-principal deny wins over own allow",
    acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW], [RT.TOPIC, "*", PT.LITERAL, "User:*", "*", Op.READ, Perm.DENY]],
    who: alice, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: false,
  },
  {
    name: "deny ALL wins over allow",
    acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.WRITE, Perm.ALLOW], [RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.ALL, Perm.DENY]],
    who: alice, op: Op.WRITE, rt: RT.TOPIC, res: "t", allowed: false,
  },
  {
    name: "deny from another host does not apply",
    acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW], [RT.TOPIC, "t", PT.LITERAL, "User:alice", "10.9.9.9", Op.READ, Perm.DENY]],
    who: alice, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: true,
  },
  { name: "READ implies DESCRIBE", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW]], who: alice, op: Op.DESCRIBE, rt: RT.TOPIC, res: "t", allowed: true },
  { name: "WRITE implies DESCRIBE", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.WRITE, Perm.ALLOW]], who: alice, op: Op.DESCRIBE, rt: RT.TOPIC, res: "t", allowed: true },
  { name: "DELETE implies DESCRIBE", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.DELETE, Perm.ALLOW]], who: alice, op: Op.DESCRIBE, rt: RT.TOPIC, res: "t", allowed: true },
  { name: "ALTER implies DESCRIBE", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.ALTER, Perm.ALLOW]], who: alice, op: Op.DESCRIBE, rt: RT.TOPIC, res: "t", allowed: true },
  { name: "CREATE does not imply DESCRIBE", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.CREATE, Perm.ALLOW]], who: alice, op: Op.DESCRIBE, rt: RT.TOPIC, res: "t", allowed: false },
  { name: "DESCRIBE does not imply READ", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.DESCRIBE, Perm.ALLOW]], who: alice, op: Op.READ, rt: RT.TOPIC, res: "t", allowed: false },
  { name: "ALTER_CONFIGS implies DESCRIBE_CONFIGS", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.ALTER_CONFIGS, Perm.ALLOW]], who: alice, op: Op.DESCRIBE_CONFIGS, rt: RT.TOPIC, res: "t", allowed: true },
  { name: "DESCRIBE_CONFIGS does not imply ALTER_CONFIGS", acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.DESCRIBE_CONFIGS, Perm.ALLOW]], who: alice, op: Op.ALTER_CONFIGS, rt: RT.TOPIC, res: "t", allowed: false },
  {
    name: "deny READ does not deny DESCRIBE implied by WRITE",
    acls: [[RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.WRITE, Perm.ALLOW], [RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.READ, Perm.DENY]],
    who: alice, op: Op.DESCRIBE, rt: RT.TOPIC, res: "t", allowed: true,
  },
  {
    name: "super user with a deny: allowed",
    acls: [[RT.TOPIC, "t", PT.LITERAL, "User:*", "*", Op.ALL, Perm.DENY]],
    who: admin, op: Op.DELETE, rt: RT.TOPIC, res: "t", allowed: true,
  },
  { name: "super user with no ACL: allowed", acls: [], who: admin, op: Op.CLUSTER_ACTION, rt: RT.CLUSTER, res: "kafka-cluster", allowed: true },
  { name: "cluster ACL", acls: [[RT.CLUSTER, "kafka-cluster", PT.LITERAL, "User:alice", "*", Op.CREATE, Perm.ALLOW]], who: alice, op: Op.CREATE, rt: RT.CLUSTER, res: "kafka-cluster", allowed: true },
];

for (const c of cases) {
  test(`acl matching: ${c.name}`, () => {
    const cache = cacheWith(c.acls, c.everyone ?? false);
    assert.equal(cache.authorize(c.who, c.op, c.rt, c.res), c.allowed);
  });
}

test("acl: authorizedOperations is the bit set over Kafka's operations for the type", () => {
  const cache = cacheWith([
    [RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW],
    [RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.ALTER_CONFIGS, Perm.ALLOW],
    [RT.GROUP, "g", PT.LITERAL, "User:alice", "*", Op.ALL, Perm.ALLOW],
  ]);
  const bits = (...ops: Op[]) => ops.reduce<number>((b, o) => b | (1 << o), 0);
  assert.equal(cache.authorizedOperations(alice, RT.TOPIC, "t"), bits(Op.READ, Op.DESCRIBE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS));
  assert.equal(cache.authorizedOperations(alice, RT.GROUP, "g"), bits(Op.READ, Op.DESCRIBE, Op.DELETE), "ALL means every GROUP operation, never bit 2");
  assert.equal(cache.authorizedOperations(bob, RT.TOPIC, "t"), 0);
  assert.equal(
    cache.authorizedOperations(admin, RT.CLUSTER, "kafka-cluster"),
    bits(Op.CREATE, Op.CLUSTER_ACTION, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS, Op.IDEMPOTENT_WRITE, Op.ALTER, Op.DESCRIBE),
  );
  assert.equal(cache.authorizedOperations(admin, RT.TRANSACTIONAL_ID, "x"), bits(Op.DESCRIBE, Op.WRITE));
});

const filterAll: AclBindingFilter = { resourceType: RT.ANY, name: null, patternType: PT.ANY, principal: null, host: null, operation: Op.ANY, permissionType: Perm.ANY };

test("acl: filters: ANY, MATCH, LITERAL, PREFIXED as Kafka's ResourcePatternFilter", () => {
  const cache = cacheWith([
    [RT.TOPIC, "payments", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW],
    [RT.TOPIC, "*", PT.LITERAL, "User:bob", "*", Op.READ, Perm.ALLOW],
    [RT.TOPIC, "pay", PT.PREFIXED, "User:alice", "*", Op.WRITE, Perm.DENY],
    [RT.GROUP, "payments", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW],
  ]);
  const names = (f: Partial<AclBindingFilter>) =>
    cache.acls({ ...filterAll, ...f }).map((b) => `${b.pattern.resourceType}/${b.pattern.patternType}/${b.pattern.name}/${b.entry.principal}`).sort();
  assert.equal(names({}).length, 4);
  assert.deepEqual(names({ resourceType: RT.TOPIC, name: "payments", patternType: PT.ANY }), ["2/3/payments/User:alice"]);
  assert.deepEqual(names({ resourceType: RT.TOPIC, name: "payments", patternType: PT.MATCH }), ["2/3/*/User:bob", "2/3/payments/User:alice", "2/4/pay/User:alice"]);
  assert.deepEqual(names({ resourceType: RT.TOPIC, patternType: PT.PREFIXED }), ["2/4/pay/User:alice"]);
  assert.deepEqual(names({ patternType: PT.LITERAL, name: "payments" }), ["2/3/payments/User:alice", "3/3/payments/User:alice"]);
  assert.deepEqual(names({ principal: "User:bob" }), ["2/3/*/User:bob"]);
  assert.deepEqual(names({ permissionType: Perm.DENY }), ["2/4/pay/User:alice"]);
  assert.deepEqual(names({ operation: Op.WRITE }), ["2/4/pay/User:alice"]);
  assert.deepEqual(names({ host: "10.0.0.1" }), []);
});

test("acl: bindings are validated whole, with Kafka's messages", () => {
  const ok: AclBinding = { pattern: { resourceType: RT.TOPIC, name: "t", patternType: PT.LITERAL }, entry: { principal: "User:a", host: "*", operation: Op.READ, permissionType: Perm.ALLOW } };
  assert.equal(bindingProblem(ok), null);
  const bad = (p: Partial<AclBinding["pattern"]>, e: Partial<AclBinding["entry"]> = {}) => bindingProblem({ pattern: { ...ok.pattern, ...p }, entry: { ...ok.entry, ...e } });
  assert.match(bad({ resourceType: RT.ANY })!, /Invalid resourceType ANY/);
  assert.match(bad({ resourceType: 99 as RT })!, /Invalid resourceType/);
  assert.match(bad({ patternType: PT.MATCH })!, /Invalid patternType MATCH/);
  assert.match(bad({ patternType: PT.ANY })!, /Invalid patternType ANY/);
  assert.match(bad({}, { operation: Op.ANY })!, /Invalid operation ANY/);
  assert.match(bad({}, { operation: Op.UNKNOWN })!, /Invalid operation UNKNOWN/);
  assert.match(bad({}, { permissionType: Perm.ANY })!, /Invalid permissionType ANY/);
  assert.match(bad({ name: "" })!, /empty resource name/);
  assert.match(bad({ resourceType: RT.CLUSTER, name: "c" })!, /only valid name for the CLUSTER resource is kafka-cluster/);
  assert.match(bad({ name: "a/b" })!, /invalid resource name/);
  assert.match(bad({ name: ".." })!, /invalid resource name/);
  assert.match(bad({}, { principal: "alice" })!, /no colon/);
  assert.match(bad({}, { principal: ":alice" })!, /no colon/);
});

test("acl: Kafka's names for types and operations, parsed in either spelling", () => {
  assert.equal(resourceTypeName(RT.TRANSACTIONAL_ID), "TransactionalId");
  assert.equal(resourceTypeEnumName(RT.TRANSACTIONAL_ID), "TRANSACTIONAL_ID");
  assert.equal(operationName(Op.DESCRIBE_CONFIGS), "DescribeConfigs");
  assert.equal(parseOperation("IdempotentWrite"), Op.IDEMPOTENT_WRITE);
  assert.equal(parseOperation("IDEMPOTENT_WRITE"), Op.IDEMPOTENT_WRITE);
  assert.equal(parseResourceType("DelegationToken"), RT.DELEGATION_TOKEN);
  assert.equal(parseResourceType("topic"), RT.TOPIC);
  assert.equal(parseResourceType("Nope"), null);
  assert.deepEqual(parseSuperUsers("User:admin; User:ops"), ["User:admin", "User:ops"]);
  assert.deepEqual(parseSuperUsers(""), []);
  assert.equal(typeof parseSuperUsers("admin"), "string");
});

test("acl: prefixed patterns added and removed in any order (nested prefixes, shared paths)", () => {
  const c = new AclCache({ superUsers: [], allowEveryoneIfNoAclFound: false });
  const entry = { principal: "User:alice", host: "*", operation: Op.READ, permissionType: Perm.ALLOW };
  const deny = { ...entry, permissionType: Perm.DENY };
  const p = (name: string) => ({ resourceType: RT.TOPIC, name, patternType: PT.PREFIXED });
  c.set(p("pay"), [entry]);
  c.set(p("payments"), [deny]);
  c.set(p("pax"), [entry]);
  const can = (name: string) => c.authorize(alice, Op.READ, RT.TOPIC, name);
  assert.deepEqual(["pay", "payments-eu", "pa", "paxos", "payment"].map(can), [true, false, false, true, true]);
  c.set(p("pay"), []);
  assert.deepEqual(["pay", "payments-eu", "paxos", "payment"].map(can), [false, false, true, false]);
  c.set(p("payments"), []);
  c.set(p("pax"), []);
  assert.deepEqual(c.patterns(), []);
  assert.deepEqual(["payments-eu", "paxos"].map(can), [false, false]);
  c.set(p("payments"), [entry]);
  assert.equal(can("payments-eu"), true, "a path removed and made again works");
  assert.equal(c.authorize(alice, Op.READ, RT.GROUP, "payments-eu"), false, "prefixes are per resource type");
});

test("acl: authorizeByResourceType as Kafka's AclAuthorizer (WRITE on any topic, for InitProducerId)", () => {
  const allow = (name: string, pt: PT = PT.LITERAL, who = "User:alice", op: Op = Op.WRITE, host = "*"): Acl => [RT.TOPIC, name, pt, who, host, op, Perm.ALLOW];
  const deny = (name: string, pt: PT = PT.LITERAL, who = "User:alice", op: Op = Op.WRITE): Acl => [RT.TOPIC, name, pt, who, "*", op, Perm.DENY];
  const table: [string, Acl[], boolean, boolean?][] = [
    ["no ACL: denied", [], false],
    ["no ACL, allow.everyone: allowed", [], true, true],
    ["allow.everyone, but a DENY on every topic: denied", [deny("*")], false, true],
    ["a literal allow", [allow("t")], true],
    ["a literal allow denied by a literal deny of the same name", [allow("t"), deny("t")], false],
    ["a literal allow denied by a prefixed deny of its prefix", [allow("topic"), deny("top", PT.PREFIXED)], false],
    ["a prefixed deny longer than the literal does not cover it", [allow("t"), deny("tx", PT.PREFIXED)], true],
    ["a prefixed allow", [allow("ab", PT.PREFIXED)], true],
    ["a prefixed allow under a shorter prefixed deny", [allow("ab", PT.PREFIXED), deny("a", PT.PREFIXED)], false],
    ["a prefixed allow is not covered by a literal deny of its name", [allow("ab", PT.PREFIXED), deny("ab")], true],
    ["one of two allows still open", [allow("t"), allow("u"), deny("t")], true],
    ["the wildcard allow, beside a literal deny", [allow("*"), deny("t")], true],
    ["the wildcard deny beats any allow", [allow("t"), allow("*"), deny("*")], false],
    ["ALL allows WRITE", [allow("t", PT.LITERAL, "User:alice", Op.ALL)], true],
    ["READ does not imply WRITE", [allow("t", PT.LITERAL, "User:alice", Op.READ)], false],
    ["a DENY of READ does not deny WRITE", [allow("t"), deny("t", PT.LITERAL, "User:alice", Op.READ)], true],
    ["a DENY of ALL denies WRITE", [allow("t"), deny("t", PT.LITERAL, "User:alice", Op.ALL)], false],
    ["another principal's allow", [allow("t", PT.LITERAL, "User:bob")], false],
    ["User:* allows alice", [allow("t", PT.LITERAL, "User:*")], true],
    ["User:* deny covers alice", [allow("t"), deny("t", PT.LITERAL, "User:*")], false],
    ["an allow for another host", [allow("t", PT.LITERAL, "User:alice", Op.WRITE, "10.9.9.9")], false],
    ["an allow for alice's host", [allow("t", PT.LITERAL, "User:alice", Op.WRITE, "10.0.0.1")], true],
    ["an allow on a group, not a topic", [[RT.GROUP, "t", PT.LITERAL, "User:alice", "*", Op.WRITE, Perm.ALLOW]], false],
  ];
  for (const [name, acls, want, everyone] of table) {
    assert.equal(cacheWith(acls, everyone ?? false).authorizeByResourceType(alice, Op.WRITE, RT.TOPIC), want, name);
  }
  assert.equal(cacheWith([deny("*")]).authorizeByResourceType(admin, Op.WRITE, RT.TOPIC), true, "a super user");
});
