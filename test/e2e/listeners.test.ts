// Named listeners with their own security protocols (listener.security.protocol.map): a broker
// with INTERNAL (PLAINTEXT, the inter-broker listener) and EXTERNAL (SASL_PLAINTEXT). Each client
// is answered with the endpoints of the listener it came in on (Metadata brokers, FindCoordinator),
// as Kafka answers, so a SASL client is never sent to the plaintext port; kcat works through the
// SASL listener alone, and the registration lists both endpoints with their protocols.
import assert from "node:assert/strict";
import { test } from "node:test";
import { FindCoordinatorApi, MetadataApi } from "../../src/protocol/api/mod.ts";
import { BrokerIdZNode } from "../../src/registry/mod.ts";
import { startBroker } from "../helpers/broker.ts";
import { saslLogin } from "../helpers/sasl.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";

const overrides = {
  listeners: "INTERNAL://127.0.0.1:0,EXTERNAL://127.0.0.1:0",
  "listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:SASL_PLAINTEXT",
  "inter.broker.listener.name": "INTERNAL",
  "sasl.enabled.mechanisms": "PLAIN",
  "listener.name.external.plain.sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";',
  "offsets.topic.replication.factor": "1",
  "offsets.topic.num.partitions": "1",
};

test("two listeners: each client gets its own listener's endpoints in Metadata and FindCoordinator", async () => {
  const b = await startBroker(overrides);
  try {
    const ports = Object.fromEntries(b.broker.boundPorts.map((p) => [p.name, p.port]));
    assert.ok(ports.INTERNAL > 0 && ports.EXTERNAL > 0 && ports.INTERNAL !== ports.EXTERNAL, JSON.stringify(ports));
    const internal = await WireClient.connect(ports.INTERNAL);
    assert.equal((await createTopic(internal, "t", { numPartitions: 1 })).errorCode, 0);
    const external = await WireClient.connect(ports.EXTERNAL);
    assert.equal((await saslLogin(external, "PLAIN", "alice", "alice-secret")).errorCode, 0);
    const metadata = { topics: [{ topicId: new Uint8Array(16), name: "t" }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false };
    for (const [c, port] of [[internal, ports.INTERNAL], [external, ports.EXTERNAL]] as const) {
      const md = await c.request(MetadataApi, 12, metadata);
      assert.deepEqual((md.brokers as { nodeId: number; port: number }[]).map((x) => [x.nodeId, x.port]), [[0, port]]);
      const t = (md.topics as { partitions: { leaderId: number; errorCode: number }[] }[])[0];
      assert.deepEqual(t.partitions.map((p) => [p.errorCode, p.leaderId]), [[0, 0]]);
      const fc = await c.request(FindCoordinatorApi, 4, { key: "", keyType: 0, coordinatorKeys: ["g"] });
      const coordinator = (fc.coordinators as { errorCode: number; port: number }[])[0];
      assert.deepEqual([coordinator.errorCode, coordinator.port], [0, port]);
    }
    internal.close();
    external.close();
    // The registration carries both, with their protocols, as Kafka writes it.
    const session = b.registrySession();
    const reg = BrokerIdZNode.decode(0, (await session.getData(BrokerIdZNode.path(0))).data);
    assert.deepEqual(
      reg?.endpoints.map((e) => [e.listenerName, e.securityProtocol, e.port]).sort(),
      [["EXTERNAL", "SASL_PLAINTEXT", ports.EXTERNAL], ["INTERNAL", "PLAINTEXT", ports.INTERNAL]],
    );
  } finally {
    await b.stop();
  }
});

test("kcat through the SASL listener alone: produce and consume, never sent to the plaintext port", { skip: skipUnless("kcat") }, async () => {
  const b = await startBroker(overrides);
  try {
    const port = b.broker.boundPorts.find((p) => p.name === "EXTERNAL")!.port;
    const sasl = ["-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=PLAIN", "-X", "sasl.username=alice", "-X", "sasl.password=alice-secret"];
    const input = Array.from({ length: 500 }, (_, i) => `e-${i}`).join("\n") + "\n";
    const p = await run("kcat", ["-b", `127.0.0.1:${port}`, ...sasl, "-P", "-t", "ext", "-X", "acks=all"], { input, timeoutMs: 60_000 });
    assert.equal(p.code, 0, p.stderr);
    const c = await run("kcat", ["-b", `127.0.0.1:${port}`, ...sasl, "-C", "-t", "ext", "-e", "-q", "-o", "beginning"], { timeoutMs: 60_000 });
    assert.equal(c.code, 0, c.stderr);
    assert.equal(c.stdout.toString(), input);
  } finally {
    await b.stop();
  }
});
