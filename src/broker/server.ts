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
// A request over its client quota (the dispatcher sets ConnectionInfo.throttle) mutes its
// connection for the throttle time once its answer is written, or holds the answer back that long
// for a client that cannot throttle itself (KIP-219): nothing more is read or handled meanwhile.
//
// Memory across connections: each connection reserves the frame it reads, whole, from one
// MemoryPool (queued.max.request.bytes) before reading its bytes, and is not read while the pool
// cannot give them; the bytes go back once the request is handled (memory_pool.ts says why this
// cannot deadlock). Beyond the pool, a connection may hold one read past its frame, and the
// platform's few queued chunks. Connections (connection_quotas.ts, as Kafka's ConnectionQuotas): a
// new connection waits, unread, for a slot under max.connections and its listener's limit;
// max.connections.per.ip (.overrides) closes it at accept; max.connection.creation.rate delays it.

import type { Connection, Listener, Platform, TlsHandshakeFailure, TlsServerOptions } from "../platform/mod.ts";
import {
  assert,
  canonicalIp,
  requestsInFlightPerConnectionMax,
  type SslPrincipalMapper,
  subjectDistinguishedName,
  ipThrottledClosesMax,
  tlsFailureLogIntervalMs,
} from "../util/mod.ts";
import { type ConnectionLimits, ConnectionQuotas } from "./connection_quotas.ts";
import { ConnectionThrottle } from "./connection_throttle.ts";
import type { IpConnectionRates } from "./ip_connection_rate.ts";
import { MemoryPool } from "./memory_pool.ts";
import { type AuthAction, SaslServerAuthenticator, type SaslServerSettings } from "./sasl_authenticator.ts";
import { FrameBufferCache } from "./frame_buffers.ts";
import { FrameReader } from "./frame_reader.ts";
import { ProduceApi } from "../protocol/mod.ts";
import type { Logger } from "../util/mod.ts";

/** What the server needs from the layer that handles requests. */
export interface RequestHandler {
  /**
   * Handles one frame (without its size prefix). Resolves to the response frame (with its size
   * prefix), to null when the request gets no response (produce with acks=0), or to "close" when
   * the connection must be closed (malformed request, unknown API).
   */
  handle(frame: Uint8Array, conn: ConnectionInfo): Promise<Uint8Array | null | "close">;
  /** A response frame handle() gave is written: the server holds no view of it any more. */
  responseWritten?(frame: Uint8Array): void;
}

export interface ConnectionInfo {
  id: number;
  listener: string;
  remote: string;
  /**
   * The client's address without the port, in one spelling per address (connectionHost): what
   * ACLs match as the host, and what the per-ip limits and quotas count by.
   */
  host: string;
  /** Kafka's principal: "User:<name>" once authenticated, "User:ANONYMOUS" on a PLAINTEXT listener. */
  principal: string;
  /**
   * Set by the dispatcher when an answer broke a client quota: the server mutes the connection
   * for `ms` once that answer is written, or holds the answer back that long (delayResponse: a
   * client too old to throttle itself); the server clears it.
   */
  throttle?: { ms: number; delayResponse: boolean } | null;
}

/** The principal of a connection nobody authenticated (Kafka's KafkaPrincipal.ANONYMOUS). */
export const anonymousPrincipal = "User:ANONYMOUS";

export type { ConnectionLimits, ListenerConnectionLimits } from "./connection_quotas.ts";

/** One listener: `sasl` set, every connection authenticates first; `tls` set, it speaks TLS (SSL, SASL_SSL). */
export interface ServerListener {
  name: string;
  host: string;
  port: number;
  sasl?: SaslServerSettings;
  tls?: TlsServerOptions;
  /** ssl.principal.mapping.rules: an SSL listener's principal from the client certificate's subject. */
  principalMapper?: SslPrincipalMapper;
  /** Turns the platform's refusal of `tls` (a wrong key password, a key not matching) into the configuration's error. */
  tlsError?: (e: Error) => Error;
  /**
   * listener.name.<l>.max.connections: open connections on this listener (KIP-402), and
   * .max.connection.creation.rate: connections accepted per second here (KIP-612); the initial
   * values, unless ServerOptions.listenerLimits gives them (setConnectionLimits replaces them).
   */
  maxConnections?: number;
  maxConnectionCreationRate?: number;
  /**
   * The inter-broker listener when there are others: as in Kafka, the broker-wide max.connections
   * and max.connection.creation.rate do not hold back or delay its connections (a flood of clients
   * must not cut replication); its own listener.name.<l>.* limits still do.
   */
  interBroker?: boolean;
}

export interface ServerOptions extends ConnectionLimits {
  listeners: ServerListener[];
  /** connection.failed.authentication.delay.ms: how long the answer to a failed login waits. */
  failedAuthenticationDelayMs?: number;
  socketRequestMaxBytes: number;
  /** connections.max.idle.ms: a connection that sends nothing for this long is closed. */
  connectionsMaxIdleMs: number;
  /** queued.max.request.bytes resolved: Infinity when unbounded. At least socketRequestMaxBytes. */
  queuedMaxRequestBytes?: number;
  /**
   * The ip quotas (connection_creation_rate, KIP-612), on every listener as Kafka applies them
   * (its protected inter-broker listener escapes only the broker-wide limits).
   */
  ipConnectionRates?: IpConnectionRates;
}

export interface NetworkStats {
  connections: number;
  /** Accepted connections waiting for max.connection.creation.rate. */
  connectionsThrottled: number;
  /** Accepted connections waiting, unread, for a slot under max.connections or a listener's limit. */
  connectionsWaitingForSlot: number;
  /** Open connections closed because more were open than max.connections (least recently active first). */
  closedOverMaxConnectionsTotal: number;
  /** queued.max.request.bytes in force (Infinity when unbounded). */
  poolCapacityBytes: number;
  poolReservedBytes: number;
  /** Connections not read because their frame does not fit the pool now. */
  poolWaiting: number;
  refusedTotal: Map<string, number>;
}

/** Per connection: what it holds of the memory pool, and how to stop it while it waits. */
interface ConnectionState {
  conn: Connection;
  info: ConnectionInfo;
  ip: string;
  /** Bytes reserved from the pool: the frame being read, the one being handled, overshoot. */
  held: number;
  closed: boolean;
  cancelWait: () => void;
  /** The SASL phase on a SASL listener (null on others); it sees every frame first. */
  authenticator: SaslServerAuthenticator | null;
  /** When the connection last read (the monotonic clock): the least recently active close first over max.connections. */
  lastActiveMs: number;
}

/** SaslHandshake (17): on an authenticated SASL connection it starts re-authentication. */
function isSaslHandshake(frame: Uint8Array): boolean {
  return frame.length >= 2 && frame[0] === 0 && frame[1] === 17;
}

/**
 * A peer address in the one spelling the per-ip limits, the ip quotas and the authorizer all see
 * (ConnectionInfo.host): an IPv4-mapped IPv6 address (an IPv4 client of a dual-stack listener) as
 * IPv4, IPv6 lower case and compressed; what is no IP literal (a zone-scoped address) lower case.
 */
export function connectionHost(address: string): string {
  return canonicalIp(address) ?? address.toLowerCase();
}

export class SocketServer {
  private listeners: Listener[] = [];
  private readonly byName = new Map<string, Listener>();
  /** TLS connections refused since the last line said so (one warn line per tlsFailureLogIntervalMs at most). */
  private tlsFailures = { count: 0, lastLogMs: -Infinity };
  private connections = new Set<Connection>();
  private states = new Set<ConnectionState>();
  /** Open connections by listener and address, the limits, and the connections waiting for a slot. */
  private readonly quotas: ConnectionQuotas;
  private closedOverMax = 0;
  /** Each listener's own creation-rate bucket (Infinity: none). */
  private readonly listenerThrottles = new Map<string, ConnectionThrottle>();
  private nextConnectionId = 1;
  private stopping = false;
  readonly pool: MemoryPool;
  /** Buffers for frames that span reads, shared by the connections (frame_buffers.ts). */
  private readonly frameBuffers = new FrameBufferCache();
  private readonly throttle: ConnectionThrottle;
  /** Connections refused at accept since the last line said so (one line per 10 s at most). */
  private refused = { count: 0, lastLogMs: -Infinity, reasons: new Map<string, number>() };
  /** Connections refused at accept since start, by the limit that refused them (for /metrics). */
  readonly refusedTotal = new Map<string, number>();
  /** Connections refused by their ip quota, held unread until their throttle time ends (Kafka's DelayedCloseSocket). */
  private readonly throttledCloses = new Map<Connection, { cancel(): void }>();

  constructor(
    private readonly platform: Platform,
    private readonly options: ServerOptions,
    private readonly handler: RequestHandler,
    private readonly logger: Logger,
  ) {
    const queued = options.queuedMaxRequestBytes ?? Infinity;
    assert(queued >= options.socketRequestMaxBytes, "queued.max.request.bytes holds one frame of socket.request.max.bytes");
    // A frame is reserved with its 4-byte size prefix, which socket.request.max.bytes does not count.
    this.pool = new MemoryPool(Math.max(queued, options.socketRequestMaxBytes + 4));
    this.throttle = new ConnectionThrottle(platform, options.maxConnectionCreationRate ?? Infinity);
    const listenerLimits = options.listenerLimits ??
      new Map(options.listeners.map((l) => [l.name, { maxConnections: l.maxConnections, maxConnectionCreationRate: l.maxConnectionCreationRate }]));
    for (const l of options.listeners) {
      this.listenerThrottles.set(l.name, new ConnectionThrottle(platform, listenerLimits.get(l.name)?.maxConnectionCreationRate ?? Infinity));
    }
    const interBroker = options.listeners.find((l) => l.interBroker === true)?.name ?? null;
    this.quotas = new ConnectionQuotas({ ...options, listenerLimits }, interBroker);
  }

  /**
   * New connection limits (a dynamic config changed): waiting connections a raised limit makes
   * room for are let in; open ones stay, except those over a lowered max.connections (Kafka closes
   * the least recently active of the unprotected listeners' then).
   */
  setConnectionLimits(limits: ConnectionLimits): void {
    const text = (l: ConnectionLimits) => ({
      maxConnections: l.maxConnections ?? Infinity,
      maxConnectionsPerIp: l.maxConnectionsPerIp ?? Infinity,
      maxConnectionsPerIpOverrides: [...(l.maxConnectionsPerIpOverrides ?? new Map())].map(([ip, n]) => `${ip}:${n}`).join(","),
      maxConnectionCreationRate: l.maxConnectionCreationRate ?? Infinity,
      listeners: Object.fromEntries(this.options.listeners.map(({ name }) => {
        const own = l.listenerLimits?.get(name);
        return [name, { maxConnections: own?.maxConnections ?? Infinity, maxConnectionCreationRate: own?.maxConnectionCreationRate ?? Infinity }];
      })),
    });
    const was = JSON.stringify(text(this.quotas.current));
    this.quotas.setLimits({ ...limits, listenerLimits: limits.listenerLimits ?? this.quotas.current.listenerLimits });
    this.throttle.setRate(limits.maxConnectionCreationRate ?? Infinity);
    for (const [name, throttle] of this.listenerThrottles) throttle.setRate(this.quotas.listenerLimit(name).maxConnectionCreationRate ?? Infinity);
    const now = text(this.quotas.current);
    if (JSON.stringify(now) !== was) this.logger.info({ ...now, connections: this.connections.size }, "connection limits changed");
    this.closeExcessConnections();
  }

  /**
   * Over max.connections (lowered, or passed by the protected listener): closes the least recently
   * active connections of the other listeners until it holds (Kafka's closeExcessConnections).
   */
  private closeExcessConnections(): void {
    let excess = this.quotas.excess();
    if (excess === 0) return;
    const candidates = [...this.states].filter((s) => !s.closed && !this.quotas.isProtected(s.info.listener));
    candidates.sort((a, b) => a.lastActiveMs - b.lastActiveMs);
    // Those already closing count as gone: their slots are released once their serve loop ends.
    excess -= [...this.states].filter((s) => s.closed && !this.quotas.isProtected(s.info.listener)).length;
    const closing = candidates.slice(0, Math.max(0, excess));
    if (closing.length === 0) return;
    for (const s of closing) this.close(s);
    this.closedOverMax += closing.length;
    this.logger.info({ closed: closing.length, connections: this.connections.size, maxConnections: this.quotas.current.maxConnections }, "closing the least recently active connections over max.connections");
  }

  /** Connections open now (accepted and not yet closed). */
  get connectionCount(): number {
    return this.connections.size;
  }

  /** What /metrics shows of the network layer: connections, the frame pool, refusals. */
  stats(): NetworkStats {
    return {
      connections: this.connections.size,
      connectionsThrottled: [...this.listenerThrottles.values()].reduce((n, t) => n + t.waitingCount, this.throttle.waitingCount),
      connectionsWaitingForSlot: this.quotas.waitingCount,
      closedOverMaxConnectionsTotal: this.closedOverMax,
      poolCapacityBytes: this.pool.capacity,
      poolReservedBytes: this.pool.reserved,
      poolWaiting: this.pool.waiting,
      refusedTotal: new Map(this.refusedTotal),
    };
  }

  /** Binds every listener; returns the bound ports (the real ones when 0 was configured). */
  async start(): Promise<{ name: string; host: string; port: number }[]> {
    const bound = [];
    for (const l of this.options.listeners) {
      const tls = l.tls === undefined ? {} : { tls: l.tls, onTlsFailure: (f: TlsHandshakeFailure) => this.tlsFailed(l.name, f) };
      let listener: Listener;
      try {
        listener = await this.platform.net.listen({ host: l.host, port: l.port, ...tls }, (c) => this.admit(c, l));
      } catch (e) {
        await this.stop();
        throw l.tls !== undefined && l.tlsError !== undefined && /^TLS /.test((e as Error).message) ? l.tlsError(e as Error) : e;
      }
      this.listeners.push(listener);
      this.byName.set(l.name, listener);
      bound.push({ name: l.name, host: listener.host, port: listener.port });
      this.logger.info({ listener: l.name, host: listener.host, port: listener.port }, "listening");
    }
    return bound;
  }

  /** The listener's own creation rate first, then the broker-wide one (not for inter-broker). */
  private admit(c: Connection, l: ServerListener): void {
    const own = this.listenerThrottles.get(l.name)!;
    own.admit(c, () => (l.interBroker === true ? this.accept(c, l) : this.throttle.admit(c, () => this.accept(c, l))));
  }

  /** The bound listener of that name (for certificate reloads), once start() has bound it. */
  listener(name: string): Listener | undefined {
    return this.byName.get(name);
  }

  /**
   * A TLS connection refused: a failed handshake (a plaintext client on a TLS port, an untrusted
   * certificate, a scanner) or a subject no principal rule maps. The peer's problem, so a warn
   * line at most, and one per interval with the count, so a client retrying cannot flood the log.
   */
  private tlsFailed(listener: string, f: TlsHandshakeFailure, msg = "TLS handshake failed; connection closed"): void {
    const t = this.tlsFailures;
    t.count++;
    const now = this.platform.clock.monotonicMs();
    if (now - t.lastLogMs < tlsFailureLogIntervalMs) return;
    this.logger.warn({ listener, failed: t.count, remote: `${f.remoteAddress}:${f.remotePort}`, reason: f.reason }, msg);
    t.count = 0;
    t.lastLogMs = now;
  }

  /**
   * The principal of a connection on an SSL listener: the client certificate's subject through
   * ssl.principal.mapping.rules; ANONYMOUS without a certificate; null (close it) when no rule
   * maps the subject (Kafka's NoMatchingRule fails the authentication).
   */
  private sslPrincipal(conn: Connection, l: ServerListener): string | null {
    const der = conn.tls?.peerCertificate ?? null;
    if (der === null || l.principalMapper === undefined) return anonymousPrincipal;
    const dn = subjectDistinguishedName(der);
    if (dn === null) return null;
    const name = l.principalMapper.name(dn);
    return name === null ? null : `User:${name}`;
  }

  /**
   * Kafka's acceptor blocks until the listener has a slot (max.connections, its own limit), the
   * kernel's backlog holding the connections meanwhile: here they wait, unread, in
   * ConnectionQuotas' queue; past its bound they are closed, as a full backlog refuses them.
   */
  private accept(conn: Connection, l: ServerListener): void {
    if (this.stopping) return conn.close();
    const outcome = this.quotas.waitForSlot(l.name, () => this.acceptInSlot(conn, l), () => conn.close());
    if (outcome !== "admitted" && outcome !== "waiting") this.refuse(conn, connectionHost(conn.remoteAddress), outcome);
  }

  private acceptInSlot(conn: Connection, l: ServerListener): void {
    const { name: listener, sasl } = l;
    if (this.stopping) return conn.close();
    const ip = connectionHost(conn.remoteAddress);
    const ipRates = this.options.ipConnectionRates;
    if (ipRates !== undefined) {
      // Kafka records the address's rate after the listener and broker slots, before max.connections.per.ip.
      const throttleMs = ipRates.recordAndGetThrottleTimeMs(ip, this.platform.clock.monotonicMs());
      if (throttleMs > 0) return this.refuse(conn, ip, "connection_creation_rate", throttleMs);
    }
    if (this.quotas.ipCount(ip) >= this.quotas.perIpMax(ip)) return this.refuse(conn, ip, "max.connections.per.ip");
    let principal = anonymousPrincipal;
    if (conn.tls !== null && sasl === undefined) {
      const p = this.sslPrincipal(conn, l);
      if (p === null) {
        conn.close();
        const dn = conn.tls.peerCertificate === null ? null : subjectDistinguishedName(conn.tls.peerCertificate);
        const f = { remoteAddress: conn.remoteAddress, remotePort: conn.remotePort, reason: `subject ${dn ?? "(unreadable)"}` };
        return this.tlsFailed(listener, f, "closing connection: no ssl.principal.mapping.rules rule maps the client certificate's subject");
      }
      principal = p;
    }
    this.connections.add(conn);
    this.quotas.inc(listener, ip);
    const info = { id: this.nextConnectionId++, listener, remote: `${conn.remoteAddress}:${conn.remotePort}`, host: ip, principal };
    if (conn.tls !== null && sasl === undefined && conn.tls.peerCertificate !== null) {
      this.logger.info({ conn: info.id, remote: info.remote, listener, principal, protocol: conn.tls.protocol }, "authenticated by client certificate");
    }
    const authenticator = sasl === undefined ? null : new SaslServerAuthenticator(sasl);
    const now = this.platform.clock.monotonicMs();
    const state: ConnectionState = { conn, info, ip, held: 0, closed: false, cancelWait: () => {}, authenticator, lastActiveMs: now };
    this.states.add(state);
    this.serve(state)
      .catch((e) => this.logger.error({ conn: info.id, remote: info.remote, err: String(e) }, "connection failed"))
      .finally(() => {
        this.close(state);
        this.pool.release(state.held);
        state.held = 0;
        this.states.delete(state);
        this.connections.delete(conn);
        // Last: a waiting connection may take the slot at once.
        if (!this.stopping) this.quotas.dec(listener, ip);
      });
    // The protected listener may pass max.connections: the others make room.
    if (this.quotas.isProtected(listener)) this.closeExcessConnections();
  }

  /** Closes a connection a limit refuses: at once, or after `closeAfterMs` (an ip quota's throttle time). */
  private refuse(conn: Connection, ip: string, why: string, closeAfterMs = 0): void {
    if (closeAfterMs > 0 && this.throttledCloses.size < ipThrottledClosesMax) {
      const timer = this.platform.clock.setTimeout(() => {
        this.throttledCloses.delete(conn);
        conn.close();
      }, closeAfterMs);
      this.throttledCloses.set(conn, timer);
    } else conn.close();
    this.refusedTotal.set(why, (this.refusedTotal.get(why) ?? 0) + 1);
    const r = this.refused;
    r.count++;
    r.reasons.set(why, (r.reasons.get(why) ?? 0) + 1);
    const now = this.platform.clock.monotonicMs();
    if (now - r.lastLogMs < 10_000) return;
    this.logger.warn({ refused: r.count, reasons: Object.fromEntries(r.reasons), lastIp: ip }, `connections refused at accept (${why})`);
    r.count = 0;
    r.reasons.clear();
    r.lastLogMs = now;
  }

  private close(state: ConnectionState): void {
    state.closed = true;
    state.cancelWait();
    state.conn.close();
  }

  private async serve(state: ConnectionState): Promise<void> {
    // Closing an idle connection makes its pending read return null, which ends the loop.
    const idleMs = this.options.connectionsMaxIdleMs;
    let idle = this.platform.clock.setTimeout(() => this.closeIdle(state), idleMs);
    try {
      await this.serveFrames(state, () => {
        state.lastActiveMs = this.platform.clock.monotonicMs();
        idle.cancel();
        idle = this.platform.clock.setTimeout(() => this.closeIdle(state), idleMs);
      });
    } finally {
      idle.cancel();
    }
  }

  /**
   * Reserves, before reading more, the whole frame being read; false when the connection closed
   * while it waited. Not reading is what mutes the connection: the runtime pauses the socket.
   * The common case (nothing more needed, or the bytes are free) does not wait.
   */
  private reserveFrame(state: ConnectionState, frames: FrameReader): boolean | Promise<boolean> {
    // state.held covers every buffered byte; the frame being read needs `wanted` bytes in all.
    const need = frames.wanted - state.held;
    if (need <= 0) return true;
    if (this.pool.tryReserve(need)) {
      state.held += need;
      return true;
    }
    return this.waitForPool(state, need);
  }

  private async waitForPool(state: ConnectionState, need: number): Promise<boolean> {
    const r = this.pool.reserve(need);
    state.cancelWait = r.cancel;
    const granted = await r.granted;
    state.cancelWait = () => {};
    if (!granted) return false;
    state.held += need;
    return !state.closed;
  }

  private async serveFrames(state: ConnectionState, onActivity: () => void): Promise<void> {
    const { conn, info } = state;
    // Before authentication a peer may not make the broker read more than a SASL token's worth
    // (Kafka's sasl.server.max.receive.size); socket.request.max.bytes applies once it has.
    const maxFrameBytes = state.authenticator === null ? this.options.socketRequestMaxBytes : Math.min(this.options.socketRequestMaxBytes, state.authenticator.settings.maxReceiveBytes);
    const frames = new FrameReader(maxFrameBytes, this.frameBuffers);
    const responses = new ResponseWriter(conn, this.handler);
    for (;;) {
      const reserved = this.reserveFrame(state, frames);
      if (reserved !== true && !(await reserved)) break;
      const chunk = await conn.read();
      if (chunk === null) break;
      onActivity();
      frames.push(chunk);
      // A chunk may run past the frame it was read for (into the next one): those bytes are here
      // already, so they are taken over the pool's capacity, one read's worth at most.
      if (frames.buffered > state.held) {
        this.pool.force(frames.buffered - state.held);
        state.held = frames.buffered;
      }
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
        // Once authenticated, frames go straight to the handler, unless they start a re-login or
        // the session has run out (the authenticator then closes the connection).
        const auth = state.authenticator;
        const response = auth === null || (auth.authenticated && !auth.sessionExpired && !isSaslHandshake(frame))
          ? await this.handler.handle(frame, info)
          : await this.authenticate(state, frame, frames);
        // A Produce request's bytes are not looked at once it is answered (its records were
        // written to the log, synchronously, or up-converted into a new buffer), so its buffer
        // can take the next frame. Others may keep views of theirs (JoinGroup metadata, ...).
        frames.handled(apiKeyOf(frame) === ProduceApi.apiKey);
        // Handled: its bytes go back to the pool (a response is not counted, as in Kafka).
        this.pool.release(4 + frame.length);
        state.held -= 4 + frame.length;
        if (response === "close") return await responses.flush();
        if (response !== null && !(response instanceof Uint8Array)) {
          responses.enqueue(response.last);
          return await responses.flush();
        }
        const throttle = info.throttle ?? null;
        if (throttle !== null) {
          // KIP-219: nothing more is read or handled on this connection for the throttle time.
          info.throttle = null;
          if (throttle.delayResponse && !(await this.muted(state, throttle.ms))) return;
          if (response !== null) responses.enqueue(response);
          await responses.flush();
          if (!throttle.delayResponse && !(await this.muted(state, throttle.ms))) return;
          if (responses.failed) return;
          continue;
        }
        if (response !== null) responses.enqueue(response);
        if (responses.queued >= requestsInFlightPerConnectionMax) await responses.drainBelow(requestsInFlightPerConnectionMax / 2);
        if (responses.failed) return;
      }
    }
    await responses.flush();
  }

  /** A frame on a SASL listener: the authenticator's step, or the dispatcher's once it passes it on. */
  private async authenticate(state: ConnectionState, frame: Uint8Array, frames: FrameReader): Promise<Uint8Array | null | "close" | { last: Uint8Array }> {
    const { info } = state;
    const action: AuthAction = await state.authenticator!.receive(frame);
    switch (action.kind) {
      case "dispatch":
        return await this.handler.handle(frame, info);
      case "reply":
        return action.frame;
      case "authenticated":
        if (info.principal !== action.principal) {
          this.logger.info({ conn: info.id, remote: info.remote, listener: info.listener, principal: action.principal, mechanism: state.authenticator!.mechanismName }, "authenticated");
        }
        info.principal = action.principal;
        frames.maxFrameBytes = this.options.socketRequestMaxBytes;
        return action.frame;
      case "fail": {
        this.logger.warn({ conn: info.id, remote: info.remote, listener: info.listener, reason: action.reason }, "closing connection: SASL authentication failed");
        const delayMs = action.delay ? this.options.failedAuthenticationDelayMs ?? 100 : 0;
        // Kafka delays the answer to a failed login so that guessing passwords is slow.
        if (delayMs > 0) await new Promise<void>((resolve) => this.platform.clock.setTimeout(resolve, delayMs));
        return action.frame === null ? "close" : { last: action.frame };
      }
    }
  }

  /** Waits out a throttle time; false when the connection closed meanwhile. */
  private muted(state: ConnectionState, ms: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = this.platform.clock.setTimeout(() => {
        state.cancelWait = () => {};
        resolve(!state.closed);
      }, ms);
      state.cancelWait = () => {
        timer.cancel();
        resolve(false);
      };
    });
  }

  private closeIdle(state: ConnectionState): void {
    this.logger.info({ conn: state.info.id, remote: state.info.remote }, "closing idle connection (connections.max.idle.ms)");
    this.close(state);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.quotas.abandonAll();
    this.throttle.stop();
    for (const t of this.listenerThrottles.values()) t.stop();
    for (const [c, timer] of this.throttledCloses) {
      timer.cancel();
      c.close();
    }
    this.throttledCloses.clear();
    for (const l of this.listeners) await l.close();
    this.listeners = [];
    for (const s of this.states) this.close(s);
    for (const c of this.connections) c.close();
    this.connections.clear();
  }
}

/** The API key of a request frame (size prefix removed); frames are at least a header long. */
function apiKeyOf(frame: Uint8Array): number {
  return (frame[0] << 8) | frame[1];
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

  constructor(private readonly conn: Connection, private readonly handler: RequestHandler) {}

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
        const frame = this.queue[0];
        await this.conn.write(frame);
        this.handler.responseWritten?.(frame);
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
