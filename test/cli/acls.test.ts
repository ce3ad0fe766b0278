// `strand acls` with kafka-acls.sh's flags, against a SASL_PLAINTEXT broker with Kafka's
// AclAuthorizer (the admin, a super user, logs in with PLAIN through --command-config): --add
// (allow and deny principals, hosts, operations, prefixed patterns, --producer/--consumer),
// --list (all, per resource, --principal), --remove (exact entries, then a whole resource);
// the broker enforces what was added. Bad command lines are one line and exit 2.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { AclOperation as Op, ResourceType as RT } from "../../src/authorizer/mod.ts";
import { startBroker } from "../helpers/broker.ts";
import { strand, strandOk } from "./strand.ts";

test("strand acls: --add, --list, --remove as kafka-acls.sh; the authorizer enforces them", async () => {
  const b = await startBroker({
    listeners: "SASL_PLAINTEXT://127.0.0.1:0",
    "sasl.enabled.mechanisms": "PLAIN",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret";',
    "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
    "super.users": "User:admin",
  });
  try {
    const config = join(b.logDir, "admin.properties");
    writeFileSync(config, 'security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret";\n');
    const bs = ["--bootstrap-server", `127.0.0.1:${b.broker.port}`, "--command-config", config];
    const added = await strandOk(["acls", ...bs, "--add", "--allow-principal", "User:alice", "--allow-principal", "User:bob", "--operation", "Read", "--operation", "describe-configs", "--topic", "orders"]);
    assert.match(added, /Adding ACLs for resource `ResourcePattern\(resourceType=TOPIC, name=orders, patternType=LITERAL\)`/);
    assert.match(added, /\(principal=User:bob, host=\*, operation=DESCRIBE_CONFIGS, permissionType=ALLOW\)/);
    await strandOk(["acls", ...bs, "--add", "--deny-principal", "User:alice", "--deny-host", "10.0.0.7", "--operation", "Write", "--topic", "pay-", "--resource-pattern-type", "prefixed"]);
    await strandOk(["acls", ...bs, "--add", "--allow-principal", "User:carol", "--producer", "--idempotent", "--topic", "logs"]);
    await strandOk(["acls", ...bs, "--add", "--allow-principal", "User:dave", "--consumer", "--topic", "logs", "--group", "readers"]);

    const all = await strandOk(["acls", ...bs, "--list"]);
    for (const want of [
      /resourceType=TOPIC, name=orders, patternType=LITERAL\)`: \n \t\(principal=User:alice, host=\*, operation=READ, permissionType=ALLOW\)/,
      /resourceType=TOPIC, name=pay-, patternType=PREFIXED\)`: \n \t\(principal=User:alice, host=10\.0\.0\.7, operation=WRITE, permissionType=DENY\)/,
      /resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL\)`: \n \t\(principal=User:carol, host=\*, operation=IDEMPOTENT_WRITE, permissionType=ALLOW\)/,
      /resourceType=GROUP, name=readers, patternType=LITERAL\)`: \n \t\(principal=User:dave, host=\*, operation=READ, permissionType=ALLOW\)/,
    ]) assert.match(all, want);
    assert.equal((all.match(/\(principal=/g) ?? []).length, 4 + 1 + 4 + 3, all);
    const forAlice = await strandOk(["acls", ...bs, "--list", "--principal", "User:alice"]);
    assert.equal((forAlice.match(/\(principal=User:alice/g) ?? []).length, 3, forAlice);
    assert.doesNotMatch(forAlice, /User:bob/);
    const matching = await strandOk(["acls", ...bs, "--list", "--topic", "pay-eu", "--resource-pattern-type", "match"]);
    assert.match(matching, /name=pay-, patternType=PREFIXED/);

    const a = b.broker.services.authorizer!;
    const who = (p: string) => ({ principal: p, host: "10.0.0.7", listener: "SASL_PLAINTEXT" });
    assert.equal(a.authorize(who("User:alice"), Op.READ, RT.TOPIC, "orders"), true);
    assert.equal(a.authorize(who("User:alice"), Op.WRITE, RT.TOPIC, "pay-eu"), false);
    assert.equal(a.authorize(who("User:carol"), Op.IDEMPOTENT_WRITE, RT.CLUSTER, "kafka-cluster"), true);
    assert.equal(a.authorize(who("User:dave"), Op.READ, RT.GROUP, "readers"), true);

    const removed = await strandOk(["acls", ...bs, "--remove", "--allow-principal", "User:bob", "--operation", "Read", "--topic", "orders", "--force"]);
    assert.match(removed, /Removed ACLs for resource `ResourcePattern\(resourceType=TOPIC, name=orders, patternType=LITERAL\)`: \n \t\(principal=User:bob, host=\*, operation=READ/);
    assert.equal(a.authorize(who("User:bob"), Op.READ, RT.TOPIC, "orders"), false);
    assert.equal(a.authorize(who("User:bob"), Op.DESCRIBE_CONFIGS, RT.TOPIC, "orders"), true, "only the named entry went");
    await strandOk(["acls", ...bs, "--remove", "--topic", "orders"]);
    assert.doesNotMatch(await strandOk(["acls", ...bs, "--list", "--topic", "orders"]), /principal/);

    for (const [args, message] of [
      [["--list", "--add"], /one of --add, --remove or --list/],
      [["--add", "--topic", "t"], /--allow-principal or --deny-principal/],
      [["--add", "--allow-principal", "alice", "--topic", "t"], /Type:name/],
      [["--add", "--allow-principal", "User:a", "--operation", "Fly", "--topic", "t"], /--operation Fly/],
      [["--add", "--allow-principal", "User:a", "--topic", "t", "--resource-pattern-type", "match"], /--resource-pattern-type MATCH/],
    ] as [string[], RegExp][]) {
      const r = await strand(["acls", ...bs, ...args]);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.equal(r.stderr.trim().split("\n").length, 1);
    }
  } finally {
    await b.stop();
  }
});

test("strand acls: without an authorizer the broker's SECURITY_DISABLED is one line, exit 1", async () => {
  const b = await startBroker();
  try {
    const r = await strand(["acls", "--bootstrap-server", b.bootstrap, "--list"]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /SECURITY_DISABLED/);
  } finally {
    await b.stop();
  }
});
