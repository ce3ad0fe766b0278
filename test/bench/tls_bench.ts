// Throughput of one platform Connection over TLS next to plaintext, on the runtime this runs on
// (test/bench/tls.mjs runs it under Bun and Deno). Prints figures and one `RESULT {json}` line.
//
// Each round pushes --mb MiB through one connection on 127.0.0.1, in --chunk-kb writes (each
// awaited, as the broker writes), once client -> server (produce) and once server -> client
// (fetch), plaintext then TLS (server-only TLS, TLS 1.3 unless --protocol says otherwise); the
// median of --rounds is reported with the TLS/plaintext ratio. Issue 13 asks the broker for TLS
// at >= 60% of plaintext; this shows what the platform layer alone allows.
// It then measures the same with the client in another process (tls_peer.ts, Bun's native sockets),
// which is the broker's case: the measured process does only the server's work.
// On Deno it also times Deno.listenTls/connectTls directly (not used by the platform: no client
// certificates), to show what Deno's own TLS would give.
import { parseArgs } from "node:util";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Connection, ConnectOptions, ListenOptions, TlsProtocol } from "../../src/platform/mod.ts";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { CertDir } from "../helpers/certs.ts";

const bunBin = fileURLToPath(new URL("../../node_modules/.bin/bun", import.meta.url).href);
const peerScript = fileURLToPath(new URL("./tls_peer.ts", import.meta.url).href);

declare const Deno: {
  args: string[];
  listenTls(o: unknown): { addr: { port: number }; accept(): Promise<DenoConn>; close(): void };
  connectTls(o: unknown): Promise<DenoConn>;
} | undefined;
interface DenoConn {
  read(b: Uint8Array): Promise<number | null>;
  write(b: Uint8Array): Promise<number>;
  close(): void;
}

const { values } = parseArgs({
  args: typeof Deno !== "undefined" ? Deno.args : process.argv.slice(2),
  options: {
    mb: { type: "string", default: "256" },
    "chunk-kb": { type: "string", default: "64" },
    rounds: { type: "string", default: "3" },
    protocol: { type: "string", default: "TLSv1.3" },
    handshakes: { type: "string", default: "200" },
  },
});
const totalBytes = Number(values.mb) * 1024 * 1024;
const chunkBytes = Number(values["chunk-kb"]) * 1024;
const rounds = Number(values.rounds);
const protocol = String(values.protocol) as TlsProtocol;

const platform = await loadPlatform();
const certs = new CertDir();
const ca = certs.ca("bench CA");
const server = certs.leaf(ca, { subject: "/CN=localhost" });

/** MiB/s of totalBytes sent by `sender` and counted by `receiver`. */
async function push(sender: Connection, receiver: Connection): Promise<number> {
  const chunk = new Uint8Array(chunkBytes).fill(7);
  const t0 = performance.now();
  const sending = (async () => {
    for (let sent = 0; sent < totalBytes; sent += chunkBytes) await sender.write(chunk);
  })();
  let got = 0;
  while (got < totalBytes) {
    const c = await receiver.read();
    if (c === null) throw new Error(`closed after ${got} bytes: ${receiver.closeReason}`);
    got += c.length;
  }
  await sending;
  return totalBytes / (1024 * 1024) / ((performance.now() - t0) / 1000);
}

async function pair(tls: boolean): Promise<{ client: Connection; server: Connection; close(): Promise<void> }> {
  let accepted!: (c: Connection) => void;
  const serverSide = new Promise<Connection>((r) => (accepted = r));
  const listenOpts: ListenOptions = { host: "127.0.0.1", port: 0 };
  if (tls) listenOpts.tls = { certificateChain: server.cert, privateKey: server.key, protocols: [protocol] };
  const listener = await platform.net.listen(listenOpts, accepted);
  const connectOpts: ConnectOptions = { host: "127.0.0.1", port: listener.port };
  if (tls) connectOpts.tls = { trustedCertificates: ca.cert, serverName: "localhost" };
  const client = await platform.net.connect(connectOpts);
  const s = await serverSide;
  return {
    client,
    server: s,
    async close() {
      client.close();
      s.close();
      await listener.close();
    },
  };
}

async function measure(tls: boolean): Promise<{ produce: number; fetch: number }> {
  const p = await pair(tls);
  try {
    return { produce: await push(p.client, p.server), fetch: await push(p.server, p.client) };
  } finally {
    await p.close();
  }
}

async function denoNative(): Promise<number | null> {
  if (typeof Deno === "undefined") return null;
  const l = Deno.listenTls({ hostname: "127.0.0.1", port: 0, key: server.key, cert: server.cert });
  const accepting = l.accept();
  const c = await Deno.connectTls({ hostname: "localhost", port: l.addr.port, caCerts: [ca.cert] });
  const s = await accepting;
  const chunk = new Uint8Array(chunkBytes).fill(7);
  const t0 = performance.now();
  const sending = (async () => {
    for (let sent = 0; sent < totalBytes; sent += chunkBytes) {
      for (let off = 0; off < chunk.length;) off += await c.write(chunk.subarray(off));
    }
  })();
  const buf = new Uint8Array(64 * 1024);
  let got = 0;
  while (got < totalBytes) {
    const n = await s.read(buf);
    if (n === null) throw new Error("closed");
    got += n;
  }
  await sending;
  const mbs = totalBytes / (1024 * 1024) / ((performance.now() - t0) / 1000);
  c.close();
  s.close();
  l.close();
  return mbs;
}

/**
 * MiB/s at the platform listener's end with the client in another process (tls_peer.ts under
 * Bun, native sockets): the broker's case, where this process does only the server's work.
 * "recv": the peer sends (produce); "send": this side sends (fetch).
 */
async function measureExternal(tls: boolean, direction: "recv" | "send"): Promise<number> {
  let accepted!: (c: Connection) => void;
  const serverSide = new Promise<Connection>((r) => (accepted = r));
  const listenOpts: ListenOptions = { host: "127.0.0.1", port: 0 };
  if (tls) listenOpts.tls = { certificateChain: server.cert, privateKey: server.key, protocols: [protocol] };
  const listener = await platform.net.listen(listenOpts, accepted);
  const mib = String(totalBytes / (1024 * 1024));
  const peer = spawn(bunBin, [peerScript, String(listener.port), tls ? "tls" : "plain", direction === "recv" ? "send" : "recv", mib, ca.certPath], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  const exited = new Promise<void>((r) => peer.on("close", () => r()));
  const conn = await serverSide;
  const t0 = performance.now();
  if (direction === "recv") {
    let got = 0;
    while (got < totalBytes) {
      const c = await conn.read();
      if (c === null) throw new Error(`closed after ${got} bytes: ${conn.closeReason}`);
      got += c.length;
    }
  } else {
    const chunk = new Uint8Array(chunkBytes).fill(7);
    for (let sent = 0; sent < totalBytes; sent += chunkBytes) await conn.write(chunk);
  }
  const mibs = totalBytes / (1024 * 1024) / ((performance.now() - t0) / 1000);
  await exited;
  conn.close();
  await listener.close();
  return mibs;
}

/** Sequential connects (each waited for on both sides, then closed) per second. */
async function connectRate(tls: boolean, n: number): Promise<number> {
  let accepted = 0;
  let onAccept: (() => void) | undefined;
  const listenOpts: ListenOptions = { host: "127.0.0.1", port: 0 };
  if (tls) listenOpts.tls = { certificateChain: server.cert, privateKey: server.key, protocols: [protocol] };
  const listener = await platform.net.listen(listenOpts, (c) => {
    accepted++;
    c.close();
    onAccept?.();
  });
  const connectOpts: ConnectOptions = { host: "127.0.0.1", port: listener.port };
  if (tls) connectOpts.tls = { trustedCertificates: ca.cert, serverName: "localhost" };
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const seen = new Promise<void>((r) => (onAccept = r));
    const c = await platform.net.connect(connectOpts);
    await seen;
    c.close();
  }
  const perSecond = n / ((performance.now() - t0) / 1000);
  await listener.close();
  if (accepted !== n) throw new Error(`accepted ${accepted} of ${n}`);
  return perSecond;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const samples = {
  plainProduce: [] as number[],
  plainFetch: [] as number[],
  tlsProduce: [] as number[],
  tlsFetch: [] as number[],
  denoNative: [] as number[],
  extPlainProduce: [] as number[],
  extTlsProduce: [] as number[],
  extPlainFetch: [] as number[],
  extTlsFetch: [] as number[],
};
console.log(`${platform.name} ${platform.version}: ${values.mb} MiB per direction, ${values["chunk-kb"]} KiB writes, ${protocol}, ${rounds} rounds`);
try {
  for (let r = 0; r < rounds; r++) {
    const plain = await measure(false);
    const tls = await measure(true);
    const native = await denoNative();
    const ext = {
      plainProduce: await measureExternal(false, "recv"),
      tlsProduce: await measureExternal(true, "recv"),
      plainFetch: await measureExternal(false, "send"),
      tlsFetch: await measureExternal(true, "send"),
    };
    samples.extPlainProduce.push(ext.plainProduce);
    samples.extTlsProduce.push(ext.tlsProduce);
    samples.extPlainFetch.push(ext.plainFetch);
    samples.extTlsFetch.push(ext.tlsFetch);
    samples.plainProduce.push(plain.produce);
    samples.plainFetch.push(plain.fetch);
    samples.tlsProduce.push(tls.produce);
    samples.tlsFetch.push(tls.fetch);
    if (native !== null) samples.denoNative.push(native);
    console.log(
      `  round ${r + 1}: plaintext ${plain.produce.toFixed(0)} / ${plain.fetch.toFixed(0)} MiB/s, ` +
        `TLS ${tls.produce.toFixed(0)} / ${tls.fetch.toFixed(0)} MiB/s (client->server / server->client)` +
        (native !== null ? `, Deno.listenTls direct ${native.toFixed(0)} MiB/s` : ""),
    );
    console.log(
      `           client in another process: plaintext ${ext.plainProduce.toFixed(0)} / ${ext.plainFetch.toFixed(0)} MiB/s, ` +
        `TLS ${ext.tlsProduce.toFixed(0)} / ${ext.tlsFetch.toFixed(0)} MiB/s (to / from this process)`,
    );
  }
  const handshakes = Number(values.handshakes);
  if (handshakes > 0) {
    const plainRate = await connectRate(false, handshakes);
    const tlsRate = await connectRate(true, handshakes);
    Object.assign(samples, { plainConnects: plainRate, tlsConnects: tlsRate });
    console.log(`  ${handshakes} sequential connects: plaintext ${plainRate.toFixed(0)}/s, TLS ${tlsRate.toFixed(0)}/s (RSA 2048)`);
  }
} finally {
  certs.cleanup();
}
// The best round too: on a shared machine a round is slowed by others far more often than sped
// up, so the best is the closer estimate of what the runtime can do.
const best = (xs: number[]) => Math.max(...xs);
const result = {
  runtime: platform.name,
  version: platform.version,
  protocol,
  chunkKiB: Number(values["chunk-kb"]),
  plainProduce: median(samples.plainProduce),
  plainFetch: median(samples.plainFetch),
  tlsProduce: median(samples.tlsProduce),
  tlsFetch: median(samples.tlsFetch),
  best: {
    plainProduce: best(samples.plainProduce),
    plainFetch: best(samples.plainFetch),
    tlsProduce: best(samples.tlsProduce),
    tlsFetch: best(samples.tlsFetch),
  },
  denoNative: samples.denoNative.length > 0 ? median(samples.denoNative) : null,
  external: {
    plainProduce: median(samples.extPlainProduce),
    tlsProduce: median(samples.extTlsProduce),
    plainFetch: median(samples.extPlainFetch),
    tlsFetch: median(samples.extTlsFetch),
  },
  plainConnects: (samples as { plainConnects?: number }).plainConnects ?? null,
  tlsConnects: (samples as { tlsConnects?: number }).tlsConnects ?? null,
};
console.log(
  `  median: produce ${result.tlsProduce.toFixed(0)} vs ${result.plainProduce.toFixed(0)} MiB/s (${(result.tlsProduce / result.plainProduce * 100).toFixed(0)}%), ` +
    `fetch ${result.tlsFetch.toFixed(0)} vs ${result.plainFetch.toFixed(0)} MiB/s (${(result.tlsFetch / result.plainFetch * 100).toFixed(0)}%)`,
);
console.log(`RESULT ${JSON.stringify(result)}`);
