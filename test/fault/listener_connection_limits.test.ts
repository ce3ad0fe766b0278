// Per-listener connection limits (KIP-402, KIP-612): listener.name.<l>.max.connections and
// listener.name.<l>.max.connection.creation.rate bound one listener (a connection over a limit
// waits for a slot); the broker-wide max.connections and max.connection.creation.rate do not hold or delay the inter-broker
// listener when there are others (Kafka's protected listener), so a flood of clients cannot cut
// replication, while that listener's own limits still hold.
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseBrokerConfig } from "../../src/broker/mod.ts";
import { startBroker } from "../helpers/broker.ts";
import { heldForSlot, served } from "../helpers/connection_slots.ts";
import { WireClient } from "../helpers/wire.ts";

const two = {
  listeners: "CLIENT://127.0.0.1:0,REPLICATION://127.0.0.1:0",
  "listener.security.protocol.map": "CLIENT:PLAINTEXT,REPLICATION:PLAINTEXT",
  "inter.broker.listener.name": "REPLICATION",
};

test("listener.name.<l>.max.connections bounds its listener (the next waits for a slot); the inter-broker listener is not held by max.connections, only by its own limit", { timeout: 60_000 }, async () => {
  const b = await startBroker({ ...two, "max.connections": "3", "listener.name.client.max.connections": "2", "listener.name.replication.max.connections": "3" });
  const open: WireClient[] = [];
  try {
    const ports = Object.fromEntries(b.broker.boundPorts.map((p) => [p.name, p.port]));
    assert.equal(await served(ports.CLIENT, open), true);
    assert.equal(await served(ports.CLIENT, open), true);
    await heldForSlot(b, ports.CLIENT, open);
    assert.equal(await served(ports.REPLICATION, open), true, "third connection overall");
    assert.equal(await served(ports.REPLICATION, open), true, "past max.connections=3, the inter-broker listener is still served");
    assert.equal(await served(ports.REPLICATION, open), true);
    const replicationFourth = await heldForSlot(b, ports.REPLICATION, open);
    assert.equal(b.broker.networkStats().connectionsWaitingForSlot, 2, "its own listener.name.replication.max.connections=3 holds");
    // Past max.connections=3 through the protected listener: the client listener's least recently
    // active connections are closed to make room (Kafka's closeExcessConnections).
    assert.equal(b.broker.networkStats().closedOverMaxConnectionsTotal, 2);
    assert.equal(await open[0].waitClosed(10_000), true, "the least recently active client connection was closed");
    assert.equal(await open[1].waitClosed(10_000), true);
    // A replication connection closes: the waiting one there takes its slot.
    open[3].close();
    assert.equal(await replicationFourth.answered, true, "the waiting replication connection is served once a slot frees");
  } finally {
    for (const c of open) c.close();
    await b.stop();
  }
});

test("max.connections still bounds a broker whose only listener is the inter-broker one: the next waits, and is served once one closes", { timeout: 60_000 }, async () => {
  const b = await startBroker({ "max.connections": "2" });
  const open: WireClient[] = [];
  try {
    assert.equal(await served(b.port, open), true);
    assert.equal(await served(b.port, open), true);
    const third = await heldForSlot(b, b.port, open);
    open[0].close();
    assert.equal(await third.answered, true);
  } finally {
    for (const c of open) c.close();
    await b.stop();
  }
});

test("listener.name.<l>.max.connection.creation.rate delays that listener's connections; the broker-wide rate does not delay the inter-broker listener", { timeout: 60_000 }, async () => {
  const b = await startBroker({ ...two, "max.connection.creation.rate": "1", "listener.name.client.max.connection.creation.rate": "2" });
  const open: WireClient[] = [];
  try {
    const ports = Object.fromEntries(b.broker.boundPorts.map((p) => [p.name, p.port]));
    const start = Date.now();
    const clients = Array.from({ length: 5 }, async () => ({ ok: await served(ports.CLIENT, open), atMs: Date.now() - start }));
    // 5 inter-broker connections at once: the broker-wide bucket of 1/s would take 4 s for them.
    const replication = await Promise.all(Array.from({ length: 5 }, () => served(ports.REPLICATION, open)));
    const replicationMs = Date.now() - start;
    const results = await Promise.all(clients);
    assert.deepEqual(replication, [true, true, true, true, true]);
    assert.ok(results.every((r) => r.ok), "every client connection is served in the end");
    // Client connections pass both buckets: the broker-wide 1/s (1 token) dominates, so the
    // fifth cannot be served before 4 s. A lower bound only: a slow machine makes it later.
    const lastMs = Math.max(...results.map((r) => r.atMs));
    assert.ok(lastMs >= 3_500, `the fifth client connection was served after ${lastMs} ms`);
    assert.ok(replicationMs < lastMs, `the inter-broker connections (${replicationMs} ms) did not wait behind the clients' (${lastMs} ms)`);
  } finally {
    for (const c of open) c.close();
    await b.stop();
  }
});

test("per-listener connection keys: a listener that does not exist or a bad value stops start-up naming the key", () => {
  const parse = (kv: Record<string, string>) => parseBrokerConfig(new Map(Object.entries({ "log.dirs": "/tmp/x", ...two, ...kv }))).config;
  assert.deepEqual([...parse({ "listener.name.client.max.connections": "5", "listener.name.client.max.connection.creation.rate": "7" }).listenerConnectionLimits], [
    ["CLIENT", { maxConnections: 5, maxConnectionCreationRate: 7 }],
  ]);
  assert.throws(() => parse({ "listener.name.external.max.connections": "5" }), /listener\.name\.external\.max\.connections: listener EXTERNAL is not one of the listeners/);
  assert.throws(() => parse({ "listener.name.client.max.connections": "-1" }), /listener\.name\.client\.max\.connections: -1 is below/);
  assert.throws(() => parse({ "listener.name.client.max.connection.creation.rate": "x" }), /listener\.name\.client\.max\.connection\.creation\.rate/);
  assert.deepEqual(parseBrokerConfig(new Map(Object.entries({ "log.dirs": "/tmp/x", ...two, "listener.name.client.max.connections": "1" }))).unknownKeys, []);
});
