// KafkaConnection against a real broker: ApiVersions, version negotiation, Metadata, pipelining,
// a long-poll that outlasts the request timeout, Produce with acks=0, the broker going away.
import assert from "node:assert/strict";
import { test } from "node:test";
import { KafkaConnection, KafkaConnectionError } from "../../src/client/connection.ts";
import type { Platform } from "../../src/platform/types.ts";
import { ApiVersionsApi, CreateTopicsApi, FetchApi, MetadataApi, ProduceApi } from "../../src/protocol/api/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { startBroker } from "../helpers/broker.ts";
import { buildBatch } from "../helpers/record_batch.ts";

async function connect(platform: Platform, port: number): Promise<KafkaConnection> {
  return await KafkaConnection.connect(platform, { host: "127.0.0.1", port, clientId: "client-test" });
}

async function createTopic(c: KafkaConnection, name: string): Promise<void> {
  const res = await c.request(CreateTopicsApi, 7, {
    topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 10_000,
    validateOnly: false,
  }, 15_000);
  assert.equal((res.topics as { errorCode: number }[])[0].errorCode, 0);
}

function fetchBody(topic: string, maxWaitMs: number): Struct {
  return {
    replicaId: -1,
    maxWaitMs,
    minBytes: 1,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
    forgottenTopicsData: [],
    rackId: "",
  };
}

test("KafkaConnection: ApiVersions, version negotiation and Metadata against a broker", async () => {
  const b = await startBroker();
  const c = await connect(b.platform, b.port);
  try {
    const av = await c.request(ApiVersionsApi, 3, { clientSoftwareName: "strand-test", clientSoftwareVersion: "1" }, 10_000);
    assert.equal(av.errorCode, 0);
    const keys = (av.apiKeys as { apiKey: number }[]).map((k) => k.apiKey);
    assert.ok(keys.includes(3) && keys.includes(18), "Metadata and ApiVersions advertised");
    assert.equal(await c.negotiateVersion(MetadataApi), MetadataApi.request.versions.max);
    assert.equal(await c.negotiateVersion(MetadataApi, 9), 9);
    const md = await c.request(MetadataApi, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }, 10_000);
    const brokers = md.brokers as { nodeId: number; port: number }[];
    assert.deepEqual(brokers.map((x) => [x.nodeId, x.port]), [[0, b.port]]);
    // A non-flexible version (header v1, response header v0) works on the same connection.
    const md1 = await c.request(MetadataApi, 1, { topics: null }, 10_000);
    assert.equal((md1.brokers as unknown[]).length, 1);
    assert.equal(c.closed, false);
    assert.equal(c.inFlight, 0);
  } finally {
    c.close();
    await b.stop();
  }
  assert.equal(c.closed, true);
  await assert.rejects(c.request(MetadataApi, 12, { topics: null }, 1_000), /connection closed/);
});

test("KafkaConnection: pipelined requests are each answered, in any mix", async () => {
  const b = await startBroker();
  const c = await connect(b.platform, b.port);
  try {
    await createTopic(c, "pipelined");
    const sends: Promise<Struct>[] = [];
    for (let i = 0; i < 50; i++) {
      sends.push(i % 2 === 0
        ? c.request(MetadataApi, 12, { topics: [{ topicId: new Uint8Array(16), name: "pipelined" }], allowAutoTopicCreation: false }, 10_000)
        : c.request(ApiVersionsApi, i % 4 === 1 ? 3 : 0, { clientSoftwareName: "t", clientSoftwareVersion: "1" }, 10_000));
    }
    assert.ok(c.inFlight > 1, "requests are in flight together");
    const all = await Promise.all(sends);
    all.forEach((res, i) => {
      if (i % 2 === 0) assert.equal((res.topics as { name: string }[])[0].name, "pipelined");
      else assert.ok((res.apiKeys as unknown[]).length > 5);
    });
    assert.equal(c.inFlight, 0);
  } finally {
    c.close();
    await b.stop();
  }
});

test("KafkaConnection: a long-poll past the timeout rejects and closes the connection", async () => {
  const b = await startBroker();
  const c = await connect(b.platform, b.port);
  try {
    await createTopic(c, "slow");
    const other = c.request(FetchApi, 12, fetchBody("slow", 5_000), 30_000);
    const started = Date.now();
    await assert.rejects(c.request(FetchApi, 12, fetchBody("slow", 5_000), 300), (e: Error) => {
      assert.ok(e instanceof KafkaConnectionError);
      assert.match(e.message, /Fetch v12 to 127\.0\.0\.1:\d+: no response within 300 ms/);
      return true;
    });
    assert.ok(Date.now() - started < 4_000, "rejected at the timeout, not when the broker answered");
    assert.equal(c.closed, true);
    assert.match(c.closedReason ?? "", /timed out/);
    // The other request in flight fails with it, now, rather than at its own timeout.
    await assert.rejects(other, /connection closed/);
  } finally {
    c.close();
    await b.stop();
  }
});

test("KafkaConnection: Produce with acks=0 resolves once written; the broker stores it", async () => {
  const b = await startBroker();
  const c = await connect(b.platform, b.port);
  try {
    await createTopic(c, "fire");
    const produce = (acks: number) =>
      c.request(ProduceApi, 8, {
        transactionalId: null,
        acks,
        timeoutMs: 10_000,
        topicData: [{ name: "fire", partitionData: [{ index: 0, records: buildBatch([{ value: "a" }, { value: "b" }]) }] }],
      }, 10_000);
    assert.deepEqual(await produce(0), {});
    // An acks=1 produce after it is answered at offset 2: the acks=0 one was appended first.
    const res = await produce(1);
    const p = (res.responses as { partitionResponses: { errorCode: number; baseOffset: bigint }[] }[])[0].partitionResponses[0];
    assert.equal(p.errorCode, 0);
    assert.equal(p.baseOffset, 2n);
    assert.equal(c.inFlight, 0);
  } finally {
    c.close();
    await b.stop();
  }
});

test("KafkaConnection: the broker stopping closes the connection and fails what waits", async () => {
  const b = await startBroker();
  const c = await connect(b.platform, b.port);
  await c.request(ApiVersionsApi, 3, {}, 10_000);
  await b.stop();
  for (let i = 0; i < 100 && !c.closed; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(c.closed, true);
  assert.match(c.closedReason ?? "", /closed by the peer|read failed/);
  await assert.rejects(c.request(ApiVersionsApi, 3, {}, 1_000), KafkaConnectionError);
});
