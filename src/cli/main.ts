// strand's entry point and composition root: parses the command line, loads the configuration,
// picks the platform for the running runtime, and starts what was asked for. This file and
// src/platform/ are the only places that may touch runtime APIs.
//
//   strand serve [--config server.properties] [--override key=value]... [--log-level info]
//   strand --version | --help

import process from "node:process";
import { parseArgs } from "node:util";
import { readFileSync } from "node:fs";
import pino from "pino";
import { Broker, BrokerStartupError, ConfigError, parseBrokerConfig } from "../broker/mod.ts";
import { loadPlatform } from "../platform/mod.ts";
import { EmbeddedRegistryStore } from "../registry/mod.ts";
import type { Logger } from "../util/mod.ts";
import { parseProperties, propertiesFromEnv } from "./properties.ts";
import { STRAND_VERSION } from "./version.ts";

const usage = `strand ${STRAND_VERSION}: a Kafka-compatible commit-log broker

Usage:
  strand serve [--config FILE] [--override KEY=VALUE]... [--log-level LEVEL]
      Runs a broker. FILE is a Kafka server.properties; --override sets one key (repeatable);
      STRAND_<KEY> environment variables set keys too (STRAND_LOG_DIRS=/data/strand → log.dirs).
      Precedence: --override, then environment, then FILE, then Kafka's defaults.
  strand --version
  strand --help

Without zookeeper.connect, the broker keeps its cluster metadata in an embedded registry under
the first log dir and acts as its own controller.`;

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

async function serve(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      config: { type: "string", short: "c" },
      override: { type: "string", multiple: true },
      "log-level": { type: "string", default: process.env.STRAND_LOG_LEVEL ?? "info" },
    },
    strict: true,
  });
  const logger = pino({ level: values["log-level"], base: { pid: process.pid } }) as unknown as Logger;
  let parsed;
  try {
    parsed = loadConfig(values);
  } catch (e) {
    if (e instanceof ConfigError) fail(e.message);
    throw e;
  }
  const { config, unknownKeys } = parsed;
  for (const k of unknownKeys) logger.warn({ key: k }, "unknown config key ignored");
  if (config.zookeeperConnect !== null) {
    fail("invalid value for zookeeper.connect: the ZooKeeper registry backend is not available in this build yet; unset it to use the embedded registry");
  }
  const platform = await loadPlatform();
  let store: EmbeddedRegistryStore;
  try {
    platform.fs.mkdirp(config.logDirs[0]);
    store = EmbeddedRegistryStore.open(platform, `${config.logDirs[0]}/.strand-registry`, { logger });
  } catch (e) {
    fail(`cannot open the embedded registry: ${(e as Error).message}`, 1);
  }
  let broker: Broker;
  try {
    broker = await Broker.start(platform, config, store.session(), logger);
  } catch (e) {
    if (e instanceof BrokerStartupError) fail(e.message, 1);
    logger.error({ err: (e as Error).stack }, "start-up failed");
    fail(`start-up failed: ${(e as Error).message}`, 1);
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "stopping");
    await broker.shutdown();
    await store.close();
    platform.process.exit(0);
  };
  platform.process.onSignal("SIGTERM", () => void stop("SIGTERM"));
  platform.process.onSignal("SIGINT", () => void stop("SIGINT"));
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === "--version" || command === "-V" || command === "version") {
    process.stdout.write(`strand ${STRAND_VERSION}\n`);
    return;
  }
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(usage + "\n");
    return;
  }
  if (command === "serve") return await serve(rest);
  fail(`unknown command "${command}"\n\n${usage}`);
}

await main(process.argv.slice(2));
