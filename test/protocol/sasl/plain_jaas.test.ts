// SASL/PLAIN (src/protocol/sasl/plain.ts) with Kafka's messages, and Kafka's JAAS config text
// (src/protocol/sasl/jaas.ts) as server.properties carries it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { jaasPlainUsers, parseJaasConfig, plainAuthenticate, plainToken } from "../../../src/protocol/sasl/mod.ts";

const enc = new TextEncoder();
const users = new Map([["admin", "admin-secret"], ["alice", "alice-secret"]]);
const lookup = (u: string) => users.get(u);

test("PLAIN accepts the right password, with or without the same authzid", () => {
  const r = plainAuthenticate(plainToken("alice", "alice-secret"), lookup);
  assert.equal(r.kind, "complete");
  assert.equal((r as { username: string }).username, "alice");
  assert.equal(plainAuthenticate(enc.encode("alice\u0000alice\u0000alice-secret"), lookup).kind, "complete");
});

test("PLAIN refuses with Kafka's messages, the same one for a wrong password and an unknown user", () => {
  const msg = (token: Uint8Array) => {
    const r = plainAuthenticate(token, lookup);
    assert.equal(r.kind, "failed");
    return (r as { clientMessage: string }).clientMessage;
  };
  assert.equal(msg(plainToken("alice", "nope")), "Authentication failed: Invalid username or password");
  assert.equal(msg(plainToken("mallory", "alice-secret")), "Authentication failed: Invalid username or password");
  assert.equal(msg(plainToken("", "x")), "Authentication failed: username not specified");
  assert.equal(msg(plainToken("alice", "")), "Authentication failed: password not specified");
  assert.equal(msg(enc.encode("alice-secret")), "Invalid SASL/PLAIN response: expected 3 tokens, got 1");
  assert.equal(msg(enc.encode("a\u0000b\u0000c\u0000d")), "Invalid SASL/PLAIN response: expected 3 tokens, got 4");
  assert.equal(msg(enc.encode("admin\u0000alice\u0000alice-secret")), "Authentication failed: Client requested an authorization id that is different from username");
  assert.equal(msg(new Uint8Array([0, 0xff, 0, 0xfe])), "Invalid SASL/PLAIN response: not UTF-8");
  // A password that is a prefix of the real one is wrong too.
  assert.equal(msg(plainToken("alice", "alice-secre")), "Authentication failed: Invalid username or password");
});

test("JAAS: Kafka's documented PlainLoginModule line parses into options and users", () => {
  const m = parseJaasConfig(
    `org.apache.kafka.common.security.plain.PlainLoginModule required
       username="admin"
       password="admin-secret"
       user_admin="admin-secret"
       user_alice="alice-secret";`,
  );
  assert.ok(typeof m !== "string", String(m));
  assert.equal(m.loginModule, "org.apache.kafka.common.security.plain.PlainLoginModule");
  assert.equal(m.controlFlag, "required");
  assert.equal(m.options.get("username"), "admin");
  assert.deepEqual([...jaasPlainUsers(m)], [["admin", "admin-secret"], ["alice", "alice-secret"]]);
});

test("JAAS: quoting, escapes, bare words and comments", () => {
  const m = parseJaasConfig(
    `org.apache.kafka.common.security.scram.ScramLoginModule REQUIRED /* c */ username=bob // end of line
     password="p\\"w;=\\\\x" tokenauth=true;`,
  );
  assert.ok(typeof m !== "string", String(m));
  assert.equal(m.controlFlag, "required");
  assert.equal(m.options.get("username"), "bob");
  assert.equal(m.options.get("password"), 'p"w;=\\x');
  assert.equal(m.options.get("tokenauth"), "true");
});

test("JAAS: malformed text says what is wrong", () => {
  const bad: [string, RegExp][] = [
    ["", /login module class name/],
    ["org.x.Module", /control flag/],
    ["org.x.Module mandatory a=b;", /control flag/],
    ["org.x.Module required a=b", /end with ';'/],
    ["org.x.Module required a b;", /expected '='/],
    ["org.x.Module required a=;", /expected a value/],
    ['org.x.Module required a="b;', /unterminated quoted value/],
    ["org.x.Module required a=b; org.y.Module required;", /should be 1 module/],
    ["org.x.Module required /* a=b;", /unterminated comment/],
  ];
  for (const [text, why] of bad) assert.match(parseJaasConfig(text) as string, why, text);
});
