// The SASL phase of a connection (src/broker/sasl_authenticator.ts), frame by frame: what Kafka's
// SaslServerAuthenticator accepts in each state, PLAIN and SCRAM over SaslAuthenticate and as raw
// tokens (SaslHandshake v0), failures with Kafka's codes and messages, re-authentication and
// session expiry. The whole path over real sockets is tested where the listener is wired.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type AuthAction, SaslServerAuthenticator, type SaslServerSettings } from "../../src/broker/sasl_authenticator.ts";
import { ApiVersionsApi, MetadataApi, SaslAuthenticateApi, SaslHandshakeApi } from "../../src/protocol/api/mod.ts";
import { plainToken, ScramClientExchange, scramCredentialFromPassword, scramSha256, scramSha512 } from "../../src/protocol/sasl/mod.ts";
import type { ScramCredential } from "../../src/protocol/sasl/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { decodeResponse, encodeRequest } from "../helpers/wire.ts";

const enc = new TextEncoder();
const strip = (f: Uint8Array) => f.subarray(4);

async function settings(over: Partial<SaslServerSettings> = {}, clock = { now: 0 }): Promise<SaslServerSettings> {
  const creds = new Map<string, ScramCredential>([
    ["alice/SCRAM-SHA-256", await scramCredentialFromPassword(scramSha256, "alice-secret", enc.encode("salt-a"), 4096)],
    ["alice/SCRAM-SHA-512", await scramCredentialFromPassword(scramSha512, "alice-secret", enc.encode("salt-b"), 4096)],
  ]);
  const plain = new Map([["alice", "alice-secret"], ["bob", "bob-secret"]]);
  let n = 0;
  return {
    mechanisms: ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"],
    plainPassword: (u) => plain.get(u),
    scramCredential: (u, m) => creds.get(`${u}/${m.name}`),
    reauthMs: 0,
    maxReceiveBytes: 524_288,
    nonce: () => `servernonce${++n}`,
    monotonicMs: () => clock.now,
    ...over,
  };
}

function handshake(version: number, mechanism: string, correlationId = 1): Uint8Array {
  return strip(encodeRequest(SaslHandshakeApi, version, correlationId, { mechanism }));
}

function authenticate(version: number, token: Uint8Array, correlationId = 2): Uint8Array {
  return strip(encodeRequest(SaslAuthenticateApi, version, correlationId, { authBytes: token }));
}

function answer(api: typeof SaslHandshakeApi, version: number, action: AuthAction) {
  assert.ok("frame" in action && action.frame !== null, `an answer, got ${JSON.stringify(action)}`);
  return decodeResponse(api, version, strip(action.frame)).body;
}

test("PLAIN over SaslHandshake v1 and SaslAuthenticate v2, after ApiVersions: authenticated as User:alice", async () => {
  const a = new SaslServerAuthenticator(await settings());
  assert.deepEqual(await a.receive(strip(encodeRequest(ApiVersionsApi, 3, 0, { clientSoftwareName: "t", clientSoftwareVersion: "1" }))), { kind: "dispatch" });
  const hs = await a.receive(handshake(1, "PLAIN"));
  assert.equal(hs.kind, "reply");
  assert.deepEqual(answer(SaslHandshakeApi, 1, hs), { errorCode: 0, mechanisms: ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] });
  const done = await a.receive(authenticate(2, plainToken("alice", "alice-secret")));
  assert.equal(done.kind, "authenticated");
  assert.equal((done as { principal: string }).principal, "User:alice");
  const body = answer(SaslAuthenticateApi, 2, done);
  assert.equal(body.errorCode, 0);
  assert.equal(body.sessionLifetimeMs, 0n);
  assert.equal(a.authenticated, true);
  // From now on, requests are the dispatcher's.
  assert.deepEqual(await a.receive(strip(encodeRequest(MetadataApi, 9, 3, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }))), { kind: "dispatch" });
});

for (const mech of [scramSha256, scramSha512]) {
  test(`${mech.name} over SaslAuthenticate v1: two round trips, and the client verifies the server`, async () => {
    const a = new SaslServerAuthenticator(await settings());
    assert.equal((await a.receive(handshake(1, mech.name))).kind, "reply");
    const client = new ScramClientExchange(mech, "alice", "alice-secret", "clientnonce");
    const first = await a.receive(authenticate(1, client.first()));
    assert.equal(first.kind, "reply");
    const serverFirst = answer(SaslAuthenticateApi, 1, first).authBytes as Uint8Array;
    const final = await a.receive(authenticate(1, (await client.final(serverFirst)) as Uint8Array, 3));
    assert.equal(final.kind, "authenticated");
    assert.equal(client.verify(answer(SaslAuthenticateApi, 1, final).authBytes as Uint8Array), null);
  });
}

test("SaslHandshake v0 then raw tokens: PLAIN and SCRAM, answers size-prefixed with no Kafka header", async () => {
  const a = new SaslServerAuthenticator(await settings());
  assert.equal((await a.receive(handshake(0, "PLAIN"))).kind, "reply");
  const done = await a.receive(plainToken("bob", "bob-secret"));
  assert.equal(done.kind, "authenticated");
  assert.deepEqual((done as { frame: Uint8Array }).frame, new Uint8Array([0, 0, 0, 0]));

  const s = new SaslServerAuthenticator(await settings());
  assert.equal((await s.receive(handshake(0, "SCRAM-SHA-256"))).kind, "reply");
  const client = new ScramClientExchange(scramSha256, "alice", "alice-secret", "cn");
  const first = await s.receive(client.first());
  assert.equal(first.kind, "reply");
  const serverFirst = strip((first as { frame: Uint8Array }).frame);
  assert.match(new TextDecoder().decode(serverFirst), /^r=cnservernonce\d+,s=/);
  const final = await s.receive((await client.final(serverFirst)) as Uint8Array);
  assert.equal(final.kind, "authenticated");
  assert.equal(client.verify(strip((final as { frame: Uint8Array }).frame)), null);
  // A raw-token failure has no Kafka answer: the connection just closes, after the delay.
  const f = new SaslServerAuthenticator(await settings());
  await f.receive(handshake(0, "PLAIN"));
  const failed = await f.receive(plainToken("bob", "wrong"));
  assert.deepEqual({ kind: failed.kind, frame: (failed as { frame: unknown }).frame, delay: (failed as { delay: boolean }).delay }, { kind: "fail", frame: null, delay: true });
});

test("a wrong password answers SASL_AUTHENTICATION_FAILED with Kafka's message, to be sent after the delay, then nothing more", async () => {
  const a = new SaslServerAuthenticator(await settings());
  await a.receive(handshake(1, "PLAIN"));
  const r = await a.receive(authenticate(1, plainToken("alice", "nope")));
  assert.equal(r.kind, "fail");
  assert.equal((r as { delay: boolean }).delay, true);
  const body = answer(SaslAuthenticateApi, 1, r);
  assert.equal(body.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
  assert.equal(body.errorMessage, "Authentication failed: Invalid username or password");
  assert.equal((await a.receive(authenticate(1, plainToken("alice", "alice-secret")))).kind, "fail");
  assert.equal(a.authenticated, false);

  const s = new SaslServerAuthenticator(await settings());
  await s.receive(handshake(1, "SCRAM-SHA-256"));
  const unknown = await s.receive(authenticate(1, new ScramClientExchange(scramSha256, "mallory", "x", "n").first()));
  assert.equal(answer(SaslAuthenticateApi, 1, unknown).errorMessage,
    "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256");
});

test("an unknown mechanism is answered UNSUPPORTED_SASL_MECHANISM with the enabled list, then closed", async () => {
  const a = new SaslServerAuthenticator(await settings({ mechanisms: ["SCRAM-SHA-512"] }));
  const r = await a.receive(handshake(1, "PLAIN"));
  assert.equal(r.kind, "fail");
  assert.equal((r as { delay: boolean }).delay, false);
  assert.deepEqual(answer(SaslHandshakeApi, 1, r), { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms: ["SCRAM-SHA-512"] });
  const g = await new SaslServerAuthenticator(await settings()).receive(handshake(1, "GSSAPI"));
  assert.equal(answer(SaslHandshakeApi, 1, g).errorCode, ErrorCode.UNSUPPORTED_SASL_MECHANISM);
});

test("requests out of turn close the connection without an answer", async () => {
  const metadata = strip(encodeRequest(MetadataApi, 9, 3, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }));
  const versions = strip(encodeRequest(ApiVersionsApi, 3, 0, { clientSoftwareName: "t", clientSoftwareVersion: "1" }));
  const cases: [string, Uint8Array[]][] = [
    ["Metadata before authenticating", [metadata]],
    ["a second ApiVersions", [versions, versions]],
    ["SaslAuthenticate before SaslHandshake", [authenticate(1, plainToken("alice", "alice-secret"))]],
    ["Metadata between SaslHandshake and SaslAuthenticate", [handshake(1, "PLAIN"), metadata]],
    ["garbage", [enc.encode("GET / HTTP/1.1\r\n\r\n")]],
    ["a short frame", [new Uint8Array(3)]],
    ["a SaslHandshake that does not decode", [new Uint8Array([0, 17, 0, 1, 0, 0, 0, 1, 0, 0, 0x7f, 0xff])]],
    ["SaslHandshake v9", [handshake(1, "PLAIN").map((b, i) => (i === 3 ? 9 : b))]],
  ];
  for (const [what, frames] of cases) {
    const a = new SaslServerAuthenticator(await settings());
    let last: AuthAction = { kind: "dispatch" };
    for (const f of frames) last = await a.receive(f);
    assert.equal(last.kind, "fail", what);
    assert.equal((last as { frame: unknown }).frame, null, what);
    assert.equal(a.authenticated, false, what);
  }
});

test("a token above the pre-authentication limit closes the connection", async () => {
  const a = new SaslServerAuthenticator(await settings());
  await a.receive(handshake(0, "PLAIN"));
  const r = await a.receive(new Uint8Array(524_289));
  assert.equal(r.kind, "fail");
  assert.match((r as { reason: string }).reason, /SASL token of 524289 bytes/);
});

test("connections.max.reauth.ms: the lifetime is granted, a late request closes, re-authentication renews and must keep the principal", async () => {
  const clock = { now: 1_000 };
  const a = new SaslServerAuthenticator(await settings({ reauthMs: 60_000 }, clock));
  await a.receive(handshake(1, "PLAIN"));
  const done = await a.receive(authenticate(1, plainToken("alice", "alice-secret")));
  assert.equal(answer(SaslAuthenticateApi, 1, done).sessionLifetimeMs, 60_000n);
  const metadata = strip(encodeRequest(MetadataApi, 9, 3, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }));
  clock.now = 50_000;
  assert.equal((await a.receive(metadata)).kind, "dispatch");
  // Re-authenticate before expiry, same mechanism and user: renewed.
  assert.equal((await a.receive(handshake(1, "PLAIN", 7))).kind, "reply");
  assert.equal((await a.receive(authenticate(1, plainToken("alice", "alice-secret"), 8))).kind, "authenticated");
  clock.now = 100_000;
  assert.equal((await a.receive(metadata)).kind, "dispatch", "renewed until 110,000");
  clock.now = 110_000;
  const late = await a.receive(metadata);
  assert.equal(late.kind, "fail");
  assert.match((late as { reason: string }).reason, /session expired/);

  // Another user on re-authentication: refused, as Kafka refuses it.
  const b = new SaslServerAuthenticator(await settings({ reauthMs: 60_000 }, clock));
  await b.receive(handshake(1, "PLAIN"));
  await b.receive(authenticate(1, plainToken("alice", "alice-secret")));
  await b.receive(handshake(1, "PLAIN"));
  const other = await b.receive(authenticate(1, plainToken("bob", "bob-secret")));
  assert.equal(other.kind, "fail");
  assert.match(answer(SaslAuthenticateApi, 1, other).errorMessage as string, /Cannot change principals during re-authentication from User:alice: User:bob/);
  // Another mechanism on re-authentication: refused at the handshake.
  const c = new SaslServerAuthenticator(await settings({ reauthMs: 60_000 }, clock));
  await c.receive(handshake(1, "PLAIN"));
  await c.receive(authenticate(1, plainToken("alice", "alice-secret")));
  const mech = await c.receive(handshake(1, "SCRAM-SHA-256"));
  assert.equal(answer(SaslHandshakeApi, 1, mech).errorCode, ErrorCode.UNSUPPORTED_SASL_MECHANISM);
});

