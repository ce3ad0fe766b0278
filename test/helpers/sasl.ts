// A SASL login over the tests' raw WireClient (SaslHandshake v1, then SaslAuthenticate v2 with
// PLAIN's one token or SCRAM's two), and SCRAM credentials made as Kafka's admin client makes
// them for AlterUserScramCredentials (a salt and the salted password, never the password).
import assert from "node:assert/strict";
import { AlterUserScramCredentialsApi, SaslAuthenticateApi, SaslHandshakeApi } from "../../src/protocol/api/mod.ts";
import { plainToken, ScramClientExchange, scramMechanismByName } from "../../src/protocol/sasl/mod.ts";
import { WireClient } from "./wire.ts";

/** Logs in; returns the last SaslAuthenticate answer (errorCode 0 when it worked). */
export async function saslLogin(c: WireClient, mechanism: string, user: string, password: string) {
  const hs = await c.request(SaslHandshakeApi, 1, { mechanism });
  assert.equal(hs.errorCode, 0, `SaslHandshake ${mechanism}`);
  if (mechanism === "PLAIN") return await c.request(SaslAuthenticateApi, 2, { authBytes: plainToken(user, password) });
  const exchange = new ScramClientExchange(scramMechanismByName(mechanism)!, user, password, "testclientnonce");
  const first = await c.request(SaslAuthenticateApi, 2, { authBytes: exchange.first() });
  if (first.errorCode !== 0) return first;
  const final = await exchange.final(first.authBytes as Uint8Array);
  assert.ok(final instanceof Uint8Array, String(final));
  const done = await c.request(SaslAuthenticateApi, 2, { authBytes: final });
  if (done.errorCode === 0) assert.equal(exchange.verify(done.authBytes as Uint8Array), null, "the server proves it holds the credential");
  return done;
}

/** A new connection to the broker's port, logged in with PLAIN as user. */
export async function plainLogin(port: number, user: string, password: string): Promise<WireClient> {
  const c = await WireClient.connect(port);
  assert.equal((await saslLogin(c, "PLAIN", user, password)).errorCode, 0, `login of ${user}`);
  return c;
}

/** An AlterUserScramCredentials upsertion for a password, as Kafka's Admin client computes it. */
export async function scramUpsertion(user: string, mechanism: string, password: string, iterations = 4096) {
  const mech = scramMechanismByName(mechanism)!;
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(password), "PBKDF2", false, ["deriveBits"]);
  const saltedPassword = new Uint8Array(await crypto.subtle.deriveBits({ name: "PBKDF2", hash: mech.hash, salt, iterations }, key, mech.keyBytes * 8));
  return { name: user, mechanism: mech.type as number, iterations, salt, saltedPassword };
}

export async function alterScram(
  c: WireClient,
  upsertions: Awaited<ReturnType<typeof scramUpsertion>>[],
  deletions: { name: string; mechanism: number }[] = [],
) {
  const r = await c.request(AlterUserScramCredentialsApi, 0, { deletions, upsertions });
  return r.results as { user: string; errorCode: number; errorMessage: string | null }[];
}
