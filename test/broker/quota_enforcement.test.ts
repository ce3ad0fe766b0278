// Client quotas enforced (src/broker/client_quota_manager.ts) over real sockets: a produce quota
// of 1 MiB/s holds within 10% over 20 s, measured on what the broker's log accepted, with
// throttle_time_ms reported to the client and the connection muted for it (KIP-219); a consumer
// byte-rate quota answers throttled fetches without data; an old Produce version gets its answer
// held back instead; a request_percentage quota throttles by handler time, at most one window,
// and does not charge the time a fetch spends long-polling.
//
// quota.window.num=2: with Kafka's default of 11 samples a greedy client is let through 10 s of
// quota at once, then trickles until that sample expires (an 11 s sawtooth, as Kafka's own Rate
// does), so a 20 s window sees one or two bursts; two samples keep the same formula's bursts to
// one second's worth.
import assert from "node:assert/strict";
import { test } from "node:test";
import { AlterClientQuotasApi, ControlledShutdownApi, FetchApi, MetadataApi, ProduceApi } from "../../src/protocol/api/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";

const MiB = 1_048_576;

async function setQuota(c: WireClient, entity: { entityType: string; entityName: string | null }[], key: string, value: number) {
  const r = await c.request(AlterClientQuotasApi, 1, { entries: [{ entity, ops: [{ key, value, remove: false }] }], validateOnly: false });
  assert.deepEqual((r.entries as { errorCode: number }[]).map((e) => e.errorCode), [0]);
}

async function eventually(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function produceBody(topic: string, records: Uint8Array): Struct {
  return { transactionalId: null, acks: 1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] };
}

function logBytes(b: TestBroker, topic: string): number {
  return b.broker.services.replicaManager.allPartitions().filter((p) => p.topic === topic).reduce((n, p) => n + p.log.sizeBytes, 0);
}

test("produce quota: 1 MiB/s holds within 10% over 20 s; throttle_time_ms reported; the channel muted for it", async () => {
  const b = await startBroker({ "quota.window.num": "2", "quota.window.size.seconds": "1" });
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "q")).errorCode, 0);
    // The client id WireClient sends: a client-id quota (level 7).
    await setQuota(c, [{ entityType: "client-id", entityName: "wire-test" }], "producer_byte_rate", MiB);
    await eventually("the broker applies the quota", () => b.broker.clientQuotas!.produce.active);
    const batch = buildBatch(valueRecords(1, "v", 64 * 1024));
    const samples: { atMs: number; bytes: number }[] = [];
    const sampler = setInterval(() => samples.push({ atMs: performance.now(), bytes: logBytes(b, "q") }), 100);
    let throttled = 0, throttleMsTotal = 0, mutedChecks = 0;
    const startMs = performance.now();
    try {
      while (performance.now() - startMs < 23_000) {
        const r = await c.request(ProduceApi, 8, produceBody("q", batch), 30_000);
        const part = (r.responses as { partitionResponses: { errorCode: number }[] }[])[0].partitionResponses[0];
        assert.equal(part.errorCode, 0);
        const t = r.throttleTimeMs as number;
        if (t > 0) {
          throttled++;
          throttleMsTotal += t;
          // Muted: the next request sent at once is not answered before the throttle time has passed.
          if (mutedChecks < 3) {
            const sentMs = performance.now();
            const next = await c.request(ProduceApi, 8, produceBody("q", batch), 30_000);
            assert.equal(next.errorCode ?? 0, 0);
            assert.ok(performance.now() - sentMs >= t - 5, `answered ${performance.now() - sentMs} ms after a throttle of ${t} ms`);
            mutedChecks++;
          }
        }
      }
    } finally {
      clearInterval(sampler);
    }
    assert.ok(throttled > 0 && mutedChecks === 3, `throttle_time_ms reported (${throttled} throttled answers)`);
    // What the log accepted over 20 s, from 2 s after the first sample on.
    const at = (ms: number) => samples.find((s) => s.atMs >= ms)!;
    const from = at(samples[0].atMs + 2_000), to = at(from.atMs + 20_000);
    const rate = (to.bytes - from.bytes) / ((to.atMs - from.atMs) / 1000);
    console.log(`produce quota 1 MiB/s: accepted ${(rate / MiB).toFixed(3)} MiB/s over ${((to.atMs - from.atMs) / 1000).toFixed(1)} s; ${throttled} throttled answers, ${throttleMsTotal} ms of throttle`);
    assert.ok(Math.abs(rate - MiB) <= 0.1 * MiB, `accepted ${(rate / MiB).toFixed(3)} MiB/s, within 10% of 1 MiB/s`);
    const stat = b.broker.clientQuotas!.produce.stats().find((s) => s.clientId === "wire-test")!;
    assert.equal(stat.user, "", "a client-id quota counts every user of the client id together");
    assert.ok(stat.throttledTotal >= throttled);
  } finally {
    c.close();
    await b.stop();
  }
});

test("fetch quota: throttled fetches answer no data with throttle_time_ms; the consumer is held near its byte rate", async () => {
  const b = await startBroker({ "quota.window.num": "2", "quota.window.size.seconds": "1" });
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "f")).errorCode, 0);
    const batch = buildBatch(valueRecords(1, "v", 32 * 1024));
    for (let i = 0; i < 100; i++) assert.equal((await c.request(ProduceApi, 8, produceBody("f", batch))).throttleTimeMs, 0);
    const quota = 256 * 1024;
    // The default user's quota (level 6): ANONYMOUS on this PLAINTEXT listener.
    await setQuota(c, [{ entityType: "user", entityName: null }], "consumer_byte_rate", quota);
    await eventually("the broker applies the quota", () => b.broker.clientQuotas!.fetch.active);
    let offset = 0n, received = 0, throttledEmpty = 0;
    const startMs = performance.now();
    while (performance.now() - startMs < 8_000) {
      const r = await c.request(FetchApi, 11, {
        replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
        topics: [{ topic: "f", partitions: [{ partition: 0, fetchOffset: offset, partitionMaxBytes: 64 * 1024 }] }],
        forgottenTopicsData: [], rackId: "",
      }, 30_000);
      assert.equal(r.errorCode, 0);
      const responses = r.responses as { partitions: { records: Uint8Array | null; highWatermark: bigint }[] }[];
      if ((r.throttleTimeMs as number) > 0) {
        assert.deepEqual(responses, [], "a throttled fetch answers no data");
        throttledEmpty++;
        continue;
      }
      const records = responses[0].partitions[0].records;
      if (records === null || records.length === 0) break;
      received += records.length;
      // Each batch holds one record here: the next offset is one past the batches read.
      offset += BigInt(Math.max(1, Math.floor(records.length / batch.length)));
    }
    const seconds = (performance.now() - startMs) / 1000;
    console.log(`fetch quota 256 KiB/s: received ${(received / seconds / 1024).toFixed(0)} KiB/s over ${seconds.toFixed(1)} s, ${throttledEmpty} throttled fetches`);
    assert.ok(throttledEmpty > 0, "some fetches were throttled");
    // Two 1 s samples let one window's worth through at once; beyond that the byte rate holds.
    assert.ok(received <= quota * (seconds + 2) + 64 * 1024, `received ${received} bytes in ${seconds.toFixed(1)} s at ${quota} B/s`);
    assert.ok(received >= quota * seconds * 0.5, `the consumer still progresses (${received} bytes)`);
  } finally {
    c.close();
    await b.stop();
  }
});

test("produce quota: an old Produce version (no client-side throttling) gets its answer held back for the throttle time", async () => {
  const b = await startBroker({ "quota.window.num": "2", "quota.window.size.seconds": "1" });
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "old")).errorCode, 0);
    await setQuota(c, [{ entityType: "client-id", entityName: "wire-test" }], "producer_byte_rate", 100 * 1024);
    await eventually("the broker applies the quota", () => b.broker.clientQuotas!.produce.active);
    const batch = buildBatch(valueRecords(1, "v", 64 * 1024));
    // Within the first window's allowance the answers are immediate; past it, v5 answers come late.
    let held = false;
    for (let i = 0; i < 10 && !held; i++) {
      const sentMs = performance.now();
      const r = await c.request(ProduceApi, 5, produceBody("old", batch), 30_000);
      const t = r.throttleTimeMs as number;
      if (t > 0) {
        assert.ok(performance.now() - sentMs >= t - 5, `the v5 answer waited its throttle time (${t} ms)`);
        held = true;
      }
    }
    assert.ok(held, "a v5 produce was throttled");
  } finally {
    c.close();
    await b.stop();
  }
});

test("request quota: handler time is charged, a fetch's long poll is not; the throttle is at most one window", async () => {
  const b = await startBroker({ "quota.window.num": "2", "quota.window.size.seconds": "1" });
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "idle")).errorCode, 0);
    // 5% of a second per second: three fetches parked 400 ms each would be 120% if charged.
    await setQuota(c, [{ entityType: "client-id", entityName: "wire-test" }], "request_percentage", 5);
    await eventually("the broker applies the quota", () => b.broker.clientQuotas!.request.active);
    for (let i = 0; i < 3; i++) {
      const sentMs = performance.now();
      const r = await c.request(FetchApi, 11, {
        replicaId: -1, maxWaitMs: 400, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
        topics: [{ topic: "idle", partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
        forgottenTopicsData: [], rackId: "",
      }, 30_000);
      assert.ok(performance.now() - sentMs >= 390, "the fetch long-polled");
      assert.equal(r.throttleTimeMs, 0, `long-poll ${i} is not charged as handler time`);
    }
    // 0.001%: a few Metadata requests' handler time is over it.
    await setQuota(c, [{ entityType: "client-id", entityName: "wire-test" }], "request_percentage", 0.001);
    await eventually("the broker applies the new quota", () => b.broker.clientQuotas!.store.resolve("request", "ANONYMOUS", "wire-test")?.bound === 0.001);
    let throttleMs = 0;
    for (let i = 0; i < 500 && throttleMs === 0; i++) {
      const r = await c.request(MetadataApi, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
      throttleMs = r.throttleTimeMs as number;
    }
    assert.ok(throttleMs > 0, "Metadata requests were throttled by handler time");
    assert.ok(throttleMs <= 1000, `the request throttle is at most one window (${throttleMs} ms)`);
  } finally {
    c.close();
    await b.stop();
  }
});

test("request quota: a cluster-action API refused for want of CLUSTER_ACTION is charged and throttled as Kafka's handleError does; it is not exempt by API key", async () => {
  // Single-node mode: no principal may send inter-broker requests, so each ControlledShutdown is
  // refused CLUSTER_AUTHORIZATION_FAILED (Kafka's ClusterAuthorizationException), which Kafka
  // throttles (mayThrottle) where it exempts the answer to an authorized broker.
  const b = await startBroker({ "quota.window.num": "2", "quota.window.size.seconds": "1" });
  const c = await WireClient.connect(b.port);
  try {
    await setQuota(c, [{ entityType: "client-id", entityName: "wire-test" }], "request_percentage", 0.001);
    await eventually("the broker applies the quota", () => b.broker.clientQuotas!.store.resolve("request", "ANONYMOUS", "wire-test")?.bound === 0.001);
    const stat = () => b.broker.clientQuotas!.request.stats().find((x) => x.clientId === "wire-test");
    for (let i = 0; i < 200 && (stat()?.throttledTotal ?? 0) === 0; i++) {
      const r = await c.request(ControlledShutdownApi, 3, { brokerId: 0, brokerEpoch: 1n });
      assert.equal(r.errorCode, 31, "CLUSTER_AUTHORIZATION_FAILED");
    }
    assert.ok((stat()?.throttledTotal ?? 0) > 0, `refused ControlledShutdowns were throttled: ${JSON.stringify(stat())}`);
  } finally {
    c.close();
    await b.stop();
  }
});
