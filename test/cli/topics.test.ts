// `strand topics` and `strand cluster info` as a user runs them (child processes of this runtime)
// against a real broker: create, list, describe (partitions, leader, replicas, ISR, config
// overrides, as kafka-topics.sh prints them), alter (partitions and configs), delete; and the
// failures: bad flags (exit 2), unknown topics and unreachable brokers (exit 1), each with one
// line on stderr and no stack trace.
import assert from "node:assert/strict";
import { test } from "node:test";
import { startBroker } from "../helpers/broker.ts";
import { strand, strandOk } from "./strand.ts";

/** The failure shape every tool promises: the exit code, and exactly one line on stderr. */
function assertOneLineError(r: { code: number | null; stderr: string }, code: number, pattern: RegExp): void {
  assert.equal(r.code, code, `exit code; stderr: ${r.stderr}`);
  const errLines = r.stderr.trimEnd().split("\n");
  assert.equal(errLines.length, 1, `one line on stderr, got: ${r.stderr}`);
  assert.match(errLines[0], pattern);
  assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
}

test("cli topics: create, list, describe, alter partitions and configs, delete", async () => {
  const b = await startBroker({ "broker.id": "7" });
  const bs = ["--bootstrap-server", b.bootstrap];
  try {
    assert.equal(await strandOk(["topics", "create", ...bs, "--topic", "orders", "--partitions", "3", "--replication-factor", "1",
      "--config", "retention.ms=3600000", "--config", "cleanup.policy=compact"]), "Created topic orders.\n");
    assert.equal(await strandOk(["topics", "create", ...bs, "--topic", "plain"]), "Created topic plain.\n");
    assert.equal(await strandOk(["topics", "list", ...bs]), "orders\nplain\n");

    const d = await strandOk(["topics", "describe", ...bs, "--topic", "orders"]);
    const [head, ...parts] = d.trimEnd().split("\n");
    assert.match(head, /^Topic: orders\tTopicId: [A-Za-z0-9_-]{22}\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: cleanup\.policy=compact,retention\.ms=3600000$/);
    assert.deepEqual(parts, [0, 1, 2].map((p) => `\tTopic: orders\tPartition: ${p}\tLeader: 7\tReplicas: 7\tIsr: 7`));
    // Defaults from the broker (num.partitions=1) when no count is given.
    assert.match(await strandOk(["topics", "describe", ...bs, "--topic", "plain"]), /PartitionCount: 1\tReplicationFactor: 1\tConfigs: \n/);

    assert.equal(await strandOk(["topics", "alter", ...bs, "--topic", "orders", "--partitions", "5", "--config", "retention.ms=60000",
      "--delete-config", "cleanup.policy"]), "Topic orders now has 5 partitions.\nUpdated the config of topic orders.\n");
    const d2 = await strandOk(["topics", "describe", ...bs]);
    assert.match(d2, /^Topic: orders\t.*PartitionCount: 5\tReplicationFactor: 1\tConfigs: retention\.ms=60000$/m);
    assert.match(d2, /^\tTopic: orders\tPartition: 4\tLeader: 7\tReplicas: 7\tIsr: 7$/m);
    assert.match(d2, /^Topic: plain\t/m);

    assert.equal(await strandOk(["topics", "delete", ...bs, "--topic", "plain"]), "Deleted topic plain.\n");
    assert.equal(await strandOk(["topics", "list", ...bs, "--exclude-internal"]), "orders\n");
    // --if-exists / --if-not-exists make the repeat a no-op.
    assert.equal(await strandOk(["topics", "delete", ...bs, "--topic", "plain", "--if-exists"]), "");
    assert.equal(await strandOk(["topics", "create", ...bs, "--topic", "orders", "--if-not-exists"]), "");
  } finally {
    await b.stop();
  }
});

test("cli topics: refusals from the broker are one line and exit 1", async () => {
  const b = await startBroker();
  const bs = ["--bootstrap-server", b.bootstrap];
  try {
    await strandOk(["topics", "create", ...bs, "--topic", "t", "--partitions", "2"]);
    assertOneLineError(await strand(["topics", "create", ...bs, "--topic", "t"]), 1, /^strand topics: cannot create topic "t": TOPIC_ALREADY_EXISTS/);
    assertOneLineError(await strand(["topics", "describe", ...bs, "--topic", "missing"]), 1, /^strand topics: topic "missing" does not exist$/);
    assertOneLineError(await strand(["topics", "delete", ...bs, "--topic", "missing"]), 1, /^strand topics: topic "missing" does not exist$/);
    assertOneLineError(await strand(["topics", "alter", ...bs, "--topic", "missing", "--config", "retention.ms=1"]), 1, /does not exist/);
    assertOneLineError(await strand(["topics", "alter", ...bs, "--topic", "t", "--partitions", "1"]), 1, /INVALID_PARTITIONS/);
    assertOneLineError(await strand(["topics", "alter", ...bs, "--topic", "t", "--config", "no.such.key=1"]), 1, /INVALID_CONFIG/);
    assertOneLineError(await strand(["topics", "create", ...bs, "--topic", "bad/name"]), 1, /INVALID_TOPIC_EXCEPTION/);
  } finally {
    await b.stop();
  }
});

test("cli: bad command lines exit 2 with one line; --help exits 0", async () => {
  const bs = ["--bootstrap-server", "127.0.0.1:9"];
  assertOneLineError(await strand(["topics", "list", "--bogus"]), 2, /^strand topics: Unknown option '--bogus'/);
  assertOneLineError(await strand(["topics", "list"]), 2, /--bootstrap-server is required/);
  assertOneLineError(await strand(["topics", "frobnicate", ...bs]), 2, /unknown command "frobnicate"/);
  assertOneLineError(await strand(["topics", "create", ...bs]), 2, /--topic is required/);
  assertOneLineError(await strand(["topics", "create", ...bs, "--topic", "x", "--partitions", "many"]), 2, /--partitions takes an integer/);
  assertOneLineError(await strand(["produce", ...bs, "--topic", "x", "--acks", "7"]), 2, /--acks takes all, -1, 0 or 1/);
  assertOneLineError(await strand(["produce", ...bs, "--topic", "x", "--compression", "brotli"]), 2, /--compression takes/);
  assertOneLineError(await strand(["consume", ...bs, "--topic", "x", "--group", "g", "--partition", "0"]), 2, /--partition cannot be used with --group/);
  assertOneLineError(await strand(["groups", "reset-offsets", ...bs, "--group", "g", "--topic", "t"]), 2, /one of --to-earliest/);
  assertOneLineError(await strand(["perf", "produce", ...bs, "--topic", "x"]), 2, /--num-records is required/);
  assertOneLineError(await strand(["topics", "list", "--bootstrap-server", "nonsense"]), 2, /bad bootstrap server "nonsense"/);
  assertOneLineError(await strand(["serve", "--conf", "x"]), 2, /^strand: serve: Unknown option '--conf'/);
  for (const tool of ["topics", "produce", "consume", "groups", "cluster", "perf"]) {
    const r = await strand([tool, "--help"]);
    assert.equal(r.code, 0, tool);
    assert.match(r.stdout, new RegExp(`^Usage: strand ${tool}`), tool);
  }
  assert.match(await strandOk(["--help"]), /strand perf produce\|consume/);
});

test("cli: an unreachable bootstrap server is one line and exit 1, for every tool", async () => {
  // Port 9 (discard) on loopback: nothing listens, the connect is refused at once.
  const bs = ["--bootstrap-server", "127.0.0.1:9"];
  const runs = [
    ["topics", "list", ...bs],
    ["cluster", "info", ...bs],
    ["groups", "list", ...bs],
    ["consume", ...bs, "--topic", "t", "--timeout-ms", "1000"],
    ["produce", ...bs, "--topic", "t"],
    ["perf", "produce", ...bs, "--topic", "t", "--num-records", "10"],
  ];
  const results = await Promise.all(runs.map((args) => strand(args, { input: "x\n" })));
  for (const r of results) assertOneLineError(r, 1, /^strand \w+: cannot reach any broker: connect to 127\.0\.0\.1:9 failed: [^:]*ECONNREFUSED/i);
});

test("cli cluster info: cluster id, controller and brokers", async () => {
  const b = await startBroker({ "broker.id": "3" });
  try {
    const out = await strandOk(["cluster", "info", "--bootstrap-server", b.bootstrap]);
    const lines = out.trimEnd().split("\n");
    assert.match(lines[0], /^Cluster ID: [A-Za-z0-9_-]{22}$/);
    assert.equal(lines[1], "Controller: 3");
    assert.equal(lines[2], "Brokers: 1");
    assert.match(lines[4], /^ID\s+HOST\s+PORT\s+RACK$/);
    assert.match(lines[5], new RegExp(`^3\\*\\s+127\\.0\\.0\\.1\\s+${b.port}\\s+-$`));
    // A list of bootstrap servers whose first is down still works.
    const two = await strandOk(["cluster", "info", "--bootstrap-server", `127.0.0.1:9,${b.bootstrap}`]);
    assert.equal(two, out);
  } finally {
    await b.stop();
  }
});
