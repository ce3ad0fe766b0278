// authorizer.class.name, super.users, allow.everyone.if.no.acl.found as Kafka reads them: the
// two class names of Kafka's ZooKeeper-mode authorizer are accepted, anything else stops start-up
// naming the key.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError, parseBrokerConfig } from "../../src/broker/mod.ts";

const base = { "log.dirs": "/tmp/strand-authorizer-config" };
const parse = (extra: Record<string, string>) => parseBrokerConfig(new Map(Object.entries({ ...base, ...extra }))).config;

test("authorizer config: unset or empty is no authorizer", () => {
  assert.equal(parse({}).authorizer, null);
  assert.equal(parse({ "authorizer.class.name": "" }).authorizer, null);
});

test("authorizer config: Kafka's class names, super users and allow.everyone.if.no.acl.found", () => {
  for (const name of ["kafka.security.authorizer.AclAuthorizer", "kafka.security.auth.SimpleAclAuthorizer"]) {
    assert.deepEqual(parse({ "authorizer.class.name": name }).authorizer, { superUsers: [], allowEveryoneIfNoAclFound: false });
  }
  assert.deepEqual(
    parse({ "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer", "super.users": "User:admin; User:ops", "allow.everyone.if.no.acl.found": "TRUE" }).authorizer,
    { superUsers: ["User:admin", "User:ops"], allowEveryoneIfNoAclFound: true },
  );
});

test("authorizer config: an unknown class, a bad principal or a bad boolean names the key", () => {
  const bad: [Record<string, string>, string][] = [
    [{ "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer" }, "authorizer.class.name"],
    [{ "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer", "super.users": "admin" }, "super.users"],
    [{ "allow.everyone.if.no.acl.found": "yes" }, "allow.everyone.if.no.acl.found"],
  ];
  for (const [extra, key] of bad) {
    assert.throws(() => parse(extra), (e: unknown) => e instanceof ConfigError && e.message.includes(key), key);
  }
});
