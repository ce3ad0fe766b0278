// The Platform on Deno. Sockets use Deno.listen/Deno.connect; files use Deno.FsFile's sync
// methods (seek + read/write, truncate, fsync).
//
// Deno facts this file relies on (checked on Deno 2.9):
// - conn.write() may take fewer bytes than given; write() loops until all are in the kernel.
// - conn.read() fills a buffer we supply, so one scratch buffer per connection is reused and
//   each chunk is copied out at its exact length (no 64 KiB buffer pinned per small frame).
// - Closing a conn while a read or write on it is pending makes that call reject
//   (BadResource/Interrupted); those rejections are how a pending read learns of close().
// - Deno.connect has no timeout option; its AbortSignal cancels an attempt that takes too long.
// - Deno.serve binds synchronously (a busy port throws AddrInUse at once); shutdown() resolves
//   once requests in flight have been answered.
// Deno has no statfs of its own (2.9); its node:fs statfsSync is native and sync.
import { statfsSync } from "node:fs";
import { assert } from "../util/mod.ts";
import {
  connectError,
  connectionClosedError,
  fillRandom,
  resolveHost,
  guardHttpHandler,
  internalServerError,
  parentDir,
  readChunkBytes,
  spaceOf,
  ReadQueue,
  webClock,
  listenError,
  withConnectTimeout,
} from "./shared.ts";
import { connectNodeTls, listenNodeTls } from "./node_tls.ts";
import { prepareTls } from "./tls.ts";
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
} from "./types.ts";

// ---------------------------------------------------------------------------------------------
// Files

const fileModeNew = 0o644;

function openOptions(mode: OpenMode): Deno.OpenOptions {
  switch (mode) {
    case "read":
      return { read: true };
    // Not append: true, which makes the kernel ignore the offset of every write and would
    // break writeAt. append() writes at our own end-of-file position instead.
    case "readwrite":
      return { read: true, write: true, create: true, mode: fileModeNew };
    case "create-new":
      return { read: true, write: true, createNew: true, mode: fileModeNew };
  }
}

/** "Nothing is at this path": missing, or a path component is a file. */
function isMissing(err: unknown): boolean {
  return err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory;
}

function writeAll(file: Deno.FsFile, data: Uint8Array): void {
  let done = 0;
  while (done < data.length) done += file.writeSync(data.subarray(done));
}

/**
 * One open file. Writable handles keep their own end-of-file position, so append() needs no
 * stat; this relies on the log's rule that each file has one writer. Read-only handles ask the
 * kernel for the size, so they see a writer's appends.
 * Deno has no positional read/write, so each access is a seek followed by read or write; the
 * file position is private to this handle and nothing runs between the two calls.
 */
class DenoFile implements FileHandle {
  private endPosition: number;
  private closed = false;

  /** `size`: the file's size when the opener knows it (openAsync), else asked of the kernel. */
  constructor(
    readonly path: string,
    private readonly file: Deno.FsFile,
    private readonly writable: boolean,
    size?: number,
  ) {
    this.endPosition = size ?? file.statSync().size;
  }

  readAt(buf: Uint8Array, position: number): number {
    this.checkOpen();
    this.file.seekSync(position, Deno.SeekMode.Start);
    let done = 0;
    while (done < buf.length) {
      const n = this.file.readSync(buf.subarray(done));
      if (n === null || n === 0) break;
      done += n;
    }
    return done;
  }

  append(data: Uint8Array): void {
    this.writeAt(data, this.endPosition);
  }

  writeAt(data: Uint8Array, position: number): void {
    this.checkOpen();
    this.file.seekSync(position, Deno.SeekMode.Start);
    writeAll(this.file, data);
    this.endPosition = Math.max(this.endPosition, position + data.length);
  }

  size(): number {
    this.checkOpen();
    return this.writable ? this.endPosition : this.file.statSync().size;
  }

  truncate(size: number): void {
    this.checkOpen();
    this.file.truncateSync(size);
    this.endPosition = size;
  }

  sync(): void {
    this.checkOpen();
    this.file.syncSync();
  }

  syncAsync(): Promise<void> {
    this.checkOpen();
    return this.file.sync();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.file.close();
  }

  private checkOpen(): void {
    assert(!this.closed, `file ${this.path} used after close`);
  }
}

const denoFileSystem: FileSystem = {
  open(path: string, mode: OpenMode): FileHandle {
    const file = Deno.openSync(path, openOptions(mode));
    try {
      return new DenoFile(path, file, mode !== "read");
    } catch (err) {
      file.close();
      throw err;
    }
  },

  async openAsync(path: string, mode: OpenMode): Promise<FileHandle> {
    const file = await Deno.open(path, openOptions(mode));
    try {
      // The size, too, off the loop (see bun.ts).
      const size = mode === "create-new" ? 0 : (await file.stat()).size;
      return new DenoFile(path, file, mode !== "read", size);
    } catch (err) {
      file.close();
      throw err;
    }
  },

  readFile(path: string): Uint8Array | null {
    try {
      return Deno.readFileSync(path);
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  },

  writeFileAtomic(path: string, data: Uint8Array): void {
    // Kafka's checkpoint files use the same ".tmp" sibling, so a crash leaves a name operators know.
    const tmp = `${path}.tmp`;
    const file = Deno.openSync(tmp, { write: true, create: true, truncate: true, mode: fileModeNew });
    try {
      writeAll(file, data);
      file.syncSync();
    } catch (err) {
      // A full disk (ENOSPC) part way: the torn temp file goes, the old file stays as it was.
      file.close();
      try {
        Deno.removeSync(tmp);
      } catch {
        // The write's error is the one to report.
      }
      throw err;
    }
    file.close();
    Deno.renameSync(tmp, path);
    this.syncDir(parentDir(path));
  },

  rename(from: string, to: string): void {
    Deno.renameSync(from, to);
  },

  renameAsync(from: string, to: string): Promise<void> {
    return Deno.rename(from, to);
  },

  remove(path: string): void {
    try {
      Deno.removeSync(path, { recursive: true });
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
  },

  async removeAsync(path: string): Promise<void> {
    try {
      await Deno.remove(path, { recursive: true });
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
  },

  mkdirp(path: string): void {
    Deno.mkdirSync(path, { recursive: true });
  },

  mkdirpAsync(path: string): Promise<void> {
    return Deno.mkdir(path, { recursive: true });
  },

  readdir(path: string): string[] {
    try {
      return Array.from(Deno.readDirSync(path), (entry) => entry.name);
    } catch (err) {
      if (isMissing(err)) return [];
      throw err;
    }
  },

  stat(path: string): FileStat | null {
    try {
      const s = Deno.statSync(path);
      return { size: s.size, isFile: s.isFile, isDirectory: s.isDirectory, mtimeMs: s.mtime?.getTime() ?? 0 };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  },

  syncDir(path: string): void {
    const dir = Deno.openSync(path, { read: true });
    try {
      dir.syncSync();
    } catch (err) {
      // Some filesystems refuse fsync on a directory; that refusal is the only error ignored.
      if (!(err instanceof Deno.errors.IsADirectory) && !(err instanceof Deno.errors.NotSupported)) {
        const code = (err as { code?: string }).code;
        if (code !== "EINVAL") throw err;
      }
    } finally {
      dir.close();
    }
  },

  statfs(path: string): FileSystemSpace | null {
    try {
      return spaceOf(statfsSync(path));
    } catch (err) {
      // node:fs errors here, not Deno.errors: ENOENT / ENOTDIR by code.
      const code = (err as { code?: string }).code;
      if (code === "ENOENT" || code === "ENOTDIR") return null;
      throw err;
    }
  },
};

// ---------------------------------------------------------------------------------------------
// Sockets

/**
 * A Connection over one Deno TcpConn. A pump reads ahead into the ReadQueue and stops while it
 * is full (so the kernel's receive window closes on the peer); read() restarts it. Writes are
 * chained, so concurrent write() calls go out whole and in order.
 */
class DenoConnection implements Connection {
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly localPort: number;
  readonly tls = null;
  closeReason: string | null = null;
  private readonly incoming: ReadQueue;
  private readonly scratch = new Uint8Array(readChunkBytes);
  private pumping = false;
  private closed = false;
  private writeTail: Promise<void> = Promise.resolve();

  constructor(private readonly conn: Deno.TcpConn) {
    this.remoteAddress = conn.remoteAddr.hostname;
    this.remotePort = conn.remoteAddr.port;
    this.localPort = conn.localAddr.port;
    this.incoming = new ReadQueue(() => this.startPump());
    // Kafka sends small request/response frames; Nagle would add latency to every one of them.
    conn.setNoDelay(true);
    this.startPump();
  }

  read(): Promise<Uint8Array | null> {
    return this.incoming.read();
  }

  write(data: Uint8Array): Promise<void> {
    if (this.closed) return Promise.reject(connectionClosedError());
    const done = this.writeTail.then(() => this.writeAll(data));
    // The chain continues after a failed write; the next one then fails on `closed`.
    this.writeTail = done.catch(() => {});
    return done;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.incoming.discard();
    try {
      this.conn.close();
    } catch {
      // Already closed by the runtime after an error; close() stays idempotent.
    }
  }

  private async writeAll(data: Uint8Array): Promise<void> {
    let done = 0;
    while (done < data.length) {
      if (this.closed) throw connectionClosedError();
      try {
        done += await this.conn.write(data.subarray(done));
      } catch (err) {
        this.fail();
        throw connectionClosedError((err as Error).message);
      }
    }
  }

  private startPump(): void {
    if (this.pumping || this.closed || this.incoming.isEnded) return;
    this.pumping = true;
    void this.pump();
  }

  private async pump(): Promise<void> {
    try {
      while (!this.closed && !this.incoming.isFull) {
        let n: number | null;
        try {
          n = await this.conn.read(this.scratch);
        } catch (err) {
          n = null; // reset, or our own close() interrupting the read
          if (!this.closed) this.closeReason ??= (err as Error).message;
        }
        if (n === null) {
          this.fail();
          return;
        }
        this.incoming.push(this.scratch.slice(0, n));
      }
    } finally {
      // Cleared in the same turn the loop stops: a read() that drains the queue before a
      // later microtask would otherwise find `pumping` still set and never restart it.
      this.pumping = false;
    }
  }

  /** Peer closed or the socket failed: queued chunks stay readable, writes fail from now on. */
  private fail(): void {
    this.incoming.end();
    if (this.closed) return;
    this.closed = true;
    try {
      this.conn.close();
    } catch {
      // Already closed.
    }
  }
}

async function acceptLoop(listener: Deno.TcpListener, onConnection: (conn: Connection) => void) {
  while (true) {
    let conn: Deno.TcpConn;
    try {
      conn = await listener.accept();
    } catch (err) {
      // close() makes the pending accept reject; anything else (EMFILE…) must not end accepting.
      if (err instanceof Deno.errors.BadResource || err instanceof Deno.errors.Interrupted) return;
      await new Promise((r) => setTimeout(r, 10));
      continue;
    }
    const c = new DenoConnection(conn);
    try {
      onConnection(c);
    } catch (err) {
      // The owner's bug: drop this connection, keep accepting, and let the error surface.
      c.close();
      queueMicrotask(() => {
        throw err;
      });
    }
  }
}

const denoNetwork: Network = {
  listen(opts: ListenOptions, onConnection: (conn: Connection) => void): Promise<Listener> {
    if (opts.tls !== undefined) return listenNodeTls(opts, opts.tls, onConnection);
    let listener: Deno.TcpListener;
    try {
      listener = Deno.listen({ hostname: opts.host, port: opts.port, transport: "tcp" });
    } catch (err) {
      return Promise.reject(listenError(opts.host, opts.port, err));
    }
    const accepting = acceptLoop(listener, onConnection);
    let closing: Promise<void> | null = null;
    return Promise.resolve({
      host: opts.host,
      port: listener.addr.port,
      close(): Promise<void> {
        closing ??= (async () => {
          listener.close();
          await accepting;
        })();
        return closing;
      },
      setTls() {
        throw new Error(`listener ${opts.host}:${listener.addr.port} is plaintext: it has no TLS settings to replace`);
      },
    });
  },

  async connect(opts: ConnectOptions): Promise<Connection> {
    if (opts.tls !== undefined) return await connectNodeTls(opts, opts.tls);
    const abort = new AbortController();
    const where = `${opts.host}:${opts.port}`;
    const attempt = Deno.connect({
      hostname: opts.host,
      port: opts.port,
      transport: "tcp",
      signal: abort.signal,
    })
      .then((conn) => new DenoConnection(conn), (err) => Promise.reject(connectError(where, err)));
    return await withConnectTimeout(attempt, opts.timeoutMs, where, () => abort.abort());
  },
};

// ---------------------------------------------------------------------------------------------
// HTTP

const denoHttp: Http = {
  serve(opts: ListenOptions, handler: HttpHandler): Promise<HttpServer> {
    try {
      const tls = opts.tls === undefined ? undefined : prepareTls(opts.tls, "server");
      const server = Deno.serve({
        hostname: opts.host,
        port: opts.port,
        ...(tls === undefined ? {} : { key: tls.key!, cert: tls.cert! }),
        // The default onListen prints "Listening on ..." to stdout, which carries pino's JSON lines.
        onListen() {},
        onError: internalServerError,
      }, guardHttpHandler(handler));
      // shutdown() is graceful: requests in flight finish, idle connections close.
      return Promise.resolve({ host: opts.host, port: (server.addr as Deno.NetAddr).port, close: () => server.shutdown() });
    } catch (err) {
      return Promise.reject(err);
    }
  },
};

// ---------------------------------------------------------------------------------------------
// Process

const denoProcess: ProcessInfo = {
  pid: Deno.pid,
  hostname: () => Deno.hostname(),
  env: (name) => Deno.env.get(name),
  onSignal(signal, fn) {
    Deno.addSignalListener(signal, fn);
  },
  exit: (code) => Deno.exit(code),
  memoryRssBytes: () => Deno.memoryUsage().rss,
};

export function createDenoPlatform(): Platform {
  return {
    name: "deno",
    version: Deno.version.deno,
    fs: denoFileSystem,
    net: denoNetwork,
    http: denoHttp,
    clock: webClock(),
    process: denoProcess,
    randomBytes: fillRandom,
    resolveHost,
  };
}
