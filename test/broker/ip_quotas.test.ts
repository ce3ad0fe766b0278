// The ip quota (KIP-612): AlterClientQuotas / DescribeClientQuotas with the `ip` entity, validated
// as Kafka's ZkAdminManager validates it, stored at /config/ips/<ip> in Kafka's layout with its
// change notification, and enforced at accept: a connection that takes its address over
// connection_creation_rate is refused (held, unread, for the throttle time, then closed), counted
// in the refusals by reason, and the address is served again once the quota window has passed.
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseQuotaEntityPath, quotaEntityPath } from "../../src/broker/mod.ts";
import { canonicalIp } from "../../src/util/mod.ts";
import { IpConnectionRates } from "../../src/broker/ip_connection_rate.ts";
import { ipConnectionRatesMax } from "../../src/util/limits.ts";
import { AlterClientQuotasApi, ApiVersionsApi, DescribeClientQuotasApi } from "../../src/protocol/api/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { ConfigEntityChangeNotificationZNode, ConfigEntityZNode, type Registry } from "../../src/registry/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker } from "../helpers/broker.ts";
import { WireClient } from "../helpers/wire.ts";

type E = { entityType: string; entityName: string | null };
const ip = (n: string | null): E => ({ entityType: "ip", entityName: n });
const user = (n: string | null): E => ({ entityType: "user", entityName: n });
const client = (n: string | null): E => ({ entityType: "client-id", entityName: n });
const set = (key: string, value: number) => ({ key, value, remove: false });
const remove = (key: string) => ({ key, value: 0, remove: true });
const rate = "connection_creation_rate";

async function alter(c: WireClient, version: number, entries: { entity: E[]; ops: ReturnType<typeof set>[] }[], validateOnly = false) {
  const r = await c.request(AlterClientQuotasApi, version, { entries, validateOnly });
  return r.entries as { errorCode: number; errorMessage: string | null; entity: E[] }[];
}

async function describe(c: WireClient, components: { entityType: string; matchType: number; match: string | null }[], strict = false) {
  const r = await c.request(DescribeClientQuotasApi, 1, { components, strict });
  const entries = (r.entries as Struct[] | null)?.map((e) => ({
    entity: Object.fromEntries((e.entity as E[]).map((p) => [p.entityType, p.entityName])),
    values: Object.fromEntries((e.values as { key: string; value: number }[]).map((v) => [v.key, v.value])),
  }));
  const key = (e: { entity: unknown }) => JSON.stringify(e.entity);
  const sorted = entries?.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)) ?? null;
  return { errorCode: r.errorCode as number, errorMessage: r.errorMessage as string | null, entries: sorted };
}

async function nodeJson(reg: Registry, path: string): Promise<unknown> {
  if ((await reg.exists(path)) === null) return null;
  return JSON.parse(new TextDecoder().decode((await reg.getData(path)).data));
}

async function eventually(what: string, cond: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function served(port: number, open: WireClient[]): Promise<boolean> {
  let c: WireClient;
  try {
    c = await WireClient.connect(port);
  } catch {
    return false;
  }
  open.push(c);
  try {
    const av = await c.request(ApiVersionsApi, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" }, 10_000);
    return av.errorCode === 0;
  } catch {
    return false;
  }
}

test("ip addresses: one canonical form per address; ip entity paths in Kafka's layout", () => {
  const cases: [string, string | null][] = [
    ["127.0.0.1", "127.0.0.1"],
    ["::1", "::1"],
    ["0:0:0:0:0:0:0:1", "::1"],
    ["[::1]", "::1"],
    ["::ffff:10.0.0.7", "10.0.0.7"],
    ["2001:DB8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
    ["fe80::", "fe80::"],
    ["1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"],
    ["::", "::"],
    ["256.0.0.1", null],
    ["1.2.3", null],
    ["localhost", null],
    ["1::2::3", null],
    ["1:2:3:4:5:6:7:8:9", null],
    ["", null],
  ];
  for (const [text, want] of cases) assert.equal(canonicalIp(text), want, text);
  assert.equal(quotaEntityPath({ ip: "10.0.0.7" }), "ips/10.0.0.7");
  assert.equal(quotaEntityPath({ ip: null }), "ips/<default>");
  assert.equal(quotaEntityPath({ ip: "::1" }), "ips/%3A%3A1");
  assert.deepEqual(parseQuotaEntityPath("ips/10.0.0.7"), { ip: "10.0.0.7" });
  assert.deepEqual(parseQuotaEntityPath("ips/<default>"), { ip: null });
  assert.deepEqual(parseQuotaEntityPath("ips/%3A%3A1"), { ip: "::1" });
  assert.deepEqual(parseQuotaEntityPath("ips/localhost"), { ip: "localhost" }, "a host name, as Kafka stores it");
  assert.equal(parseQuotaEntityPath("ips/1.2.3.4/clients/x"), null);
});

test("ip connection rate: Kafka's throttle time, refused connections taken back off the rate, at most one window; bounded state", () => {
  const quotas = new Map<string, number>([["10.0.0.1", 2], ["10.0.0.2", 0.5]]);
  const r = new IpConnectionRates((ip) => quotas.get(ip), 2, 1);
  // Two samples of 1 s: the rate is measured over at least 1 s.
  assert.deepEqual([0, 0, 0, 0].map(() => r.recordAndGetThrottleTimeMs("10.0.0.1", 0)), [0, 0, 500, 500], "3/s against 2/s: (3 - 2) / 2 x 1 s; refused ones are not counted");
  assert.equal(r.recordAndGetThrottleTimeMs("10.0.0.1", 2_000), 0, "both samples expired");
  assert.equal(r.recordAndGetThrottleTimeMs("10.0.0.2", 0), 1000, "(1 - 0.5) / 0.5 x 1 s = 1 s: capped at one window");
  assert.equal(r.recordAndGetThrottleTimeMs("10.0.0.3", 0), 0, "no quota");
  assert.equal(r.size, 2, "an address without a quota is not tracked");
  // Idle for the whole window: forgotten at the next sweep; quota removed: forgotten too.
  quotas.delete("10.0.0.1");
  r.recordAndGetThrottleTimeMs("10.0.0.2", 10_000);
  assert.equal(r.size, 1);
  // Many addresses at once: never more than limits.ipConnectionRatesMax.
  const all = new IpConnectionRates(() => 1000, 11, 1);
  for (let i = 0; i < ipConnectionRatesMax + 500; i++) all.recordAndGetThrottleTimeMs(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, i);
  assert.ok(all.size <= ipConnectionRatesMax, `${all.size} addresses tracked`);
});

test("AlterClientQuotas for ip entities: set, describe back, the znode and its notification in Kafka's layout, remove", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  const reg = b.registrySession();
  try {
    const r = await alter(c, 1, [
      { entity: [ip("10.0.0.7")], ops: [set(rate, 5)] },
      { entity: [ip(null)], ops: [set(rate, 100)] },
      { entity: [ip("::1")], ops: [set(rate, 3)] },
      { entity: [user("alice")], ops: [set("producer_byte_rate", 1024)] },
    ]);
    assert.deepEqual(r.map((e) => [e.errorCode, e.errorMessage]), [[0, null], [0, null], [0, null], [0, null]]);
    assert.deepEqual(await nodeJson(reg, "/config/ips/10.0.0.7"), { version: 1, config: { [rate]: "5" } });
    assert.deepEqual(await nodeJson(reg, "/config/ips/<default>"), { version: 1, config: { [rate]: "100" } });
    assert.deepEqual(await nodeJson(reg, "/config/ips/%3A%3A1"), { version: 1, config: { [rate]: "3" } });
    const changes = await reg.getChildren(ConfigEntityChangeNotificationZNode.path);
    const paths = [];
    for (const ch of changes) paths.push((await nodeJson(reg, `${ConfigEntityChangeNotificationZNode.path}/${ch}`) as { entity_path: string }).entity_path);
    for (const p of ["ips/10.0.0.7", "ips/<default>", "ips/%3A%3A1"]) assert.ok(paths.includes(p), `a config_change_ notification names ${p}: ${paths}`);
    assert.deepEqual(ConfigEntityZNode.decode((await reg.getData("/config/ips/10.0.0.7")).data), new Map([[rate, "5"]]));

    // Exact ip, default ip, any ip; an empty filter not strict shows ips and users alike.
    assert.deepEqual((await describe(c, [{ entityType: "ip", matchType: 0, match: "10.0.0.7" }])).entries, [{ entity: { ip: "10.0.0.7" }, values: { [rate]: 5 } }]);
    assert.deepEqual((await describe(c, [{ entityType: "ip", matchType: 0, match: "0:0::1" }])).entries!.map((e) => e.entity), [{ ip: "::1" }]);
    assert.deepEqual((await describe(c, [{ entityType: "ip", matchType: 1, match: null }])).entries, [{ entity: { ip: null }, values: { [rate]: 100 } }]);
    assert.deepEqual((await describe(c, [{ entityType: "ip", matchType: 2, match: null }], true)).entries!.map((e) => e.entity), [
      { ip: "10.0.0.7" },
      { ip: "::1" },
      { ip: null },
    ]);
    assert.deepEqual((await describe(c, [])).entries!.map((e) => e.entity), [{ ip: "10.0.0.7" }, { ip: "::1" }, { ip: null }, { user: "alice" }]);
    assert.deepEqual((await describe(c, [], true)).entries, []);
    assert.deepEqual((await describe(c, [{ entityType: "user", matchType: 2, match: null }])).entries!.map((e) => e.entity), [{ user: "alice" }]);
    // Every broker's store picks the change up from the notification.
    await eventually("the store has the ip quotas", () => b.broker.clientQuotas!.store.connectionCreationRate("10.0.0.7") === 5);
    assert.equal(b.broker.clientQuotas!.store.connectionCreationRate("10.9.9.9"), 100, "the default ip's quota");

    const removed = await alter(c, 1, [
      { entity: [ip("10.0.0.7")], ops: [remove(rate)] },
      { entity: [ip(null)], ops: [remove(rate)] },
      { entity: [ip("::1")], ops: [remove(rate)] },
    ]);
    assert.ok(removed.every((e) => e.errorCode === 0));
    assert.deepEqual((await describe(c, [{ entityType: "ip", matchType: 2, match: null }])).entries, []);
    assert.deepEqual(await nodeJson(reg, "/config/ips/10.0.0.7"), { version: 1, config: {} });
    await eventually("the store dropped them", () => b.broker.clientQuotas!.store.connectionCreationRate("10.9.9.9") === undefined);
  } finally {
    await reg.close();
    c.close();
    await b.stop();
  }
});

test("AlterClientQuotas / DescribeClientQuotas refuse ip entities Kafka refuses", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    const bad: [{ entity: E[]; ops: ReturnType<typeof set>[] }, RegExp][] = [
      [{ entity: [ip("10.0.0.1"), user("a")], ops: [set(rate, 1)] }, /IP entity should not be used with user\/client ID entity/],
      [{ entity: [client(null), ip(null)], ops: [set(rate, 1)] }, /IP entity should not be used/],
      [{ entity: [ip("10.0.0.300")], ops: [set(rate, 1)] }, /10\.0\.0\.300 is not a valid IP/],
      [{ entity: [ip("not.an.ip")], ops: [set(rate, 1)] }, /not a valid IP/],
      [{ entity: [ip("")], ops: [set(rate, 1)] }, /Empty ip/],
      [{ entity: [ip("10.0.0.1")], ops: [set("producer_byte_rate", 1)] }, /Invalid configuration key producer_byte_rate/],
      [{ entity: [user("a")], ops: [set(rate, 1)] }, /Invalid configuration key connection_creation_rate/],
      [{ entity: [ip("10.0.0.1")], ops: [set(rate, 1.5)] }, /INT/],
      [{ entity: [ip("10.0.0.1")], ops: [set(rate, 2 ** 31)] }, /INT/],
      [{ entity: [ip("10.0.0.1")], ops: [set(rate, 0)] }, /must be positive/],
      [{ entity: [ip("10.0.0.1"), ip("10.0.0.2")], ops: [set(rate, 1)] }, /Duplicate ip/],
    ];
    const r = await alter(c, 1, bad.map(([e]) => e));
    r.forEach((e, i) => {
      assert.equal(e.errorCode, ErrorCode.INVALID_REQUEST, `entry ${i}`);
      assert.match(e.errorMessage ?? "", bad[i][1], `entry ${i}`);
    });
    const reg = b.registrySession();
    try {
      assert.equal(await reg.exists("/config/ips/10.0.0.1"), null, "nothing refused was written");
    } finally {
      await reg.close();
    }
    const mixed = await describe(c, [{ entityType: "ip", matchType: 2, match: null }, { entityType: "user", matchType: 2, match: null }]);
    assert.equal(mixed.errorCode, ErrorCode.INVALID_REQUEST);
    assert.match(mixed.errorMessage ?? "", /IP filter component should not be used with user or clientId/);
    const dup = await describe(c, [{ entityType: "ip", matchType: 2, match: null }, { entityType: "ip", matchType: 1, match: null }]);
    assert.equal(dup.errorCode, ErrorCode.INVALID_REQUEST);
  } finally {
    c.close();
    await b.stop();
  }
});

/** Sets an ip quota over the wire and waits for the broker's store to hold it (change notification). */
async function setIpQuota(b: Awaited<ReturnType<typeof startBroker>>, entity: E, value: number, probe: string): Promise<void> {
  const c = await WireClient.connect(b.port);
  try {
    const r = await alter(c, 1, [{ entity: [entity], ops: [set(rate, value)] }]);
    assert.deepEqual(r.map((e) => e.errorCode), [0]);
  } finally {
    c.close();
  }
  await eventually("the quota reaches the store", () => b.broker.clientQuotas!.store.connectionCreationRate(probe) === value);
}

/** A burst of connections at once: how many were served, how many refused. */
async function burst(port: number, n: number, open: WireClient[]): Promise<{ served: number; refused: number }> {
  const results = await Promise.all(Array.from({ length: n }, () => served(port, open)));
  return { served: results.filter((x) => x).length, refused: results.filter((x) => !x).length };
}

// quota.window.num=2 of 1 s: the rate is measured over at least 1 s, so a burst gets ~2 through
// (Kafka's default 11 windows would measure a first burst over 10 s and let ~20 through).
const window = { "quota.window.num": "2", "quota.window.size.seconds": "1" };

test("connection_creation_rate=2 for 127.0.0.1: a burst's excess is refused and counted; after the window the address is served again", { timeout: 60_000 }, async () => {
  const b = await startBroker(window);
  const open: WireClient[] = [];
  try {
    await setIpQuota(b, ip("127.0.0.1"), 2, "127.0.0.1");
    const first = await burst(b.port, 10, open);
    assert.ok(first.served >= 1 && first.served <= 5, `served ${first.served} of 10`);
    assert.ok(first.refused >= 5, `refused ${first.refused} of 10`);
    const refusedTotal = b.broker.networkStats().refusedTotal.get("connection_creation_rate") ?? 0;
    assert.ok(refusedTotal >= first.refused, `refusals counted under connection_creation_rate: ${refusedTotal}`);
    // The refused connections are closed (after their throttle time, at most one window).
    for (const c of open) c.close();
    open.length = 0;
    // Both samples (2 x 1 s) expire: the address's rate is zero again.
    await new Promise((r) => setTimeout(r, 2_500));
    assert.equal(await served(b.port, open), true, "served again after the window");
    // Another address has no quota: the loopback alias 127.0.0.2 is not limited (Linux routes it).
  } finally {
    for (const c of open) c.close();
    await b.stop();
  }
});

test("the default ip entity limits every address without its own quota; an address's own quota overrides it", { timeout: 60_000 }, async () => {
  const b = await startBroker(window);
  const open: WireClient[] = [];
  try {
    await setIpQuota(b, ip(null), 2, "127.0.0.1");
    const limited = await burst(b.port, 10, open);
    assert.ok(limited.served <= 5 && limited.refused >= 5, `default quota: served ${limited.served}, refused ${limited.refused}`);
    for (const c of open) c.close();
    open.length = 0;
    await setIpQuota(b, ip("127.0.0.1"), 1000, "127.0.0.1");
    await new Promise((r) => setTimeout(r, 2_500));
    const free = await burst(b.port, 10, open);
    assert.deepEqual(free, { served: 10, refused: 0 }, "127.0.0.1's own quota of 1000/s overrides the default of 2");
  } finally {
    for (const c of open) c.close();
    await b.stop();
  }
});

test("an ip entity may name a host that resolves (Kafka's InetAddress.getByName): localhost is stored as named and limits 127.0.0.1; a name that does not resolve is INVALID_REQUEST", { timeout: 60_000 }, async () => {
  const b = await startBroker(window);
  const open: WireClient[] = [];
  const reg = b.registrySession();
  try {
    const c = await WireClient.connect(b.port);
    try {
      const bad = await alter(c, 1, [{ entity: [ip("no-such-host.invalid")], ops: [set(rate, 2)] }]);
      assert.equal(bad[0].errorCode, ErrorCode.INVALID_REQUEST);
      assert.match(bad[0].errorMessage ?? "", /no-such-host\.invalid is not a valid IP or resolvable host/);
      assert.equal(await reg.exists("/config/ips/no-such-host.invalid"), null, "nothing refused was written");
    } finally {
      c.close();
    }
    // The probe is the address localhost resolves to: the store resolves the name it reads.
    await setIpQuota(b, ip("localhost"), 2, "127.0.0.1");
    assert.deepEqual(await nodeJson(reg, "/config/ips/localhost"), { version: 1, config: { [rate]: "2" } });
    const d = await WireClient.connect(b.port);
    open.push(d);
    assert.deepEqual((await describe(d, [{ entityType: "ip", matchType: 0, match: "localhost" }])).entries, [{ entity: { ip: "localhost" }, values: { [rate]: 2 } }]);
    const first = await burst(b.port, 10, open);
    assert.ok(first.refused >= 5, `refused ${first.refused} of 10 connections from 127.0.0.1 under the localhost quota`);
  } finally {
    for (const c of open) c.close();
    await reg.close();
    await b.stop();
  }
});
