// `strand quotas` as kafka-configs.sh is used for quotas: --alter with --add-config and
// --delete-config for a user, a client id, a user's client and the defaults, --describe in
// Kafka's lines (all entities, one type, one entity); bad command lines are one line and exit 2,
// a change the broker refuses is one line and exit 1.
import assert from "node:assert/strict";
import { test } from "node:test";
import { startBroker } from "../helpers/broker.ts";
import { strand, strandOk } from "./strand.ts";

test("strand quotas: alter and describe users, clients, a user's client and the defaults; refusals", async () => {
  const b = await startBroker();
  const bs = ["--bootstrap-server", `127.0.0.1:${b.broker.port}`];
  try {
    assert.equal(
      await strandOk(["quotas", ...bs, "--alter", "--entity-type", "users", "--entity-name", "alice", "--add-config", "producer_byte_rate=1048576,request_percentage=12.5"]),
      "Completed updating quota configs for user-principal 'alice'.\n",
    );
    assert.equal(
      await strandOk(["quotas", ...bs, "--alter", "--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients", "--entity-default", "--add-config", "consumer_byte_rate=2048"]),
      "Completed updating quota configs for user-principal 'alice', the default client-id.\n",
    );
    await strandOk(["quotas", ...bs, "--alter", "--client", "app 1", "--add-config", "producer_byte_rate=4096"]);
    await strandOk(["quotas", ...bs, "--alter", "--user-defaults", "--add-config", "consumer_byte_rate=8192"]);
    assert.equal(
      await strandOk(["quotas", ...bs, "--describe"]),
      [
        "Quota configs for client-id 'app 1' are producer_byte_rate=4096.0",
        "Quota configs for the default user-principal are consumer_byte_rate=8192.0",
        "Quota configs for user-principal 'alice' are producer_byte_rate=1048576.0, request_percentage=12.5",
        "Quota configs for user-principal 'alice', the default client-id are consumer_byte_rate=2048.0",
        "",
      ].join("\n"),
    );
    // One type (strict: the user's client entity is left out), one entity.
    assert.equal(
      await strandOk(["quotas", ...bs, "--describe", "--entity-type", "users"]),
      "Quota configs for the default user-principal are consumer_byte_rate=8192.0\nQuota configs for user-principal 'alice' are producer_byte_rate=1048576.0, request_percentage=12.5\n",
    );
    assert.equal(
      await strandOk(["quotas", ...bs, "--describe", "--entity-type", "clients", "--entity-name", "app 1"]),
      "Quota configs for client-id 'app 1' are producer_byte_rate=4096.0\n",
    );
    await strandOk(["quotas", ...bs, "--alter", "--entity-type", "users", "--entity-name", "alice", "--delete-config", "request_percentage"]);
    assert.equal(
      await strandOk(["quotas", ...bs, "--describe", "--user", "alice"]),
      "Quota configs for user-principal 'alice' are producer_byte_rate=1048576.0\n",
    );
    // The broker refuses: exit 1, its message.
    const refused = await strand(["quotas", ...bs, "--alter", "--user", "alice", "--add-config", "producer_byte_rate=-3"]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /must be positive/);
    assert.equal(refused.stderr.trim().split("\n").length, 1);
    const unknownKey = await strand(["quotas", ...bs, "--alter", "--user", "alice", "--add-config", "bogus=1"]);
    assert.equal(unknownKey.code, 1);
    assert.match(unknownKey.stderr, /Invalid configuration key bogus/);
    // Bad command lines: exit 2, one line.
    const usage: [string[], RegExp][] = [
      [["--describe", "--alter"], /exactly one of --describe and --alter/],
      [["--alter", "--add-config", "producer_byte_rate=1"], /needs an entity/],
      [["--alter", "--entity-type", "users", "--add-config", "producer_byte_rate=1"], /--entity-name or --entity-default for users/],
      [["--alter", "--user", "a"], /--add-config and\/or --delete-config/],
      [["--alter", "--user", "a", "--add-config", "producer_byte_rate=x"], /not a number/],
      [["--describe", "--entity-type", "topics"], /users, clients or ips/],
      [["--alter", "--ip", "10.0.0.1", "--user", "a", "--add-config", "connection_creation_rate=1"], /ips cannot be combined/],
      [["--describe", "--user", "a", "--entity-type", "users", "--entity-name", "b"], /named once/],
    ];
    for (const [args, pattern] of usage) {
      const r = await strand(["quotas", ...bs, ...args]);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, pattern);
      assert.equal(r.stderr.trim().split("\n").length, 1);
    }
  } finally {
    await b.stop();
  }
});

test("strand quotas --entity-type ips: an address's and the default ip's connection_creation_rate, as kafka-configs.sh", async () => {
  const b = await startBroker();
  const bs = ["--bootstrap-server", `127.0.0.1:${b.broker.port}`];
  try {
    assert.equal(
      await strandOk(["quotas", ...bs, "--alter", "--entity-type", "ips", "--entity-name", "10.0.0.7", "--add-config", "connection_creation_rate=10"]),
      "Completed updating quota configs for ip '10.0.0.7'.\n",
    );
    await strandOk(["quotas", ...bs, "--alter", "--ip-defaults", "--add-config", "connection_creation_rate=100"]);
    await strandOk(["quotas", ...bs, "--alter", "--user", "alice", "--add-config", "producer_byte_rate=1024"]);
    assert.equal(
      await strandOk(["quotas", ...bs, "--describe", "--entity-type", "ips"]),
      "Quota configs for ip '10.0.0.7' are connection_creation_rate=10.0\nQuota configs for the default ip are connection_creation_rate=100.0\n",
    );
    assert.equal(await strandOk(["quotas", ...bs, "--describe", "--ip", "10.0.0.7"]), "Quota configs for ip '10.0.0.7' are connection_creation_rate=10.0\n");
    const bad = await strand(["quotas", ...bs, "--alter", "--ip", "no.such.host", "--add-config", "connection_creation_rate=1"]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /not a valid IP/);
    const wrongKey = await strand(["quotas", ...bs, "--alter", "--ip", "10.0.0.7", "--add-config", "producer_byte_rate=1"]);
    assert.equal(wrongKey.code, 1);
    assert.match(wrongKey.stderr, /Invalid configuration key producer_byte_rate/);
    await strandOk(["quotas", ...bs, "--alter", "--entity-type", "ips", "--entity-name", "10.0.0.7", "--delete-config", "connection_creation_rate"]);
    assert.equal(await strandOk(["quotas", ...bs, "--describe", "--ip", "10.0.0.7"]), "");
  } finally {
    await b.stop();
  }
});
