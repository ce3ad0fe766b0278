// ClientCnxn: the session machinery under ZooKeeperClient, as the Java client's ClientCnxn: one
// connection at a time to one server of the ensemble, the handshake, pings, the request queue,
// replies matched to requests, watch notifications, auth, reconnects and session renewal. It
// knows nothing of the operations: ZooKeeperClient hands it encoded requests and reply decoders.
// The handshake on a new connection is in handshake.ts, the queues of requests waiting to be
// written and waiting for their reply (xids, timeouts) in requests.ts.
// Behaviour follows the Java client's, plus the Curator-style rule that a session unheard-from
// for its whole timeout is treated as expired and replaced, so owners re-create what it held.
//
// Invariants:
// - One connection at a time. Requests are written in submission order and get increasing xids;
//   the server answers in order, so each reply must carry the xid of the oldest request in
//   flight. A reply that does not is a protocol error: the connection is dropped.
// - Requests submitted while disconnected wait, unsent, for the next connection (or their
//   timeout). Requests in flight when a connection drops fail with ConnectionLoss: they may or
//   may not have been applied. When a session expires, waiting requests fail with SessionExpired.
// - A reconnect offers the session id and password: the server resumes the session while it
//   lives. The client then re-sends its auth credentials and re-registers its watches
//   (SetWatches, relative to the last zxid it saw, so a change made meanwhile fires them).
// - Expiry (the server refuses the session, or nothing was heard from any server for the whole
//   negotiated timeout) emits "expired", then a fresh session is opened, "connected" emitted,
//   and the onNewSession listeners called: the old session's ephemerals are gone (a session this
//   client expired by itself is first ended on the server with CloseSession, should the server
//   still keep it, so the owners never race its ephemerals). Watches carry over to the new
//   session the same way as over a reconnect.
// - Watch callbacks and replies are handled in the order the server sent them, so a watch fires
//   before the reply to any later read that sees the change. A watcher that throws is logged.
// - After close(), every request fails with SessionExpired; close() asks the server to end the
//   session (its ephemerals go at once) and is idempotent.

import type { Clock, Connection, Platform, Timer } from "../platform/mod.ts";
import {
  type Logger,
  Reader,
  silentLogger,
  utf8Bytes,
  type Writer,
  zkConnectAttemptMsMin,
  zkReconnectBackoffMsMax,
  zkRequestBytesMax,
} from "../util/mod.ts";
import { ZkError, zkError } from "./errors.ts";
import type { FrameReader } from "./frames.ts";
import { handshake, type Opened } from "./handshake.ts";
import { parseConnectString, prependChroot, type ServerAddress, serverName, stripChroot } from "./paths.ts";
import {
  AuthPacket,
  OpCode,
  ReplyHeader,
  requestFrame,
  sessionPasswordBytes,
  SetWatches,
  WatcherEvent,
  Xid,
} from "./records.ts";
import { ProtocolError, RequestQueue } from "./requests.ts";
import { eventTypeName, setWatchesChunks, type WatchKind, WatchTable, type ZkWatcher } from "./watches.ts";

export type ZkSessionEvent =
  | { state: "connected"; sessionId: bigint; server: string; newSession: boolean }
  | { state: "disconnected"; server: string; reason: string }
  | { state: "expired"; sessionId: bigint; reason: string }
  | { state: "authFailed"; scheme: string }
  | { state: "closed" };

export interface ZooKeeperClientOptions {
  /** `host1:port1,host2:port2/chroot`; hosts are tried in a random order. */
  connectString: string;
  /** Asked of the server, which clamps it to its [2, 20] ticks; see negotiatedSessionTimeoutMs. */
  sessionTimeoutMs: number;
  /** How long connect() waits for the first session before failing; default sessionTimeoutMs. */
  connectionTimeoutMs?: number;
  /** How long a request waits for its reply, queued time included; default sessionTimeoutMs. */
  requestTimeoutMs?: number;
  /** Credentials sent on every connection, as addAuth would (e.g. digest "user:password"). */
  auth?: Array<{ scheme: string; auth: string | Uint8Array }>;
  /** Resume this session (id and password from another client) instead of opening one. */
  session?: { id: bigint; password: Uint8Array };
  /**
   * true (the default): a session no server has answered for its whole timeout is given up here
   * ("expired" at once, a new session follows). false, as Kafka's (Java) client: the client waits
   * for a server, whose answer says whether the session lives. An ensemble that lost its quorum
   * renews every session when the quorum returns, so a broker waiting keeps its session, its
   * registration and its controllership through the outage.
   */
  expireWhenUnreachable?: boolean;
  logger?: Logger;
}

/** What the client needs from the platform. A full Platform fits. */
export type ZkPlatform = Pick<Platform, "net" | "clock" | "randomBytes">;

interface AuthEntry {
  readonly scheme: string;
  readonly auth: Uint8Array;
  /** addAuth calls waiting for the server to accept this credential. */
  readonly waiters: Array<{ resolve: () => void; reject: (e: unknown) => void }>;
}

/** One connection's state; a new link per connection, so nothing leaks from an old one. */
interface Link {
  readonly conn: Connection;
  readonly frames: FrameReader;
  readonly server: ServerAddress;
  readonly writeQueue: Uint8Array[];
  writing: boolean;
  /** Auth packets sent on this link, oldest first: auth replies carry no xid to match. */
  readonly authsSent: AuthEntry[];
  pingTimer: Timer | null;
  dropReason: string | null;
}

const noBody = (_w: Writer) => {};
/** Longest wait for the server to confirm a CloseSession before the socket is just closed. */
const closeSessionWaitMsMax = 2_000;
const pingFrame = requestFrame(Xid.ping, OpCode.ping, noBody);

export class ClientCnxn {
  readonly chroot: string;
  private readonly servers: ServerAddress[];
  private nextServer = 0;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly sessionTimeoutMs: number;
  private readonly connectionTimeoutMs: number;
  private readonly requestTimeoutMs: number;
  private readonly expireWhenUnreachable: boolean;

  private sessionIdValue = 0n;
  private password = new Uint8Array(sessionPasswordBytes);
  private negotiatedMs = 0;
  private lastZxid = 0n;
  private lastHeardMs = 0;
  /** A session existed before: the next new one is a renewal, announced to onNewSession. */
  private hadSession = false;
  private link: Link | null = null;
  /** The connection being opened, so close() can abort it. */
  private opening: Connection | null = null;
  private closed = false;
  private closing: Promise<void> | null = null;
  private lastError = "";
  private readonly requests: RequestQueue;
  private flushScheduled = false;
  private readonly auths: AuthEntry[] = [];
  private readonly watches = new WatchTable();
  private readonly stateListeners = new Set<(e: ZkSessionEvent) => void>();
  private readonly newSessionListeners = new Set<(sessionId: bigint) => void>();
  private wake: (() => void) | null = null;
  private loop: Promise<void> = Promise.resolve();
  private firstConnect: { resolve: () => void; reject: (e: unknown) => void } | null = null;
  /** A session expired by this client's own judgement, to end on the server at the next chance. */
  private staleSession: { id: bigint; password: Uint8Array } | null = null;

  constructor(private readonly platform: ZkPlatform, options: ZooKeeperClientOptions) {
    const parsed = parseConnectString(options.connectString);
    if (!Number.isInteger(options.sessionTimeoutMs) || options.sessionTimeoutMs <= 0) {
      throw new ZkError("BadArguments", "", `session timeout ${options.sessionTimeoutMs} ms`);
    }
    this.chroot = parsed.chroot;
    this.servers = shuffled(parsed.servers, platform.randomBytes);
    this.clock = platform.clock;
    this.requests = new RequestQueue(platform.clock);
    this.logger = options.logger ?? silentLogger;
    this.sessionTimeoutMs = options.sessionTimeoutMs;
    this.connectionTimeoutMs = options.connectionTimeoutMs ?? options.sessionTimeoutMs;
    this.requestTimeoutMs = options.requestTimeoutMs ?? options.sessionTimeoutMs;
    this.expireWhenUnreachable = options.expireWhenUnreachable ?? true;
    for (const a of options.auth ?? []) this.auths.push(authEntry(a.scheme, a.auth));
    if (options.session !== undefined) {
      this.sessionIdValue = options.session.id;
      this.password = options.session.password.slice();
      this.hadSession = true;
    }
  }

  // --- state -----------------------------------------------------------------------------------

  /** The current session's id; 0n between an expiry and the next session. */
  get sessionId(): bigint {
    return this.sessionIdValue;
  }

  /** The current session's password (with the id, lets another client resume the session). */
  get sessionPassword(): Uint8Array {
    return this.password.slice();
  }

  /** The timeout the server granted; 0 before the first session. */
  get negotiatedSessionTimeoutMs(): number {
    return this.negotiatedMs;
  }

  get isConnected(): boolean {
    return this.link !== null;
  }

  /** True once close() was called (or auth failed): operations fail with SessionExpired. */
  get isClosed(): boolean {
    return this.closed || this.closing !== null;
  }

  /** `host:port` of the server this client is connected to, or null. */
  get connectedServer(): string | null {
    return this.link === null ? null : serverName(this.link.server);
  }

  /** The largest zxid seen in any reply. */
  get lastZxidSeen(): bigint {
    return this.lastZxid;
  }

  /** Calls fn on every session state change; returns a function that unsubscribes. */
  onStateChange(fn: (event: ZkSessionEvent) => void): () => void {
    this.stateListeners.add(fn);
    return () => this.stateListeners.delete(fn);
  }

  /**
   * Calls fn each time an expired session has been replaced by a new one: the new session holds
   * none of the old one's ephemerals, so owners re-create them. Returns an unsubscribe function.
   */
  onNewSession(fn: (sessionId: bigint) => void): () => void {
    this.newSessionListeners.add(fn);
    return () => this.newSessionListeners.delete(fn);
  }

  /**
   * Adds a credential to the session (ZooKeeper's addauth): sent now, and again on every
   * reconnect. Resolves when the server accepts it; AuthFailed ends the client, as in Java.
   */
  async addAuth(scheme: string, auth: string | Uint8Array): Promise<void> {
    this.checkOpen("");
    const entry = authEntry(scheme, auth);
    this.auths.push(entry);
    const accepted = new Promise<void>((resolve, reject) => entry.waiters.push({ resolve, reject }));
    if (this.link !== null) this.sendAuth(this.link, entry);
    await withTimeout(this.clock, accepted, this.requestTimeoutMs, () =>
      new ZkError("RequestTimeout", "", `no reply to addAuth within ${this.requestTimeoutMs} ms`));
  }

  /**
   * Closes the current connection without ending the session: the client reconnects (to the
   * next server) and resumes it. For tests and tools that exercise failover.
   */
  dropConnection(reason = "dropped by the client"): void {
    const link = this.link;
    if (link === null) return;
    link.dropReason = reason;
    link.conn.close();
  }

  /** Ends the session: its ephemeral nodes are deleted and later operations fail with SessionExpired. */
  close(): Promise<void> {
    this.closing ??= this.shutdown(null);
    return this.closing;
  }

  // --- connecting ------------------------------------------------------------------------------

  /**
   * Starts connecting; resolves once a session is established, rejects with ConnectionLoss
   * (naming the servers and the last failure) when none is within the connection timeout.
   */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = this.clock.setTimeout(() => {
        const names = this.servers.map(serverName).join(",");
        const last = this.lastError === "" ? "" : `; last error: ${this.lastError}`;
        const error = new ZkError(
          "ConnectionLoss",
          "",
          `no session with ZooKeeper at ${names} within ${this.connectionTimeoutMs} ms${last}`,
        );
        this.firstConnect = null;
        reject(error); // now: closing may wait out a connect attempt in progress
        void this.close();
      }, this.connectionTimeoutMs);
      this.firstConnect = {
        resolve: () => {
          timer.cancel();
          resolve();
        },
        reject: (e) => {
          timer.cancel();
          reject(e);
        },
      };
      this.loop = this.run();
    });
  }

  /** Connects, serves the connection until it drops, and again, until close(). */
  private async run(): Promise<void> {
    let failures = 0;
    while (!this.closed) {
      if (this.expireWhenUnreachable) this.expireIfSilentTooLong();
      const server = this.servers[this.nextServer];
      this.nextServer = (this.nextServer + 1) % this.servers.length;
      let opened: Opened;
      try {
        if (this.staleSession !== null) await this.endStaleSession(server, this.staleSession);
        opened = await this.connect(server, { id: this.sessionIdValue, password: this.password });
      } catch (e) {
        this.lastError = `${serverName(server)}: ${messageOf(e)}`;
        this.logger.debug({ server: serverName(server), err: messageOf(e) }, "zookeeper connect failed");
        failures++;
        if (failures % this.servers.length === 0) await this.pause(this.backoffMs(failures));
        continue;
      }
      failures = 0;
      if (opened.res.timeOut <= 0) {
        opened.conn.close();
        this.expire(`${serverName(server)} reports the session expired`, false);
        continue;
      }
      await this.serve(opened.conn, opened.frames, server, opened.res);
    }
  }

  /** TCP connect and the handshake offering `session`, bounded in time. Throws on any failure. */
  private connect(server: ServerAddress, session: { id: bigint; password: Uint8Array }): Promise<Opened> {
    const offer = { lastZxidSeen: this.lastZxid, timeOut: this.sessionTimeoutMs, sessionId: session.id, passwd: session.password };
    return handshake(this.platform, server, offer, this.attemptMs(), {
      isClosed: () => this.closed,
      opening: (conn) => {
        this.opening = conn;
      },
    });
  }

  /**
   * Ends, on the server, a session this client gave up on by itself (expireIfSilentTooLong): the
   * server may still keep it (it was restarted, or its expiry runs a tick behind), and its
   * ephemerals would stand in the way of the ones the new session's owners re-create. Throws
   * only when the server cannot be reached; any later trouble abandons the attempt (the server
   * expires the session by itself in the end).
   */
  private async endStaleSession(server: ServerAddress, stale: { id: bigint; password: Uint8Array }): Promise<void> {
    const opened = await this.connect(server, stale);
    this.staleSession = null;
    if (opened.res.timeOut <= 0) return opened.conn.close(); // gone already
    try {
      await opened.conn.write(requestFrame(1, OpCode.closeSession, noBody));
      await withTimeout(this.clock, opened.frames.next(), this.attemptMs(), () => new Error("no reply"));
      this.logger.info({ sessionId: hex(stale.id) }, "zookeeper session given up locally is now closed on the server");
    } catch (e) {
      this.logger.debug({ sessionId: hex(stale.id), err: messageOf(e) }, "zookeeper could not close a stale session");
    } finally {
      opened.conn.close();
    }
  }

  /** Time for one TCP connect and handshake: a share of the session timeout per server, as Java. */
  private attemptMs(): number {
    return Math.max(zkConnectAttemptMsMin, Math.floor(this.sessionTimeoutMs / this.servers.length));
  }

  private async serve(
    conn: Connection,
    frames: FrameReader,
    server: ServerAddress,
    res: { timeOut: number; sessionId: bigint; passwd: Uint8Array },
  ): Promise<void> {
    const newSession = res.sessionId !== this.sessionIdValue;
    this.sessionIdValue = res.sessionId;
    this.password = res.passwd.slice();
    this.negotiatedMs = res.timeOut;
    this.lastHeardMs = this.clock.monotonicMs();
    const link: Link = {
      conn,
      frames,
      server,
      writeQueue: [],
      writing: false,
      authsSent: [],
      pingTimer: null,
      dropReason: null,
    };
    this.link = link;
    this.prime(link);
    this.logger.info(
      { server: serverName(server), sessionId: hex(res.sessionId), timeoutMs: res.timeOut, newSession },
      "zookeeper session connected",
    );
    this.emit({ state: "connected", sessionId: res.sessionId, server: serverName(server), newSession });
    const renewed = newSession && this.hadSession;
    this.hadSession = true;
    if (renewed) this.announceNewSession(res.sessionId);
    this.firstConnect?.resolve();
    this.firstConnect = null;
    this.flush();
    const reason = await this.readLoop(link);
    this.linkLost(link, reason);
  }

  /** Auth first (so ACL checks see it), then the watches, then the requests that waited. */
  private prime(link: Link): void {
    for (const entry of this.auths) this.sendAuth(link, entry);
    const paths = this.watches.paths();
    const toServer = (list: string[]) => list.map((p) => this.serverPath(p));
    for (const chunk of setWatchesChunks(toServer(paths.data), toServer(paths.exist), toServer(paths.child))) {
      const frame = requestFrame(Xid.setWatches, OpCode.setWatches, (w) =>
        SetWatches.encode(w, { relativeZxid: this.lastZxid, ...chunk }));
      link.writeQueue.push(frame);
    }
    const pingEveryMs = Math.max(1, Math.floor(this.negotiatedMs / 3));
    link.pingTimer = this.clock.setInterval(() => this.tick(link), pingEveryMs);
    void this.pump(link);
  }

  /** Every third of the timeout: a ping, or, when the server has been silent too long, a drop. */
  private tick(link: Link): void {
    const silentMs = this.clock.monotonicMs() - this.lastHeardMs;
    const readTimeoutMs = (this.negotiatedMs * 2) / 3;
    if (silentMs > readTimeoutMs) {
      link.dropReason = `nothing heard from ${serverName(link.server)} for ${Math.round(silentMs)} ms`;
      link.conn.close();
      return;
    }
    link.writeQueue.push(pingFrame);
    void this.pump(link);
  }

  private async readLoop(link: Link): Promise<string> {
    try {
      for (;;) {
        const frame = await link.frames.next();
        if (frame === null) return link.dropReason ?? "connection closed by the server";
        this.lastHeardMs = this.clock.monotonicMs();
        this.onFrame(link, frame);
      }
    } catch (e) {
      return link.dropReason ?? messageOf(e);
    }
  }

  private linkLost(link: Link, reason: string): void {
    link.pingTimer?.cancel();
    link.conn.close();
    if (this.link === link) this.link = null;
    const server = serverName(link.server);
    const lost = new ZkError("ConnectionLoss", "", `connection to ${server} lost: ${reason}`);
    this.requests.failInflight(lost);
    if (this.closed) return;
    this.logger.info({ server, sessionId: hex(this.sessionIdValue), reason }, "zookeeper connection lost");
    this.emit({ state: "disconnected", server, reason });
  }

  /** Treats a session unheard-from for its whole timeout as expired (the server has expired it, or will). */
  private expireIfSilentTooLong(): void {
    if (this.sessionIdValue === 0n || this.negotiatedMs === 0) return;
    const silentMs = this.clock.monotonicMs() - this.lastHeardMs;
    if (silentMs >= this.negotiatedMs) {
      this.expire(`no server reachable for ${Math.round(silentMs)} ms, past the ${this.negotiatedMs} ms session timeout`, true);
    }
  }

  /** local: this client decided, so the server may still keep the session (see endStaleSession). */
  private expire(reason: string, local: boolean): void {
    const old = this.sessionIdValue;
    if (local) this.staleSession = { id: old, password: this.password };
    this.sessionIdValue = 0n;
    this.password = new Uint8Array(sessionPasswordBytes);
    const expired = new ZkError("SessionExpired", "", `session 0x${hex(old)} expired: ${reason}`);
    this.requests.failOutgoing(expired);
    this.logger.warn({ sessionId: hex(old), reason }, "zookeeper session expired");
    this.emit({ state: "expired", sessionId: old, reason });
  }

  private backoffMs(failures: number): number {
    const rounds = Math.floor(failures / this.servers.length);
    const ceiling = Math.min(zkReconnectBackoffMsMax, 50 * 2 ** Math.min(rounds, 10));
    const jitter = new Uint8Array(1);
    this.platform.randomBytes(jitter);
    return Math.floor(ceiling / 2 + (ceiling / 2) * (jitter[0] / 255));
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.clock.setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        timer.cancel();
        this.wake = null;
        resolve();
      };
    });
  }

  // --- frames from the server ------------------------------------------------------------------

  private onFrame(link: Link, frame: Uint8Array): void {
    const r = new Reader(frame);
    const header = ReplyHeader.decode(r);
    if (!r.ok) throw new ProtocolError(`short reply header: ${r.error}`);
    if (header.zxid > 0n) this.lastZxid = header.zxid;
    switch (header.xid) {
      case Xid.ping:
        return;
      case Xid.notification:
        return this.onNotification(r);
      case Xid.auth:
        return this.onAuthReply(link, header.err);
      case Xid.setWatches:
        if (header.err !== 0) this.logger.warn({ err: header.err }, "zookeeper refused SetWatches");
        return;
    }
    this.requests.onReply(header.xid, header.err, r);
    if (this.requests.waiting > 0) this.scheduleFlush();
  }

  private onNotification(r: Reader): void {
    const event = WatcherEvent.decode(r);
    if (!r.ok) throw new ProtocolError(`malformed watcher event: ${r.error}`);
    const type = eventTypeName(event.type);
    if (type === null) return; // state-only or watch-removal events: nothing registered here
    const path = this.clientPath(event.path);
    for (const watcher of this.watches.take(type, path)) {
      try {
        watcher({ type, path });
      } catch (e) {
        // As ZooKeeper's event thread: one failing watcher must not starve the others.
        this.logger.error({ path, type, err: messageOf(e) }, "zookeeper watcher threw");
      }
    }
  }

  private onAuthReply(link: Link, err: number): void {
    const entry = link.authsSent.shift();
    if (err === 0) {
      for (const w of entry?.waiters.splice(0) ?? []) w.resolve();
      return;
    }
    // The server closes the connection after AuthFailed; like the Java client, this one is done.
    const scheme = entry?.scheme ?? "";
    const failed = zkError(err, "", `auth scheme "${scheme}" refused`);
    for (const w of entry?.waiters.splice(0) ?? []) w.reject(failed);
    const i = entry === undefined ? -1 : this.auths.indexOf(entry);
    if (i >= 0) this.auths.splice(i, 1);
    this.emit({ state: "authFailed", scheme });
    this.closing ??= this.shutdown(failed);
  }

  // --- frames to the server --------------------------------------------------------------------

  /**
   * Queues a request: the frame is encoded now (so later changes to the caller's buffers do not
   * matter); onReply turns the reply into the result, or throws, and runs as the reply arrives.
   */
  submit<T>(
    path: string,
    opcode: number,
    body: (w: Writer) => void,
    onReply: (err: number, r: Reader) => T,
  ): Promise<T> {
    this.checkOpen(path);
    return this.enqueue(path, opcode, body, onReply, this.requestTimeoutMs);
  }

  private enqueue<T>(
    path: string,
    opcode: number,
    body: (w: Writer) => void,
    onReply: (err: number, r: Reader) => T,
    timeoutMs: number,
  ): Promise<T> {
    const frame = requestFrame(0, opcode, body);
    if (frame.length - 4 > zkRequestBytesMax) {
      return Promise.reject(new ZkError("BadArguments", path, `request of ${frame.length - 4} bytes is larger than jute.maxbuffer (${zkRequestBytesMax})`));
    }
    const reply = this.requests.add(path, frame, onReply, timeoutMs);
    this.scheduleFlush();
    return reply;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  /** Moves waiting requests onto the wire, xids in order, up to the in-flight bound. */
  private flush(): void {
    const link = this.link;
    if (link === null) return;
    this.requests.send((frame) => link.writeQueue.push(frame));
    void this.pump(link);
  }

  /** Writes the link's queued frames, batched, one write at a time (the Connection's contract). */
  private async pump(link: Link): Promise<void> {
    if (link.writing) return;
    link.writing = true;
    try {
      while (link.writeQueue.length > 0 && this.link === link) {
        const frames = link.writeQueue.splice(0);
        await link.conn.write(frames.length === 1 ? frames[0] : concat(frames));
      }
    } catch {
      link.conn.close(); // the read loop sees the end and fails what was in flight
    } finally {
      link.writing = false;
    }
  }

  private sendAuth(link: Link, entry: AuthEntry): void {
    link.authsSent.push(entry);
    link.writeQueue.push(requestFrame(Xid.auth, OpCode.auth, (w) =>
      AuthPacket.encode(w, { type: 0, scheme: entry.scheme, auth: entry.auth })));
    void this.pump(link);
  }

  // --- shutting down ---------------------------------------------------------------------------

  /** Ends the session (when connected), fails everything left with cause, stops the loop. */
  private async shutdown(cause: ZkError | null): Promise<void> {
    this.watches.clear(); // a closing client hears nothing more, not even its own ephemerals go
    if (cause === null && this.link !== null) await this.closeSession();
    this.closed = true;
    const error = cause ?? new ZkError("SessionExpired", "", "the client is closed");
    this.requests.failAll(error);
    for (const entry of this.auths) for (const w of entry.waiters.splice(0)) w.reject(error);
    this.link?.conn.close();
    this.opening?.close();
    this.wake?.();
    this.firstConnect?.reject(error);
    this.firstConnect = null;
    await this.loop;
    this.emit({ state: "closed" });
    this.stateListeners.clear();
    this.newSessionListeners.clear();
  }

  /** CloseSession, queued behind every request already submitted; bounded wait for its reply. */
  private async closeSession(): Promise<void> {
    const waitMs = Math.min(this.requestTimeoutMs, closeSessionWaitMsMax);
    try {
      await this.enqueue("", OpCode.closeSession, noBody, () => undefined, waitMs);
    } catch (e) {
      this.logger.debug({ err: messageOf(e) }, "zookeeper CloseSession not confirmed");
    }
  }

  // --- helpers ---------------------------------------------------------------------------------

  private checkOpen(path: string): void {
    if (this.closed || this.closing !== null) {
      throw new ZkError("SessionExpired", path, "the client is closed");
    }
  }

  private emit(event: ZkSessionEvent): void {
    for (const fn of [...this.stateListeners]) {
      try {
        fn(event);
      } catch (e) {
        this.logger.error({ state: event.state, err: messageOf(e) }, "zookeeper state listener threw");
      }
    }
  }

  private announceNewSession(sessionId: bigint): void {
    for (const fn of [...this.newSessionListeners]) {
      try {
        fn(sessionId);
      } catch (e) {
        this.logger.error({ err: messageOf(e) }, "zookeeper new-session listener threw");
      }
    }
  }

  /** Registers a one-shot watch (from a reply's onReply, so before any later event is read). */
  addWatch(kind: WatchKind, path: string, watch: ZkWatcher): void {
    this.watches.add(kind, path, watch);
  }

  serverPath(path: string): string {
    return prependChroot(this.chroot, path);
  }

  clientPath(serverPath: string): string {
    return stripChroot(this.chroot, serverPath);
  }

}

function authEntry(scheme: string, auth: string | Uint8Array): AuthEntry {
  if (typeof scheme !== "string" || scheme === "") throw new ZkError("BadArguments", "", "auth scheme is empty");
  return { scheme, auth: typeof auth === "string" ? utf8Bytes(auth) : auth.slice(), waiters: [] };
}

function shuffled<T>(items: T[], randomBytes: (out: Uint8Array) => void): T[] {
  const out = [...items];
  const random = new Uint8Array(4 * out.length);
  randomBytes(random);
  const view = new DataView(random.buffer);
  for (let i = out.length - 1; i > 0; i--) {
    const j = view.getUint32(4 * i) % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function withTimeout<T>(clock: Clock, p: Promise<T>, ms: number, error: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimeout(() => reject(error()), ms);
    p.then((v) => {
      timer.cancel();
      resolve(v);
    }, (e) => {
      timer.cancel();
      reject(e);
    });
  });
}

function hex(id: bigint): string {
  return BigInt.asUintN(64, id).toString(16);
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

