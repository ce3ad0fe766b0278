// SASL_PLAINTEXT end to end: a broker whose only listener speaks SASL, PLAIN users from the
// listener's JAAS config, SCRAM-SHA-256/512 users added and removed at run time through
// AlterUserScramCredentials; the raw wire (what each state accepts, Kafka's error codes, the
// failed-login delay), then kcat (librdkafka) and kafkajs logging in with each mechanism.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Kafka, logLevel } from "kafkajs";
import {
  ApiVersionsApi,
  DescribeUserScramCredentialsApi,
  MetadataApi,
  SaslAuthenticateApi,
  SaslHandshakeApi,
} from "../../src/protocol/api/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { kafkajsRoundTrip } from "../helpers/kafkajs_roundtrip.ts";
import { alterScram, saslLogin, scramUpsertion } from "../helpers/sasl.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { encodeRequest, WireClient } from "../helpers/wire.ts";

const jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" ' +
  'user_admin="admin-secret" user_alice="alice-secret";';
const saslBroker = {
  listeners: "SASL_PLAINTEXT://127.0.0.1:0",
  "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
  "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas,
  "connection.failed.authentication.delay.ms": "300",
};
/**
 * Logs in until the answer has errorCode `expected`: every broker (this one too) learns of a
 * credential change through the change notification, a moment after AlterUserScramCredentials.
 */
async function untilLogin(b: TestBroker, mechanism: string, user: string, password: string, expected: number) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const c = await WireClient.connect(b.broker.port);
    const r = await saslLogin(c, mechanism, user, password);
    c.close();
    if (r.errorCode === expected) return;
    assert.ok(Date.now() < deadline, `${mechanism} login of ${user} answers ${expected} within 10 s (last: ${r.errorCode})`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

const metadataAll = { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false };

async function withSaslBroker(fn: (b: TestBroker) => Promise<void>, extra: Record<string, string> = {}) {
  const b = await startBroker({ ...saslBroker, ...extra });
  try {
    await fn(b);
  } finally {
    await b.stop();
  }
}

async function loggedIn(b: TestBroker, mechanism: string, user: string, password: string): Promise<WireClient> {
  const c = await WireClient.connect(b.broker.port);
  const r = await saslLogin(c, mechanism, user, password);
  assert.equal(r.errorCode, 0, `${mechanism} login of ${user}: ${r.errorMessage}`);
  return c;
}

test("SASL_PLAINTEXT: PLAIN login, then requests are served; ApiVersions first lists SaslHandshake and SaslAuthenticate", async () => {
  await withSaslBroker(async (b) => {
    const c = await WireClient.connect(b.broker.port);
    const versions = await c.request(ApiVersionsApi, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" });
    const keys = (versions.apiKeys as { apiKey: number }[]).map((a) => a.apiKey);
    for (const k of [17, 36, 50, 51]) assert.ok(keys.includes(k), `API ${k} advertised`);
    assert.equal((await saslLogin(c, "PLAIN", "alice", "alice-secret")).errorCode, 0);
    const md = await c.request(MetadataApi, 9, metadataAll);
    assert.equal((md.brokers as unknown[]).length, 1);
    c.close();
  });
});

test("SASL_PLAINTEXT: a wrong password answers SASL_AUTHENTICATION_FAILED after the delay and closes; requests before login close at once", async () => {
  await withSaslBroker(async (b) => {
    const c = await WireClient.connect(b.broker.port);
    const started = Date.now();
    const r = await saslLogin(c, "PLAIN", "alice", "wrong");
    const tookMs = Date.now() - started;
    assert.equal(r.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
    assert.equal(r.errorMessage, "Authentication failed: Invalid username or password");
    assert.ok(tookMs >= 250, `the answer waited connection.failed.authentication.delay.ms (${tookMs} ms)`);
    assert.equal(await c.waitClosed(), true);

    const early = await WireClient.connect(b.broker.port);
    await early.send(MetadataApi, 9, metadataAll);
    assert.equal(await early.waitClosed(), true, "Metadata before SaslHandshake closes the connection");
    assert.equal(early.pendingBytes, 0, "with no answer");

    const unknown = await WireClient.connect(b.broker.port);
    const hs = await unknown.request(SaslHandshakeApi, 1, { mechanism: "GSSAPI" });
    assert.equal(hs.errorCode, ErrorCode.UNSUPPORTED_SASL_MECHANISM);
    assert.deepEqual(hs.mechanisms, ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]);
    assert.equal(await unknown.waitClosed(), true);

    // A token larger than the pre-authentication limit: the frame is refused unread.
    const huge = await WireClient.connect(b.broker.port);
    await huge.request(SaslHandshakeApi, 1, { mechanism: "PLAIN" });
    await huge.write(encodeRequest(SaslAuthenticateApi, 2, 9, { authBytes: new Uint8Array(600_000) })).catch(() => {});
    assert.equal(await huge.waitClosed(), true);

    // The broker still serves a good login.
    (await loggedIn(b, "PLAIN", "admin", "admin-secret")).close();
  });
});

test("sasl.server.max.receive.size: a token above it closes the connection before login; once logged in, frames up to socket.request.max.bytes are read", async () => {
  await withSaslBroker(async (b) => {
    const big = await WireClient.connect(b.broker.port);
    await big.request(SaslHandshakeApi, 1, { mechanism: "PLAIN" });
    await big.write(encodeRequest(SaslAuthenticateApi, 2, 9, { authBytes: new Uint8Array(5_000) })).catch(() => {});
    assert.equal(await big.waitClosed(), true, "a 5,000-byte token is above the configured 4,096");
    const c = await loggedIn(b, "PLAIN", "alice", "alice-secret");
    // 20,000 bytes of topic names in one Metadata request: past the pre-login limit, served now.
    const names = Array.from({ length: 200 }, (_, i) => `t${String(i).padStart(98, "0")}`);
    const md = await c.request(MetadataApi, 9, { ...metadataAll, topics: names.map((name) => ({ name })) });
    assert.equal((md.topics as unknown[]).length, 200);
    c.close();
  }, { "sasl.server.max.receive.size": "4096" });
});

test("SCRAM users added, described, used and removed at run time with AlterUserScramCredentials", async () => {
  await withSaslBroker(async (b) => {
    const admin = await loggedIn(b, "PLAIN", "admin", "admin-secret");
    const added = await alterScram(admin, [
      await scramUpsertion("bob", "SCRAM-SHA-256", "bob-secret", 8192),
      await scramUpsertion("bob", "SCRAM-SHA-512", "bob-secret-512"),
      await scramUpsertion("o,dd=user", "SCRAM-SHA-256", "odd"),
    ]);
    assert.deepEqual(added.map((r) => [r.user, r.errorCode]).sort(), [["bob", 0], ["o,dd=user", 0]]);
    const described = await admin.request(DescribeUserScramCredentialsApi, 0, { users: null });
    assert.equal(described.errorCode, 0);
    assert.deepEqual(described.results, [
      { user: "bob", errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: 1, iterations: 8192 }, { mechanism: 2, iterations: 4096 }] },
      { user: "o,dd=user", errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: 1, iterations: 4096 }] },
    ]);
    await untilLogin(b, "SCRAM-SHA-256", "bob", "bob-secret", 0);
    (await loggedIn(b, "SCRAM-SHA-512", "bob", "bob-secret-512")).close();
    (await loggedIn(b, "SCRAM-SHA-256", "o,dd=user", "odd")).close();
    const wrong = await WireClient.connect(b.broker.port);
    const r = await saslLogin(wrong, "SCRAM-SHA-512", "bob", "bob-secret");
    assert.equal(r.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
    assert.equal(r.errorMessage, "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512");

    // Kafka's refusals.
    const bad = await alterScram(admin, [
      await scramUpsertion("few", "SCRAM-SHA-256", "x", 1000),
      await scramUpsertion("many", "SCRAM-SHA-256", "x", 20_000),
      { ...(await scramUpsertion("mech", "SCRAM-SHA-256", "x")), mechanism: 7 },
      await scramUpsertion("", "SCRAM-SHA-256", "x"),
      await scramUpsertion("twice", "SCRAM-SHA-256", "x"),
      await scramUpsertion("twice", "SCRAM-SHA-256", "y"),
    ], [{ name: "ghost", mechanism: 1 }]);
    const byUser = Object.fromEntries(bad.map((x) => [x.user, [x.errorCode, x.errorMessage]]));
    assert.deepEqual(byUser, {
      few: [ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"],
      many: [ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"],
      mech: [ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"],
      "": [ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"],
      twice: [ErrorCode.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request"],
      ghost: [ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"],
    });
    const missing = await admin.request(DescribeUserScramCredentialsApi, 0, { users: [{ name: "nobody" }, { name: "bob" }, { name: "bob" }] });
    assert.deepEqual((missing.results as { user: string; errorCode: number }[]).map((x) => [x.user, x.errorCode]), [
      ["nobody", ErrorCode.RESOURCE_NOT_FOUND],
      ["bob", ErrorCode.DUPLICATE_RESOURCE],
    ]);

    // Removing bob's SHA-256 credential: that login stops working, the SHA-512 one still works.
    assert.deepEqual((await alterScram(admin, [], [{ name: "bob", mechanism: 1 }])).map((x) => x.errorCode), [0]);
    await untilLogin(b, "SCRAM-SHA-256", "bob", "bob-secret", ErrorCode.SASL_AUTHENTICATION_FAILED);
    (await loggedIn(b, "SCRAM-SHA-512", "bob", "bob-secret-512")).close();
    admin.close();
  });
});

test("SASL credentials survive a restart: SCRAM users are read from the registry before the first login", async () => {
  await withSaslBroker(async (b) => {
    const admin = await loggedIn(b, "PLAIN", "admin", "admin-secret");
    assert.equal((await alterScram(admin, [await scramUpsertion("carol", "SCRAM-SHA-512", "carol-secret")]))[0].errorCode, 0);
    admin.close();
    await b.restart();
    (await loggedIn(b, "SCRAM-SHA-512", "carol", "carol-secret")).close();
  });
});

const kcatSkip = skipUnless("kcat");

function kcatSasl(mechanism: string, user: string, password: string): string[] {
  return ["-X", "security.protocol=SASL_PLAINTEXT", "-X", `sasl.mechanisms=${mechanism}`, "-X", `sasl.username=${user}`, "-X", `sasl.password=${password}`];
}

test("kcat produces and consumes over SASL_PLAINTEXT with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512; a wrong password and a plaintext client fail", { skip: kcatSkip }, async () => {
  await withSaslBroker(async (b) => {
    const admin = await loggedIn(b, "PLAIN", "admin", "admin-secret");
    await alterScram(admin, [await scramUpsertion("dave", "SCRAM-SHA-256", "dave-256"), await scramUpsertion("dave", "SCRAM-SHA-512", "dave-512")]);
    admin.close();
    await untilLogin(b, "SCRAM-SHA-512", "dave", "dave-512", 0);
    const logins: [string, string, string][] = [["PLAIN", "alice", "alice-secret"], ["SCRAM-SHA-256", "dave", "dave-256"], ["SCRAM-SHA-512", "dave", "dave-512"]];
    for (const [mechanism, user, password] of logins) {
      const topic = `sasl-${mechanism.toLowerCase()}`;
      const input = Array.from({ length: 1000 }, (_, i) => `${mechanism}-${i}`).join("\n") + "\n";
      const p = await run("kcat", ["-b", `127.0.0.1:${b.broker.port}`, ...kcatSasl(mechanism, user, password), "-P", "-t", topic, "-X", "acks=all"], { input, timeoutMs: 60_000 });
      assert.equal(p.code, 0, `kcat -P with ${mechanism}: ${p.stderr}`);
      const c = await run("kcat", ["-b", `127.0.0.1:${b.broker.port}`, ...kcatSasl(mechanism, user, password), "-C", "-t", topic, "-e", "-q", "-o", "beginning"], { timeoutMs: 60_000 });
      assert.equal(c.code, 0, `kcat -C with ${mechanism}: ${c.stderr}`);
      assert.equal(c.stdout.toString(), input, mechanism);
    }
    const wrong = await run("kcat", ["-b", `127.0.0.1:${b.broker.port}`, ...kcatSasl("SCRAM-SHA-256", "dave", "nope"), "-L", "-m", "5"], { timeoutMs: 60_000 });
    assert.notEqual(wrong.code, 0, "kcat with a wrong password fails");
    assert.match(wrong.stderr, /[Aa]uthentication/);
    const plain = await run("kcat", ["-b", `127.0.0.1:${b.broker.port}`, "-L", "-m", "3"], { timeoutMs: 60_000 });
    assert.notEqual(plain.code, 0, "kcat without SASL cannot talk to a SASL listener");
  });
});

test("kafkajs produces and consumes over SASL_PLAINTEXT with PLAIN and SCRAM-SHA-512, and reports a wrong password", async () => {
  await withSaslBroker(async (b) => {
    const admin = await loggedIn(b, "PLAIN", "admin", "admin-secret");
    await alterScram(admin, [await scramUpsertion("erin", "SCRAM-SHA-512", "erin-secret")]);
    admin.close();
    await untilLogin(b, "SCRAM-SHA-512", "erin", "erin-secret", 0);
    const logins = [
      { mechanism: "plain" as const, username: "alice", password: "alice-secret" },
      { mechanism: "scram-sha-512" as const, username: "erin", password: "erin-secret" },
    ];
    for (const sasl of logins) {
      const kafka = new Kafka({ brokers: [`127.0.0.1:${b.broker.port}`], clientId: `sasl-${sasl.mechanism}`, sasl, logLevel: logLevel.NOTHING });
      await kafkajsRoundTrip(kafka, `kjs-${sasl.mechanism}`, `g-${sasl.mechanism}`);
    }
    const bad = new Kafka({ brokers: [`127.0.0.1:${b.broker.port}`], clientId: "bad", sasl: { mechanism: "scram-sha-512", username: "erin", password: "x" }, logLevel: logLevel.NOTHING, retry: { retries: 0 } });
    const a = bad.admin();
    await assert.rejects(a.connect(), /SASL SCRAM SHA512 authentication failed|Authentication failed/i);
  });
});

const pythonClients: [string, string | false][] = [["kafka-python", skipUnless("kafka")], ["confluent", skipUnless("confluent_kafka")]];
for (const [client, skip] of pythonClients) {
  test(`${client} produces and reads back over SASL_PLAINTEXT with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512`, { skip }, async () => {
    await withSaslBroker(async (b) => {
      const admin = await loggedIn(b, "PLAIN", "admin", "admin-secret");
      await alterScram(admin, [await scramUpsertion("py", "SCRAM-SHA-256", "py-256"), await scramUpsertion("py", "SCRAM-SHA-512", "py-512")]);
      admin.close();
      await untilLogin(b, "SCRAM-SHA-512", "py", "py-512", 0);
      const script = new URL("./py/sasl_roundtrip.py", import.meta.url).pathname;
      for (const [mechanism, user, password] of [["PLAIN", "alice", "alice-secret"], ["SCRAM-SHA-256", "py", "py-256"], ["SCRAM-SHA-512", "py", "py-512"]]) {
        const topic = `${client}-${mechanism.toLowerCase()}`;
        const r = await run("/usr/bin/python3", [script, client, `127.0.0.1:${b.broker.port}`, topic, mechanism, user, password, "1000"], { timeoutMs: 120_000 });
        const last = r.stdout.toString().trim().split("\n").pop() ?? "";
        assert.match(last, /^\{/, `${client} ${mechanism}: no summary; stderr ${r.stderr.slice(-1500)}`);
        const s = JSON.parse(last);
        assert.deepEqual({ ok: s.ok, received: s.received, error: s.error }, { ok: true, received: 1000, error: null }, `${client} ${mechanism}: ${last}`);
      }
      // A wrong password fails the client's first request.
      const r = await run("/usr/bin/python3", [script, client, `127.0.0.1:${b.broker.port}`, "nope", "SCRAM-SHA-512", "py", "wrong", "1"], { timeoutMs: 120_000 });
      const s = JSON.parse(r.stdout.toString().trim().split("\n").pop() ?? "{}");
      assert.equal(s.ok, false, `${client} with a wrong password: ${JSON.stringify(s)}`);
    });
  });
}
