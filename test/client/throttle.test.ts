// strand's client honours throttle_time_ms (KIP-219) against a real broker with a small produce
// quota: after an answer that throttles it, KafkaConnection writes nothing to that broker before
// the throttle time has passed since the answer arrived (Kafka's NetworkClient.maybeThrottle).
// The socket is watched through a Platform wrapper that records when each chunk was read and each
// request written. Only lower bounds are checked (a slow machine makes writes later, not earlier).
import assert from "node:assert/strict";
import { test } from "node:test";
import { ClusterClient, KafkaConnection, Producer } from "../../src/client/mod.ts";
import type { Connection, Platform } from "../../src/platform/types.ts";
import { AlterClientQuotasApi, ApiVersionsApi, MetadataApi, ProduceApi } from "../../src/protocol/api/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { clientThrottles } from "../../src/protocol/mod.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { buildBatch } from "../helpers/record_batch.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";

const clientId = "throttled-producer";

/** Records, on the platform's monotonic clock, when each chunk was read and each write started. */
function watched(platform: Platform): { platform: Platform; reads: number[]; writes: number[] } {
  const reads: number[] = [];
  const writes: number[] = [];
  const now = () => platform.clock.monotonicMs();
  const wrap = (c: Connection): Connection => ({
    get remoteAddress() {
      return c.remoteAddress;
    },
    get remotePort() {
      return c.remotePort;
    },
    get localPort() {
      return c.localPort;
    },
    get tls() {
      return c.tls;
    },
    get closeReason() {
      return c.closeReason;
    },
    async read() {
      const chunk = await c.read();
      reads.push(now());
      return chunk;
    },
    write(data: Uint8Array) {
      writes.push(now());
      return c.write(data);
    },
    close: () => c.close(),
  });
  const net = { ...platform.net, connect: async (opts: Parameters<Platform["net"]["connect"]>[0]) => wrap(await platform.net.connect(opts)) };
  return { platform: { ...platform, net }, reads, writes };
}

/** A producer_byte_rate for the client id, set through AlterClientQuotas, and a topic. */
async function setUp(b: TestBroker, topic: string, bytesPerSec: number): Promise<void> {
  const admin = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(admin, topic)).errorCode, 0);
    const r = await admin.request(AlterClientQuotasApi, 1, {
      entries: [{ entity: [{ entityType: "client-id", entityName: clientId }], ops: [{ key: "producer_byte_rate", value: bytesPerSec, remove: false }] }],
      validateOnly: false,
    });
    assert.equal((r.entries as { errorCode: number }[])[0].errorCode, 0);
  } finally {
    admin.close();
  }
  // The quota reaches the broker's enforcement through the change notification.
  for (let i = 0; i < 400 && !b.broker.clientQuotas!.produce.active; i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(b.broker.clientQuotas!.produce.active, "the broker applies the quota");
}

function produceBody(topic: string, bytes: number): Struct {
  return {
    transactionalId: null,
    acks: 1,
    timeoutMs: 10_000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records: buildBatch([{ value: "x".repeat(bytes) }]) }] }],
  };
}

test("clientThrottles: Kafka's shouldClientThrottle versions (Produce v6+, Fetch v8+, Metadata v6+, ApiVersions v2+)", () => {
  assert.deepEqual([clientThrottles(0, 5), clientThrottles(0, 6), clientThrottles(1, 7), clientThrottles(1, 8)], [false, true, false, true]);
  assert.deepEqual([clientThrottles(3, 5), clientThrottles(3, 6), clientThrottles(18, 1), clientThrottles(18, 2)], [false, true, false, true]);
  assert.equal(clientThrottles(48, 0), true, "an API not listed throttles on the client from its first version");
});

test("KafkaConnection: after a Produce answer with throttle_time_ms, nothing is written to the broker before that time has passed since the answer arrived", { timeout: 120_000 }, async () => {
  const b = await startBroker({ "quota.window.num": "2", "quota.window.size.seconds": "1" });
  const w = watched(b.platform);
  try {
    await setUp(b, "t", 20_000);
    const c = await KafkaConnection.connect(w.platform, { host: "127.0.0.1", port: b.port, clientId });
    try {
      const throttles: { throttleMs: number; answeredMs: number; nextWriteAt: number }[] = [];
      for (let i = 0; i < 8; i++) {
        const writesBefore = w.writes.length;
        const res = await c.request(ProduceApi, 9, produceBody("t", 15_000), 60_000);
        const p = (res.responses as { partitionResponses: { errorCode: number }[] }[])[0].partitionResponses[0];
        assert.equal(p.errorCode, 0);
        assert.ok(w.writes.length > writesBefore, "the request was written");
        // The answer arrived with the last chunk read before it resolved.
        const t = res.throttleTimeMs as number;
        if (t > 0) throttles.push({ throttleMs: t, answeredMs: w.reads.at(-1)!, nextWriteAt: w.writes.length });
      }
      // One more request of another API: held too.
      await c.request(MetadataApi, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }, 60_000);
      assert.ok(throttles.length >= 2, `the quota of 20,000 B/s throttled the 15,000-byte produces (${throttles.length} of 8)`);
      assert.equal(c.throttledResponses, throttles.length);
      for (const { throttleMs, answeredMs, nextWriteAt } of throttles) {
        const writtenMs = w.writes[nextWriteAt];
        // Both times come from one monotonic clock; 1 ms for its rounding.
        assert.ok(writtenMs >= answeredMs + throttleMs - 1, `the next request was written ${writtenMs - answeredMs} ms after an answer throttling for ${throttleMs} ms`);
      }
    } finally {
      c.close();
    }
  } finally {
    await b.stop();
  }
});

test("KafkaConnection under a produce quota of 100,000 B/s: the rate accepted stays near it, and the wait is the client's own", { timeout: 120_000 }, async () => {
  const b = await startBroker({ "quota.window.num": "2", "quota.window.size.seconds": "1" });
  const clock = b.platform.clock;
  try {
    const quota = 100_000;
    await setUp(b, "r", quota);
    const c = await KafkaConnection.connect(b.platform, { host: "127.0.0.1", port: b.port, clientId });
    try {
      const body = produceBody("r", 20_000);
      const batchBytes = ((body.topicData as { partitionData: { records: Uint8Array }[] }[])[0].partitionData[0].records).length;
      const acks: number[] = [];
      const startMs = clock.monotonicMs();
      while (clock.monotonicMs() - startMs < 8_000) {
        const res = await c.request(ProduceApi, 9, body, 60_000);
        assert.equal((res.responses as { partitionResponses: { errorCode: number }[] }[])[0].partitionResponses[0].errorCode, 0);
        acks.push(clock.monotonicMs());
      }
      // Two 1 s windows let a burst through at first; from 2 s on the quota holds.
      const steady = acks.filter((t) => t >= startMs + 2_000);
      const spanMs = steady.at(-1)! - steady[0];
      const rate = ((steady.length - 1) * batchBytes) / (spanMs / 1000);
      console.log(`strand client under a ${quota} B/s produce quota: ${Math.round(rate)} B/s over ${Math.round(spanMs)} ms; ${c.throttledResponses} throttled answers, held ${Math.round(c.throttleHeldMsTotal)} ms`);
      assert.ok(Math.abs(rate - quota) <= 0.15 * quota, `accepted ${Math.round(rate)} B/s, within 15% of ${quota}`);
      assert.ok(c.throttledResponses > 0, "the answers throttled the connection");
      // Without the client's own wait the broker's muted channel would hold the requests instead:
      // the client held its requests for most of the run.
      const elapsedMs = acks.at(-1)! - startMs;
      assert.ok(c.throttleHeldMsTotal >= 0.5 * elapsedMs, `the client held its requests ${c.throttleHeldMsTotal} ms of ${elapsedMs}`);
    } finally {
      c.close();
    }
  } finally {
    await b.stop();
  }
});

test("KafkaConnection: a request held back by a throttle longer than its timeout is still answered (the timeout runs from when it is written)", { timeout: 120_000 }, async () => {
  const b = await startBroker({ "quota.window.num": "2", "quota.window.size.seconds": "1" });
  try {
    await setUp(b, "t", 20_000);
    const c = await KafkaConnection.connect(b.platform, { host: "127.0.0.1", port: b.port, clientId });
    try {
      let throttleMs = 0;
      for (let i = 0; i < 10 && throttleMs < 600; i++) throttleMs = (await c.request(ProduceApi, 9, produceBody("t", 60_000), 60_000)).throttleTimeMs as number;
      assert.ok(throttleMs >= 600, `a throttle of at least 600 ms to test with (got ${throttleMs})`);
      const timeoutMs = Math.floor(throttleMs / 2);
      const md = await c.request(MetadataApi, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }, timeoutMs);
      assert.ok(Array.isArray(md.brokers), `answered within ${timeoutMs} ms of being written, after ${throttleMs} ms held`);
      assert.equal(c.closed, false);
    } finally {
      c.close();
    }
  } finally {
    await b.stop();
  }
});

test("KafkaConnection: a Produce v5 answer's throttle is the broker's to apply (it held the answer back); the client does not wait on top", { timeout: 60_000 }, async () => {
  const b = await startBroker({ "quota.window.num": "2", "quota.window.size.seconds": "1" });
  try {
    await setUp(b, "t", 20_000);
    const c = await KafkaConnection.connect(b.platform, { host: "127.0.0.1", port: b.port, clientId });
    try {
      for (let i = 0; i < 4; i++) {
        const res = await c.request(ProduceApi, 5, produceBody("t", 15_000), 60_000);
        assert.equal((res.responses as { partitionResponses: { errorCode: number }[] }[])[0].partitionResponses[0].errorCode, 0);
      }
      await c.request(ApiVersionsApi, 0, {}, 60_000);
      assert.ok(b.broker.clientQuotas!.produce.throttledTotal > 0, "the broker throttled");
      assert.equal(c.throttledResponses, 0, "old versions: the broker delayed its answers instead");
      assert.equal(c.throttledUntilMs, 0);
    } finally {
      c.close();
    }
  } finally {
    await b.stop();
  }
});

test("Producer under a small produce quota: throttled, every record is still acknowledged in order", { timeout: 120_000 }, async () => {
  const b = await startBroker({ "quota.window.num": "2", "quota.window.size.seconds": "1" });
  const w = watched(b.platform);
  try {
    await setUp(b, "p", 20_000);
    const cluster = new ClusterClient(w.platform, { bootstrap: [{ host: "127.0.0.1", port: b.port }], clientId });
    const producer = new Producer(cluster, { lingerMs: 0, acks: 1 });
    try {
      await producer.prepareTopic("p");
      const acks: Promise<number>[] = [];
      for (let i = 0; i < 12; i++) {
        const value = new TextEncoder().encode("y".repeat(10_000));
        acks.push(new Promise((resolve, reject) => producer.send({ topic: "p", partition: 0, key: null, value }, (e, _p, offset) => (e ? reject(e) : resolve(offset)))));
        await producer.flush();
      }
      assert.deepEqual(await Promise.all(acks), Array.from({ length: 12 }, (_, i) => i));
      assert.ok(b.broker.clientQuotas!.produce.throttledTotal > 0, "the producer was throttled");
    } finally {
      await producer.close();
      cluster.close();
    }
  } finally {
    await b.stop();
  }
});
