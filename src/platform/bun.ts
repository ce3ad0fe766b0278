/// <reference types="bun-types" />
// The Platform on Bun. Sockets use Bun.listen/Bun.connect (uSockets underneath); files use
// Bun's native node:fs sync calls, which map one to one onto the syscalls the log needs
// (pread/pwrite/ftruncate/fsync).
//
// Bun facts this file relies on (checked on Bun 1.4):
// - socket.write() is unbuffered: it returns how many bytes the kernel took (possibly 0), or -1
//   once the socket is closed. The rest is ours to keep and retry on `drain`.
// - The chunk passed to `data` is a fresh allocation per callback, never reused by Bun after the
//   callback returns, so it is queued without a copy.
// - A paused socket does not notice the peer's FIN until resumed; the read queue resumes it as
//   soon as it drains, so EOF still arrives after the queued chunks.
// - With allowHalfOpen false (the default), end() closes the socket at once and the `close`
//   handler runs synchronously inside end().
// - Bun.serve binds synchronously (a busy port throws at once, but only with reusePort: false, which
//   development: false turns on otherwise); stop() resolves once requests in
//   flight have been answered, and idle keep-alive connections do not hold it up.
import * as fs from "node:fs";
import * as os from "node:os";
import process from "node:process";
import { assert, tlsHandshakeTimeoutMs } from "../util/mod.ts";
import {
  connectError,
  connectionClosedError,
  fillRandom,
  resolveHost,
  guardHttpHandler,
  httpIdleTimeoutSeconds,
  internalServerError,
  parentDir,
  ReadQueue,
  spaceOf,
  webClock,
  listenError,
  withConnectTimeout,
} from "./shared.ts";
import { checkReload, derBytes, type PreparedTls, prepareTls, tls13Suites, tlsErrorReason } from "./tls.ts";
import type {
  ConnectOptions,
  Connection,
  FileHandle,
  FileStat,
  FileSystem,
  FileSystemSpace,
  Http,
  HttpHandler,
  HttpServer,
  Listener,
  ListenOptions,
  Network,
  OpenMode,
  Platform,
  ProcessInfo,
  TlsClientOptions,
  TlsServerOptions,
  TlsSession,
} from "./types.ts";

// ---------------------------------------------------------------------------------------------
// Files

const { O_RDONLY, O_RDWR, O_CREAT, O_EXCL, O_WRONLY, O_TRUNC } = fs.constants;
const fileModeNew = 0o644;

function openFlags(mode: OpenMode): number {
  switch (mode) {
    case "read":
      return O_RDONLY;
    // Not O_APPEND: on Linux pwrite ignores the offset on an O_APPEND descriptor, which would
    // break writeAt. append() writes at our own end-of-file position instead.
    case "readwrite":
      return O_RDWR | O_CREAT;
    case "create-new":
      return O_RDWR | O_CREAT | O_EXCL;
  }
}

function errorCode(err: unknown): string | undefined {
  return (err as { code?: string } | null)?.code;
}

/** "Nothing is at this path": missing, or a path component is a file. */
function isMissing(err: unknown): boolean {
  const code = errorCode(err);
  return code === "ENOENT" || code === "ENOTDIR";
}

/**
 * One open file. Writable handles keep their own end-of-file position, so append() is a
 * single pwrite with no fstat; this relies on the log's rule that each file has one writer.
 * Read-only handles ask the kernel for the size, so they see a writer's appends.
 */
class BunFile implements FileHandle {
  private endPosition: number;
  private closed = false;

  /** `size`: the file's size when the opener knows it (openAsync), else asked of the kernel. */
  constructor(
    readonly path: string,
    private readonly fd: number,
    private readonly writable: boolean,
    size?: number,
  ) {
    this.endPosition = size ?? fs.fstatSync(fd).size;
  }

  readAt(buf: Uint8Array, position: number): number {
    this.checkOpen();
    let done = 0;
    // pread may return short (signals, or the file ends); loop until full or EOF.
    while (done < buf.length) {
      const n = fs.readSync(this.fd, buf, done, buf.length - done, position + done);
      if (n === 0) break;
      done += n;
    }
    return done;
  }

  append(data: Uint8Array): void {
    this.writeAt(data, this.endPosition);
  }

  writeAt(data: Uint8Array, position: number): void {
    this.checkOpen();
    writeAllAt(this.fd, data, position);
    this.endPosition = Math.max(this.endPosition, position + data.length);
  }

  size(): number {
    this.checkOpen();
    return this.writable ? this.endPosition : fs.fstatSync(this.fd).size;
  }

  truncate(size: number): void {
    this.checkOpen();
    fs.ftruncateSync(this.fd, size);
    this.endPosition = size;
  }

  sync(): void {
    this.checkOpen();
    fs.fsyncSync(this.fd);
  }

  syncAsync(): Promise<void> {
    this.checkOpen();
    return new Promise((resolve, reject) => fs.fsync(this.fd, (e) => (e ? reject(e) : resolve())));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    fs.closeSync(this.fd);
  }

  // A closed descriptor number is soon reused by another open(); writing through a stale one
  // would corrupt an unrelated file, so use after close is a bug caught here.
  private checkOpen(): void {
    assert(!this.closed, `file ${this.path} used after close`);
  }
}

function writeAllAt(fd: number, data: Uint8Array, position: number): void {
  let done = 0;
  while (done < data.length) {
    done += fs.writeSync(fd, data, done, data.length - done, position + done);
  }
}

/** Node's Buffer.slice is a view where Uint8Array.slice copies; callers get plain Uint8Arrays. */
function plainBytes(b: Uint8Array): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

const bunFileSystem: FileSystem = {
  open(path: string, mode: OpenMode): FileHandle {
    const fd = fs.openSync(path, openFlags(mode), fileModeNew);
    try {
      return new BunFile(path, fd, mode !== "read");
    } catch (err) {
      fs.closeSync(fd);
      throw err;
    }
  },

  async openAsync(path: string, mode: OpenMode): Promise<FileHandle> {
    // The callback form hands over a plain descriptor (a promises FileHandle would close it when
    // collected).
    const fd = await new Promise<number>((resolve, reject) =>
      fs.open(path, openFlags(mode), fileModeNew, (err, fd) => (err ? reject(err) : resolve(fd)))
    );
    try {
      // The size, too, off the loop: an fstat on the loop waited behind the pool's creations
      // (the inode locks of the dir being filled), 30,000 of them for a topic of 10,000 partitions.
      const size = mode === "create-new" ? 0 : await new Promise<number>((resolve, reject) =>
        fs.fstat(fd, (err, st) => (err ? reject(err) : resolve(st.size)))
      );
      return new BunFile(path, fd, mode !== "read", size);
    } catch (err) {
      fs.closeSync(fd);
      throw err;
    }
  },

  readFile(path: string): Uint8Array | null {
    try {
      return plainBytes(fs.readFileSync(path));
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  },

  writeFileAtomic(path: string, data: Uint8Array): void {
    // Kafka's checkpoint files use the same ".tmp" sibling, so a crash leaves a name operators know.
    const tmp = `${path}.tmp`;
    const fd = fs.openSync(tmp, O_WRONLY | O_CREAT | O_TRUNC, fileModeNew);
    try {
      writeAllAt(fd, data, 0);
      fs.fsyncSync(fd);
    } catch (err) {
      // A full disk (ENOSPC) part way: the torn temp file goes, the old file stays as it was.
      fs.closeSync(fd);
      try {
        fs.rmSync(tmp, { force: true });
      } catch {
        // The write's error is the one to report.
      }
      throw err;
    }
    fs.closeSync(fd);
    fs.renameSync(tmp, path);
    this.syncDir(parentDir(path));
  },

  rename(from: string, to: string): void {
    fs.renameSync(from, to);
  },

  renameAsync(from: string, to: string): Promise<void> {
    return fs.promises.rename(from, to);
  },

  remove(path: string): void {
    fs.rmSync(path, { recursive: true, force: true });
  },

  async removeAsync(path: string): Promise<void> {
    await fs.promises.rm(path, { recursive: true, force: true });
  },

  mkdirp(path: string): void {
    fs.mkdirSync(path, { recursive: true });
  },

  async mkdirpAsync(path: string): Promise<void> {
    await fs.promises.mkdir(path, { recursive: true });
  },

  readdir(path: string): string[] {
    try {
      return fs.readdirSync(path);
    } catch (err) {
      if (isMissing(err)) return [];
      throw err;
    }
  },

  stat(path: string): FileStat | null {
    try {
      const s = fs.statSync(path);
      return { size: s.size, isFile: s.isFile(), isDirectory: s.isDirectory(), mtimeMs: s.mtimeMs };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  },

  syncDir(path: string): void {
    const fd = fs.openSync(path, O_RDONLY);
    try {
      fs.fsyncSync(fd);
    } catch (err) {
      // Some filesystems refuse fsync on a directory; that refusal is the only error ignored.
      const code = errorCode(err);
      if (code !== "EINVAL" && code !== "EISDIR" && code !== "ENOTSUP") throw err;
    } finally {
      fs.closeSync(fd);
    }
  },

  statfs(path: string): FileSystemSpace | null {
    try {
      return spaceOf(fs.statfsSync(path));
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  },
};

// ---------------------------------------------------------------------------------------------
// Sockets

type BunSocket = Bun.Socket<BunConnection | undefined>;
type SocketHandler<D, B extends Bun.BinaryType = "buffer"> = Bun.SocketHandler<D, B>;

interface PendingWrite {
  data: Uint8Array;
  written: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * A Connection over one Bun socket. Reads: chunks queue in a ReadQueue and the socket is paused
 * while it is full. Writes: whatever the kernel does not take is kept in `outgoing` and retried
 * on `drain`; each write() resolves once all of its bytes are in the kernel.
 */
class BunConnection implements Connection {
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly localPort: number;
  /** Set once the TLS handshake has settled, before the connection is handed to its owner. */
  tls: TlsSession | null = null;
  closeReason: string | null = null;
  /** A TLS connection's handshake deadline, cleared when the handshake settles. */
  handshakeTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly incoming: ReadQueue;
  private readonly outgoing: PendingWrite[] = [];
  private paused = false;
  private closed = false;

  constructor(private readonly socket: BunSocket) {
    this.remoteAddress = socket.remoteAddress;
    this.remotePort = socket.remotePort;
    this.localPort = socket.localPort;
    this.incoming = new ReadQueue(() => this.resumeReading());
    // Kafka sends small request/response frames; Nagle would add latency to every one of them.
    socket.setNoDelay(true);
  }

  read(): Promise<Uint8Array | null> {
    return this.incoming.read();
  }

  write(data: Uint8Array): Promise<void> {
    if (this.closed) return Promise.reject(connectionClosedError());
    if (data.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.outgoing.push({ data, written: 0, resolve, reject });
      if (this.outgoing.length === 1) this.flush();
    });
  }

  close(): void {
    if (this.closed) return;
    this.shutDown(connectionClosedError("closed locally"));
    this.incoming.discard();
    this.socket.end();
  }

  // --- called from the socket handlers

  onData(chunk: Uint8Array): void {
    if (this.incoming.push(chunk) && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
  }

  /** Writes queued bytes until the kernel stops taking them; runs again on `drain`. */
  flush(): void {
    while (this.outgoing.length > 0) {
      const w = this.outgoing[0];
      const n = this.socket.write(w.data.subarray(w.written));
      if (n < 0) {
        this.onClosed(new Error("socket closed while writing"));
        return;
      }
      w.written += n;
      if (w.written < w.data.length) return;
      this.outgoing.shift();
      w.resolve();
    }
  }

  /** The socket is gone (peer closed, error, or our own end()). Queued reads stay readable. */
  onClosed(err?: Error): void {
    clearTimeout(this.handshakeTimer);
    if (err !== undefined && !this.closed) this.closeReason ??= tlsErrorReason(err);
    this.shutDown(connectionClosedError(err?.message ?? "closed by peer"));
    this.incoming.end();
  }

  private shutDown(err: Error): void {
    this.closed = true;
    for (const w of this.outgoing.splice(0)) w.reject(err);
  }

  private resumeReading(): void {
    if (!this.paused || this.closed) return;
    this.paused = false;
    this.socket.resume();
  }
}

function attach(socket: BunSocket): BunConnection {
  const conn = new BunConnection(socket);
  socket.data = conn;
  return conn;
}

// `open` differs between listen (hand the connection to the owner) and connect (the caller
// gets it from the resolved promise); the other handlers are shared.
function socketHandlers(open: (socket: BunSocket) => void): SocketHandler<BunConnection | undefined> {
  const handlers: SocketHandler<BunConnection | undefined, "uint8array"> = {
    // Plain Uint8Array chunks: a Buffer's slice() is a view where Uint8Array's copies, and the
    // core is written against Uint8Array semantics.
    binaryType: "uint8array",
    open,
    data(socket, chunk) {
      socket.data?.onData(chunk);
    },
    drain(socket) {
      socket.data?.flush();
    },
    close(socket, err) {
      socket.data?.onClosed(err);
    },
    error(socket, err) {
      // Runs when one of these handlers threw: the connection can no longer be trusted.
      socket.data?.onClosed(err);
      socket.end();
    },
  };
  // bun-types types listen/connect handlers with the default binaryType ("buffer") whatever
  // binaryType says; at run time `data` receives the Uint8Array asked for above.
  return handlers as unknown as SocketHandler<BunConnection | undefined>;
}

const bunNetwork: Network = {
  listen(opts: ListenOptions, onConnection: (conn: Connection) => void): Promise<Listener> {
    try {
      if (opts.tls !== undefined) return Promise.resolve(listenTls(opts, opts.tls, onConnection));
      const server = Bun.listen<BunConnection | undefined>({
        hostname: opts.host,
        port: opts.port,
        data: undefined,
        socket: socketHandlers((socket) => onConnection(attach(socket))),
      });
      const listener: Listener = {
        host: opts.host,
        port: server.port,
        // stop(false): accepted connections belong to their owners and stay open.
        close: () => Promise.resolve(server.stop(false)),
        setTls() {
          throw new Error(`listener ${opts.host}:${server.port} is plaintext: it has no TLS settings to replace`);
        },
      };
      return Promise.resolve(listener);
    } catch (err) {
      return Promise.reject(listenError(opts.host, opts.port, err));
    }
  },

  async connect(opts: ConnectOptions): Promise<Connection> {
    const where = `${opts.host}:${opts.port}`;
    if (opts.tls !== undefined) return await connectTls(opts, opts.tls, where);
    const attempt = Bun.connect<BunConnection | undefined>({
      hostname: opts.host,
      port: opts.port,
      data: undefined,
      socket: socketHandlers(attach),
    }).then((socket) => {
      assert(socket.data !== undefined, "Bun.connect resolved before the open handler ran");
      return socket.data;
    }, (err) => Promise.reject(connectError(where, err)));
    return await withConnectTimeout(attempt, opts.timeoutMs, where);
  },
};

// ---------------------------------------------------------------------------------------------
// TLS
//
// Bun facts (checked on Bun 1.4.5, BoringSSL underneath):
// - Bun.listen's `tls` is fixed for the listener's life (its reload() swaps handlers only), so a
//   TLS listener is a plaintext Bun.listen whose sockets upgradeTLS({ isServer: true }) in `open`
//   with the settings current at that moment: setTls() rotates certificates for new connections
//   and leaves open ones alone. Measured as fast as a native tls listener (test/bench/tls_bench.ts).
// - With a `handshake` handler, `open` runs before the handshake and `handshake(socket, ok, err)`
//   after it; bytes written before it are lost, so a connection is handed over only after it.
// - A server with requestCert and rejectUnauthorized false reports ok=true with an error when the
//   client sent no certificate ("unable to get issuer certificate") as well as when it sent a bad
//   one; getPeerCertificate().raw tells the two apart.
// - A client with rejectUnauthorized false still verifies: a bad chain is in `err` (ok stays true),
//   a name mismatch is ok=false with ERR_TLS_CERT_ALTNAME_INVALID (checked only after the chain).
// - No minVersion/maxVersion strings: the versions are SSL_OP_NO_* bits in secureOptions.
// - After a failed server handshake Bun does not close the socket by itself: we end() it.
// - TLS 1.3 suites cannot be chosen (BoringSSL always offers its three); `ciphers` is TLS 1.2's.

const sslOpNoTlsV1 = 0x04000000;
const sslOpNoTlsV1_1 = 0x10000000;
const sslOpNoTlsV1_2 = 0x08000000;
const sslOpNoTlsV1_3 = 0x20000000;
const altNameInvalid = "ERR_TLS_CERT_ALTNAME_INVALID";

function bunTlsOptions(p: PreparedTls): Bun.TLSOptions {
  if (p.maxVersion === "TLSv1.3" && p.tls13Ciphers !== undefined && !tls13Suites.every((s) => p.tls13Ciphers!.includes(s))) {
    throw new Error(
      `TLS cipherSuites: Bun (BoringSSL) always offers every TLS 1.3 suite (${tls13Suites.join(", ")}); ` +
        "list them all or disable TLSv1.3",
    );
  }
  let secureOptions = sslOpNoTlsV1 | sslOpNoTlsV1_1;
  if (p.minVersion === "TLSv1.3") secureOptions |= sslOpNoTlsV1_2;
  if (p.maxVersion === "TLSv1.2") secureOptions |= sslOpNoTlsV1_3;
  const out: Bun.TLSOptions = { secureOptions };
  if (p.key !== undefined) Object.assign(out, { key: p.key, cert: p.cert });
  if (p.ca !== undefined) out.ca = p.ca;
  if (p.tls12Ciphers !== undefined && p.tls12Ciphers.length > 0) out.ciphers = p.tls12Ciphers.join(":");
  return out;
}

function bunServerTlsOptions(p: PreparedTls): Bun.TLSOptions {
  // "requested" lets the handshake finish without a certificate; a bad one is refused by
  // refusal() (as Java's wantClientAuth refuses it).
  return {
    ...bunTlsOptions(p),
    requestCert: p.clientAuth !== "none",
    rejectUnauthorized: p.clientAuth === "required",
    isServer: true,
  } as Bun.TLSOptions;
}

/** Why a server handshake is refused, or null to accept it. */
function refusal(p: PreparedTls, ok: boolean, err: Error | null, peer: Uint8Array | null): string | null {
  if (!ok) return err !== null ? tlsErrorReason(err) : "handshake failed";
  if (p.clientAuth === "none") return null;
  if (peer === null) return p.clientAuth === "required" ? "client sent no certificate (ssl.client.auth=required)" : null;
  return err !== null ? `client certificate refused: ${tlsErrorReason(err)}` : null;
}

function listenTls(opts: ListenOptions, tlsOpts: TlsServerOptions, onConnection: (conn: Connection) => void): Listener {
  let prepared = prepareTls(tlsOpts, "server");
  let bunTls = bunServerTlsOptions(prepared);
  const timeoutMs = opts.tlsHandshakeTimeoutMs ?? tlsHandshakeTimeoutMs;
  // handshakeTimer is set from open until the handshake settles: while set, the connection is
  // not its owner's yet, and its end is a failed handshake to report.
  const fail = (socket: BunSocket, reason: string) => {
    const conn = socket.data;
    if (conn === undefined || conn.handshakeTimer === undefined) return;
    clearTimeout(conn.handshakeTimer);
    conn.handshakeTimer = undefined;
    conn.closeReason = reason;
    opts.onTlsFailure?.({ remoteAddress: socket.remoteAddress, remotePort: socket.remotePort, reason });
    socket.end();
  };
  const base = socketHandlers((socket) => {
    const conn = attach(socket);
    conn.handshakeTimer = setTimeout(() => fail(socket, `TLS handshake not done after ${timeoutMs} ms`), timeoutMs);
  });
  const tlsHandlers = {
    ...base,
    close(socket: BunSocket, err?: Error) {
      fail(socket, err !== undefined ? tlsErrorReason(err) : "closed by the client during the TLS handshake");
      socket.data?.onClosed(err);
    },
    handshake(socket: BunSocket, ok: boolean, err: Error | null) {
      const conn = socket.data;
      if (conn === undefined || conn.handshakeTimer === undefined) return;
      const peer = prepared.clientAuth === "none" ? null : derBytes(socket.getPeerCertificate()?.raw);
      // The settings this socket was upgraded with may have been replaced since; a reload never
      // changes clientAuth, so the current ones judge it the same.
      const why = refusal(prepared, ok, err, peer);
      if (why !== null) return fail(socket, why);
      clearTimeout(conn.handshakeTimer);
      conn.handshakeTimer = undefined;
      conn.tls = { protocol: socket.getTLSVersion(), peerCertificate: peer };
      onConnection(conn);
    },
  };
  const server = Bun.listen<undefined>({
    hostname: opts.host,
    port: opts.port,
    data: undefined,
    socket: {
      open(raw) {
        try {
          // deno-lint-ignore no-explicit-any
          (raw as any).upgradeTLS({ data: undefined, tls: bunTls, socket: tlsHandlers });
        } catch (err) {
          opts.onTlsFailure?.({ remoteAddress: raw.remoteAddress, remotePort: raw.remotePort, reason: tlsErrorReason(err) });
          raw.end();
        }
      },
      // Bun wants a data handler; after the upgrade the TLS socket's handlers get the bytes.
      data() {},
    },
  });
  return {
    host: opts.host,
    port: server.port,
    close: () => Promise.resolve(server.stop(false)),
    setTls(next: TlsServerOptions) {
      const p = prepareTls(next, "server");
      checkReload(prepared, p);
      const b = bunServerTlsOptions(p);
      prepared = p;
      bunTls = b;
    },
  };
}

async function connectTls(opts: ConnectOptions, tlsOpts: TlsClientOptions, where: string): Promise<Connection> {
  const p = prepareTls(tlsOpts, "client");
  const verifyHostname = tlsOpts.verifyHostname ?? true;
  let socket: BunSocket | undefined;
  let timedOut = false;
  const attempt = new Promise<BunConnection>((resolve, reject) => {
    const failed = (s: BunSocket, reason: string) => {
      if (s.data !== undefined) s.data.closeReason ??= reason;
      reject(new Error(`TLS connect to ${where} failed: ${reason}`));
      s.end();
    };
    const base = socketHandlers(attach);
    const handlers = {
      ...base,
      handshake(s: BunSocket, ok: boolean, err: Error | null) {
        const conn = s.data;
        if (conn === undefined) return;
        const nameOnly = err !== null && (err as { code?: string }).code === altNameInvalid;
        if (err !== null && !(nameOnly && !verifyHostname)) return failed(s, tlsErrorReason(err));
        if (!ok && !nameOnly) return failed(s, "handshake failed");
        conn.tls = { protocol: s.getTLSVersion(), peerCertificate: derBytes(s.getPeerCertificate()?.raw) };
        resolve(conn);
      },
      close(s: BunSocket, err?: Error) {
        s.data?.onClosed(err);
        const why = err !== undefined ? tlsErrorReason(err) : "closed during the handshake";
        reject(new Error(`TLS connect to ${where} failed: ${why}`));
      },
    };
    Bun.connect<BunConnection | undefined>({
      hostname: opts.host,
      port: opts.port,
      data: undefined,
      // Bun aborts a bad handshake with an alert the server can log only when it rejects by
      // itself; without hostname verification it must not (a name mismatch is fatal there), and
      // `handshake` judges the chain instead, after which the server sees a plain close.
      tls: { ...bunTlsOptions(p), serverName: tlsOpts.serverName ?? opts.host, rejectUnauthorized: verifyHostname },
      socket: handlers as unknown as SocketHandler<BunConnection | undefined>,
    }).then((s) => {
      socket = s;
      // Connected only after the deadline: nobody waits for this handshake any more.
      if (timedOut) s.terminate();
    }, (err) => reject(connectError(where, err)));
  });
  return await withConnectTimeout(attempt, opts.timeoutMs ?? tlsHandshakeTimeoutMs, where, () => {
    timedOut = true;
    socket?.terminate();
  });
}

// ---------------------------------------------------------------------------------------------
// HTTP

const bunHttp: Http = {
  serve(opts: ListenOptions, handler: HttpHandler): Promise<HttpServer> {
    try {
      const tls = opts.tls === undefined ? undefined : prepareTls(opts.tls, "server");
      const server = Bun.serve({
        hostname: opts.host,
        port: opts.port,
        ...(tls === undefined ? {} : { tls: { key: tls.key, cert: tls.cert } }),
        // Not development mode: no HTML error pages, no source shown to clients.
        development: false,
        // Outside development mode Bun sets SO_REUSEPORT unless told not to: a second broker on
        // the same admin port would then bind too and take half of its requests.
        reusePort: false,
        idleTimeout: httpIdleTimeoutSeconds,
        fetch: guardHttpHandler(handler),
        error: internalServerError,
      });
      // stop() without closing active connections: requests in flight finish first.
      return Promise.resolve({ host: opts.host, port: server.port as number, close: () => server.stop() });
    } catch (err) {
      return Promise.reject(err);
    }
  },
};

// ---------------------------------------------------------------------------------------------
// Process

const bunProcess: ProcessInfo = {
  pid: process.pid,
  hostname: () => os.hostname(),
  env: (name) => process.env[name],
  onSignal(signal, fn) {
    process.on(signal, fn);
  },
  exit: (code) => process.exit(code),
  memoryRssBytes: () => process.memoryUsage.rss(),
};

export function createBunPlatform(): Platform {
  return {
    name: "bun",
    version: Bun.version,
    fs: bunFileSystem,
    net: bunNetwork,
    http: bunHttp,
    clock: webClock(),
    process: bunProcess,
    randomBytes: fillRandom,
    resolveHost,
  };
}
