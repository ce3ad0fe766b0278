// KafkaConnection: one TCP connection to a Kafka broker, speaking the request/response protocol
// with the project's own codec (protocol/codec.ts, headers.ts), over the Platform's sockets.
//
// Wire format: every frame is an int32 size, then that many bytes. A request frame holds a
// request header (v1, or v2 for flexible versions: key, version, correlation id, client id,
// tagged fields) and the body; a response frame holds a response header (v0, or v1 for flexible
// versions except ApiVersions: correlation id, tagged fields) and the body.
//
// Invariants:
// - Requests are pipelined: each is encoded and queued when asked for, written in order (one
//   Connection.write at a time, as its contract requires), and matched to its answer by a
//   correlation id unique among those in flight. A Kafka broker answers in request order, but the
//   match does not rely on it.
// - Every request ends exactly once: answered, or rejected with a KafkaConnectionError that names
//   the peer, the API and why (timeout, disconnect, malformed answer).
// - A response frame's size is checked against `responseBytesMax` (limits.clientResponseBytesMax
//   at most) before anything is allocated; a frame past it, a frame that does not decode whole, or
//   an answer nobody waits for closes the connection: the peer is out of step with us.
// - A request's timeout runs from when it leaves the queue to be written (as Kafka's from when it
//   is sent), so time held back by a throttle or a re-login does not count against it.
// - A request that times out closes the connection (as Kafka's NetworkClient does): the peer or
//   the link is stuck, and whatever else is in flight fails now instead of waiting out its own
//   timer. After close() nothing is sent, every waiting request is rejected, `closed` is true.
// - A request that expects no response (Produce with acks=0) resolves once written.
// - With `sasl`, connect() resolves only once the login succeeded: ApiVersions, SaslHandshake v1,
//   then SaslAuthenticate (PLAIN's one token, SCRAM's two, the server's signature checked). A
//   refused login rejects with the broker's message and closes the connection. When the broker
//   grants a session lifetime (connections.max.reauth.ms, KIP-368), the connection logs in again
//   on its own at 85% of it: new requests are held, those in flight are answered, the SASL
//   exchange runs alone on the wire (the broker accepts nothing else in between), then the held
//   requests go. A failed re-login closes the connection.
// - Quotas (KIP-219): an answer carrying throttle_time_ms > 0, at a version whose clients throttle
//   themselves (protocol/throttle.ts), holds every later request to this broker, unwritten, until
//   the throttle time has passed since the answer arrived (Kafka's NetworkClient.maybeThrottle);
//   the broker has muted the connection for that long anyway. Requests already written wait for
//   their answers as before.
import type { Connection, Platform, Timer, TlsClientOptions } from "../platform/mod.ts";
import {
  type ApiSchema,
  ApiVersionsApi,
  plainToken,
  SaslAuthenticateApi,
  SaslHandshakeApi,
  ScramClientExchange,
  scramMechanismByName,
  clientThrottles,
  decode,
  encode,
  readResponseHeader,
  responseHeaderFlexible,
  type Struct,
  writeRequestHeader,
} from "../protocol/mod.ts";
import { clientConcatBytesMax, clientFrameSlackBytesMax, clientPooledFrameBytesMin, clientPooledFramesMax, clientResponseBytesMax, ErrorCode, errorName, frameBufferReuseBytesMax, Reader, Writer } from "../util/mod.ts";

/** How long a TCP connect may take when the caller does not say (Kafka's socket.connection.setup.timeout.ms). */
export const connectTimeoutMsDefault = 10_000;
/** The client id requests carry when the caller does not say. */
export const clientIdDefault = "strand";

export class KafkaConnectionError extends Error {
  override name = "KafkaConnectionError";
}

export interface KafkaConnectionOptions {
  host: string;
  port: number;
  /** The request header's client id (null sends none). */
  clientId?: string | null;
  connectTimeoutMs?: number;
  /** Largest response frame accepted; capped at limits.clientResponseBytesMax. */
  responseBytesMax?: number;
  /** Logs in before any other request (a SASL_PLAINTEXT or SASL_SSL listener). */
  sasl?: SaslCredentials;
  /** Speaks TLS (an SSL or SASL_SSL listener): trusted CAs, the client certificate if any, host name check. */
  tls?: TlsClientOptions;
  /**
   * Answers of clientPooledFrameBytesMin or more are cut into buffers (up to clientPooledFramesMax
   * of at most frameBufferReuseBytesMax kept per connection), which the caller hands
   * back with recycle() once nothing views the answer's bytes (a replica fetcher, after appending
   * them): a fresh megabyte per fetch answer, faulted in page by page, cost a follower more than
   * checking and writing the records.
   */
  recycleAnswers?: boolean;
}

/** Kafka's client keys sasl.mechanism, and the username and password of its JAAS config. */
export interface SaslCredentials {
  mechanism: "PLAIN" | "SCRAM-SHA-256" | "SCRAM-SHA-512";
  username: string;
  password: string;
}

export interface RequestOptions {
  /** Internal: a SASL request of a re-login, sent while other requests are held. */
  auth?: boolean;
  /**
   * False for a request the broker never answers (Produce with acks=0): it resolves with an empty
   * struct once written. Defaults to true, except for Produce with `acks` 0.
   */
  expectResponse?: boolean;
  /**
   * Bytes the encoded request will about take (a Produce request: its batches). The frame is
   * encoded into a buffer of that size instead of one doubled from 256 bytes and copied at the
   * end: for megabyte batches those copies (and the fresh pages each touches) cost more than
   * the encoding.
   */
  sizeHint?: number;
}

interface Pending {
  api: ApiSchema;
  version: number;
  resolve(body: Struct): void;
  reject(e: Error): void;
  timer: Timer | null;
}

interface Outgoing {
  frame: Uint8Array;
  /** Part of a (re-)login: written even while other requests are held. */
  auth?: boolean;
  /** For requests that expect no answer: settled by the write. */
  written?: { resolve(): void; reject(e: Error): void };
  /** Starts the request's timeout: when it leaves the queue, so time held back for a throttle (or a re-login) does not count. */
  dequeued?: () => void;
}

export class KafkaConnection {
  /** "host:port", for messages and logs. */
  readonly endpoint: string;
  private readonly clientId: string | null;
  private readonly responseBytesMax: number;
  private readonly pending = new Map<number, Pending>();
  private outgoing: Outgoing[] = [];
  /** Buffers of large frames already written, reused for the next large request (keepFrame). */
  private spareFrames: Uint8Array[] = [];
  private writing = false;
  private nextCorrelationId = 1;
  private closeReason: string | null = null;
  /** A re-login is under way: requests other than its own are held (see the file's comment). */
  private holding = false;
  private reauthTimer: Timer | null = null;
  /** Called once no request is in flight (a re-login waits for that). */
  private idleWaiters: Array<() => void> = [];
  private apiVersions: Promise<Map<number, { min: number; max: number }>> | null = null;
  /** Nothing is written before this (monotonic ms): the broker's last throttle time (KIP-219). */
  private throttledUntil = 0;
  private throttleTimer: Timer | null = null;
  private throttledCount = 0;
  private throttleHeldMs = 0;
  // Received bytes not yet cut into frames: buf[start, end).
  private buf = new Uint8Array(0);
  private start = 0;
  private end = 0;
  /** recycleAnswers: buffers answers were cut into, until recycle() brings them back. */
  private readonly answersOut: WeakSet<ArrayBufferLike> | null;
  /** recycleAnswers: buffers brought back, for the next large answers. */
  private spareAnswers: Uint8Array[] = [];

  private constructor(
    private readonly platform: Platform,
    private readonly conn: Connection,
    opts: KafkaConnectionOptions,
  ) {
    this.endpoint = `${opts.host}:${opts.port}`;
    this.clientId = opts.clientId === undefined ? clientIdDefault : opts.clientId;
    this.responseBytesMax = Math.min(opts.responseBytesMax ?? clientResponseBytesMax, clientResponseBytesMax);
    this.answersOut = opts.recycleAnswers === true ? new WeakSet() : null;
  }

  /**
   * recycleAnswers: takes back the buffer under `bytes` (any view of an answer this connection
   * cut) for a later answer; the caller must hold no view of that answer any more. Anything
   * else is ignored.
   */
  recycle(bytes: Uint8Array): void {
    const out = this.answersOut;
    if (out === null || !out.delete(bytes.buffer)) return;
    if (this.spareAnswers.length < clientPooledFramesMax && bytes.buffer.byteLength <= frameBufferReuseBytesMax) this.spareAnswers.push(new Uint8Array(bytes.buffer));
  }

  /** Opens a connection; rejects when the TCP connect fails or takes longer than connectTimeoutMs. */
  static async connect(platform: Platform, opts: KafkaConnectionOptions): Promise<KafkaConnection> {
    let conn: Connection;
    try {
      const tls = opts.tls === undefined ? {} : { tls: opts.tls };
      conn = await platform.net.connect({ host: opts.host, port: opts.port, timeoutMs: opts.connectTimeoutMs ?? connectTimeoutMsDefault, ...tls });
    } catch (e) {
      throw new KafkaConnectionError(`connect to ${opts.host}:${opts.port} failed: ${(e as Error).message}`);
    }
    const c = new KafkaConnection(platform, conn, opts);
    void c.readLoop();
    if (opts.sasl !== undefined) {
      try {
        await c.login(opts.sasl, opts.connectTimeoutMs ?? connectTimeoutMsDefault);
      } catch (e) {
        c.close(`SASL login failed: ${(e as Error).message}`);
        throw e;
      }
    }
    return c;
  }

  /** True once closed (locally, by the peer, or after a failure); nothing more can be sent. */
  get closed(): boolean {
    return this.closeReason !== null;
  }

  /** Why the connection closed, or null while open. */
  get closedReason(): string | null {
    return this.closeReason;
  }

  /** Until when (the platform clock's monotonic ms) requests are held for the broker's throttle time. */
  get throttledUntilMs(): number {
    return this.throttledUntil;
  }

  /** Answers that throttled this connection (throttle_time_ms > 0 the client must honour). */
  get throttledResponses(): number {
    return this.throttledCount;
  }

  /** Milliseconds requests waited here, unwritten, for the broker's throttle times: the client's own wait. */
  get throttleHeldMsTotal(): number {
    return this.throttleHeldMs;
  }

  /** Requests sent (or queued) and not yet answered. */
  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * Sends one request and resolves with the decoded response body. Rejects with a
   * KafkaConnectionError when no answer comes within timeoutMs (the connection is then closed),
   * when the connection closes first, or when the answer does not decode.
   */
  request(api: ApiSchema, version: number, body: Struct, timeoutMs: number, opts: RequestOptions = {}): Promise<Struct> {
    if (this.closeReason !== null) {
      return Promise.reject(this.error(`${api.name} v${version} not sent: connection closed (${this.closeReason})`));
    }
    const expectResponse = opts.expectResponse ?? !(api.apiKey === 0 && body.acks === 0);
    const correlationId = this.takeCorrelationId();
    let frame: Uint8Array;
    try {
      frame = this.encodeFrame(api, version, correlationId, body, opts.sizeHint ?? 0);
    } catch (e) {
      return Promise.reject(e);
    }
    if (!expectResponse) {
      return new Promise<Struct>((resolve, reject) => {
        this.outgoing.push({ frame, written: { resolve: () => resolve({}), reject } });
        void this.flush();
      });
    }
    return new Promise<Struct>((resolve, reject) => {
      const p: Pending = { api, version, resolve, reject, timer: null };
      const dequeued = () => {
        if (this.pending.get(correlationId) === p) p.timer = this.platform.clock.setTimeout(() => this.onTimeout(correlationId, timeoutMs), timeoutMs);
      };
      this.pending.set(correlationId, p);
      this.outgoing.push({ frame, auth: opts.auth, dequeued });
      void this.flush();
    });
  }

  /**
   * The highest version of `api` both sides speak, at most `max` (our own schema's maximum by
   * default), from one ApiVersions v3 exchange cached for the connection's life. Rejects when the
   * peer does not implement the API or no version overlaps.
   */
  async negotiateVersion(api: ApiSchema, max = api.request.versions.max, timeoutMs = 10_000): Promise<number> {
    if (this.apiVersions === null) {
      this.apiVersions = this.fetchApiVersions(timeoutMs);
      this.apiVersions.catch(() => (this.apiVersions = null));
    }
    const theirs = (await this.apiVersions).get(api.apiKey);
    const ourMax = Math.min(max, api.request.versions.max);
    if (theirs === undefined) throw this.error(`${this.endpoint} does not implement ${api.name}`);
    const v = Math.min(ourMax, theirs.max);
    if (v < Math.max(theirs.min, api.request.versions.min)) {
      throw this.error(`${api.name}: ${this.endpoint} speaks v${theirs.min}-${theirs.max}, we speak v${api.request.versions.min}-${ourMax}`);
    }
    return v;
  }

  /** Closes the connection; requests still waiting are rejected with `reason`. Idempotent. */
  close(reason = "closed locally"): void {
    if (this.closeReason !== null) return;
    this.closeReason = reason;
    this.reauthTimer?.cancel();
    this.throttleTimer?.cancel();
    this.throttleTimer = null;
    this.wakeIdle();
    this.conn.close();
    const err = this.error(`connection to ${this.endpoint} closed: ${reason}`);
    for (const p of this.pending.values()) {
      p.timer?.cancel();
      p.reject(this.error(`${p.api.name} v${p.version} to ${this.endpoint} failed: connection closed (${reason})`));
    }
    this.pending.clear();
    for (const o of this.outgoing.splice(0)) o.written?.reject(err);
    this.buf = new Uint8Array(0);
    this.start = this.end = 0;
  }

  // --- sending ---------------------------------------------------------------------------------

  private takeCorrelationId(): number {
    let id = this.nextCorrelationId;
    while (this.pending.has(id)) id = (id + 1) & 0x7fffffff;
    this.nextCorrelationId = (id + 1) & 0x7fffffff;
    return id;
  }

  private encodeFrame(api: ApiSchema, version: number, correlationId: number, body: Struct, sizeHint: number): Uint8Array {
    const flexible = version >= api.request.flexibleFrom;
    // A large frame gets a quarter more than its hint, so the next one (a few records more) fits
    // in its buffer once it is kept.
    const pooled = sizeHint >= clientPooledFrameBytesMin;
    const w = new Writer(pooled ? (this.spareFrame(sizeHint) ?? sizeHint + (sizeHint >> 2)) : Math.max(256, sizeHint));
    w.int32(0);
    writeRequestHeader(w, { apiKey: api.apiKey, apiVersion: version, correlationId, clientId: this.clientId }, flexible);
    encode(api.request, version, body, w);
    w.view.setInt32(0, w.pos - 4);
    // The writer is not used again, so its bytes can go as they are; a copy of exactly the frame
    // only when the buffer is much larger (the runtime may keep the whole buffer alive until the
    // kernel takes the bytes).
    const frame = w.finish();
    return pooled || w.buf.length - frame.length <= clientFrameSlackBytesMax ? frame : frame.slice();
  }

  /** Writes queued frames in order, those queued meanwhile batched into one write. */
  private async flush(): Promise<void> {
    if (this.writing) return;
    this.writing = true;
    let batch: Outgoing[] = [];
    try {
      while (this.outgoing.length > 0 && this.closeReason === null) {
        if (this.throttled()) break;
        if (this.holding) {
          // During a re-login only its own requests go; the others wait in order.
          batch = this.outgoing.filter((o) => o.auth);
          if (batch.length === 0) break;
          this.outgoing = this.outgoing.filter((o) => !o.auth);
        } else batch = this.outgoing.splice(0);
        for (const o of batch) o.dequeued?.();
        if (batch.length === 1) {
          await this.conn.write(batch[0].frame);
          this.keepFrame(batch[0].frame);
        } else if (totalBytes(batch) <= clientConcatBytesMax) {
          await this.conn.write(concat(batch.map((o) => o.frame)));
        } else {
          // Large frames (Produce requests of big batches) go one by one rather than copied into one.
          for (const o of batch) {
            await this.conn.write(o.frame);
            this.keepFrame(o.frame);
          }
        }
        for (const o of batch) o.written?.resolve();
        batch = [];
      }
    } catch (e) {
      const reason = `write failed: ${(e as Error).message}`;
      for (const o of batch) o.written?.reject(this.error(`request to ${this.endpoint} not sent: ${reason}`));
      this.close(reason);
    } finally {
      this.writing = false;
    }
  }

  /** A kept frame buffer of at least sizeHint bytes, for a large request; null if none. */
  private spareFrame(sizeHint: number): Uint8Array | null {
    const i = this.spareFrames.findIndex((b) => b.length >= sizeHint);
    return i < 0 ? null : this.spareFrames.splice(i, 1)[0];
  }

  /** Keeps a large frame's buffer once written: the runtime has let go of it (Connection.write). */
  private keepFrame(frame: Uint8Array): void {
    if (frame.buffer.byteLength < clientPooledFrameBytesMin || this.spareFrames.length >= clientPooledFramesMax) return;
    this.spareFrames.push(new Uint8Array(frame.buffer));
  }

  /** True while the broker's throttle time runs; the queue is flushed again when it ends. */
  private throttled(): boolean {
    const waitMs = this.throttledUntil - this.platform.clock.monotonicMs();
    if (waitMs <= 0) return false;
    if (this.throttleTimer === null) {
      const heldFromMs = this.platform.clock.monotonicMs();
      this.throttleTimer = this.platform.clock.setTimeout(() => {
        this.throttleTimer = null;
        this.throttleHeldMs += this.platform.clock.monotonicMs() - heldFromMs;
        void this.flush();
      }, Math.ceil(waitMs));
    }
    return true;
  }

  /** An answer's throttle_time_ms, when this version's client must wait it out itself. */
  private noteThrottle(p: Pending, body: Struct): void {
    const ms = body.throttleTimeMs;
    if (typeof ms !== "number" || ms <= 0 || !clientThrottles(p.api.apiKey, p.version)) return;
    this.throttledCount++;
    this.throttledUntil = Math.max(this.throttledUntil, this.platform.clock.monotonicMs() + ms);
  }

  // --- receiving -------------------------------------------------------------------------------

  private async readLoop(): Promise<void> {
    try {
      for (;;) {
        const chunk = await this.conn.read();
        if (this.closeReason !== null) return;
        if (chunk === null) return this.close("closed by the peer");
        this.append(chunk);
        for (;;) {
          const frame = this.takeFrame();
          if (frame === null || this.closeReason !== null) break;
          this.onFrame(frame);
        }
        if (this.closeReason !== null) return;
      }
    } catch (e) {
      this.close(`read failed: ${(e as Error).message}`);
    }
  }

  private onFrame(frame: Uint8Array): void {
    const correlationId = new DataView(frame.buffer, frame.byteOffset, 4).getInt32(0);
    const p = this.pending.get(correlationId);
    if (p === undefined) return this.close(`answer with correlation id ${correlationId}, which no request is waiting for`);
    this.pending.delete(correlationId);
    p.timer?.cancel();
    if (this.pending.size === 0) this.wakeIdle();
    const flexible = p.version >= p.api.request.flexibleFrom;
    const r = new Reader(frame);
    readResponseHeader(r, responseHeaderFlexible(p.api.apiKey, flexible));
    const body = decode(p.api.response, p.version, r);
    let why: string | null = null;
    if (!r.ok) why = `does not decode: ${r.error}`;
    else if (r.remaining !== 0) why = `has ${r.remaining} bytes after its end`;
    if (why === null) {
      this.noteThrottle(p, body);
      return p.resolve(body);
    }
    const reason = `malformed ${p.api.name} v${p.version} response (${frame.length} bytes) ${why}`;
    p.reject(this.error(`${p.api.name} v${p.version} to ${this.endpoint} failed: ${reason}`));
    this.close(reason);
  }

  private onTimeout(correlationId: number, timeoutMs: number): void {
    const p = this.pending.get(correlationId);
    if (p === undefined) return;
    this.pending.delete(correlationId);
    const what = `${p.api.name} v${p.version} to ${this.endpoint}`;
    p.reject(this.error(`${what}: no response within ${timeoutMs} ms`));
    this.close(`${what} timed out after ${timeoutMs} ms`);
  }

  /** A whole frame's payload (without its size) from the buffer, or null when more bytes are needed. */
  private takeFrame(): Uint8Array | null {
    const have = this.end - this.start;
    if (have < 4) return null;
    const size = new DataView(this.buf.buffer, this.buf.byteOffset + this.start, 4).getInt32(0);
    if (size < 4 || size > this.responseBytesMax) {
      this.close(`response frame size ${size} is outside 4..${this.responseBytesMax}`);
      return null;
    }
    if (have < 4 + size) return null;
    // A copy: decoded bytes fields (records) are views into it and outlive the buffer's compaction.
    const frame = this.answersOut !== null && size >= clientPooledFrameBytesMin ? this.answerBuffer(size) : this.buf.slice(this.start + 4, this.start + 4 + size);
    this.start += 4 + size;
    return frame;
  }

  /** recycleAnswers: the frame at buf[start + 4, + size) copied into a kept (or new) buffer. */
  private answerBuffer(size: number): Uint8Array {
    const i = this.spareAnswers.findIndex((b) => b.length >= size);
    // Powers of two, so answers of about the same size share buffers; past what is kept, its own.
    const bytes = size > frameBufferReuseBytesMax ? size : 2 ** Math.ceil(Math.log2(size));
    const frame = i >= 0 ? this.spareAnswers.splice(i, 1)[0].subarray(0, size) : new Uint8Array(bytes).subarray(0, size);
    frame.set(this.buf.subarray(this.start + 4, this.start + 4 + size));
    this.answersOut!.add(frame.buffer);
    return frame;
  }

  private append(chunk: Uint8Array): void {
    const have = this.end - this.start;
    if (this.end + chunk.length > this.buf.length) {
      const need = have + chunk.length;
      const next = need > this.buf.length ? new Uint8Array(Math.max(need * 2, 4096)) : this.buf;
      next.set(this.buf.subarray(this.start, this.end), 0);
      this.buf = next;
      this.start = 0;
      this.end = have;
    }
    this.buf.set(chunk, this.end);
    this.end += chunk.length;
  }

  // --- SASL ------------------------------------------------------------------------------------

  /** Logs in, then keeps the session alive by logging in again before the lifetime it was granted ends. */
  private async login(sasl: SaslCredentials, timeoutMs: number): Promise<void> {
    const lifetimeMs = await this.authenticate(sasl, timeoutMs);
    if (lifetimeMs <= 0 || this.closeReason !== null) return;
    this.reauthTimer = this.platform.clock.setTimeout(() => void this.reauthenticate(sasl, timeoutMs), Math.floor(lifetimeMs * 0.85));
  }

  private async reauthenticate(sasl: SaslCredentials, timeoutMs: number): Promise<void> {
    this.holding = true;
    try {
      while (this.pending.size > 0 && this.closeReason === null) await new Promise<void>((r) => this.idleWaiters.push(r));
      if (this.closeReason !== null) return;
      await this.login(sasl, timeoutMs);
    } catch (e) {
      this.close(`SASL re-authentication failed: ${(e as Error).message}`);
    } finally {
      this.holding = false;
      void this.flush();
    }
  }

  private wakeIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  /** One SASL exchange; the session lifetime the broker granted (0: none). */
  private async authenticate(sasl: SaslCredentials, timeoutMs: number): Promise<number> {
    const version = await this.negotiateVersion(SaslAuthenticateApi, 2, timeoutMs);
    const hs = await this.request(SaslHandshakeApi, 1, { mechanism: sasl.mechanism }, timeoutMs, { auth: true });
    if (hs.errorCode !== ErrorCode.NONE) {
      throw this.error(`${this.endpoint} refused SASL mechanism ${sasl.mechanism} (${errorName(hs.errorCode as number)}; it offers ${(hs.mechanisms as string[]).join(", ")})`);
    }
    let lifetimeMs = 0;
    const send = async (token: Uint8Array): Promise<Uint8Array> => {
      const r = await this.request(SaslAuthenticateApi, version, { authBytes: token }, timeoutMs, { auth: true });
      if (r.errorCode !== ErrorCode.NONE) throw this.error(`${this.endpoint}: ${r.errorMessage ?? errorName(r.errorCode as number)}`);
      lifetimeMs = Number(r.sessionLifetimeMs ?? 0n);
      return r.authBytes as Uint8Array;
    };
    if (sasl.mechanism === "PLAIN") {
      await send(plainToken(sasl.username, sasl.password));
      return lifetimeMs;
    }
    const mech = scramMechanismByName(sasl.mechanism);
    if (mech === undefined) throw this.error(`unknown SASL mechanism ${sasl.mechanism}`);
    const nonceBytes = new Uint8Array(24);
    this.platform.randomBytes(nonceBytes);
    const nonce = [...nonceBytes].map((b) => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"[b % 62]).join("");
    const exchange = new ScramClientExchange(mech, sasl.username, sasl.password, nonce);
    const final = await exchange.final(await send(exchange.first()));
    if (typeof final === "string") throw this.error(`${this.endpoint}: ${final}`);
    const why = exchange.verify(await send(final));
    if (why !== null) throw this.error(`${this.endpoint}: ${why}`);
    return lifetimeMs;
  }

  // --- ApiVersions -----------------------------------------------------------------------------

  private async fetchApiVersions(timeoutMs: number): Promise<Map<number, { min: number; max: number }>> {
    const res = await this.request(ApiVersionsApi, 3, { clientSoftwareName: "strand", clientSoftwareVersion: "0" }, timeoutMs);
    const code = res.errorCode as number;
    if (code !== ErrorCode.NONE) throw this.error(`ApiVersions to ${this.endpoint} answered ${errorName(code)}`);
    const out = new Map<number, { min: number; max: number }>();
    for (const k of res.apiKeys as { apiKey: number; minVersion: number; maxVersion: number }[]) {
      out.set(k.apiKey, { min: k.minVersion, max: k.maxVersion });
    }
    return out;
  }

  private error(message: string): KafkaConnectionError {
    return new KafkaConnectionError(message);
  }
}

function totalBytes(batch: { frame: Uint8Array }[]): number {
  let n = 0;
  for (const o of batch) n += o.frame.length;
  return n;
}

function concat(parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
