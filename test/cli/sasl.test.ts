// The strand tools against a SASL_PLAINTEXT listener with --command-config, Kafka's client
// properties file (security.protocol, sasl.mechanism, sasl.jaas.config), as Kafka's tools take it:
// PLAIN and SCRAM logins, a wrong password and a missing file as one clear line and exit 1 / 2.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { startBroker } from "../helpers/broker.ts";
import { alterScram, saslLogin, scramUpsertion } from "../helpers/sasl.ts";
import { WireClient } from "../helpers/wire.ts";
import { lines, strand, strandOk } from "./strand.ts";

test("cli tools log in with --command-config (PLAIN and SCRAM-SHA-512); a wrong password or bad file fails clearly", async () => {
  const b = await startBroker({
    listeners: "SASL_PLAINTEXT://127.0.0.1:0",
    "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config":
      'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret";',
  });
  const bs = ["--bootstrap-server", `127.0.0.1:${b.broker.port}`];
  const config = (name: string, mechanism: string, module: string, user: string, password: string) => {
    const path = join(b.logDir, name);
    writeFileSync(path, [
      "security.protocol=SASL_PLAINTEXT",
      `sasl.mechanism=${mechanism}`,
      `sasl.jaas.config=org.apache.kafka.common.security.${module} required \\`,
      `  username="${user}" password="${password}";`,
      "",
    ].join("\n"));
    return ["--command-config", path];
  };
  try {
    const admin = config("admin.properties", "PLAIN", "plain.PlainLoginModule", "admin", "admin-secret");
    await strandOk(["topics", "create", ...bs, ...admin, "--topic", "secured", "--partitions", "2"]);
    const c = await WireClient.connect(b.broker.port);
    assert.equal((await saslLogin(c, "PLAIN", "admin", "admin-secret")).errorCode, 0);
    assert.equal((await alterScram(c, [await scramUpsertion("tool", "SCRAM-SHA-512", "tool-secret")]))[0].errorCode, 0);
    c.close();
    const scram = config("scram.properties", "SCRAM-SHA-512", "scram.ScramLoginModule", "tool", "tool-secret");
    const input = lines(500, "s-");
    // The credential reaches the broker's cache through the change notification.
    for (let i = 0; ; i++) {
      const r = await strand(["produce", ...bs, ...scram, "--topic", "secured", "--partition", "0"], { input });
      if (r.code === 0) break;
      assert.ok(i < 20, `produce with SCRAM: ${r.stderr}`);
      await new Promise((res) => setTimeout(res, 200));
    }
    const out = await strandOk(["consume", ...bs, ...scram, "--topic", "secured", "--partition", "0", "--offset", "earliest", "--max-messages", "500"]);
    assert.equal(out, input);

    const wrong = config("wrong.properties", "SCRAM-SHA-512", "scram.ScramLoginModule", "tool", "nope");
    const bad = await strand(["topics", "list", ...bs, ...wrong, "--request-timeout-ms", "5000"]);
    assert.equal(bad.code, 1, bad.stderr);
    assert.match(bad.stderr, /Authentication failed/);
    assert.equal(bad.stderr.trim().split("\n").length, 1, `one line: ${bad.stderr}`);

    const missing = await strand(["topics", "list", ...bs, "--command-config", join(b.logDir, "absent.properties")]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--command-config .*absent\.properties/);
    const gssapi = join(b.logDir, "gssapi.properties");
    writeFileSync(gssapi, "security.protocol=SASL_PLAINTEXT\n");
    const g = await strand(["topics", "list", ...bs, "--command-config", gssapi]);
    assert.equal(g.code, 2);
    assert.match(g.stderr, /sasl\.mechanism GSSAPI is not supported/);
  } finally {
    await b.stop();
  }
});
