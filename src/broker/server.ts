// SocketServer: accepts connections on the configured listeners, cuts the byte stream into
// size-prefixed frames, hands each to the RequestChannel, and writes responses in request order.
//
// Framing: a 4-byte big-endian size, then that many bytes. A size below the smallest header or
// above socket.request.max.bytes closes the connection before anything is allocated (Kafka does
// the same). Clients pipeline many requests on one connection; the server reads them ahead but
// handles them one at a time, in arrival order, as Kafka's muted channel does (a produce sent
// right after a CreateTopics sees the topic; nothing behind a request that closes the connection
// runs). Responses are written in that order while the next request is handled; handling pauses
// while more than limits.requestsInFlightPerConnectionMax responses wait to be written, and the
// platform stops reading the socket while frames wait to be handled, so a client that does not
// read its answers cannot make the broker queue unbounded work.

import type { Connection, Listener, Platform } from "../platform/mod.ts";
import { assert, requestHeaderBytesMin, requestsInFlightPerConnectionMax } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";

/** What the server needs from the layer that handles requests. */
export interface RequestHandler {
  /**
   * Handles one frame (without its size prefix). Resolves to the response frame (with its size
   * prefix), to null when the request gets no response (produce with acks=0), or to "close" when
   * the connection must be closed (malformed request, unknown API).
   */
  handle(frame: Uint8Array, conn: ConnectionInfo): Promise<Uint8Array | null | "close">;
}

export interface ConnectionInfo {
  id: number;
  listener: string;
  remote: string;
}

export interface ServerOptions {
  listeners: { name: string; host: string; port: number }[];
  socketRequestMaxBytes: number;
  /** connections.max.idle.ms: a connection that sends nothing for this long is closed. */
  connectionsMaxIdleMs: number;
}

export class SocketServer {
  private listeners: Listener[] = [];
  private connections = new Set<Connection>();
  private nextConnectionId = 1;
  private stopping = false;

  constructor(
    private readonly platform: Platform,
    private readonly options: ServerOptions,
    private readonly handler: RequestHandler,
    private readonly logger: Logger,
  ) {}

  /** Binds every listener; returns the bound ports (the real ones when 0 was configured). */
  async start(): Promise<{ name: string; host: string; port: number }[]> {
    const bound = [];
    for (const l of this.options.listeners) {
      const listener = await this.platform.net.listen({ host: l.host, port: l.port }, (c) => this.accept(c, l.name));
      this.listeners.push(listener);
      bound.push({ name: l.name, host: listener.host, port: listener.port });
      this.logger.info({ listener: l.name, host: listener.host, port: listener.port }, "listening");
    }
    return bound;
  }

  private accept(conn: Connection, listener: string): void {
    if (this.stopping) return conn.close();
    this.connections.add(conn);
    const info = { id: this.nextConnectionId++, listener, remote: `${conn.remoteAddress}:${conn.remotePort}` };
    this.serve(conn, info)
      .catch((e) => this.logger.error({ conn: info.id, remote: info.remote, err: String(e) }, "connection failed"))
      .finally(() => {
        conn.close();
        this.connections.delete(conn);
      });
  }

  private async serve(conn: Connection, info: ConnectionInfo): Promise<void> {
    // Closing an idle connection makes its pending read return null, which ends the loop.
    const idleMs = this.options.connectionsMaxIdleMs;
    let idle = this.platform.clock.setTimeout(() => this.closeIdle(conn, info), idleMs);
    try {
      await this.serveFrames(conn, info, () => {
        idle.cancel();
        idle = this.platform.clock.setTimeout(() => this.closeIdle(conn, info), idleMs);
      });
    } finally {
      idle.cancel();
    }
  }

  private async serveFrames(conn: Connection, info: ConnectionInfo, onActivity: () => void): Promise<void> {
    const frames = new FrameReader(this.options.socketRequestMaxBytes);
    const responses = new ResponseWriter(conn);
    for (;;) {
      const chunk = await conn.read();
      if (chunk === null) break;
      onActivity();
      frames.push(chunk);
      for (;;) {
        const frame = frames.next();
        if (frame === "too-large" || frame === "too-small") {
          const what = frame === "too-large" ? "larger than socket.request.max.bytes" : "smaller than a request header";
          this.logger.warn({ conn: info.id, remote: info.remote, size: frames.badSize }, `closing connection: frame ${what}`);
          return await responses.flush();
        }
        if (frame === null) break;
        // One request at a time, as Kafka's muted channel does: a request sees every effect of the
        // ones before it on this connection, and nothing behind a closing request runs.
        const response = await this.handler.handle(frame, info);
        if (response === "close") return await responses.flush();
        if (response !== null) responses.enqueue(response);
        if (responses.queued >= requestsInFlightPerConnectionMax) await responses.drainBelow(requestsInFlightPerConnectionMax / 2);
        if (responses.failed) return;
      }
    }
    await responses.flush();
  }

  private closeIdle(conn: Connection, info: ConnectionInfo): void {
    this.logger.info({ conn: info.id, remote: info.remote }, "closing idle connection (connections.max.idle.ms)");
    conn.close();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const l of this.listeners) await l.close();
    this.listeners = [];
    for (const c of this.connections) c.close();
    this.connections.clear();
  }
}

/** Accumulates chunks and yields whole frames; views into a chunk when a frame lies within one. */
export class FrameReader {
  private chunks: Uint8Array[] = [];
  private buffered = 0;
  badSize = 0;

  constructor(private readonly maxFrameBytes: number) {}

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
  }

  next(): Uint8Array | null | "too-large" | "too-small" {
    if (this.buffered < 4) return null;
    const size = this.peekSize();
    if (size > this.maxFrameBytes) return (this.badSize = size), "too-large";
    if (size < requestHeaderBytesMin) return (this.badSize = size), "too-small";
    if (this.buffered < 4 + size) return null;
    const whole = this.take(4 + size);
    return whole.subarray(4);
  }

  private peekSize(): number {
    const head = this.chunks[0].length >= 4 ? this.chunks[0] : this.concat(4);
    return new DataView(head.buffer, head.byteOffset, 4).getInt32(0);
  }

  /** The first n buffered bytes as one array (copied only when they span chunks). */
  private concat(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let o = 0;
    for (const c of this.chunks) {
      const k = Math.min(c.length, n - o);
      out.set(c.subarray(0, k), o);
      o += k;
      if (o === n) break;
    }
    return out;
  }

  private take(n: number): Uint8Array {
    assert(n <= this.buffered, "take within buffered bytes");
    const first = this.chunks[0];
    let out: Uint8Array;
    if (first.length >= n) out = first.subarray(0, n);
    else out = this.concat(n);
    // Drop n bytes from the front.
    let left = n;
    while (left > 0) {
      const c = this.chunks[0];
      if (c.length <= left) {
        this.chunks.shift();
        left -= c.length;
      } else {
        this.chunks[0] = c.subarray(left);
        left = 0;
      }
    }
    this.buffered -= n;
    return out;
  }
}

/**
 * Writes responses in order while the next request is handled, so a slow reader costs the
 * connection its pipelining only once the queue passes the in-flight limit.
 */
class ResponseWriter {
  private queue: Uint8Array[] = [];
  private writing = false;
  private idle: Array<() => void> = [];
  failed = false;

  constructor(private readonly conn: Connection) {}

  get queued(): number {
    return this.queue.length;
  }

  enqueue(response: Uint8Array): void {
    this.queue.push(response);
    if (!this.writing) void this.run();
  }

  private async run(): Promise<void> {
    this.writing = true;
    try {
      while (this.queue.length > 0) {
        await this.conn.write(this.queue[0]);
        this.queue.shift();
        this.wake();
      }
    } catch {
      this.failed = true;
      this.queue.length = 0;
      this.conn.close();
    } finally {
      this.writing = false;
      this.wake();
    }
  }

  private wake(): void {
    const waiters = this.idle;
    this.idle = [];
    for (const w of waiters) w();
  }

  async drainBelow(n: number): Promise<void> {
    while (this.queue.length > n && !this.failed) await new Promise<void>((r) => this.idle.push(r));
  }

  /** Resolves once every queued response is written (or writing failed). */
  flush(): Promise<void> {
    return this.drainBelow(0);
  }
}
