// The Platform: everything the runtime-agnostic core needs from Bun or Deno, and nothing more.
// Only src/platform/ and the CLI entry touch Bun.*, Deno.* or node:* I/O; every other module
// receives a Platform object.
//
// Invariants:
// - File operations are synchronous. The broker is one event loop and each partition's state has
//   one owner, so an append must finish before the next event runs ("no await between a check and
//   the mutation it guards"). Writes go to the page cache and take microseconds; fsync is the only
//   slow call and runs from the flush scheduler, not per request.
// - Except creation and removal, which also have async forms (mkdirpAsync, openAsync,
//   renameAsync, removeAsync) run on
//   the runtime's I/O thread pool: creating a file, a directory or a name waits on the
//   filesystem's journal (one call can take several ms on a busy ext4), and thousands of them
//   (a topic of 10,000 partitions) would hold the event loop for seconds. Callers prepare what
//   they create with these, then change their state synchronously.
// - Paths are plain strings joined with "/".
// - A Connection applies backpressure both ways: a producer that is not read from stops being
//   read (the runtime pauses the socket), and write() resolves only once the bytes are queued
//   below the socket's high-water mark.

export interface FileStat {
  size: number;
  isFile: boolean;
  isDirectory: boolean;
  mtimeMs: number;
}

/** The volume holding a path (statfs), as Java's FileStore reports it. */
export interface FileSystemSpace {
  /** f_blocks * f_frsize: the volume's size (FileStore.getTotalSpace). */
  totalBytes: number;
  /** f_bavail * f_frsize: what an unprivileged writer may still use (FileStore.getUsableSpace). */
  usableBytes: number;
}

export interface FileHandle {
  readonly path: string;
  /** Reads into buf (up to buf.length bytes) from position; returns the count read, 0 at EOF. */
  readAt(buf: Uint8Array, position: number): number;
  /** Writes all of data at the end of the file. */
  append(data: Uint8Array): void;
  /** Writes all of data at position (the file grows if needed). */
  writeAt(data: Uint8Array, position: number): void;
  size(): number;
  truncate(size: number): void;
  /** fsync: returns once data and metadata are on stable storage. */
  sync(): void;
  /**
   * The same fsync on the runtime's I/O thread pool: the event loop runs on while the disk
   * catches up (an fsync on a busy ext4 can take seconds: it commits every file's metadata).
   * Nothing may close the handle before it settles. Optional: callers fall back to sync().
   */
  syncAsync?(): Promise<void>;
  close(): void;
}

export type OpenMode =
  | "read" // must exist
  | "readwrite" // created if missing
  | "create-new"; // must not exist

export interface FileSystem {
  open(path: string, mode: OpenMode): FileHandle;
  /** open() on the runtime's I/O thread pool (see the file comment); same modes and errors. */
  openAsync(path: string, mode: OpenMode): Promise<FileHandle>;
  /** Whole file, or null when it does not exist. */
  readFile(path: string): Uint8Array | null;
  /** Writes a temp file beside path, fsyncs it, renames it over path, fsyncs the directory. */
  writeFileAtomic(path: string, data: Uint8Array): void;
  rename(from: string, to: string): void;
  /** rename() on the runtime's I/O thread pool. */
  renameAsync(from: string, to: string): Promise<void>;
  /** Removes a file or a directory tree; no error when it does not exist. */
  remove(path: string): void;
  /**
   * remove() on the runtime's I/O thread pool: a deleted partition's files are unlinked while the
   * event loop runs on (each unlink waits on the filesystem's journal, as creation does).
   */
  removeAsync(path: string): Promise<void>;
  /** Creates the directory and its parents; no error when it exists. */
  mkdirp(path: string): void;
  /** mkdirp() on the runtime's I/O thread pool. */
  mkdirpAsync(path: string): Promise<void>;
  /** Entry names (not paths), or [] when the directory does not exist. */
  readdir(path: string): string[];
  /** Null when nothing is at path. */
  stat(path: string): FileStat | null;
  /** fsync of a directory, so renames and creations in it are durable. */
  syncDir(path: string): void;
  /** The space of the volume holding path (statfs(2)); null when nothing is at path. */
  statfs(path: string): FileSystemSpace | null;
}

export interface Connection {
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly localPort: number;
  /**
   * The next chunk received, or null once the peer has closed or the connection failed. While
   * nobody reads, the runtime stops reading the socket (at most a few chunks are buffered).
   */
  read(): Promise<Uint8Array | null>;
  /**
   * Sends all of data. Resolves when the runtime has accepted it below its high-water mark;
   * rejects when the connection is closed. Callers await it before writing more.
   */
  write(data: Uint8Array): Promise<void>;
  /** Closes both directions; pending reads return null, pending writes reject. Idempotent. */
  close(): void;
  /** What the TLS handshake settled, or null on a plaintext connection. */
  readonly tls: TlsSession | null;
  /**
   * Why the connection ended when it was not a clean close (a TLS alert, a bad record, a reset),
   * for the owner's log line; null while open or after a clean close by either side.
   */
  readonly closeReason: string | null;
}

/** A TLS protocol version as Kafka's ssl.enabled.protocols names it. */
export type TlsProtocol = "TLSv1.2" | "TLSv1.3";

/** Kafka's ssl.client.auth: whether a TLS listener asks for a client certificate. */
export type TlsClientAuth = "none" | "requested" | "required";

/**
 * TLS settings both sides share. Certificates and keys are PEM text, as Kafka's PEM keystores
 * (KIP-651) hold them. privateKey may be PKCS#8 ("PRIVATE KEY"), PKCS#1 ("RSA PRIVATE KEY"), SEC1
 * ("EC PRIVATE KEY"), or encrypted ("ENCRYPTED PRIVATE KEY", or a legacy Proc-Type header) with
 * privateKeyPassword. A key that cannot be read or does not match the certificate is refused when
 * the options are given (listen, connect, setTls), never per connection.
 */
export interface TlsCommonOptions {
  /** The own certificate first, then its intermediates (ssl.keystore.certificate.chain). */
  certificateChain?: string;
  /** ssl.keystore.key. */
  privateKey?: string;
  /** ssl.key.password. */
  privateKeyPassword?: string;
  /**
   * PEM certificates to verify the peer against (ssl.truststore.certificates); they replace the
   * runtime's default roots. Unset: the runtime's default roots (a client) or none (a server).
   */
  trustedCertificates?: string;
  /** ssl.enabled.protocols; default both. */
  protocols?: TlsProtocol[];
  /**
   * ssl.cipher.suites, by IANA name (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, as Java names them)
   * or OpenSSL name. Unset: the runtime's defaults. A runtime that cannot honour the list refuses
   * it with an error naming the reason, rather than ignoring it.
   */
  cipherSuites?: string[];
}

export interface TlsServerOptions extends TlsCommonOptions {
  certificateChain: string;
  privateKey: string;
  /**
   * "requested": a client may send no certificate, but one it sends must verify against
   * trustedCertificates (as Java's setWantClientAuth). Default "none".
   */
  clientAuth?: TlsClientAuth;
}

export interface TlsClientOptions extends TlsCommonOptions {
  /** SNI and the name the certificate is checked against; default the host connected to. */
  serverName?: string;
  /**
   * Check the server certificate's names against serverName (Kafka's
   * ssl.endpoint.identification.algorithm=https, its default); false for the empty value. The
   * chain is verified either way.
   */
  verifyHostname?: boolean;
}

/** A TLS connection's settled handshake, for the broker's principal. */
export interface TlsSession {
  /** The negotiated version ("TLSv1.2", "TLSv1.3"). */
  readonly protocol: string;
  /** The peer's certificate (the leaf) as DER, or null when it sent none. */
  readonly peerCertificate: Uint8Array | null;
}

/** A listener's TLS handshake that failed: no Connection was handed to the owner for it. */
export interface TlsHandshakeFailure {
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly reason: string;
}

export interface Listener {
  readonly host: string;
  /** The bound port (the real one when 0 was asked for). */
  readonly port: number;
  /** Stops accepting; open connections are left to their owners. */
  close(): Promise<void>;
  /**
   * TLS listeners only: new connections use opts from now on (certificate rotation without a
   * restart); open connections keep what they negotiated. Throws, leaving the old settings, when
   * opts cannot be used (unreadable key, key not matching the certificate) or would change
   * clientAuth. On a plaintext listener it throws.
   */
  setTls(opts: TlsServerOptions): void;
}

export interface ListenOptions {
  host: string;
  port: number;
  /**
   * Serve TLS. A connection is handed to onConnection only once its handshake has completed
   * (and its client certificate, if any, verified); one that fails or stalls past
   * tlsHandshakeTimeoutMs is closed and reported to onTlsFailure.
   */
  tls?: TlsServerOptions;
  onTlsFailure?: (failure: TlsHandshakeFailure) => void;
  /** Overrides tlsHandshakeTimeoutMs (tests, or an operator's own bound). */
  tlsHandshakeTimeoutMs?: number;
}

export interface ConnectOptions {
  host: string;
  port: number;
  /** Bounds the connect and, with tls, the handshake (default tlsHandshakeTimeoutMs for it). */
  timeoutMs?: number;
  /** Speak TLS; connect() resolves once the handshake has completed and the server verified. */
  tls?: TlsClientOptions;
}

export interface Network {
  listen(opts: ListenOptions, onConnection: (conn: Connection) => void): Promise<Listener>;
  connect(opts: ConnectOptions): Promise<Connection>;
}

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the Unix epoch (wall clock; may jump). */
  nowMs(): number;
  /** Milliseconds from an arbitrary origin; never goes backwards. For timeouts and rates. */
  monotonicMs(): number;
  setTimeout(fn: () => void, ms: number): Timer;
  setInterval(fn: () => void, ms: number): Timer;
}

export interface ProcessInfo {
  readonly pid: number;
  hostname(): string;
  env(name: string): string | undefined;
  /** Registers a handler for SIGTERM/SIGINT/SIGHUP. */
  onSignal(signal: "SIGTERM" | "SIGINT" | "SIGHUP", fn: () => void): void;
  exit(code: number): never;
  /** Resident set size in bytes. */
  memoryRssBytes(): number;
}

/** A handler in the web's terms (what a Hono app's fetch is): one Request in, one Response out. */
export type HttpHandler = (request: Request) => Response | Promise<Response>;

export interface HttpServer {
  readonly host: string;
  /** The bound port (the real one when 0 was asked for). */
  readonly port: number;
  /** Stops accepting, lets requests in flight finish, closes idle keep-alive connections. */
  close(): Promise<void>;
}

export interface Http {
  /**
   * Serves HTTP/1.1 on host:port with handler (Bun.serve / Deno.serve). Rejects when the address
   * cannot be bound. A handler that throws or rejects answers 500 with no details; the runtime
   * prints nothing of its own (no banner, no error page). With opts.tls it serves HTTPS with that
   * key and certificate chain (clientAuth, protocols and cipherSuites are not applied to HTTP).
   */
  serve(opts: ListenOptions, handler: HttpHandler): Promise<HttpServer>;
}

export interface Platform {
  readonly name: "bun" | "deno";
  readonly version: string;
  readonly fs: FileSystem;
  readonly net: Network;
  readonly http: Http;
  readonly clock: Clock;
  readonly process: ProcessInfo;
  /** Fills out with cryptographically random bytes. */
  randomBytes(out: Uint8Array): void;
  /** The first address a host name resolves to (Java's InetAddress.getByName), null when it does not resolve. */
  resolveHost(name: string): Promise<string | null>;
}
