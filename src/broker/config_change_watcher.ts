// ConfigChangeWatcher: how a broker learns that a topic's config changed, as Kafka's
// ZkConfigManager and ZkNodeChangeNotificationListener do it. Whoever changes /config/topics/<t>
// also creates a persistent-sequential /config/changes/config_change_<n> naming "topics/<t>";
// every broker watches /config/changes, reads the entities named by notifications it has not
// seen, and applies the topic's overrides: to the MetadataCache, and through effectiveLogConfig to
// the log of each partition of the topic this broker holds (max.message.bytes, segment.bytes, …).
//
// Invariants:
// - One queue: notification rounds never interleave, and each entity is read after the change
//   that named it, so the newest overrides win (the MetadataCache also orders reads by zxid).
// - At start-up every notification still present is processed once (reading the current config
//   is idempotent); afterwards only those with a higher sequence number than the last one seen.
// - Notifications older than Kafka's 15 minutes are deleted by whichever broker sees them first.
// - "brokers/<id>" (this broker's) and "brokers/<default>" are dynamic broker configs: the
//   DynamicBrokerConfig re-reads the node, which updates the shared log defaults, and every log
//   held here gets its topic's effective config again. Another broker's node is skipped.
// - "users/<sanitized user>" re-reads that user's SCRAM credentials (userChanged, set by the
//   Broker) and its quotas; "users/<u>/clients/<c>", "clients/<c>" and "ips/<ip>" re-read that
//   entity's quotas (quotaEntityChanged, set by the Broker).

import type { ConfigAdmin } from "../controller/mod.ts";
import { registryWriteFailure, topicNameError } from "../controller/mod.ts";
import { effectiveLogConfig, type TopicLogConfig } from "../log/mod.ts";
import type { Clock } from "../platform/mod.ts";
import {
  ConfigEntityChangeNotificationSequenceZNode,
  ConfigEntityChangeNotificationZNode,
  ConfigType,
  type Registry,
  RegistryError,
} from "../registry/mod.ts";
import type { ReplicaManager } from "../replication/mod.ts";
import type { Logger } from "../util/mod.ts";
import type { DynamicBrokerConfig } from "./dynamic_config.ts";
import type { MetadataCache } from "./metadata_cache.ts";
import { desanitizeEntityName } from "./scram_credentials.ts";

/** How long a change notification stays in the registry (Kafka's changeExpirationMs). */
export const configChangeExpirationMs = 15 * 60 * 1000;

export class ConfigChangeWatcher {
  private queue: Promise<void> = Promise.resolve();
  private lastExecutedChange = -1;
  private stopped = false;
  /** Called with the (desanitized) user a "users/<u>" notification names. */
  userChanged: ((user: string) => Promise<void>) | null = null;
  /** Called with a quota entity's path ("users/<u>", "clients/<c>", "users/<u>/clients/<c>"). */
  quotaEntityChanged: ((entityPath: string) => Promise<void>) | null = null;

  constructor(
    private readonly registry: Registry,
    private readonly configAdmin: ConfigAdmin,
    private readonly metadata: MetadataCache,
    private readonly replicaManager: ReplicaManager,
    private readonly logDefaults: TopicLogConfig,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly dynamicConfig: DynamicBrokerConfig | null = null,
  ) {}

  startup(): Promise<void> {
    return this.enqueue(() => this.processNotifications());
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    await this.queue;
  }

  /** Runs a round on the queue; errors are logged, never thrown into the queue. */
  private enqueue(fn: () => Promise<void>): Promise<void> {
    const run = this.queue.then(async () => {
      if (this.stopped) return;
      try {
        await fn();
      } catch (e) {
        this.logger.error({ err: e instanceof Error ? e.stack : String(e) }, "config change processing failed");
      }
    });
    this.queue = run;
    return run;
  }

  private async processNotifications(): Promise<void> {
    const watch = () => void this.enqueue(() => this.processNotifications());
    const children = await this.registry.getChildren(ConfigEntityChangeNotificationZNode.path, watch);
    const prefix = ConfigEntityChangeNotificationSequenceZNode.SequenceNumberPrefix;
    const changed = new Set<string>();
    const nowMs = this.clock.nowMs();
    for (const child of children) {
      const seq = child.startsWith(prefix) ? Number(child.slice(prefix.length)) : NaN;
      if (!Number.isSafeInteger(seq)) continue;
      const path = `${ConfigEntityChangeNotificationZNode.path}/${child}`;
      const node = await this.getDataOrNull(path);
      if (node === null) continue;
      if (seq > this.lastExecutedChange) {
        const entity = ConfigEntityChangeNotificationSequenceZNode.decode(node.data);
        if (entity === null) this.logger.warn({ path }, "malformed config change notification; skipped");
        else changed.add(entity);
        this.lastExecutedChange = seq;
      }
      if (nowMs - node.stat.ctime > configChangeExpirationMs) await this.deleteQuietly(path);
    }
    for (const entity of changed) await this.applyEntity(entity);
  }

  private async applyEntity(entityPath: string): Promise<void> {
    const slash = entityPath.indexOf("/");
    const type = entityPath.slice(0, slash);
    const name = entityPath.slice(slash + 1);
    if (slash >= 0 && type === ConfigType.Broker && this.dynamicConfig !== null) return await this.applyBroker(name);
    if (slash >= 0 && (type === ConfigType.User || type === ConfigType.Client || type === ConfigType.Ip) && this.quotaEntityChanged !== null) {
      await this.quotaEntityChanged(entityPath);
    }
    if (slash >= 0 && type === ConfigType.User && !name.includes("/") && this.userChanged !== null) {
      const user = desanitizeEntityName(name);
      if (user === null) this.logger.warn({ entity: entityPath }, "config change names a user that does not desanitize; skipped");
      else await this.userChanged(user);
      return;
    }
    if (slash >= 0 && (type === ConfigType.User || type === ConfigType.Client || type === ConfigType.Ip) && this.quotaEntityChanged !== null) return;
    if (slash < 0 || type !== ConfigType.Topic) {
      this.logger.info({ entity: entityPath }, "config change for an entity type strand does not apply yet; skipped");
      return;
    }
    if (topicNameError(name) !== null) {
      this.logger.warn({ entity: entityPath }, "config change names an invalid topic; skipped");
      return;
    }
    const read = await this.configAdmin.readTopicConfig(name);
    if (!read.exists) return; // deleted since: nothing left to apply it to
    const configs = this.metadata.offerTopicConfigs(name, read.configs, read.zxid);
    const logConfig = effectiveLogConfig(this.logDefaults, configs);
    let partitions = 0;
    for (const p of this.replicaManager.allPartitions()) {
      if (p.topic !== name) continue;
      p.log.config = logConfig;
      partitions++;
    }
    this.logger.info({ topic: name, configs, partitions }, "topic config changed");
  }

  private async applyBroker(name: string): Promise<void> {
    const dynamic = this.dynamicConfig!;
    if (!(await dynamic.reload(name))) {
      this.logger.debug({ entity: `brokers/${name}` }, "dynamic config change for another broker; skipped");
      return;
    }
    const partitions = dynamic.reapplyToLogs(this.replicaManager, this.metadata);
    const values = name === String(dynamic.brokerId) ? dynamic.values.perBroker : dynamic.values.clusterDefault;
    this.logger.info({ entity: `brokers/${name}`, configs: Object.fromEntries(values), partitions }, "dynamic broker config changed");
  }

  private async getDataOrNull(path: string) {
    try {
      return await this.registry.getData(path);
    } catch (e) {
      if (e instanceof RegistryError && e.code === "NoNode") return null;
      throw e;
    }
  }

  private async deleteQuietly(path: string): Promise<void> {
    try {
      await this.registry.delete(path);
    } catch (e) {
      // Another broker purged it first.
      if (e instanceof RegistryError && e.code === "NoNode") return;
      // The registry's disk is full: the notice stays, to be purged at a later round; the
      // changes of this round are still applied.
      const f = registryWriteFailure(e, `expired config change notification ${path} not deleted`);
      if (f === null) throw e;
      this.logger[f.transient ? "warn" : "error"]({ path, reason: f.errorMessage }, "config change notification not purged");
    }
  }
}
