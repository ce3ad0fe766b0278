// Client quotas' configuration (src/broker/quota_config.ts): Kafka's 8-level precedence, the
// sampled rate and throttle time, entity paths sanitized as Kafka's Sanitizer does,
// DescribeClientQuotas / AlterClientQuotas over the wire (v0 and v1: round trip, filters,
// validation refused whole with INVALID_REQUEST), and, with real ZooKeeper, the znodes in Kafka's
// layout, with a user's SCRAM credentials and quotas each surviving a change of the other.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ClientQuotas,
  parseQuotaEntityPath,
  type QuotaEntity,
  quotaEntityPath,
  type RequestContext,
  resolveQuota,
  SampledRate,
} from "../../src/broker/mod.ts";
import { AlterClientQuotasApi, DescribeClientQuotasApi } from "../../src/protocol/api/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { ConfigEntityChangeNotificationZNode, ConfigEntityZNode, type Registry } from "../../src/registry/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { recordingLogger } from "../helpers/faulty_platform.ts";
import { alterScram, saslLogin, scramUpsertion } from "../helpers/sasl.ts";
import { WireClient } from "../helpers/wire.ts";
import { sharedZooKeeper, skipUnlessZooKeeper } from "../helpers/zookeeper.ts";

type E = { entityType: string; entityName: string | null };
const user = (n: string | null): E => ({ entityType: "user", entityName: n });
const client = (n: string | null): E => ({ entityType: "client-id", entityName: n });
const set = (key: string, value: number) => ({ key, value, remove: false });
const remove = (key: string) => ({ key, value: 0, remove: true });

test("quota precedence: Kafka's 8 levels, first match wins, with the tags usage is counted under", () => {
  const levels: [QuotaEntity, number][] = [
    [{ user: "alice", clientId: "app" }, 1],
    [{ user: "alice", clientId: null }, 2],
    [{ user: "alice" }, 3],
    [{ user: null, clientId: "app" }, 4],
    [{ user: null, clientId: null }, 5],
    [{ user: null }, 6],
    [{ clientId: "app" }, 7],
    [{ clientId: null }, 8],
  ];
  const key = (e: QuotaEntity) => JSON.stringify([e.user === undefined ? "absent" : e.user, e.clientId === undefined ? "absent" : e.clientId]);
  const tags: Record<number, [string, string]> = {
    1: ["alice", "app"], 2: ["alice", "app"], 3: ["alice", ""], 4: ["alice", "app"],
    5: ["alice", "app"], 6: ["alice", ""], 7: ["", "app"], 8: ["", "app"],
  };
  // Remove the levels one by one from the top: each time the next level applies.
  for (let from = 0; from < levels.length; from++) {
    const stored = new Map(levels.slice(from).map(([e, v]) => [key(e), v]));
    const r = resolveQuota((e) => stored.get(key(e)), "alice", "app");
    const level = from + 1;
    assert.deepEqual(r, { bound: level, user: tags[level][0], clientId: tags[level][1] }, `level ${level}`);
  }
  assert.equal(resolveQuota(() => undefined, "alice", "app"), null);
  // Another user's and another client's quotas do not apply.
  const other = new Map([[key({ user: "bob" }), 1], [key({ clientId: "other" }), 2], [key({ user: "bob", clientId: "app" }), 3]]);
  assert.equal(resolveQuota((e) => other.get(key(e)), "alice", "app"), null);
  // A user-level quota beats a more specific client-id one (users come first).
  const mixed = new Map([[key({ user: null }), 6], [key({ clientId: "app" }), 7]]);
  assert.equal(resolveQuota((e) => mixed.get(key(e)), "alice", "app")!.bound, 6);
});

test("quota rate: Kafka's sampled Rate never divides by less than (samples - 1) windows; old samples expire", () => {
  const r = new SampledRate(11, 1000, 0);
  r.record(10_000, 0);
  assert.equal(r.windowSizeMs(0), 10_000);
  assert.equal(r.rate(0), 1000);
  for (let t = 1000; t <= 20_000; t += 1000) r.record(1000, t);
  // 11 samples of 1000 bytes cover 10 s + the current one: the first burst has expired.
  assert.equal(r.windowSizeMs(20_000), 10_000);
  assert.equal(r.rate(20_000), 1100);
  assert.equal(r.rate(40_000), 0);
});

test("quota entity paths: sanitized as Kafka's Sanitizer, <default> for defaults, parsed back", () => {
  const cases: [QuotaEntity, string][] = [
    [{ user: "alice" }, "users/alice"],
    [{ user: null }, "users/<default>"],
    [{ clientId: "my app*" }, "clients/my%20app%2A"],
    [{ user: "CN=x,O=y", clientId: null }, "users/CN%3Dx%2CO%3Dy/clients/<default>"],
    [{ user: "<default>" }, "users/%3Cdefault%3E"],
    [{ user: "bad", clientId: "-" }, "users/bad/clients/-"],
  ];
  for (const [e, path] of cases) {
    assert.equal(quotaEntityPath(e), path);
    assert.deepEqual(parseQuotaEntityPath(path), e);
  }
  assert.equal(parseQuotaEntityPath("topics/t"), null);
  assert.equal(parseQuotaEntityPath("users/a/ips/x"), null);
  assert.equal(parseQuotaEntityPath("users/%E0%A4%A"), null);
});

async function alter(c: WireClient, version: number, entries: { entity: E[]; ops: ReturnType<typeof set>[] }[], validateOnly = false) {
  const r = await c.request(AlterClientQuotasApi, version, { entries, validateOnly });
  return r.entries as { errorCode: number; errorMessage: string | null; entity: E[] }[];
}

async function describe(c: WireClient, version: number, components: { entityType: string; matchType: number; match: string | null }[], strict = false) {
  const r = await c.request(DescribeClientQuotasApi, version, { components, strict });
  const entries = (r.entries as Struct[] | null)?.map((e) => ({
    entity: Object.fromEntries((e.entity as E[]).map((p) => [p.entityType, p.entityName])),
    values: Object.fromEntries((e.values as { key: string; value: number }[]).map((v) => [v.key, v.value])),
  }));
  const sorted = entries?.sort((a, b) => JSON.stringify(a.entity).localeCompare(JSON.stringify(b.entity))) ?? null;
  return { errorCode: r.errorCode as number, errorMessage: r.errorMessage as string | null, entries: sorted };
}

test("AlterClientQuotas / DescribeClientQuotas: round trip over the wire, v0 and v1, filters as KIP-546", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    for (const version of [0, 1]) {
      const r = await alter(c, version, [
        { entity: [user("alice")], ops: [set("producer_byte_rate", 1048576), set("request_percentage", 25.5)] },
        { entity: [user("alice"), client("app")], ops: [set("consumer_byte_rate", 2048)] },
        { entity: [client(null)], ops: [set("producer_byte_rate", 4096)] },
        { entity: [user(null)], ops: [set("consumer_byte_rate", 8192)] },
      ]);
      assert.deepEqual(r.map((e) => [e.errorCode, e.errorMessage]), [[0, null], [0, null], [0, null], [0, null]], `v${version}`);
      assert.deepEqual(r[1].entity, [user("alice"), client("app")]);
      const all = await describe(c, version, []);
      assert.equal(all.errorCode, ErrorCode.NONE);
      assert.deepEqual(all.entries, [
        { entity: { "client-id": null }, values: { producer_byte_rate: 4096 } },
        { entity: { user: "alice", "client-id": "app" }, values: { consumer_byte_rate: 2048 } },
        { entity: { user: "alice" }, values: { producer_byte_rate: 1048576, request_percentage: 25.5 } },
        { entity: { user: null }, values: { consumer_byte_rate: 8192 } },
      ]);
      // Exact user, strict: only the user's own entity; not strict: its user+client entity too.
      assert.deepEqual((await describe(c, version, [{ entityType: "user", matchType: 0, match: "alice" }], true)).entries!.map((e) => e.entity), [{ user: "alice" }]);
      assert.deepEqual((await describe(c, version, [{ entityType: "user", matchType: 0, match: "alice" }])).entries!.map((e) => e.entity), [
        { user: "alice", "client-id": "app" },
        { user: "alice" },
      ]);
      // Default user; any client id (which includes the default).
      assert.deepEqual((await describe(c, version, [{ entityType: "user", matchType: 1, match: null }])).entries!.map((e) => e.entity), [{ user: null }]);
      assert.deepEqual((await describe(c, version, [{ entityType: "client-id", matchType: 2, match: null }], true)).entries!.map((e) => e.entity), [{ "client-id": null }]);
      // Removing every key: the entity is no longer described.
      const removed = await alter(c, version, [
        { entity: [user("alice")], ops: [remove("producer_byte_rate"), remove("request_percentage")] },
        { entity: [user("alice"), client("app")], ops: [remove("consumer_byte_rate")] },
        { entity: [client(null)], ops: [remove("producer_byte_rate")] },
        { entity: [user(null)], ops: [remove("consumer_byte_rate")] },
      ]);
      assert.ok(removed.every((e) => e.errorCode === 0));
      assert.deepEqual((await describe(c, version, [])).entries, []);
    }
  } finally {
    c.close();
    await b.stop();
  }
});

test("AlterClientQuotas: removing a key that is not set succeeds, as Kafka allows (on an entity with other keys, on one with none, on the ip entity); the keys set stay", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    const ip = (n: string | null): E => ({ entityType: "ip", entityName: n });
    assert.deepEqual((await alter(c, 1, [{ entity: [user("carol")], ops: [set("producer_byte_rate", 5000)] }])).map((e) => e.errorCode), [0]);
    for (const version of [0, 1]) {
      const r = await alter(c, version, [
        { entity: [user("carol")], ops: [remove("consumer_byte_rate"), remove("request_percentage")] },
        { entity: [user("nobody")], ops: [remove("producer_byte_rate")] },
        { entity: [user("nobody"), client("app")], ops: [remove("consumer_byte_rate")] },
        { entity: [client(null)], ops: [remove("request_percentage")] },
        { entity: [ip("10.1.2.3")], ops: [remove("connection_creation_rate")] },
      ]);
      assert.deepEqual(r.map((e) => [e.errorCode, e.errorMessage]), [[0, null], [0, null], [0, null], [0, null], [0, null]], `v${version}`);
    }
    assert.deepEqual((await describe(c, 1, [])).entries, [{ entity: { user: "carol" }, values: { producer_byte_rate: 5000 } }]);
    // Validate-only answers the same.
    assert.deepEqual((await alter(c, 1, [{ entity: [user("nobody")], ops: [remove("producer_byte_rate")] }], true)).map((e) => e.errorCode), [0]);
  } finally {
    c.close();
    await b.stop();
  }
});

test("a quota-only change of a user does not log \"SCRAM credentials changed\"; a credential change still does", async () => {
  const logger = recordingLogger();
  const b = await startBroker({}, undefined, logger);
  const c = await WireClient.connect(b.port);
  try {
    const scramLines = () => logger.lines.filter((l) => l.msg === "SCRAM credentials changed");
    const quotaLine = (entity: string) => logger.lines.some((l) => l.msg === "client quotas changed" && l.fields.entity === entity);
    assert.deepEqual((await alterScram(c, [await scramUpsertion("alice", "SCRAM-SHA-256", "alice-secret")])).map((r) => r.errorCode), [0]);
    await eventually("the credential change is logged", () => scramLines().length === 1);
    assert.deepEqual((await alter(c, 1, [{ entity: [user("alice")], ops: [set("producer_byte_rate", 1024)] }])).map((e) => e.errorCode), [0]);
    // Notifications are handled in order: once a later one is handled, alice's has been too.
    assert.deepEqual((await alter(c, 1, [{ entity: [client("marker")], ops: [set("producer_byte_rate", 1)] }])).map((e) => e.errorCode), [0]);
    await eventually("the quota changes are applied", () => quotaLine("users/alice") && quotaLine("clients/marker"));
    assert.equal(scramLines().length, 1, "the quota change of alice said nothing of her credentials");
    assert.deepEqual((await alterScram(c, [await scramUpsertion("alice", "SCRAM-SHA-256", "new-secret")])).map((r) => r.errorCode), [0]);
    await eventually("a new credential is logged again", () => scramLines().length === 2);
  } finally {
    c.close();
    await b.stop();
  }
});

test("AlterClientQuotas: invalid entries are refused whole with INVALID_REQUEST and a message; validate_only writes nothing", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    const bad: [{ entity: E[]; ops: ReturnType<typeof set>[] }, RegExp][] = [
      [{ entity: [user("a")], ops: [set("no_such_key", 1)] }, /Invalid configuration key no_such_key/],
      [{ entity: [user("a")], ops: [set("producer_byte_rate", -5)] }, /must be positive/],
      [{ entity: [user("a")], ops: [set("producer_byte_rate", NaN)] }, /finite/],
      [{ entity: [user("a")], ops: [set("consumer_byte_rate", 1.5)] }, /LONG/],
      [{ entity: [user("a")], ops: [set("request_percentage", Infinity)] }, /finite/],
      [{ entity: [], ops: [set("producer_byte_rate", 1)] }, /empty client quota entity/],
      [{ entity: [user("")], ops: [set("producer_byte_rate", 1)] }, /Empty user/],
      [{ entity: [user("a"), user("b")], ops: [set("producer_byte_rate", 1)] }, /Duplicate user/],
      [{ entity: [{ entityType: "topic", entityName: "t" }], ops: [set("producer_byte_rate", 1)] }, /Unhandled client quota entity type: topic/],
      [{ entity: [user("a")], ops: [set("producer_byte_rate", 1), remove("producer_byte_rate")] }, /Duplicate quota key/],
      // One good key beside a bad one: nothing of the entry is applied.
      [{ entity: [user("a")], ops: [set("consumer_byte_rate", 100), set("bogus", 1)] }, /Invalid configuration key bogus/],
    ];
    for (const version of [0, 1]) {
      const r = await alter(c, version, bad.map(([e]) => e));
      r.forEach((e, i) => {
        assert.equal(e.errorCode, ErrorCode.INVALID_REQUEST, `entry ${i}`);
        assert.match(e.errorMessage ?? "", bad[i][1], `entry ${i}`);
      });
    }
    const v = await alter(c, 1, [{ entity: [user("a")], ops: [set("producer_byte_rate", 1000)] }], true);
    assert.deepEqual(v.map((e) => e.errorCode), [0]);
    assert.deepEqual((await describe(c, 1, [])).entries, [], "validate_only and refused entries wrote nothing");
    const reg = b.registrySession();
    try {
      assert.equal(await reg.exists("/config/users/a"), null);
    } finally {
      await reg.close();
    }
    // Filters Kafka refuses.
    const dup = await describe(c, 1, [{ entityType: "user", matchType: 2, match: null }, { entityType: "user", matchType: 1, match: null }]);
    assert.equal(dup.errorCode, ErrorCode.INVALID_REQUEST);
    assert.equal(dup.entries, null);
    assert.equal((await describe(c, 1, [{ entityType: "", matchType: 2, match: null }])).errorCode, ErrorCode.INVALID_REQUEST);
    assert.equal((await describe(c, 1, [{ entityType: "user", matchType: 7, match: null }])).errorCode, ErrorCode.INVALID_REQUEST);
    assert.equal((await describe(c, 0, [{ entityType: "group", matchType: 2, match: null }])).errorCode, ErrorCode.UNSUPPORTED_VERSION);
  } finally {
    c.close();
    await b.stop();
  }
});

async function nodeConfig(reg: Registry, path: string): Promise<Record<string, string> | null> {
  const s = await reg.exists(path);
  if (s === null) return null;
  const { data } = await reg.getData(path);
  const raw = JSON.parse(new TextDecoder().decode(data));
  assert.equal(raw.version, 1, `${path} carries {"version":1,...}`);
  return Object.fromEntries(ConfigEntityZNode.decode(data)!);
}

async function eventually(what: string, cond: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const zk = sharedZooKeeper();
const zkSkip = skipUnlessZooKeeper();

test("with ZooKeeper: quotas in Kafka's layout and notifications; SCRAM credentials and quotas of one user survive each other's changes", { skip: zkSkip }, async () => {
  const server = await zk.get();
  const connect = `${server.connectString}/quota-${Date.now()}`;
  const b: TestBroker = await startBroker({
    "zookeeper.connect": connect,
    "zookeeper.session.timeout.ms": "6000",
    listeners: "SASL_PLAINTEXT://127.0.0.1:0",
    "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
    "sasl.mechanism.inter.broker.protocol": "PLAIN",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config":
      'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret";',
  });
  const c = await WireClient.connect(b.port);
  const reg = b.broker.services.registry;
  try {
    assert.equal((await saslLogin(c, "PLAIN", "admin", "admin-secret")).errorCode, 0);
    const scram = await alterScram(c, [await scramUpsertion("alice", "SCRAM-SHA-256", "alice-secret")]);
    assert.deepEqual(scram.map((r) => r.errorCode), [0]);
    const r = await alter(c, 1, [
      { entity: [user("alice")], ops: [set("producer_byte_rate", 1024)] },
      { entity: [user("alice"), client("app 1")], ops: [set("consumer_byte_rate", 2048)] },
      { entity: [user(null), client(null)], ops: [set("request_percentage", 50)] },
      { entity: [client("app*")], ops: [set("producer_byte_rate", 4096)] },
    ]);
    assert.deepEqual(r.map((e) => e.errorCode), [0, 0, 0, 0]);
    const alice = await nodeConfig(reg, "/config/users/alice");
    assert.equal(alice!.producer_byte_rate, "1024");
    assert.match(alice!["SCRAM-SHA-256"], /^salt=.*,stored_key=.*,server_key=.*,iterations=4096$/, "the quota change kept the SCRAM credential");
    assert.deepEqual(await nodeConfig(reg, "/config/users/alice/clients/app%201"), { consumer_byte_rate: "2048" });
    assert.deepEqual(await nodeConfig(reg, "/config/users/<default>/clients/<default>"), { request_percentage: "50" });
    assert.deepEqual(await nodeConfig(reg, "/config/clients/app%2A"), { producer_byte_rate: "4096" });
    // A notification per entity, version 2, naming its sanitized path.
    const notices = new Set<string>();
    for (const child of await reg.getChildren(ConfigEntityChangeNotificationZNode.path)) {
      assert.match(child, /^config_change_\d{10}$/);
      const { data } = await reg.getData(`${ConfigEntityChangeNotificationZNode.path}/${child}`);
      const js = JSON.parse(new TextDecoder().decode(data));
      assert.equal(js.version, 2);
      notices.add(js.entity_path);
    }
    for (const p of ["users/alice", "users/alice/clients/app%201", "users/<default>/clients/<default>", "clients/app%2A"]) assert.ok(notices.has(p), p);
    // A new SCRAM credential (and one deleted) keeps the user's quota.
    assert.deepEqual((await alterScram(c, [await scramUpsertion("alice", "SCRAM-SHA-256", "new-secret")])).map((x) => x.errorCode), [0]);
    assert.equal((await nodeConfig(reg, "/config/users/alice"))!.producer_byte_rate, "1024");
    // The broker picked up the change through the notification: alice logs in with the new password.
    await eventually("alice's new password works", async () => {
      const a = await WireClient.connect(b.port);
      try {
        return (await saslLogin(a, "SCRAM-SHA-256", "alice", "new-secret")).errorCode === 0;
      } finally {
        a.close();
      }
    });
    // Removing the quota keeps the credential, and alice can still log in.
    assert.deepEqual((await alter(c, 0, [{ entity: [user("alice")], ops: [remove("producer_byte_rate")] }])).map((e) => e.errorCode), [0]);
    const after = await nodeConfig(reg, "/config/users/alice");
    assert.equal(after!.producer_byte_rate, undefined);
    assert.ok(after!["SCRAM-SHA-256"] !== undefined);
    const a = await WireClient.connect(b.port);
    try {
      assert.equal((await saslLogin(a, "SCRAM-SHA-256", "alice", "new-secret")).errorCode, 0);
    } finally {
      a.close();
    }
    // The broker's quota store follows the notifications.
    const quotas = b.broker.clientQuotas!;
    await eventually("the store sees alice's client quota", () => quotas.fetch.active);
    const described = await describe(c, 1, [{ entityType: "user", matchType: 0, match: "alice" }]);
    assert.deepEqual(described.entries, [{ entity: { user: "alice", "client-id": "app 1" }, values: { consumer_byte_rate: 2048 } }]);
  } finally {
    c.close();
    await b.stop();
  }
});

test("with ZooKeeper, two brokers: a quota set through one broker is enforced by the other (change notification)", { skip: zkSkip }, async () => {
  const server = await zk.get();
  const connect = `${server.connectString}/quota2-${Date.now()}`;
  const b0 = await startBroker({ "broker.id": "0", "zookeeper.connect": connect, "zookeeper.session.timeout.ms": "6000" });
  let b1: TestBroker | null = null;
  const c = await WireClient.connect(b0.port);
  try {
    b1 = await startBroker({ "broker.id": "1", "zookeeper.connect": connect, "zookeeper.session.timeout.ms": "6000" });
    const r = await alter(c, 1, [{ entity: [user(null), client("app")], ops: [set("producer_byte_rate", 5000)] }]);
    assert.deepEqual(r.map((e) => e.errorCode), [0]);
    const store = b1.broker.clientQuotas!;
    await eventually("broker 1 applies the quota", () => store.produce.active);
    // Level 4 (default user, client app) for any user of client id app; nothing for other clients.
    let now = 0;
    // The store broker 1 enforces, probed on a clock of the test's own.
    const probe = new ClientQuotas(store.store, 11, 1, () => now);
    const ctx = (clientId: string) => ({
      header: { apiKey: 0, apiVersion: 9, correlationId: 1, clientId },
      version: 9,
      conn: { id: 1, listener: "PLAINTEXT", remote: "x:1", host: "x", principal: "User:carol" },
      supportedApis: () => [],
    }) as unknown as RequestContext;
    assert.equal(probe.throttle(ctx("other"), {}, {}, 1_000_000, 0, 0), 0);
    assert.ok(probe.throttle(ctx("app"), {}, {}, 1_000_000, 0, 0) > 0);
    now++;
    // Removed through broker 1: broker 0 stops enforcing it.
    const c1 = await WireClient.connect(b1.port);
    try {
      assert.deepEqual((await alter(c1, 0, [{ entity: [user(null), client("app")], ops: [remove("producer_byte_rate")] }])).map((e) => e.errorCode), [0]);
    } finally {
      c1.close();
    }
    await eventually("broker 0 drops the quota", () => !b0.broker.clientQuotas!.produce.active);
  } finally {
    c.close();
    await b1?.stop();
    await b0.stop();
  }
});

test("quotas: stop the shared ZooKeeper", async () => {
  await zk.stop();
});
