// TLS over node:tls, for Deno: Deno.listenTls cannot ask for a client certificate, report the
// peer's certificate or the negotiated version, or swap its certificate, while Deno's node:tls
// (rustls underneath) does all four.
//
// Deno facts (checked on Deno 2.9.6):
// - tls.createServer with requestCert/rejectUnauthorized/ca does mutual TLS; getPeerCertificate()
//   gives `raw` (DER); setSecureContext() rotates the certificate for new connections.
// - rustls refuses X.509 v1 client certificates (no extensions): UNABLE_TO_VERIFY_LEAF_SIGNATURE.
// - The `ciphers` option is accepted and ignored (rustls keeps its own list): refused here instead.
// - A failed server handshake emits tlsClientError but leaves the socket open: it is destroyed here.
// - Throughput is bound by Deno's node:net streams, well below Deno.connect's (tls_bench.ts).
import * as tls from "node:tls";
import { tlsHandshakeTimeoutMs } from "../util/mod.ts";
import { connectError, connectionClosedError, ReadQueue, withConnectTimeout } from "./shared.ts";
import { checkReload, derBytes, type PreparedTls, prepareTls, tlsErrorReason } from "./tls.ts";
import type {
  ConnectOptions,
  Connection,
  Listener,
  ListenOptions,
  TlsClientOptions,
  TlsServerOptions,
  TlsSession,
} from "./types.ts";

/**
 * The peer of a server-side socket. Deno's TLSSocket has no address of its own once a handshake
 * has failed (its handle is gone); the TCP socket it wraps (`_parent`) still has it.
 */
function peerOf(socket: tls.TLSSocket): { remoteAddress: string; remotePort: number } {
  const parent = (socket as unknown as { _parent?: { remoteAddress?: string; remotePort?: number } })._parent;
  return {
    remoteAddress: socket.remoteAddress ?? parent?.remoteAddress ?? "",
    remotePort: socket.remotePort ?? parent?.remotePort ?? 0,
  };
}

interface PendingWrite {
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * A Connection over a node:tls socket. Reads: chunks are copied into the ReadQueue (the runtime
 * may reuse a chunk's memory) and the socket is paused while it is full. Writes hand the stream a
 * copy and resolve while it is below its high-water mark, else at `drain`: the caller may reuse
 * its buffer at once, as on the other paths, and the next write overlaps the encryption of this
 * one (resolving in the write callback instead ran at less than half the speed on Deno).
 */
export class NodeTlsConnection implements Connection {
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly localPort: number;
  closeReason: string | null = null;
  private readonly incoming: ReadQueue;
  private readonly pending: PendingWrite[] = [];
  private paused = false;
  private closed = false;

  constructor(private readonly socket: tls.TLSSocket, readonly tls: TlsSession) {
    ({ remoteAddress: this.remoteAddress, remotePort: this.remotePort } = peerOf(socket));
    this.localPort = socket.localPort ?? 0;
    this.incoming = new ReadQueue(() => this.resumeReading());
    socket.setNoDelay(true);
    socket.on("data", (chunk: Uint8Array) => {
      if (this.incoming.push(new Uint8Array(chunk)) && !this.paused) {
        this.paused = true;
        socket.pause();
      }
    });
    socket.on("error", (err: Error) => {
      if (!this.closed) this.closeReason ??= tlsErrorReason(err);
    });
    socket.on("close", () => this.onClosed());
  }

  read(): Promise<Uint8Array | null> {
    return this.incoming.read();
  }

  write(data: Uint8Array): Promise<void> {
    if (this.closed) return Promise.reject(connectionClosedError());
    if (data.length === 0) return Promise.resolve();
    // A copy, so the caller may reuse its buffer once this resolves, which is below the stream's
    // high-water mark rather than once written (writes then overlap the encryption of the last).
    if (this.socket.write(data.slice())) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.socket.once("drain", () => {
        const w = this.pending.shift();
        w?.resolve();
      });
    });
  }

  close(): void {
    if (this.closed) return;
    this.shutDown(connectionClosedError("closed locally"));
    this.incoming.discard();
    this.socket.destroy();
  }

  private onClosed(): void {
    this.shutDown(connectionClosedError(this.closeReason ?? "closed by peer"));
    this.incoming.end();
  }

  private shutDown(err: Error): void {
    this.closed = true;
    for (const w of this.pending.splice(0)) w.reject(err);
  }

  private resumeReading(): void {
    if (!this.paused || this.closed) return;
    this.paused = false;
    this.socket.resume();
  }
}

function nodeTlsOptions(p: PreparedTls): tls.SecureContextOptions {
  if (p.tls12Ciphers !== undefined || p.tls13Ciphers !== undefined) {
    throw new Error("TLS cipherSuites: Deno's TLS (rustls) ignores a cipher list, so it cannot be honoured; leave it unset");
  }
  const out: tls.SecureContextOptions = { minVersion: p.minVersion, maxVersion: p.maxVersion };
  if (p.key !== undefined) Object.assign(out, { key: p.key, cert: p.cert });
  if (p.ca !== undefined) out.ca = p.ca;
  return out;
}

export function listenNodeTls(
  opts: ListenOptions,
  tlsOpts: TlsServerOptions,
  onConnection: (conn: Connection) => void,
): Promise<Listener> {
  let prepared: PreparedTls;
  let server: tls.Server;
  try {
    prepared = prepareTls(tlsOpts, "server");
    server = tls.createServer({
      ...nodeTlsOptions(prepared),
      // "requested" finishes the handshake without a certificate; a bad one is refused below.
      requestCert: prepared.clientAuth !== "none",
      rejectUnauthorized: prepared.clientAuth === "required",
      handshakeTimeout: opts.tlsHandshakeTimeoutMs ?? tlsHandshakeTimeoutMs,
    });
  } catch (err) {
    return Promise.reject(err);
  }
  const failed = (socket: tls.TLSSocket, reason: string) => {
    opts.onTlsFailure?.({ ...peerOf(socket), reason });
    socket.destroy();
  };
  server.on("tlsClientError", (err: Error, socket: tls.TLSSocket) => failed(socket, tlsErrorReason(err)));
  server.on("secureConnection", (socket: tls.TLSSocket) => {
    let peer: Uint8Array | null = null;
    if (prepared.clientAuth !== "none") {
      peer = derBytes(socket.getPeerCertificate()?.raw);
      if (peer !== null && !socket.authorized) {
        return failed(socket, `client certificate refused: ${String(socket.authorizationError)}`);
      }
      if (peer === null && prepared.clientAuth === "required") {
        return failed(socket, "client sent no certificate (ssl.client.auth=required)");
      }
    }
    onConnection(new NodeTlsConnection(socket, { protocol: socket.getProtocol() ?? "unknown", peerCertificate: peer }));
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      // A listening server's own errors (EMFILE at accept) must not end the process.
      server.on("error", () => {});
      const address = server.address();
      resolve({
        host: opts.host,
        port: typeof address === "object" && address !== null ? address.port : opts.port,
        // node's close() stops accepting at once; its callback waits for every connection to end,
        // and connections belong to their owners, so it is not waited for.
        close() {
          server.close();
          return Promise.resolve();
        },
        setTls(next: TlsServerOptions) {
          const p = prepareTls(next, "server");
          checkReload(prepared, p);
          server.setSecureContext(nodeTlsOptions(p));
          prepared = p;
        },
      });
    });
  });
}

const ipLiteral = /^(\d{1,3}(\.\d{1,3}){3}|.*:.*)$/;

export async function connectNodeTls(opts: ConnectOptions, tlsOpts: TlsClientOptions): Promise<Connection> {
  const where = `${opts.host}:${opts.port}`;
  const p = prepareTls(tlsOpts, "client");
  const serverName = tlsOpts.serverName ?? opts.host;
  let socket: tls.TLSSocket | undefined;
  const attempt = new Promise<Connection>((resolve, reject) => {
    socket = tls.connect({
      ...nodeTlsOptions(p),
      host: opts.host,
      port: opts.port,
      // SNI carries names only (RFC 6066); an address is still checked against the IP SANs.
      servername: ipLiteral.test(serverName) ? undefined : serverName,
      rejectUnauthorized: true,
      checkServerIdentity: (tlsOpts.verifyHostname ?? true)
        ? (_host, cert) => tls.checkServerIdentity(serverName, cert)
        : () => undefined,
    });
    const s = socket;
    const onError = (err: Error) => {
      s.destroy();
      reject(connectError(where, new Error(`TLS: ${tlsErrorReason(err)}`)));
    };
    s.once("error", onError);
    s.once("close", () => reject(new Error(`TLS connect to ${where} failed: closed during the handshake`)));
    s.once("secureConnect", () => {
      s.off("error", onError);
      const peerCertificate = derBytes(s.getPeerCertificate()?.raw);
      resolve(new NodeTlsConnection(s, { protocol: s.getProtocol() ?? "unknown", peerCertificate }));
    });
  });
  return await withConnectTimeout(attempt, opts.timeoutMs ?? tlsHandshakeTimeoutMs, where, () => socket?.destroy());
}
