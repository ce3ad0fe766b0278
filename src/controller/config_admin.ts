// ZkConfigAdmin: reads and changes topic config overrides as Kafka's AdminZkClient does (any
// broker may; brokers learn of a change through the notification):
//
//   /config/topics/<t>                          {"version":1,"config":{"retention.ms":"1000"}}
//   /config/changes/config_change_<10 digits>   {"version":2,"entity_path":"topics/<t>"}
//
// A change reads the node, computes the new overrides, validates the keys whose value is new
// (so a key some other tool stored earlier does not block every later change), and writes in one
// multi: the topic must still exist, the config node must still be at the version read, and the
// notification is created with it. When another writer got in between, the change starts over.

import { checkTopicConfig, checkTopicConfigSet } from "../log/mod.ts";
import {
  ConfigEntityChangeNotificationSequenceZNode,
  ConfigEntityZNode,
  ConfigType,
  type Op,
  type Registry,
  RegistryError,
  TopicZNode,
} from "../registry/mod.ts";
import { configWriteAttemptsMax, ErrorCode, type Logger, silentLogger } from "../util/mod.ts";
import { logRegistryWriteFailure, registryWriteFailure } from "./registry_failure.ts";
import type { TopicOutcome } from "./topic_admin.ts";
import { topicNameError } from "./topic_names.ts";
import { readTopicConfigVersioned, type VersionedTopicConfig } from "./zk_reads.ts";

export type { VersionedTopicConfig };

/** The new overrides computed from the current ones, or why the change is refused. */
export type ConfigChange = { configs: Record<string, string> } | { error: TopicOutcome };

export interface ConfigAdmin {
  /** The topic's stored overrides, or null when there is no such topic. */
  topicOverrides(topic: string): Promise<Record<string, string> | null>;
  /** The topic's stored overrides with the zxid they were read at. */
  readTopicConfig(topic: string): Promise<VersionedTopicConfig>;
  /** Applies `change` to the topic's overrides; validateOnly checks without writing. */
  alterTopicConfig(topic: string, change: (current: Record<string, string>) => ConfigChange, validateOnly: boolean): Promise<TopicOutcome>;
}

const ok: TopicOutcome = { errorCode: ErrorCode.NONE, errorMessage: null };
const fail = (errorCode: number, errorMessage: string): TopicOutcome => ({ errorCode, errorMessage });
const unknownTopic = (topic: string) => fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic ${topic} does not exist.`);

/** The entity path a change notification names for a topic (topic names need no escaping). */
export function topicEntityPath(topic: string): string {
  return `${ConfigType.Topic}/${topic}`;
}

export class ZkConfigAdmin implements ConfigAdmin {
  constructor(private readonly registry: Registry, private readonly logger: Logger = silentLogger) {}

  async topicOverrides(topic: string): Promise<Record<string, string> | null> {
    if (topicNameError(topic) !== null) return null;
    if ((await this.registry.exists(TopicZNode.path(topic))) === null) return null;
    return (await readTopicConfigVersioned(this.registry, topic)).configs;
  }

  readTopicConfig(topic: string): Promise<VersionedTopicConfig> {
    return readTopicConfigVersioned(this.registry, topic);
  }

  async alterTopicConfig(
    topic: string,
    change: (current: Record<string, string>) => ConfigChange,
    validateOnly: boolean,
  ): Promise<TopicOutcome> {
    const nameError = topicNameError(topic);
    if (nameError !== null) return fail(ErrorCode.INVALID_TOPIC_EXCEPTION, nameError);
    for (let attempt = 0; attempt < configWriteAttemptsMax; attempt++) {
      if ((await this.registry.exists(TopicZNode.path(topic))) === null) return unknownTopic(topic);
      const current = await readTopicConfigVersioned(this.registry, topic);
      const next = change({ ...current.configs });
      if ("error" in next) return next.error;
      for (const [key, value] of Object.entries(next.configs)) {
        if (Object.hasOwn(current.configs, key) && current.configs[key] === value) continue;
        const why = checkTopicConfig(key, value);
        if (why !== null) return fail(ErrorCode.INVALID_CONFIG, why);
      }
      const inconsistent = checkTopicConfigSet(next.configs);
      if (inconsistent !== null) return fail(ErrorCode.INVALID_CONFIG, inconsistent);
      if (validateOnly) return ok;
      try {
        await this.registry.multi(this.writeOps(topic, current, next.configs));
        return ok;
      } catch (e) {
        if (!(e instanceof RegistryError)) throw e;
        if (e.code === "NoNode" && e.path === TopicZNode.path(topic)) return unknownTopic(topic);
        // Someone else changed (or created, or removed) the config node since it was read.
        if (e.code === "BadVersion" || e.code === "NodeExists" || e.code === "NoNode") continue;
        // The disk is full: neither the config nor its notification was written (one multi).
        const f = registryWriteFailure(e, `The config of topic ${topic} was not changed`);
        if (f === null) throw e;
        logRegistryWriteFailure(this.logger, f, { topic });
        return fail(f.errorCode, f.errorMessage);
      }
    }
    return fail(ErrorCode.UNKNOWN_SERVER_ERROR, `the config of topic ${topic} kept changing under this request; try again`);
  }

  private writeOps(topic: string, current: VersionedTopicConfig, configs: Record<string, string>): Op[] {
    const path = ConfigEntityZNode.path(ConfigType.Topic, topic);
    const data = ConfigEntityZNode.encode(new Map(Object.entries(configs)));
    return [
      { op: "check", path: TopicZNode.path(topic), version: -1 },
      current.exists ? { op: "setData", path, data, version: current.version } : { op: "create", path, data },
      {
        op: "create",
        path: ConfigEntityChangeNotificationSequenceZNode.createPath,
        data: ConfigEntityChangeNotificationSequenceZNode.encode(topicEntityPath(topic)),
        mode: "persistent-sequential",
      },
    ];
  }
}
