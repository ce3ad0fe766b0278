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
  assert.deepEqual([...config.security.listeners], [["PLAINTEXT", { protocol: "PLAINTEXT", sasl: null, ssl: null }]]);
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
    [{ listeners: "SSL://127.0.0.1:9093" }, "ssl.keystore.location", /needs a keystore/],
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

const ssl = { listeners: "SSL://127.0.0.1:9093", "ssl.keystore.location": "/etc/strand/ks.pem", "ssl.truststore.location": "/etc/strand/ca.pem" };

test("SSL settings: plain keys, listener-prefixed ones win, defaults as Kafka's; they are not 'unknown'", () => {
  const { config, unknownKeys } = parse({
    ...ssl,
    "ssl.keystore.type": "PEM",
    "ssl.truststore.type": "pem",
    "ssl.client.auth": "requested",
    "listener.name.ssl.ssl.client.auth": "required",
    "ssl.key.password": "kpw",
    "ssl.enabled.protocols": "TLSv1.3",
    "ssl.cipher.suites": "TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384",
    "ssl.principal.mapping.rules": "RULE:^CN=(.*?),.*$/$1/L,DEFAULT",
    "ssl.endpoint.identification.algorithm": "",
  });
  assert.deepEqual(unknownKeys, []);
  const l = config.security.listeners.get("SSL")!.ssl!;
  assert.deepEqual(l.keystore, { file: "/etc/strand/ks.pem", key: "ssl.keystore.location" });
  assert.deepEqual(l.truststore, { file: "/etc/strand/ca.pem", key: "ssl.truststore.location" });
  assert.equal(l.clientAuth, "required");
  assert.equal(l.keyPassword, "kpw");
  assert.deepEqual(l.protocols, ["TLSv1.3"]);
  assert.deepEqual(l.cipherSuites, ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384"]);
  assert.equal(l.principalMapper.name("CN=Alice,O=strand"), "alice");
  assert.equal(l.verifyHostname, false);
  const d = parse(ssl).config.security.listeners.get("SSL")!.ssl!;
  assert.deepEqual([d.clientAuth, d.protocols, d.cipherSuites, d.verifyHostname], ["none", ["TLSv1.2", "TLSv1.3"], undefined, true]);
  assert.equal(d.principalMapper.name("CN=a,O=b"), "CN=a,O=b");
  // SASL_SSL: clients authenticate by SASL; only the listener-prefixed ssl.client.auth asks for certificates (KIP-684).
  const saslSsl = { ...ssl, listeners: "SASL_SSL://127.0.0.1:9094", "sasl.enabled.mechanisms": "SCRAM-SHA-512", "ssl.client.auth": "required" };
  assert.equal(parse(saslSsl).config.security.listeners.get("SASL_SSL")!.ssl!.clientAuth, "none");
  assert.equal(parse({ ...saslSsl, "listener.name.sasl_ssl.ssl.client.auth": "required" }).config.security.listeners.get("SASL_SSL")!.ssl!.clientAuth, "required");
  // Inline PEM (KIP-651).
  const inline = parse({ listeners: "SSL://127.0.0.1:9093", "ssl.keystore.certificate.chain": "C", "ssl.keystore.key": "K", "ssl.truststore.certificates": "T" });
  const i = inline.config.security.listeners.get("SSL")!.ssl!;
  assert.deepEqual([i.keystore, i.truststore], [{ chain: "C", privateKey: "K", key: "ssl.keystore.certificate.chain" }, { inline: "T", key: "ssl.truststore.certificates" }]);
});

test("bad SSL settings stop start-up with an error naming the key", () => {
  const cases: [Record<string, string>, string, RegExp][] = [
    [{ ...ssl, "ssl.keystore.type": "JKS" }, "ssl.keystore.type", /PEM keystores only/],
    [{ ...ssl, "listener.name.ssl.ssl.truststore.type": "PKCS12" }, "listener.name.ssl.ssl.truststore.type", /PEM truststores only/],
    [{ ...ssl, "ssl.keystore.password": "x" }, "ssl.keystore.password", /ssl.key.password/],
    [{ ...ssl, "ssl.keystore.key": "K" }, "ssl.keystore.location", /not both/],
    [{ listeners: "SSL://127.0.0.1:9093", "ssl.keystore.key": "K" }, "ssl.keystore.certificate.chain", /needs a keystore/],
    [{ ...ssl, "ssl.truststore.certificates": "T" }, "ssl.truststore.location", /not both/],
    [{ ...ssl, "ssl.client.auth": "always" }, "ssl.client.auth", /none, requested, required/],
    [{ listeners: "SSL://127.0.0.1:9093", "ssl.keystore.location": "k", "ssl.client.auth": "required" }, "ssl.client.auth", /needs a truststore/],
    [{ ...ssl, "ssl.enabled.protocols": "TLSv1.2,TLSv1" }, "ssl.enabled.protocols", /TLSv1 is not supported/],
    [{ ...ssl, "ssl.principal.mapping.rules": "RULE:^CN=(.*)$/$1/X/" }, "ssl.principal.mapping.rules", /invalid rule/],
    [{ ...ssl, "ssl.endpoint.identification.algorithm": "ldaps" }, "ssl.endpoint.identification.algorithm", /not https or empty/],
  ];
  for (const [pairs, key, why] of cases) {
    const [k, message] = errorKey(pairs);
    assert.equal(k, key, JSON.stringify(pairs));
    assert.match(message, why, JSON.stringify(pairs));
  }
});
