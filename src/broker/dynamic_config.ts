// DynamicBrokerConfig: Kafka's dynamic broker configs (DynamicBrokerConfig, DynamicLogConfig) for
// the keys whose broker value is the default of a topic key: changed at run time through
// AlterConfigs / IncrementalAlterConfigs on a BROKER resource (or the admin API's PUT /v1/config)
// and stored as Kafka stores them (AdminZkClient.changeBrokerConfig):
//
//   /config/brokers/<id>                        {"version":1,"config":{"log.retention.ms":"1000"}}
//   /config/brokers/<default>                   the cluster-wide defaults, same payload
//   /config/changes/config_change_<10 digits>   {"version":2,"entity_path":"brokers/<id>"} (or brokers/<default>)
//
// Every broker's ConfigChangeWatcher re-reads the node a notification names and calls reload().
// Besides the log defaults, the connection limits (max.connections, max.connections.per.ip and its
// overrides, max.connection.creation.rate, and listener.name.<l>.max.connections and
// .max.connection.creation.rate) are dynamic: the SocketServer listens for changes.
// Precedence, per key: this broker's dynamic value > the cluster default's > server.properties >
// Kafka's default. From the merged keys a BrokerConfig is parsed again, and its log defaults are
// written into the one TopicLogConfig object the LogManager, the LocalControllerChannel and the
// watcher share (so logs created later start with them); then every log held here gets its
// topic's effective config again, so a topic that does not override a key follows the new default
// (retention, segment size, message.max.bytes → max.message.bytes, min.insync.replicas, …).
//
// Invariants:
// - Only the keys of dynamicBrokerConfigKeys and the per-listener connection limits
//   (isDynamicBrokerKey) are ever stored by strand; any other key is refused
//   with Kafka's "Cannot update these configs dynamically: Set(k)". A node written by another
//   tool may hold more: those keys, and values that do not parse, are logged and ignored.
// - A change is validated as Kafka does: the whole merged config must parse (a bad value fails
//   with INVALID_CONFIG naming the key) before anything is written.
// - The maps here are replaced, never mutated, so a describe sees one consistent version.

import { logRegistryWriteFailure, registryWriteFailure } from "../controller/mod.ts";
import { effectiveLogConfig, type TopicLogConfig } from "../log/mod.ts";
import {
  ConfigEntityChangeNotificationSequenceZNode,
  ConfigEntityName,
  ConfigEntityZNode,
  ConfigType,
  type Op,
  type Registry,
  RegistryError,
} from "../registry/mod.ts";
import type { ReplicaManager } from "../replication/mod.ts";
import { configWriteAttemptsMax, ErrorCode, type Logger } from "../util/mod.ts";
import { type BrokerConfig, ConfigError, isListenerConnectionLimitKey, parseBrokerConfig } from "./config.ts";
import type { MetadataCache } from "./metadata_cache.ts";

/**
 * The broker keys that may change at run time: Kafka's DynamicLogConfig.ReconfigurableConfigs
 * (the first broker synonym of each topic key) that strand reads. As in Kafka, the hour and
 * minute forms (log.retention.hours, log.retention.minutes, log.roll.hours) are read-only.
 */
export const dynamicBrokerConfigKeys: ReadonlySet<string> = new Set([
  "compression.gzip.level",
  "compression.lz4.level",
  "compression.type",
  "compression.zstd.level",
  "log.cleanup.policy",
  "log.cleaner.delete.retention.ms",
  "log.cleaner.max.compaction.lag.ms",
  "log.cleaner.min.cleanable.ratio",
  "log.cleaner.min.compaction.lag.ms",
  "log.flush.interval.messages",
  "log.flush.interval.ms",
  "log.index.interval.bytes",
  "log.index.size.max.bytes",
  "log.message.timestamp.after.max.ms",
  "log.message.timestamp.before.max.ms",
  "log.message.timestamp.difference.max.ms",
  "log.message.timestamp.type",
  "log.retention.bytes",
  "log.retention.ms",
  "log.roll.ms",
  "log.roll.jitter.ms",
  "log.segment.bytes",
  "log.segment.delete.delay.ms",
  "message.max.bytes",
  "min.insync.replicas",
  "unclean.leader.election.enable",
  // Kafka's DynamicConfig.Broker replication throttles (replication/replication_quota.ts).
  "leader.replication.throttled.rate",
  "follower.replication.throttled.rate",
  // Kafka's DynamicConnectionQuota: applied to the next connection accepted; the connections
  // already open stay (a lower max.connections closes none). The per-listener forms
  // (listener.name.<l>.max.connections, .max.connection.creation.rate) are dynamic too, per
  // broker and as the cluster default (Kafka's ClusterLevelListenerConfigs): isDynamicBrokerKey.
  "max.connections",
  "max.connections.per.ip",
  "max.connections.per.ip.overrides",
  "max.connection.creation.rate",
]);

/** Whether a broker key may change at run time: one of dynamicBrokerConfigKeys, or a listener's connection limit. */
export function isDynamicBrokerKey(key: string): boolean {
  return dynamicBrokerConfigKeys.has(key) || isListenerConnectionLimitKey(key);
}

/** The dynamic values in force: this broker's and the cluster default's. */
export interface DynamicValues {
  perBroker: ReadonlyMap<string, string>;
  clusterDefault: ReadonlyMap<string, string>;
}

export const noDynamicValues: DynamicValues = { perBroker: new Map(), clusterDefault: new Map() };

/** The log defaults a broker config gives every topic (the values topic keys fall back to). */
export function logDefaultsOf(config: BrokerConfig): TopicLogConfig {
  return {
    segmentBytes: config.logSegmentBytes,
    segmentMs: config.logRollMs,
    segmentJitterMs: config.logRollJitterMs,
    indexIntervalBytes: config.logIndexIntervalBytes,
    segmentIndexBytes: config.logIndexSizeMaxBytes,
    maxMessageBytes: config.messageMaxBytes,
    minInsyncReplicas: config.minInsyncReplicas,
    retentionMs: config.logRetentionMs,
    retentionBytes: config.logRetentionBytes,
    flushMessages: config.logFlushIntervalMessages,
    flushMs: config.logFlushIntervalMs,
    fileDeleteDelayMs: config.logSegmentDeleteDelayMs,
    cleanupPolicy: config.logCleanupPolicy,
    deleteRetentionMs: config.logCleaner.deleteRetentionMs,
    minCleanableDirtyRatio: config.logCleaner.minCleanableRatio,
    minCompactionLagMs: config.logCleaner.minCompactionLagMs,
    maxCompactionLagMs: config.logCleaner.maxCompactionLagMs,
    messageTimestampType: config.logMessageTimestamp.type,
    messageTimestampBeforeMaxMs: config.logMessageTimestamp.beforeMaxMs,
    messageTimestampAfterMaxMs: config.logMessageTimestamp.afterMaxMs,
    messageTimestampDifferenceMaxMs: config.logMessageTimestamp.differenceMaxMs,
    compressionType: config.compression.type,
    compressionGzipLevel: config.compression.gzipLevel,
    compressionZstdLevel: config.compression.zstdLevel,
  };
}

/** Kafka's Scala Set as its messages print it: Set(a, b). */
const scalaSet = (keys: string[]) => `Set(${keys.join(", ")})`;

/** The registry entity name of a broker resource: "<default>" for "" (cluster-wide), else the id. */
export function brokerEntityName(resourceName: string): string {
  return resourceName === "" ? ConfigEntityName.Default : resourceName;
}

/** Kafka's ConfigResource.toString, as its messages name a resource. */
const resourceText = (resourceName: string) => `ConfigResource(type=BROKER, name='${resourceName}')`;

export type DynamicOutcome = { errorCode: number; errorMessage: string | null };
/** The entity's new dynamic values computed from the current ones, or why the change is refused. */
export type DynamicChange = { configs: Record<string, string> } | { error: DynamicOutcome };

const ok: DynamicOutcome = { errorCode: ErrorCode.NONE, errorMessage: null };

export class DynamicBrokerConfig {
  private perBroker: ReadonlyMap<string, string> = new Map();
  private clusterDefault: ReadonlyMap<string, string> = new Map();
  /** The merged config (static + dynamic), parsed. */
  private current: BrokerConfig;
  /** Told of the merged config after every change (the SocketServer takes its connection limits). */
  readonly listeners: Array<(config: BrokerConfig) => void> = [];

  constructor(
    readonly staticConfig: BrokerConfig,
    readonly brokerId: number,
    /** Shared with the LogManager, the LocalControllerChannel and the watcher: updated in place. */
    readonly logDefaults: TopicLogConfig,
    private readonly registry: Registry,
    private readonly logger: Logger,
  ) {
    this.current = staticConfig;
  }

  get values(): DynamicValues {
    return { perBroker: this.perBroker, clusterDefault: this.clusterDefault };
  }

  /** The config this broker runs with now: server.properties with the dynamic values over it. */
  get effective(): BrokerConfig {
    return this.current;
  }

  /** Reads both entities (at start-up, so a restarted broker keeps its dynamic values). */
  async load(): Promise<void> {
    this.clusterDefault = this.usable(ConfigEntityName.Default, (await this.read(ConfigEntityName.Default)).configs);
    this.perBroker = this.usable(String(this.brokerId), (await this.read(String(this.brokerId))).configs);
    this.recompute();
  }

  /**
   * Re-reads an entity a change notification named ("<default>" or an id); false when it is not
   * one this broker follows (another broker's node).
   */
  async reload(entityName: string): Promise<boolean> {
    if (entityName !== ConfigEntityName.Default && entityName !== String(this.brokerId)) return false;
    const configs = this.usable(entityName, (await this.read(entityName)).configs);
    if (entityName === ConfigEntityName.Default) this.clusterDefault = configs;
    else this.perBroker = configs;
    this.recompute();
    return true;
  }

  /** Gives every log held here its topic's effective config again, over the current defaults. */
  reapplyToLogs(replicaManager: ReplicaManager, metadata: MetadataCache): number {
    let n = 0;
    for (const p of replicaManager.allPartitions()) {
      p.log.config = effectiveLogConfig(this.logDefaults, metadata.topicOverrides(p.topic));
      n++;
    }
    return n;
  }

  /**
   * Changes the dynamic values of a broker resource (its name: "" for the cluster default, or
   * this broker's id, already checked by the caller), as Kafka's ZkAdminManager.alterBrokerConfigs:
   * refuses keys that are not dynamic, validates the merged config, and writes the node with its
   * change notification in one multi (starting over when another writer got in between).
   */
  async alter(resourceName: string, change: (current: Record<string, string>) => DynamicChange, validateOnly: boolean): Promise<DynamicOutcome> {
    const entity = brokerEntityName(resourceName);
    for (let attempt = 0; attempt < configWriteAttemptsMax; attempt++) {
      const stored = await this.read(entity);
      const next = change(Object.fromEntries(stored.configs));
      if ("error" in next) return next.error;
      const why = this.validate(resourceName, next.configs);
      if (why !== null) return why;
      if (validateOnly) return ok;
      try {
        await this.registry.multi(this.writeOps(entity, stored.version, next.configs));
        // In force here at once (the watcher re-reads it, and re-applies the logs, soon after).
        const written = this.usable(entity, new Map(Object.entries(next.configs)));
        if (entity === ConfigEntityName.Default) this.clusterDefault = written;
        else this.perBroker = written;
        this.recompute();
        return ok;
      } catch (e) {
        if (!(e instanceof RegistryError)) throw e;
        if (e.code === "BadVersion" || e.code === "NodeExists" || e.code === "NoNode") continue;
        // The disk is full: nothing was written, and the values in force stay as they were.
        const f = registryWriteFailure(e, `The dynamic config of ${resourceText(resourceName)} was not changed`);
        if (f === null) throw e;
        logRegistryWriteFailure(this.logger, f, { entity: `brokers/${entity}` });
        return { errorCode: f.errorCode, errorMessage: f.errorMessage };
      }
    }
    return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: `the dynamic config of broker ${entity} kept changing under this request; try again` };
  }

  /** Why the entity's new values cannot be stored, or null. */
  private validate(resourceName: string, configs: Record<string, string>): DynamicOutcome | null {
    const invalid = (message: string): DynamicOutcome => ({
      errorCode: ErrorCode.INVALID_CONFIG,
      errorMessage: `Invalid config value for resource ${resourceText(resourceName)}: ${message}`,
    });
    const nonDynamic = Object.keys(configs).filter((k) => !isDynamicBrokerKey(k));
    if (nonDynamic.length > 0) return invalid(`Cannot update these configs dynamically: ${scalaSet(nonDynamic)}`);
    const entries = new Map(Object.entries(configs));
    const perBroker = resourceName === "" ? this.perBroker : entries;
    const clusterDefault = resourceName === "" ? entries : this.clusterDefault;
    try {
      this.parseMerged(clusterDefault, perBroker);
    } catch (e) {
      if (e instanceof ConfigError) return invalid(e.message);
      throw e;
    }
    // Kafka's ListenerConnectionQuota.validateReconfiguration: a listener's limit changed at run time is positive.
    for (const [k, v] of entries) {
      if (isListenerConnectionLimitKey(k) && Number(v) <= 0) return invalid(`${k}: Invalid ${k.replace(/^listener\.name\.[^.]*\./, "")} ${v.trim()}`);
    }
    return null;
  }

  private parseMerged(clusterDefault: ReadonlyMap<string, string>, perBroker: ReadonlyMap<string, string>): BrokerConfig {
    const merged = new Map<string, string>();
    for (const k of this.staticConfig.configured) merged.set(k, this.staticConfig.raw.get(k)!);
    for (const [k, v] of this.staticConfig.securityInput) merged.set(k, v);
    for (const [k, v] of clusterDefault) merged.set(k, v);
    for (const [k, v] of perBroker) merged.set(k, v);
    return parseBrokerConfig(merged).config;
  }

  private recompute(): void {
    try {
      this.current = this.parseMerged(this.clusterDefault, this.perBroker);
    } catch (e) {
      // Each value was checked alone; together they may still clash: run with the static config.
      this.logger.error({ err: (e as Error).message }, "dynamic broker configs do not combine; using server.properties alone");
      this.current = this.staticConfig;
    }
    Object.assign(this.logDefaults, logDefaultsOf(this.current));
    for (const listener of this.listeners) listener(this.current);
  }

  /** The stored values strand applies: dynamic keys whose value parses (others logged, ignored). */
  private usable(entity: string, stored: ReadonlyMap<string, string>): ReadonlyMap<string, string> {
    const out = new Map<string, string>();
    for (const [k, v] of stored) {
      if (!isDynamicBrokerKey(k)) {
        this.logger.warn({ entity: `brokers/${entity}`, key: k }, "dynamic broker config key strand does not apply; ignored");
        continue;
      }
      try {
        this.parseMerged(new Map(), new Map([[k, v]]));
        out.set(k, v);
      } catch (e) {
        // Some values are valid only with others (max.connections.per.ip=0 with overrides that
        // the other entity holds): then the whole, as the change was validated, decides.
        if (this.parsesWith(entity, stored)) out.set(k, v);
        else this.logger.warn({ entity: `brokers/${entity}`, key: k, err: (e as Error).message }, "invalid dynamic broker config; ignored");
      }
    }
    return out;
  }

  /** Whether the entity's stored values parse together with the other entity's values in force. */
  private parsesWith(entity: string, stored: ReadonlyMap<string, string>): boolean {
    try {
      if (entity === ConfigEntityName.Default) this.parseMerged(stored, this.perBroker);
      else this.parseMerged(this.clusterDefault, stored);
      return true;
    } catch {
      return false;
    }
  }

  private async read(entity: string): Promise<{ configs: Map<string, string>; version: number | null }> {
    try {
      const { data, stat } = await this.registry.getData(ConfigEntityZNode.path(ConfigType.Broker, entity));
      const configs = ConfigEntityZNode.decode(data);
      if (configs === null) this.logger.warn({ entity: `brokers/${entity}` }, "malformed dynamic broker config node; read as empty");
      return { configs: configs ?? new Map(), version: stat.version };
    } catch (e) {
      if (e instanceof RegistryError && e.code === "NoNode") return { configs: new Map(), version: null };
      throw e;
    }
  }

  private writeOps(entity: string, version: number | null, configs: Record<string, string>): Op[] {
    const path = ConfigEntityZNode.path(ConfigType.Broker, entity);
    const data = ConfigEntityZNode.encode(new Map(Object.entries(configs)));
    return [
      version !== null ? { op: "setData", path, data, version } : { op: "create", path, data },
      {
        op: "create",
        path: ConfigEntityChangeNotificationSequenceZNode.createPath,
        data: ConfigEntityChangeNotificationSequenceZNode.encode(`${ConfigType.Broker}/${entity}`),
        mode: "persistent-sequential",
      },
    ];
  }
}
