// A TLS listener's PEM files made concrete (tls_settings.ts): the keystore file split into key and
// chain, the server and inter-broker client options, and the watcher that reloads them when a file
// changes: new settings reach listener.setTls and the broker's own connections; a bad file is
// logged at warn and changes nothing.
import assert from "node:assert/strict";
import { test } from "node:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseBrokerConfig } from "../../src/broker/config.ts";
import { loadListenerTls, TlsFileWatcher } from "../../src/broker/tls_settings.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Listener, TlsClientOptions, TlsServerOptions } from "../../src/platform/mod.ts";
import { type Logger, type LogFields, silentLogger } from "../../src/util/logger.ts";
import { CertDir, skipUnlessOpenssl } from "../helpers/certs.ts";

const skip = skipUnlessOpenssl();

test("loadListenerTls: key and chain from one PEM file; the broker's client side presents it only where client auth is asked", { skip }, async () => {
  const platform = await loadPlatform();
  const d = new CertDir();
  try {
    const ca = d.ca("ca");
    const leaf = d.leaf(ca, { subject: "/CN=broker" });
    const ks = join(d.dir, "ks.pem");
    writeFileSync(ks, `Bag Attributes\n${leaf.key}${leaf.cert}${ca.cert}`);
    const ssl = (extra: Record<string, string>) =>
      parseBrokerConfig(new Map(Object.entries({ "log.dirs": "/tmp/x", listeners: "SSL://127.0.0.1:0", "ssl.keystore.location": ks, "ssl.truststore.location": ca.certPath, ...extra })))
        .config.security.listeners.get("SSL")!.ssl!;
    const none = loadListenerTls(platform.fs, ssl({}));
    assert.equal(none.server.privateKey, leaf.key.trim() + "\n");
    assert.equal(none.server.certificateChain, leaf.cert.trim() + "\n" + ca.cert.trim() + "\n");
    assert.equal(none.server.clientAuth, "none");
    assert.equal(none.server.trustedCertificates, ca.cert.trim() + "\n");
    assert.deepEqual([none.client.certificateChain, none.client.verifyHostname], [undefined, true]);
    const required = loadListenerTls(platform.fs, ssl({ "ssl.client.auth": "required", "ssl.endpoint.identification.algorithm": "" }));
    assert.equal(required.client.certificateChain, required.server.certificateChain);
    assert.equal(required.client.verifyHostname, false);
  } finally {
    d.cleanup();
  }
});

test("TlsFileWatcher: a changed keystore reaches setTls and the broker's client options; a bad one is logged at warn and changes nothing", { skip }, async () => {
  const platform = await loadPlatform();
  const d = new CertDir();
  try {
    const ca = d.ca("ca");
    const first = d.leaf(ca, { subject: "/CN=first" });
    const second = d.leaf(ca, { subject: "/CN=second" });
    const ks = join(d.dir, "ks.pem");
    writeFileSync(ks, first.key + first.cert);
    const ssl = parseBrokerConfig(new Map(Object.entries({
      "log.dirs": "/tmp/x",
      listeners: "SSL://127.0.0.1:0",
      "ssl.keystore.location": ks,
      "ssl.truststore.location": ca.certPath,
      "ssl.client.auth": "required",
    }))).config.security.listeners.get("SSL")!.ssl!;
    const set: TlsServerOptions[] = [];
    const listener = { host: "127.0.0.1", port: 1, close: async () => {}, setTls: (o: TlsServerOptions) => void set.push(o) } as Listener;
    const warnings: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (_f: LogFields, msg: string) => void warnings.push(msg), child: () => logger };
    const clients: TlsClientOptions[] = [];
    const w = new TlsFileWatcher(platform, "SSL", ssl, listener, logger, (c) => clients.push(c));
    assert.equal(w.check(), false, "nothing changed");
    writeFileSync(ks, "-----BEGIN CERTIFICATE-----\ntruncated");
    assert.equal(w.check(), false);
    assert.deepEqual([set.length, clients.length, warnings.length], [0, 0, 1]);
    assert.match(warnings[0], /not reloaded/);
    writeFileSync(ks, second.key + second.cert);
    assert.equal(w.check(), true);
    assert.equal(set.length, 1);
    assert.equal(set[0].certificateChain, second.cert.trim() + "\n");
    assert.equal(clients[0].certificateChain, second.cert.trim() + "\n", "the broker's own connections present the new certificate");
    assert.equal(w.check(), false, "the same file is not reloaded twice");
  } finally {
    d.cleanup();
  }
});
