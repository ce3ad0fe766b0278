// Three brokers on a real ZooKeeper whose one listener is SASL_SSL: every byte between brokers
// (controller channel, replica fetchers, controlled shutdown) and from clients goes over TLS, the
// brokers log in with PLAIN as `broker`, clients with SCRAM-SHA-512 users stored in ZooKeeper. A
// leader SIGKILLed under acks=all load loses nothing, the restarted broker catches up into the ISR
// over TLS, and a client without TLS gets nothing. Then an SSL cluster with ssl.client.auth=required:
// the brokers present their keystore's certificate to each other, and replication works.
import assert from "node:assert/strict";
import { test } from "node:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Kafka, logLevel } from "kafkajs";
import { KafkaConnection } from "../../src/client/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import { CertDir, skipUnlessOpenssl } from "../helpers/certs.ts";
import { skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { leaderKilledUnderAcksAll } from "../helpers/kafkajs_roundtrip.ts";
import { alterScram, scramUpsertion } from "../helpers/sasl.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import type { WireClient } from "../helpers/wire.ts";

const skip = skipUnlessZooKeeper() || skipUnless("kcat") || skipUnlessOpenssl();
const jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="broker-secret" ' +
  'user_broker="broker-secret" user_admin="admin-secret";';

test("cluster over SASL_SSL only: inter-broker PLAIN over TLS, client SCRAM, a SIGKILLed leader under acks=all loses nothing", { skip, timeout: 240_000 }, async () => {
  const certs = new CertDir();
  try {
    const ca = certs.ca("strand cluster CA");
    const server = certs.leaf(ca, { subject: "/O=strand/CN=localhost" });
    const keystore = join(certs.dir, "broker-keystore.pem");
    writeFileSync(keystore, server.key + server.cert);
    const platform = await loadPlatform();
    const tls = { trustedCertificates: ca.cert };
    await withCluster(3, {
      budgetMs: 230_000,
      label: "strand-cluster-sasl-ssl-",
      listenerProtocol: "SASL_SSL",
      overrides: {
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
        "sasl.mechanism.inter.broker.protocol": "PLAIN",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": jaas,
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": keystore,
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": ca.certPath,
      },
    }, async (c) => {
      const first = c.broker(0);
      const admin = await KafkaConnection.connect(platform, { host: "127.0.0.1", port: first.port, tls, sasl: { mechanism: "PLAIN", username: "admin", password: "admin-secret" } });
      const wire = { request: (api: never, v: number, body: never) => admin.request(api, v, body, 10_000) } as unknown as WireClient;
      assert.equal((await alterScram(wire, [await scramUpsertion("app", "SCRAM-SHA-512", "app-secret")]))[0].errorCode, 0);
      admin.close();
      const sasl = { mechanism: "scram-sha-512" as const, username: "app", password: "app-secret" };
      // Every broker learns of the new user through /config/changes.
      for (const b of c.brokers) {
        await c.waitFor(async () => {
          const k = await KafkaConnection.connect(platform, { host: "127.0.0.1", port: b.port, tls, sasl: { mechanism: "SCRAM-SHA-512", username: "app", password: "app-secret" } })
            .catch(() => null);
          k?.close();
          return k !== null;
        }, 15_000, `broker ${b.id} accepts the SCRAM user`);
      }
      const kafka = () => new Kafka({ clientId: "sasl-ssl-cluster", brokers: c.liveBootstrap.split(","), ssl: { ca: [ca.cert] }, sasl, logLevel: logLevel.NOTHING, retry: { retries: 10 } });
      const acked = await leaderKilledUnderAcksAll(c, kafka, "secure", "SASL_SSL");

      const bootstrap = c.liveBootstrap.split(",")[0];
      const args = ["-b", bootstrap, "-X", "security.protocol=SASL_SSL", "-X", `ssl.ca.location=${ca.certPath}`,
        "-X", "sasl.mechanisms=SCRAM-SHA-512", "-X", "sasl.username=app", "-X", "sasl.password=app-secret"];
      const out = await run("kcat", [...args, "-C", "-t", "secure", "-p", "0", "-e", "-q", "-o", "beginning"], { timeoutMs: 60_000 });
      assert.equal(out.code, 0, out.stderr);
      const got = out.stdout.toString().trim().split("\n");
      assert.equal(new Set(got).size, got.length, "no record twice");
      for (const v of acked) assert.ok(got.includes(v), `acknowledged ${v} is there`);
      const plaintext = await run("kcat", ["-b", bootstrap, "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=PLAIN", "-X", "sasl.username=admin", "-X", "sasl.password=admin-secret", "-L", "-m", "3"], { timeoutMs: 30_000 });
      assert.notEqual(plaintext.code, 0, "a client without TLS gets no metadata");
    });
  } finally {
    certs.cleanup();
  }
});

test("cluster over SSL with ssl.client.auth=required: brokers present their own certificate to each other; replication under acks=all", { skip, timeout: 180_000 }, async () => {
  const certs = new CertDir();
  try {
    const ca = certs.ca("strand cluster CA");
    const server = certs.leaf(ca, { subject: "/O=strand/CN=broker" });
    const client = certs.leaf(ca, { subject: "/O=strand/CN=app" });
    const keystore = join(certs.dir, "broker-keystore.pem");
    writeFileSync(keystore, server.key + server.cert);
    await withCluster(3, {
      budgetMs: 170_000,
      label: "strand-cluster-ssl-",
      listenerProtocol: "SSL",
      overrides: {
        "ssl.keystore.location": keystore,
        "ssl.truststore.location": ca.certPath,
        "ssl.client.auth": "required",
        "ssl.principal.mapping.rules": "RULE:^CN=([^,]+),.*$/$1/",
      },
    }, async (c) => {
      const ssl = ["-X", "security.protocol=SSL", "-X", `ssl.ca.location=${ca.certPath}`,
        "-X", `ssl.certificate.location=${client.certPath}`, "-X", `ssl.key.location=${client.keyPath}`];
      const kafka = new Kafka({ clientId: "ssl-cluster", brokers: c.liveBootstrap.split(","), ssl: { ca: [ca.cert], cert: client.cert, key: client.key }, logLevel: logLevel.NOTHING });
      const ka = kafka.admin();
      await ka.connect();
      await ka.createTopics({ topics: [{ topic: "mtls", numPartitions: 1, replicationFactor: 3, configEntries: [{ name: "min.insync.replicas", value: "3" }] }] });
      await ka.disconnect();
      await c.waitLeader("mtls", 0, 30_000);
      const input = Array.from({ length: 500 }, (_, i) => `r-${i}`).join("\n") + "\n";
      // min.insync.replicas=3: every follower must fetch over mutual TLS for acks=all to succeed.
      const p = await run("kcat", ["-b", c.liveBootstrap, ...ssl, "-P", "-t", "mtls", "-p", "0", "-X", "acks=all"], { input, timeoutMs: 60_000 });
      assert.equal(p.code, 0, p.stderr);
      const out = await run("kcat", ["-b", c.liveBootstrap, ...ssl, "-C", "-t", "mtls", "-p", "0", "-e", "-q", "-o", "beginning"], { timeoutMs: 60_000 });
      assert.equal(out.code, 0, out.stderr);
      assert.equal(out.stdout.toString(), input);
      const noCert = await run("kcat", ["-b", c.liveBootstrap, "-X", "security.protocol=SSL", "-X", `ssl.ca.location=${ca.certPath}`, "-L", "-m", "3"], { timeoutMs: 30_000 });
      assert.notEqual(noCert.code, 0, "a client without a certificate gets no metadata");
    });
  } finally {
    certs.cleanup();
  }
});
