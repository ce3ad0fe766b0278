// Every topic config Kafka 3.8 documents, end to end: kafkajs creates a topic with the keys strand
// once refused (message.timestamp.difference.max.ms, message.format.version, ...) and reads all 34
// back; over the wire, each new key's bad value is INVALID_CONFIG naming the key, tiered storage
// and a min > max compaction lag are refused as Kafka refuses them, the throttled-replica lists
// take APPEND/SUBTRACT, synonyms come only when asked for, and segment.jitter.ms reaches the log.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConfigResourceTypes, ConfigSource, Kafka, logLevel } from "kafkajs";
import { AlterConfigsApi, DescribeConfigsApi, IncrementalAlterConfigsApi } from "../../src/protocol/api/mod.ts";
import type { ReplicaFetcherManager } from "../../src/replication/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker } from "../helpers/broker.ts";
import { kafka38TopicKeys } from "../helpers/kafka38_topic_keys.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";

const TOPIC = 2;
const APPEND = 2;
const SUBTRACT = 3;


const newKeys: Record<string, string> = {
  "compression.gzip.level": "5",
  "compression.lz4.level": "12",
  "compression.zstd.level": "-5",
  "follower.replication.throttled.replicas": "0:0",
  "leader.replication.throttled.replicas": "*",
  "local.retention.bytes": "1000",
  "local.retention.ms": "-2",
  "message.downconversion.enable": "false",
  "message.format.version": "0.10.2",
  "message.timestamp.difference.max.ms": "3600000",
  "preallocate": "true",
  "remote.storage.enable": "false",
  "segment.jitter.ms": "5000",
};

test("kafkajs: a topic created with every key Kafka 3.8 added, each described back as the topic's", async () => {
  const b = await startBroker();
  const admin = new Kafka({ clientId: "strand-kafka38", brokers: [b.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 1 } }).admin();
  try {
    await admin.connect();
    const created = await admin.createTopics({
      topics: [{ topic: "all-keys", configEntries: Object.entries(newKeys).map(([name, value]) => ({ name, value })) }],
    });
    assert.equal(created, true);
    const { resources } = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: "all-keys" }], includeSynonyms: false });
    const entries = new Map(resources[0].configEntries.map((e) => [e.configName, e]));
    assert.deepEqual([...entries.keys()].sort(), kafka38TopicKeys, "every key a Kafka 3.8 broker describes");
    for (const [k, v] of Object.entries(newKeys)) {
      assert.deepEqual([entries.get(k)?.configValue, entries.get(k)?.configSource], [v, ConfigSource.TOPIC_CONFIG], k);
      assert.deepEqual(entries.get(k)?.configSynonyms, [], `${k}: no synonyms unless asked for`);
    }
    // segment.jitter.ms reached the partition's log.
    const part = b.broker.services.replicaManager.getPartition("all-keys", 0);
    assert.equal(part?.log.config.segmentJitterMs, 5000);

    await assert.rejects(
      admin.createTopics({ topics: [{ topic: "tiered", configEntries: [{ name: "remote.storage.enable", value: "true" }] }] }),
      (e: Error & { errors?: { type?: string }[] }) => e.errors?.[0]?.type === "INVALID_CONFIG",
    );
  } finally {
    await admin.disconnect();
    await b.stop();
  }
});

test("topic configs over the wire: Kafka's validators for the new keys, cross-key checks, list operations, synonyms only when asked", async () => {
  const b = await startBroker({ "log.roll.jitter.ms": "250" });
  const c = await WireClient.connect(b.port);
  try {
    const bad: [string, string][] = [
      ["segment.jitter.ms", "-1"],
      ["compression.gzip.level", "10"],
      ["compression.lz4.level", "18"],
      ["compression.zstd.level", "23"],
      ["message.format.version", "0.7.0"],
      ["message.downconversion.enable", "maybe"],
      ["local.retention.ms", "-3"],
      ["local.retention.bytes", "x"],
      ["leader.replication.throttled.replicas", "0-1"],
      ["follower.replication.throttled.replicas", "*,1:1"],
      ["remote.storage.enable", "yes"],
    ];
    for (const [k, v] of bad) {
      const r = await createTopic(c, "bad", { configs: { [k]: v } });
      assert.equal(r.errorCode, ErrorCode.INVALID_CONFIG, `${k}=${v}`);
      assert.ok(r.errorMessage?.includes(k), `${k}=${v}: ${r.errorMessage}`);
    }
    const tiered = await createTopic(c, "bad", { configs: { "remote.storage.enable": "true" } });
    assert.equal(tiered.errorCode, ErrorCode.INVALID_CONFIG);
    assert.match(tiered.errorMessage ?? "", /Tiered Storage functionality is disabled in the broker/);
    const lag = await createTopic(c, "bad", { configs: { "min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5" } });
    assert.equal(lag.errorCode, ErrorCode.INVALID_CONFIG);
    assert.match(lag.errorMessage ?? "", /min\.compaction\.lag\.ms \(10\) > max\.compaction\.lag\.ms \(5\)/);

    assert.equal((await createTopic(c, "lists", { configs: { "max.compaction.lag.ms": "100" } })).errorCode, ErrorCode.NONE);
    const incremental = async (ops: [string, number, string | null][]) => {
      const res = await c.request(IncrementalAlterConfigsApi, 1, {
        resources: [{ resourceType: TOPIC, resourceName: "lists", configs: ops.map(([name, configOperation, value]) => ({ name, configOperation, value })) }],
        validateOnly: false,
      });
      return (res.responses as { errorCode: number; errorMessage: string | null }[])[0];
    };
    assert.equal((await incremental([["leader.replication.throttled.replicas", APPEND, "0:0"]])).errorCode, ErrorCode.NONE);
    assert.equal((await incremental([["leader.replication.throttled.replicas", APPEND, "1:0"]])).errorCode, ErrorCode.NONE);
    assert.equal((await incremental([["leader.replication.throttled.replicas", SUBTRACT, "0:0"]])).errorCode, ErrorCode.NONE);
    // The compaction lags are checked together, against what the topic already has.
    const tooLate = await incremental([["min.compaction.lag.ms", 0, "101"]]);
    assert.equal(tooLate.errorCode, ErrorCode.INVALID_CONFIG);

    const describe = async (includeSynonyms: boolean, keys: string[]) => {
      const res = await c.request(DescribeConfigsApi, 4, {
        resources: [{ resourceType: TOPIC, resourceName: "lists", configurationKeys: keys }],
        includeSynonyms,
        includeDocumentation: false,
      });
      const r = (res.results as { configs: { name: string; value: string; configSource: number; synonyms: { name: string; value: string; source: number }[] }[] }[])[0];
      return new Map(r.configs.map((e) => [e.name, e]));
    };
    const keys = ["leader.replication.throttled.replicas", "segment.jitter.ms", "remote.storage.enable", "message.format.version"];
    const plain = await describe(false, keys);
    assert.equal(plain.get("leader.replication.throttled.replicas")?.value, "1:0");
    for (const e of plain.values()) assert.deepEqual(e.synonyms, [], `${e.name}: synonyms only when asked for`);
    const full = await describe(true, keys);
    assert.deepEqual(full.get("segment.jitter.ms"), {
      ...full.get("segment.jitter.ms")!,
      value: "250",
      configSource: ConfigSource.STATIC_BROKER_CONFIG,
      synonyms: [
        { name: "log.roll.jitter.ms", value: "250", source: ConfigSource.STATIC_BROKER_CONFIG },
        { name: "log.roll.jitter.hours", value: "0", source: ConfigSource.DEFAULT_CONFIG },
      ],
    });
    assert.deepEqual(
      [full.get("remote.storage.enable")?.value, full.get("remote.storage.enable")?.configSource, full.get("remote.storage.enable")?.synonyms],
      ["false", ConfigSource.DEFAULT_CONFIG, []],
    );
    assert.deepEqual(full.get("message.format.version")?.synonyms, [{ name: "log.message.format.version", value: "3.0-IV1", source: ConfigSource.DEFAULT_CONFIG }]);
    assert.deepEqual(
      full.get("leader.replication.throttled.replicas")?.synonyms,
      [{ name: "leader.replication.throttled.replicas", value: "1:0", source: ConfigSource.TOPIC_CONFIG }],
    );
    // The broker's own jitter reached the log of a topic without an override.
    assert.equal(b.broker.services.replicaManager.getPartition("lists", 0)?.log.config.segmentJitterMs, 250);

    // AlterConfigs (the whole set) validates the same way.
    const alter = await c.request(AlterConfigsApi, 1, {
      resources: [{ resourceType: TOPIC, resourceName: "lists", configs: [{ name: "compression.zstd.level", value: "99" }] }],
      validateOnly: false,
    });
    const ar = (alter.responses as { errorCode: number; errorMessage: string | null }[])[0];
    assert.equal(ar.errorCode, ErrorCode.INVALID_CONFIG);
    assert.match(ar.errorMessage ?? "", /compression\.zstd\.level/);
  } finally {
    c.close();
    await b.stop();
  }
});

test("leader/follower.replication.throttled.rate and log.roll.jitter.ms are dynamic broker configs: a change reaches the quotas and the logs", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    const rm = b.broker.services.replicaManager;
    const follower = () => (rm.fetchers as ReplicaFetcherManager).quota!;
    assert.equal(rm.leaderQuota?.quota, Infinity, "Long.MAX_VALUE by default: never throttled");
    assert.equal(follower().quota, Infinity);
    const BROKER = 4;
    const res = await c.request(IncrementalAlterConfigsApi, 1, {
      resources: [{
        resourceType: BROKER,
        resourceName: "0",
        configs: [
          { name: "leader.replication.throttled.rate", configOperation: 0, value: "1048576" },
          { name: "follower.replication.throttled.rate", configOperation: 0, value: "2048" },
        ],
      }],
      validateOnly: false,
    });
    assert.deepEqual((res.responses as { errorCode: number }[]).map((r) => r.errorCode), [ErrorCode.NONE]);
    assert.equal(rm.leaderQuota?.quota, 1048576);
    assert.equal(follower().quota, 2048);
    const bad = await c.request(IncrementalAlterConfigsApi, 1, {
      resources: [{ resourceType: BROKER, resourceName: "0", configs: [{ name: "leader.replication.throttled.rate", configOperation: 0, value: "-1" }] }],
      validateOnly: false,
    });
    assert.equal((bad.responses as { errorCode: number }[])[0].errorCode, ErrorCode.INVALID_CONFIG);
    assert.equal(rm.leaderQuota?.quota, 1048576);

    // log.roll.jitter.ms is dynamic too (Kafka's DynamicLogConfig): it reaches a topic's log that does not override segment.jitter.ms.
    assert.equal((await createTopic(c, "jittered")).errorCode, ErrorCode.NONE);
    const jitter = await c.request(IncrementalAlterConfigsApi, 1, {
      resources: [{ resourceType: BROKER, resourceName: "", configs: [{ name: "log.roll.jitter.ms", configOperation: 0, value: "777" }] }],
      validateOnly: false,
    });
    assert.deepEqual((jitter.responses as { errorCode: number }[]).map((r) => r.errorCode), [ErrorCode.NONE]);
    const deadline = Date.now() + 10_000;
    while (rm.getPartition("jittered", 0)?.log.config.segmentJitterMs !== 777 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(rm.getPartition("jittered", 0)?.log.config.segmentJitterMs, 777);
  } finally {
    c.close();
    await b.stop();
  }
});

test("kafkajs: a keyless record on a compacted topic is refused with INVALID_RECORD; a keyed one goes in", async () => {
  const b = await startBroker();
  const kafka = new Kafka({ clientId: "strand-compacted", brokers: [b.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 0 } });
  const admin = kafka.admin();
  const producer = kafka.producer({ retry: { retries: 0 } });
  try {
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: "compacted", configEntries: [{ name: "cleanup.policy", value: "compact" }] }] });
    await producer.connect();
    await assert.rejects(
      producer.send({ topic: "compacted", acks: -1, messages: [{ value: "no key" }] }),
      (e: Error & { type?: string; cause?: { type?: string } }) => (e.type ?? e.cause?.type) === "INVALID_RECORD",
    );
    const [ok] = await producer.send({ topic: "compacted", acks: -1, messages: [{ key: "k", value: "keyed" }] });
    assert.deepEqual([ok.errorCode, ok.baseOffset], [0, "0"], "the refused record took no offset");
  } finally {
    await producer.disconnect();
    await admin.disconnect();
    await b.stop();
  }
});
