// Dynamic broker configs (src/broker/dynamic_config.ts) against a real broker in this process:
// kafkajs admin.alterConfigs / describeConfigs on a BROKER resource, IncrementalAlterConfigs over
// the wire for this broker and the cluster default (""), the log defaults re-applied to logs whose
// topic does not override the key, precedence (per broker > cluster default > server.properties),
// refusals naming the key, Kafka's znodes, and a restart that keeps the values.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigResourceTypes, ConfigSource, Kafka, logLevel } from "kafkajs";
import type { Admin } from "kafkajs";
import type { TopicLogConfig } from "../../src/log/mod.ts";
import { AlterConfigsApi, DescribeConfigsApi, IncrementalAlterConfigsApi } from "../../src/protocol/api/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { createTopic, produce, WireClient } from "../helpers/wire.ts";
import { served } from "../helpers/connection_slots.ts";
import { sharedZooKeeper, skipUnlessZooKeeper } from "../helpers/zookeeper.ts";

const BROKER = 4;
const TOPIC = 2;
const SET = 0;
const DELETE = 1;

function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

async function withAdmin(b: TestBroker, fn: (admin: Admin) => Promise<void>): Promise<void> {
  const kafka = new Kafka({
    clientId: "strand-dynamic-config",
    brokers: [b.bootstrap],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 5_000,
    requestTimeout: 30_000,
    retry: { retries: 0 },
  });
  const admin = kafka.admin();
  await within(15_000, "admin.connect", admin.connect());
  try {
    await fn(admin);
  } finally {
    await admin.disconnect();
  }
}

async function eventually(what: string, cond: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

type Op = [name: string, op: number, value: string | null];

async function alterBroker(c: WireClient, name: string, ops: Op[], validateOnly = false) {
  const res = await c.request(IncrementalAlterConfigsApi, 1, {
    resources: [{ resourceType: BROKER, resourceName: name, configs: ops.map(([n, configOperation, value]) => ({ name: n, configOperation, value })) }],
    validateOnly,
  });
  return (res.responses as { errorCode: number; errorMessage: string | null }[])[0];
}

interface WireEntry {
  name: string;
  value: string | null;
  readOnly: boolean;
  configSource: number;
  synonyms: { name: string; value: string | null; source: number }[];
}

async function describe(c: WireClient, resourceType: number, resourceName: string): Promise<Map<string, WireEntry>> {
  const res = await c.request(DescribeConfigsApi, 4, {
    resources: [{ resourceType, resourceName, configurationKeys: null }],
    includeSynonyms: true,
    includeDocumentation: false,
  });
  const r = (res.results as { errorCode: number; errorMessage: string | null; configs: WireEntry[] }[])[0];
  assert.equal(r.errorCode, ErrorCode.NONE, r.errorMessage ?? "");
  return new Map(r.configs.map((e) => [e.name, e]));
}

const logConfigOf = (b: TestBroker, topic: string) => b.broker.services.replicaManager.getPartition(topic, 0)!.log.config as TopicLogConfig;

test("kafkajs alterConfigs on a broker: describeConfigs shows the value and its source; logs without an override follow it, an override still wins", async () => {
  const b = await startBroker({ "log.segment.bytes": "50000000" });
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "plain")).errorCode, ErrorCode.NONE);
    assert.equal((await createTopic(c, "pinned", { configs: { "retention.ms": "99999", "segment.bytes": "70000" } })).errorCode, ErrorCode.NONE);
    await eventually("partitions are here", () => ["plain", "pinned"].every((t) => b.broker.services.replicaManager.getPartition(t, 0) !== undefined));
    assert.equal(logConfigOf(b, "plain").segmentBytes, 50_000_000);

    await withAdmin(b, async (admin) => {
      await within(15_000, "alterConfigs", admin.alterConfigs({
        validateOnly: false,
        resources: [{
          type: ConfigResourceTypes.BROKER,
          name: "0",
          configEntries: [{ name: "log.retention.ms", value: "12345" }, { name: "log.segment.bytes", value: "100000" }],
        }],
      }));
      const described = await within(15_000, "describeConfigs", admin.describeConfigs({
        includeSynonyms: true,
        resources: [{ type: ConfigResourceTypes.BROKER, name: "0" }],
      }));
      const byName = new Map(described.resources[0].configEntries.map((e) => [e.configName, e]));
      const seg = byName.get("log.segment.bytes")!;
      assert.deepEqual([seg.configValue, seg.configSource, seg.readOnly], ["100000", ConfigSource.DYNAMIC_BROKER_CONFIG, false]);
      assert.deepEqual(seg.configSynonyms.map((s) => [s.configName, s.configValue, s.configSource]), [
        ["log.segment.bytes", "100000", ConfigSource.DYNAMIC_BROKER_CONFIG],
        ["log.segment.bytes", "50000000", ConfigSource.STATIC_BROKER_CONFIG],
        ["log.segment.bytes", "1073741824", ConfigSource.DEFAULT_CONFIG],
      ]);
      const ret = byName.get("log.retention.ms")!;
      assert.deepEqual([ret.configValue, ret.configSource], ["12345", ConfigSource.DYNAMIC_BROKER_CONFIG]);
      assert.deepEqual(ret.configSynonyms.map((s) => [s.configName, s.configSource]), [
        ["log.retention.ms", ConfigSource.DYNAMIC_BROKER_CONFIG],
        ["log.retention.hours", ConfigSource.DEFAULT_CONFIG],
      ]);
      assert.equal(byName.get("num.partitions")?.readOnly, true, "a key that is not dynamic stays read-only");

      // Topic keys: the dynamic broker value is the default of a topic that does not override it.
      const topic = await within(15_000, "describeConfigs topic", admin.describeConfigs({
        includeSynonyms: true,
        resources: [{ type: ConfigResourceTypes.TOPIC, name: "plain" }],
      }));
      const rms = topic.resources[0].configEntries.find((e) => e.configName === "retention.ms")!;
      assert.deepEqual([rms.configValue, rms.configSource], ["12345", ConfigSource.DYNAMIC_BROKER_CONFIG]);
      assert.deepEqual(rms.configSynonyms.map((s) => [s.configName, s.configValue, s.configSource]), [
        ["log.retention.ms", "12345", ConfigSource.DYNAMIC_BROKER_CONFIG],
        ["log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG],
      ]);
    });

    // The logs: "plain" takes both new defaults; "pinned" keeps its overrides.
    await eventually("plain's log follows the new defaults", () => logConfigOf(b, "plain").retentionMs === 12345 && logConfigOf(b, "plain").segmentBytes === 100_000);
    assert.equal(logConfigOf(b, "pinned").retentionMs, 99999);
    assert.equal(logConfigOf(b, "pinned").segmentBytes, 70000);
    // A segment of the new size: the log rolls once 100 kB are written.
    for (let i = 0; i < 30; i++) assert.equal((await produce(c, "plain", 0, buildBatch(valueRecords(5, "v", 1000)))).errorCode, ErrorCode.NONE);
    assert.ok(b.broker.services.replicaManager.getPartition("plain", 0)!.log.segmentCount >= 2, "rolled at the dynamic segment size");
    // A topic created afterwards starts with the new defaults.
    assert.equal((await createTopic(c, "later")).errorCode, ErrorCode.NONE);
    await eventually("later's partition", () => b.broker.services.replicaManager.getPartition("later", 0) !== undefined);
    assert.equal(logConfigOf(b, "later").retentionMs, 12345);

    // Stored as Kafka stores it, announced with a change notification.
    const r = b.registrySession();
    try {
      const dec = (d: Uint8Array) => JSON.parse(new TextDecoder().decode(d));
      assert.deepEqual(dec((await r.getData("/config/brokers/0")).data), { version: 1, config: { "log.retention.ms": "12345", "log.segment.bytes": "100000" } });
      const changes = [];
      for (const n of await r.getChildren("/config/changes")) changes.push(dec((await r.getData(`/config/changes/${n}`)).data));
      assert.ok(changes.some((x) => x.version === 2 && x.entity_path === "brokers/0"), JSON.stringify(changes));
    } finally {
      await r.close();
    }

    // AlterConfigs replaces the whole set: log.retention.ms goes back to server.properties' value.
    const res = await c.request(AlterConfigsApi, 2, {
      resources: [{ resourceType: BROKER, resourceName: "0", configs: [{ name: "log.segment.bytes", value: "100000" }] }],
      validateOnly: false,
    });
    assert.equal((res.responses as Struct[])[0].errorCode, ErrorCode.NONE);
    await eventually("plain's retention back to the default", () => logConfigOf(b, "plain").retentionMs === 7 * 24 * 3_600_000);
  } finally {
    c.close();
    await b.stop();
  }
});

test("per-broker beats the cluster default, which beats server.properties; message.max.bytes and min.insync.replicas apply to the next produce", async () => {
  const b = await startBroker({ "log.retention.bytes": "9000000" });
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "t")).errorCode, ErrorCode.NONE);
    await eventually("partition", () => b.broker.services.replicaManager.getPartition("t", 0) !== undefined);
    assert.equal(logConfigOf(b, "t").retentionBytes, 9_000_000);

    assert.equal((await alterBroker(c, "", [["log.retention.bytes", SET, "5000000"]])).errorCode, ErrorCode.NONE);
    await eventually("the cluster default applies", () => logConfigOf(b, "t").retentionBytes === 5_000_000);
    assert.equal((await alterBroker(c, "0", [["log.retention.bytes", SET, "7000000"]])).errorCode, ErrorCode.NONE);
    await eventually("the per-broker value wins", () => logConfigOf(b, "t").retentionBytes === 7_000_000);
    const cluster = await alterBroker(c, "", [["log.retention.bytes", SET, "6000000"]]);
    assert.equal(cluster.errorCode, ErrorCode.NONE);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(logConfigOf(b, "t").retentionBytes, 7_000_000, "a new cluster default does not hide the per-broker value");

    // Describe: the broker resource, and the cluster-default resource ("") with only its keys.
    const mine = (await describe(c, BROKER, "0")).get("log.retention.bytes")!;
    assert.deepEqual([mine.value, mine.configSource], ["7000000", ConfigSource.DYNAMIC_BROKER_CONFIG]);
    assert.deepEqual(mine.synonyms.map((s) => [s.value, s.source]), [
      ["7000000", ConfigSource.DYNAMIC_BROKER_CONFIG],
      ["6000000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
      ["9000000", ConfigSource.STATIC_BROKER_CONFIG],
      ["-1", ConfigSource.DEFAULT_CONFIG],
    ]);
    const defaults = await describe(c, BROKER, "");
    assert.deepEqual([...defaults.keys()], ["log.retention.bytes"]);
    assert.deepEqual([defaults.get("log.retention.bytes")!.value, defaults.get("log.retention.bytes")!.configSource], ["6000000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]);
    const topicEntry = (await describe(c, TOPIC, "t")).get("retention.bytes")!;
    assert.deepEqual([topicEntry.value, topicEntry.configSource], ["7000000", ConfigSource.DYNAMIC_BROKER_CONFIG]);

    assert.equal((await alterBroker(c, "0", [["log.retention.bytes", DELETE, null]])).errorCode, ErrorCode.NONE);
    await eventually("back to the cluster default", () => logConfigOf(b, "t").retentionBytes === 6_000_000);
    assert.equal((await alterBroker(c, "", [["log.retention.bytes", DELETE, null]])).errorCode, ErrorCode.NONE);
    await eventually("back to server.properties", () => logConfigOf(b, "t").retentionBytes === 9_000_000);

    // message.max.bytes: the next produce is measured against it.
    const batch = () => buildBatch(valueRecords(4, "v", 1000));
    assert.equal((await produce(c, "t", 0, batch())).errorCode, ErrorCode.NONE);
    assert.equal((await alterBroker(c, "", [["message.max.bytes", SET, "2048"]])).errorCode, ErrorCode.NONE);
    await eventually("max.message.bytes follows", () => logConfigOf(b, "t").maxMessageBytes === 2048);
    assert.equal((await produce(c, "t", 0, batch())).errorCode, ErrorCode.MESSAGE_TOO_LARGE);
    // min.insync.replicas: one broker cannot satisfy 2 with acks=all.
    assert.equal((await alterBroker(c, "0", [["min.insync.replicas", SET, "2"], ["message.max.bytes", SET, "1000000"]])).errorCode, ErrorCode.NONE);
    await eventually("min.insync.replicas follows", () => logConfigOf(b, "t").minInsyncReplicas === 2);
    assert.equal((await produce(c, "t", 0, batch(), -1)).errorCode, ErrorCode.NOT_ENOUGH_REPLICAS);
    assert.equal((await produce(c, "t", 0, batch(), 1)).errorCode, ErrorCode.NONE, "acks=1 does not need the ISR");
  } finally {
    c.close();
    await b.stop();
  }
});

test("refusals: keys that are not dynamic (named), bad values (named), other broker ids; validate_only writes nothing", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    const nonDynamic = await alterBroker(c, "0", [["num.partitions", SET, "3"], ["log.retention.hours", SET, "1"]]);
    assert.equal(nonDynamic.errorCode, ErrorCode.INVALID_CONFIG);
    assert.equal(
      nonDynamic.errorMessage,
      "Invalid config value for resource ConfigResource(type=BROKER, name='0'): Cannot update these configs dynamically: Set(num.partitions, log.retention.hours)",
    );
    const bad = await alterBroker(c, "", [["log.segment.bytes", SET, "huge"]]);
    assert.equal(bad.errorCode, ErrorCode.INVALID_CONFIG);
    assert.match(bad.errorMessage ?? "", /log\.segment\.bytes/);
    const low = await alterBroker(c, "0", [["min.insync.replicas", SET, "0"]]);
    assert.equal(low.errorCode, ErrorCode.INVALID_CONFIG);
    assert.match(low.errorMessage ?? "", /min\.insync\.replicas/);
    const other = await alterBroker(c, "7", [["log.retention.ms", SET, "1"]]);
    assert.equal(other.errorCode, ErrorCode.INVALID_REQUEST);
    assert.match(other.errorMessage ?? "", /Unexpected broker id/);
    assert.equal((await alterBroker(c, "0", [["log.retention.ms", SET, "1000"]], true)).errorCode, ErrorCode.NONE);

    // kafkajs sees the refusal as an error too.
    await withAdmin(b, async (admin) => {
      await assert.rejects(
        admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.BROKER, name: "0", configEntries: [{ name: "broker.rack", value: "r1" }] }] }),
        (e: Error & { type?: string }) => e.type === "INVALID_CONFIG" || /INVALID_CONFIG|invalid/i.test(e.message),
      );
    });

    const r = b.registrySession();
    try {
      assert.equal(await r.exists("/config/brokers/0"), null, "nothing refused or validated only was written");
      assert.equal(await r.exists("/config/brokers/<default>"), null);
    } finally {
      await r.close();
    }
    assert.equal(b.broker.services.dynamicConfig.values.perBroker.size, 0);
  } finally {
    c.close();
    await b.stop();
  }
});

test("a restarted broker keeps its dynamic configs (per broker and cluster default)", async () => {
  const b = await startBroker();
  let c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "kept")).errorCode, ErrorCode.NONE);
    assert.equal((await alterBroker(c, "0", [["log.retention.ms", SET, "54321"]])).errorCode, ErrorCode.NONE);
    assert.equal((await alterBroker(c, "", [["log.segment.bytes", SET, "300000"]])).errorCode, ErrorCode.NONE);
    await eventually("applied", () => logConfigOf(b, "kept").retentionMs === 54321 && logConfigOf(b, "kept").segmentBytes === 300_000);
    c.close();
    await b.restart();
    c = await WireClient.connect(b.port);
    await eventually("the partition is back", () => b.broker.services.replicaManager.getPartition("kept", 0) !== undefined);
    assert.equal(logConfigOf(b, "kept").retentionMs, 54321);
    assert.equal(logConfigOf(b, "kept").segmentBytes, 300_000);
    const desc = await describe(c, BROKER, "0");
    assert.deepEqual([desc.get("log.retention.ms")!.value, desc.get("log.retention.ms")!.configSource], ["54321", ConfigSource.DYNAMIC_BROKER_CONFIG]);
    assert.deepEqual([desc.get("log.segment.bytes")!.value, desc.get("log.segment.bytes")!.configSource], ["300000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]);
  } finally {
    c.close();
    await b.stop();
  }
});

const zk = sharedZooKeeper();
const zkSkip = skipUnlessZooKeeper();

test("with ZooKeeper, two brokers: the cluster default reaches both, a per-broker value only its broker", { skip: zkSkip }, async () => {
  const server = await zk.get();
  const connect = `${server.connectString}/dyn-${Date.now()}`;
  const b0 = await startBroker({ "broker.id": "0", "zookeeper.connect": connect, "zookeeper.session.timeout.ms": "6000" });
  let b1: TestBroker | null = null;
  let c0: WireClient | null = null;
  let c1: WireClient | null = null;
  try {
    b1 = await startBroker({ "broker.id": "1", "zookeeper.connect": connect, "zookeeper.session.timeout.ms": "6000" });
    c0 = await WireClient.connect(b0.port);
    c1 = await WireClient.connect(b1.port);
    const retentionBytes = (b: TestBroker) => b.broker.services.dynamicConfig.effective.logRetentionBytes;
    assert.equal((await alterBroker(c0, "", [["log.retention.bytes", SET, "5000000"]])).errorCode, ErrorCode.NONE);
    await eventually("both brokers see the cluster default", () => retentionBytes(b0) === 5_000_000 && retentionBytes(b1!) === 5_000_000);
    // Broker 1's own value, sent to broker 1 (a broker refuses another broker's id, as Kafka does).
    const wrong = await alterBroker(c0, "1", [["log.retention.bytes", SET, "7000000"]]);
    assert.equal(wrong.errorCode, ErrorCode.INVALID_REQUEST);
    assert.equal((await alterBroker(c1, "1", [["log.retention.bytes", SET, "7000000"]])).errorCode, ErrorCode.NONE);
    await eventually("broker 1 takes its own value", () => retentionBytes(b1!) === 7_000_000);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(retentionBytes(b0), 5_000_000, "broker 0 ignores broker 1's node");
    // A topic created now: each partition's log follows its own broker's value.
    assert.equal((await createTopic(c0, "spread", { numPartitions: 4 })).errorCode, ErrorCode.NONE);
    const held = (b: TestBroker) => b.broker.services.replicaManager.allPartitions().filter((p) => p.topic === "spread");
    await eventually("all 4 partitions are held", () => held(b0).length + held(b1!).length === 4);
    for (const p of held(b0)) assert.equal((p.log.config as TopicLogConfig).retentionBytes, 5_000_000);
    for (const p of held(b1)) assert.equal((p.log.config as TopicLogConfig).retentionBytes, 7_000_000);
  } finally {
    c0?.close();
    c1?.close();
    await b1?.stop();
    await b0.stop();
  }
});

test("with ZooKeeper: max.connections.per.ip as the cluster default, then per broker, applies to the next connection without a restart", { skip: zkSkip, timeout: 60_000 }, async () => {
  const server = await zk.get();
  const b = await startBroker({ "broker.id": "0", "zookeeper.connect": `${server.connectString}/dynconn-${Date.now()}`, "zookeeper.session.timeout.ms": "6000" });
  const open: WireClient[] = [];
  try {
    const admin = await WireClient.connect(b.port);
    open.push(admin);
    assert.equal((await alterBroker(admin, "", [["max.connections.per.ip", SET, "2"]])).errorCode, ErrorCode.NONE);
    await eventually("the broker applies the cluster default", () => b.broker.services.dynamicConfig.values.clusterDefault.get("max.connections.per.ip") === "2");
    assert.equal(await served(b.port, open), true, "a second connection from 127.0.0.1 is served");
    assert.equal(await served(b.port, open), false, "a third is refused");
    assert.equal((await alterBroker(admin, "0", [["max.connections.per.ip", SET, "4"]])).errorCode, ErrorCode.NONE);
    await eventually("the broker applies its own value", () => b.broker.services.dynamicConfig.values.perBroker.get("max.connections.per.ip") === "4");
    assert.equal(await served(b.port, open), true, "raised per broker: the next is served");
  } finally {
    for (const c of open) c.close();
    await b.stop();
  }
});

test("dynamic config: stop the shared ZooKeeper", async () => {
  await zk.stop();
});
