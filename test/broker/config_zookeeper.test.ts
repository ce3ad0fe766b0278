// The zookeeper.* configuration keys: Kafka's defaults and fallbacks, the connect string checked
// at parse time (the message names the key and the problem), set.acl needing a credential, and
// the digest credential kept out of DescribeConfigs' values.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError, parseBrokerConfig } from "../../src/broker/config.ts";

const parse = (pairs: Record<string, string>) => parseBrokerConfig(new Map(Object.entries(pairs)));

function assertConfigError(pairs: Record<string, string>, key: string, pattern: RegExp): void {
  assert.throws(() => parse(pairs), (e: unknown) => {
    assert.ok(e instanceof ConfigError, `a ConfigError, got ${e}`);
    assert.equal(e.key, key);
    assert.match(e.message, pattern);
    return true;
  }, JSON.stringify(pairs));
}

test("config zookeeper: Kafka's defaults; the connection timeout falls back to the session timeout", () => {
  const { config } = parse({});
  assert.equal(config.zookeeperConnect, null);
  assert.equal(config.zookeeperSessionTimeoutMs, 18_000);
  assert.equal(config.zookeeperConnectionTimeoutMs, 18_000);
  assert.equal(config.zookeeperSetAcl, false);
  assert.equal(config.zookeeperDigestAuth, null);
  const set = parse({
    "zookeeper.connect": "zk1:2181,zk2:2182/kafka",
    "zookeeper.session.timeout.ms": "6000",
  }).config;
  assert.equal(set.zookeeperConnect, "zk1:2181,zk2:2182/kafka");
  assert.equal(set.zookeeperConnectionTimeoutMs, 6_000);
  assert.equal(parse({ "zookeeper.connection.timeout.ms": "2500" }).config.zookeeperConnectionTimeoutMs, 2_500);
});

test("config zookeeper: a malformed connect string is refused at parse time, naming the problem", () => {
  assertConfigError({ "zookeeper.connect": "zk1:2181,,zk2" }, "zookeeper.connect", /"" is not host or host:port/);
  assertConfigError({ "zookeeper.connect": "zk1:99999" }, "zookeeper.connect", /out of range/);
  assertConfigError({ "zookeeper.connect": "zk1:2181/kafka/" }, "zookeeper.connect", /chroot/);
  assertConfigError({ "zookeeper.session.timeout.ms": "0" }, "zookeeper.session.timeout.ms", /minimum/);
  assertConfigError({ "zookeeper.set.acl": "yes" }, "zookeeper.set.acl", /true or false/);
});

test("config zookeeper: set.acl needs a digest credential; the credential is user:password", () => {
  assertConfigError({ "zookeeper.set.acl": "true" }, "zookeeper.set.acl", /zookeeper\.digest\.auth=user:password/);
  assertConfigError({ "zookeeper.digest.auth": "no-colon" }, "zookeeper.digest.auth", /user:password/);
  const { config } = parse({ "zookeeper.set.acl": "true", "zookeeper.digest.auth": "strand:s3cret" });
  assert.equal(config.zookeeperSetAcl, true);
  assert.equal(config.zookeeperDigestAuth, "strand:s3cret");
  assert.throws(() => parse({ "zookeeper.digest.auth": ":pw" }), (e: unknown) => e instanceof ConfigError && !e.message.includes("pw"));
});
