// Test harness: a real broker in this test process, on the platform of the runtime running the
// test (Bun's adapter under `bun test`, Deno's under `deno test`), on 127.0.0.1 with a free port
// and its own temporary log dir. Stop it (and remove its files) at the end of every test.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminServer } from "../../src/admin/mod.ts";
import { Broker, type BrokerConfig, parseBrokerConfig, zookeeperRegistryOptions } from "../../src/broker/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Platform } from "../../src/platform/types.ts";
import { EmbeddedRegistryStore, type Registry, ZooKeeperRegistry } from "../../src/registry/mod.ts";
import { type Logger, silentLogger } from "../../src/util/logger.ts";

export interface TestBroker {
  broker: Broker;
  port: number;
  bootstrap: string;
  logDir: string;
  platform: Platform;
  /** Clean stop, then start again on the same dir and port. */
  restart(): Promise<void>;
  /** Stops the broker; removes the log dir unless keepFiles. */
  stop(keepFiles?: boolean): Promise<void>;
  /**
   * A new session on the broker's embedded registry (to read znodes as zkCli.sh would); close it
   * after use. With zookeeper.connect, open a ZooKeeperRegistry or client on that server instead.
   */
  registrySession(): Registry;
  /**
   * The admin HTTP server, started (before the broker, attached after it, as the CLI does) only
   * when the overrides name admin.listeners; null otherwise. Its port 0 is kept across restarts.
   */
  admin: AdminServer | null;
  /** http://host:port of the first admin listener ("" without one). */
  adminUrl: string;
  /** The levels PUT /v1/log-level set, in order. */
  logLevelsSet: string[];
}

export function tempDir(prefix = "strand-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * `logger` lets a test see the broker's log lines (e.g. to check no handler failed). `brokerPlatform`
 * replaces the platform the broker runs on (e.g. one that makes a log dir fail); the embedded
 * registry keeps the runtime's own, unless `options.registryOnBrokerPlatform` (so a fault injected
 * under `<logDir>/.strand-registry` reaches the registry's journal too).
 */
export async function startBroker(
  overrides: Record<string, string> = {},
  logDir = tempDir(),
  logger: Logger = silentLogger,
  brokerPlatform?: Platform,
  options: { registryOnBrokerPlatform?: boolean } = {},
): Promise<TestBroker> {
  const platform = await loadPlatform();
  let port = Number(overrides.port ?? 0);
  const withAdmin = "admin.listeners" in overrides;
  let adminListeners = overrides["admin.listeners"];
  const logLevelsSet: string[] = [];
  const boot = async () => {
    const raw = new Map<string, string>([
      ["broker.id", "0"],
      ["log.dirs", logDir],
      ["listeners", `PLAINTEXT://127.0.0.1:${port}`],
      ...Object.entries(overrides).filter(([k]) => k !== "port"),
      ["admin.listeners", withAdmin ? adminListeners : ""],
    ]);
    const { config } = parseBrokerConfig(raw);
    const admin = withAdmin ? await AdminServer.start(platform, config, { logger, setLogLevel: (l) => logLevelsSet.push(l) }) : null;
    const onBroker = options.registryOnBrokerPlatform === true && brokerPlatform !== undefined;
    const store = await openRegistry(onBroker ? brokerPlatform : platform, config, onBroker ? logger : silentLogger);
    let broker: Broker;
    try {
      broker = await Broker.start(brokerPlatform ?? platform, config, store.session(), logger);
    } catch (e) {
      await admin?.close();
      await store.close();
      throw e;
    }
    port = broker.port;
    if (admin !== null) {
      admin.attach(broker);
      adminListeners = admin.addresses.map((a) => `http://${a.host.includes(":") ? `[${a.host}]` : a.host}:${a.port}`).join(",");
    }
    return { broker, store, admin };
  };
  const adminUrl = () => {
    const a = current.admin?.addresses[0];
    return a === undefined ? "" : `http://${a.host.includes(":") ? `[${a.host}]` : a.host}:${a.port}`;
  };
  const stopAll = async () => {
    current.admin?.detach();
    await current.broker.shutdown();
    await current.admin?.close();
    await current.store.close();
  };
  let current = await boot();
  const t: TestBroker = {
    broker: current.broker,
    port,
    bootstrap: `127.0.0.1:${port}`,
    logDir,
    platform,
    admin: current.admin,
    adminUrl: adminUrl(),
    logLevelsSet,
    async restart() {
      await stopAll();
      current = await boot();
      t.broker = current.broker;
      t.admin = current.admin;
      t.adminUrl = adminUrl();
    },
    registrySession() {
      return current.store.session();
    },
    async stop(keepFiles = false) {
      await stopAll();
      if (!keepFiles) rmSync(logDir, { recursive: true, force: true });
    },
  };
  return t;
}

/**
 * The registry as the CLI picks it: ZooKeeper when the config has zookeeper.connect, else the
 * embedded store under the first log dir. session() hands out the ZooKeeper session once (the
 * broker's): other sessions on a real ZooKeeper are opened asynchronously by the test itself.
 */
async function openRegistry(platform: Platform, config: BrokerConfig, logger: Logger): Promise<{ session(): Registry; close(): Promise<void> }> {
  if (config.zookeeperConnect === null) {
    return await EmbeddedRegistryStore.openGradually(platform, `${config.logDirs[0]}/.strand-registry`, { logger });
  }
  const zk = await ZooKeeperRegistry.open(platform, zookeeperRegistryOptions(config));
  let handedOut = false;
  return {
    session() {
      if (handedOut) throw new Error("with zookeeper.connect, open a ZooKeeperRegistry on the test's ZooKeeper");
      handedOut = true;
      return zk;
    },
    close: () => zk.close(),
  };
}
