// The security keys (src/broker/security_config.ts, through parseBrokerConfig): each listener's
// protocol, SASL mechanisms and PLAIN users, the inter-broker login, and errors naming the key.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError, parseBrokerConfig } from "../../src/broker/config.ts";

const plainJaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="b-pw" user_broker="b-pw" user_alice="a";';

function parse(pairs: Record<string, string>) {
  return parseBrokerConfig(new Map(Object.entries({ "log.dirs": "/tmp/x", ...pairs })));
}

function errorKey(pairs: Record<string, string>): [string, string] {
  try {
    parse(pairs);
  } catch (e) {
    assert.ok(e instanceof ConfigError, String(e));
    return [e.key, e.message];
  }
  assert.fail(`accepted ${JSON.stringify(pairs)}`);
}

test("a PLAINTEXT broker has no SASL, its principal source is anonymous, and the prefixed keys are not 'unknown'", () => {
  const { config, unknownKeys } = parse({ "listener.name.plaintext.plain.sasl.jaas.config": plainJaas });
  assert.deepEqual([...config.security.listeners], [["PLAINTEXT", { protocol: "PLAINTEXT", sasl: null }]]);
  assert.equal(config.security.interBrokerSasl, null);
  assert.equal(config.security.connectionsMaxReauthMs, 0);
  assert.equal(config.security.connectionFailedAuthenticationDelayMs, 100);
  assert.deepEqual(unknownKeys, []);
});

test("a SASL_PLAINTEXT listener: mechanisms (listener override wins), PLAIN users, and the inter-broker login in a cluster", () => {
  const { config } = parse({
    listeners: "INTERNAL://127.0.0.1:9092",
    "listener.security.protocol.map": "INTERNAL:SASL_PLAINTEXT",
    "sasl.enabled.mechanisms": "GSSAPI",
    "listener.name.internal.sasl.enabled.mechanisms": "plain,SCRAM-SHA-512",
    "listener.name.internal.plain.sasl.jaas.config": plainJaas,
    "zookeeper.connect": "127.0.0.1:2181",
    "sasl.mechanism.inter.broker.protocol": "PLAIN",
  });
  const l = config.security.listeners.get("INTERNAL")!;
  assert.equal(l.protocol, "SASL_PLAINTEXT");
  assert.deepEqual(l.sasl!.mechanisms, ["PLAIN", "SCRAM-SHA-512"]);
  assert.deepEqual([...l.sasl!.plainUsers], [["broker", "b-pw"], ["alice", "a"]]);
  assert.deepEqual(config.security.interBrokerSasl, { mechanism: "PLAIN", username: "broker", password: "b-pw" });
});

test("bad security settings stop start-up with an error naming the key", () => {
  const sasl = { listeners: "SASL_PLAINTEXT://127.0.0.1:9092" };
  const cases: [Record<string, string>, string, RegExp][] = [
    [{ "listener.security.protocol.map": "PLAINTEXT:TLS" }, "listener.security.protocol.map", /TLS is not one of/],
    [{ "listener.security.protocol.map": "PLAINTEXT" }, "listener.security.protocol.map", /not NAME:PROTOCOL/],
    [{ listeners: "CLIENT://127.0.0.1:9092" }, "listener.security.protocol.map", /CLIENT has no security protocol/],
    [sasl, "sasl.enabled.mechanisms", /GSSAPI, is not supported/],
    [{ ...sasl, "sasl.enabled.mechanisms": "GSSAPI" }, "sasl.enabled.mechanisms", /GSSAPI is not supported by strand/],
    [{ ...sasl, "sasl.enabled.mechanisms": "SCRAM-SHA-1" }, "sasl.enabled.mechanisms", /unknown mechanism SCRAM-SHA-1/],
    [{ ...sasl, "sasl.enabled.mechanisms": "PLAIN" }, "listener.name.sasl_plaintext.plain.sasl.jaas.config", /needs org.apache.kafka.common.security.plain.PlainLoginModule/],
    [{ ...sasl, "sasl.enabled.mechanisms": "PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config": "Broken required" }, "listener.name.sasl_plaintext.plain.sasl.jaas.config", /end with ';'/],
    [{ listeners: "SSL://127.0.0.1:9093" }, "listeners", /SSL needs TLS/],
    [{ "connections.max.reauth.ms": "-1" }, "connections.max.reauth.ms", /below the minimum/],
    [{ ...sasl, "sasl.enabled.mechanisms": "SCRAM-SHA-256", "zookeeper.connect": "h:1" }, "sasl.mechanism.inter.broker.protocol", /GSSAPI is not supported/],
    [{ ...sasl, "sasl.enabled.mechanisms": "SCRAM-SHA-256", "zookeeper.connect": "h:1", "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512" }, "sasl.mechanism.inter.broker.protocol", /not enabled on listener/],
    [{ ...sasl, "sasl.enabled.mechanisms": "SCRAM-SHA-256", "zookeeper.connect": "h:1", "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-256" }, "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config", /username="..." and password/],
    [{ "inter.broker.listener.name": "OTHER" }, "inter.broker.listener.name", /no listener OTHER/],
    [{ "inter.broker.listener.name": "PLAINTEXT", "security.inter.broker.protocol": "PLAINTEXT" }, "inter.broker.listener.name", /not both/],
  ];
  for (const [pairs, key, why] of cases) {
    const [k, message] = errorKey(pairs);
    assert.equal(k, key, JSON.stringify(pairs));
    assert.match(message, why, JSON.stringify(pairs));
  }
});
