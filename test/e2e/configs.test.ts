// Topic configs end to end: kafkajs 2.2.4 admin.describeConfigs / alterConfigs against a real
// broker in this process, and raw Kafka-protocol requests (test/helpers/wire.ts) for what kafkajs
// lacks (IncrementalAlterConfigs, DescribeConfigs v3-4, CreateTopics v7's config listing). A
// change is stored in the registry as Kafka stores it (/config/topics/<t>, a config_change_
// notification) and reaches the partition's log: a changed max.message.bytes refuses a batch it
// accepted before, and accepts it again once the override is deleted.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConfigResourceTypes, ConfigSource, Kafka, logLevel } from "kafkajs";
import type { Admin } from "kafkajs";
import { topicConfigChecks } from "../../src/log/mod.ts";
import { AlterConfigsApi, CreateTopicsApi, DescribeConfigsApi, IncrementalAlterConfigsApi } from "../../src/protocol/api/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { createTopic, produce, WireClient } from "../helpers/wire.ts";

const TOPIC = 2;
const BROKER = 4;
const SET = 0;
const DELETE = 1;
const APPEND = 2;
const SUBTRACT = 3;

function client(bootstrap: string): Kafka {
  return new Kafka({
    clientId: "strand-configs",
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 5_000,
    requestTimeout: 30_000,
    retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1_000 },
  });
}

/** Rejects if p has not settled within ms, so a stuck client cannot hang the suite. */
function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

async function withAdmin(b: TestBroker, fn: (admin: Admin) => Promise<void>): Promise<void> {
  const admin = client(b.bootstrap).admin();
  await within(15_000, "admin.connect", admin.connect());
  try {
    await fn(admin);
  } finally {
    await admin.disconnect();
  }
}

interface WireConfig {
  name: string;
  value: string | null;
  readOnly: boolean;
  isDefault: boolean;
  configSource: number;
  isSensitive: boolean;
  synonyms: { name: string; value: string | null; source: number }[];
  configType: number;
  documentation: string | null;
}

interface WireResult {
  errorCode: number;
  errorMessage: string | null;
  resourceName: string;
  configs: WireConfig[];
}

async function describeWire(
  c: WireClient,
  version: number,
  resources: { resourceType: number; resourceName: string; configurationKeys: string[] | null }[],
  opts: { includeSynonyms?: boolean; includeDocumentation?: boolean } = {},
): Promise<WireResult[]> {
  const res = await c.request(DescribeConfigsApi, version, {
    resources,
    includeSynonyms: opts.includeSynonyms ?? false,
    includeDocumentation: opts.includeDocumentation ?? false,
  });
  return res.results as WireResult[];
}

async function describeTopicWire(c: WireClient, topic: string, version = 4): Promise<Map<string, WireConfig>> {
  const [r] = await describeWire(c, version, [{ resourceType: TOPIC, resourceName: topic, configurationKeys: null }], { includeSynonyms: true });
  assert.equal(r.errorCode, ErrorCode.NONE, r.errorMessage ?? "");
  return new Map(r.configs.map((e) => [e.name, e]));
}

type Op = [name: string, op: number, value: string | null];

async function incrementalAlter(c: WireClient, topic: string, ops: Op[], validateOnly = false, version = 1, resourceType = TOPIC) {
  const res = await c.request(IncrementalAlterConfigsApi, version, {
    resources: [{
      resourceType,
      resourceName: topic,
      configs: ops.map(([name, configOperation, value]) => ({ name, configOperation, value })),
    }],
    validateOnly,
  });
  return (res.responses as { errorCode: number; errorMessage: string | null; resourceName: string }[])[0];
}

/** The topic's stored config node and the change notifications, as zkCli.sh would show them. */
async function registryView(b: TestBroker, topic: string): Promise<{ config: unknown; changes: unknown[] }> {
  const r = b.registrySession();
  try {
    const dec = (d: Uint8Array) => JSON.parse(new TextDecoder().decode(d));
    const config = dec((await r.getData(`/config/topics/${topic}`)).data);
    const names = await r.getChildren("/config/changes");
    for (const n of names) assert.match(n, /^config_change_\d{10}$/);
    const changes = [];
    for (const n of names) changes.push(dec((await r.getData(`/config/changes/${n}`)).data));
    return { config, changes };
  } finally {
    await r.close();
  }
}

/** Polls until cond() holds (a config change reaches the broker's logs asynchronously). */
async function eventually(what: string, cond: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("kafkajs admin.describeConfigs: every topic key with its effective value, source and synonyms", async () => {
  const b = await startBroker({ "log.segment.bytes": "50000000", "log.roll.hours": "24" });
  try {
    await withAdmin(b, async (admin) => {
      await within(30_000, "createTopics", admin.createTopics({
        topics: [{
          topic: "described",
          configEntries: [{ name: "retention.ms", value: "3600000" }, { name: "cleanup.policy", value: "compact" }],
        }],
      }));
      const { resources } = await within(15_000, "describeConfigs", admin.describeConfigs({
        resources: [{ type: ConfigResourceTypes.TOPIC, name: "described" }],
        includeSynonyms: true,
      }));
      assert.equal(resources.length, 1);
      assert.equal(resources[0].errorCode, 0);
      const entries = new Map(resources[0].configEntries.map((e) => [e.configName, e]));
      assert.deepEqual([...entries.keys()].sort(), Object.keys(topicConfigChecks).sort());
      for (const e of entries.values()) {
        assert.equal(e.readOnly, false, e.configName);
        assert.equal(e.isSensitive, false, e.configName);
        assert.notEqual(e.configValue, null, e.configName);
      }
      const get = (k: string) => entries.get(k)!;
      // An override, and the broker default it hides.
      assert.equal(get("retention.ms").configValue, "3600000");
      assert.equal(get("retention.ms").configSource, ConfigSource.TOPIC_CONFIG);
      assert.deepEqual(get("retention.ms").configSynonyms, [
        { configName: "retention.ms", configValue: "3600000", configSource: ConfigSource.TOPIC_CONFIG },
        { configName: "log.retention.hours", configValue: "168", configSource: ConfigSource.DEFAULT_CONFIG },
      ]);
      assert.equal(get("cleanup.policy").configValue, "compact");
      // From server.properties, in the topic key's unit.
      assert.equal(get("segment.bytes").configValue, "50000000");
      assert.equal(get("segment.bytes").configSource, ConfigSource.STATIC_BROKER_CONFIG);
      assert.deepEqual(get("segment.bytes").configSynonyms, [
        { configName: "log.segment.bytes", configValue: "50000000", configSource: ConfigSource.STATIC_BROKER_CONFIG },
        { configName: "log.segment.bytes", configValue: "1073741824", configSource: ConfigSource.DEFAULT_CONFIG },
      ]);
      assert.equal(get("segment.ms").configValue, String(24 * 3_600_000));
      assert.equal(get("segment.ms").configSource, ConfigSource.STATIC_BROKER_CONFIG);
      // Kafka's defaults, through the broker key each topic key is named after.
      assert.equal(get("max.message.bytes").configValue, "1048588");
      assert.equal(get("max.message.bytes").configSource, ConfigSource.DEFAULT_CONFIG);
      assert.deepEqual(get("max.message.bytes").configSynonyms, [
        { configName: "message.max.bytes", configValue: "1048588", configSource: ConfigSource.DEFAULT_CONFIG },
      ]);
      assert.equal(get("min.insync.replicas").configValue, "1");
      assert.equal(get("compression.type").configValue, "producer");

      // configNames narrows the answer.
      const narrowed = await within(15_000, "describeConfigs configNames", admin.describeConfigs({
        resources: [{ type: ConfigResourceTypes.TOPIC, name: "described", configNames: ["max.message.bytes", "no.such.key"] }],
        includeSynonyms: false,
      }));
      assert.deepEqual(narrowed.resources[0].configEntries.map((e) => [e.configName, e.configValue]), [["max.message.bytes", "1048588"]]);

      // The broker: every key strand reads, from server.properties or its default; only the
      // dynamic log defaults (dynamic_config.ts) are not read-only.
      const broker = await within(15_000, "describeConfigs broker", admin.describeConfigs({
        resources: [{ type: ConfigResourceTypes.BROKER, name: "0" }],
        includeSynonyms: false,
      }));
      const be = new Map(broker.resources[0].configEntries.map((e) => [e.configName, e]));
      assert.equal(be.get("log.segment.bytes")?.configValue, "50000000");
      assert.equal(be.get("log.segment.bytes")?.configSource, ConfigSource.STATIC_BROKER_CONFIG);
      assert.equal(be.get("num.partitions")?.configValue, "1");
      assert.equal(be.get("num.partitions")?.configSource, ConfigSource.DEFAULT_CONFIG);
      assert.equal(be.get("message.max.bytes")?.readOnly, false);
      assert.equal(be.get("num.partitions")?.readOnly, true);

      await assert.rejects(
        within(15_000, "describeConfigs of a missing topic", admin.describeConfigs({
          resources: [{ type: ConfigResourceTypes.TOPIC, name: "missing" }],
          includeSynonyms: false,
        })),
        (e: Error & { type?: string }) => e.type === "UNKNOWN_TOPIC_OR_PARTITION",
      );
    });
  } finally {
    await b.stop();
  }
});

test("kafkajs admin.alterConfigs replaces a topic's overrides, stored as Kafka stores them; validateOnly and bad values change nothing", async () => {
  const b = await startBroker();
  try {
    await withAdmin(b, async (admin) => {
      await within(30_000, "createTopics", admin.createTopics({
        topics: [{ topic: "altered", configEntries: [{ name: "retention.ms", value: "3600000" }] }],
      }));
      const describe = async () => {
        const { resources } = await within(15_000, "describeConfigs", admin.describeConfigs({
          resources: [{ type: ConfigResourceTypes.TOPIC, name: "altered" }],
          includeSynonyms: false,
        }));
        return new Map(resources[0].configEntries.map((e) => [e.configName, e]));
      };
      const topicResource = (entries: Record<string, string>) => ({
        type: ConfigResourceTypes.TOPIC,
        name: "altered",
        configEntries: Object.entries(entries).map(([name, value]) => ({ name, value })),
      });

      await within(15_000, "alterConfigs validateOnly", admin.alterConfigs({
        validateOnly: true,
        resources: [topicResource({ "max.message.bytes": "2048" })],
      }));
      let d = await describe();
      assert.equal(d.get("max.message.bytes")?.configValue, "1048588");
      assert.equal(d.get("retention.ms")?.configValue, "3600000");

      await within(15_000, "alterConfigs", admin.alterConfigs({
        validateOnly: false,
        resources: [topicResource({ "max.message.bytes": "2048", "cleanup.policy": "compact,delete" })],
      }));
      d = await describe();
      assert.equal(d.get("max.message.bytes")?.configValue, "2048");
      assert.equal(d.get("max.message.bytes")?.configSource, ConfigSource.TOPIC_CONFIG);
      assert.equal(d.get("cleanup.policy")?.configValue, "compact,delete");
      // AlterConfigs replaces the whole set: retention.ms is back to the broker's default.
      assert.equal(d.get("retention.ms")?.configValue, "604800000");
      assert.equal(d.get("retention.ms")?.configSource, ConfigSource.DEFAULT_CONFIG);

      const view = await registryView(b, "altered");
      assert.deepEqual(view.config, { version: 1, config: { "max.message.bytes": "2048", "cleanup.policy": "compact,delete" } });
      assert.equal(view.changes.length, 1);
      assert.deepEqual(view.changes[0], { version: 2, entity_path: "topics/altered" });

      const bads: Record<string, string>[] = [{ "retention.ms": "soon" }, { "no.such.config": "1" }, { "cleanup.policy": "shred" }];
      for (const bad of bads) {
        await assert.rejects(
          within(15_000, "alterConfigs with a bad value", admin.alterConfigs({ validateOnly: false, resources: [topicResource(bad)] })),
          (e: Error & { type?: string }) => e.type === "INVALID_CONFIG",
          JSON.stringify(bad),
        );
      }
      await assert.rejects(
        within(15_000, "alterConfigs of a missing topic", admin.alterConfigs({
          validateOnly: false,
          resources: [{ type: ConfigResourceTypes.TOPIC, name: "missing", configEntries: [{ name: "retention.ms", value: "1" }] }],
        })),
        (e: Error & { type?: string }) => e.type === "UNKNOWN_TOPIC_OR_PARTITION",
      );
      d = await describe();
      assert.equal(d.get("max.message.bytes")?.configValue, "2048");
      assert.equal((await registryView(b, "altered")).changes.length, 1);
    });
  } finally {
    await b.stop();
  }
});

test("IncrementalAlterConfigs over the wire: SET, DELETE, APPEND, SUBTRACT, validate_only, bad values and unknown topics", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "incr", { configs: { "retention.ms": "3600000" } })).errorCode, ErrorCode.NONE);

    for (const version of [0, 1]) {
      const r = await incrementalAlter(c, "incr", [["segment.bytes", SET, "1000000"], ["retention.ms", DELETE, null]], false, version);
      assert.deepEqual([r.errorCode, r.errorMessage, r.resourceName], [ErrorCode.NONE, null, "incr"]);
    }
    let d = await describeTopicWire(c, "incr");
    assert.equal(d.get("segment.bytes")?.value, "1000000");
    assert.equal(d.get("segment.bytes")?.configSource, ConfigSource.TOPIC_CONFIG);
    assert.equal(d.get("retention.ms")?.value, "604800000");
    assert.equal(d.get("retention.ms")?.configSource, ConfigSource.DEFAULT_CONFIG);

    // APPEND starts from the effective value (the default "delete"), SUBTRACT removes elements.
    assert.equal((await incrementalAlter(c, "incr", [["cleanup.policy", APPEND, "compact"]])).errorCode, ErrorCode.NONE);
    assert.equal((await describeTopicWire(c, "incr")).get("cleanup.policy")?.value, "delete,compact");
    assert.equal((await incrementalAlter(c, "incr", [["cleanup.policy", APPEND, "compact,delete"]])).errorCode, ErrorCode.NONE);
    assert.equal((await describeTopicWire(c, "incr")).get("cleanup.policy")?.value, "delete,compact");
    assert.equal((await incrementalAlter(c, "incr", [["cleanup.policy", SUBTRACT, "delete"]])).errorCode, ErrorCode.NONE);
    assert.equal((await describeTopicWire(c, "incr")).get("cleanup.policy")?.value, "compact");

    // validate_only: checked, not written.
    const vo = await incrementalAlter(c, "incr", [["segment.bytes", SET, "2000000"]], true);
    assert.equal(vo.errorCode, ErrorCode.NONE);
    assert.equal((await describeTopicWire(c, "incr")).get("segment.bytes")?.value, "1000000");
    const voBad = await incrementalAlter(c, "incr", [["segment.bytes", SET, "big"]], true);
    assert.equal(voBad.errorCode, ErrorCode.INVALID_CONFIG);

    // Invalid values: INVALID_CONFIG with a message naming the key; nothing changes.
    for (const [key, value] of [["segment.bytes", "big"], ["retention.ms", "-5"], ["min.cleanable.dirty.ratio", "2"], ["no.such.config", "1"]]) {
      const r = await incrementalAlter(c, "incr", [[key, SET, value]]);
      assert.equal(r.errorCode, ErrorCode.INVALID_CONFIG, key);
      assert.ok(r.errorMessage?.includes(key), `${key}: ${r.errorMessage}`);
    }
    const appendScalar = await incrementalAlter(c, "incr", [["retention.ms", APPEND, "5"]]);
    assert.equal(appendScalar.errorCode, ErrorCode.INVALID_CONFIG);
    assert.match(appendScalar.errorMessage ?? "", /retention\.ms/);
    // Malformed requests: INVALID_REQUEST.
    assert.equal((await incrementalAlter(c, "incr", [["segment.bytes", SET, null]])).errorCode, ErrorCode.INVALID_REQUEST);
    assert.equal((await incrementalAlter(c, "incr", [["segment.bytes", 7, "1"]])).errorCode, ErrorCode.INVALID_REQUEST);
    assert.equal(
      (await incrementalAlter(c, "incr", [["segment.bytes", SET, "1000"], ["segment.bytes", DELETE, null]])).errorCode,
      ErrorCode.INVALID_REQUEST,
    );
    d = await describeTopicWire(c, "incr");
    assert.equal(d.get("segment.bytes")?.value, "1000000");
    assert.equal(d.get("cleanup.policy")?.value, "compact");

    // Unknown and invalid topic names.
    assert.equal((await incrementalAlter(c, "missing", [["segment.bytes", SET, "1000000"]])).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal((await incrementalAlter(c, "missing", [["segment.bytes", SET, "1000000"]], true)).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal((await incrementalAlter(c, "a/b", [["segment.bytes", SET, "1000000"]])).errorCode, ErrorCode.INVALID_TOPIC_EXCEPTION);
    const [missing] = await describeWire(c, 4, [{ resourceType: TOPIC, resourceName: "missing", configurationKeys: null }]);
    assert.equal(missing.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.deepEqual(missing.configs, []);

    // Broker resources: log.retention.hours is not dynamic (as in Kafka: log.retention.ms is).
    const brokerAlter = await incrementalAlter(c, "0", [["log.retention.hours", SET, "1"]], false, 1, BROKER);
    assert.equal(brokerAlter.errorCode, ErrorCode.INVALID_CONFIG);
    assert.match(brokerAlter.errorMessage ?? "", /Cannot update these configs dynamically: Set\(log\.retention\.hours\)/);
    assert.equal((await incrementalAlter(c, "7", [], false, 1, BROKER)).errorCode, ErrorCode.INVALID_REQUEST);

    // Duplicate resources in one request are refused, each of them.
    const dup = await c.request(IncrementalAlterConfigsApi, 1, {
      resources: [0, 1].map(() => ({ resourceType: TOPIC, resourceName: "incr", configs: [{ name: "segment.bytes", configOperation: SET, value: "2000000" }] })),
      validateOnly: false,
    });
    assert.deepEqual((dup.responses as { errorCode: number }[]).map((r) => r.errorCode), [ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST]);

    // Every successful change wrote one notification, in Kafka's format.
    const view = await registryView(b, "incr");
    assert.deepEqual(view.config, { version: 1, config: { "segment.bytes": "1000000", "cleanup.policy": "compact" } });
    assert.equal(view.changes.length, 5);
    for (const ch of view.changes) assert.deepEqual(ch, { version: 2, entity_path: "topics/incr" });
  } finally {
    c.close();
    await b.stop();
  }
});

test("DescribeConfigs over the wire: v0 isDefault, v3+ documentation and types, config name filter, broker resources", async () => {
  const b = await startBroker({ "num.partitions": "3" });
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "docs", { configs: { "max.message.bytes": "5000" } })).errorCode, ErrorCode.NONE);

    const v0 = await describeTopicWire(c, "docs", 0);
    assert.equal(v0.get("max.message.bytes")?.isDefault, false);
    assert.equal(v0.get("segment.bytes")?.isDefault, true);
    assert.deepEqual(v0.get("max.message.bytes")?.synonyms, []);

    const [withDocs] = await describeWire(c, 4, [{ resourceType: TOPIC, resourceName: "docs", configurationKeys: ["cleanup.policy", "preallocate", "max.message.bytes"] }], {
      includeDocumentation: true,
    });
    assert.deepEqual(withDocs.configs.map((e) => e.name), ["cleanup.policy", "max.message.bytes", "preallocate"]);
    const byName = new Map(withDocs.configs.map((e) => [e.name, e]));
    assert.equal(byName.get("cleanup.policy")?.configType, 7); // LIST
    assert.equal(byName.get("max.message.bytes")?.configType, 3); // INT
    assert.equal(byName.get("preallocate")?.configType, 1); // BOOLEAN
    for (const e of withDocs.configs) {
      assert.ok((e.documentation ?? "").length > 10, `${e.name} has documentation`);
      assert.deepEqual(e.synonyms, [], "synonyms only when asked for");
    }
    const [noDocs] = await describeWire(c, 3, [{ resourceType: TOPIC, resourceName: "docs", configurationKeys: ["cleanup.policy"] }]);
    assert.equal(noDocs.configs[0].documentation, null);

    const [broker, defaults, other] = await describeWire(c, 4, [
      { resourceType: BROKER, resourceName: "0", configurationKeys: null },
      { resourceType: BROKER, resourceName: "", configurationKeys: null },
      { resourceType: BROKER, resourceName: "9", configurationKeys: null },
    ], { includeSynonyms: true });
    assert.equal(broker.errorCode, ErrorCode.NONE);
    const np = broker.configs.find((e) => e.name === "num.partitions")!;
    assert.deepEqual([np.value, np.configSource, np.readOnly], ["3", ConfigSource.STATIC_BROKER_CONFIG, true]);
    assert.deepEqual(np.synonyms, [
      { name: "num.partitions", value: "3", source: ConfigSource.STATIC_BROKER_CONFIG },
      { name: "num.partitions", value: "1", source: ConfigSource.DEFAULT_CONFIG },
    ]);
    assert.deepEqual([defaults.errorCode, defaults.configs], [ErrorCode.NONE, []]);
    assert.equal(other.errorCode, ErrorCode.INVALID_REQUEST);
  } finally {
    c.close();
    await b.stop();
  }
});

test("CreateTopics v7 answers with every topic config and its source", async () => {
  const b = await startBroker({ "log.segment.bytes": "50000000" });
  const c = await WireClient.connect(b.port);
  try {
    const res = await c.request(CreateTopicsApi, 7, {
      topics: [{ name: "listed", numPartitions: 1, replicationFactor: 1, assignments: [], configs: [{ name: "retention.ms", value: "1000" }] }],
      timeoutMs: 10_000,
      validateOnly: false,
    });
    const t = (res.topics as { errorCode: number; configs: { name: string; value: string | null; configSource: number; readOnly: boolean }[] }[])[0];
    assert.equal(t.errorCode, ErrorCode.NONE);
    const byName = new Map(t.configs.map((e) => [e.name, e]));
    assert.deepEqual([...byName.keys()].sort(), Object.keys(topicConfigChecks).sort());
    assert.deepEqual([byName.get("retention.ms")?.value, byName.get("retention.ms")?.configSource], ["1000", ConfigSource.TOPIC_CONFIG]);
    assert.deepEqual([byName.get("segment.bytes")?.value, byName.get("segment.bytes")?.configSource], ["50000000", ConfigSource.STATIC_BROKER_CONFIG]);
    assert.deepEqual([byName.get("max.message.bytes")?.value, byName.get("max.message.bytes")?.configSource], ["1048588", ConfigSource.DEFAULT_CONFIG]);
  } finally {
    c.close();
    await b.stop();
  }
});

test("a changed max.message.bytes takes effect on produce, and survives a restart", async () => {
  const b = await startBroker();
  let c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "sized")).errorCode, ErrorCode.NONE);
    const batch = () => buildBatch(valueRecords(4, "v", 1000)); // about 4 KiB
    assert.equal((await produce(c, "sized", 0, batch())).errorCode, ErrorCode.NONE);

    assert.equal((await incrementalAlter(c, "sized", [["max.message.bytes", SET, "2048"]])).errorCode, ErrorCode.NONE);
    const log = () => b.broker.services.replicaManager.getPartition("sized", 0)!.log;
    // The partition's log config: the broker's defaults with the topic's overrides (effectiveLogConfig).
    const maxMessageBytes = () => (log().config as unknown as { maxMessageBytes: number }).maxMessageBytes;
    await eventually("the log sees max.message.bytes=2048", () => maxMessageBytes() === 2048);
    const refused = await produce(c, "sized", 0, batch());
    assert.equal(refused.errorCode, ErrorCode.MESSAGE_TOO_LARGE);
    assert.equal(b.broker.services.metadata.getTopic("sized")?.configs["max.message.bytes"], "2048");

    // The override outlives a restart: the controller reads it back from the registry.
    c.close();
    await b.restart();
    c = await WireClient.connect(b.port);
    await eventually("the partition is back", () => b.broker.services.replicaManager.getPartition("sized", 0) !== undefined);
    assert.equal((await produce(c, "sized", 0, batch())).errorCode, ErrorCode.MESSAGE_TOO_LARGE);
    assert.equal((await describeTopicWire(c, "sized")).get("max.message.bytes")?.value, "2048");

    // Back to the broker's default: the same batch is accepted again.
    assert.equal((await incrementalAlter(c, "sized", [["max.message.bytes", DELETE, null]])).errorCode, ErrorCode.NONE);
    await eventually("the log is back at the default", () => maxMessageBytes() === 1048588);
    assert.equal((await produce(c, "sized", 0, batch())).errorCode, ErrorCode.NONE);

    // AlterConfigs (the legacy API) too, over the wire at v2 (flexible).
    const res = await c.request(AlterConfigsApi, 2, {
      resources: [{ resourceType: TOPIC, resourceName: "sized", configs: [{ name: "max.message.bytes", value: "100" }] }],
      validateOnly: false,
    });
    assert.equal((res.responses as Struct[])[0].errorCode, ErrorCode.NONE);
    await eventually("the log sees max.message.bytes=100", () => maxMessageBytes() === 100);
    assert.equal((await produce(c, "sized", 0, batch())).errorCode, ErrorCode.MESSAGE_TOO_LARGE);
  } finally {
    c.close();
    await b.stop();
  }
});
