// The admin HTTP API over TLS: an https:// entry in admin.listeners serves with the ssl.* keys
// (listener.name.admin.ssl.* first, else the plain ones), beside a plain http:// one; a client
// that trusts the CA reads /v1/status/ready, one that does not is refused; a bad keystore stops
// start-up with an error naming the key. The client is `openssl s_client`, so both runtimes are
// tested against one independent TLS client.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { parseAdminListener, parseBrokerConfig } from "../../src/broker/mod.ts";
import { startBroker } from "../helpers/broker.ts";
import { CertDir, skipUnlessOpenssl } from "../helpers/certs.ts";
import { run } from "../helpers/tools.ts";

const skip = skipUnlessOpenssl();

/**
 * One HTTP/1.0 GET over TLS with openssl s_client (a child process, so the broker in this process
 * keeps serving); the raw response, or "" when the handshake failed.
 */
async function httpsGet(port: number, path: string, caFile: string): Promise<string> {
  const args = ["s_client", "-connect", `127.0.0.1:${port}`, "-servername", "localhost", "-CAfile", caFile, "-verify_return_error", "-quiet"];
  const r = await run("openssl", args, { input: `GET ${path} HTTP/1.0\r\nHost: localhost\r\n\r\n`, timeoutMs: 20_000 });
  return r.stdout.toString();
}

test("admin.listeners parses https:// entries", () => {
  assert.deepEqual(parseAdminListener("https://127.0.0.1:9645"), { host: "127.0.0.1", port: 9645, tls: true });
  assert.deepEqual(parseAdminListener("HTTPS://[::1]:443/"), { host: "::1", port: 443, tls: true });
  assert.equal(parseAdminListener("ftp://h:1"), null);
  // https without a keystore: an error naming the key.
  assert.throws(() => parseBrokerConfig(new Map([["admin.listeners", "https://127.0.0.1:0"]])), /ssl\.keystore/);
});

test("admin API over https: served with the ssl.* keystore, verified by a client that trusts its CA, refused by one that does not", { skip }, async () => {
  const dir = new CertDir();
  try {
    const ca = dir.ca("admin CA");
    const other = dir.ca("another CA");
    const server = dir.leaf(ca, { subject: "/O=strand/CN=localhost", keyFormat: "encrypted", password: "kpw" });
    const keystore = join(dir.dir, "admin-keystore.pem");
    writeFileSync(keystore, server.key + server.cert);
    const b = await startBroker({
      "admin.listeners": "https://127.0.0.1:0,http://127.0.0.1:0",
      "listener.name.admin.ssl.keystore.location": keystore,
      "listener.name.admin.ssl.key.password": "kpw",
    });
    try {
      const [tls, plain] = b.admin!.addresses;
      const ok = await httpsGet(tls.port, "/v1/status/ready", ca.certPath);
      assert.match(ok, /^HTTP\/1\.[01] 200/, ok.slice(0, 300));
      const refused = await httpsGet(tls.port, "/v1/status/ready", other.certPath);
      assert.doesNotMatch(refused, /HTTP\/1/, "a client that does not trust the CA gets no answer");
      // The http:// listener beside it is plain HTTP.
      const res = await fetch(`http://127.0.0.1:${plain.port}/v1/status/ready`);
      assert.equal(res.status, 200);
    } finally {
      await b.stop();
    }
    // A keystore that is not there: start-up fails naming the key.
    await assert.rejects(
      startBroker({ "admin.listeners": "https://127.0.0.1:0", "ssl.keystore.location": join(dir.dir, "missing.pem") }),
      /ssl\.keystore\.location/,
    );
  } finally {
    dir.cleanup();
  }
});
