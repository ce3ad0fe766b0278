// Test harness: a real broker in this test process, on the platform of the runtime running the
// test (Bun's adapter under `bun test`, Deno's under `deno test`), on 127.0.0.1 with a free port
// and its own temporary log dir. Stop it (and remove its files) at the end of every test.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Broker, parseBrokerConfig } from "../../src/broker/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Platform } from "../../src/platform/types.ts";
import { EmbeddedRegistryStore, type Registry } from "../../src/registry/mod.ts";
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
  /** A new session on the broker's embedded registry (to read znodes as zkCli.sh would); close it after use. */
  registrySession(): Registry;
}

export function tempDir(prefix = "strand-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** `logger` lets a test see the broker's log lines (e.g. to check no handler failed). */
export async function startBroker(overrides: Record<string, string> = {}, logDir = tempDir(), logger: Logger = silentLogger): Promise<TestBroker> {
  const platform = await loadPlatform();
  let port = Number(overrides.port ?? 0);
  const boot = async () => {
    const raw = new Map<string, string>([
      ["broker.id", "0"],
      ["log.dirs", logDir],
      ["listeners", `PLAINTEXT://127.0.0.1:${port}`],
      ...Object.entries(overrides).filter(([k]) => k !== "port"),
    ]);
    const { config } = parseBrokerConfig(raw);
    const store = EmbeddedRegistryStore.open(platform, `${config.logDirs[0]}/.strand-registry`);
    const broker = await Broker.start(platform, config, store.session(), logger);
    port = broker.port;
    return { broker, store };
  };
  let current = await boot();
  const t: TestBroker = {
    broker: current.broker,
    port,
    bootstrap: `127.0.0.1:${port}`,
    logDir,
    platform,
    async restart() {
      await current.broker.shutdown();
      await current.store.close();
      current = await boot();
      t.broker = current.broker;
    },
    registrySession() {
      return current.store.session();
    },
    async stop(keepFiles = false) {
      await current.broker.shutdown();
      await current.store.close();
      if (!keepFiles) rmSync(logDir, { recursive: true, force: true });
    },
  };
  return t;
}
