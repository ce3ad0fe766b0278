// Three brokers on a real ZooKeeper whose one listener is SASL_PLAINTEXT: the brokers' own
// connections (controller channel, replica fetchers, controlled shutdown) log in with PLAIN as
// `broker`; clients log in with SCRAM-SHA-512 users stored in ZooKeeper. A leader SIGKILLed under
// acks=all load loses nothing, the restarted broker catches up into the ISR, and a client
// without credentials gets nothing.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Kafka, logLevel } from "kafkajs";
import { skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { leaderKilledUnderAcksAll } from "../helpers/kafkajs_roundtrip.ts";
import { alterScram, saslLogin, scramUpsertion } from "../helpers/sasl.ts";
import { WireClient } from "../helpers/wire.ts";

const skip = skipUnlessZooKeeper() || skipUnless("kcat");
const jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="broker-secret" ' +
  'user_broker="broker-secret" user_admin="admin-secret";';

test("cluster over SASL_PLAINTEXT: inter-broker PLAIN, client SCRAM, a SIGKILLed leader under acks=all loses nothing", { skip, timeout: 240_000 }, async () => {
  await withCluster(3, {
    budgetMs: 230_000,
    label: "strand-cluster-sasl-",
    listenerProtocol: "SASL_PLAINTEXT",
    overrides: {
      "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
      "sasl.mechanism.inter.broker.protocol": "PLAIN",
      "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas,
    },
  }, async (c) => {
    const first = c.broker(0);
    const admin = await WireClient.connect(first.port);
    assert.equal((await saslLogin(admin, "PLAIN", "admin", "admin-secret")).errorCode, 0);
    assert.equal((await alterScram(admin, [await scramUpsertion("app", "SCRAM-SHA-512", "app-secret")]))[0].errorCode, 0);
    admin.close();
    const sasl = { mechanism: "scram-sha-512" as const, username: "app", password: "app-secret" };
    // Every broker learns of the new user through /config/changes.
    for (const b of c.brokers) {
      await c.waitFor(async () => {
        const w = await WireClient.connect(b.port);
        const r = await saslLogin(w, "SCRAM-SHA-512", "app", "app-secret").catch(() => ({ errorCode: -1 }));
        w.close();
        return r.errorCode === 0;
      }, 15_000, `broker ${b.id} accepts the SCRAM user`);
    }
    const kafka = () => new Kafka({ clientId: "sasl-cluster", brokers: c.liveBootstrap.split(","), sasl, logLevel: logLevel.NOTHING, retry: { retries: 10 } });
    const acked = await leaderKilledUnderAcksAll(c, kafka, "secure", "SASL");

    const bootstrap = c.liveBootstrap.split(",")[0];
    const args = ["-b", bootstrap, "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=SCRAM-SHA-512", "-X", "sasl.username=app", "-X", "sasl.password=app-secret"];
    const out = await run("kcat", [...args, "-C", "-t", "secure", "-p", "0", "-e", "-q", "-o", "beginning"], { timeoutMs: 60_000 });
    assert.equal(out.code, 0, out.stderr);
    const got = out.stdout.toString().trim().split("\n");
    assert.equal(new Set(got).size, got.length, "no record twice");
    for (const v of acked) assert.ok(got.includes(v), `acknowledged ${v} is there`);
    const anonymous = await run("kcat", ["-b", bootstrap, "-L", "-m", "3"], { timeoutMs: 30_000 });
    assert.notEqual(anonymous.code, 0, "a client without credentials gets no metadata");
  });
});
