// `strand users` against a SASL_PLAINTEXT broker (the admin logs in with PLAIN through
// --command-config): a SCRAM user set from a password file and from stdin, listed and described,
// used by a client, then deleted, after which its login fails. Bad input is one line and exit 2.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { saslLogin } from "../helpers/sasl.ts";
import { WireClient } from "../helpers/wire.ts";
import { strand, strandOk } from "./strand.ts";

async function loginAnswers(b: TestBroker, mechanism: string, user: string, password: string, expected: number) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const c = await WireClient.connect(b.broker.port);
    const r = await saslLogin(c, mechanism, user, password);
    c.close();
    if (r.errorCode === expected) return;
    assert.ok(Date.now() < deadline, `${mechanism} login of ${user} answers ${expected} within 10 s (last ${r.errorCode})`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

test("strand users: set (file and stdin), list, describe, delete SCRAM users; the broker honours each change", async () => {
  const b = await startBroker({
    listeners: "SASL_PLAINTEXT://127.0.0.1:0",
    "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret";',
  });
  try {
    const config = join(b.logDir, "admin.properties");
    writeFileSync(config, 'security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret";\n');
    const bs = ["--bootstrap-server", `127.0.0.1:${b.broker.port}`, "--command-config", config];
    const pwFile = join(b.logDir, "carol.pw");
    writeFileSync(pwFile, "carol-secret\n");
    assert.equal(
      await strandOk(["users", "set", ...bs, "--user", "carol", "--mechanism", "scram-sha-256", "--iterations", "8192", "--password-file", pwFile]),
      "Set the SCRAM-SHA-256 credential of carol (8192 iterations).\n",
    );
    assert.equal(
      await strandOk(["users", "set", ...bs, "--user", "carol", "--mechanism", "SCRAM-SHA-512"], { input: "carol-512\n" }),
      "Set the SCRAM-SHA-512 credential of carol (4096 iterations).\n",
    );
    await strandOk(["users", "set", ...bs, "--user", "dan", "--mechanism", "SCRAM-SHA-512"], { input: "dan-secret" });
    assert.equal(await strandOk(["users", "list", ...bs]), "carol\ndan\n");
    assert.equal(await strandOk(["users", "describe", ...bs, "--user", "carol"]), "User: carol\tSCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096\n");
    await loginAnswers(b, "SCRAM-SHA-256", "carol", "carol-secret", 0);
    await loginAnswers(b, "SCRAM-SHA-512", "carol", "carol-512", 0);

    assert.equal(await strandOk(["users", "delete", ...bs, "--user", "carol", "--mechanism", "SCRAM-SHA-256"]), "Deleted the SCRAM-SHA-256 credential of carol.\n");
    await loginAnswers(b, "SCRAM-SHA-256", "carol", "carol-secret", 58);
    await loginAnswers(b, "SCRAM-SHA-512", "carol", "carol-512", 0);
    assert.equal(await strandOk(["users", "describe", ...bs]), "User: carol\tSCRAM-SHA-512=iterations=4096\nUser: dan\tSCRAM-SHA-512=iterations=4096\n");

    // The broker's refusals come back as one line, exit 1; bad command lines exit 2.
    const again = await strand(["users", "delete", ...bs, "--user", "carol", "--mechanism", "SCRAM-SHA-256"]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /Attempt to delete a user credential that does not exist/);
    const few = await strand(["users", "set", ...bs, "--user", "eve", "--mechanism", "SCRAM-SHA-256", "--iterations", "100"], { input: "x\n" });
    assert.equal(few.code, 1);
    assert.match(few.stderr, /Too few iterations/);
    const nobody = await strand(["users", "describe", ...bs, "--user", "nobody"]);
    assert.equal(nobody.code, 1);
    assert.match(nobody.stderr, /does not exist: nobody/);
    const bad = await strand(["users", "set", ...bs, "--user", "eve", "--mechanism", "SCRAM-SHA-1"], { input: "x\n" });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /unknown SCRAM mechanism SCRAM-SHA-1/);
    const empty = await strand(["users", "set", ...bs, "--user", "eve", "--mechanism", "SCRAM-SHA-256"], { input: "\n" });
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /password .* is empty/);
    const noUser = await strand(["users", "set", ...bs, "--mechanism", "SCRAM-SHA-256"], { input: "x\n" });
    assert.equal(noUser.code, 2);
    assert.match(noUser.stderr, /--user is required/);
  } finally {
    await b.stop();
  }
});
