// Pieces both platform implementations share: the bounded read queue behind Connection.read(),
// the clock, random bytes and path helpers. Nothing here touches Bun.* or Deno.*, so both
// bun.ts and deno.ts build on the same semantics instead of re-deriving them.
import type { Clock, FileSystemSpace, HttpHandler, Timer } from "./types.ts";

export { randomBytesPerCallMax, readChunkBytes, readQueueChunksMax } from "../util/mod.ts";
import { hostResolveTimeoutMs, randomBytesPerCallMax, readQueueChunksMax } from "../util/mod.ts";

type Waiter = (chunk: Uint8Array | null) => void;

/**
 * Received chunks waiting for read(), plus the readers waiting for chunks. At most one side is
 * non-empty at a time. After end(), queued chunks are still handed out, then null forever;
 * after discard() (our own close) everything is dropped and every read answers null.
 * onBelowMax runs when a read() takes the queue below the bound, so the owner can resume the
 * socket it paused.
 */
export class ReadQueue {
  private readonly chunks: Uint8Array[] = [];
  private readonly waiters: Waiter[] = [];
  private ended = false;

  constructor(private readonly onBelowMax: () => void) {}

  /** Delivers a chunk; returns true when the queue is now full and the socket should pause. */
  push(chunk: Uint8Array): boolean {
    if (this.ended) return false;
    const waiter = this.waiters.shift();
    if (waiter !== undefined) {
      waiter(chunk);
      return false;
    }
    this.chunks.push(chunk);
    return this.chunks.length >= readQueueChunksMax;
  }

  get isFull(): boolean {
    return this.chunks.length >= readQueueChunksMax;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** The peer closed or the connection failed: queued chunks remain readable, then null. */
  end(): void {
    this.ended = true;
    for (const w of this.waiters.splice(0)) w(null);
  }

  /** We closed: nothing queued is wanted any more. */
  discard(): void {
    this.chunks.length = 0;
    this.end();
  }

  read(): Promise<Uint8Array | null> {
    const chunk = this.chunks.shift();
    if (chunk !== undefined) {
      if (!this.ended && this.chunks.length < readQueueChunksMax) this.onBelowMax();
      return Promise.resolve(chunk);
    }
    if (this.ended) return Promise.resolve(null);
    // Nothing queued: the reader waits, and the socket must be reading to feed it.
    this.onBelowMax();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

/** The error every write() on a closed connection rejects with. */
export function connectionClosedError(detail?: string): Error {
  return new Error(detail === undefined ? "connection closed" : `connection closed: ${detail}`);
}

/**
 * Bun says only "Failed to connect"; both runtimes omit the address. The broker logs this error
 * for replica fetchers and the controller channel, so it names the peer and keeps the cause.
 */
export function connectError(where: string, cause: unknown): Error {
  const code = (cause as { code?: string } | null)?.code;
  const detail = (cause as Error | null)?.message ?? String(cause);
  return new Error(`connect to ${where} failed: ${detail}${code !== undefined ? ` (${code})` : ""}`, {
    cause,
  });
}

/**
 * A listen failure naming the address and the cause: Bun says only "Failed to listen at <host>" and
 * Deno "Address already in use (os error 98)", neither with the port an operator must look for.
 */
export function listenError(host: string, port: number, cause: unknown): Error {
  const message = (cause as Error | null)?.message ?? String(cause);
  const code = (cause as { code?: string } | null)?.code ??
    (/in use/i.test(message) ? "EADDRINUSE" : undefined);
  // Anything else (a TLS settings error, say) is its caller's to report as it is.
  if (code === undefined) return cause instanceof Error ? cause : new Error(message);
  const reason = LISTEN_REASONS[code] ?? message;
  const where = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
  return new Error(`cannot listen on ${where}: ${reason} (${code})`, { cause });
}

const LISTEN_REASONS: Record<string, string> = {
  EADDRINUSE: "address already in use",
  EADDRNOTAVAIL: "address not available on this host",
  EACCES: "permission denied",
};

/**
 * node:fs's StatFs as the contract's FileSystemSpace. Java's FileStore counts in f_frsize units;
 * node:fs reports `frsize` where the runtime has it (Bun 1.4 and Deno 2.9 do), else `bsize`,
 * which equals it on Linux's common filesystems.
 */
export function spaceOf(
  s: { bsize: number; blocks: number; bavail: number; frsize?: number },
): FileSystemSpace {
  const unit = s.frsize ?? s.bsize;
  return { totalBytes: s.blocks * unit, usableBytes: s.bavail * unit };
}

/** Directory part of a "/"-joined path ("." when there is none), for syncDir after a rename. */
export function parentDir(path: string): string {
  const i = path.lastIndexOf("/");
  if (i < 0) return ".";
  if (i === 0) return "/";
  return path.slice(0, i);
}

/**
 * The clock is the same on both runtimes: they implement the web timer and performance APIs.
 * Timers are deliberately not unref'd: the broker's schedulers (flush, retention, session
 * expiry) must keep the process alive.
 */
export function webClock(): Clock {
  return {
    nowMs: () => Date.now(),
    monotonicMs: () => performance.now(),
    setTimeout(fn: () => void, ms: number): Timer {
      const id = setTimeout(fn, ms);
      return { cancel: () => clearTimeout(id) };
    },
    setInterval(fn: () => void, ms: number): Timer {
      const id = setInterval(fn, ms);
      return { cancel: () => clearInterval(id) };
    },
  };
}

export function fillRandom(out: Uint8Array): void {
  for (let off = 0; off < out.length; off += randomBytesPerCallMax) {
    crypto.getRandomValues(out.subarray(off, Math.min(out.length, off + randomBytesPerCallMax)));
  }
}

/** Races a connect against timeoutMs; a connection that arrives after the timeout is closed. */
export function withConnectTimeout<T extends { close(): void }>(
  attempt: Promise<T>,
  timeoutMs: number | undefined,
  what: string,
  onTimeout?: () => void,
): Promise<T> {
  if (timeoutMs === undefined) return attempt;
  return new Promise<T>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      onTimeout?.();
      reject(new Error(`connect to ${what} timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    attempt.then(
      (conn) => {
        clearTimeout(timer);
        if (timedOut) conn.close();
        else resolve(conn);
      },
      (err) => {
        clearTimeout(timer);
        if (!timedOut) reject(err);
      },
    );
  });
}

/** Seconds an HTTP connection may stay silent (Bun's idleTimeout; its default of 10 s would cut
 * off an admin request that waits for a topic to appear). */
export const httpIdleTimeoutSeconds = 120;

/** The answer to a request whose handler failed: no details leak to the client. */
export function internalServerError(): Response {
  return new Response("internal server error\n", { status: 500, headers: { "content-type": "text/plain" } });
}

/** Wraps a handler so a throw or rejection becomes a plain 500, the same on both runtimes. */
export function guardHttpHandler(handler: HttpHandler): HttpHandler {
  return async (request) => {
    try {
      return await handler(request);
    } catch {
      return internalServerError();
    }
  };
}

/**
 * Platform.resolveHost: node:dns's lookup behaves alike under Bun and Deno (the system resolver).
 * A client may ask for any name (AlterClientQuotas' ip entity), so only a well-formed host name is
 * looked up, and a resolver that does not answer within hostResolveTimeoutMs counts as "does not
 * resolve" (Java's InetAddress would wait for it; a request should not). node:dns is loaded on
 * first use: start-up does not pay for it.
 */
export async function resolveHost(name: string): Promise<string | null> {
  if (!isHostName(name)) return null;
  const { lookup } = await import("node:dns/promises");
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), hostResolveTimeoutMs));
  try {
    return await Promise.race([lookup(name).then((r) => r.address, () => null), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens, 253 bytes at most. */
export function isHostName(name: string): boolean {
  return name.length > 0 && name.length <= 253 && /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)(\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))*\.?$/.test(name);
}
