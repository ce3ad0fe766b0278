// controller_mutation_rate (KIP-599, src/broker/client_quota_manager.ts) over real sockets: the
// partitions CreateTopics creates, CreatePartitions adds and DeleteTopics deletes are counted per
// client on a token bucket; a strict version (CreateTopics v6+, DeleteTopics v5+,
// CreatePartitions v3+) refuses the topics met with an empty bucket with
// THROTTLING_QUOTA_EXCEEDED and a throttle time, an older version goes through and is throttled
// after; validate_only counts nothing; a client without the quota is never throttled.
//
// The quota is 10 partitions/s with controller.quota.window.num=2 of 1 s: a bucket of 20. A
// bucket not negative lets a mutation through whole (Kafka's burst), so of topics of 15
// partitions the first two pass (20 -> 5 -> -10) and the rest are refused until a second has
// refilled the 10 owed, far longer than the few milliseconds between one request's topics.
import assert from "node:assert/strict";
import { test } from "node:test";
import { AlterClientQuotasApi, CreatePartitionsApi, CreateTopicsApi, DeleteTopicsApi } from "../../src/protocol/api/mod.ts";
import type { ApiSchema } from "../../src/protocol/schema.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { ClientQuotas, type QuotaStore, type RequestContext } from "../../src/broker/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { decodeResponse, encodeRequest, WireClient } from "../helpers/wire.ts";

const window = { "controller.quota.window.num": "2", "controller.quota.window.size.seconds": "1" };
const THROTTLED = ErrorCode.THROTTLING_QUOTA_EXCEEDED;
let correlation = 1000;

/** A request sent with its own client id (the quota entity the tests set). */
async function request(c: WireClient, clientId: string, api: ApiSchema, version: number, body: Struct): Promise<Struct> {
  const id = correlation++;
  await c.write(encodeRequest(api, version, id, body, clientId));
  const payload = await c.nextFrame(20_000);
  assert.ok(payload !== null, `${api.name} answered`);
  const out = decodeResponse(api, version, payload);
  assert.equal(out.correlationId, id);
  return out.body;
}

async function eventually(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** controller_mutation_rate=10 for one client id, set over the wire, applied by the broker. */
async function setQuota(b: TestBroker, c: WireClient, clientId: string): Promise<void> {
  const r = await c.request(AlterClientQuotasApi, 1, {
    entries: [{ entity: [{ entityType: "client-id", entityName: clientId }], ops: [{ key: "controller_mutation_rate", value: 10, remove: false }] }],
    validateOnly: false,
  });
  assert.deepEqual((r.entries as { errorCode: number }[]).map((e) => e.errorCode), [0]);
  await eventually("the broker applies the quota", () => b.broker.clientQuotas!.store.resolve("controller_mutation", "ANONYMOUS", clientId) !== null);
}

function createBody(names: string[], partitions: number, validateOnly = false): Struct {
  return {
    topics: names.map((name) => ({ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] })),
    timeoutMs: 10_000,
    validateOnly,
  };
}

type TopicResult = { name: string; errorCode: number; errorMessage: string | null };
const codes = (rs: TopicResult[]) => rs.map((r) => r.errorCode).sort((a, b) => a - b);

test("controller mutation quota: CreateTopics strict from v6 refuses the excess topics, v5 goes through and is throttled, validate_only and unquoted clients are not counted", async () => {
  const b = await startBroker(window);
  const c = await WireClient.connect(b.port);
  try {
    // No quota anywhere: 60 partitions at once, nothing throttled.
    const free = await request(c, "free", CreateTopicsApi, 7, createBody(["f1", "f2", "f3", "f4"], 15));
    assert.deepEqual(codes(free.topics as TopicResult[]), [0, 0, 0, 0]);
    assert.equal(free.throttleTimeMs, 0);

    await setQuota(b, c, "strict");
    // 4 x 15 partitions: two pass (the bucket is not negative before either), two are refused.
    const strict = await request(c, "strict", CreateTopicsApi, 7, createBody(["s1", "s2", "s3", "s4"], 15));
    const results = strict.topics as TopicResult[];
    assert.deepEqual(codes(results), [0, 0, THROTTLED, THROTTLED]);
    assert.ok((strict.throttleTimeMs as number) > 0, `throttle_time_ms ${strict.throttleTimeMs}`);
    for (const r of results) {
      const created = b.broker.services.metadata.getTopic(r.name) !== undefined;
      if (r.errorCode === THROTTLED) {
        assert.equal(r.errorMessage, "The throttling quota has been exceeded.");
        assert.equal(created, false, `${r.name} refused but created`);
      } else {
        assert.equal(created, true, `${r.name} created`);
      }
    }
    const stat = b.broker.clientQuotas!.controllerMutation.stats().find((s) => s.clientId === "strict");
    assert.ok(stat !== undefined && stat.throttledTotal > 0 && (stat.tokens ?? 0) < 0);

    // A client still in the free set on another connection is not throttled by "strict"'s debt.
    const c2 = await WireClient.connect(b.port);
    try {
      const again = await request(c2, "free", CreateTopicsApi, 7, createBody(["f5"], 15));
      assert.deepEqual(codes(again.topics as TopicResult[]), [0]);
      assert.equal(again.throttleTimeMs, 0);
    } finally {
      c2.close();
    }

    // v5 cannot be told THROTTLING_QUOTA_EXCEEDED: all created, throttled after.
    const c3 = await WireClient.connect(b.port);
    try {
      await setQuota(b, c3, "old");
      const old = await request(c3, "old", CreateTopicsApi, 5, createBody(["o1", "o2", "o3"], 15));
      assert.deepEqual(codes(old.topics as TopicResult[]), [0, 0, 0]);
      assert.ok((old.throttleTimeMs as number) > 0, `throttle_time_ms ${old.throttleTimeMs}`);
      for (const n of ["o1", "o2", "o3"]) assert.ok(b.broker.services.metadata.getTopic(n) !== undefined, `${n} created`);
    } finally {
      c3.close();
    }

    // validate_only: 75 partitions validated, none counted; the bucket is still full after.
    const c4 = await WireClient.connect(b.port);
    try {
      await setQuota(b, c4, "validator");
      const names = ["v1", "v2", "v3", "v4", "v5"];
      const checked = await request(c4, "validator", CreateTopicsApi, 7, createBody(names, 15, true));
      assert.deepEqual(codes(checked.topics as TopicResult[]), [0, 0, 0, 0, 0]);
      assert.equal(checked.throttleTimeMs, 0);
      for (const n of names) assert.equal(b.broker.services.metadata.getTopic(n), undefined);
      // Had the 75 counted, the bucket would be at -55 and this refused.
      const real = await request(c4, "validator", CreateTopicsApi, 7, createBody(["v1"], 15));
      assert.deepEqual(codes(real.topics as TopicResult[]), [0]);
      assert.equal(real.throttleTimeMs, 0);
    } finally {
      c4.close();
    }
  } finally {
    c.close();
    await b.stop();
  }
});

test("controller mutation quota: DeleteTopics counts the partitions deleted and CreatePartitions the partitions added", async () => {
  const b = await startBroker(window);
  const c = await WireClient.connect(b.port);
  try {
    const made = await request(c, "free", CreateTopicsApi, 7, createBody(["d1", "d2", "d3", "g1", "g2", "g3"], 15));
    assert.deepEqual(codes(made.topics as TopicResult[]), [0, 0, 0, 0, 0, 0]);
    const small = await request(c, "free", CreateTopicsApi, 7, createBody(["p1", "p2", "p3"], 1));
    assert.deepEqual(codes(small.topics as TopicResult[]), [0, 0, 0]);

    const cd = await WireClient.connect(b.port);
    try {
      await setQuota(b, cd, "deleter");
      const del = await request(cd, "deleter", DeleteTopicsApi, 6, {
        topics: ["d1", "d2", "d3"].map((name) => ({ name, topicId: new Uint8Array(16) })),
        timeoutMs: 10_000,
      });
      const rs = del.responses as TopicResult[];
      assert.deepEqual(codes(rs), [0, 0, THROTTLED], JSON.stringify(rs));
      assert.ok((del.throttleTimeMs as number) > 0);
      const kept = rs.find((r) => r.errorCode === THROTTLED)!.name;
      assert.ok(b.broker.services.metadata.getTopic(kept) !== undefined, `${kept} refused but deleted`);
    } finally {
      cd.close();
    }

    const cg = await WireClient.connect(b.port);
    try {
      await setQuota(b, cg, "grower");
      // 1 -> 16 partitions: 15 added to each.
      const grow = await request(cg, "grower", CreatePartitionsApi, 3, {
        topics: ["p1", "p2", "p3"].map((name) => ({ name, count: 16, assignments: null })),
        timeoutMs: 10_000,
        validateOnly: false,
      });
      const rs = grow.results as TopicResult[];
      assert.deepEqual(codes(rs), [0, 0, THROTTLED], JSON.stringify(rs));
      assert.ok((grow.throttleTimeMs as number) > 0);
      const kept = rs.find((r) => r.errorCode === THROTTLED)!.name;
      assert.equal(b.broker.services.metadata.getTopic(kept)?.partitions.length, 1);
    } finally {
      cg.close();
    }

    // validate_only: 45 partitions checked, none counted, nothing added.
    const cv = await WireClient.connect(b.port);
    try {
      await setQuota(b, cv, "grow-validator");
      const body = (validateOnly: boolean) => ({ topics: ["g1", "g2", "g3"].map((name) => ({ name, count: 30, assignments: null })), timeoutMs: 10_000, validateOnly });
      const checked = await request(cv, "grow-validator", CreatePartitionsApi, 3, body(true));
      assert.deepEqual(codes(checked.results as TopicResult[]), [0, 0, 0]);
      assert.equal(checked.throttleTimeMs, 0);
      assert.equal(b.broker.services.metadata.getTopic("g1")?.partitions.length, 15);
    } finally {
      cv.close();
    }

    // CreatePartitions v2 is permissive: every topic grows, the answer carries the throttle.
    const co = await WireClient.connect(b.port);
    try {
      await setQuota(b, co, "old-grower");
      const grow = await request(co, "old-grower", CreatePartitionsApi, 2, {
        topics: ["g1", "g2", "g3"].map((name) => ({ name, count: 30, assignments: null })),
        timeoutMs: 10_000,
        validateOnly: false,
      });
      assert.deepEqual(codes(grow.results as TopicResult[]), [0, 0, 0]);
      assert.ok((grow.throttleTimeMs as number) > 0);
    } finally {
      co.close();
    }

    // DeleteTopics v4 is permissive: all 90 partitions deleted, the answer carries the throttle.
    const cx = await WireClient.connect(b.port);
    try {
      await setQuota(b, cx, "old-deleter");
      const del = await request(cx, "old-deleter", DeleteTopicsApi, 4, { topicNames: ["g1", "g2", "g3"], timeoutMs: 10_000 });
      assert.deepEqual(codes(del.responses as TopicResult[]), [0, 0, 0]);
      assert.ok((del.throttleTimeMs as number) > 0);
    } finally {
      cx.close();
    }
  } finally {
    c.close();
    await b.stop();
  }
});

test("controller mutation quota on a fixed clock: Kafka's token bucket, strict refuses only once it is negative and throttles only what it refuses, permissive throttles after", () => {
  let now = 1000;
  const quotas = new Map([["controller_mutation_rate", 10]]);
  const store = {
    hasAny: (type: string) => type === "controller_mutation",
    resolve: (type: string, _user: string, clientId: string) =>
      type === "controller_mutation" && quotas.has("controller_mutation_rate") ? { bound: 10, user: "", clientId } : null,
  } as unknown as QuotaStore;
  // 2 windows of 1 s at 10/s: a bucket of 20.
  const q = new ClientQuotas(store, 11, 1, () => now, 2, 1);
  const ctx = (version: number, clientId: string) =>
    ({ header: { apiKey: 19, apiVersion: version, correlationId: 1, clientId }, version, conn: { principal: "User:ANONYMOUS" }, quotaThrottleUntilMs: 0 }) as unknown as RequestContext;

  const strict = ctx(6, "a");
  const sq = q.controllerMutation.quotaFor(strict, 6);
  assert.equal(sq.record(15), true); // 20 -> 5
  assert.equal(sq.record(15), true); // 5 -> -10: the burst passes, unthrottled
  assert.equal(strict.quotaThrottleUntilMs, 0);
  assert.equal(sq.record(1), false); // -10: refused, 1 s to refill
  assert.equal(strict.quotaThrottleUntilMs, now + 1000);
  now += 500; // +5 tokens: -5, still refused
  assert.equal(q.controllerMutation.quotaFor(ctx(6, "a"), 6).record(1), false);
  now += 500; // 0: not negative, accepted
  assert.equal(q.controllerMutation.quotaFor(ctx(6, "a"), 6).record(30), true);

  const old = ctx(5, "b");
  const pq = q.controllerMutation.quotaFor(old, 6);
  assert.equal(pq.record(15), true);
  assert.equal(old.quotaThrottleUntilMs, 0);
  assert.equal(pq.record(15), true); // -10: let through, throttled 1 s
  assert.equal(old.quotaThrottleUntilMs, now + 1000);
  assert.equal(pq.record(10), true); // -20: 2 s
  assert.equal(old.quotaThrottleUntilMs, now + 2000);
  // The bucket never holds more than its burst: 10 s idle is still 20 tokens.
  now += 10_000;
  const later = ctx(6, "b");
  const lq = q.controllerMutation.quotaFor(later, 6);
  assert.equal(lq.record(20), true);
  assert.equal(lq.record(1), true); // 0 is not negative
  assert.equal(lq.record(1), false);
  const stats = q.controllerMutation.stats();
  assert.deepEqual(stats.map((s) => s.clientId).sort(), ["a", "b"]);
});

test("controller mutation quota: CreateTopics charges the quota in request order, so the same later topics are refused every time", async () => {
  const b = await startBroker(window);
  const c = await WireClient.connect(b.port);
  try {
    for (const round of [1, 2, 3]) {
      const clientId = `ordered-${round}`;
      await setQuota(b, c, clientId);
      // Sizes differ so a topic charged out of order would change the outcome: 1 + 18 leave the
      // bucket at 1 (not negative), the 5 goes through to -4, and the last two are refused.
      const sizes = [1, 18, 5, 2, 1];
      const names = sizes.map((_, i) => `o${round}-${i}`);
      const r = await request(c, clientId, CreateTopicsApi, 7, {
        topics: names.map((name, i) => ({ name, numPartitions: sizes[i], replicationFactor: 1, assignments: [], configs: [] })),
        timeoutMs: 10_000,
        validateOnly: false,
      });
      const results = r.topics as TopicResult[];
      assert.deepEqual(results.map((t) => t.name), names);
      assert.deepEqual(results.map((t) => t.errorCode), [0, 0, 0, THROTTLED, THROTTLED], `round ${round}`);
    }
  } finally {
    c.close();
    await b.stop();
  }
});
