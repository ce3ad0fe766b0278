// `strand acls` with kafka-acls.sh's flags, checks and output (Kafka 3.8's AclCommand), against a
// SASL_PLAINTEXT broker with Kafka's AclAuthorizer (the admin, a super user, logs in with PLAIN
// through --command-config): --add (allow and deny principals, hosts, operations, prefixed
// patterns, --producer/--consumer; "Adding ACLs" then "Current ACLs"), --list (all, per resource,
// --principal under "ACLs for principal"), --remove (asks y/n on stdin unless --force; exact
// entries, then a whole resource; then what is left); the broker enforces what was added. Bad
// command lines are one line with kafka-acls.sh's message and exit 2.
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
    // Kafka's println(s"Adding ACLs for resource `$resource`: $Newline ${acls.map("\t" + _).mkString(Newline)} $Newline"), then listAcls.
    const block = (title: string, entries: string[]) =>
      `${title} \`ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)\`: \n ${entries.map((e) => `\t${e}`).join("\n")} \n\n`;
    const four = ["User:alice", "User:bob"].flatMap((p) => ["READ", "DESCRIBE_CONFIGS"].map((op) => `(principal=${p}, host=*, operation=${op}, permissionType=ALLOW)`));
    assert.ok(added.startsWith(block("Adding ACLs for resource", four)), added);
    // The current ACLs are a set in Kafka: same lines, in the broker's order.
    const current = added.slice(block("Adding ACLs for resource", four).length);
    const sortLines = (text: string) => text.replace(/^ \t/m, "\t").split("\n").map((l) => l.replace(/ $/, "")).sort().join("\n");
    assert.equal(sortLines(current), sortLines(block("Current ACLs for resource", four)));
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
    assert.match(forAlice, /^ACLs for principal `User:alice`\nCurrent ACLs for resource `/);
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

    // Without --force it asks, as kafka-acls.sh does; "n" keeps the ACL.
    const bobRead = ["--remove", "--allow-principal", "User:bob", "--operation", "Read", "--topic", "orders"];
    const kept = await strandOk(["acls", ...bs, ...bobRead], { input: "n\n" });
    assert.ok(kept.startsWith("Are you sure you want to remove ACLs: \n \t(principal=User:bob, host=*, operation=READ, permissionType=ALLOW) \n from resource filter `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`? (y/n)\n"), kept);
    assert.equal(a.authorize(who("User:bob"), Op.READ, RT.TOPIC, "orders"), true);
    const removed = await strandOk(["acls", ...bs, ...bobRead], { input: "y\n" });
    assert.match(removed, /\? \(y\/n\)\nCurrent ACLs for resource `ResourcePattern\(resourceType=TOPIC, name=orders, patternType=LITERAL\)`: \n/);
    assert.doesNotMatch(removed.slice(removed.indexOf("Current ACLs")), /principal=User:bob, host=\*, operation=READ/, "what is left");
    assert.equal(a.authorize(who("User:bob"), Op.READ, RT.TOPIC, "orders"), false);
    assert.equal(a.authorize(who("User:bob"), Op.DESCRIBE_CONFIGS, RT.TOPIC, "orders"), true, "only the named entry went");
    const all2 = await strandOk(["acls", ...bs, "--remove", "--topic", "orders", "--force"]);
    assert.equal(all2, "", "nothing left to list");
    assert.doesNotMatch(await strandOk(["acls", ...bs, "--list", "--topic", "orders"]), /principal/);

    for (const [args, message] of [
      [["--list", "--add"], /Command must include exactly one action: --list, --add, --remove/],
      [["--add", "--topic", "t"], /You must specify one of: --allow-principal, --deny-principal when trying to add ACLs/],
      [["--add", "--allow-principal", "User:a"], /You must provide at least one resource: --topic <topic> or --cluster/],
      [["--add", "--allow-principal", "alice", "--topic", "t"], /Type:name/],
      [["--add", "--allow-principal", "User:a", "--operation", "Fly", "--topic", "t"], /--operation Fly/],
      [["--add", "--allow-principal", "User:a", "--topic", "t", "--resource-pattern-type", "match"], /A '--resource-pattern-type' value of 'MATCH' is not valid when adding acls/],
      [["--add", "--allow-principal", "User:a", "--operation", "IdempotentWrite", "--topic", "t"], /ResourceType TOPIC only supports operations READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS, ALL/],
      [["--list", "--allow-principal", "User:a"], /Option "\[list\]" can't be used with option "\[allow-principal\]"/],
      [["--add", "--producer", "--operation", "Read", "--allow-principal", "User:a", "--topic", "t"], /Option "\[producer\]" can't be used with option "\[operation\]"/],
      [["--add", "--principal", "User:a", "--allow-principal", "User:a", "--topic", "t"], /The --principal option is only available if --list is set/],
      [["--add", "--producer", "--allow-principal", "User:a", "--group", "g"], /With --producer you must specify a --topic/],
      [["--add", "--idempotent", "--allow-principal", "User:a", "--topic", "t"], /The --idempotent option is only available if --producer is set/],
      [["--add", "--consumer", "--allow-principal", "User:a", "--topic", "t"], /With --consumer you must specify a --topic and a --group/],
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
