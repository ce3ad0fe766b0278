// Broker configuration in Kafka's names: defaults, invalid values naming their key, unknown keys
// reported (not fatal), listener parsing; and the sources: server.properties text and STRAND_*
// environment variables.
import assert from "node:assert/strict";
import { test } from "node:test";
import { brokerConfigKeys, ConfigError, parseBrokerConfig, parseListener } from "../../src/broker/config.ts";
import { parseProperties, propertiesFromEnv } from "../../src/cli/properties.ts";

const parse = (pairs: Record<string, string>) => parseBrokerConfig(new Map(Object.entries(pairs)));

function assertConfigError(pairs: Record<string, string>, key: string, pattern?: RegExp): void {
  assert.throws(() => parse(pairs), (e: unknown) => {
    assert.ok(e instanceof ConfigError, `a ConfigError, got ${e}`);
    assert.equal(e.key, key);
    assert.ok(e.message.includes(key), `the message names ${key}: ${e.message}`);
    if (pattern) assert.match(e.message, pattern);
    return true;
  }, JSON.stringify(pairs));
}

test("config: defaults are Kafka's", () => {
  const { config, unknownKeys } = parse({});
  assert.deepEqual(unknownKeys, []);
  assert.equal(config.brokerId, -1);
  assert.equal(config.rack, null);
  assert.deepEqual(config.listeners, [{ name: "PLAINTEXT", host: "127.0.0.1", port: 9092 }]);
  assert.deepEqual(config.advertisedListeners, config.listeners);
  assert.deepEqual(config.logDirs, ["/tmp/strand-logs"], "log.dir when log.dirs is unset");
  assert.equal(config.zookeeperConnect, null);
  assert.equal(config.numPartitions, 1);
  assert.equal(config.defaultReplicationFactor, 1);
  assert.equal(config.autoCreateTopicsEnable, true);
  assert.equal(config.deleteTopicEnable, true);
  assert.equal(config.messageMaxBytes, 1048588);
  assert.equal(config.socketRequestMaxBytes, 104857600);
  assert.equal(config.fetchMaxBytes, 57671680);
  assert.equal(config.logSegmentBytes, 1073741824);
  assert.equal(config.logRollMs, 168 * 3_600_000);
  assert.equal(config.logIndexIntervalBytes, 4096);
  assert.equal(config.logIndexSizeMaxBytes, 10485760);
  assert.equal(config.minInsyncReplicas, 1);
  assert.equal(config.clusterId, null);
  // raw holds every key with a default, for DescribeConfigs.
  for (const [k, def] of Object.entries(brokerConfigKeys)) {
    if (def.default !== null) assert.equal(config.raw.get(k), def.default, k);
  }
});

test("config: values given override defaults, trimmed; log.dirs wins over log.dir; log.roll.ms over hours", () => {
  const { config } = parse({
    "broker.id": " 7 ",
    "log.dirs": "/data1/kafka, /data2/kafka,,",
    "log.dir": "/ignored",
    "num.partitions": "12",
    "auto.create.topics.enable": "FALSE",
    "log.roll.hours": "2",
    "zookeeper.connect": "h1:2181,h2:2181/kafka",
    "broker.rack": "r1",
  });
  assert.equal(config.brokerId, 7);
  assert.deepEqual(config.logDirs, ["/data1/kafka", "/data2/kafka"]);
  assert.equal(config.numPartitions, 12);
  assert.equal(config.autoCreateTopicsEnable, false);
  assert.equal(config.logRollMs, 2 * 3_600_000);
  assert.equal(config.zookeeperConnect, "h1:2181,h2:2181/kafka");
  assert.equal(config.rack, "r1");
  assert.equal(parse({ "log.roll.hours": "2", "log.roll.ms": "5000" }).config.logRollMs, 5000);
  assert.deepEqual(parse({ "log.dir": "/one" }).config.logDirs, ["/one"]);
});

test("config: invalid values stop start-up with a ConfigError naming the key", () => {
  assertConfigError({ "broker.id": "abc" }, "broker.id", /not an integer/);
  assertConfigError({ "broker.id": "-2" }, "broker.id", /minimum/);
  assertConfigError({ "broker.id": "1.5" }, "broker.id");
  assertConfigError({ "broker.id": "" }, "broker.id");
  assertConfigError({ "num.partitions": "0" }, "num.partitions", /minimum/);
  assertConfigError({ "num.partitions": "10001" }, "num.partitions", /maximum/);
  assertConfigError({ "message.max.bytes": "2147483648" }, "message.max.bytes", /range/);
  assertConfigError({ "message.max.bytes": "1e6" }, "message.max.bytes");
  assertConfigError({ "auto.create.topics.enable": "yes" }, "auto.create.topics.enable", /true or false/);
  assertConfigError({ "log.segment.bytes": "13" }, "log.segment.bytes");
  assertConfigError({ "log.roll.ms": "0" }, "log.roll.ms");
  assertConfigError({ "log.flush.interval.messages": "99999999999999999999" }, "log.flush.interval.messages");
  assertConfigError({ "listeners": "localhost:9092" }, "listeners", /NAME:\/\/host:port/);
  assertConfigError({ "listeners": "PLAINTEXT://h:99999" }, "listeners");
  assertConfigError({ "listeners": "" }, "listeners");
  assertConfigError({ "listeners": "PLAINTEXT://a:1,PLAINTEXT://b:2" }, "listeners", /own name/);
  assertConfigError({ "listeners": "SSL://h:9093" }, "ssl.keystore.location", /needs a keystore/);
  assertConfigError({ "advertised.listeners": "nope" }, "advertised.listeners");
  assertConfigError({ "log.dirs": " , " }, "log.dirs");
});

test("config: Kafka's Long.MAX_VALUE for a long key (as Kafka's docs and examples use) is accepted", () => {
  const { config } = parse({ "log.flush.interval.messages": "9223372036854775807" });
  assert.ok(config.raw.has("log.flush.interval.messages"));
  assertConfigError({ "log.flush.interval.messages": "9223372036854775808" }, "log.flush.interval.messages", /range/);
});

test("config: unknown keys are reported, not fatal, and not kept", () => {
  const { config, unknownKeys } = parse({
    "num.network.threads": "3",
    "socket.send.buffer.bytes": "102400",
    "broker.id": "1",
    "some.typo": "x",
  });
  assert.deepEqual(unknownKeys.sort(), ["num.network.threads", "socket.send.buffer.bytes", "some.typo"]);
  assert.equal(config.brokerId, 1);
  assert.equal(config.raw.has("some.typo"), false);
});

test("config: listeners parse into name, host and port; advertised listeners default to them", () => {
  assert.deepEqual(parseListener("PLAINTEXT://0.0.0.0:9092"), { name: "PLAINTEXT", host: "0.0.0.0", port: 9092 });
  assert.deepEqual(parseListener("plaintext://:9092"), { name: "PLAINTEXT", host: "", port: 9092 }, "empty host: all interfaces");
  assert.deepEqual(parseListener("PLAINTEXT://[::1]:9092"), { name: "PLAINTEXT", host: "::1", port: 9092 });
  assert.deepEqual(parseListener("  INTERNAL_1://broker-1.example.com:0  "), { name: "INTERNAL_1", host: "broker-1.example.com", port: 0 });
  for (const bad of ["", "PLAINTEXT://", "PLAINTEXT://h", "PLAINTEXT://h:", "PLAINTEXT://h:65536", "PLAINTEXT://h:-1", "://h:1", "1X://h:1", "PLAINTEXT:/h:1", "PLAINTEXT://h:1:2"]) {
    assert.equal(parseListener(bad), null, bad);
  }
  const { config } = parse({ listeners: "PLAINTEXT://0.0.0.0:9092", "advertised.listeners": "PLAINTEXT://broker1.example.com:19092" });
  assert.deepEqual(config.listeners, [{ name: "PLAINTEXT", host: "0.0.0.0", port: 9092 }]);
  assert.deepEqual(config.advertisedListeners, [{ name: "PLAINTEXT", host: "broker1.example.com", port: 19092 }]);
});

test("properties: key=value, key: value, key value; comments and blank lines", () => {
  const p = parseProperties([
    "# Licensed to the Apache Software Foundation",
    "! another comment style",
    "",
    "   ",
    "broker.id=0",
    "listeners = PLAINTEXT://:9092",
    "log.dirs: /data1,/data2",
    "num.partitions 3",
    "   zookeeper.connect=localhost:2181/kafka   ",
    "key.with.equals=a=b:c",
    "empty.value=",
    "lonely.key",
    "  # indented comment",
  ].join("\n"));
  assert.deepEqual(Object.fromEntries(p), {
    "broker.id": "0",
    "listeners": "PLAINTEXT://:9092",
    "log.dirs": "/data1,/data2",
    "num.partitions": "3",
    "zookeeper.connect": "localhost:2181/kafka",
    "key.with.equals": "a=b:c",
    "empty.value": "",
    "lonely.key": "",
  });
});

test("properties: a trailing backslash continues the value on the next line, leading blanks dropped", () => {
  const p = parseProperties("log.dirs=/data1,\\\n    /data2,\\\n    /data3\nbroker.id=4\r\nnum.partitions=2\r\n");
  assert.equal(p.get("log.dirs"), "/data1,/data2,/data3");
  assert.equal(p.get("broker.id"), "4", "CRLF line ends");
  assert.equal(p.get("num.partitions"), "2");
  // A continuation line starting with # is part of the value, not a comment (as in Java).
  assert.equal(parseProperties("a=x\\\n#y").get("a"), "x#y");
  // The later of two lines for one key wins.
  assert.equal(parseProperties("a=1\na=2").get("a"), "2");
});

test("properties: parsed server.properties feeds parseBrokerConfig", () => {
  const raw = parseProperties("broker.id=3\nlisteners=PLAINTEXT://127.0.0.1:0\nlog.dirs=/tmp/a\nnum.network.threads=3\n");
  const { config, unknownKeys } = parseBrokerConfig(raw);
  assert.equal(config.brokerId, 3);
  assert.equal(config.listeners[0].port, 0);
  assert.deepEqual(unknownKeys, ["num.network.threads"]);
});

test("properties from env: STRAND_LOG_DIRS → log.dirs; other variables and STRAND_LOG_LEVEL ignored", () => {
  const p = propertiesFromEnv({
    STRAND_LOG_DIRS: "/data1,/data2",
    STRAND_BROKER_ID: "5",
    STRAND_AUTO_CREATE_TOPICS_ENABLE: "false",
    STRAND_LOG_LEVEL: "debug",
    KAFKA_BROKER_ID: "9",
    PATH: "/usr/bin",
    STRAND_UNSET: undefined,
  });
  assert.deepEqual(Object.fromEntries(p), {
    "log.dirs": "/data1,/data2",
    "broker.id": "5",
    "auto.create.topics.enable": "false",
  });
  assert.equal(parseBrokerConfig(p).config.autoCreateTopicsEnable, false);
});

test("config: advertised listener names must be listener names, each once (Kafka's rule)", () => {
  assertConfigError({ listeners: "PLAINTEXT://:9092", "advertised.listeners": "EXTERNAL://h:9093" }, "advertised.listeners", /EXTERNAL/);
  assertConfigError({ listeners: "PLAINTEXT://:9092", "advertised.listeners": "PLAINTEXT://a:1,PLAINTEXT://b:2" }, "advertised.listeners");
  // A subset is fine.
  const { config } = parse({ listeners: "PLAINTEXT://:9092", "advertised.listeners": "plaintext://h:19092" });
  assert.deepEqual(config.advertisedListeners, [{ name: "PLAINTEXT", host: "h", port: 19092 }]);
});

test("config: fetch sessions (KIP-227) and the replica selector (KIP-392): defaults, Kafka's selector, anything else refused", () => {
  const d = parse({}).config;
  assert.equal(d.maxIncrementalFetchSessionCacheSlots, 1000);
  assert.equal(d.replicaSelectorClass, "");
  const set = parse({ "max.incremental.fetch.session.cache.slots": "0", "replica.selector.class": " org.apache.kafka.common.replica.RackAwareReplicaSelector " }).config;
  assert.equal(set.maxIncrementalFetchSessionCacheSlots, 0);
  assert.equal(set.replicaSelectorClass, "org.apache.kafka.common.replica.RackAwareReplicaSelector");
  assertConfigError({ "max.incremental.fetch.session.cache.slots": "-1" }, "max.incremental.fetch.session.cache.slots");
  assertConfigError({ "replica.selector.class": "com.example.MySelector" }, "replica.selector.class");
});
