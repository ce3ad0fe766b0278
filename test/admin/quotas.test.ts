// GET/PUT /v1/quotas against a real broker over real HTTP: quotas set with PUT land in Kafka's
// layout and are described by GET (filters, the default entity as null), refusals are 400 with
// the broker's message, validate_only writes nothing; a client throttled by its quota shows in
// GET's "throttled" list, in /metrics' kafka_server_produce_throttle_time, and in the
// dashboard's "Throttled clients" table (headless Chromium, when installed).
import assert from "node:assert/strict";
import { test } from "node:test";
import { chromium } from "playwright-core";
import { skipUnless } from "../helpers/tools.ts";
import { ProduceApi } from "../../src/protocol/api/mod.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { "content-type": "application/json" };
  }
  const res = await fetch(base + path, init);
  const text = await res.text();
  return { status: res.status, body: (res.headers.get("content-type") ?? "").includes("json") ? JSON.parse(text) : text };
}

test("admin: /v1/quotas: PUT sets and deletes, GET describes with filters; refusals are 400; validate_only writes nothing", async () => {
  const b = await startBroker({ "admin.listeners": "http://127.0.0.1:0" });
  const api = (method: string, path: string, body?: unknown) => call(b.adminUrl, method, path, body);
  try {
    assert.deepEqual((await api("GET", "/v1/quotas")).body, { quotas: [], throttled: [] });
    const put = await api("PUT", "/v1/quotas", { entity: { user: "alice" }, set: { producer_byte_rate: 1048576, request_percentage: 50 } });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal((await api("PUT", "/v1/quotas", { entity: { user: "alice", client_id: null }, set: { consumer_byte_rate: 2048 } })).status, 200);
    assert.equal((await api("PUT", "/v1/quotas", { entity: { client_id: "app" }, set: { producer_byte_rate: 4096 } })).status, 200);
    const all = (await api("GET", "/v1/quotas")).body.quotas as Json[];
    const sorted = all.map((q) => JSON.stringify(q)).sort();
    assert.deepEqual(sorted, [
      JSON.stringify({ entity: { client_id: "app" }, values: { producer_byte_rate: 4096 } }),
      JSON.stringify({ entity: { user: "alice", client_id: null }, values: { consumer_byte_rate: 2048 } }),
      JSON.stringify({ entity: { user: "alice" }, values: { producer_byte_rate: 1048576, request_percentage: 50 } }),
    ].sort());
    assert.deepEqual((await api("GET", "/v1/quotas?user=alice&strict")).body.quotas, [{ entity: { user: "alice" }, values: { producer_byte_rate: 1048576, request_percentage: 50 } }]);
    assert.deepEqual((await api("GET", "/v1/quotas?client_id_default")).body.quotas, [{ entity: { user: "alice", client_id: null }, values: { consumer_byte_rate: 2048 } }]);
    // Delete one key.
    assert.equal((await api("PUT", "/v1/quotas", { entity: { user: "alice" }, delete: ["request_percentage"] })).status, 200);
    assert.deepEqual((await api("GET", "/v1/quotas?user=alice&strict")).body.quotas[0].values, { producer_byte_rate: 1048576 });
    // Refusals.
    const bad: [unknown, RegExp][] = [
      [{ entity: { user: "alice" }, set: { nope: 1 } }, /Invalid configuration key nope/],
      [{ entity: { user: "alice" }, set: { producer_byte_rate: -1 } }, /must be positive/],
      [{ entity: { user: "alice" }, set: { producer_byte_rate: "1" } }, /must be a number/],
      [{ entity: { group: "g" }, set: { producer_byte_rate: 1 } }, /unknown entity part group/],
      [{ entity: {}, set: { producer_byte_rate: 1 } }, /empty client quota entity/],
      [{ entity: { user: "alice" } }, /nothing to change/],
      [{ set: { producer_byte_rate: 1 } }, /entity must be an object/],
    ];
    for (const [body, pattern] of bad) {
      const r = await api("PUT", "/v1/quotas", body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.body.error, pattern);
    }
    assert.equal((await api("GET", "/v1/quotas?user=a&user_default")).status, 400);
    // The ip entity (KIP-612): alone, an address or the default.
    assert.equal((await api("PUT", "/v1/quotas", { entity: { ip: "10.0.0.7" }, set: { connection_creation_rate: 5 } })).status, 200);
    assert.deepEqual((await api("GET", "/v1/quotas?ip=10.0.0.7")).body.quotas, [{ entity: { ip: "10.0.0.7" }, values: { connection_creation_rate: 5 } }]);
    assert.deepEqual((await api("GET", "/v1/quotas?ip_default")).body.quotas, []);
    assert.match((await api("PUT", "/v1/quotas", { entity: { ip: "10.0.0.7", user: "a" }, set: { connection_creation_rate: 5 } })).body.error, /IP entity should not be used/);
    assert.equal((await api("PUT", "/v1/quotas", { entity: { ip: "10.0.0.7" }, delete: ["connection_creation_rate"] })).status, 200);
    const v = await api("PUT", "/v1/quotas", { entity: { user: "bob" }, set: { producer_byte_rate: 10 }, validate_only: true });
    assert.equal(v.status, 200);
    assert.deepEqual((await api("GET", "/v1/quotas?user=bob")).body.quotas, []);
  } finally {
    await b.stop();
  }
});

async function throttleOnce(b: TestBroker, c: WireClient): Promise<number> {
  assert.equal((await createTopic(c, "t")).errorCode, 0);
  assert.equal((await call(b.adminUrl, "PUT", "/v1/quotas", { entity: { client_id: "wire-test" }, set: { producer_byte_rate: 10240 } })).status, 200);
  const deadline = Date.now() + 10_000;
  while (!b.broker.clientQuotas!.produce.active) {
    assert.ok(Date.now() < deadline, "the broker applies the quota");
    await new Promise((r) => setTimeout(r, 20));
  }
  const batch = buildBatch(valueRecords(1, "v", 16 * 1024));
  let throttleMs = 0;
  for (let i = 0; i < 5 && throttleMs === 0; i++) {
    const r = await c.request(ProduceApi, 8, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: "t", partitionData: [{ index: 0, records: batch }] }] }, 30_000);
    throttleMs = r.throttleTimeMs as number;
  }
  assert.ok(throttleMs > 0, "the client was throttled");
  return throttleMs;
}

test("admin: a throttled client shows in /v1/quotas' throttled list and in /metrics' throttle time", async () => {
  const b = await startBroker({ "admin.listeners": "http://127.0.0.1:0", "quota.window.num": "2" });
  const c = await WireClient.connect(b.port);
  try {
    const throttleMs = await throttleOnce(b, c);
    const throttled = (await call(b.adminUrl, "GET", "/v1/quotas")).body.throttled as Json[];
    assert.equal(throttled.length, 1);
    assert.equal(throttled[0].type, "produce");
    assert.equal(throttled[0].client_id, "wire-test");
    assert.equal(throttled[0].user, "");
    assert.equal(throttled[0].quota, 10240);
    assert.ok(throttled[0].throttled_total >= 1 && throttled[0].last_throttle_time_ms === throttleMs);
    const metrics = (await call(b.adminUrl, "GET", "/metrics")).body as string;
    assert.match(metrics, new RegExp(`^kafka_server_produce_throttle_time\\{user="",client_id="wire-test"\\} ${throttleMs}$`, "m"));
    assert.match(metrics, /^kafka_server_produce_byte_rate\{user="",client_id="wire-test"\} \d/m);
    assert.match(metrics, /^strand_server_throttled_total\{quota="produce"\} [1-9]/m);
  } finally {
    c.close();
    await b.stop();
  }
});

test("dashboard: the Throttled clients table lists a client its quota throttled", { skip: skipUnless("chromium") }, async () => {
  const b = await startBroker({ "admin.listeners": "http://127.0.0.1:0", "quota.window.num": "2" });
  const c = await WireClient.connect(b.port);
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
  try {
    await throttleOnce(b, c);
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(e.message));
    await page.goto(`${b.adminUrl}/`);
    const row = page.locator('#throttled tbody tr[data-quota="produce"][data-client="wire-test"]');
    await row.waitFor({ timeout: 15_000 });
    const cells = await row.locator("td").allTextContents();
    assert.equal(cells[0], "produce");
    assert.equal(cells[1], "any", "a client-id quota: every user of the client shares it");
    assert.equal(cells[2], "wire-test");
    assert.equal(cells[3], "10.0 KiB/s");
    assert.match(cells[6], /^[1-9][\d,]* ms$/);
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    c.close();
    await b.stop();
  }
});
