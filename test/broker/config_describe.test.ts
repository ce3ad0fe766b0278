// Config entries as DescribeConfigs reports them, without a broker: the topic-key table covers
// exactly the keys strand accepts and agrees with the broker's own defaults; effective values,
// sources and synonyms follow Kafka's rules; IncrementalAlterConfigs operations compose.
import { test } from "node:test";
import assert from "node:assert/strict";
import { applyOperations } from "../../src/broker/api/44_incremental_alter_configs.ts";
import { brokerConfigKeys, parseBrokerConfig } from "../../src/broker/config.ts";
import {
  brokerResourceError,
  ConfigSource,
  describeBrokerConfigs,
  describeClusterDefaultConfigs,
  describeTopicConfigs,
  topicConfigDefs,
  topicConfigEntry,
  topicDefaultValue,
} from "../../src/broker/config_describe.ts";
import { checkTopicConfig, checkTopicConfigSet, topicConfigChecks } from "../../src/log/mod.ts";
import { kafka38TopicKeys } from "../helpers/kafka38_topic_keys.ts";

const config = (raw: Record<string, string> = {}) => parseBrokerConfig(new Map(Object.entries({ "log.dirs": "/tmp/x", ...raw }))).config;

test("the topic-key table covers exactly the topic keys strand accepts, with valid defaults", () => {
  assert.deepEqual(Object.keys(topicConfigDefs).sort(), Object.keys(topicConfigChecks).sort());
  const c = config();
  for (const key of Object.keys(topicConfigDefs)) {
    const v = topicDefaultValue(c, key);
    assert.notEqual(v, null, `${key} has a default`);
    assert.equal(checkTopicConfig(key, v), null, `${key}'s default ${v} passes its own check`);
  }
});

test("Kafka's broker defaults in the table agree with strand's BrokerConfig where it knows the key", () => {
  for (const [topicKey, def] of Object.entries(topicConfigDefs)) {
    for (const s of def.synonyms) {
      const known = brokerConfigKeys[s.key];
      if (known !== undefined) assert.equal(known.default, s.kafkaDefault, `${topicKey} ← ${s.key}`);
    }
  }
});

test("a topic key's value: override, else server.properties, else default, in the topic key's unit", () => {
  const defaults = config();
  assert.equal(topicDefaultValue(defaults, "retention.ms"), "604800000");
  assert.equal(topicDefaultValue(defaults, "segment.ms"), "604800000");
  assert.equal(topicDefaultValue(defaults, "flush.ms"), "9223372036854775807");
  assert.equal(topicDefaultValue(defaults, "min.cleanable.dirty.ratio"), "0.5");

  const tuned = config({ "log.roll.hours": "2", "message.max.bytes": "5000" });
  const segmentMs = topicConfigEntry(tuned, {}, "segment.ms");
  assert.equal(segmentMs.value, "7200000");
  assert.equal(segmentMs.source, ConfigSource.STATIC_BROKER_CONFIG);
  assert.deepEqual(segmentMs.synonyms, [
    { name: "log.roll.hours", value: "2", source: ConfigSource.STATIC_BROKER_CONFIG },
    { name: "log.roll.hours", value: "168", source: ConfigSource.DEFAULT_CONFIG },
  ]);
  // log.roll.ms, when given, wins over log.roll.hours, as in Kafka.
  const both = topicConfigEntry(config({ "log.roll.hours": "2", "log.roll.ms": "1234" }), {}, "segment.ms");
  assert.equal(both.value, "1234");
  assert.deepEqual(both.synonyms.map((s) => [s.name, s.source]), [
    ["log.roll.ms", ConfigSource.STATIC_BROKER_CONFIG],
    ["log.roll.hours", ConfigSource.STATIC_BROKER_CONFIG],
    ["log.roll.hours", ConfigSource.DEFAULT_CONFIG],
  ]);

  const overridden = topicConfigEntry(tuned, { "max.message.bytes": " 100 " }, "max.message.bytes");
  assert.equal(overridden.value, "100");
  assert.equal(overridden.source, ConfigSource.TOPIC_CONFIG);
  assert.deepEqual(overridden.synonyms.map((s) => [s.name, s.value, s.source]), [
    ["max.message.bytes", "100", ConfigSource.TOPIC_CONFIG],
    ["message.max.bytes", "5000", ConfigSource.STATIC_BROKER_CONFIG],
    ["message.max.bytes", "1048588", ConfigSource.DEFAULT_CONFIG],
  ]);
  assert.equal(topicConfigEntry(tuned, { "cleanup.policy": "compact , delete" }, "cleanup.policy").value, "compact,delete");
});

test("describeTopicConfigs lists every known key once, sorted, plus foreign keys the topic stores", () => {
  const entries = describeTopicConfigs(config(), { "confluent.placement.constraints": "false" });
  const names = entries.map((e) => e.name);
  assert.deepEqual(names, [...Object.keys(topicConfigChecks), "confluent.placement.constraints"].sort());
  const foreign = entries.find((e) => e.name === "confluent.placement.constraints")!;
  assert.deepEqual([foreign.value, foreign.source, foreign.documentation], ["false", ConfigSource.TOPIC_CONFIG, null]);
});

test("describeBrokerConfigs: every key strand reads, static or default; only the dynamic log defaults are writable", () => {
  const entries = describeBrokerConfigs(config({ "num.partitions": "4" }));
  const names = entries.map((e) => e.name);
  assert.deepEqual(names.filter((n) => !n.startsWith("ssl.")), Object.keys(brokerConfigKeys).sort());
  assert.deepEqual([...names].sort(), names, "sorted by name");
  const np = entries.find((e) => e.name === "num.partitions")!;
  assert.deepEqual([np.value, np.source, np.readOnly], ["4", ConfigSource.STATIC_BROKER_CONFIG, true]);
  const logDirs = entries.find((e) => e.name === "log.dirs")!;
  assert.equal(logDirs.source, ConfigSource.STATIC_BROKER_CONFIG);
  const rack = entries.find((e) => e.name === "broker.rack")!;
  assert.deepEqual([rack.value, rack.source, rack.synonyms], [null, ConfigSource.DEFAULT_CONFIG, []]);
  assert.equal(entries.find((e) => e.name === "log.retention.ms")!.readOnly, false);
  assert.equal(entries.find((e) => e.name === "log.retention.hours")!.readOnly, true, "as in Kafka, only the ms form is dynamic");
});

test("dynamic broker values: per broker > cluster default > static > default, with Kafka's synonym order", () => {
  const c = config({ "log.retention.hours": "24", "log.segment.bytes": "50000000" });
  const dynamic = {
    perBroker: new Map([["log.segment.bytes", "3000000"]]),
    clusterDefault: new Map([["log.segment.bytes", "2000000"], ["log.retention.ms", "60000"]]),
  };
  const seg = describeBrokerConfigs(c, dynamic).find((e) => e.name === "log.segment.bytes")!;
  assert.deepEqual([seg.value, seg.source], ["3000000", ConfigSource.DYNAMIC_BROKER_CONFIG]);
  assert.deepEqual(seg.synonyms.map((x) => [x.value, x.source]), [
    ["3000000", ConfigSource.DYNAMIC_BROKER_CONFIG],
    ["2000000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
    ["50000000", ConfigSource.STATIC_BROKER_CONFIG],
    ["1073741824", ConfigSource.DEFAULT_CONFIG],
  ]);
  // log.retention.hours: the ms form set dynamically comes before it and is dropped (Kafka's dropWhile).
  const hours = describeBrokerConfigs(c, dynamic).find((e) => e.name === "log.retention.hours")!;
  assert.deepEqual([hours.value, hours.source], ["24", ConfigSource.STATIC_BROKER_CONFIG]);
  assert.deepEqual(hours.synonyms.map((x) => [x.name, x.source]), [
    ["log.retention.hours", ConfigSource.STATIC_BROKER_CONFIG],
    ["log.retention.hours", ConfigSource.DEFAULT_CONFIG],
  ]);
  // The "" resource: only its own keys, without the per-broker values.
  const defaults = describeClusterDefaultConfigs(c, dynamic);
  assert.deepEqual(defaults.map((e) => [e.name, e.value, e.source]), [
    ["log.retention.ms", "60000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
    ["log.segment.bytes", "2000000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
  ]);
  assert.ok(defaults[1].synonyms.every((x) => x.source !== ConfigSource.DYNAMIC_BROKER_CONFIG));
  // Topic keys: the dynamic ms value beats the static hours; synonyms list dynamic ones first.
  const rms = topicConfigEntry(c, {}, "retention.ms", dynamic);
  assert.deepEqual([rms.value, rms.source], ["60000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]);
  assert.deepEqual(rms.synonyms.map((x) => [x.name, x.value, x.source]), [
    ["log.retention.ms", "60000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
    ["log.retention.hours", "24", ConfigSource.STATIC_BROKER_CONFIG],
    ["log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG],
  ]);
  assert.equal(topicDefaultValue(c, "segment.bytes", dynamic), "3000000");
  assert.equal(topicConfigEntry(c, { "segment.bytes": "1000" }, "segment.bytes", dynamic).value, "1000", "a topic override still wins");
});

test("broker resource names: this broker's id or the empty name", () => {
  assert.equal(brokerResourceError("0", 0), null);
  assert.equal(brokerResourceError("", 0), null);
  assert.match(brokerResourceError("1", 0)!, /Unexpected broker id/);
  assert.match(brokerResourceError("zero", 0)!, /must be an integer/);
});

test("IncrementalAlterConfigs operations apply in order; APPEND/SUBTRACT only for list keys", () => {
  const c = config();
  const ops = (list: [string, number, string | null][]) => list.map(([name, configOperation, value]) => ({ name, configOperation, value }));
  assert.deepEqual(applyOperations(c, { "retention.ms": "1" }, ops([["segment.bytes", 0, "100"], ["retention.ms", 1, null]])), {
    configs: { "segment.bytes": "100" },
  });
  assert.deepEqual(applyOperations(c, {}, ops([["cleanup.policy", 2, "compact"]])), { configs: { "cleanup.policy": "delete,compact" } });
  assert.deepEqual(applyOperations(c, { "cleanup.policy": "compact,delete" }, ops([["cleanup.policy", 3, "compact"]])), {
    configs: { "cleanup.policy": "delete" },
  });
  assert.deepEqual(applyOperations(c, {}, ops([["cleanup.policy", 3, "delete"]])), { configs: { "cleanup.policy": "" } });
  const refused = applyOperations(c, {}, ops([["retention.ms", 2, "1"]]));
  assert.ok("error" in refused && /append is not allowed for config key: retention\.ms/.test(refused.error.errorMessage ?? ""));
});

test("checkTopicConfig: Kafka's types and ranges, messages naming the key", () => {
  const ok = [
    ["flush.messages", "9223372036854775807"],
    ["max.compaction.lag.ms", "9223372036854775807"],
    ["retention.ms", "-1"],
    ["segment.bytes", "2147483647"],
    ["min.cleanable.dirty.ratio", "0.25"],
    ["min.cleanable.dirty.ratio", "1"],
    ["cleanup.policy", "compact,delete"],
    ["compression.type", "zstd"],
  ];
  for (const [k, v] of ok) assert.equal(checkTopicConfig(k, v), null, `${k}=${v}`);
  const bad = [
    ["flush.messages", "9223372036854775808"],
    ["flush.messages", "0"],
    ["retention.ms", "-2"],
    ["segment.bytes", "2147483648"],
    ["max.message.bytes", "1e6"],
    ["min.cleanable.dirty.ratio", ""],
    ["min.cleanable.dirty.ratio", "1.5"],
    ["min.cleanable.dirty.ratio", "0x1"],
    ["compression.type", "gzip,lz4"],
    ["message.timestamp.type", "Now"],
    ["cleanup.policy", "shred"],
    ["preallocate", "yes"],
    ["no.such.key", "1"],
  ];
  for (const [k, v] of bad) {
    const why = checkTopicConfig(k, v);
    assert.ok(why !== null && why.includes(k), `${k}=${v}: ${why}`);
  }
});

test("describeBrokerConfigs: the ssl.* keys, plain and listener-prefixed, are listed as Kafka lists them; secrets never show their value", () => {
  const c = config({
    listeners: "SSL://127.0.0.1:9093,SASL_PLAINTEXT://127.0.0.1:9094",
    "inter.broker.listener.name": "SSL",
    "ssl.keystore.location": "/etc/strand/broker.pem",
    "ssl.key.password": "hunter2",
    "listener.name.ssl.ssl.client.auth": "required",
    "ssl.truststore.location": "/etc/strand/ca.pem",
    "sasl.enabled.mechanisms": "PLAIN",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required user_a="secret-a";',
  });
  const entries = describeBrokerConfigs(c);
  const byName = new Map(entries.map((e) => [e.name, e]));
  const loc = byName.get("ssl.keystore.location")!;
  assert.deepEqual([loc.value, loc.source, loc.isSensitive, loc.readOnly], ["/etc/strand/broker.pem", ConfigSource.STATIC_BROKER_CONFIG, false, true]);
  const pw = byName.get("ssl.key.password")!;
  assert.deepEqual([pw.value, pw.source, pw.isSensitive, pw.synonyms.map((x) => x.value)], [null, ConfigSource.STATIC_BROKER_CONFIG, true, [null]]);
  assert.deepEqual([byName.get("ssl.client.auth")!.value, byName.get("ssl.client.auth")!.source], ["none", ConfigSource.DEFAULT_CONFIG]);
  assert.equal(byName.get("listener.name.ssl.ssl.client.auth")!.value, "required");
  const jaas = byName.get("listener.name.sasl_plaintext.plain.sasl.jaas.config")!;
  assert.deepEqual([jaas.value, jaas.isSensitive], [null, true]);
  assert.equal(byName.get("ssl.truststore.password")!.isSensitive, true);
  assert.ok(!JSON.stringify(entries).includes("hunter2") && !JSON.stringify(entries).includes("secret-a"), "no secret in the answer");
});


test("the topic keys are exactly Kafka 3.8's, with Kafka's defaults when nothing overrides them", () => {
  assert.deepEqual(Object.keys(topicConfigChecks).sort(), kafka38TopicKeys);
  const c = config();
  const expected: Record<string, string> = {
    "compression.gzip.level": "-1",
    "compression.lz4.level": "9",
    "compression.zstd.level": "3",
    "follower.replication.throttled.replicas": "",
    "leader.replication.throttled.replicas": "",
    "local.retention.bytes": "-2",
    "local.retention.ms": "-2",
    "message.downconversion.enable": "true",
    "message.format.version": "3.0-IV1",
    "remote.storage.enable": "false",
    "segment.jitter.ms": "0",
  };
  for (const [k, v] of Object.entries(expected)) assert.equal(topicDefaultValue(c, k), v, k);
  // Keys without a broker synonym (Kafka's CONFIGS_WITH_NO_SERVER_DEFAULTS) have none to list.
  const remote = topicConfigEntry(c, {}, "remote.storage.enable");
  assert.deepEqual([remote.source, remote.synonyms], [ConfigSource.DEFAULT_CONFIG, []]);
  const jitter = topicConfigEntry(config({ "log.roll.jitter.hours": "1" }), {}, "segment.jitter.ms");
  assert.deepEqual([jitter.value, jitter.source], ["3600000", ConfigSource.STATIC_BROKER_CONFIG]);
  assert.deepEqual(jitter.synonyms.map((x) => [x.name, x.value, x.source]), [
    ["log.roll.jitter.hours", "1", ConfigSource.STATIC_BROKER_CONFIG],
    ["log.roll.jitter.hours", "0", ConfigSource.DEFAULT_CONFIG],
  ]);
  const throttled = topicConfigEntry(c, { "leader.replication.throttled.replicas": " 0:1 , 1:2 " }, "leader.replication.throttled.replicas");
  assert.deepEqual([throttled.value, throttled.source, throttled.configType], ["0:1,1:2", ConfigSource.TOPIC_CONFIG, 7]);
});

test("checkTopicConfig: the keys Kafka 3.8 added past strand's first set, with Kafka's validators", () => {
  const ok = [
    ["segment.jitter.ms", "0"],
    ["segment.jitter.ms", "9223372036854775807"],
    ["compression.gzip.level", "-1"],
    ["compression.gzip.level", "9"],
    ["compression.lz4.level", "17"],
    ["compression.zstd.level", "-131072"],
    ["compression.zstd.level", "22"],
    ["message.format.version", "0.10.2"],
    ["message.format.version", "0.10.2.1"],
    ["message.format.version", "0.10.0-IV1"],
    ["message.format.version", "2.8"],
    ["message.format.version", "2.8.1"],
    ["message.format.version", "3.0-IV1"],
    ["message.format.version", "3.9-IV0"],
    ["message.downconversion.enable", "false"],
    ["remote.storage.enable", "false"],
    ["remote.storage.enable", "true"], // a valid boolean; checkTopicConfigSet refuses it
    ["local.retention.ms", "-2"],
    ["local.retention.bytes", "1000"],
    ["leader.replication.throttled.replicas", "*"],
    ["leader.replication.throttled.replicas", "0:1,1:2"],
    ["follower.replication.throttled.replicas", ""],
    ["follower.replication.throttled.replicas", " 0:1 , 3:0"],
  ];
  for (const [k, v] of ok) assert.equal(checkTopicConfig(k, v), null, `${k}=${v}`);
  const bad = [
    ["segment.jitter.ms", "-1"],
    ["compression.gzip.level", "0"],
    ["compression.gzip.level", "10"],
    ["compression.lz4.level", "0"],
    ["compression.lz4.level", "-1"],
    ["compression.zstd.level", "23"],
    ["message.format.version", "0.7"],
    ["message.format.version", "3.9"], // not a production release in 3.8: only 3.9-IV0
    ["message.format.version", "latest"],
    ["message.downconversion.enable", "1"],
    ["local.retention.ms", "-3"],
    ["leader.replication.throttled.replicas", "0"],
    ["leader.replication.throttled.replicas", "*,0:1"],
    ["follower.replication.throttled.replicas", "a:b"],
  ];
  for (const [k, v] of bad) {
    const why = checkTopicConfig(k, v);
    assert.ok(why !== null && why.includes(k), `${k}=${v}: ${why}`);
  }
});

test("checkTopicConfigSet: min.compaction.lag.ms above max.compaction.lag.ms, and tiered storage, are refused", () => {
  assert.equal(checkTopicConfigSet({}), null);
  assert.equal(checkTopicConfigSet({ "min.compaction.lag.ms": "5", "max.compaction.lag.ms": "5" }), null);
  assert.match(checkTopicConfigSet({ "min.compaction.lag.ms": "6", "max.compaction.lag.ms": "5" })!, /min\.compaction\.lag\.ms \(6\) > max\.compaction\.lag\.ms \(5\)/);
  assert.equal(checkTopicConfigSet({ "remote.storage.enable": "false" }), null);
  assert.match(checkTopicConfigSet({ "remote.storage.enable": "true" })!, /^remote\.storage\.enable=true: Tiered Storage functionality is disabled/);
});
