// TLS in the Platform's Network: the same checks run against bun.ts under Bun and deno.ts (its
// node:tls path) under Deno, over real sockets on 127.0.0.1, with certificates made by openssl.
// Each test is bounded by withDeadline: a handshake that never ends fails the test, not the run.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as net from "node:net";
import { loadPlatform } from "../../src/platform/mod.ts";
import type {
  Connection,
  ListenOptions,
  Listener,
  Platform,
  TlsClientOptions,
  TlsHandshakeFailure,
  TlsServerOptions,
} from "../../src/platform/mod.ts";
import { CertDir, type KeyPair, skipUnlessOpenssl } from "../helpers/certs.ts";

const platform: Platform = await loadPlatform();
const skip = skipUnlessOpenssl();
const text = new TextEncoder();
const bytes = (s: string) => text.encode(s);
const decode = (b: Uint8Array) => new TextDecoder().decode(b);

// One set of certificates for the whole file: openssl key generation is the slow part.
let certs: {
  dir: CertDir;
  ca: KeyPair;
  ca2: KeyPair;
  server: KeyPair;
  server2: KeyPair;
  client: KeyPair;
  client2: KeyPair;
};
function getCerts() {
  if (certs !== undefined) return certs;
  const dir = new CertDir();
  const ca = dir.ca("strand test CA");
  const ca2 = dir.ca("strand other CA");
  certs = {
    dir,
    ca,
    ca2,
    server: dir.leaf(ca, { subject: "/C=GB/O=strand/OU=eng/CN=localhost" }),
    server2: dir.leaf(ca2, { subject: "/O=rotated/CN=localhost" }),
    client: dir.leaf(ca, { subject: "/C=GB/O=strand/CN=alice", keyType: "ec" }),
    client2: dir.leaf(ca2, { subject: "/CN=mallory" }),
  };
  process.on("exit", () => dir.cleanup());
  return certs;
}

async function withDeadline<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`test exceeded its ${ms} ms deadline`)), ms);
  });
  try {
    return await Promise.race([fn(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

interface EchoServer {
  listener: Listener;
  conns: Connection[];
  failures: TlsHandshakeFailure[];
  /** Resolves with the next failure reported (or the first, if one was already). */
  nextFailure(): Promise<TlsHandshakeFailure>;
  close(): Promise<void>;
}

async function echoServer(tls: TlsServerOptions | undefined, extra: Partial<ListenOptions> = {}): Promise<EchoServer> {
  const conns: Connection[] = [];
  const failures: TlsHandshakeFailure[] = [];
  let waiter: ((f: TlsHandshakeFailure) => void) | undefined;
  const listener = await platform.net.listen({
    host: "127.0.0.1",
    port: 0,
    tls,
    onTlsFailure: (f) => {
      failures.push(f);
      waiter?.(f);
      waiter = undefined;
    },
    ...extra,
  }, (conn) => {
    conns.push(conn);
    (async () => {
      for (let chunk = await conn.read(); chunk !== null; chunk = await conn.read()) await conn.write(chunk);
      conn.close();
    })().catch(() => conn.close());
  });
  return {
    listener,
    conns,
    failures,
    nextFailure: () => failures.length > 0 ? Promise.resolve(failures[0]) : new Promise((r) => (waiter = r)),
    async close() {
      await listener.close();
      for (const c of conns) c.close();
    },
  };
}

function connect(port: number, tls: TlsClientOptions | undefined, timeoutMs?: number): Promise<Connection> {
  return platform.net.connect({ host: "127.0.0.1", port, tls, timeoutMs });
}

async function echo(conn: Connection, message: string): Promise<string> {
  await conn.write(bytes(message));
  let got = "";
  while (got.length < message.length) {
    const chunk = await conn.read();
    if (chunk === null) throw new Error(`closed after ${JSON.stringify(got)}: ${conn.closeReason}`);
    got += decode(chunk);
  }
  return got;
}

/**
 * A refused client ends either at connect (the server refused before the client's handshake was
 * done) or at its first read (TLS 1.3: the client is done before the server has judged it).
 */
async function assertRefused(port: number, tls: TlsClientOptions): Promise<void> {
  let conn: Connection;
  try {
    conn = await connect(port, tls);
  } catch {
    return;
  }
  try {
    await conn.write(bytes("hi")).catch(() => {});
    assert.equal(await conn.read(), null, "a refused client reads end of stream");
  } finally {
    conn.close();
  }
}

const serverTls = (extra: Partial<TlsServerOptions> = {}): TlsServerOptions => {
  const c = getCerts();
  return { certificateChain: c.server.cert, privateKey: c.server.key, ...extra };
};
const trustCa = (extra: Partial<TlsClientOptions> = {}): TlsClientOptions => ({ trustedCertificates: getCerts().ca.cert, ...extra });

test("tls: server-only TLS echoes, reports the version and the server's certificate to the client", { skip }, () =>
  withDeadline(20_000, async () => {
    const c = getCerts();
    const server = await echoServer(serverTls());
    try {
      const conn = await connect(server.listener.port, trustCa({ serverName: "localhost" }));
      assert.equal(await echo(conn, "hello over tls"), "hello over tls");
      assert.ok(conn.tls !== null);
      assert.match(conn.tls.protocol, /^TLSv1\.[23]$/);
      assert.deepEqual(conn.tls.peerCertificate, c.server.der, "the client sees the server's DER");
      // The server side: TLS, no client certificate.
      assert.equal(server.conns.length, 1);
      assert.equal(server.conns[0].tls?.peerCertificate, null);
      assert.equal(server.conns[0].tls?.protocol, conn.tls.protocol);
      // 1 MiB each way through the queue's backpressure.
      const big = new Uint8Array(1 << 20).map((_, i) => i & 0xff);
      const writing = conn.write(big);
      let got = 0;
      const back = new Uint8Array(big.length);
      while (got < big.length) {
        const chunk = await conn.read();
        assert.ok(chunk !== null);
        back.set(chunk, got);
        got += chunk.length;
      }
      await writing;
      assert.deepEqual(back, big);
      conn.close();
    } finally {
      await server.close();
    }
  }));

test("tls: the host's address is verified against the certificate's IP names; a wrong name is refused unless verification is off", { skip }, () =>
  withDeadline(20_000, async () => {
    const server = await echoServer(serverTls());
    try {
      const byAddress = await connect(server.listener.port, trustCa());
      assert.equal(await echo(byAddress, "ip"), "ip");
      byAddress.close();
      await assert.rejects(connect(server.listener.port, trustCa({ serverName: "wrong.example" })), /altnames|name|host/i);
      const unchecked = await connect(server.listener.port, trustCa({ serverName: "wrong.example", verifyHostname: false }));
      assert.equal(await echo(unchecked, "no name check"), "no name check");
      unchecked.close();
      // Off means the name only: the chain is still verified.
      await assert.rejects(
        connect(server.listener.port, { trustedCertificates: getCerts().ca2.cert, serverName: "wrong.example", verifyHostname: false }),
      );
    } finally {
      await server.close();
    }
  }));

test("tls: a client trusting another CA is refused, and the listener reports the failed handshake", { skip }, () =>
  withDeadline(20_000, async () => {
    const server = await echoServer(serverTls());
    try {
      await assert.rejects(connect(server.listener.port, { trustedCertificates: getCerts().ca2.cert, serverName: "localhost" }), (err: Error) => {
        assert.match(err.message, /127\.0\.0\.1:\d+/, "names the peer");
        return true;
      });
      const f = await server.nextFailure();
      assert.equal(f.remoteAddress, "127.0.0.1");
      assert.ok(f.reason.length > 0);
      assert.equal(server.conns.length, 0, "no connection was handed over");
    } finally {
      await server.close();
    }
  }));

test("tls: clientAuth=required hands over the client's certificate, refuses a client without one or from another CA", { skip }, () =>
  withDeadline(30_000, async () => {
    const c = getCerts();
    const server = await echoServer(serverTls({ clientAuth: "required", trustedCertificates: c.ca.cert }));
    try {
      const conn = await connect(server.listener.port, trustCa({ certificateChain: c.client.cert, privateKey: c.client.key }));
      assert.equal(await echo(conn, "mtls"), "mtls");
      assert.deepEqual(server.conns[0].tls?.peerCertificate, c.client.der, "peer DER matches the client's file");
      conn.close();

      await assertRefused(server.listener.port, trustCa());
      assert.match((await server.nextFailure()).reason, /certificate/i);
      server.failures.length = 0;
      await assertRefused(server.listener.port, trustCa({ certificateChain: c.client2.cert, privateKey: c.client2.key }));
      await server.nextFailure();
      assert.equal(server.conns.length, 1, "only the good client was handed over");
    } finally {
      await server.close();
    }
  }));

test("tls: clientAuth=requested accepts a client without a certificate, reads a good one, refuses a bad one", { skip }, () =>
  withDeadline(30_000, async () => {
    const c = getCerts();
    const server = await echoServer(serverTls({ clientAuth: "requested", trustedCertificates: c.ca.cert }));
    try {
      const anonymous = await connect(server.listener.port, trustCa());
      assert.equal(await echo(anonymous, "anon"), "anon");
      assert.equal(server.conns[0].tls?.peerCertificate, null);
      anonymous.close();

      const alice = await connect(server.listener.port, trustCa({ certificateChain: c.client.cert, privateKey: c.client.key }));
      assert.equal(await echo(alice, "alice"), "alice");
      assert.deepEqual(server.conns[1].tls?.peerCertificate, c.client.der);
      alice.close();

      await assertRefused(server.listener.port, trustCa({ certificateChain: c.client2.cert, privateKey: c.client2.key }));
      assert.match((await server.nextFailure()).reason, /certificate/i);
      assert.equal(server.conns.length, 2);
    } finally {
      await server.close();
    }
  }));

test("tls: protocols pins the version; a client and server with no version in common fail", { skip }, () =>
  withDeadline(30_000, async () => {
    const only12 = await echoServer(serverTls({ protocols: ["TLSv1.2"] }));
    const only13 = await echoServer(serverTls({ protocols: ["TLSv1.3"] }));
    try {
      const a = await connect(only12.listener.port, trustCa());
      assert.equal(a.tls?.protocol, "TLSv1.2");
      assert.equal(only12.conns[0].tls?.protocol, "TLSv1.2");
      assert.equal(await echo(a, "v1.2"), "v1.2");
      a.close();
      const b = await connect(only13.listener.port, trustCa());
      assert.equal(b.tls?.protocol, "TLSv1.3");
      b.close();
      await assert.rejects(connect(only13.listener.port, trustCa({ protocols: ["TLSv1.2"] })));
      await only13.nextFailure();
      await assert.rejects(connect(only12.listener.port, trustCa({ protocols: ["TLSv1.3"] })));
    } finally {
      await only12.close();
      await only13.close();
    }
  }));

test("tls: a plaintext client on a TLS listener is closed promptly and reported", { skip }, () =>
  withDeadline(15_000, async () => {
    const server = await echoServer(serverTls());
    try {
      const plain = await platform.net.connect({ host: "127.0.0.1", port: server.listener.port });
      // An ApiVersions request header, as a Kafka client would open with.
      await plain.write(new Uint8Array([0, 0, 0, 10, 0, 18, 0, 3, 0, 0, 0, 1, 0, 0])).catch(() => {});
      for (let chunk = await plain.read(); chunk !== null; chunk = await plain.read()) {
        // A TLS alert may arrive before the end of stream.
      }
      plain.close();
      assert.ok((await server.nextFailure()).reason.length > 0);
      assert.equal(server.conns.length, 0);
    } finally {
      await server.close();
    }
  }));

test("tls: a client that never starts its handshake is closed at the listener's handshake timeout", { skip }, () =>
  withDeadline(15_000, async () => {
    const server = await echoServer(serverTls(), { tlsHandshakeTimeoutMs: 300 });
    try {
      const silent = await platform.net.connect({ host: "127.0.0.1", port: server.listener.port });
      assert.equal(await silent.read(), null, "the listener hangs up");
      silent.close();
      assert.ok((await server.nextFailure()).reason.length > 0);
    } finally {
      await server.close();
    }
  }));

test("tls: a TLS client on a plaintext listener ends promptly, answered or not", { skip }, () =>
  withDeadline(15_000, async () => {
    // An echo server returns the ClientHello, which is no ServerHello.
    const plainEcho = await echoServer(undefined);
    // A silent one (as a Kafka broker waiting for a whole frame) is ended by the timeout.
    const silent = net.createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    try {
      await assert.rejects(connect(plainEcho.listener.port, trustCa()));
      const port = (silent.address() as net.AddressInfo).port;
      await assert.rejects(connect(port, trustCa(), 500), /timed out/);
    } finally {
      await plainEcho.close();
      silent.close();
    }
  }));

test("tls: setTls rotates the certificate for new connections; open ones carry on", { skip }, () =>
  withDeadline(30_000, async () => {
    const c = getCerts();
    const server = await echoServer(serverTls());
    try {
      const before = await connect(server.listener.port, trustCa());
      assert.deepEqual(before.tls?.peerCertificate, c.server.der);
      server.listener.setTls({ certificateChain: c.server2.cert, privateKey: c.server2.key });
      const after = await connect(server.listener.port, { trustedCertificates: c.ca2.cert });
      assert.deepEqual(after.tls?.peerCertificate, c.server2.der, "the new connection sees the new certificate");
      assert.equal(await echo(after, "new"), "new");
      assert.equal(await echo(before, "still here"), "still here", "the old connection still works");
      await assert.rejects(connect(server.listener.port, trustCa()), "the old CA no longer verifies the listener");
      before.close();
      after.close();
      // A bad reload changes nothing.
      assert.throws(() => server.listener.setTls({ certificateChain: c.server.cert, privateKey: c.server2.key }), /does not belong/);
      assert.throws(
        () => server.listener.setTls({ ...serverTls(), clientAuth: "required", trustedCertificates: c.ca.cert }),
        /clientAuth cannot change/,
      );
      const again = await connect(server.listener.port, { trustedCertificates: c.ca2.cert });
      assert.deepEqual(again.tls?.peerCertificate, c.server2.der);
      again.close();
    } finally {
      await server.close();
    }
  }));

test("tls: PKCS#1, SEC1 and encrypted keys are read; a wrong password, a missing one or a foreign key is refused at listen", { skip }, () =>
  withDeadline(60_000, async () => {
    const c = getCerts();
    const pkcs1 = c.dir.leaf(c.ca, { subject: "/CN=localhost", keyFormat: "pkcs1" });
    const sec1 = c.dir.leaf(c.ca, { subject: "/CN=localhost", keyType: "ec", keyFormat: "sec1" });
    const enc = c.dir.leaf(c.ca, { subject: "/CN=localhost", keyFormat: "encrypted", password: "s3cret" });
    assert.match(pkcs1.key, /BEGIN RSA PRIVATE KEY/);
    assert.match(sec1.key, /BEGIN EC PRIVATE KEY/);
    assert.match(enc.key, /BEGIN ENCRYPTED PRIVATE KEY/);
    for (const [pair, password] of [[pkcs1, undefined], [sec1, undefined], [enc, "s3cret"]] as const) {
      const server = await echoServer({ certificateChain: pair.cert, privateKey: pair.key, privateKeyPassword: password });
      try {
        const conn = await connect(server.listener.port, trustCa());
        assert.deepEqual(conn.tls?.peerCertificate, pair.der);
        assert.equal(await echo(conn, "key"), "key");
        conn.close();
      } finally {
        await server.close();
      }
    }
    const listenWith = (tls: TlsServerOptions) => platform.net.listen({ host: "127.0.0.1", port: 0, tls }, () => {});
    await assert.rejects(listenWith({ certificateChain: enc.cert, privateKey: enc.key, privateKeyPassword: "wrong" }), /privateKey cannot be read/);
    await assert.rejects(listenWith({ certificateChain: enc.cert, privateKey: enc.key }), /encrypted/);
    await assert.rejects(listenWith({ certificateChain: c.server.cert, privateKey: c.client.key }), /does not belong/);
    await assert.rejects(listenWith({ certificateChain: "garbage", privateKey: c.server.key }), /certificate/);
    await assert.rejects(listenWith({ ...serverTls(), clientAuth: "required" }), /trustedCertificates/);
    await assert.rejects(listenWith({ ...serverTls(), protocols: [] }), /protocols/);
    await assert.rejects(listenWith({ ...serverTls(), protocols: ["TLSv1.1" as "TLSv1.2"] }), /TLSv1\.1/);
  }));

test("tls: cipherSuites are honoured where the runtime can, refused with a reason where it cannot", { skip }, () =>
  withDeadline(30_000, async () => {
    const listenWith = (tls: TlsServerOptions) => platform.net.listen({ host: "127.0.0.1", port: 0, tls }, () => {});
    await assert.rejects(listenWith({ ...serverTls(), cipherSuites: ["TLS_NO_SUCH_SUITE"] }), /not known/);
    const aes128 = ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"];
    const aes256 = ["TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"];
    if (platform.name === "deno") {
      await assert.rejects(listenWith({ ...serverTls(), protocols: ["TLSv1.2"], cipherSuites: aes128 }), /rustls/);
      return;
    }
    await assert.rejects(listenWith({ ...serverTls(), cipherSuites: aes128 }), /TLS 1\.3/);
    const server = await echoServer(serverTls({ protocols: ["TLSv1.2"], cipherSuites: aes128 }));
    try {
      const ok = await connect(server.listener.port, trustCa({ protocols: ["TLSv1.2"], cipherSuites: [...aes256, ...aes128] }));
      assert.equal(await echo(ok, "suite"), "suite");
      ok.close();
      await assert.rejects(connect(server.listener.port, trustCa({ protocols: ["TLSv1.2"], cipherSuites: aes256 })));
    } finally {
      await server.close();
    }
  }));

test("tls: a plaintext listener has no TLS to replace, and its connections say tls=null", { skip }, () =>
  withDeadline(10_000, async () => {
    const server = await echoServer(undefined);
    try {
      assert.throws(() => server.listener.setTls(serverTls()), /plaintext/);
      const conn = await platform.net.connect({ host: "127.0.0.1", port: server.listener.port });
      assert.equal(conn.tls, null);
      assert.equal(await echo(conn, "plain"), "plain");
      conn.close();
      assert.equal(conn.closeReason, null);
    } finally {
      await server.close();
    }
  }));
