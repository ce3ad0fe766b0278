// SSL and SASL_SSL listeners end to end, over real sockets, with certificates made by openssl:
// strand's own client (KafkaConnection with tls), kcat, kafkajs and the Debian Python clients
// produce and consume over SSL (with and without a client certificate, the principal mapped
// from its subject) and over SASL_SSL with PLAIN and SCRAM-SHA-512; a plaintext client on the
// TLS port and a TLS client on a plaintext port are closed with nothing logged above warn; a
// keystore replaced on disk is served to the next client without a restart; the tools take an
// SSL --command-config.
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Kafka, logLevel } from "kafkajs";
import { KafkaConnection } from "../../src/client/mod.ts";
import { ApiVersionsApi, MetadataApi } from "../../src/protocol/api/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { TlsClientOptions } from "../../src/platform/mod.ts";
import type { Logger, LogFields } from "../../src/util/logger.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { CertDir, type KeyPair, skipUnlessOpenssl } from "../helpers/certs.ts";
import { kafkajsRoundTrip } from "../helpers/kafkajs_roundtrip.ts";
import { alterScram, scramUpsertion } from "../helpers/sasl.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { WireClient } from "../helpers/wire.ts";
import { lines, strand, strandOk } from "../cli/strand.ts";

const platform = await loadPlatform();
const skip = skipUnlessOpenssl();

let certs: { dir: CertDir; ca: KeyPair; ca2: KeyPair; server: KeyPair; server2: KeyPair; client: KeyPair; keystore: string; clientKeystore: string };
function getCerts() {
  if (certs !== undefined) return certs;
  const dir = new CertDir();
  const ca = dir.ca("strand test CA");
  const ca2 = dir.ca("strand rotated CA");
  const server = dir.leaf(ca, { subject: "/O=strand/CN=localhost" });
  const server2 = dir.leaf(ca2, { subject: "/O=rotated/CN=localhost" });
  const client = dir.leaf(ca, { subject: "/C=GB/O=strand/CN=alice" });
  // Kafka's PEM keystore: the private key and the certificate chain in one file.
  const keystore = join(dir.dir, "broker-keystore.pem");
  writeFileSync(keystore, server.key + server.cert);
  const clientKeystore = join(dir.dir, "client-keystore.pem");
  writeFileSync(clientKeystore, client.key + client.cert);
  certs = { dir, ca, ca2, server, server2, client, keystore, clientKeystore };
  process.on("exit", () => dir.cleanup());
  return certs;
}

/** Log lines the broker wrote, by level (to check nothing reached error). */
function recordingLogger(): Logger & { lines: { level: string; msg: string; fields: LogFields }[] } {
  const lines: { level: string; msg: string; fields: LogFields }[] = [];
  const at = (level: string) => (fields: LogFields, msg: string) => void lines.push({ level, msg, fields });
  const l = { lines, debug() {}, info: at("info"), warn: at("warn"), error: at("error"), child: () => l };
  return l;
}

function sslBroker(extra: Record<string, string> = {}) {
  const c = getCerts();
  return {
    listeners: "SSL://127.0.0.1:0",
    "ssl.keystore.type": "PEM",
    "ssl.keystore.location": c.keystore,
    "ssl.truststore.type": "PEM",
    "ssl.truststore.location": c.ca.certPath,
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "1",
    ...extra,
  };
}

async function withBroker(overrides: Record<string, string>, fn: (b: TestBroker, log: ReturnType<typeof recordingLogger>) => Promise<void>) {
  const log = recordingLogger();
  const b = await startBroker(overrides, undefined, log);
  try {
    await fn(b, log);
  } finally {
    await b.stop();
  }
  const errors = log.lines.filter((l) => l.level === "error");
  assert.deepEqual(errors, [], "nothing logged at error");
}

function clientTls(extra: Partial<TlsClientOptions> = {}): TlsClientOptions {
  return { trustedCertificates: getCerts().ca.cert, ...extra };
}

test("SSL listener: strand's client connects with the CA, Metadata advertises the SSL endpoint; a wrong CA fails the handshake", { skip }, async () => {
  await withBroker(sslBroker(), async (b, log) => {
    const conn = await KafkaConnection.connect(platform, { host: "127.0.0.1", port: b.port, tls: clientTls() });
    const md = await conn.request(MetadataApi, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }, 10_000);
    assert.deepEqual((md.brokers as { port: number }[]).map((x) => x.port), [b.port]);
    conn.close();
    await assert.rejects(KafkaConnection.connect(platform, { host: "127.0.0.1", port: b.port, tls: { trustedCertificates: getCerts().ca2.cert } }));
    // No client certificate on a listener with ssl.client.auth=none: User:ANONYMOUS, no "authenticated" line.
    assert.equal(log.lines.filter((l) => l.msg === "authenticated by client certificate").length, 0);
  });
});

test("SSL with ssl.client.auth=required: the principal comes from the certificate through ssl.principal.mapping.rules; no certificate fails", { skip }, async () => {
  const c = getCerts();
  const overrides = sslBroker({ "ssl.client.auth": "required", "ssl.principal.mapping.rules": "RULE:^CN=([^,]+),O=strand.*$/$1/U,DEFAULT" });
  await withBroker(overrides, async (b, log) => {
    const conn = await KafkaConnection.connect(platform, {
      host: "127.0.0.1",
      port: b.port,
      tls: clientTls({ certificateChain: c.client.cert, privateKey: c.client.key }),
    });
    await conn.request(ApiVersionsApi, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" }, 10_000);
    conn.close();
    const line = log.lines.find((l) => l.msg === "authenticated by client certificate");
    assert.equal(line?.fields.principal, "User:ALICE");
    // Without a certificate the handshake (or the first read after it, under TLS 1.3) fails.
    const failed = await KafkaConnection.connect(platform, { host: "127.0.0.1", port: b.port, tls: clientTls() }).then(
      async (k) => {
        try {
          await k.request(ApiVersionsApi, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" }, 10_000);
          return false;
        } catch {
          return true;
        } finally {
          k.close();
        }
      },
      () => true,
    );
    assert.ok(failed, "a client without a certificate is refused");
  });
});

test("SSL: a subject no ssl.principal.mapping.rules rule maps closes the connection (Kafka's NoMatchingRule), at warn", { skip }, async () => {
  const c = getCerts();
  await withBroker(sslBroker({ "ssl.client.auth": "required", "ssl.principal.mapping.rules": "RULE:^CN=(bob),.*$/$1/" }), async (b, log) => {
    const conn = await KafkaConnection.connect(platform, {
      host: "127.0.0.1",
      port: b.port,
      tls: clientTls({ certificateChain: c.client.cert, privateKey: c.client.key }),
    });
    await assert.rejects(conn.request(ApiVersionsApi, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" }, 10_000));
    conn.close();
    assert.ok(log.lines.some((l) => l.level === "warn" && /no ssl.principal.mapping.rules rule/.test(l.msg)));
  });
});

test("a plaintext client on an SSL port and a TLS client on a PLAINTEXT port are closed promptly, logged at warn at most", { skip }, async () => {
  const overrides = sslBroker({
    listeners: "SSL://127.0.0.1:0,PLAIN://127.0.0.1:0",
    "listener.security.protocol.map": "SSL:SSL,PLAIN:PLAINTEXT",
    "inter.broker.listener.name": "PLAIN",
  });
  await withBroker(overrides, async (b, log) => {
    const ports = Object.fromEntries(b.broker.boundPorts.map((p) => [p.name, p.port]));
    const plain = await WireClient.connect(ports.SSL);
    const sent = plain.request(ApiVersionsApi, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" });
    await assert.rejects(sent);
    await plain.closed;
    await assert.rejects(KafkaConnection.connect(platform, { host: "127.0.0.1", port: ports.PLAIN, tls: clientTls(), connectTimeoutMs: 15_000 }));
    assert.ok(log.lines.some((l) => l.level === "warn" && /TLS handshake failed/.test(l.msg)), "the failed handshake is logged at warn");
  });
});

test("a keystore replaced on disk is served to the next client without a restart; a bad file leaves the old one", { skip }, async () => {
  const c = getCerts();
  const keystore = join(c.dir.dir, "rotating-keystore.pem");
  writeFileSync(keystore, c.server.key + c.server.cert);
  await withBroker(sslBroker({ "ssl.keystore.location": keystore }), async (b, log) => {
    (await KafkaConnection.connect(platform, { host: "127.0.0.1", port: b.port, tls: clientTls() })).close();
    // A broken file: a warn line, and the old certificate is still served.
    writeFileSync(keystore, "not a keystore\n");
    const warned = Date.now() + 20_000;
    while (!log.lines.some((l) => l.level === "warn" && /not reloaded/.test(l.msg))) {
      assert.ok(Date.now() < warned, "a bad keystore file is reported within 20 s");
      await new Promise((r) => setTimeout(r, 200));
    }
    (await KafkaConnection.connect(platform, { host: "127.0.0.1", port: b.port, tls: clientTls() })).close();
    writeFileSync(keystore, c.server2.key + c.server2.cert);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const ok = await KafkaConnection.connect(platform, { host: "127.0.0.1", port: b.port, tls: { trustedCertificates: c.ca2.cert } }).then(
        (k) => (k.close(), true),
        () => false,
      );
      if (ok) break;
      assert.ok(Date.now() < deadline, "the rotated certificate is served within 20 s");
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(log.lines.some((l) => l.msg === "TLS certificates reloaded"));
  });
});

test("invalid SSL settings stop start-up with an error naming the key", { skip }, async () => {
  const c = getCerts();
  const cases: [Record<string, string>, RegExp][] = [
    [{ "ssl.keystore.type": "JKS" }, /ssl\.keystore\.type/],
    [{ "ssl.keystore.location": join(c.dir.dir, "missing.pem") }, /ssl\.keystore\.location.*does not exist/],
    [{ "ssl.keystore.location": c.ca.certPath }, /ssl\.keystore\.location/],
    [{ "ssl.client.auth": "sometimes" }, /ssl\.client\.auth/],
    [{ "ssl.enabled.protocols": "TLSv1.1" }, /ssl\.enabled\.protocols/],
    [{ "ssl.keystore.password": "x" }, /ssl\.keystore\.password/],
    [{ "ssl.principal.mapping.rules": "RULE:oops" }, /ssl\.principal\.mapping\.rules/],
    [{ "listener.name.ssl.ssl.truststore.location": join(c.dir.dir, "missing.pem") }, /listener\.name\.ssl\.ssl\.truststore\.location/],
  ];
  // What only the TLS library can tell: the key's password, a key not matching the certificate, an unknown suite.
  const encrypted = c.dir.leaf(c.ca, { subject: "/CN=localhost", keyFormat: "encrypted", password: "right" });
  const encryptedKeystore = join(c.dir.dir, "encrypted-keystore.pem");
  writeFileSync(encryptedKeystore, encrypted.key + encrypted.cert);
  const mismatched = join(c.dir.dir, "mismatched-keystore.pem");
  writeFileSync(mismatched, c.client.key + c.server.cert);
  cases.push(
    [{ "ssl.keystore.location": encryptedKeystore, "ssl.key.password": "wrong" }, /invalid value for ssl\.key\.password/],
    [{ "ssl.keystore.location": encryptedKeystore }, /invalid value for ssl\.key\.password/],
    [{ "ssl.keystore.location": mismatched }, /invalid value for ssl\.keystore\.location: listener SSL: .*does not belong/],
    [{ "ssl.cipher.suites": "NOPE_SUITE" }, /invalid value for ssl\.cipher\.suites/],
  );
  for (const [extra, pattern] of cases) {
    await assert.rejects(startBroker(sslBroker(extra)), pattern, JSON.stringify(extra));
  }
  await withBroker(sslBroker({ "ssl.keystore.location": encryptedKeystore, "ssl.key.password": "right" }), async (b) => {
    (await KafkaConnection.connect(platform, { host: "127.0.0.1", port: b.port, tls: clientTls() })).close();
  });
  // Inline PEM (KIP-651) instead of a file works.
  const inline = sslBroker({ "ssl.keystore.certificate.chain": c.server.cert, "ssl.keystore.key": c.server.key });
  delete (inline as Record<string, string>)["ssl.keystore.location"];
  await withBroker(inline, async (b) => {
    (await KafkaConnection.connect(platform, { host: "127.0.0.1", port: b.port, tls: clientTls() })).close();
  });
});

const kcatSkip = skip || skipUnless("kcat");

function kcatSsl(withCert: boolean): string[] {
  const c = getCerts();
  const own = withCert ? ["-X", `ssl.certificate.location=${c.client.certPath}`, "-X", `ssl.key.location=${c.client.keyPath}`] : [];
  return ["-X", "security.protocol=SSL", "-X", `ssl.ca.location=${c.ca.certPath}`, ...own];
}

async function kcatRoundTrip(port: number, topic: string, auth: string[]) {
  const input = Array.from({ length: 500 }, (_, i) => `${topic}-${i}`).join("\n") + "\n";
  const p = await run("kcat", ["-b", `127.0.0.1:${port}`, ...auth, "-P", "-t", topic, "-X", "acks=all"], { input, timeoutMs: 60_000 });
  assert.equal(p.code, 0, `kcat -P ${topic}: ${p.stderr}`);
  const c = await run("kcat", ["-b", `127.0.0.1:${port}`, ...auth, "-C", "-t", topic, "-e", "-q", "-o", "beginning"], { timeoutMs: 60_000 });
  assert.equal(c.code, 0, `kcat -C ${topic}: ${c.stderr}`);
  assert.equal(c.stdout.toString(), input, topic);
}

test("kcat produces and consumes over SSL with and without a client certificate (ssl.client.auth=requested)", { skip: kcatSkip }, async () => {
  await withBroker(sslBroker({ "ssl.client.auth": "requested" }), async (b, log) => {
    await kcatRoundTrip(b.port, "kcat-ssl-anon", kcatSsl(false));
    await kcatRoundTrip(b.port, "kcat-ssl-cert", kcatSsl(true));
    const principals = new Set(log.lines.filter((l) => l.msg === "authenticated by client certificate").map((l) => l.fields.principal));
    assert.deepEqual([...principals], ["User:CN=alice,O=strand,C=GB"]);
  });
});

const saslJaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";';
/** SASL_SSL for clients, and a PLAINTEXT listener to add SCRAM users on. */
function saslSslBroker() {
  return sslBroker({
    listeners: "SASL_SSL://127.0.0.1:0,INTERNAL://127.0.0.1:0",
    "listener.security.protocol.map": "SASL_SSL:SASL_SSL,INTERNAL:PLAINTEXT",
    "inter.broker.listener.name": "INTERNAL",
    "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
    "listener.name.sasl_ssl.plain.sasl.jaas.config": saslJaas,
  });
}

async function addScramUser(b: TestBroker, user: string, password: string) {
  const internal = b.broker.boundPorts.find((p) => p.name === "INTERNAL")!.port;
  const admin = await WireClient.connect(internal);
  await alterScram(admin, [await scramUpsertion(user, "SCRAM-SHA-512", password)]);
  admin.close();
  // Every broker learns of a credential through the change notification, a moment later.
  const deadline = Date.now() + 10_000;
  const port = b.broker.boundPorts.find((p) => p.name === "SASL_SSL")!.port;
  for (;;) {
    const ok = await KafkaConnection.connect(platform, { host: "127.0.0.1", port, tls: clientTls(), sasl: { mechanism: "SCRAM-SHA-512", username: user, password } })
      .then((k) => (k.close(), true), () => false);
    if (ok) return port;
    assert.ok(Date.now() < deadline, `SCRAM user ${user} can log in within 10 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test("kcat over SASL_SSL with PLAIN and SCRAM-SHA-512; a wrong password fails", { skip: kcatSkip }, async () => {
  await withBroker(saslSslBroker(), async (b, log) => {
    const port = await addScramUser(b, "carol", "carol-secret");
    const c = getCerts();
    const sasl = (mech: string, user: string, pw: string) => [
      "-X", "security.protocol=SASL_SSL", "-X", `ssl.ca.location=${c.ca.certPath}`,
      "-X", `sasl.mechanisms=${mech}`, "-X", `sasl.username=${user}`, "-X", `sasl.password=${pw}`,
    ];
    await kcatRoundTrip(port, "kcat-sasl-ssl-plain", sasl("PLAIN", "alice", "alice-secret"));
    await kcatRoundTrip(port, "kcat-sasl-ssl-scram", sasl("SCRAM-SHA-512", "carol", "carol-secret"));
    const wrong = await run("kcat", ["-b", `127.0.0.1:${port}`, ...sasl("PLAIN", "alice", "nope"), "-L", "-m", "5"], { timeoutMs: 60_000 });
    assert.notEqual(wrong.code, 0);
    const principals = new Set(log.lines.filter((l) => l.msg === "authenticated").map((l) => l.fields.principal));
    assert.ok(principals.has("User:alice") && principals.has("User:carol"), [...principals].join(","));
  });
});

test("kafkajs produces and consumes over SSL (client certificate required) and SASL_SSL with PLAIN and SCRAM-SHA-512", { skip }, async () => {
  const c = getCerts();
  await withBroker(sslBroker({ "ssl.client.auth": "required" }), async (b, log) => {
    const kafka = new Kafka({
      brokers: [`localhost:${b.port}`],
      clientId: "kjs-ssl",
      ssl: { ca: [c.ca.cert], cert: c.client.cert, key: c.client.key },
      logLevel: logLevel.NOTHING,
    });
    await kafkajsRoundTrip(kafka, "kjs-ssl");
    assert.ok(log.lines.some((l) => l.fields.principal === "User:CN=alice,O=strand,C=GB"));
  });
  await withBroker(saslSslBroker(), async (b) => {
    const port = await addScramUser(b, "erin", "erin-secret");
    for (const sasl of [{ mechanism: "plain" as const, username: "alice", password: "alice-secret" }, { mechanism: "scram-sha-512" as const, username: "erin", password: "erin-secret" }]) {
      const kafka = new Kafka({ brokers: [`localhost:${port}`], clientId: `kjs-${sasl.mechanism}`, ssl: { ca: [c.ca.cert] }, sasl, logLevel: logLevel.NOTHING });
      await kafkajsRoundTrip(kafka, `kjs-sasl-ssl-${sasl.mechanism}`);
    }
  });
});

const pythonClients: [string, string | false][] = [["kafka-python", skip || skipUnless("kafka")], ["confluent", skip || skipUnless("confluent_kafka")]];
for (const [client, pySkip] of pythonClients) {
  test(`${client} produces and reads back over SSL (with and without a client certificate) and SASL_SSL with PLAIN and SCRAM-SHA-512`, { skip: pySkip }, async () => {
    const c = getCerts();
    const script = new URL("./py/sasl_roundtrip.py", import.meta.url).pathname;
    const roundTrip = async (port: number, topic: string, mechanism: string, user: string, password: string, protocol: string, cert: string[]) => {
      const r = await run("/usr/bin/python3", [script, client, `localhost:${port}`, topic, mechanism, user, password, "300", protocol, c.ca.certPath, ...cert], { timeoutMs: 120_000 });
      const last = r.stdout.toString().trim().split("\n").pop() ?? "";
      assert.match(last, /^\{/, `${client} ${protocol} ${mechanism}: no summary; stderr ${r.stderr.slice(-1500)}`);
      const s = JSON.parse(last);
      assert.equal(s.error, null, `${client} ${protocol} ${mechanism}: ${s.error}`);
      assert.deepEqual([s.sent, s.received, s.ok], [300, 300, true], `${client} ${protocol} ${mechanism}`);
    };
    await withBroker(sslBroker({ "ssl.client.auth": "requested" }), async (b, log) => {
      await roundTrip(b.port, `${client}-ssl`, "-", "", "", "SSL", []);
      await roundTrip(b.port, `${client}-ssl-cert`, "-", "", "", "SSL", [c.client.certPath, c.client.keyPath]);
      assert.ok(log.lines.some((l) => l.fields.principal === "User:CN=alice,O=strand,C=GB"));
    });
    await withBroker(saslSslBroker(), async (b) => {
      const port = await addScramUser(b, "py", "py-secret");
      await roundTrip(port, `${client}-sasl-ssl-plain`, "PLAIN", "alice", "alice-secret", "SASL_SSL", []);
      await roundTrip(port, `${client}-sasl-ssl-scram`, "SCRAM-SHA-512", "py", "py-secret", "SASL_SSL", []);
    });
  });
}

test("the tools take an SSL --command-config (truststore, client keystore) and a SASL_SSL one", { skip }, async () => {
  const c = getCerts();
  await withBroker(sslBroker({ "ssl.client.auth": "required" }), async (b, log) => {
    const props = join(c.dir.dir, "client-ssl.properties");
    writeFileSync(props, `security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=${c.ca.certPath}\nssl.keystore.type=PEM\nssl.keystore.location=${c.clientKeystore}\n`);
    const bs = ["--bootstrap-server", `localhost:${b.port}`, "--command-config", props];
    await strandOk(["topics", "create", ...bs, "--topic", "tool-ssl", "--partitions", "1"]);
    const input = lines(50, "line-");
    await strandOk(["produce", ...bs, "--topic", "tool-ssl", "--partition", "0"], { input });
    const out = await strandOk(["consume", ...bs, "--topic", "tool-ssl", "--partition", "0", "--offset", "earliest", "--max-messages", "50"]);
    assert.equal(out, input);
    assert.ok(log.lines.some((l) => l.fields.principal === "User:CN=alice,O=strand,C=GB"));
    // Without the client keystore the required client certificate is missing: the tool fails, in one line.
    const noCert = join(c.dir.dir, "client-nocert.properties");
    writeFileSync(noCert, `security.protocol=SSL\nssl.truststore.location=${c.ca.certPath}\n`);
    const refused = await strand(["topics", "list", "--bootstrap-server", `localhost:${b.port}`, "--command-config", noCert, "--request-timeout-ms", "5000"]);
    assert.equal(refused.code, 1, refused.stderr);
    // A client keystore strand cannot read is a bad command line (exit 2) naming the key.
    const jks = join(c.dir.dir, "client-jks.properties");
    writeFileSync(jks, `security.protocol=SSL\nssl.keystore.type=JKS\nssl.keystore.location=/x.jks\n`);
    const bad = await strand(["topics", "list", "--bootstrap-server", `localhost:${b.port}`, "--command-config", jks]);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /ssl\.keystore\.type: JKS is not supported/);
  });
  await withBroker(saslSslBroker(), async (b) => {
    const port = b.broker.boundPorts.find((p) => p.name === "SASL_SSL")!.port;
    const props = join(c.dir.dir, "client-sasl-ssl.properties");
    writeFileSync(props, `security.protocol=SASL_SSL\nssl.truststore.location=${c.ca.certPath}\nsasl.mechanism=PLAIN\n` +
      `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";\n`);
    await strandOk(["topics", "create", "--bootstrap-server", `localhost:${port}`, "--command-config", props, "--topic", "tool-sasl-ssl", "--partitions", "1"]);
  });
});
