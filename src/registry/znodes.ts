// Every znode of Kafka's ZooKeeper layout, one object per znode, as Kafka's ZkData.scala (3.x)
// has them: `path(...)`, and where the node carries data, `encode(...)` and `decode(bytes)`. The
// JSON field names, their spelling and the `version` numbers are Kafka's, so zkCli.sh shows an
// operator what Kafka would have written and a Kafka tool reading the tree understands it.
//
// Invariants:
// - Encoders write what Kafka 3.x writes (field order as Kafka's output shows it, for familiar
//   reading; parsers do not care about order).
// - Decoders never throw on foreign content: malformed bytes, bad JSON, a missing or mistyped
//   field all give null. Unknown extra fields are ignored, as Jackson in Kafka ignores them.
// - Integers decoded from JSON are checked to be int32 (broker ids, epochs, partitions);
//   64-bit values (offsets, producer ids) are decimal strings or text, decoded to bigint.
// - Path builders take names already validated by the caller (topic names never contain "/").
// The ACL nodes are in znodes_acl.ts and the JSON helpers in znodes_json.ts, to keep each file
// readable at once; mod.ts exports both node files.

import { assert, TimeSlice, uuidFromBase64, uuidToBase64 } from "../util/mod.ts";
import type { Registry, Stat } from "./types.ts";
import {
  textEncoder,
  int32Max,
  text,
  isObject,
  parseObject,
  jsonBytes,
  isInt32,
  int32Array,
  partitionKey,
  int32Text,
  int64Text,
  topicPartitions,
  checkTopicName,
  empty,
  type Json,
} from "./znodes_json.ts";

// ---------------------------------------------------------------------------------------------
// Shared shapes, named as Kafka names them

export interface TopicPartition {
  topic: string;
  partition: number;
}

/** One advertised listener: `LISTENER_NAME://host:port`. */
export interface EndPoint {
  listenerName: string;
  securityProtocol: string;
  /** Null when the listener binds every interface (Kafka writes "LISTENER://:port"). */
  host: string | null;
  port: number;
}

/** Supported feature version ranges, as `{"name":{"min_version":1,"max_version":3}}`. */
export type Features = Record<string, Record<string, number>>;

export const ZkVersion = {
  /** In a conditional setData or delete, matches any version (ZooKeeper's -1). */
  MatchAnyVersion: -1,
  /** Kafka's marker for "the node does not exist"; never a real version. */
  UnknownVersion: -2,
} as const;

// ---------------------------------------------------------------------------------------------
// /controller, /controller_epoch

export interface ZkControllerRegistration {
  broker: number;
  /** As written (-1 from a ZooKeeper-mode controller); null when the field is absent (version 1). */
  kraftEpoch: number | null;
  zkVersion: number;
}

/** Ephemeral; its owner is the active controller. Kafka 3.x writes version 2. */
export const ControllerZNode = {
  path: "/controller",
  encode(brokerId: number, timestampMs: number, kraftControllerEpoch = -1): Uint8Array {
    return jsonBytes({
      version: 2,
      brokerid: brokerId,
      timestamp: String(timestampMs),
      kraftControllerEpoch,
    });
  },
  /** The controller's broker id. */
  decode(bytes: Uint8Array): number | null {
    return ControllerZNode.decodeController(bytes, ZkVersion.UnknownVersion)?.broker ?? null;
  },
  decodeController(bytes: Uint8Array, zkVersion: number): ZkControllerRegistration | null {
    const js = parseObject(bytes);
    if (js === null || !isInt32(js.brokerid)) return null;
    const kraft = js.kraftControllerEpoch;
    if (kraft !== undefined && !isInt32(kraft)) return null;
    return { broker: js.brokerid, kraftEpoch: kraft === undefined ? null : kraft, zkVersion };
  },
};

/** The controller epoch as plain decimal text; its znode version fences stale controllers. */
export const ControllerEpochZNode = {
  path: "/controller_epoch",
  encode(epoch: number): Uint8Array {
    return textEncoder.encode(String(epoch));
  },
  decode(bytes: Uint8Array): number | null {
    return int32Text(bytes);
  },
};

// ---------------------------------------------------------------------------------------------
// /brokers

export const BrokersZNode = { path: "/brokers" };
export const BrokerIdsZNode = { path: "/brokers/ids" };
/** Kafka bumps this node's version to hand out broker ids when broker.id.generation is on. */
export const BrokerSequenceIdZNode = { path: "/brokers/seqid" };

export interface BrokerInfo {
  id: number;
  version: number;
  endpoints: EndPoint[];
  rack: string | null;
  jmxPort: number;
  /** Registration time; Kafka writes it but never reads it back. */
  timestampMs: number | null;
  features: Features;
}

/** Kafka's default listener name → security protocol map, used when a registration has none. */
const defaultSecurityProtocolMap: Record<string, string> = {
  PLAINTEXT: "PLAINTEXT",
  SSL: "SSL",
  SASL_PLAINTEXT: "SASL_PLAINTEXT",
  SASL_SSL: "SASL_SSL",
};

/** Kafka's EndPoint.connectionString: IPv6 hosts in brackets, a null host as nothing. */
export function endPointConnectionString(e: EndPoint): string {
  const host = e.host === null ? "" : e.host.includes(":") ? `[${e.host}]` : e.host;
  return `${e.listenerName}://${host}:${e.port}`;
}

/** Parses `NAME://host:port` (Kafka's uriParseExp), or null. */
export function parseEndPoint(s: string, protocols: Record<string, string>): EndPoint | null {
  const m = /^(.*):\/\/\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$/.exec(s);
  if (m === null) return null;
  const listenerName = m[1];
  const securityProtocol = Object.hasOwn(protocols, listenerName) ? protocols[listenerName] : undefined;
  const port = Number(m[3]);
  if (typeof securityProtocol !== "string" || !isInt32(port)) return null;
  return { listenerName, securityProtocol, host: m[2] === "" ? null : m[2], port };
}

/** Ephemeral: a live broker's registration. Kafka 2.7+ writes version 5. */
export const BrokerIdZNode = {
  currentVersion: 5,
  path(id: number): string {
    return `${BrokerIdsZNode.path}/${id}`;
  },
  encode(
    broker: { endpoints: EndPoint[]; rack?: string | null; jmxPort?: number; features?: Features },
    timestampMs: number,
  ): Uint8Array {
    // Old clients read only host and port: the first PLAINTEXT endpoint, else an empty one.
    const plaintext = broker.endpoints.find((e) => e.securityProtocol === "PLAINTEXT");
    const protocolMap: Record<string, string> = {};
    for (const e of broker.endpoints) protocolMap[e.listenerName] = e.securityProtocol;
    const json: Json = {
      features: broker.features ?? {},
      listener_security_protocol_map: protocolMap,
      endpoints: broker.endpoints.map(endPointConnectionString),
      jmx_port: broker.jmxPort ?? -1,
      port: plaintext?.port ?? -1,
      host: plaintext?.host ?? null,
      version: BrokerIdZNode.currentVersion,
      timestamp: String(timestampMs),
    };
    // Kafka writes "rack" only when the broker has one.
    if (broker.rack !== undefined && broker.rack !== null) json.rack = broker.rack;
    return jsonBytes(json);
  },
  decode(id: number, bytes: Uint8Array): BrokerInfo | null {
    const js = parseObject(bytes);
    if (js === null || !isInt32(js.version) || js.version < 1) return null;
    const jmxPort = js.jmx_port === undefined ? -1 : js.jmx_port;
    if (!isInt32(jmxPort)) return null;
    const endpoints = js.version === 1 ? brokerV1EndPoints(js) : brokerEndPoints(js);
    if (endpoints === null) return null;
    const rack = js.rack ?? null;
    if (rack !== null && typeof rack !== "string") return null;
    const features = js.features ?? {};
    if (!isFeatures(features)) return null;
    const timestamp = int64Text(js.timestamp);
    return {
      id,
      version: js.version,
      endpoints,
      rack,
      jmxPort,
      timestampMs: timestamp === null ? null : Number(timestamp),
      features,
    };
  },
};

function brokerV1EndPoints(js: Json): EndPoint[] | null {
  if (typeof js.host !== "string" || !isInt32(js.port)) return null;
  return [{ listenerName: "PLAINTEXT", securityProtocol: "PLAINTEXT", host: js.host, port: js.port }];
}

function brokerEndPoints(js: Json): EndPoint[] | null {
  const map = js.listener_security_protocol_map ?? defaultSecurityProtocolMap;
  if (!isObject(map) || !Object.values(map).every((v) => typeof v === "string")) return null;
  if (!Array.isArray(js.endpoints)) return null;
  const out: EndPoint[] = [];
  for (const s of js.endpoints) {
    const e = typeof s === "string" ? parseEndPoint(s, map as Record<string, string>) : null;
    if (e === null) return null;
    out.push(e);
  }
  return out;
}

function isFeatures(v: unknown): v is Features {
  return isObject(v) && Object.values(v).every((r) => isObject(r) && Object.values(r).every(isInt32));
}

// ---------------------------------------------------------------------------------------------
// /brokers/topics

export const TopicsZNode = { path: "/brokers/topics" };

/** A partition's replicas; during a reassignment `replicas` holds both old and new ones. */
export interface ReplicaAssignment {
  replicas: number[];
  addingReplicas: number[];
  removingReplicas: number[];
}

export interface TopicIdReplicaAssignment {
  topic: string;
  /** 16 bytes; null for topics created before Kafka 2.8 gave them ids. */
  topicId: Uint8Array | null;
  assignment: Map<number, ReplicaAssignment>;
}

/** A topic's partition → replicas assignment and its id. Kafka 3.x writes version 3. */
export const TopicZNode = {
  path(topic: string): string {
    checkTopicName(topic);
    return `${TopicsZNode.path}/${topic}`;
  },
  encode(topicId: Uint8Array | null, assignment: ReadonlyMap<number, ReplicaAssignment>): Uint8Array {
    return drain(topicEncodeSteps(topicId, assignment));
  },
  /**
   * encode(), byte for byte, giving the event loop back (slice) between pieces: the znode of a
   * topic of 10,000 partitions took tens of ms to build in one piece.
   */
  encodeGradually(topicId: Uint8Array | null, assignment: ReadonlyMap<number, ReplicaAssignment>, slice = new TimeSlice()): Promise<Uint8Array> {
    return drainGradually(topicEncodeSteps(topicId, assignment), slice);
  },
  decode(topic: string, bytes: Uint8Array): TopicIdReplicaAssignment | null {
    return drain(topicDecodeSteps(topic, bytes));
  },
  /** decode(), giving the event loop back (slice) between pieces (see encodeGradually). */
  decodeGradually(topic: string, bytes: Uint8Array, slice = new TimeSlice()): Promise<TopicIdReplicaAssignment | null> {
    return drainGradually(topicDecodeSteps(topic, bytes), slice);
  },
};

/** Partitions handled between two checks of the time slice. */
const stepPartitions = 256;

/** Runs a steps generator to its end at once. */
function drain<T>(steps: Generator<void, T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Runs a steps generator, giving the loop back whenever the slice is used up. */
async function drainGradually<T>(steps: Generator<void, T>, slice: TimeSlice): Promise<T> {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await slice.yield();
  }
}

/**
 * The topic znode's JSON, as JSON.stringify of {partitions, topic_id, adding_replicas,
 * removing_replicas, version} writes it: integer keys in ascending order, so the pieces are
 * made in that order too.
 */
function* topicEncodeSteps(topicId: Uint8Array | null, assignment: ReadonlyMap<number, ReplicaAssignment>): Generator<void, Uint8Array> {
  const order = [...assignment.keys()].sort((a, b) => a - b);
  const parts = { partitions: [] as string[], adding: [] as string[], removing: [] as string[] };
  for (let i = 0; i < order.length; i++) {
    const partition = order[i];
    const a = assignment.get(partition)!;
    parts.partitions.push(`"${partition}":${JSON.stringify(a.replicas)}`);
    if (a.addingReplicas.length > 0) parts.adding.push(`"${partition}":${JSON.stringify(a.addingReplicas)}`);
    if (a.removingReplicas.length > 0) parts.removing.push(`"${partition}":${JSON.stringify(a.removingReplicas)}`);
    if (i % stepPartitions === stepPartitions - 1) yield;
  }
  const id = topicId === null ? "" : `"topic_id":${JSON.stringify(uuidToBase64(topicId))},`;
  const text = `{"partitions":{${parts.partitions.join(",")}},${id}"adding_replicas":{${parts.adding.join(",")}},` +
    `"removing_replicas":{${parts.removing.join(",")}},"version":3}`;
  yield;
  return textEncoder.encode(text);
}

function* topicDecodeSteps(topic: string, bytes: Uint8Array): Generator<void, TopicIdReplicaAssignment | null> {
  const js = parseObject(bytes);
  if (js === null) return null;
  yield;
  let topicId: Uint8Array | null = null;
  if (js.topic_id !== undefined) {
    topicId = typeof js.topic_id === "string" ? uuidFromBase64(js.topic_id) : null;
    if (topicId === null) return null;
  }
  const partitions = yield* replicasByPartitionSteps(js.partitions ?? {});
  const adding = yield* replicasByPartitionSteps(js.adding_replicas ?? {});
  const removing = yield* replicasByPartitionSteps(js.removing_replicas ?? {});
  if (partitions === null || adding === null || removing === null) return null;
  const assignment = new Map<number, ReplicaAssignment>();
  const sorted = [...partitions].sort((a, b) => a[0] - b[0]);
  yield;
  for (let i = 0; i < sorted.length; i++) {
    const [partition, replicas] = sorted[i];
    assignment.set(partition, {
      replicas,
      addingReplicas: adding.get(partition) ?? [],
      removingReplicas: removing.get(partition) ?? [],
    });
    if (i % stepPartitions === stepPartitions - 1) yield;
  }
  return { topic, topicId, assignment };
}

function* replicasByPartitionSteps(v: unknown): Generator<void, Map<number, number[]> | null> {
  if (!isObject(v)) return null;
  const out = new Map<number, number[]>();
  let n = 0;
  for (const key in v) {
    if (!Object.hasOwn(v, key)) continue;
    const partition = partitionKey(key);
    const replicas = int32Array(v[key]);
    if (partition === null || replicas === null) return null;
    out.set(partition, replicas);
    if (++n % stepPartitions === 0) yield;
  }
  return out;
}

export const TopicPartitionsZNode = {
  path(topic: string): string {
    return `${TopicZNode.path(topic)}/partitions`;
  },
};

export const TopicPartitionZNode = {
  path(topic: string, partition: number): string {
    return `${TopicPartitionsZNode.path(topic)}/${partition}`;
  },
};

export const LeaderRecoveryState = {
  RECOVERED: 0,
  /** After an unclean election, until the new leader has truncated and settled. */
  RECOVERING: 1,
} as const;

export interface LeaderAndIsr {
  /** -1 when the partition has no leader. */
  leader: number;
  leaderEpoch: number;
  isr: number[];
  leaderRecoveryState: number;
  /** The state znode's version (Kafka's zkVersion): the partition epoch that fences updates. */
  partitionEpoch: number;
}

export interface LeaderIsrAndControllerEpoch {
  leaderAndIsr: LeaderAndIsr;
  controllerEpoch: number;
}

/** A partition's leader, ISR and the epochs that wrote them. Version 1. */
export const TopicPartitionStateZNode = {
  path(topic: string, partition: number): string {
    return `${TopicPartitionZNode.path(topic, partition)}/state`;
  },
  encode(state: { leaderAndIsr: Omit<LeaderAndIsr, "partitionEpoch">; controllerEpoch: number }): Uint8Array {
    const l = state.leaderAndIsr;
    const json: Json = {
      controller_epoch: state.controllerEpoch,
      leader: l.leader,
      version: 1,
      leader_epoch: l.leaderEpoch,
      isr: l.isr,
    };
    // Kafka adds the field only when it is not the default, so older readers keep working.
    if (l.leaderRecoveryState !== LeaderRecoveryState.RECOVERED) {
      json.leader_recovery_state = l.leaderRecoveryState;
    }
    return jsonBytes(json);
  },
  decode(bytes: Uint8Array, stat: Pick<Stat, "version">): LeaderIsrAndControllerEpoch | null {
    const js = parseObject(bytes);
    if (js === null) return null;
    const isr = int32Array(js.isr);
    const recovery = js.leader_recovery_state ?? LeaderRecoveryState.RECOVERED;
    if (!isInt32(js.leader) || !isInt32(js.leader_epoch) || !isInt32(js.controller_epoch) || isr === null) {
      return null;
    }
    if (recovery !== LeaderRecoveryState.RECOVERED && recovery !== LeaderRecoveryState.RECOVERING) {
      return null;
    }
    return {
      leaderAndIsr: {
        leader: js.leader,
        leaderEpoch: js.leader_epoch,
        isr,
        leaderRecoveryState: recovery,
        partitionEpoch: stat.version,
      },
      controllerEpoch: js.controller_epoch,
    };
  },
};

// ---------------------------------------------------------------------------------------------
// /config

export const ConfigZNode = { path: "/config" };

/** Entity types with config nodes in ZooKeeper (Kafka's ConfigType; client-metrics is KRaft-only). */
export const ConfigType = {
  Topic: "topics",
  Client: "clients",
  User: "users",
  Broker: "brokers",
  Ip: "ips",
} as const;

/** The entity name of cluster-wide defaults, e.g. /config/brokers/<default>. */
export const ConfigEntityName = { Default: "<default>" } as const;

export const ConfigEntityTypeZNode = {
  path(entityType: string): string {
    return `${ConfigZNode.path}/${entityType}`;
  },
};

/** An entity's dynamic config overrides: `{"version":1,"config":{"key":"value"}}`. */
export const ConfigEntityZNode = {
  path(entityType: string, entityName: string): string {
    return `${ConfigEntityTypeZNode.path(entityType)}/${entityName}`;
  },
  encode(config: ReadonlyMap<string, string>): Uint8Array {
    return jsonBytes({ version: 1, config: Object.fromEntries(config) });
  },
  /** The overrides; an empty node (as tools create) or one without "config" has none. */
  decode(bytes: Uint8Array): Map<string, string> | null {
    if (bytes.length === 0) return new Map();
    const js = parseObject(bytes);
    if (js === null) return null;
    const config = js.config ?? {};
    if (!isObject(config)) return null;
    const out = new Map<string, string>();
    for (const [k, v] of Object.entries(config)) {
      if (typeof v !== "string") return null;
      out.set(k, v);
    }
    return out;
  },
};

/**
 * Client quota entities (Kafka's ZooKeeper layout, KIP-55): `/config/users/<user>`,
 * `/config/clients/<client-id>` and `/config/users/<user>/clients/<client-id>`, each an ordinary
 * config node (ConfigEntityZNode's payload) holding producer_byte_rate, consumer_byte_rate,
 * request_percentage. Names are sanitized (Kafka's Sanitizer); "<default>" names the default
 * entity. A user's node also holds that user's SCRAM credentials.
 */
export const ClientQuotaEntityZNode = {
  /** The entity path of sanitized names ("users/<u>", "clients/<c>", "users/<u>/clients/<c>"); null: that part absent. */
  entityPath(sanitizedUser: string | null, sanitizedClientId: string | null): string {
    if (sanitizedUser !== null && sanitizedClientId !== null) return `${ConfigType.User}/${sanitizedUser}/${ConfigType.Client}/${sanitizedClientId}`;
    if (sanitizedUser !== null) return `${ConfigType.User}/${sanitizedUser}`;
    assert(sanitizedClientId !== null, "a quota entity names a user, a client id, or both");
    return `${ConfigType.Client}/${sanitizedClientId}`;
  },
  path(entityPath: string): string {
    return `${ConfigZNode.path}/${entityPath}`;
  },
  /** The parent of a user's per-client nodes: /config/users/<u>/clients. */
  userClientsPath(sanitizedUser: string): string {
    return `${ConfigEntityZNode.path(ConfigType.User, sanitizedUser)}/${ConfigType.Client}`;
  },
};

export const ConfigEntityChangeNotificationZNode = { path: "/config/changes" };

/** Persistent-sequential `config_change_NNNNNNNNNN`: tells brokers to reload an entity's config. */
export const ConfigEntityChangeNotificationSequenceZNode = {
  SequenceNumberPrefix: "config_change_",
  createPath: "/config/changes/config_change_",
  /** sanitizedEntityPath: "topics/<t>", "brokers/<id>", "users/<u>/clients/<c>". */
  encode(sanitizedEntityPath: string): Uint8Array {
    return jsonBytes({ version: 2, entity_path: sanitizedEntityPath });
  },
  /** The entity path; version 1 nodes ({"entity_type","entity_name"}) are read too. */
  decode(bytes: Uint8Array): string | null {
    const js = parseObject(bytes);
    if (js === null) return null;
    if (js.version === 2) return typeof js.entity_path === "string" ? js.entity_path : null;
    if (js.version === 1 && typeof js.entity_type === "string" && typeof js.entity_name === "string") {
      return `${js.entity_type}/${js.entity_name}`;
    }
    return null;
  },
};

// ---------------------------------------------------------------------------------------------
// Notifications

export const IsrChangeNotificationZNode = { path: "/isr_change_notification" };

function sequenceNumberOf(path: string, prefix: string): string {
  return path.substring(path.lastIndexOf(prefix) + prefix.length);
}

/** Persistent-sequential `isr_change_NNNNNNNNNN`: partitions whose ISR a leader changed. */
export const IsrChangeNotificationSequenceZNode = {
  SequenceNumberPrefix: "isr_change_",
  path(sequenceNumber = ""): string {
    return `${IsrChangeNotificationZNode.path}/isr_change_${sequenceNumber}`;
  },
  encode(partitions: Iterable<TopicPartition>): Uint8Array {
    const list = [...partitions].map((tp) => ({ topic: tp.topic, partition: tp.partition }));
    return jsonBytes({ version: 1, partitions: list });
  },
  decode(bytes: Uint8Array): TopicPartition[] | null {
    const js = parseObject(bytes);
    return js === null ? null : topicPartitions(js.partitions);
  },
  sequenceNumber(path: string): string {
    return sequenceNumberOf(path, "isr_change_");
  },
};

export const LogDirEventNotificationZNode = { path: "/log_dir_event_notification" };

/** Persistent-sequential `log_dir_event_NNNNNNNNNN`: a broker lost a log dir. */
export const LogDirEventNotificationSequenceZNode = {
  SequenceNumberPrefix: "log_dir_event_",
  LogDirFailureEvent: 1,
  path(sequenceNumber = ""): string {
    return `${LogDirEventNotificationZNode.path}/log_dir_event_${sequenceNumber}`;
  },
  encode(brokerId: number): Uint8Array {
    return jsonBytes({ version: 1, broker: brokerId, event: 1 });
  },
  /** The broker id. */
  decode(bytes: Uint8Array): number | null {
    const js = parseObject(bytes);
    return js !== null && isInt32(js.broker) ? js.broker : null;
  },
  sequenceNumber(path: string): string {
    return sequenceNumberOf(path, "log_dir_event_");
  },
};

// ---------------------------------------------------------------------------------------------
// /strand: strand's own, beside Kafka's layout (Kafka neither reads nor writes it)

/**
 * Ephemeral `/strand/admin_endpoints/<id>`: where a live broker's admin HTTP API answers, so any
 * broker's dashboard and `strand cluster rolling-restart` reach the others'. Written by the admin
 * server once its broker is registered, again in each new session.
 */
export const AdminEndpointZNode = {
  parentPath: "/strand/admin_endpoints",
  path(id: number): string {
    return `${AdminEndpointZNode.parentPath}/${id}`;
  },
  encode(urls: string[]): Uint8Array {
    return jsonBytes({ version: 1, urls });
  },
  decode(bytes: Uint8Array): string[] | null {
    const js = parseObject(bytes);
    if (js === null || js.version !== 1 || !Array.isArray(js.urls)) return null;
    const urls = js.urls.filter((u: unknown): u is string => typeof u === "string" && /^https?:\/\/[^\s/]+$/.test(u));
    return urls.length === js.urls.length ? urls : null;
  },
};

// ---------------------------------------------------------------------------------------------
// /admin

export const AdminZNode = { path: "/admin" };
export const DeleteTopicsZNode = { path: "/admin/delete_topics" };

/** A topic marked for deletion; the node carries no data. */
export const DeleteTopicsTopicZNode = {
  path(topic: string): string {
    checkTopicName(topic);
    return `${DeleteTopicsZNode.path}/${topic}`;
  },
  encode(): Uint8Array {
    return empty;
  },
};

export interface PartitionReplicas extends TopicPartition {
  replicas: number[];
}

/** The legacy (pre-2.4) reassignment request: `{"version":1,"partitions":[{topic,partition,replicas}]}`. */
export const ReassignPartitionsZNode = {
  path: "/admin/reassign_partitions",
  encode(reassignment: Iterable<PartitionReplicas>): Uint8Array {
    const partitions = [...reassignment].map((r) => ({
      topic: r.topic,
      partition: r.partition,
      replicas: r.replicas,
    }));
    return jsonBytes({ version: 1, partitions });
  },
  decode(bytes: Uint8Array): PartitionReplicas[] | null {
    const js = parseObject(bytes);
    if (js === null || !Array.isArray(js.partitions)) return null;
    const out: PartitionReplicas[] = [];
    for (const p of js.partitions) {
      const replicas = isObject(p) ? int32Array(p.replicas) : null;
      if (!isObject(p) || typeof p.topic !== "string" || !isInt32(p.partition) || replicas === null) {
        return null;
      }
      out.push({ topic: p.topic, partition: p.partition, replicas });
    }
    return out;
  },
};

/** The legacy preferred-leader election request. */
export const PreferredReplicaElectionZNode = {
  path: "/admin/preferred_replica_election",
  encode(partitions: Iterable<TopicPartition>): Uint8Array {
    const list = [...partitions].map((tp) => ({ topic: tp.topic, partition: tp.partition }));
    return jsonBytes({ version: 1, partitions: list });
  },
  decode(bytes: Uint8Array): TopicPartition[] | null {
    const js = parseObject(bytes);
    return js === null ? null : topicPartitions(js.partitions);
  },
};

// ---------------------------------------------------------------------------------------------
// /cluster, /consumers, /latest_producer_id_block

export const ClusterZNode = { path: "/cluster" };

/** The cluster id (22-character base64 UUID). Note Kafka writes this version as a string. */
export const ClusterIdZNode = {
  path: "/cluster/id",
  encode(id: string): Uint8Array {
    return jsonBytes({ version: "1", id });
  },
  decode(bytes: Uint8Array): string | null {
    const js = parseObject(bytes);
    return js !== null && typeof js.id === "string" && js.id.length > 0 ? js.id : null;
  },
};

/** The old (ZooKeeper-based) consumers' root; Kafka keeps creating it. */
export const ConsumerPathZNode = { path: "/consumers" };

/** An old consumer's committed offset, as decimal text. */
export const ConsumerOffset = {
  path(group: string, topic: string, partition: number): string {
    checkTopicName(topic);
    return `${ConsumerPathZNode.path}/${group}/offsets/${topic}/${partition}`;
  },
  encode(offset: bigint): Uint8Array {
    return textEncoder.encode(offset.toString());
  },
  decode(bytes: Uint8Array): bigint | null {
    return int64Text(text(bytes));
  },
};

export interface ProducerIdsBlock {
  assignedBrokerId: number;
  firstProducerId: bigint;
  size: number;
}

/** The last block of producer ids handed out. Empty until the first block is allocated. */
export const ProducerIdBlockZNode = {
  CurrentVersion: 1,
  path: "/latest_producer_id_block",
  encode(block: ProducerIdsBlock): Uint8Array {
    return jsonBytes({
      version: 1,
      broker: block.assignedBrokerId,
      block_start: block.firstProducerId.toString(),
      block_end: (block.firstProducerId + BigInt(block.size) - 1n).toString(),
    });
  },
  decode(bytes: Uint8Array): ProducerIdsBlock | null {
    const js = parseObject(bytes);
    if (js === null || !isInt32(js.broker)) return null;
    const start = int64Text(js.block_start);
    const end = int64Text(js.block_end);
    if (start === null || end === null || start < 0n || end < start) return null;
    const size = end - start + 1n;
    if (size > BigInt(int32Max)) return null;
    return { assignedBrokerId: js.broker, firstProducerId: start, size: Number(size) };
  },
};

// ---------------------------------------------------------------------------------------------
// Start-up

/** Persistent paths every Kafka broker makes sure exist at start-up (ZkData.PersistentZkPaths). */
export const persistentPaths: readonly string[] = [
  ConsumerPathZNode.path,
  BrokerIdsZNode.path,
  TopicsZNode.path,
  ConfigEntityChangeNotificationZNode.path,
  DeleteTopicsZNode.path,
  BrokerSequenceIdZNode.path,
  IsrChangeNotificationZNode.path,
  ProducerIdBlockZNode.path,
  LogDirEventNotificationZNode.path,
  ...Object.values(ConfigType).map((t) => ConfigEntityTypeZNode.path(t)),
];

/**
 * Creates Kafka's top-level persistent paths (KafkaZkClient.createTopLevelPaths). Idempotent. All
 * at once: the embedded store makes them one group commit (one fsync, not one each, at every
 * start), ZooKeeper one pipelined round trip; a parent two paths share is created by whichever
 * gets there first (ensurePath takes an existing node as done).
 */
export async function ensureKafkaPaths(registry: Registry): Promise<void> {
  await Promise.all(persistentPaths.map((path) => registry.ensurePath(path)));
}
