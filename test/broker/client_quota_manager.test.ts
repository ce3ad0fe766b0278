// ClientQuotas (src/broker/client_quota_manager.ts) on a fixed clock: Kafka's throttle time
// ((rate - quota) / quota x window), the request quota bounded by one window, what is exempt
// (inter-broker APIs, follower fetches), the usage shared per quota entity, and a throttled
// fetch answered without data and its bytes taken back.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ClientQuotas, type QuotaStore, type RequestContext, resolveQuota } from "../../src/broker/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";

/** A store holding a few quotas by entity (as QuotaStore.get would answer them). */
function store(quotas: { entity: { user?: string | null; clientId?: string | null }; key: string; value: number }[]): QuotaStore {
  const k = (e: { user?: string | null; clientId?: string | null }) => JSON.stringify([e.user === undefined ? "-" : e.user, e.clientId === undefined ? "-" : e.clientId]);
  const keyOf = { produce: "producer_byte_rate", fetch: "consumer_byte_rate", request: "request_percentage" } as const;
  return {
    hasAny: (type: keyof typeof keyOf) => quotas.some((q) => q.key === keyOf[type]),
    resolve: (type: keyof typeof keyOf, user: string, clientId: string) =>
      resolveQuota((e) => quotas.find((q) => q.key === keyOf[type] && k(q.entity) === k(e))?.value, user, clientId),
  } as unknown as QuotaStore;
}

function ctx(apiKey: number, version: number, principal: string, clientId: string): RequestContext {
  return {
    header: { apiKey, apiVersion: version, correlationId: 1, clientId },
    version,
    conn: { id: 1, listener: "PLAINTEXT", remote: "127.0.0.1:1", host: "127.0.0.1", principal },
    supportedApis: () => [],
  } as unknown as RequestContext;
}

test("client quotas: produce throttle time is Kafka's (rate - quota) / quota x window; usage is shared per quota entity", () => {
  let now = 0;
  const q = new ClientQuotas(store([{ entity: { user: "alice" }, key: "producer_byte_rate", value: 1000 }]), 11, 1, () => now);
  // 10 s of quota in one go (the window is never shorter than 10 samples): no throttle yet.
  assert.equal(q.throttle(ctx(0, 9, "User:alice", "a"), {}, {}, 10_000, 0, 0), 0);
  // 1000 bytes more: rate 11000 / 10 s = 1100 B/s, 10% over: 10% of the 10 s window.
  assert.equal(q.throttle(ctx(0, 9, "User:alice", "b"), {}, {}, 1000, 0, 0), 1000);
  // Another client of alice shares the user's quota; bob has none.
  now = 500;
  assert.ok(q.throttle(ctx(0, 9, "User:alice", "c"), {}, {}, 1, 0, 0) > 0);
  assert.equal(q.throttle(ctx(0, 9, "User:bob", "c"), {}, {}, 1_000_000, 0, 0), 0);
  const stats = q.produce.stats();
  assert.equal(stats.length, 1);
  assert.deepEqual([stats[0].user, stats[0].clientId, stats[0].throttledTotal], ["alice", "", 2]);
  // Other APIs are not charged to the byte rate.
  assert.equal(q.throttle(ctx(3, 12, "User:alice", "a"), {}, {}, 1_000_000, 0, 0), 0);
});

test("client quotas: the request quota's throttle is bounded by one window; cluster-action APIs (unless refused CLUSTER_AUTHORIZATION_FAILED) and follower fetches are exempt", () => {
  let now = 0;
  const q = new ClientQuotas(store([
    { entity: { clientId: null }, key: "request_percentage", value: 1 },
    { entity: { clientId: null }, key: "consumer_byte_rate", value: 10 },
  ]), 11, 1, () => now);
  // 5 s of handler time at once: 500% over 10 s = 50%, far above 1%; bounded by the 1 s window.
  assert.equal(q.throttle(ctx(3, 12, "User:ANONYMOUS", "app"), {}, {}, 100, 100, 5_000), 1000);
  // Cluster-action APIs answered to a broker are exempt (sendResponseExemptThrottle); refused for
  // want of CLUSTER_ACTION they are throttled (RequestHandlerHelper.handleError's mayThrottle).
  for (const apiKey of [4, 5, 6, 7, 56]) {
    assert.equal(q.throttle(ctx(apiKey, 1, "User:broker", "app"), {}, { errorCode: 0 }, 100, 100, 5_000), 0, `api ${apiKey} answered`);
    assert.equal(q.throttle(ctx(apiKey, 1, "User:broker", "app"), {}, { errorCode: 11 }, 100, 100, 5_000), 0, `api ${apiKey} STALE_CONTROLLER_EPOCH`);
    assert.equal(q.throttle(ctx(apiKey, 1, "User:mallory", "app"), {}, { errorCode: 31 }, 100, 100, 5_000), 1000, `api ${apiKey} refused`);
  }
  const markers = (code: number): Struct => ({ markers: [{ producerId: 1n, topics: [{ name: "t", partitions: [{ partitionIndex: 0, errorCode: code }] }] }] });
  assert.equal(q.throttle(ctx(27, 1, "User:broker", "app"), {}, markers(0), 100, 100, 5_000), 0, "WriteTxnMarkers answered");
  assert.equal(q.throttle(ctx(27, 1, "User:mallory", "app"), {}, markers(31), 100, 100, 5_000), 1000, "WriteTxnMarkers refused");
  // A follower's fetch (replica id >= 0, v15+ in replicaState) is not a client's.
  assert.equal(q.throttle(ctx(1, 12, "User:ANONYMOUS", "app"), { replicaId: 2 }, {}, 100, 1_000_000, 0), 0);
  assert.equal(q.throttle(ctx(1, 15, "User:ANONYMOUS", "app"), { replicaState: { replicaId: 2 } }, {}, 100, 1_000_000, 0), 0);
  // A consumer's fetch over its byte rate: no data in the answer, and its bytes are not counted.
  now = 1;
  const answer: Struct = { responses: [{ topic: "t" }], nodeEndpoints: [] };
  const t = q.throttle(ctx(1, 12, "User:ANONYMOUS", "app"), { replicaId: -1 }, answer, 100, 1_000_000, 0);
  assert.ok(t > 0);
  assert.deepEqual(answer.responses, []);
  const fetch = q.fetch.stats().find((s) => s.clientId === "app")!;
  assert.ok(fetch.rate < 10, `the answer's bytes were taken back (rate ${fetch.rate})`);
});
