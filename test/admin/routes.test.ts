// The admin HTTP API against a real broker over real HTTP (fetch to platform.http.serve): every
// route, its JSON, and its refusals: 400 bad input, 401 missing or wrong token, 403 changes
// without a token on a listener beyond loopback, 404 unknown, 409 topic exists, 413 body too
// large, 503 while the broker starts or stops (staged by an AdminServer with no broker attached,
// then detached), plus start-up errors for a busy admin port and a bad token file.
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { AdminServer, AdminStartupError, isLoopbackHost } from "../../src/admin/mod.ts";
import { Broker, ConfigError, parseAdminListener, parseBrokerConfig } from "../../src/broker/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import { EmbeddedRegistryStore } from "../../src/registry/mod.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { startBroker, tempDir, type TestBroker } from "../helpers/broker.ts";
import { assignmentV0, findCoordinator, RawMember, subscriptionV0 } from "../helpers/groups.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { produce, WireClient } from "../helpers/wire.ts";

const ADMIN = { "admin.listeners": "http://127.0.0.1:0" };
const GROUPS = { "group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "4" };

// deno-lint-ignore no-explicit-any
type Json = any;

interface Answer {
  status: number;
  body: Json;
  headers: Headers;
}

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)["content-type"] = "application/json";
  }
  const res = await fetch(base + path, init);
  const text = await res.text();
  let parsed: Json = text;
  if ((res.headers.get("content-type") ?? "").includes("application/json")) parsed = JSON.parse(text);
  return { status: res.status, body: parsed, headers: res.headers };
}

/** A broker with its admin API; stopped (files removed) after fn, whatever happens. */
async function withAdminBroker(overrides: Record<string, string>, fn: (b: TestBroker, api: typeof call) => Promise<void>): Promise<void> {
  const b = await startBroker({ ...ADMIN, ...overrides });
  try {
    await fn(b, (base, ...rest) => call(base, ...rest));
  } finally {
    await b.stop();
  }
}

function assertError(a: Answer, status: number, pattern: RegExp, what: string): void {
  assert.equal(a.status, status, `${what}: status (body ${JSON.stringify(a.body)})`);
  assert.equal(typeof a.body, "object", `${what}: a JSON body`);
  assert.match(a.body.error, pattern, `${what}: message`);
}

test("admin: live answers at once; ready and every broker route say 503 until the broker is attached and again once it stops", async () => {
  const platform = await loadPlatform();
  const logDir = tempDir();
  const { config } = parseBrokerConfig(new Map([
    ["broker.id", "0"],
    ["log.dirs", logDir],
    ["listeners", "PLAINTEXT://127.0.0.1:0"],
    ["admin.listeners", "http://127.0.0.1:0"],
  ]));
  const admin = await AdminServer.start(platform, config, { logger: silentLogger });
  const base = `http://127.0.0.1:${admin.addresses[0].port}`;
  let broker: Broker | null = null;
  let store: EmbeddedRegistryStore | null = null;
  try {
    assert.deepEqual((await call(base, "GET", "/v1/status/live")).body, { status: "live" });
    const starting = await call(base, "GET", "/v1/status/ready");
    assertError(starting, 503, /starting/, "ready while starting");
    assert.equal(starting.body.phase, "starting");
    for (const path of ["/v1/cluster", "/v1/brokers", "/v1/topics", "/v1/topics/t", "/v1/groups", "/v1/config"]) {
      assertError(await call(base, "GET", path), 503, /the broker is starting/, path);
    }
    assertError(await call(base, "POST", "/v1/topics", { name: "t" }), 503, /starting/, "create while starting");
    const early = await call(base, "GET", "/metrics");
    assert.equal(early.status, 200, "metrics answer with process figures meanwhile");
    assert.match(early.body, /^process_resident_memory_bytes \d+$/m);

    // The CLI's order: admin first, then the broker (recovery, registration), then attach.
    store = EmbeddedRegistryStore.open(platform, `${logDir}/.strand-registry`);
    broker = await Broker.start(platform, config, store.session(), silentLogger);
    admin.attach(broker);
    const ready = await call(base, "GET", "/v1/status/ready");
    assert.deepEqual(ready.body, { status: "ready", broker_id: 0, broker_epoch: String(broker.services.brokerEpoch()) });
    assert.ok(broker.services.brokerEpoch() >= 0n, "the registration's czxid");
    assert.equal(ready.headers.get("x-strand-broker-id"), "0", "every answer names the broker that gave it");

    // Registered means the ephemeral znode is there: without it, not ready.
    const session = store.session();
    await session.delete("/brokers/ids/0");
    await session.close();
    assertError(await call(base, "GET", "/v1/status/ready"), 503, /not registered/, "ready without registration");

    admin.detach();
    const stopping = await call(base, "GET", "/v1/status/ready");
    assertError(stopping, 503, /stopping/, "ready while stopping");
    assertError(await call(base, "GET", "/v1/topics"), 503, /stopping/, "topics while stopping");
    assert.equal((await call(base, "GET", "/v1/status/live")).status, 200);
  } finally {
    await admin.close();
    await broker?.shutdown();
    await store?.close();
    rmSync(logDir, { recursive: true, force: true });
  }
});

test("admin: cluster and brokers", async () => {
  await withAdminBroker({}, async (b) => {
    const cluster = await call(b.adminUrl, "GET", "/v1/cluster");
    assert.equal(cluster.status, 200);
    const self = { id: 0, host: "127.0.0.1", port: b.port, rack: null, is_controller: true, is_local: true };
    assert.deepEqual(cluster.body, { cluster_id: b.broker.clusterId, controller_id: 0, local_broker_id: 0, brokers: [self] });
    assert.deepEqual((await call(b.adminUrl, "GET", "/v1/brokers")).body, [self]);
  });
});

test("admin: topics: create, list, describe, partitions with log offsets, delete; 400, 404, 409, 413", async () => {
  await withAdminBroker({}, async (b) => {
    const u = b.adminUrl;
    const created = await call(u, "POST", "/v1/topics", { name: "orders", partitions: 3, replication_factor: 1, configs: { "retention.ms": 3_600_000 } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.name, "orders");
    assert.equal(created.body.partitions, 3);
    assert.deepEqual(created.body.configs, { "retention.ms": "3600000" });
    assert.equal(created.body.partition_details.length, 3);
    const defaults = await call(u, "POST", "/v1/topics", { name: "plain" });
    assert.equal(defaults.status, 201);
    assert.equal(defaults.body.partitions, 1, "num.partitions is the default");

    const dup = await call(u, "POST", "/v1/topics", { name: "orders", partitions: 1 });
    assertError(dup, 409, /already exists/, "create twice");
    assert.equal(dup.body.code, "TOPIC_ALREADY_EXISTS");
    assertError(await call(u, "POST", "/v1/topics", "{not json"), 400, /not JSON/, "not JSON");
    assertError(await call(u, "POST", "/v1/topics", [1]), 400, /JSON object/, "an array");
    assertError(await call(u, "POST", "/v1/topics", { name: 5 }), 400, /name/, "numeric name");
    assertError(await call(u, "POST", "/v1/topics", { name: "x", partitions: "3" }), 400, /partitions must be an integer/, "string count");
    assertError(await call(u, "POST", "/v1/topics", { name: "x", partitions: 0 }), 400, /larger than 0/, "no partitions");
    assertError(await call(u, "POST", "/v1/topics", { name: "bad name!" }), 400, /illegal|legal|invalid/i, "bad name");
    assertError(await call(u, "POST", "/v1/topics", { name: "x", replication_factor: 3 }), 400, /larger than available brokers/, "rf 3 on one broker");
    assertError(await call(u, "POST", "/v1/topics", { name: "x", configs: { "retention.ms": "soon" } }), 400, /retention\.ms/, "bad config");
    assertError(await call(u, "POST", "/v1/topics", { name: "x", configs: ["retention.ms"] }), 400, /configs must be an object/, "configs list");
    assertError(await call(u, "POST", "/v1/topics", { name: "x".repeat(2_000_000) }), 413, /larger than/, "a body past the limit");

    const list = await call(u, "GET", "/v1/topics");
    assert.deepEqual(list.body.map((t: Json) => t.name), ["orders", "plain"]);
    assert.deepEqual(list.body[0], {
      name: "orders",
      topic_id: created.body.topic_id,
      internal: false,
      partitions: 3,
      replication_factor: 1,
      under_replicated_partitions: 0,
      offline_partitions: 0,
    });

    const c = await WireClient.connect(b.port);
    try {
      const batch = buildBatch(valueRecords(5));
      assert.equal((await produce(c, "orders", 1, batch)).errorCode, 0);
      const parts = await call(u, "GET", "/v1/topics/orders/partitions");
      assert.equal(parts.status, 200);
      assert.deepEqual(parts.body.map((p: Json) => p.partition), [0, 1, 2]);
      assert.deepEqual(parts.body[1], {
        partition: 1,
        leader: 0,
        leader_epoch: 0,
        replicas: [0],
        isr: [0],
        under_replicated: false,
        offline: false,
        local_replica: "online",
        log_start_offset: 0,
        log_end_offset: 5,
        high_watermark: 5,
        size_bytes: batch.length,
      });
      assert.equal(parts.body[0].log_end_offset, 0);
    } finally {
      c.close();
    }
    const one = await call(u, "GET", "/v1/topics/orders");
    assert.equal(one.status, 200);
    assert.equal(one.body.partition_details[1].log_end_offset, 5);

    assertError(await call(u, "GET", "/v1/topics/nope"), 404, /unknown topic nope/, "describe unknown");
    assertError(await call(u, "GET", "/v1/topics/nope/partitions"), 404, /unknown topic/, "partitions of unknown");
    assertError(await call(u, "GET", "/v1/nothing-here"), 404, /no route GET \/v1\/nothing-here/, "unknown route");

    const deleted = await call(u, "DELETE", "/v1/topics/orders");
    assert.deepEqual([deleted.status, deleted.body], [200, { name: "orders", deleted: true }]);
    assertError(await call(u, "GET", "/v1/topics/orders"), 404, /unknown topic/, "after delete");
    assertError(await call(u, "DELETE", "/v1/topics/orders"), 404, /does not host|unknown/i, "delete twice");
    assert.deepEqual((await call(u, "GET", "/v1/topics")).body.map((t: Json) => t.name), ["plain"]);
  });
});

test("admin: topic deletion refused when delete.topic.enable is false", async () => {
  await withAdminBroker({ "delete.topic.enable": "false" }, async (b) => {
    assert.equal((await call(b.adminUrl, "POST", "/v1/topics", { name: "keep" })).status, 201);
    assertError(await call(b.adminUrl, "DELETE", "/v1/topics/keep"), 403, /delete\.topic\.enable/, "deletion disabled");
    assert.equal((await call(b.adminUrl, "GET", "/v1/topics/keep")).status, 200);
  });
});

test("admin: topic config through IncrementalAlterConfigs' code path: set, append, delete, validate_only, refusals", async () => {
  await withAdminBroker({}, async (b) => {
    const u = b.adminUrl;
    assert.equal((await call(u, "POST", "/v1/topics", { name: "cfg" })).status, 201);
    const entry = (a: Answer, key: string) => a.body.configs.find((e: Json) => e.name === key);
    const before = await call(u, "GET", "/v1/topics/cfg/config");
    assert.equal(before.status, 200);
    assert.equal(before.body.topic, "cfg");
    assert.deepEqual(entry(before, "retention.ms"), { name: "retention.ms", value: "604800000", source: "DEFAULT_CONFIG", read_only: false, sensitive: false });

    const set = await call(u, "PUT", "/v1/topics/cfg/config", { set: { "retention.ms": "1000" }, append: { "cleanup.policy": "compact" } });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.deepEqual(entry(set, "retention.ms"), { name: "retention.ms", value: "1000", source: "TOPIC_CONFIG", read_only: false, sensitive: false });
    assert.equal(entry(set, "cleanup.policy").value, "delete,compact", "APPEND starts from the effective value");
    // The same overrides the Kafka APIs read: the registry's /config/topics/cfg.
    const session = b.registrySession();
    const stored = JSON.parse(new TextDecoder().decode((await session.getData("/config/topics/cfg")).data));
    assert.deepEqual(stored.config, { "retention.ms": "1000", "cleanup.policy": "delete,compact" });

    const dry = await call(u, "PUT", "/v1/topics/cfg/config", { set: { "retention.ms": "5" }, validate_only: true });
    assert.equal(dry.status, 200);
    assert.equal(dry.body.validate_only, true);
    assert.equal(entry(dry, "retention.ms").value, "1000", "validate_only changes nothing");

    const back = await call(u, "PUT", "/v1/topics/cfg/config", { delete: ["retention.ms"], subtract: { "cleanup.policy": "compact" } });
    assert.equal(back.status, 200);
    assert.equal(entry(back, "retention.ms").source, "DEFAULT_CONFIG");
    assert.equal(entry(back, "cleanup.policy").value, "delete");

    assertError(await call(u, "PUT", "/v1/topics/cfg/config", { set: { "retention.ms": "soon" } }), 400, /retention\.ms/, "bad value");
    assertError(await call(u, "PUT", "/v1/topics/cfg/config", { set: { "retention.ms": "1" }, delete: ["retention.ms"] }), 400, /more than one operation/, "one key twice");
    assertError(await call(u, "PUT", "/v1/topics/cfg/config", { append: { "retention.ms": "1" } }), 400, /not allowed/, "append to a non-list");
    assertError(await call(u, "PUT", "/v1/topics/cfg/config", { upsert: {} }), 400, /unknown field upsert/, "unknown field");
    assertError(await call(u, "PUT", "/v1/topics/cfg/config", { set: { "retention.ms": "1" }, validate_only: "yes" }), 400, /validate_only/, "validate_only type");
    assertError(await call(u, "PUT", "/v1/topics/ghost/config", { set: { "retention.ms": "1" } }), 404, /ghost/, "unknown topic");
    assertError(await call(u, "GET", "/v1/topics/ghost/config"), 404, /unknown topic ghost/, "config of unknown topic");
    await session.close();
  });
});

test("admin: broker config: GET shows each value's source; PUT sets and deletes dynamic log defaults per broker or cluster; refusals", async () => {
  await withAdminBroker({ "num.partitions": "4", "log.segment.bytes": "50000000", "admin.auth.token": "tok-1" }, async (b) => {
    const u = b.adminUrl;
    const got = await call(u, "GET", "/v1/config");
    assert.equal(got.status, 200);
    assert.equal(got.body.broker_id, 0);
    assert.deepEqual(got.body.dynamic, { broker: {}, cluster: {} });
    const entryOf = (a: Answer, name: string) => a.body.configs.find((e: Json) => e.name === name);
    assert.deepEqual(entryOf(got, "num.partitions"), { name: "num.partitions", value: "4", source: "STATIC_BROKER_CONFIG", read_only: true, sensitive: false });
    assert.deepEqual(entryOf(got, "admin.auth.token"), { name: "admin.auth.token", value: null, source: "STATIC_BROKER_CONFIG", read_only: true, sensitive: true }, "the token is never shown");
    assert.deepEqual(entryOf(got, "log.segment.bytes"), { name: "log.segment.bytes", value: "50000000", source: "STATIC_BROKER_CONFIG", read_only: false, sensitive: false });
    assert.deepEqual(entryOf(got, "log.retention.bytes"), { name: "log.retention.bytes", value: "-1", source: "DEFAULT_CONFIG", read_only: false, sensitive: false });

    // The bearer token rules are unchanged: no token, wrong token.
    assertError(await call(u, "PUT", "/v1/config", { set: { "log.retention.bytes": "1000" } }), 401, /Bearer/, "no token");
    assertError(await call(u, "PUT", "/v1/config", { set: { "log.retention.bytes": "1000" } }, { authorization: "Bearer nope" }), 401, /wrong token/, "wrong token");
    const auth = { authorization: "Bearer tok-1" };

    // Cluster-wide, then this broker's own value over it.
    const cluster = await call(u, "PUT", "/v1/config", { scope: "cluster", set: { "log.retention.bytes": "1000", "log.segment.bytes": "2000000" } }, auth);
    assert.equal(cluster.status, 200, JSON.stringify(cluster.body));
    assert.equal(cluster.body.scope, "cluster");
    assert.deepEqual(cluster.body.dynamic, { broker: {}, cluster: { "log.retention.bytes": "1000", "log.segment.bytes": "2000000" } });
    assert.equal(entryOf(cluster, "log.segment.bytes").source, "DYNAMIC_DEFAULT_BROKER_CONFIG");
    assert.equal(entryOf(cluster, "log.segment.bytes").value, "2000000");
    const mine = await call(u, "PUT", "/v1/config", { set: { "log.segment.bytes": "3000000" } }, auth);
    assert.equal(mine.status, 200, JSON.stringify(mine.body));
    assert.equal(mine.body.scope, "broker");
    assert.deepEqual([entryOf(mine, "log.segment.bytes").value, entryOf(mine, "log.segment.bytes").source], ["3000000", "DYNAMIC_BROKER_CONFIG"]);
    assert.deepEqual([entryOf(mine, "log.retention.bytes").value, entryOf(mine, "log.retention.bytes").source], ["1000", "DYNAMIC_DEFAULT_BROKER_CONFIG"]);
    const reg = b.registrySession();
    const node = JSON.parse(new TextDecoder().decode((await reg.getData("/config/brokers/0")).data));
    assert.deepEqual(node, { version: 1, config: { "log.segment.bytes": "3000000" } }, "stored as Kafka stores it");
    const dflt = JSON.parse(new TextDecoder().decode((await reg.getData("/config/brokers/<default>")).data));
    assert.deepEqual(dflt.config, { "log.retention.bytes": "1000", "log.segment.bytes": "2000000" });
    await reg.close();

    // validate_only changes nothing; delete goes back to the next level.
    const dry = await call(u, "PUT", "/v1/config", { set: { "log.segment.bytes": "4000000" }, validate_only: true }, auth);
    assert.equal(dry.status, 200);
    assert.equal(entryOf(dry, "log.segment.bytes").value, "3000000");
    const del = await call(u, "PUT", "/v1/config", { delete: ["log.segment.bytes"] }, auth);
    assert.deepEqual([entryOf(del, "log.segment.bytes").value, entryOf(del, "log.segment.bytes").source], ["2000000", "DYNAMIC_DEFAULT_BROKER_CONFIG"]);
    const delAll = await call(u, "PUT", "/v1/config", { scope: "cluster", delete: ["log.segment.bytes", "log.retention.bytes"] }, auth);
    assert.deepEqual([entryOf(delAll, "log.segment.bytes").value, entryOf(delAll, "log.segment.bytes").source], ["50000000", "STATIC_BROKER_CONFIG"]);
    assert.deepEqual(delAll.body.dynamic, { broker: {}, cluster: {} });

    // Refusals name the key.
    assertError(await call(u, "PUT", "/v1/config", { set: { "num.partitions": "8" } }, auth), 400, /Cannot update these configs dynamically: Set\(num\.partitions\)/, "a read-only key");
    assertError(await call(u, "PUT", "/v1/config", { set: { "log.retention.hours": "1" } }, auth), 400, /log\.retention\.hours/, "hours are read-only, as in Kafka");
    assertError(await call(u, "PUT", "/v1/config", { set: { "log.segment.bytes": "big" } }, auth), 400, /log\.segment\.bytes/, "a bad value");
    assertError(await call(u, "PUT", "/v1/config", { set: { "log.segment.bytes": "10" } }, auth), 400, /log\.segment\.bytes/, "below the minimum");
    assertError(await call(u, "PUT", "/v1/config", { append: { "log.segment.bytes": "1" } }, auth), 400, /not allowed/, "append to a non-list");
    assertError(await call(u, "PUT", "/v1/config", { scope: "everywhere", set: {} }, auth), 400, /scope/, "unknown scope");
    assertError(await call(u, "PUT", "/v1/config", { upsert: {} }, auth), 400, /unknown field upsert/, "unknown field");
    const after = await call(u, "GET", "/v1/config");
    assert.deepEqual(after.body.dynamic, { broker: {}, cluster: {} }, "nothing refused was stored");
    const list = await call(u, "PUT", "/v1/config", { append: { "log.cleanup.policy": "compact" } }, auth);
    assert.equal(list.status, 200, JSON.stringify(list.body));
    assert.equal(entryOf(list, "log.cleanup.policy").value, "delete,compact");
  });
});

test("admin: groups: list, and one group's members, decoded assignment, committed offsets and lag", async () => {
  await withAdminBroker(GROUPS, async (b) => {
    const u = b.adminUrl;
    assert.equal((await call(u, "POST", "/v1/topics", { name: "events", partitions: 2 })).status, 201);
    const c = await WireClient.connect(b.port);
    const m = await RawMember.connect(b.port, "readers", { protocols: [{ name: "range", metadata: subscriptionV0(["events"]) }] });
    try {
      assert.equal((await produce(c, "events", 0, buildBatch(valueRecords(10)))).errorCode, 0);
      assert.equal((await produce(c, "events", 1, buildBatch(valueRecords(4)))).errorCode, 0);
      await findCoordinator(c, "readers");
      await m.join();
      assert.equal(await m.syncAsLeader((ids) => ({ [ids[0]]: assignmentV0({ events: [1, 0] }) })), 0);
      assert.deepEqual(await m.commit({ events: { 0: 3n, 1: 4n } }), [0, 0]);

      assert.deepEqual((await call(u, "GET", "/v1/groups")).body, [{ group_id: "readers", state: "Stable", protocol_type: "consumer" }]);
      const g = await call(u, "GET", "/v1/groups/readers");
      assert.equal(g.status, 200, JSON.stringify(g.body));
      assert.equal(g.body.group_id, "readers");
      assert.equal(g.body.state, "Stable");
      assert.equal(g.body.protocol, "range");
      assert.equal(g.body.coordinator_id, 0);
      assert.equal(g.body.members.length, 1);
      const member = g.body.members[0];
      assert.equal(member.member_id, m.memberId);
      assert.deepEqual(member.subscription, { topics: ["events"] });
      assert.deepEqual(member.assignment, [{ topic: "events", partitions: [0, 1] }]);
      assert.deepEqual(g.body.offsets, [
        { topic: "events", partition: 0, committed_offset: 3, metadata: "", high_watermark: 10, lag: 7 },
        { topic: "events", partition: 1, committed_offset: 4, metadata: "", high_watermark: 4, lag: 0 },
      ]);
      assert.equal(g.body.total_lag, 7);

      assertError(await call(u, "GET", "/v1/groups/nobody"), 404, /unknown group nobody/, "unknown group");
    } finally {
      m.close();
      c.close();
    }
  });
});

test("admin: elect-leader: the preferred leader already leads; unknown partitions are 404", async () => {
  await withAdminBroker({}, async (b) => {
    const u = b.adminUrl;
    assert.equal((await call(u, "POST", "/v1/topics", { name: "el", partitions: 2 })).status, 201);
    const r = await call(u, "POST", "/v1/partitions/el/1/elect-leader");
    assert.deepEqual([r.status, r.body], [200, { topic: "el", partition: 1, preferred_leader: 0, leader: 0, result: "ELECTION_NOT_NEEDED" }]);
    assertError(await call(u, "POST", "/v1/partitions/el/2/elect-leader"), 404, /unknown partition el-2/, "partition past the count");
    assertError(await call(u, "POST", "/v1/partitions/el/x/elect-leader"), 404, /unknown partition el-x/, "not a number");
    assertError(await call(u, "POST", "/v1/partitions/none/0/elect-leader"), 404, /unknown topic none/, "unknown topic");
  });
});

test("admin: log level: set at run time through the setter; unknown levels are 400; no setter is 501", async () => {
  await withAdminBroker({}, async (b) => {
    const ok = await call(b.adminUrl, "PUT", "/v1/log-level", { level: "debug" });
    assert.deepEqual([ok.status, ok.body], [200, { level: "debug" }]);
    assert.deepEqual(b.logLevelsSet, ["debug"]);
    assertError(await call(b.adminUrl, "PUT", "/v1/log-level", { level: "loud" }), 400, /level must be one of/, "unknown level");
    assertError(await call(b.adminUrl, "PUT", "/v1/log-level", {}), 400, /level/, "no level");
    assert.deepEqual(b.logLevelsSet, ["debug"]);
  });
  const platform = await loadPlatform();
  const { config } = parseBrokerConfig(new Map([["admin.listeners", "http://127.0.0.1:0"]]));
  const admin = await AdminServer.start(platform, config, { logger: silentLogger });
  try {
    const r = await call(`http://127.0.0.1:${admin.addresses[0].port}`, "PUT", "/v1/log-level", { level: "info" });
    assertError(r, 501, /cannot change its level/, "no setter");
  } finally {
    await admin.close();
  }
});

test("admin: with a token, changes need Authorization: Bearer <token>; reads stay open", async () => {
  await withAdminBroker({ "admin.auth.token": "s3cret-Token_1" }, async (b) => {
    const u = b.adminUrl;
    const none = await call(u, "POST", "/v1/topics", { name: "guarded" });
    assertError(none, 401, /needs Authorization: Bearer/, "no token");
    assert.match(none.headers.get("www-authenticate") ?? "", /^Bearer /);
    assertError(await call(u, "POST", "/v1/topics", { name: "guarded" }, { authorization: "Bearer wrong" }), 401, /wrong token/, "wrong token");
    assertError(await call(u, "POST", "/v1/topics", { name: "guarded" }, { authorization: "Basic czNjcmV0" }), 400, /not a bearer token/, "not bearer");
    assertError(await call(u, "DELETE", "/v1/topics/guarded", undefined, { authorization: "Bearer s3cret-Token_" }), 401, /wrong token/, "a prefix of the token");
    assertError(await call(u, "PUT", "/v1/log-level", { level: "debug" }), 401, /Bearer/, "log level without token");
    assertError(await call(u, "POST", "/v1/partitions/x/0/elect-leader"), 401, /Bearer/, "elect without token");
    assert.deepEqual((await call(u, "GET", "/v1/topics")).body, [], "nothing was created");
    assert.equal((await call(u, "GET", "/metrics")).status, 200, "reads need no token");
    const good = await call(u, "POST", "/v1/topics", { name: "guarded" }, { authorization: "Bearer s3cret-Token_1" });
    assert.equal(good.status, 201);
    const del = await call(u, "DELETE", "/v1/topics/guarded", undefined, { authorization: "bearer s3cret-Token_1" });
    assert.equal(del.status, 200, "the scheme is case-insensitive");
  });
});

test("admin: the token from admin.auth.token.file; a missing or empty file stops start-up", async () => {
  const dir = tempDir();
  try {
    const file = join(dir, "admin.token");
    writeFileSync(file, "from-a-file\n");
    await withAdminBroker({ "admin.auth.token.file": file }, async (b) => {
      assert.equal((await call(b.adminUrl, "POST", "/v1/topics", { name: "f" })).status, 401);
      assert.equal((await call(b.adminUrl, "POST", "/v1/topics", { name: "f" }, { authorization: "Bearer from-a-file" })).status, 201);
    });
    const platform = await loadPlatform();
    const startWith = (raw: [string, string][]) => AdminServer.start(platform, parseBrokerConfig(new Map([["admin.listeners", "http://127.0.0.1:0"], ...raw])).config, { logger: silentLogger });
    await assert.rejects(startWith([["admin.auth.token.file", join(dir, "absent")]]), (e: Error) => e instanceof AdminStartupError && /admin\.auth\.token\.file: .*absent does not exist/.test(e.message));
    writeFileSync(join(dir, "empty"), " \n");
    await assert.rejects(startWith([["admin.auth.token.file", join(dir, "empty")]]), /admin\.auth\.token\.file: .* is empty/);
    await assert.rejects(startWith([["admin.auth.token", "has space"]]), /admin\.auth\.token: a bearer token/);
    assert.throws(() => parseBrokerConfig(new Map([["admin.auth.token", "a"], ["admin.auth.token.file", file]])), (e: Error) => e instanceof ConfigError && e.key === "admin.auth.token.file");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("admin: without a token, a listener beyond loopback refuses changes (403) and still serves reads", async () => {
  await withAdminBroker({ "admin.listeners": "http://0.0.0.0:0" }, async (b) => {
    const u = `http://127.0.0.1:${b.admin!.addresses[0].port}`;
    assertError(await call(u, "POST", "/v1/topics", { name: "open" }), 403, /not loopback-only and no admin\.auth\.token/, "create");
    assertError(await call(u, "PUT", "/v1/log-level", { level: "debug" }), 403, /admin\.auth\.token/, "log level");
    assert.equal((await call(u, "GET", "/v1/topics")).status, 200);
    assert.equal((await call(u, "GET", "/v1/status/ready")).status, 200);
  });
});

test("admin: admin.listeners: parsing, loopback detection, '' turns it off, a busy port stops start-up", async () => {
  assert.deepEqual(parseAdminListener("http://127.0.0.1:9644"), { host: "127.0.0.1", port: 9644 });
  assert.deepEqual(parseAdminListener("http://[::1]:80/"), { host: "::1", port: 80 });
  assert.deepEqual(parseAdminListener("https://h:1"), { host: "h", port: 1, tls: true }, "https: see test/admin/https.test.ts");
  assert.equal(parseAdminListener("http://h:70000"), null);
  assert.equal(parseAdminListener("h:1"), null);
  assert.deepEqual(parseBrokerConfig(new Map()).config.adminListeners, [{ host: "127.0.0.1", port: 9644 }], "the default");
  assert.throws(() => parseBrokerConfig(new Map([["admin.listeners", "PLAINTEXT://h:1"]])), /admin\.listeners/);
  for (const h of ["127.0.0.1", "127.1.2.3", "::1", "localhost"]) assert.ok(isLoopbackHost(h), h);
  for (const h of ["0.0.0.0", "10.0.0.1", "::", "example.com"]) assert.ok(!isLoopbackHost(h), h);

  const platform = await loadPlatform();
  const off = await AdminServer.start(platform, parseBrokerConfig(new Map([["admin.listeners", ""]])).config, { logger: silentLogger });
  assert.deepEqual(off.addresses, []);
  await off.close();

  const first = await AdminServer.start(platform, parseBrokerConfig(new Map([["admin.listeners", "http://127.0.0.1:0"]])).config, { logger: silentLogger });
  try {
    const port = first.addresses[0].port;
    const busy = parseBrokerConfig(new Map([["admin.listeners", `http://127.0.0.1:0,http://127.0.0.1:${port}`]])).config;
    await assert.rejects(AdminServer.start(platform, busy, { logger: silentLogger }), (e: Error) => e instanceof AdminStartupError && e.message.includes(`admin.listeners: cannot listen on http://127.0.0.1:${port}`));
    assert.equal((await call(`http://127.0.0.1:${port}`, "GET", "/v1/status/live")).status, 200, "the first server is untouched");
  } finally {
    await first.close();
  }
});
