// The client library's SASL session renewal (KIP-368): against a broker granting
// connections.max.reauth.ms, one KafkaConnection keeps serving requests well past that lifetime,
// pipelined ones included, because it logs in again in-band (the broker would close a connection
// whose session ran out). Without a granted lifetime nothing is renewed.
import assert from "node:assert/strict";
import { test } from "node:test";
import { KafkaConnection } from "../../src/client/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import { MetadataApi } from "../../src/protocol/api/mod.ts";
import { startBroker } from "../helpers/broker.ts";
import { recordingLogger } from "../helpers/faulty_platform.ts";
import { alterScram, scramUpsertion } from "../helpers/sasl.ts";

const jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret";';

test("a SASL connection logs in again before its session lifetime ends and keeps serving pipelined requests", async () => {
  const log = recordingLogger();
  const b = await startBroker({
    listeners: "SASL_PLAINTEXT://127.0.0.1:0",
    "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas,
    "connections.max.reauth.ms": "1000",
  }, undefined, log);
  const platform = await loadPlatform();
  try {
    const admin = await KafkaConnection.connect(platform, { host: "127.0.0.1", port: b.broker.port, sasl: { mechanism: "PLAIN", username: "admin", password: "admin-secret" } });
    // SCRAM too: its two round trips run again inside the renewed session.
    const { WireClient } = await import("../helpers/wire.ts");
    const { saslLogin } = await import("../helpers/sasl.ts");
    const w = await WireClient.connect(b.broker.port);
    await saslLogin(w, "PLAIN", "admin", "admin-secret");
    assert.equal((await alterScram(w, [await scramUpsertion("app", "SCRAM-SHA-512", "app-secret")]))[0].errorCode, 0);
    w.close();
    await new Promise((r) => setTimeout(r, 300)); // the change notification reaches the broker's cache
    const app = await KafkaConnection.connect(platform, { host: "127.0.0.1", port: b.broker.port, sasl: { mechanism: "SCRAM-SHA-512", username: "app", password: "app-secret" } });
    const metadata = { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false };
    const until = Date.now() + 3_500;
    let answered = 0;
    while (Date.now() < until) {
      // Three at a time on each connection, so a renewal meets requests in flight.
      const all = await Promise.all([admin, app].flatMap((c) => [1, 2, 3].map(() => c.request(MetadataApi, 9, metadata, 5_000))));
      answered += all.length;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(admin.closed, false, `admin connection: ${admin.closedReason}`);
    assert.equal(app.closed, false, `app connection: ${app.closedReason}`);
    assert.ok(answered > 60, `${answered} answers`);
    // The broker saw no request after an expired session (it would have closed the connection).
    assert.equal(log.lines.filter((l) => /session expired/.test(String(l.fields.reason ?? ""))).length, 0);
    admin.close();
    app.close();
  } finally {
    await b.stop();
  }
});
