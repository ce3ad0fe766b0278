// Config entries as DescribeConfigs (and CreateTopics v5+) report them, worked out as Kafka's
// ConfigHelper does: for a topic, every topic key strand knows with its effective value, where
// that value comes from (a topic override, a dynamic broker value, server.properties, or Kafka's
// default) and the synonyms behind it; for a broker, every broker key strand reads.
//
// A topic key without an override takes its value from the broker key it is named after in
// Kafka's LogConfig (retention.ms ← log.retention.ms | log.retention.minutes | log.retention.hours,
// segment.bytes ← log.segment.bytes, max.message.bytes ← message.max.bytes, …): the first of those
// synonyms that has a value, converted to the topic key's unit. A broker key's value is this
// broker's dynamic one, else the cluster-wide dynamic default, else server.properties', else the
// default (dynamic_config.ts). The synonyms are listed as Kafka's ConfigHelper lists them: the
// topic override first, then every synonym set dynamically for this broker
// (DYNAMIC_BROKER_CONFIG), then for the cluster (DYNAMIC_DEFAULT_BROKER_CONFIG), then in
// server.properties (STATIC_BROKER_CONFIG), then every synonym with a default (DEFAULT_CONFIG).
// A broker key strand does not read yet counts with Kafka's default.

import { topicConfigChecks } from "../log/mod.ts";
import { brokerConfigKeys, type BrokerConfig, isListenerConnectionLimitKey, listenerConnectionLimitDef } from "./config.ts";
import { type DynamicValues, isDynamicBrokerKey, noDynamicValues } from "./dynamic_config.ts";

/** Where a config value comes from (Kafka's DescribeConfigsResponse.ConfigSource). */
export const ConfigSource = {
  UNKNOWN: 0,
  TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  DYNAMIC_BROKER_LOGGER_CONFIG: 6,
} as const;

/** A config's data type (Kafka's DescribeConfigsResponse.ConfigType). */
export const ConfigDataType = {
  UNKNOWN: 0,
  BOOLEAN: 1,
  STRING: 2,
  INT: 3,
  SHORT: 4,
  LONG: 5,
  DOUBLE: 6,
  LIST: 7,
  CLASS: 8,
  PASSWORD: 9,
} as const;

/** Config resource types (Kafka's ConfigResource.Type). */
export const ConfigResourceType = {
  UNKNOWN: 0,
  TOPIC: 2,
  BROKER: 4,
  BROKER_LOGGER: 8,
} as const;

export interface ConfigSynonym {
  name: string;
  value: string | null;
  source: number;
}

export interface ConfigEntry {
  name: string;
  value: string | null;
  readOnly: boolean;
  source: number;
  isSensitive: boolean;
  synonyms: ConfigSynonym[];
  configType: number;
  documentation: string | null;
}

interface BrokerSynonym {
  key: string;
  /** Kafka's default for the broker key, used while strand's BrokerConfig does not know it. */
  kafkaDefault: string | null;
  /** Milliseconds per unit when the broker key counts hours or minutes. */
  msPerUnit?: number;
}

interface TopicKeyDef {
  type: number;
  synonyms: BrokerSynonym[];
  /** The value of a key with no broker synonym (Kafka's CONFIGS_WITH_NO_SERVER_DEFAULTS). */
  topicDefault?: string;
  doc: string;
}

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
const LONG_MAX = "9223372036854775807";
const T = ConfigDataType;

/** Every topic key strand accepts, as Kafka's LogConfig and ServerTopicConfigSynonyms define it. */
export const topicConfigDefs: Record<string, TopicKeyDef> = {
  "cleanup.policy": {
    type: T.LIST,
    synonyms: [{ key: "log.cleanup.policy", kafkaDefault: "delete" }],
    doc: 'A string that is either "delete" or "compact" or both: how old log segments are retired. ' +
      '"delete" discards them once their retention time or size limit is reached; "compact" keeps the latest value of each key.',
  },
  "compression.gzip.level": {
    type: T.INT,
    synonyms: [{ key: "compression.gzip.level", kafkaDefault: "-1" }],
    doc: "The compression level to use if compression.type is set to gzip (1 to 9, or -1 for the codec's default).",
  },
  "compression.lz4.level": {
    type: T.INT,
    synonyms: [{ key: "compression.lz4.level", kafkaDefault: "9" }],
    doc: "The compression level to use if compression.type is set to lz4 (1 to 17).",
  },
  "compression.type": {
    type: T.STRING,
    synonyms: [{ key: "compression.type", kafkaDefault: "producer" }],
    doc: "The final compression type for the topic: uncompressed, gzip, snappy, lz4 or zstd, " +
      'or "producer" to keep the codec the producer chose.',
  },
  "compression.zstd.level": {
    type: T.INT,
    synonyms: [{ key: "compression.zstd.level", kafkaDefault: "3" }],
    doc: "The compression level to use if compression.type is set to zstd (-131072 to 22).",
  },
  "delete.retention.ms": {
    type: T.LONG,
    synonyms: [{ key: "log.cleaner.delete.retention.ms", kafkaDefault: "86400000" }],
    doc: "How long delete tombstones are kept on log compacted topics; a consumer must finish reading from offset 0 " +
      "within this time to see the final state of every key.",
  },
  "file.delete.delay.ms": {
    type: T.LONG,
    synonyms: [{ key: "log.segment.delete.delay.ms", kafkaDefault: "60000" }],
    doc: "The time to wait before deleting a file from the filesystem.",
  },
  "flush.messages": {
    type: T.LONG,
    synonyms: [{ key: "log.flush.interval.messages", kafkaDefault: LONG_MAX }],
    doc: "The number of messages written to a partition after which its log is fsynced.",
  },
  "flush.ms": {
    type: T.LONG,
    synonyms: [
      { key: "log.flush.interval.ms", kafkaDefault: null },
      { key: "log.flush.scheduler.interval.ms", kafkaDefault: LONG_MAX },
    ],
    doc: "The time after which a partition's log is fsynced.",
  },
  "follower.replication.throttled.replicas": {
    type: T.LIST,
    synonyms: [],
    topicDefault: "",
    doc: "The replicas whose replication is throttled on the follower side (follower.replication.throttled.rate), " +
      "as [PartitionId]:[BrokerId],[PartitionId]:[BrokerId],... or the wildcard '*' for every replica of the topic.",
  },
  "index.interval.bytes": {
    type: T.INT,
    synonyms: [{ key: "log.index.interval.bytes", kafkaDefault: "4096" }],
    doc: "How often an entry is added to the offset index: one every this many bytes of log.",
  },
  "leader.replication.throttled.replicas": {
    type: T.LIST,
    synonyms: [],
    topicDefault: "",
    doc: "The replicas whose replication is throttled on the leader side (leader.replication.throttled.rate), " +
      "as [PartitionId]:[BrokerId],[PartitionId]:[BrokerId],... or the wildcard '*' for every replica of the topic.",
  },
  "local.retention.bytes": {
    type: T.LONG,
    synonyms: [{ key: "log.local.retention.bytes", kafkaDefault: "-2" }],
    doc: "The most local log segments may hold for a partition before the oldest are deleted, with tiered storage; " +
      "-2 means retention.bytes. strand has no tiered storage: accepted and reported only.",
  },
  "local.retention.ms": {
    type: T.LONG,
    synonyms: [{ key: "log.local.retention.ms", kafkaDefault: "-2" }],
    doc: "How long a local log segment is kept before it is deleted, with tiered storage; -2 means retention.ms. " +
      "strand has no tiered storage: accepted and reported only.",
  },
  "max.compaction.lag.ms": {
    type: T.LONG,
    synonyms: [{ key: "log.cleaner.max.compaction.lag.ms", kafkaDefault: LONG_MAX }],
    doc: "The longest time a message stays ineligible for compaction in the log (compacted topics only).",
  },
  "max.message.bytes": {
    type: T.INT,
    synonyms: [{ key: "message.max.bytes", kafkaDefault: "1048588" }],
    doc: "The largest record batch size allowed by Kafka (after compression if compression is enabled).",
  },
  "message.downconversion.enable": {
    type: T.BOOLEAN,
    synonyms: [{ key: "log.message.downconversion.enable", kafkaDefault: "true" }],
    doc: "Whether down-conversion of message formats is enabled to satisfy consume requests from older clients; " +
      "when false, such requests are answered with UNSUPPORTED_VERSION.",
  },
  "message.format.version": {
    type: T.STRING,
    synonyms: [{ key: "log.message.format.version", kafkaDefault: "3.0-IV1" }],
    doc: "[DEPRECATED] The message format version the broker appends with. Always taken as 3.0 when " +
      "inter.broker.protocol.version is 3.0 or higher (the value is ignored); strand writes message format v2.",
  },
  "message.timestamp.after.max.ms": {
    type: T.LONG,
    synonyms: [{ key: "log.message.timestamp.after.max.ms", kafkaDefault: LONG_MAX }],
    doc: "The most a record's CreateTime timestamp may be ahead of the broker's clock; a record further ahead " +
      "is refused with INVALID_TIMESTAMP. Ignored with LogAppendTime.",
  },
  "message.timestamp.before.max.ms": {
    type: T.LONG,
    synonyms: [{ key: "log.message.timestamp.before.max.ms", kafkaDefault: LONG_MAX }],
    doc: "The most a record's CreateTime timestamp may be behind the broker's clock; an older record " +
      "is refused with INVALID_TIMESTAMP. Ignored with LogAppendTime.",
  },
  "message.timestamp.difference.max.ms": {
    type: T.LONG,
    synonyms: [{ key: "log.message.timestamp.difference.max.ms", kafkaDefault: LONG_MAX }],
    doc: "[DEPRECATED] The most a CreateTime timestamp may differ from the broker's clock, either way; used for " +
      "message.timestamp.before.max.ms and after.max.ms while they keep their default.",
  },
  "message.timestamp.type": {
    type: T.STRING,
    synonyms: [{ key: "log.message.timestamp.type", kafkaDefault: "CreateTime" }],
    doc: "Whether the timestamp in the message is message create time or log append time: CreateTime or LogAppendTime.",
  },
  "min.cleanable.dirty.ratio": {
    type: T.DOUBLE,
    synonyms: [{ key: "log.cleaner.min.cleanable.ratio", kafkaDefault: "0.5" }],
    doc: "The smallest share of the log that must be dirty (not yet compacted) before the cleaner compacts it.",
  },
  "min.compaction.lag.ms": {
    type: T.LONG,
    synonyms: [{ key: "log.cleaner.min.compaction.lag.ms", kafkaDefault: "0" }],
    doc: "The shortest time a message stays uncompacted in the log (compacted topics only).",
  },
  "min.insync.replicas": {
    type: T.INT,
    synonyms: [{ key: "min.insync.replicas", kafkaDefault: "1" }],
    doc: "When a producer sets acks to all (-1), the least number of replicas that must acknowledge a write for it to succeed.",
  },
  "preallocate": {
    type: T.BOOLEAN,
    synonyms: [{ key: "log.preallocate", kafkaDefault: "false" }],
    doc: "True if the file should be preallocated on disk when creating a new log segment.",
  },
  "remote.storage.enable": {
    type: T.BOOLEAN,
    synonyms: [],
    topicDefault: "false",
    doc: "To enable tiered storage for a topic, set this configuration as true. strand has no tiered storage: only false is accepted.",
  },
  "retention.bytes": {
    type: T.LONG,
    synonyms: [{ key: "log.retention.bytes", kafkaDefault: "-1" }],
    doc: 'The most a partition can grow to before old log segments are discarded (with the "delete" policy); -1 for no limit.',
  },
  "retention.ms": {
    type: T.LONG,
    synonyms: [
      { key: "log.retention.ms", kafkaDefault: null },
      { key: "log.retention.minutes", kafkaDefault: null, msPerUnit: MINUTE_MS },
      { key: "log.retention.hours", kafkaDefault: "168", msPerUnit: HOUR_MS },
    ],
    doc: 'The longest time a log is kept before old log segments are discarded (with the "delete" policy); -1 for no limit.',
  },
  "segment.bytes": {
    type: T.INT,
    synonyms: [{ key: "log.segment.bytes", kafkaDefault: "1073741824" }],
    doc: "The segment file size for the log: retention and cleaning are done a file at a time.",
  },
  "segment.index.bytes": {
    type: T.INT,
    synonyms: [{ key: "log.index.size.max.bytes", kafkaDefault: "10485760" }],
    doc: "The size of the index that maps offsets to file positions, preallocated and shrunk when the log rolls.",
  },
  "segment.jitter.ms": {
    type: T.LONG,
    synonyms: [
      { key: "log.roll.jitter.ms", kafkaDefault: null },
      { key: "log.roll.jitter.hours", kafkaDefault: "0", msPerUnit: HOUR_MS },
    ],
    doc: "The maximum random jitter subtracted from the scheduled segment roll time to avoid thundering herds of segment rolling.",
  },
  "segment.ms": {
    type: T.LONG,
    synonyms: [
      { key: "log.roll.ms", kafkaDefault: null },
      { key: "log.roll.hours", kafkaDefault: "168", msPerUnit: HOUR_MS },
    ],
    doc: "The time after which the log rolls to a new segment even if the current one is not full.",
  },
  "unclean.leader.election.enable": {
    type: T.BOOLEAN,
    synonyms: [{ key: "unclean.leader.election.enable", kafkaDefault: "false" }],
    doc: "Whether replicas not in the ISR may be elected leader as a last resort, even though that may lose data.",
  },
};

/** True for keys whose value is a comma-separated list (IncrementalAlterConfigs APPEND/SUBTRACT). */
export function isListTopicKey(key: string): boolean {
  return topicConfigDefs[key]?.type === ConfigDataType.LIST;
}

/** A broker key's default: strand's when its BrokerConfig knows the key, else Kafka's. */
function synonymDefault(s: BrokerSynonym): string | null {
  const known = brokerConfigKeys[s.key];
  return known !== undefined ? known.default : s.kafkaDefault;
}

/** A broker key's value as this broker runs with it: dynamic, else server.properties', else its default. */
function brokerValue(config: BrokerConfig, s: BrokerSynonym, dynamic: DynamicValues): string | null {
  return dynamic.perBroker.get(s.key) ?? dynamic.clusterDefault.get(s.key) ?? config.raw.get(s.key) ?? synonymDefault(s);
}

/** A broker value in the topic key's unit (hours and minutes to ms; a negative time is -1). */
function toTopicUnit(value: string, s: BrokerSynonym): string {
  if (s.msPerUnit === undefined || !/^-?\d+$/.test(value.trim())) return value;
  const ms = BigInt(value.trim()) * BigInt(s.msPerUnit);
  return ms < 0n ? "-1" : ms.toString();
}

/** Kafka shows a value as its type prints it: lists without blanks, everything trimmed. */
function normalize(key: string, value: string): string {
  return isListTopicKey(key) ? value.split(",").map((p) => p.trim()).filter((p) => p !== "").join(",") : value.trim();
}

/** The value a topic key has when the topic does not override it: the broker's default for it. */
export function topicDefaultValue(config: BrokerConfig, key: string, dynamic: DynamicValues = noDynamicValues): string | null {
  const def = topicConfigDefs[key];
  if (def === undefined) return null;
  for (const s of def.synonyms) {
    const v = brokerValue(config, s, dynamic);
    if (v !== null) return toTopicUnit(v, s);
  }
  return def.topicDefault ?? null;
}

/** The broker synonyms of a topic key, as Kafka lists them: dynamic (broker, cluster), static, then defaults. */
function brokerSynonyms(config: BrokerConfig, def: TopicKeyDef, dynamic: DynamicValues): ConfigSynonym[] {
  const out: ConfigSynonym[] = [];
  for (const s of def.synonyms) {
    const v = dynamic.perBroker.get(s.key);
    if (v !== undefined) out.push({ name: s.key, value: v, source: ConfigSource.DYNAMIC_BROKER_CONFIG });
  }
  for (const s of def.synonyms) {
    const v = dynamic.clusterDefault.get(s.key);
    if (v !== undefined) out.push({ name: s.key, value: v, source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG });
  }
  for (const s of def.synonyms) {
    if (config.configured.has(s.key)) out.push({ name: s.key, value: config.raw.get(s.key)!, source: ConfigSource.STATIC_BROKER_CONFIG });
  }
  for (const s of def.synonyms) {
    const d = synonymDefault(s);
    if (d !== null) out.push({ name: s.key, value: d, source: ConfigSource.DEFAULT_CONFIG });
  }
  return out;
}

/** One topic key's entry, given the topic's overrides. */
export function topicConfigEntry(
  config: BrokerConfig,
  overrides: Record<string, string>,
  key: string,
  dynamic: DynamicValues = noDynamicValues,
): ConfigEntry {
  const def = topicConfigDefs[key];
  const override = Object.hasOwn(overrides, key) ? overrides[key] : undefined;
  const synonyms: ConfigSynonym[] = def === undefined ? [] : brokerSynonyms(config, def, dynamic);
  if (override !== undefined) synonyms.unshift({ name: key, value: normalize(key, override), source: ConfigSource.TOPIC_CONFIG });
  return {
    name: key,
    value: override !== undefined ? normalize(key, override) : topicDefaultValue(config, key, dynamic),
    readOnly: false,
    source: synonyms[0]?.source ?? ConfigSource.DEFAULT_CONFIG,
    isSensitive: false,
    synonyms,
    configType: def?.type ?? ConfigDataType.UNKNOWN,
    documentation: def?.doc ?? null,
  };
}

/**
 * Every topic key strand knows, sorted by name, plus any other key the topic's stored overrides
 * hold (a topic first configured by Kafka's own tools may carry keys strand does not apply).
 */
export function describeTopicConfigs(
  config: BrokerConfig,
  overrides: Record<string, string>,
  dynamic: DynamicValues = noDynamicValues,
): ConfigEntry[] {
  const keys = new Set([...Object.keys(topicConfigChecks), ...Object.keys(overrides)]);
  return [...keys].sort().map((k) => topicConfigEntry(config, overrides, k, dynamic));
}

const brokerKindTypes: Record<string, number> = {
  int: T.INT,
  long: T.LONG,
  double: T.DOUBLE,
  bool: T.BOOLEAN,
  string: T.STRING,
  list: T.LIST,
  password: T.PASSWORD,
};

/**
 * The broker keys named after the same setting, in Kafka's order (KafkaConfig's synonyms): the
 * key itself, else the ms, minutes and hours forms of retention and roll time.
 */
const brokerKeySynonyms: Record<string, string[]> = {
  "log.retention.ms": ["log.retention.ms", "log.retention.minutes", "log.retention.hours"],
  "log.retention.minutes": ["log.retention.ms", "log.retention.minutes", "log.retention.hours"],
  "log.retention.hours": ["log.retention.ms", "log.retention.minutes", "log.retention.hours"],
  "log.roll.ms": ["log.roll.ms", "log.roll.hours"],
  "log.roll.hours": ["log.roll.ms", "log.roll.hours"],
  "log.flush.interval.ms": ["log.flush.interval.ms", "log.flush.scheduler.interval.ms"],
};

/**
 * One broker key's entry as Kafka's ConfigHelper.createBrokerConfigEntry builds it: synonyms from
 * this broker's dynamic values, the cluster's, server.properties and the defaults, in that order,
 * dropping those before the first that names the key itself; the source is the first synonym's.
 * The cluster-default resource ("") leaves out the per-broker values. A dynamic key is not
 * read-only; a password's value is never shown.
 */
function brokerConfigEntry(config: BrokerConfig, dynamic: DynamicValues, name: string, value: string | null, perBroker: boolean): ConfigEntry {
  const def = brokerConfigKeys[name] ?? (isListenerConnectionLimitKey(name) ? listenerConnectionLimitDef : undefined);
  const isSensitive = def?.kind === "password";
  const shown = (v: string | null) => (isSensitive ? null : v);
  // Kafka's brokerConfigSynonyms: a listener-prefixed key has its base key as a synonym.
  const names = brokerKeySynonyms[name] ?? (isListenerConnectionLimitKey(name) ? [name, name.replace(/^listener\.name\.[^.]*\./, "")] : [name]);
  const all: ConfigSynonym[] = [];
  const add = (get: (k: string) => string | null | undefined, source: number) => {
    for (const k of names) {
      const v = get(k);
      if (v !== undefined && v !== null) all.push({ name: k, value: shown(v), source });
    }
  };
  if (perBroker) add((k) => dynamic.perBroker.get(k), ConfigSource.DYNAMIC_BROKER_CONFIG);
  add((k) => dynamic.clusterDefault.get(k), ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
  add((k) => (config.configured.has(k) ? config.raw.get(k) : undefined), ConfigSource.STATIC_BROKER_CONFIG);
  add((k) => brokerConfigKeys[k]?.default, ConfigSource.DEFAULT_CONFIG);
  const first = all.findIndex((x) => x.name === name);
  const synonyms = first < 0 ? [] : all.slice(first);
  return {
    name,
    value: shown(value),
    readOnly: !isDynamicBrokerKey(name),
    source: synonyms[0]?.source ?? ConfigSource.DEFAULT_CONFIG,
    isSensitive,
    synonyms,
    configType: def === undefined ? T.UNKNOWN : brokerKindTypes[def.kind] ?? T.UNKNOWN,
    documentation: null,
  };
}

/**
 * Every broker key strand reads, sorted by name, as this broker runs with it: a dynamic value
 * (DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG), else server.properties'
 * (STATIC_BROKER_CONFIG), else its default (DEFAULT_CONFIG).
 */
export function describeBrokerConfigs(config: BrokerConfig, dynamic: DynamicValues = noDynamicValues): ConfigEntry[] {
  // The per-listener connection limits that are set somewhere (Kafka lists the keys given, static or dynamic).
  const listenerKeys = [...config.configured, ...dynamic.perBroker.keys(), ...dynamic.clusterDefault.keys()].filter(isListenerConnectionLimitKey);
  const keyed = [...new Set([...Object.keys(brokerConfigKeys), ...listenerKeys])].map((name) => {
    const value = dynamic.perBroker.get(name) ?? dynamic.clusterDefault.get(name) ?? config.raw.get(name) ?? null;
    return brokerConfigEntry(config, dynamic, name, value, true);
  });
  return [...keyed, ...securityConfigEntries(config)].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The plain ssl.* keys with the value strand runs with when unset (the keystore and truststore
 * types are PEM, the only one strand reads, where Kafka's default is JKS).
 */
const sslDefaults: Record<string, string | null> = {
  "ssl.cipher.suites": null,
  "ssl.client.auth": "none",
  "ssl.enabled.protocols": "TLSv1.2,TLSv1.3",
  "ssl.endpoint.identification.algorithm": "https",
  "ssl.key.password": null,
  "ssl.keystore.certificate.chain": null,
  "ssl.keystore.key": null,
  "ssl.keystore.location": null,
  "ssl.keystore.password": null,
  "ssl.keystore.type": "PEM",
  "ssl.principal.mapping.rules": "DEFAULT",
  "ssl.protocol": "TLSv1.3",
  "ssl.truststore.certificates": null,
  "ssl.truststore.location": null,
  "ssl.truststore.password": null,
  "ssl.truststore.type": "PEM",
};

/** Kafka's PASSWORD-typed security keys: reported, never with their value. */
const sensitiveSecurityKey = /(\.password|ssl\.keystore\.key|ssl\.keystore\.certificate\.chain|ssl\.truststore\.certificates|\.sasl\.jaas\.config)$/;

/**
 * The security keys kept outside the key table (they hold keys and passwords): every plain ssl.*
 * key, and each listener-prefixed one that is set, as Kafka's DescribeConfigs lists them, static
 * and read-only (strand reloads certificate files on change instead of taking them through
 * AlterConfigs); a secret's value is null and isSensitive set.
 */
function securityConfigEntries(config: BrokerConfig): ConfigEntry[] {
  const names = new Set([...Object.keys(sslDefaults), ...config.securityInput.keys()]);
  return [...names].map((name) => {
    const isSensitive = sensitiveSecurityKey.test(name);
    const given = config.securityInput.get(name);
    const value = given ?? sslDefaults[name] ?? null;
    const source = given !== undefined ? ConfigSource.STATIC_BROKER_CONFIG : ConfigSource.DEFAULT_CONFIG;
    const shown = isSensitive ? null : value;
    return {
      name,
      value: shown,
      readOnly: true,
      source,
      isSensitive,
      synonyms: value === null ? [] : [{ name, value: shown, source }],
      configType: isSensitive ? T.PASSWORD : /cipher\.suites|enabled\.protocols|principal\.mapping/.test(name) ? T.LIST : T.STRING,
      documentation: null,
    };
  });
}

/** The cluster-wide dynamic defaults (the "" broker resource): only the keys set there, as Kafka answers. */
export function describeClusterDefaultConfigs(config: BrokerConfig, dynamic: DynamicValues): ConfigEntry[] {
  return [...dynamic.clusterDefault.keys()].sort().map((name) => brokerConfigEntry(config, dynamic, name, dynamic.clusterDefault.get(name)!, false));
}

/** Null when a broker resource names this broker (or "" for cluster defaults), else why not (Kafka's wording). */
export function brokerResourceError(name: string, brokerId: number): string | null {
  if (name === "") return null;
  if (!/^-?\d{1,10}$/.test(name)) return `Broker id must be an integer, but it is: ${name}`;
  if (Number(name) !== brokerId) return `Unexpected broker id, expected ${brokerId} or empty string, but received ${name}`;
  return null;
}

/** The (type, name) pairs that appear more than once in a request, as "type/name" keys. */
export function duplicateResources(resources: { resourceType: number; resourceName: string }[]): Set<string> {
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const r of resources) {
    const k = resourceKey(r);
    if (seen.has(k)) dup.add(k);
    seen.add(k);
  }
  return dup;
}

export function resourceKey(r: { resourceType: number; resourceName: string }): string {
  return `${r.resourceType}/${r.resourceName}`;
}
