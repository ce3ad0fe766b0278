// `strand serve`: loads the configuration, picks the platform for the running runtime, and starts
// the admin API, the registry and the broker. Imported by main.ts only when serve is the command,
// so `strand --version` and the client tools do not load the broker, hono and pino.

import process from "node:process";
import { parseArgs } from "node:util";
import { readFileSync } from "node:fs";
import pino from "pino";
import { AdminServer, AdminStartupError, type LogLevel, logLevels } from "../admin/mod.ts";
import { Broker, type BrokerConfig, BrokerStartupError, ConfigError, parseBrokerConfig, zookeeperRegistryOptions } from "../broker/mod.ts";
import { LogDirsFailedError } from "../log/mod.ts";
import { loadPlatform, type Platform } from "../platform/mod.ts";
import { EmbeddedRegistryStore, type Registry, ZooKeeperRegistry } from "../registry/mod.ts";
import type { Logger } from "../util/mod.ts";
import { parseProperties, propertiesFromEnv } from "./properties.ts";

function fail(message: string, code = 2): never {
  process.stderr.write(`strand: ${message}\n`);
  process.exit(code);
}

function loadConfig(values: { config?: string; override?: string[] }) {
  const raw = new Map<string, string>();
  if (values.config !== undefined) {
    let text: string;
    try {
      text = readFileSync(values.config, "utf8");
    } catch (e) {
      fail(`cannot read config file ${values.config}: ${(e as Error).message}`);
    }
    for (const [k, v] of parseProperties(text)) raw.set(k, v);
  }
  for (const [k, v] of propertiesFromEnv(process.env)) raw.set(k, v);
  for (const o of values.override ?? []) {
    const i = o.indexOf("=");
    if (i <= 0) fail(`--override takes KEY=VALUE, got "${o}"`);
    raw.set(o.slice(0, i).trim(), o.slice(i + 1));
  }
  return parseBrokerConfig(raw);
}

/** The registry backend: ZooKeeper when zookeeper.connect is set, else the embedded store. */
async function openRegistry(
  platform: Platform,
  config: BrokerConfig,
  logger: Logger,
): Promise<{ registry: Registry; close(): Promise<void> }> {
  if (config.zookeeperConnect !== null) {
    try {
      const zk = await ZooKeeperRegistry.open(platform, { ...zookeeperRegistryOptions(config), logger: logger.child({ component: "zookeeper" }) });
      return { registry: zk, close: () => zk.close() };
    } catch (e) {
      fail(`cannot use ZooKeeper at zookeeper.connect=${config.zookeeperConnect}: ${(e as Error).message}`, 1);
    }
  }
  try {
    platform.fs.mkdirp(config.logDirs[0]);
    const store = await EmbeddedRegistryStore.openGradually(platform, `${config.logDirs[0]}/.strand-registry`, { logger });
    return { registry: store.session(), close: () => store.close() };
  } catch (e) {
    fail(`cannot open the embedded registry: ${(e as Error).message}`, 1);
  }
}

/**
 * pino, with a level the admin API can change at run time. A pino child copies its parent's level
 * when made and never follows it again, and the broker makes children everywhere; so pino itself
 * logs everything and a logMethod hook, which every child inherits, drops what is below the one
 * shared threshold.
 */
function createLogger(level: string): { logger: Logger; setLevel(level: LogLevel): void } {
  if (!(logLevels as readonly string[]).includes(level)) fail(`--log-level takes one of ${logLevels.join(", ")}, got "${level}"`);
  const values: Record<string, number> = { ...pino.levels.values, silent: Infinity };
  let threshold = values[level];
  const logger = pino({
    level: "trace",
    base: { pid: process.pid },
    hooks: {
      logMethod(args, method, levelValue) {
        if (levelValue >= threshold) method.apply(this, args);
      },
    },
  }) as unknown as Logger;
  return { logger, setLevel: (l) => (threshold = values[l]) };
}

/** serve's flags; a bad one is a one-line error and exit 2, like any other invalid input. */
function parseServeArgs(args: string[]) {
  try {
    return parseArgs({
      args,
      options: {
        config: { type: "string", short: "c" },
        override: { type: "string", multiple: true },
        "log-level": { type: "string", default: process.env.STRAND_LOG_LEVEL ?? "info" },
      },
      strict: true,
    });
  } catch (e) {
    fail(`serve: ${(e as Error).message} (strand --help lists the options)`);
  }
}

export async function serve(args: string[]): Promise<void> {
  const { values } = parseServeArgs(args);
  const { logger, setLevel } = createLogger(values["log-level"]);
  let parsed;
  try {
    parsed = loadConfig(values);
  } catch (e) {
    if (e instanceof ConfigError) fail(e.message);
    throw e;
  }
  const { config, unknownKeys } = parsed;
  for (const k of unknownKeys) logger.warn({ key: k }, "unknown config key ignored");
  const platform = await loadPlatform();
  // The admin API listens before the broker starts, so /v1/status/ready can say "starting" (503)
  // through log recovery.
  let admin: AdminServer;
  try {
    admin = await AdminServer.start(platform, config, { logger, setLogLevel: setLevel });
  } catch (e) {
    if (e instanceof AdminStartupError) fail(e.message, 1);
    throw e;
  }
  const store = await openRegistry(platform, config, logger);
  let broker: Broker;
  try {
    broker = await Broker.start(platform, config, store.registry, logger);
  } catch (e) {
    await store.close().catch(() => {}); // a ZooKeeper session ends now rather than at its timeout
    if (e instanceof BrokerStartupError || e instanceof LogDirsFailedError) fail(e.message, 1);
    logger.error({ err: (e as Error).stack }, "start-up failed");
    fail(`start-up failed: ${(e as Error).message}`, 1);
  }
  admin.attach(broker);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "stopping");
    admin.detach();
    await broker.shutdown();
    await admin.close();
    await store.close();
    platform.process.exit(0);
  };
  // Every log dir failed: the broker has stopped itself; exit non-zero so systemd sees a failure.
  void broker.fatal.then(async (err) => {
    stopping = true;
    await admin.close();
    await store.close().catch(() => {}); // it lives in the first log dir, which failed too
    fail(err.message, 1);
  });
  platform.process.onSignal("SIGTERM", () => void stop("SIGTERM"));
  platform.process.onSignal("SIGINT", () => void stop("SIGINT"));
}

