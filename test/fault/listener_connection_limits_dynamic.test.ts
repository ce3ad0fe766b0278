// The per-listener connection limits are dynamic broker configs, as Kafka's ListenerConnectionQuota
// (KIP-402, KIP-612): listener.name.<l>.max.connections and .max.connection.creation.rate changed
// through IncrementalAlterConfigs (and kafkajs's AlterConfigs) for this broker or as the cluster
// default, stored in /config/brokers/<id> and /config/brokers/<default>, reported by
// DescribeConfigs with their source, applied without a restart (a lower listener limit closes none
// of the open connections, as in Kafka: new ones wait for a slot; a raised one lets the waiting
// in), refused with INVALID_CONFIG naming the key when bad, and kept across a restart. Real
// sockets, a real broker in this process; kcat and kafkajs still connect within the limits.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigResourceTypes, ConfigSource as KafkajsConfigSource, Kafka, logLevel } from "kafkajs";
import { ConfigSource } from "../../src/broker/mod.ts";
import { DescribeConfigsApi } from "../../src/protocol/api/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { ConfigEntityZNode, ConfigType } from "../../src/registry/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { alterBroker, heldForSlot, served, stillServed } from "../helpers/connection_slots.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { WireClient } from "../helpers/wire.ts";

const SET = 0;
const DELETE = 1;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const two = {
  listeners: "CLIENT://127.0.0.1:0,REPLICATION://127.0.0.1:0",
  "listener.security.protocol.map": "CLIENT:PLAINTEXT,REPLICATION:PLAINTEXT",
  "inter.broker.listener.name": "REPLICATION",
};
const CLIENT_MAX = "listener.name.client.max.connections";
const CLIENT_RATE = "listener.name.client.max.connection.creation.rate";
const REPLICATION_MAX = "listener.name.replication.max.connections";

const portsOf = (b: TestBroker) => Object.fromEntries(b.broker.boundPorts.map((p) => [p.name, p.port]));

/** A broker with the two listeners, `open` closed and the broker stopped after `fn`; `admin` is a connection on REPLICATION. */
async function withBroker(
  overrides: Record<string, string>,
  fn: (b: TestBroker, ports: Record<string, number>, admin: WireClient, open: WireClient[]) => Promise<void>,
): Promise<void> {
  const b = await startBroker({ ...two, ...overrides });
  const open: WireClient[] = [];
  try {
    const ports = portsOf(b);
    // On the inter-broker listener, so it does not count on CLIENT.
    const admin = await WireClient.connect(ports.REPLICATION);
    open.push(admin);
    await fn(b, ports, admin, open);
  } finally {
    for (const c of open) c.close();
    await b.stop();
  }
}

interface Described {
  value: string | null;
  configSource: number;
  readOnly: boolean;
  synonyms: [string, string | null, number][];
}

async function describeKey(c: WireClient, resourceName: string, key: string): Promise<Described | undefined> {
  const res = await c.request(DescribeConfigsApi, 4, {
    resources: [{ resourceType: 4, resourceName, configurationKeys: [key] }],
    includeSynonyms: true,
    includeDocumentation: false,
  });
  type Synonym = { name: string; value: string | null; source: number };
  type Entry = { name: string; value: string | null; configSource: number; readOnly: boolean; synonyms: Synonym[] };
  const e = ((res.results as Struct[])[0].configs as Entry[]).find((x) => x.name === key);
  if (e === undefined) return undefined;
  const synonyms = e.synonyms.map((s): [string, string | null, number] => [s.name, s.value, s.source]);
  return { value: e.value, configSource: e.configSource, readOnly: e.readOnly, synonyms };
}

test("listener.name.<l>.max.connections is dynamic: per broker beats the cluster default beats server.properties; lowered, open connections stay and new ones wait; raised, the waiting are let in; DescribeConfigs shows each source; bad values name the key; a restart keeps it", { timeout: 120_000 }, async () => {
  await withBroker({ [CLIENT_MAX]: "4" }, async (b, ports, admin, open) => {
    assert.deepEqual(await describeKey(admin, "0", CLIENT_MAX), {
      value: "4",
      configSource: ConfigSource.STATIC_BROKER_CONFIG,
      readOnly: false,
      synonyms: [[CLIENT_MAX, "4", ConfigSource.STATIC_BROKER_CONFIG], ["max.connections", "2147483647", ConfigSource.DEFAULT_CONFIG]],
    });
    assert.equal(await describeKey(admin, "0", REPLICATION_MAX), undefined, "a listener key set nowhere is not listed");
    assert.equal(await served(ports.CLIENT, open), true);
    assert.equal(await served(ports.CLIENT, open), true);
    const clients = open.slice(1, 3);

    // Lowered for this broker: the next waits for a slot.
    assert.deepEqual(await alterBroker(admin, "0", [[CLIENT_MAX, SET, "2"]]), { errorCode: 0, errorMessage: null });
    const third = await heldForSlot(b, ports.CLIENT, open);
    const d = await describeKey(admin, "0", CLIENT_MAX);
    assert.deepEqual([d?.value, d?.configSource], ["2", ConfigSource.DYNAMIC_BROKER_CONFIG]);
    assert.equal(await alterBroker(admin, "0", [[CLIENT_MAX, SET, "1"]]).then((r) => r.errorCode), 0);
    for (const c of clients) assert.equal(await stillServed(c), true, "lowered below what is open: nothing is closed");

    // The cluster default does not beat this broker's value; once that is deleted, it rules.
    assert.equal(await alterBroker(admin, "", [[CLIENT_MAX, SET, "3"]]).then((r) => r.errorCode), 0);
    assert.equal(b.broker.networkStats().connectionsWaitingForSlot, 1, "the per-broker 1 still holds the third back");
    assert.equal(await alterBroker(admin, "0", [[CLIENT_MAX, DELETE, null]]).then((r) => r.errorCode), 0);
    assert.equal(await third.answered, true, "raised to the cluster default of 3: the waiting third is let in");
    const atDefault = await describeKey(admin, "0", CLIENT_MAX);
    assert.deepEqual([atDefault?.value, atDefault?.configSource], ["3", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]);
    assert.deepEqual((await describeKey(admin, "", CLIENT_MAX))?.value, "3", "the cluster-default resource lists it too");
    const fourth = await heldForSlot(b, ports.CLIENT, open);

    // Without either, server.properties' 4 is back.
    assert.equal(await alterBroker(admin, "", [[CLIENT_MAX, DELETE, null]]).then((r) => r.errorCode), 0);
    assert.equal(await fourth.answered, true, "the fourth fits under server.properties' 4");
    assert.equal((await describeKey(admin, "0", CLIENT_MAX))?.configSource, ConfigSource.STATIC_BROKER_CONFIG);

    // The inter-broker listener's own limit is dynamic too (max.connections never holds it back).
    const onReplication = b.broker.networkStats().connections - 4;
    assert.equal(await alterBroker(admin, "0", [[REPLICATION_MAX, SET, String(onReplication)]]).then((r) => r.errorCode), 0);
    const replication = await heldForSlot(b, ports.REPLICATION, open);
    assert.equal(await stillServed(admin), true);
    assert.equal(await alterBroker(admin, "0", [[REPLICATION_MAX, DELETE, null]]).then((r) => r.errorCode), 0);
    assert.equal(await replication.answered, true);

    // Bad values and unknown listeners are refused naming the key; nothing is stored.
    for (const [resource, key, value, why] of [
      ["0", CLIENT_MAX, "-1", /listener\.name\.client\.max\.connections: -1 is below the minimum 0/],
      ["", CLIENT_MAX, "many", /listener\.name\.client\.max\.connections: "many" is not an integer/],
      ["0", CLIENT_MAX, "0", /listener\.name\.client\.max\.connections: Invalid max\.connections 0/],
      ["0", CLIENT_RATE, "0", /listener\.name\.client\.max\.connection\.creation\.rate: Invalid max\.connection\.creation\.rate 0/],
      ["0", CLIENT_RATE, "3000000000", /listener\.name\.client\.max\.connection\.creation\.rate: 3000000000 is out of range/],
      ["0", "listener.name.external.max.connections", "5", /listener\.name\.external\.max\.connections: listener EXTERNAL is not one of the listeners/],
      ["0", "listener.name.client.num.network.threads", "5", /Cannot update these configs dynamically: Set\(listener\.name\.client\.num\.network\.threads\)/],
    ] as const) {
      const r = await alterBroker(admin, resource, [[key, SET, value]]);
      assert.equal(r.errorCode, ErrorCode.INVALID_CONFIG, `${key}=${value}`);
      assert.match(r.errorMessage ?? "", why);
    }
    assert.equal((await describeKey(admin, "0", CLIENT_MAX))?.value, "4");

    // Stored as Kafka stores it, and kept across a restart.
    assert.equal(await alterBroker(admin, "0", [[CLIENT_MAX, SET, "1"]]).then((r) => r.errorCode), 0);
    const reg = b.registrySession();
    try {
      const stored = ConfigEntityZNode.decode((await reg.getData(ConfigEntityZNode.path(ConfigType.Broker, "0"))).data);
      assert.equal(stored?.get(CLIENT_MAX), "1");
    } finally {
      await reg.close();
    }
    for (const c of open.splice(0)) c.close();
    await b.restart();
    const client = portsOf(b).CLIENT;
    assert.equal(await served(client, open), true);
    await heldForSlot(b, client, open);
  });
});

test("listener.name.<l>.max.connection.creation.rate is dynamic: lowered, that listener's new connections wait their turn (not the other listener's); removed, the waiting ones are let in", { timeout: 120_000 }, async () => {
  await withBroker({}, async (b, ports, admin, open) => {
    assert.equal(await alterBroker(admin, "", [[CLIENT_RATE, SET, "1"]]).then((r) => r.errorCode), 0);
    assert.equal((await describeKey(admin, "0", CLIENT_RATE))?.configSource, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
    // A bucket of one token at one a second: of six connections made together, some wait.
    const pending = Array.from({ length: 6 }, () => served(ports.CLIENT, open));
    for (let t = 0; t < 200 && b.broker.networkStats().connectionsThrottled === 0; t++) await sleep(10);
    assert.ok(b.broker.networkStats().connectionsThrottled > 0, "client connections wait for the listener's rate");
    assert.equal(await served(ports.REPLICATION, open), true, "the other listener's connections do not wait behind them");
    assert.ok(b.broker.networkStats().connectionsThrottled > 0, "and the client ones still wait");
    assert.equal(await alterBroker(admin, "", [[CLIENT_RATE, DELETE, null]]).then((r) => r.errorCode), 0);
    for (let t = 0; t < 200 && b.broker.networkStats().connectionsThrottled > 0; t++) await sleep(10);
    assert.equal(b.broker.networkStats().connectionsThrottled, 0, "the waiting ones are let in when the rate is removed");
    assert.deepEqual(await Promise.all(pending), [true, true, true, true, true, true]);
  });
});

test("kafkajs changes listener.name.<l>.max.connections through AlterConfigs and reads it back", { timeout: 120_000 }, async () => {
  const b = await startBroker(two);
  const open: WireClient[] = [];
  try {
    const ports = portsOf(b);
    const kafka = new Kafka({ clientId: "strand-listener-limits", brokers: [`127.0.0.1:${ports.CLIENT}`], logLevel: logLevel.NOTHING, retry: { retries: 0 } });
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.BROKER, name: "0", configEntries: [{ name: CLIENT_MAX, value: "2" }] }] });
      const described = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.BROKER, name: "0", configNames: [CLIENT_MAX] }] });
      const e = described.resources[0].configEntries.find((x) => x.configName === CLIENT_MAX);
      assert.deepEqual([e?.configValue, e?.configSource, e?.readOnly], ["2", KafkajsConfigSource.DYNAMIC_BROKER_CONFIG, false]);
      // kafkajs holds one connection on CLIENT: one more fits, then the listener is full.
      assert.equal(await served(ports.CLIENT, open), true);
      await heldForSlot(b, ports.CLIENT, open);
      const topics = await admin.listTopics();
      assert.ok(Array.isArray(topics), "kafkajs's own connection is still served");
    } finally {
      await admin.disconnect();
    }
  } finally {
    for (const c of open) c.close();
    await b.stop();
  }
});

test("kcat connects while listener.name.<l>.max.connections allows it; while the listener is full it waits, and is served once the limit is raised", { timeout: 120_000, skip: skipUnless("kcat") }, async () => {
  await withBroker({}, async (b, ports, admin, open) => {
    assert.equal(await alterBroker(admin, "0", [[CLIENT_MAX, SET, "1"]]).then((r) => r.errorCode), 0);
    const kcat = () => run("kcat", ["-b", `127.0.0.1:${ports.CLIENT}`, "-L", "-m", "30"], { timeoutMs: 60_000 });
    const ok = await kcat();
    assert.equal(ok.code, 0, `kcat -L within the limit: ${ok.stderr}`);
    assert.match(ok.stdout.toString(), /1 brokers:/);
    assert.equal(await served(ports.CLIENT, open), true, "the one client slot is taken");
    const waiting = kcat();
    for (let t = 0; t < 500 && b.broker.networkStats().connectionsWaitingForSlot === 0; t++) await sleep(20);
    assert.equal(b.broker.networkStats().connectionsWaitingForSlot, 1, "kcat's connection waits for a slot");
    assert.equal(await alterBroker(admin, "0", [[CLIENT_MAX, SET, "2"]]).then((r) => r.errorCode), 0);
    const again = await waiting;
    assert.equal(again.code, 0, `kcat -L once the limit is raised: ${again.stderr}`);
    assert.match(again.stdout.toString(), /1 brokers:/);
  });
});
