// LogManager: every partition log on this broker, across the directories of `log.dirs`.
//
// Layout (Kafka's): `<log.dir>/<topic>-<partition>/` per partition, plus per dir
// `meta.properties` (version, broker.id, cluster.id). A deleted partition's directory is first
// renamed `<topic>-<partition>.<uuid>-delete`, so a crash mid-delete never leaves a half log that
// looks live; such directories are removed at start-up.
//
// Invariants: one Log per topic-partition; a new partition goes to the dir holding the fewest.

import type { Platform } from "../platform/mod.ts";
import { uuidToString } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";
import { Log, type LogConfig } from "./log.ts";

export function topicPartitionKey(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

/** Splits `<topic>-<partition>` (topics may contain '-'); null when the name is not one. */
export function parseTopicPartitionDir(name: string): { topic: string; partition: number } | null {
  const m = /^(.+)-(\d+)$/.exec(name);
  if (m === null) return null;
  const partition = Number(m[2]);
  if (!Number.isSafeInteger(partition)) return null;
  return { topic: m[1], partition };
}

export class LogManager {
  private logs = new Map<string, Log>();
  private dirOf = new Map<string, string>();

  constructor(
    private readonly platform: Platform,
    readonly logDirs: string[],
    private readonly defaultConfig: LogConfig,
    private readonly logger: Logger,
  ) {}

  /** Creates the dirs, writes meta.properties, removes leftovers of deletes, opens every log. */
  startup(brokerId: number, clusterId: string): void {
    for (const dir of this.logDirs) {
      this.platform.fs.mkdirp(dir);
      this.checkMetaProperties(dir, brokerId, clusterId);
      for (const name of this.platform.fs.readdir(dir)) {
        if (name.endsWith("-delete")) {
          this.platform.fs.remove(`${dir}/${name}`);
          continue;
        }
        const tp = parseTopicPartitionDir(name);
        const st = this.platform.fs.stat(`${dir}/${name}`);
        if (tp === null || !st?.isDirectory) continue;
        this.openLog(dir, tp.topic, tp.partition);
      }
    }
    this.logger.info({ logs: this.logs.size, dirs: this.logDirs }, "loaded logs");
  }

  private checkMetaProperties(dir: string, brokerId: number, clusterId: string): void {
    const path = `${dir}/meta.properties`;
    const existing = this.platform.fs.readFile(path);
    if (existing !== null) {
      const props = new Map<string, string>();
      for (const line of new TextDecoder().decode(existing).split("\n")) {
        const m = /^([^#=]+)=(.*)$/.exec(line.trim());
        if (m) props.set(m[1], m[2]);
      }
      const id = props.get("broker.id");
      if (id !== undefined && Number(id) !== brokerId) {
        throw new Error(
          `${path} says broker.id=${id} but this broker is configured with broker.id=${brokerId}; ` +
            `a log dir belongs to one broker`,
        );
      }
      const cid = props.get("cluster.id");
      if (cid !== undefined && cid !== clusterId) {
        throw new Error(`${path} says cluster.id=${cid} but the registry's cluster id is ${clusterId}`);
      }
      if (id !== undefined && cid !== undefined) return;
    }
    const text = `#\n#${new Date(this.platform.clock.nowMs()).toString()}\n` +
      `cluster.id=${clusterId}\nversion=0\nbroker.id=${brokerId}\n`;
    this.platform.fs.writeFileAtomic(path, new TextEncoder().encode(text));
  }

  private openLog(dir: string, topic: string, partition: number, config = this.defaultConfig): Log {
    const key = topicPartitionKey(topic, partition);
    const log = Log.open(this.platform, `${dir}/${key}`, topic, partition, config, this.logger);
    this.logs.set(key, log);
    this.dirOf.set(key, dir);
    return log;
  }

  getLog(topic: string, partition: number): Log | undefined {
    return this.logs.get(topicPartitionKey(topic, partition));
  }

  /** The partition's log with the given config, created in the least loaded dir if missing. */
  getOrCreateLog(topic: string, partition: number, config: LogConfig): Log {
    const existing = this.getLog(topic, partition);
    if (existing === undefined) return this.openLog(this.leastLoadedDir(), topic, partition, config);
    existing.config = config;
    return existing;
  }

  private leastLoadedDir(): string {
    const counts = new Map(this.logDirs.map((d) => [d, 0]));
    for (const dir of this.dirOf.values()) counts.set(dir, (counts.get(dir) ?? 0) + 1);
    let best = this.logDirs[0];
    for (const d of this.logDirs) if ((counts.get(d) ?? 0) < (counts.get(best) ?? 0)) best = d;
    return best;
  }

  allLogs(): Log[] {
    return [...this.logs.values()];
  }

  /** Deletes a partition's log: rename to `.<uuid>-delete` (atomic), then remove. */
  deleteLog(topic: string, partition: number): void {
    const key = topicPartitionKey(topic, partition);
    const log = this.logs.get(key);
    if (log === undefined) return;
    log.close();
    const id = new Uint8Array(16);
    this.platform.randomBytes(id);
    const doomed = `${this.dirOf.get(key)}/${key}.${uuidToString(id).replaceAll("-", "")}-delete`;
    this.platform.fs.rename(log.dir, doomed);
    this.logs.delete(key);
    this.dirOf.delete(key);
    this.platform.fs.remove(doomed);
    this.logger.info({ topic, partition }, "deleted log");
  }

  flushAll(): void {
    for (const log of this.logs.values()) log.flush();
  }

  /** Flushes and closes every log (clean shutdown). */
  shutdown(): void {
    for (const log of this.logs.values()) {
      log.flush();
      log.close();
    }
    this.logs.clear();
    this.logger.info({}, "log manager shut down");
  }
}
