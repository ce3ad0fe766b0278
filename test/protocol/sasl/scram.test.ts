// SCRAM (src/protocol/sasl/scram.ts): RFC 7677's published exchange, both ends against each other
// for SHA-256 and SHA-512, Kafka's credential string, and every way a client can get it wrong.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type ScramCredential,
  scramCredentialFromPassword,
  scramCredentialFromSaltedPassword,
  scramCredentialFromString,
  scramCredentialToString,
  ScramClientExchange,
  type ScramMechanism,
  ScramServerExchange,
  scramSaslName,
  scramSha256,
  scramSha512,
  scramUsername,
} from "../../../src/protocol/sasl/mod.ts";
import { base64Decode } from "../../../src/util/bytes.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const rfcSalt = base64Decode("W22ZaJ0SNY7soEsUEjb6gQ==")!;
const rfcServerNonce = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";

test("RFC 7677's SCRAM-SHA-256 exchange: the server answers and verifies exactly as published", async () => {
  const cred = await scramCredentialFromPassword(scramSha256, "pencil", rfcSalt, 4096);
  const server = new ScramServerExchange(scramSha256, (u) => (u === "user" ? cred : undefined), rfcServerNonce);
  const first = await server.evaluate(enc.encode("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"));
  assert.equal(first.kind, "challenge");
  assert.equal(
    dec.decode((first as { token: Uint8Array }).token),
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
  );
  const final = await server.evaluate(enc.encode(
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
  ));
  assert.equal(final.kind, "complete");
  assert.equal(dec.decode((final as { token: Uint8Array }).token), "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
  assert.equal((final as { username: string }).username, "user");
});

test("RFC 7677's SCRAM-SHA-256 exchange: the client's tokens are the published ones", async () => {
  const client = new ScramClientExchange(scramSha256, "user", "pencil", "rOprNGfwEbeRWgbNEkqO");
  assert.equal(dec.decode(client.first()), "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
  const final = await client.final(enc.encode(`r=rOprNGfwEbeRWgbNEkqO${rfcServerNonce},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096`));
  assert.equal(
    dec.decode(final as Uint8Array),
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
  );
  assert.equal(client.verify(enc.encode("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")), null);
  assert.match(client.verify(enc.encode("v=AAAATRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="))!, /signature does not match/);
});

async function exchange(mech: ScramMechanism, cred: ScramCredential | undefined, user: string, password: string) {
  const server = new ScramServerExchange(mech, (u, m) => (u === "alice" && m === mech ? cred : undefined), "srvnonce123");
  const client = new ScramClientExchange(mech, user, password, "clinonce456");
  const first = await server.evaluate(client.first());
  if (first.kind !== "challenge") return { step: "first", result: first };
  const clientFinal = await client.final(first.token);
  assert.ok(clientFinal instanceof Uint8Array, String(clientFinal));
  const result = await server.evaluate(clientFinal);
  if (result.kind === "complete") assert.equal(client.verify(result.token), null);
  return { step: "final", result };
}

for (const mech of [scramSha256, scramSha512]) {
  test(`${mech.name}: client and server agree on the right password and refuse a wrong one`, async () => {
    const cred = await scramCredentialFromPassword(mech, "alice-secret", enc.encode("0123456789abcdef"), 4096);
    assert.equal(cred.storedKey.length, mech.keyBytes);
    const ok = await exchange(mech, cred, "alice", "alice-secret");
    assert.equal(ok.result.kind, "complete");
    const bad = await exchange(mech, cred, "alice", "wrong");
    assert.equal(bad.step, "final");
    assert.equal(bad.result.kind, "failed");
    if (bad.result.kind === "failed") {
      assert.match(bad.result.reason, /wrong password for user alice/);
      assert.equal(
        bad.result.clientMessage,
        `Authentication failed during authentication due to invalid credentials with SASL mechanism ${mech.name}`,
      );
    }
  });

  test(`${mech.name}: an unknown user fails at the first message with the same client message as a wrong password`, async () => {
    const r = await exchange(mech, undefined, "mallory", "x");
    assert.equal(r.step, "first");
    assert.equal(r.result.kind, "failed");
    if (r.result.kind === "failed") {
      assert.match(r.result.reason, /no SCRAM-SHA-\d+ credential for user mallory/);
      assert.match(r.result.clientMessage, /invalid credentials/);
    }
  });

  test(`${mech.name}: the salted-password form gives the same credential as the password form`, async () => {
    const salt = enc.encode("saltsaltsaltsalt");
    const fromPassword = await scramCredentialFromPassword(mech, "pw", salt, 8192);
    const k = await crypto.subtle.importKey("raw", enc.encode("pw"), "PBKDF2", false, ["deriveBits"]);
    const salted = new Uint8Array(await crypto.subtle.deriveBits({ name: "PBKDF2", hash: mech.hash, salt, iterations: 8192 }, k, mech.keyBytes * 8));
    const fromSalted = await scramCredentialFromSaltedPassword(mech, salted, salt, 8192);
    assert.deepEqual(fromSalted, fromPassword);
  });
}

test("Kafka's credential string round-trips and bad ones say what is wrong", async () => {
  const cred = await scramCredentialFromPassword(scramSha256, "pw", enc.encode("salty"), 4096);
  const s = scramCredentialToString(cred);
  assert.match(s, /^salt=[A-Za-z0-9+/=]+,stored_key=[A-Za-z0-9+/=]+,server_key=[A-Za-z0-9+/=]+,iterations=4096$/);
  assert.deepEqual(scramCredentialFromString(scramSha256, s), cred);
  // A SHA-256 credential is not a SHA-512 one (key lengths differ).
  assert.match(scramCredentialFromString(scramSha512, s) as string, /stored_key is not 64 bytes/);
  assert.match(scramCredentialFromString(scramSha256, s.replace("iterations=4096", "iterations=10")) as string, /iterations must be between/);
  assert.match(scramCredentialFromString(scramSha256, s + ",extra=1") as string, /exactly/);
  assert.match(scramCredentialFromString(scramSha256, "garbage") as string, /key=value/);
  assert.match(scramCredentialFromString(scramSha256, s.replace(/salt=[^,]+/, "salt=!!!")) as string, /salt is not base64/);
});

test("SASL names escape ',' and '=' both ways", () => {
  assert.equal(scramSaslName("a,b=c"), "a=2Cb=3Dc");
  assert.equal(scramUsername("a=2Cb=3Dc"), "a,b=c");
  assert.equal(scramUsername(scramSaslName("=2C,=")), "=2C,=");
});

test("a user whose name needs escaping authenticates", async () => {
  const cred = await scramCredentialFromPassword(scramSha256, "pw", enc.encode("salt"), 4096);
  const server = new ScramServerExchange(scramSha256, (u) => (u === "o,dd=name" ? cred : undefined), "n1");
  const client = new ScramClientExchange(scramSha256, "o,dd=name", "pw", "c1");
  const first = await server.evaluate(client.first());
  assert.equal(first.kind, "challenge");
  const final = await server.evaluate((await client.final((first as { token: Uint8Array }).token)) as Uint8Array);
  assert.equal(final.kind, "complete");
  assert.equal((final as { username: string }).username, "o,dd=name");
});

test("malformed and out-of-order client messages fail the exchange, and a failed exchange stays failed", async () => {
  const cred = await scramCredentialFromPassword(scramSha256, "pw", enc.encode("salt"), 4096);
  const lookup = () => cred;
  const firsts = [
    "",
    "garbage",
    "y,,n=alice,r=abc", // channel binding flag y/p is not supported
    "p=tls-unique,,n=alice,r=abc",
    "n,,m=ext,n=alice,r=abc", // reserved m= must fail
    "n,,n=,r=abc",
    "n,,n=alice,r=",
    "n,,n=al=ice,r=abc", // '=' not followed by 2C/3D
    "n,,n=alice",
  ];
  for (const msg of firsts) {
    const s = new ScramServerExchange(scramSha256, lookup, "n");
    const r = await s.evaluate(enc.encode(msg));
    assert.equal(r.kind, "failed", msg);
    assert.equal((await s.evaluate(enc.encode("n,,n=alice,r=abc"))).kind, "failed", "stays failed");
  }
  // Not UTF-8.
  assert.equal((await new ScramServerExchange(scramSha256, lookup, "n").evaluate(new Uint8Array([0xff, 0xfe]))).kind, "failed");
  // authzid differing from the user: Kafka's own message.
  const az = await new ScramServerExchange(scramSha256, lookup, "n").evaluate(enc.encode("n,a=bob,n=alice,r=abc"));
  assert.equal(az.kind === "failed" && az.clientMessage, "Authentication failed: Client requested an authorization id that is different from username");
  // The same authzid is fine.
  assert.equal((await new ScramServerExchange(scramSha256, lookup, "n").evaluate(enc.encode("n,a=alice,n=alice,r=abc"))).kind, "challenge");

  const finals = [
    "c=biws,r=abcWRONG,p=" + "A".repeat(43) + "=", // nonce not the combined one
    "c=eSws,r=abcn,p=" + "A".repeat(43) + "=", // channel binding says "y,"
    "c=biws,r=abcn,p=AAAA", // proof too short
    "c=biws,r=abcn", // no proof
    "r=abcn,p=" + "A".repeat(43) + "=",
  ];
  for (const msg of finals) {
    const s = new ScramServerExchange(scramSha256, lookup, "n");
    assert.equal((await s.evaluate(enc.encode("n,,n=alice,r=abc"))).kind, "challenge");
    assert.equal((await s.evaluate(enc.encode(msg))).kind, "failed", msg);
  }
});

test("librdkafka before 2.6.1's client-final, with its nonce repeated in front, is accepted; other nonces are not", async () => {
  const cred = await scramCredentialFromPassword(scramSha256, "pw", enc.encode("salt"), 4096);
  const enc64 = (b: Uint8Array) => btoa(String.fromCharCode(...b));
  const run = async (nonceOf: (cnonce: string, full: string) => string) => {
    const server = new ScramServerExchange(scramSha256, () => cred, "SRV");
    const first = await server.evaluate(enc.encode("n,,n=alice,r=CLI"));
    const serverFirst = dec.decode((first as { token: Uint8Array }).token);
    const nonce = nonceOf("CLI", "CLISRV");
    // Sign exactly as such a client does: over its own client-final-without-proof.
    const k = await crypto.subtle.importKey("raw", enc.encode("pw"), "PBKDF2", false, ["deriveBits"]);
    const salted = new Uint8Array(await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt: enc.encode("salt"), iterations: 4096 }, k, 256));
    const hmac = async (key: Uint8Array, data: string) =>
      new Uint8Array(await crypto.subtle.sign("HMAC", await crypto.subtle.importKey("raw", key as Uint8Array<ArrayBuffer>, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]), enc.encode(data)));
    const clientKey = await hmac(salted, "Client Key");
    const storedKey = new Uint8Array(await crypto.subtle.digest("SHA-256", clientKey));
    const withoutProof = `c=biws,r=${nonce}`;
    const signature = await hmac(storedKey, `n=alice,r=CLI,${serverFirst},${withoutProof}`);
    const proof = clientKey.map((b, i) => b ^ signature[i]);
    return (await server.evaluate(enc.encode(`${withoutProof},p=${enc64(proof)}`))).kind;
  };
  assert.equal(await run((_c, full) => full), "complete");
  assert.equal(await run((c, full) => c + full), "complete");
  assert.equal(await run((c) => c), "failed");
  assert.equal(await run((_c, full) => "X" + full), "failed");
  assert.equal(await run((c, full) => c + c + full), "failed");
});

test("a credential below the minimum iteration count is refused at the first message", async () => {
  const weak = await scramCredentialFromPassword(scramSha256, "pw", enc.encode("salt"), 100);
  const r = await new ScramServerExchange(scramSha256, () => weak, "n").evaluate(enc.encode("n,,n=alice,r=abc"));
  assert.equal(r.kind, "failed");
  assert.match((r as { reason: string }).reason, /100 iterations, fewer than 4096/);
});

test("the client refuses a server that does not extend its nonce or asks for absurd iterations", async () => {
  const c = () => {
    const x = new ScramClientExchange(scramSha256, "alice", "pw", "abc");
    x.first();
    return x;
  };
  assert.match((await c().final(enc.encode("r=xyz123,s=c2FsdA==,i=4096"))) as string, /nonce/);
  assert.match((await c().final(enc.encode("r=abc,s=c2FsdA==,i=4096"))) as string, /nonce/);
  assert.match((await c().final(enc.encode("r=abcdef,s=c2FsdA==,i=999999999"))) as string, /iterations/);
  assert.match((await c().final(enc.encode("nonsense"))) as string, /invalid SCRAM server-first/);
  assert.match(c().verify(enc.encode("e=invalid-proof"))!, /server refused: invalid-proof/);
});
