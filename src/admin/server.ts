// AdminServer: serves the admin app (app.ts) and /metrics on every `admin.listeners` address
// through platform.http.serve, from before the broker starts until after it stops, so that
// /v1/status/live answers during log recovery and /v1/status/ready says 503 until the broker is
// registered, and again once it begins to shut down.
//
// The composition root runs it: start() (binds; a busy port is a start-up error naming
// admin.listeners), then Broker.start, then attach(broker); on shutdown detach(), broker.shutdown(),
// close(). Broker does not start it itself because admin sits above broker in the module order,
// and because it must be up before the broker is.
//
// The bearer token comes from admin.auth.token, or from the file admin.auth.token.file names
// (read once here; surrounding whitespace dropped). It must be an RFC 6750 token
// ([A-Za-z0-9._~+/-]+=*), which is what Authorization: Bearer can carry.

import { type BrokerConfig, loadListenerTls, type RequestObserver } from "../broker/mod.ts";
import type { HttpServer, Platform, TlsServerOptions } from "../platform/mod.ts";
import type { Logger } from "../util/mod.ts";
import { type AdminSource, type AdminTarget, type BrokerPhase, createAdminApp, type LogLevel } from "./app.ts";
import { BrokerMetrics } from "./broker_metrics.ts";
import { publishAdminEndpoint, publishedAdminUrls } from "./peers.ts";

/** Why the admin server could not start; its message names the config key to look at. */
export class AdminStartupError extends Error {
  override name = "AdminStartupError";
}

export interface AdminServerOptions {
  logger: Logger;
  /** Changes the process' log level (PUT /v1/log-level); without it that route answers 501. */
  setLogLevel?: (level: LogLevel) => void;
}

/** The running broker as the admin server needs it: the app's view plus the metrics hook. */
export interface AdminBroker extends AdminTarget {
  setRequestObserver(observer: RequestObserver | null): void;
}

const bearerTokenPattern = /^[A-Za-z0-9._~+/-]+=*$/;

/** 127.0.0.0/8, ::1 and localhost: only this host can reach a listener there. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return h === "localhost" || h === "::1" || h === "0:0:0:0:0:0:0:1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

function resolveToken(platform: Platform, config: BrokerConfig): string | null {
  if (config.adminAuthToken !== null) {
    if (!bearerTokenPattern.test(config.adminAuthToken)) {
      throw new AdminStartupError("admin.auth.token: a bearer token is letters, digits and ._~+/- (then = padding)");
    }
    return config.adminAuthToken;
  }
  const file = config.adminAuthTokenFile;
  if (file === null) return null;
  let bytes: Uint8Array | null;
  try {
    bytes = platform.fs.readFile(file);
  } catch (e) {
    throw new AdminStartupError(`admin.auth.token.file: cannot read ${file}: ${(e as Error).message}`);
  }
  if (bytes === null) throw new AdminStartupError(`admin.auth.token.file: ${file} does not exist`);
  const token = new TextDecoder().decode(bytes).trim();
  if (token === "") throw new AdminStartupError(`admin.auth.token.file: ${file} is empty`);
  if (!bearerTokenPattern.test(token)) {
    throw new AdminStartupError(`admin.auth.token.file: the token in ${file} may hold only letters, digits and ._~+/- (then = padding)`);
  }
  return token;
}

export class AdminServer implements AdminSource {
  private current: AdminBroker | null = null;
  private state: BrokerPhase = "starting";
  private closed = false;

  private unpublish: (() => Promise<void>) | null = null;

  private constructor(
    readonly metrics: BrokerMetrics,
    private readonly servers: HttpServer[],
    private readonly logger: Logger,
    /** admin.listeners as configured (the scheme and host each server was bound with). */
    private readonly listeners: { host: string; port: number; tls?: true }[],
  ) {}

  /** The bound addresses, in admin.listeners order (the real ports when 0 was asked for). */
  get addresses(): { host: string; port: number }[] {
    return this.servers.map((s) => ({ host: s.host, port: s.port }));
  }

  /** Binds every admin listener (none when admin.listeners is empty). */
  static async start(platform: Platform, config: BrokerConfig, options: AdminServerOptions): Promise<AdminServer> {
    const token = resolveToken(platform, config);
    const loopbackOnly = config.adminListeners.every((l) => isLoopbackHost(l.host));
    const metrics = new BrokerMetrics(platform.clock, { memoryRssBytes: () => platform.process.memoryRssBytes() });
    const servers: HttpServer[] = [];
    const log = options.logger.child({ component: "admin" });
    const admin = new AdminServer(metrics, servers, log, config.adminListeners);
    const app = createAdminApp(admin, {
      authToken: token,
      loopbackOnly,
      renderMetrics: () => metrics.render(),
      setLogLevel: options.setLogLevel,
      logger: log,
    });
    // https:// listeners serve TLS with the ssl.* keys (listener.name.admin.ssl.* first), read
    // once here: a renewed certificate is picked up by a restart of the admin server's process.
    let tls: TlsServerOptions | undefined;
    if (config.adminSsl !== null) {
      try {
        tls = loadListenerTls(platform.fs, config.adminSsl).server;
      } catch (e) {
        throw new AdminStartupError(`admin.listeners: https needs the ssl.* keys: ${(e as Error).message}`);
      }
    }
    for (const l of config.adminListeners) {
      try {
        servers.push(await platform.http.serve({ host: l.host, port: l.port, ...(l.tls ? { tls } : {}) }, (req) => app.fetch(req)));
      } catch (e) {
        for (const s of servers) await s.close();
        const where = `${l.tls ? "https" : "http"}://${l.host.includes(":") ? `[${l.host}]` : l.host}:${l.port}`;
        throw new AdminStartupError(`admin.listeners: cannot listen on ${where}: ${(e as Error).message}`);
      }
    }
    if (servers.length > 0) metrics.start();
    if (token === null && !loopbackOnly) {
      log.warn({}, "admin API: no admin.auth.token and a listener beyond loopback: changes over HTTP are refused");
    }
    log.info({ listeners: admin.addresses.map((a) => `${a.host}:${a.port}`), auth: token !== null }, "admin API listening");
    return admin;
  }

  broker(): AdminTarget | null {
    return this.current;
  }

  phase(): BrokerPhase {
    return this.state;
  }

  /** The broker is registered and serving: the API answers for it from now on, and says where (peers.ts). */
  attach(broker: AdminBroker): void {
    this.current = broker;
    this.state = "running";
    this.metrics.attach(broker);
    broker.setRequestObserver(this.metrics.requestObserver);
    const listeners = this.listeners.map((l, i) => ({ ...l, port: this.servers[i]?.port ?? l.port }));
    this.unpublish = publishAdminEndpoint(broker.services, publishedAdminUrls(broker.services, listeners), this.logger);
  }

  /** The broker begins to shut down: ready answers 503, routes that need the broker too. */
  detach(): void {
    const b = this.current;
    this.current = null;
    this.state = "stopping";
    this.metrics.attach(null);
    b?.setRequestObserver(null);
    void this.unpublish?.();
    this.unpublish = null;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.detach();
    this.metrics.stop();
    await Promise.all(this.servers.map((s) => s.close()));
    this.logger.info({}, "admin API stopped");
  }
}
