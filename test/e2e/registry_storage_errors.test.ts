// The embedded registry's disk is full (issue 11, defect 6): every request that writes the
// registry is answered with KAFKA_STORAGE_ERROR naming the registry file and ENOSPC (the admin
// HTTP API with 507), nothing of the change is applied, produce and fetch to existing partitions
// go on, nothing is logged at error, and the same requests succeed once there is room, without a
// restart. A restart afterwards finds what was stored, and nothing that was refused. The broker
// and its registry run on the faulty platform (test/helpers/faulty_platform.ts): a failing journal
// append writes half its record first, as a write(2) cut short by a full disk does.
import assert from "node:assert/strict";
import { test } from "node:test";
import { loadPlatform } from "../../src/platform/mod.ts";
import {
  AlterConfigsApi,
  CreatePartitionsApi,
  DeleteTopicsApi,
  DescribeConfigsApi,
  IncrementalAlterConfigsApi,
  MetadataApi,
  OffsetCommitApi,
  OffsetFetchApi,
} from "../../src/protocol/api/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker, tempDir } from "../helpers/broker.ts";
import { faultyPlatform, recordingLogger } from "../helpers/faulty_platform.ts";
import { alterScram, scramUpsertion } from "../helpers/sasl.ts";
import { buildBatch, parseBatches, text } from "../helpers/record_batch.ts";
import { createTopic, fetchOnce, produce, WireClient } from "../helpers/wire.ts";

const TOPIC = 2;
const BROKER = 4;
const SET = 0;

type Outcome = { errorCode: number; errorMessage: string | null };

async function createPartitions(c: WireClient, topic: string, count: number): Promise<Outcome> {
  const res = await c.request(CreatePartitionsApi, 3, { topics: [{ name: topic, count, assignments: null }], timeoutMs: 10_000, validateOnly: false });
  return (res.results as Outcome[])[0];
}

async function alterTopic(c: WireClient, topic: string, configs: Record<string, string>): Promise<Outcome> {
  const res = await c.request(AlterConfigsApi, 2, {
    resources: [{ resourceType: TOPIC, resourceName: topic, configs: Object.entries(configs).map(([name, value]) => ({ name, value })) }],
    validateOnly: false,
  });
  return (res.responses as Outcome[])[0];
}

async function alterBroker(c: WireClient, name: string, key: string, value: string): Promise<Outcome> {
  const res = await c.request(IncrementalAlterConfigsApi, 1, {
    resources: [{ resourceType: BROKER, resourceName: name, configs: [{ name: key, configOperation: SET, value }] }],
    validateOnly: false,
  });
  return (res.responses as Outcome[])[0];
}

async function describe(c: WireClient, resourceType: number, name: string, key: string): Promise<{ value: string | null; configSource: number }> {
  const res = await c.request(DescribeConfigsApi, 4, {
    resources: [{ resourceType, resourceName: name, configurationKeys: [key] }],
    includeSynonyms: false,
    includeDocumentation: false,
  });
  const r = (res.results as { errorCode: number; configs: { value: string | null; configSource: number }[] }[])[0];
  assert.equal(r.errorCode, 0);
  return r.configs[0];
}

async function deleteTopic(c: WireClient, topic: string): Promise<Outcome> {
  const res = await c.request(DeleteTopicsApi, 5, { topicNames: [topic], timeoutMs: 10_000 });
  return (res.responses as Outcome[])[0];
}

async function partitionCount(c: WireClient, topic: string): Promise<number> {
  const res = await c.request(MetadataApi, 12, { topics: [{ topicId: new Uint8Array(16), name: topic }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  const t = (res.topics as Struct[])[0];
  return t.errorCode === 0 ? (t.partitions as Struct[]).length : 0;
}

/** OffsetCommit v0: the 0.8-style commit the broker stores in the registry (/consumers/...). */
async function commitV0(c: WireClient, group: string, topic: string, offset: bigint): Promise<number> {
  const res = await c.request(OffsetCommitApi, 0, {
    groupId: group,
    topics: [{ name: topic, partitions: [{ partitionIndex: 0, committedOffset: offset, committedMetadata: null }] }],
  });
  return ((res.topics as Struct[])[0].partitions as Struct[])[0].errorCode as number;
}

async function fetchV0(c: WireClient, group: string, topic: string): Promise<bigint> {
  const res = await c.request(OffsetFetchApi, 0, { groupId: group, topics: [{ name: topic, partitionIndexes: [0] }] });
  return ((res.topics as Struct[])[0].partitions as Struct[])[0].committedOffset as bigint;
}

async function values(c: WireClient, topic: string): Promise<string[]> {
  const r = await fetchOnce(c, topic, 0, 0n);
  assert.equal(r.errorCode, 0);
  return parseBatches(r.records ?? new Uint8Array(0)).flatMap((b) => b.records.map((x) => text(x.value) ?? ""));
}

async function adminJson(url: string, method: string, body: unknown): Promise<{ status: number; body: { error?: string } }> {
  const res = await fetch(url, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

test("registry at ENOSPC: CreateTopics, CreatePartitions, AlterConfigs (topic and broker), DeleteTopics, OffsetCommit v0 and the admin API answer a storage error and change nothing; produce and fetch go on; all succeed once there is room; a restart agrees", async () => {
  const faulty = faultyPlatform(await loadPlatform());
  const logger = recordingLogger();
  const b = await startBroker({ "admin.listeners": "http://127.0.0.1:0" }, tempDir("strand-e2e-registry-enospc-"), logger, faulty, { registryOnBrokerPlatform: true });
  const registryDir = `${b.logDir}/.strand-registry`;
  let c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "t")).errorCode, 0);
    assert.equal((await produce(c, "t", 0, buildBatch([{ value: "a" }]), 1)).errorCode, 0);
    assert.equal(await commitV0(c, "old", "t", 1n), 0);

    const lift = faulty.inject(registryDir, "ENOSPC", { ops: ["write", "writeAtomic"], partialWrite: true });
    const refused = (o: Outcome, what: string) => {
      assert.equal(o.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, `${what}: ${o.errorMessage}`);
      assert.match(o.errorMessage ?? "", /ENOSPC/, what);
      assert.ok((o.errorMessage ?? "").includes(registryDir), `${what} names the registry file: ${o.errorMessage}`);
    };
    refused(await createTopic(c, "u"), "CreateTopics");
    refused(await createPartitions(c, "t", 3), "CreatePartitions");
    refused(await alterTopic(c, "t", { "retention.ms": "1000" }), "AlterConfigs topic");
    refused(await alterBroker(c, "", "log.retention.ms", "2000"), "IncrementalAlterConfigs cluster default");
    refused(await alterBroker(c, "0", "log.retention.ms", "3000"), "IncrementalAlterConfigs broker");
    refused(await deleteTopic(c, "t"), "DeleteTopics");
    assert.equal(await commitV0(c, "old", "t", 2n), ErrorCode.KAFKA_STORAGE_ERROR, "OffsetCommit v0");
    const scram = (await alterScram(c, [await scramUpsertion("sam", "SCRAM-SHA-256", "pw")]))[0];
    refused(scram, "AlterUserScramCredentials");
    const post = await adminJson(`${b.adminUrl}/v1/topics`, "POST", { name: "h" });
    assert.equal(post.status, 507, post.body.error ?? "");
    assert.match(post.body.error ?? "", /ENOSPC/);
    const put = await adminJson(`${b.adminUrl}/v1/config`, "PUT", { set: { "log.retention.ms": "4000" } });
    assert.equal(put.status, 507, put.body.error ?? "");
    const putTopic = await adminJson(`${b.adminUrl}/v1/topics/t/config`, "PUT", { set: { "retention.ms": "5000" } });
    assert.equal(putTopic.status, 507, putTopic.body.error ?? "");
    const del = await adminJson(`${b.adminUrl}/v1/topics/t`, "DELETE", undefined);
    assert.equal(del.status, 507, del.body.error ?? "");

    // Nothing changed, and the partition is served.
    assert.equal(await partitionCount(c, "t"), 1);
    assert.equal(await partitionCount(c, "u"), 0);
    assert.equal((await describe(c, TOPIC, "t", "retention.ms")).value, "604800000");
    assert.equal((await describe(c, BROKER, "0", "log.retention.ms")).value, null, "no dynamic value in force");
    assert.equal(b.broker.services.dynamicConfig.values.clusterDefault.size, 0);
    assert.equal(await fetchV0(c, "old", "t"), 1n);
    assert.equal((await produce(c, "t", 0, buildBatch([{ value: "b" }]), 1)).errorCode, 0, "the log dir itself has room");
    assert.deepEqual(await values(c, "t"), ["a", "b"]);
    assert.ok(logger.lines.some((l) => l.level === "warn" && l.msg === "registry write refused"), "the logs say so, at warn");
    assert.deepEqual(logger.lines.filter((l) => l.level === "error").map((l) => l.msg), [], "no error-level line");
    assert.equal(c.ended, false, "the connection was never closed");

    lift();
    assert.deepEqual(await createTopic(c, "u"), { errorCode: 0, errorMessage: null });
    assert.equal((await createPartitions(c, "t", 3)).errorCode, 0);
    assert.equal(await partitionCount(c, "t"), 3);
    assert.equal((await alterTopic(c, "t", { "retention.ms": "1000" })).errorCode, 0);
    assert.equal((await alterBroker(c, "", "log.retention.ms", "2000")).errorCode, 0);
    assert.equal((await describe(c, BROKER, "0", "log.retention.ms")).value, "2000");
    assert.equal(await commitV0(c, "old", "t", 2n), 0);
    assert.equal((await alterScram(c, [await scramUpsertion("sam", "SCRAM-SHA-256", "pw")]))[0].errorCode, 0);
    assert.equal((await adminJson(`${b.adminUrl}/v1/topics`, "POST", { name: "h" })).status, 201);
    assert.equal((await deleteTopic(c, "u")).errorCode, 0);
    assert.equal(await partitionCount(c, "u"), 0);
    assert.equal((await produce(c, "t", 0, buildBatch([{ value: "c" }]), 1)).errorCode, 0);

    // The journal holds no torn record: the registry opens again, with what was stored.
    c.close();
    await b.restart();
    c = await WireClient.connect(b.port);
    assert.equal(await partitionCount(c, "t"), 3);
    assert.equal(await partitionCount(c, "u"), 0);
    assert.equal(await partitionCount(c, "h"), 1);
    assert.equal((await describe(c, TOPIC, "t", "retention.ms")).value, "1000");
    assert.equal((await describe(c, BROKER, "0", "log.retention.ms")).value, "2000");
    assert.equal(await fetchV0(c, "old", "t"), 2n);
    assert.deepEqual(await values(c, "t"), ["a", "b", "c"]);
    assert.deepEqual(logger.lines.filter((l) => l.level === "error").map((l) => l.msg), [], "no error-level line");
  } finally {
    c.close();
    await b.stop();
  }
});
