// Broker configuration in Kafka's names and defaults (KafkaConfig). The CLI gathers raw
// key=value pairs (server.properties, --override, STRAND_* environment); this file turns them into
// a typed BrokerConfig. Unknown keys are reported to the caller to log, never fatal; an invalid
// value throws ConfigError naming the key.

import { type AclAuthorizerSettings, parseSuperUsers } from "../authorizer/mod.ts";
import type { GroupCoordinatorConfig, TransactionConfig } from "../coordinator/mod.ts";
import { parseConnectString, ZkError } from "../zk/mod.ts";
import {
  isListenerPrefixedSecurityKey,
  parseSecurityConfig,
  parseSecurityProtocolMap,
  type SecurityConfig,
} from "./security_config.ts";
import { INTER_BROKER_PROTOCOL_DEFAULT, interBrokerProtocolVersionError, usesAlterPartition } from "./inter_broker_protocol.ts";
import { type ListenerSsl, parseListenerSsl } from "./ssl_config.ts";
import { replicaSelectorError } from "./replica_selector.ts";
import { canonicalIp, saslTokenBytesMax } from "../util/mod.ts";

export class ConfigError extends Error {
  override name = "ConfigError";
  constructor(readonly key: string, message: string) {
    super(`invalid value for ${key}: ${message}`);
  }
}

type Kind = "int" | "long" | "double" | "bool" | "string" | "list" | "password";

export interface KeyDef {
  kind: Kind;
  default: string | null;
  min?: number;
  max?: number;
  /** Extra validation: returns an error message or null. */
  check?: (value: string) => string | null;
}

const HOUR_MS = 3_600_000;

function securityProtocolMapError(v: string): string | null {
  try {
    parseSecurityProtocolMap(v);
    return null;
  } catch (e) {
    return e instanceof ConfigError ? e.message.replace(/^invalid value for [^:]+: /, "") : String(e);
  }
}

function listenerCheck(v: string): string | null {
  for (const l of splitList(v)) {
    if (parseListener(l) === null) return `"${l}" is not NAME://host:port`;
  }
  return null;
}

function adminListenerCheck(v: string): string | null {
  for (const l of splitList(v)) {
    if (parseAdminListener(l) === null) return `"${l}" is not http://host:port or https://host:port`;
  }
  return null;
}

function zookeeperConnectCheck(v: string): string | null {
  try {
    parseConnectString(v);
    return null;
  } catch (e) {
    return e instanceof ZkError ? e.detail : String(e);
  }
}

function digestAuthCheck(v: string): string | null {
  return v.indexOf(":") > 0 ? null : "must be user:password";
}

/** Kafka's ZooKeeper-mode authorizer, under both its class names (AclAuthorizer, and the one before 2.4). */
export const aclAuthorizerClassNames: readonly string[] = ["kafka.security.authorizer.AclAuthorizer", "kafka.security.auth.SimpleAclAuthorizer"];

function authorizerClassCheck(v: string): string | null {
  const name = v.trim();
  if (name === "" || aclAuthorizerClassNames.includes(name)) return null;
  return `"${name}" is not an authorizer strand has; use ${aclAuthorizerClassNames.join(" or ")}, or leave it empty for none`;
}

function superUsersCheck(v: string): string | null {
  const users = parseSuperUsers(v);
  return typeof users === "string" ? users : null;
}

function cleanupPolicyCheck(v: string): string | null {
  const parts = splitList(v);
  if (parts.length === 0 || parts.some((p) => p !== "delete" && p !== "compact")) return `"${v}" is not a list of delete and compact`;
  return null;
}

/** max.connections.per.ip.overrides: `host:count,host:count` (IPv6 hosts may be bracketed). */
export function parseIpOverrides(v: string): Map<string, number> | string {
  const out = new Map<string, number>();
  for (const entry of splitList(v)) {
    const i = entry.lastIndexOf(":");
    const text = entry.slice(0, i).trim().replace(/^\[|\]$/g, "").toLowerCase();
    // One spelling per address, as the SocketServer sees its peers ("0:0:0:0:0:0:0:1" is "::1").
    const host = canonicalIp(text) ?? text;
    const count = entry.slice(i + 1).trim();
    if (i <= 0 || host === "" || !/^\d+$/.test(count) || Number(count) > 2147483647) return `"${entry}" is not host:count`;
    out.set(host, Number(count));
  }
  return out;
}

function ipOverridesError(v: string): string | null {
  const r = parseIpOverrides(v);
  return typeof r === "string" ? r : null;
}

/** Every key strand reads, with Kafka's default. */
export const brokerConfigKeys: Record<string, KeyDef> = {
  "broker.id": { kind: "int", default: "-1", min: -1 },
  "broker.rack": { kind: "string", default: null },
  "listeners": { kind: "list", default: "PLAINTEXT://127.0.0.1:9092", check: listenerCheck },
  "advertised.listeners": { kind: "list", default: null, check: listenerCheck },
  // Security (security_config.ts resolves these, with the listener.name.<l>.* forms).
  "listener.security.protocol.map": {
    kind: "list",
    default: "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
    check: (v) => securityProtocolMapError(v),
  },
  "sasl.enabled.mechanisms": { kind: "list", default: null },
  "sasl.mechanism.inter.broker.protocol": { kind: "string", default: null },
  "inter.broker.listener.name": { kind: "string", default: null },
  "security.inter.broker.protocol": { kind: "string", default: null },
  "connections.max.reauth.ms": { kind: "long", default: "0", min: 0 },
  "sasl.server.max.receive.size": { kind: "int", default: String(saslTokenBytesMax), min: 1 },
  "connection.failed.authentication.delay.ms": { kind: "int", default: "100", min: 0 },
  "log.dirs": { kind: "list", default: null },
  "log.dir": { kind: "string", default: "/tmp/strand-logs" },
  "zookeeper.connect": { kind: "string", default: null, check: zookeeperConnectCheck },
  "zookeeper.session.timeout.ms": { kind: "int", default: "18000", min: 1 },
  // Unset: the session timeout, as in Kafka.
  "zookeeper.connection.timeout.ms": { kind: "int", default: null, min: 1 },
  "zookeeper.set.acl": { kind: "bool", default: "false" },
  // strand's own key: ZooKeeper "digest" credential user:password for the session, and the
  // identity the ACLs of zookeeper.set.acl name (Kafka uses SASL/JAAS for this instead).
  "zookeeper.digest.auth": { kind: "password", default: null, check: digestAuthCheck },
  // Authorization (Kafka's AclAuthorizer, ACLs in the registry): empty is none.
  "authorizer.class.name": { kind: "string", default: "", check: authorizerClassCheck },
  "super.users": { kind: "string", default: "", check: superUsersCheck },
  "allow.everyone.if.no.acl.found": { kind: "bool", default: "false" },
  "num.partitions": { kind: "int", default: "1", min: 1, max: 10_000 },
  "default.replication.factor": { kind: "int", default: "1", min: 1, max: 255 },
  "auto.create.topics.enable": { kind: "bool", default: "true" },
  "delete.topic.enable": { kind: "bool", default: "true" },
  "message.max.bytes": { kind: "int", default: "1048588", min: 0 },
  // Default of the topic key message.downconversion.enable (Fetch v0-3: fetch_down_convert.ts).
  "log.message.downconversion.enable": { kind: "bool", default: "true" },
  "socket.request.max.bytes": { kind: "int", default: "104857600", min: 1 },
  "connections.max.idle.ms": { kind: "long", default: "600000", min: 1 },
  // Kafka's default is -1 (no bound); strand's, when unset, is 2 x socket.request.max.bytes (see
  // parseBrokerConfig). <= 0 is unbounded, as in Kafka.
  "queued.max.request.bytes": { kind: "long", default: null },
  "max.connections": { kind: "int", default: "2147483647", min: 0 },
  "max.connections.per.ip": { kind: "int", default: "2147483647", min: 0 },
  "max.connections.per.ip.overrides": { kind: "string", default: "", check: (v) => ipOverridesError(v) },
  "max.connection.creation.rate": { kind: "int", default: "2147483647", min: 0 },
  "fetch.max.bytes": { kind: "int", default: "57671680", min: 1024 },
  // KIP-227: incremental fetch sessions this broker keeps (fetch_session.ts); 0 creates none.
  "max.incremental.fetch.session.cache.slots": { kind: "int", default: "1000", min: 0 },
  // KIP-392: empty (Kafka's default) lets the leader serve every consumer; Kafka's
  // RackAwareReplicaSelector is the one selector strand knows (replica_selector.ts).
  "replica.selector.class": { kind: "string", default: "", check: (v) => replicaSelectorError(v) },
  // Client quotas' sampled rates (Kafka's ClientQuotaManagerConfig): the rate is measured over
  // quota.window.num windows of quota.window.size.seconds each.
  "quota.window.num": { kind: "int", default: "11", min: 1, max: 3600 },
  "quota.window.size.seconds": { kind: "int", default: "1", min: 1, max: 3600 },
  // controller_mutation_rate's token bucket holds quota x num x size.seconds (Kafka's).
  "controller.quota.window.num": { kind: "int", default: "11", min: 1, max: 3600 },
  "controller.quota.window.size.seconds": { kind: "int", default: "1", min: 1, max: 3600 },
  "log.segment.bytes": { kind: "int", default: "1073741824", min: 14 },
  "log.roll.hours": { kind: "int", default: "168", min: 1 },
  "log.roll.ms": { kind: "long", default: null, min: 1 },
  // segment.jitter.ms's broker default: a new segment's time-based roll comes up to this much early.
  "log.roll.jitter.hours": { kind: "int", default: "0", min: 0 },
  "log.roll.jitter.ms": { kind: "long", default: null, min: 0 },
  "log.index.interval.bytes": { kind: "int", default: "4096", min: 0 },
  "log.index.size.max.bytes": { kind: "int", default: "10485760", min: 4 },
  "log.flush.interval.messages": { kind: "long", default: "9223372036854775807", min: 1 },
  "log.flush.interval.ms": { kind: "long", default: null, min: 0 },
  "log.flush.scheduler.interval.ms": { kind: "long", default: "9223372036854775807", min: 0 },
  "log.flush.offset.checkpoint.interval.ms": { kind: "int", default: "60000", min: 0 },
  "log.flush.start.offset.checkpoint.interval.ms": { kind: "int", default: "60000", min: 0 },
  "replica.high.watermark.checkpoint.interval.ms": { kind: "long", default: "5000", min: 1 },
  "num.recovery.threads.per.data.dir": { kind: "int", default: "1", min: 1 },
  // strand's own (Kafka has none): appends stop while a log dir's volume has less usable space.
  "log.dir.min.free.bytes": { kind: "long", default: "104857600", min: 0 },
  // Retention: ms wins over minutes, minutes over hours; a negative result means no time limit.
  "log.retention.hours": { kind: "int", default: "168" },
  "log.retention.minutes": { kind: "int", default: null },
  "log.retention.ms": { kind: "long", default: null },
  "log.retention.bytes": { kind: "long", default: "-1" },
  "log.retention.check.interval.ms": { kind: "long", default: "300000", min: 1 },
  // Idempotent producers' state per partition (log/producer_state.ts): how long an idle producer is kept.
  "producer.id.expiration.ms": { kind: "int", default: "86400000", min: 1 },
  "producer.id.expiration.check.interval.ms": { kind: "int", default: "600000", min: 1 },
  "log.segment.delete.delay.ms": { kind: "long", default: "60000", min: 0 },
  "log.cleanup.policy": { kind: "list", default: "delete", check: cleanupPolicyCheck },
  // Record timestamps on produce (protocol/record_validator.ts): the topic keys' defaults.
  "log.message.timestamp.type": { kind: "string", default: "CreateTime", check: timestampTypeCheck },
  "log.message.timestamp.before.max.ms": { kind: "long", default: "9223372036854775807", min: 0 },
  "log.message.timestamp.after.max.ms": { kind: "long", default: "9223372036854775807", min: 0 },
  "log.message.timestamp.difference.max.ms": { kind: "long", default: "9223372036854775807", min: 0 },
  // The topics' compression.type and levels (protocol/recompress.ts rewrites batches in another codec).
  "compression.type": { kind: "string", default: "producer", check: compressionTypeCheck },
  "compression.gzip.level": { kind: "int", default: "-1", min: -1, max: 9 },
  "compression.lz4.level": { kind: "int", default: "9", min: 1, max: 17 },
  "compression.zstd.level": { kind: "int", default: "3", min: -131072, max: 22 },
  // Compaction (src/log/cleaner.ts): one cleaner on the event loop; threads 0 disables it.
  "log.cleaner.enable": { kind: "bool", default: "true" },
  "log.cleaner.threads": { kind: "int", default: "1", min: 0 },
  "log.cleaner.dedupe.buffer.size": { kind: "long", default: "134217728", min: 24 },
  "log.cleaner.io.buffer.size": { kind: "int", default: "524288", min: 0 },
  "log.cleaner.io.buffer.load.factor": { kind: "double", default: "0.9", min: 0.05, max: 1 },
  "log.cleaner.backoff.ms": { kind: "long", default: "15000", min: 0 },
  "log.cleaner.min.cleanable.ratio": { kind: "double", default: "0.5", min: 0, max: 1 },
  "log.cleaner.delete.retention.ms": { kind: "long", default: "86400000", min: 0 },
  "log.cleaner.min.compaction.lag.ms": { kind: "long", default: "0", min: 0 },
  "log.cleaner.max.compaction.lag.ms": { kind: "long", default: "9223372036854775807", min: 1 },
  "min.insync.replicas": { kind: "int", default: "1", min: 1 },
  // Replication (src/replication, replica_fetcher.ts there) and the controller.
  "num.replica.fetchers": { kind: "int", default: "1", min: 1, max: 64 },
  "replica.fetch.max.bytes": { kind: "int", default: "1048576", min: 0 },
  "replica.fetch.response.max.bytes": { kind: "int", default: "10485760", min: 0 },
  "replica.fetch.wait.max.ms": { kind: "int", default: "500", min: 0 },
  "replica.fetch.min.bytes": { kind: "int", default: "1", min: 1 },
  "replica.fetch.backoff.ms": { kind: "int", default: "1000", min: 0 },
  "replica.lag.time.max.ms": { kind: "long", default: "30000", min: 1 },
  "replica.socket.timeout.ms": { kind: "int", default: "30000", min: 1 },
  "unclean.leader.election.enable": { kind: "bool", default: "false" },
  // >= 2.7: leaders propose ISR changes with AlterPartition (inter_broker_protocol.ts).
  "inter.broker.protocol.version": { kind: "string", default: INTER_BROKER_PROTOCOL_DEFAULT, check: interBrokerProtocolVersionError },
  // Replication throttling (replication/replication_quota.ts): bytes/s for the replicas the topics'
  // leader/follower.replication.throttled.replicas name; Long.MAX_VALUE is no throttle. Kafka sets
  // the rates only dynamically (/config/brokers); strand reads server.properties' too.
  "leader.replication.throttled.rate": { kind: "long", default: "9223372036854775807", min: 0 },
  "follower.replication.throttled.rate": { kind: "long", default: "9223372036854775807", min: 0 },
  "replication.quota.window.num": { kind: "int", default: "11", min: 1, max: 3600 },
  "replication.quota.window.size.seconds": { kind: "int", default: "1", min: 1, max: 3600 },
  "controlled.shutdown.enable": { kind: "bool", default: "true" },
  "controlled.shutdown.max.retries": { kind: "int", default: "3", min: 0 },
  "controlled.shutdown.retry.backoff.ms": { kind: "long", default: "5000", min: 0 },
  "controller.socket.timeout.ms": { kind: "int", default: "30000", min: 1 },
  "auto.leader.rebalance.enable": { kind: "bool", default: "true" },
  "leader.imbalance.check.interval.seconds": { kind: "long", default: "300", min: 1 },
  "leader.imbalance.per.broker.percentage": { kind: "int", default: "10", min: 0, max: 100 },
  "cluster.id": { kind: "string", default: null },
  "group.min.session.timeout.ms": { kind: "int", default: "6000", min: 0 },
  "group.max.session.timeout.ms": { kind: "int", default: "1800000", min: 0 },
  "group.initial.rebalance.delay.ms": { kind: "int", default: "3000", min: 0 },
  "group.max.size": { kind: "int", default: "2147483647", min: 1 },
  "offsets.topic.num.partitions": { kind: "int", default: "50", min: 1, max: 10_000 },
  "offsets.topic.replication.factor": { kind: "int", default: "3", min: 1, max: 255 },
  "offsets.topic.segment.bytes": { kind: "int", default: "104857600", min: 1 },
  "offsets.retention.minutes": { kind: "int", default: "10080", min: 1 },
  "offsets.retention.check.interval.ms": { kind: "long", default: "600000", min: 1 },
  "offset.metadata.max.bytes": { kind: "int", default: "4096", min: 0 },
  // The transaction coordinator (src/coordinator/txn_*.ts).
  "transactional.id.expiration.ms": { kind: "int", default: "604800000", min: 1 },
  "transaction.max.timeout.ms": { kind: "int", default: "900000", min: 1 },
  "transaction.state.log.num.partitions": { kind: "int", default: "50", min: 1, max: 10_000 },
  "transaction.state.log.replication.factor": { kind: "int", default: "3", min: 1, max: 255 },
  "transaction.state.log.segment.bytes": { kind: "int", default: "104857600", min: 1 },
  "transaction.state.log.load.buffer.size": { kind: "int", default: "5242880", min: 1 },
  "transaction.state.log.min.isr": { kind: "int", default: "2", min: 1 },
  "transaction.abort.timed.out.transaction.cleanup.interval.ms": { kind: "int", default: "10000", min: 1 },
  "transaction.remove.expired.transaction.cleanup.interval.ms": { kind: "int", default: "3600000", min: 1 },
  // KIP-890: a partition leader checks with the coordinator that a transactional batch's partition is in its transaction.
  "transaction.partition.verification.enable": { kind: "bool", default: "true" },
  // The admin HTTP listener (strand's, as Redpanda's admin API): "" turns it off.
  "admin.listeners": { kind: "list", default: "http://127.0.0.1:9644", check: adminListenerCheck },
  "admin.auth.token": { kind: "password", default: null },
  "admin.auth.token.file": { kind: "string", default: null },
};

/** The replica fetchers', the ISR's and the controller's keys (Kafka's names, without the prefix). */
export interface ReplicationConfig {
  numReplicaFetchers: number;
  replicaFetchMaxBytes: number;
  replicaFetchResponseMaxBytes: number;
  replicaFetchWaitMaxMs: number;
  replicaFetchMinBytes: number;
  replicaFetchBackoffMs: number;
  replicaLagTimeMaxMs: number;
  replicaSocketTimeoutMs: number;
  uncleanLeaderElectionEnable: boolean;
  /** inter.broker.protocol.version >= 2.7: ISR changes go to the controller (AlterPartition). */
  alterPartitionEnable: boolean;
  controlledShutdownEnable: boolean;
  controlledShutdownMaxRetries: number;
  controlledShutdownRetryBackoffMs: number;
  controllerSocketTimeoutMs: number;
  autoLeaderRebalanceEnable: boolean;
  leaderImbalanceCheckIntervalMs: number;
  leaderImbalancePerBrokerPercentage: number;
  /** leader/follower.replication.throttled.rate, bytes/s (Long.MAX_VALUE: none). */
  leaderReplicationThrottledRate: number;
  followerReplicationThrottledRate: number;
  replicationQuotaWindowNum: number;
  replicationQuotaWindowSizeMs: number;
}

export interface Listener {
  name: string;
  host: string;
  port: number;
}

function compressionTypeCheck(v: string): string | null {
  return ["producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"].includes(v)
    ? null
    : `"${v}" is not one of producer, uncompressed, gzip, snappy, lz4, zstd`;
}

function timestampTypeCheck(v: string): string | null {
  return v === "CreateTime" || v === "LogAppendTime" ? null : `"${v}" is not CreateTime or LogAppendTime`;
}

export interface BrokerConfig {
  brokerId: number;
  rack: string | null;
  listeners: Listener[];
  advertisedListeners: Listener[];
  logDirs: string[];
  zookeeperConnect: string | null;
  zookeeperSessionTimeoutMs: number;
  /** zookeeper.connection.timeout.ms, else the session timeout (Kafka's fallback). */
  zookeeperConnectionTimeoutMs: number;
  zookeeperSetAcl: boolean;
  /** user:password for ZooKeeper's digest scheme, or null. */
  zookeeperDigestAuth: string | null;
  /** The ACL authorizer's settings, or null when authorizer.class.name is empty (no authorizer). */
  authorizer: AclAuthorizerSettings | null;
  numPartitions: number;
  defaultReplicationFactor: number;
  autoCreateTopicsEnable: boolean;
  deleteTopicEnable: boolean;
  messageMaxBytes: number;
  logMessageDownconversionEnable: boolean;
  socketRequestMaxBytes: number;
  fetchMaxBytes: number;
  /** max.incremental.fetch.session.cache.slots (KIP-227). */
  maxIncrementalFetchSessionCacheSlots: number;
  /** replica.selector.class (KIP-392): "" (leader only) or Kafka's RackAwareReplicaSelector. */
  replicaSelectorClass: string;
  connectionsMaxIdleMs: number;
  /** quota.window.num and quota.window.size.seconds: the client quotas' sampled rate. */
  quotaWindowNum: number;
  quotaWindowSizeSeconds: number;
  /** controller.quota.window.num and controller.quota.window.size.seconds: controller_mutation_rate's burst. */
  controllerQuotaWindowNum: number;
  controllerQuotaWindowSizeSeconds: number;
  /**
   * queued.max.request.bytes: bytes of requests being read or handled, across connections
   * (Infinity: unbounded). Unset, 2 x socket.request.max.bytes: one frame of the largest size can
   * be read while another is held by a slow or stalled peer, and everything smaller still flows.
   */
  queuedMaxRequestBytes: number;
  maxConnections: number;
  maxConnectionsPerIp: number;
  /** max.connections.per.ip.overrides, by address (as the connection's peer address reads). */
  maxConnectionsPerIpOverrides: Map<string, number>;
  maxConnectionCreationRate: number;
  /**
   * listener.name.<l>.max.connections and .max.connection.creation.rate (KIP-402, KIP-612), by
   * listener name (upper case); a listener without either has no entry. Dynamic, as Kafka's
   * ListenerConnectionQuota: per broker or as the cluster default (dynamic_config.ts).
   */
  listenerConnectionLimits: Map<string, { maxConnections?: number; maxConnectionCreationRate?: number }>;
  logSegmentBytes: number;
  logRollMs: number;
  logRollJitterMs: number;
  logIndexIntervalBytes: number;
  logIndexSizeMaxBytes: number;
  /** log.retention.ms|minutes|hours resolved to ms; -1: no time limit. */
  logRetentionMs: number;
  logRetentionBytes: number;
  logRetentionCheckIntervalMs: number;
  /** producer.id.expiration.ms and producer.id.expiration.check.interval.ms. */
  producerIdExpirationMs: number;
  producerIdExpirationCheckIntervalMs: number;
  /** log.dir.min.free.bytes (strand's): appends are refused while a log dir has less usable; 0: off. */
  logDirMinFreeBytes: number;
  logFlushIntervalMessages: number;
  /** log.flush.interval.ms, else log.flush.scheduler.interval.ms (Kafka's fallback). */
  logFlushIntervalMs: number;
  logFlushSchedulerIntervalMs: number;
  logFlushOffsetCheckpointIntervalMs: number;
  logFlushStartOffsetCheckpointIntervalMs: number;
  replicaHighWatermarkCheckpointIntervalMs: number;
  numRecoveryThreadsPerDataDir: number;
  logSegmentDeleteDelayMs: number;
  logCleanupPolicy: string;
  /** log.message.timestamp.*: defaults of the topics' message.timestamp.* keys. */
  logMessageTimestamp: { type: string; beforeMaxMs: number; afterMaxMs: number; differenceMaxMs: number };
  /** compression.type and compression.{gzip,lz4,zstd}.level: defaults of the topic keys. */
  compression: { type: string; gzipLevel: number; lz4Level: number; zstdLevel: number };
  /** log.cleaner.*: the LogCleaner's settings and the broker defaults of the compaction topic keys. */
  logCleaner: {
    enable: boolean;
    threads: number;
    dedupeBufferBytes: number;
    ioBufferBytes: number;
    ioBufferLoadFactor: number;
    backoffMs: number;
    minCleanableRatio: number;
    deleteRetentionMs: number;
    minCompactionLagMs: number;
    maxCompactionLagMs: number;
  };
  minInsyncReplicas: number;
  replication: ReplicationConfig;
  /** Cluster id to use when the registry has none yet (strand extension; Kafka generates one). */
  clusterId: string | null;
  groupCoordinator: GroupCoordinatorConfig;
  transactions: TransactionConfig;
  /** transaction.partition.verification.enable (KIP-890; txn_verify.ts). */
  transactionPartitionVerificationEnable: boolean;
  /** Where the admin HTTP API and /metrics listen; empty when admin.listeners is "". */
  adminListeners: { host: string; port: number; tls?: true }[];
  /**
   * The TLS settings of the https:// admin listeners: the ssl.* keys in their
   * listener.name.admin.ssl.* form, else the plain ssl.* ones (null when none is https).
   */
  adminSsl: ListenerSsl | null;
  /** Each listener's security protocol and SASL settings, connections.max.reauth.ms, login delay. */
  security: SecurityConfig;
  /** The bearer token mutating admin routes require (admin.auth.token), or null. */
  adminAuthToken: string | null;
  /** A file holding that token (admin.auth.token.file), read at start-up, or null. */
  adminAuthTokenFile: string | null;
  /** The raw values of every known key, after defaults (for DescribeConfigs and the admin API). */
  raw: Map<string, string>;
  /** The known keys given explicitly (server.properties, --override, STRAND_*): Kafka's static configs. */
  configured: Set<string>;
  /**
   * The security keys outside the key table (ssl.*, listener.name.<l>.*), as given: static, and
   * kept out of raw (they hold keys and passwords), but needed to parse the config again.
   */
  securityInput: Map<string, string>;
}

/** queued.max.request.bytes resolved: at least socket.request.max.bytes, as Kafka requires. */
function queuedMaxRequestBytes(raw: Map<string, string>): number {
  const frameMax = Number(raw.get("socket.request.max.bytes"));
  const v = raw.get("queued.max.request.bytes");
  if (v === undefined) return 2 * frameMax;
  const n = Number(v);
  if (n <= 0) return Infinity;
  if (n < frameMax) {
    throw new ConfigError("queued.max.request.bytes", `${n} is below socket.request.max.bytes (${frameMax}): a frame of that size could never be read`);
  }
  return n;
}

/** An admin listener, `http://host:port` (IPv6 hosts in brackets); null when malformed. */
export function parseAdminListener(text: string): { host: string; port: number; tls?: true } | null {
  const m = /^(https?):\/\/(\[[^\]]*\]|[^:\/\[\]]+):(\d{1,5})\/?$/i.exec(text.trim());
  if (m === null || Number(m[3]) > 65535) return null;
  const address = { host: m[2].replace(/^\[|\]$/g, ""), port: Number(m[3]) };
  return m[1].toLowerCase() === "https" ? { ...address, tls: true } : address;
}

export function splitList(v: string): string[] {
  return v.split(",").map((s) => s.trim()).filter((s) => s !== "");
}

export function parseListener(text: string): Listener | null {
  const m = /^([A-Za-z_][A-Za-z0-9_]*):\/\/(\[[^\]]*\]|[^:\/]*):(\d{1,5})$/.exec(text.trim());
  if (m === null) return null;
  const port = Number(m[3]);
  if (port > 65535) return null;
  return { name: m[1].toUpperCase(), host: m[2].replace(/^\[|\]$/g, ""), port };
}

function checkValue(key: string, def: KeyDef, v: string): void {
  if (def.kind === "int" || def.kind === "long") {
    if (!/^-?\d+$/.test(v.trim())) throw new ConfigError(key, `"${v}" is not an integer`);
    // Longs span Kafka's int64 (Long.MAX_VALUE is a common "never"); values past 2^53 are kept as
    // the largest safe number, which means the same for counts and milliseconds.
    const big = BigInt(v.trim());
    const inRange = def.kind === "int"
      ? big >= -(2n ** 31n) && big < 2n ** 31n
      : big >= -(2n ** 63n) && big < 2n ** 63n;
    if (!inRange) throw new ConfigError(key, `${v} is out of range for ${def.kind === "int" ? "an int" : "a long"}`);
    const n = Number(big);
    if (def.min !== undefined && n < def.min) throw new ConfigError(key, `${n} is below the minimum ${def.min}`);
    if (def.max !== undefined && n > def.max) throw new ConfigError(key, `${n} is above the maximum ${def.max}`);
  } else if (def.kind === "double") {
    const n = Number(v.trim());
    if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v.trim()) || !Number.isFinite(n)) throw new ConfigError(key, `"${v}" is not a number`);
    if (def.min !== undefined && n < def.min) throw new ConfigError(key, `${n} is below the minimum ${def.min}`);
    if (def.max !== undefined && n > def.max) throw new ConfigError(key, `${n} is above the maximum ${def.max}`);
  } else if (def.kind === "bool") {
    if (!/^(true|false)$/i.test(v.trim())) throw new ConfigError(key, `"${v}" is not true or false`);
  }
  const msg = def.check?.(v);
  if (msg) throw new ConfigError(key, msg);
}

const listenerLimitKey = /^listener\.name\.([a-z0-9_]+)\.(max\.connections|max\.connection\.creation\.rate)$/;

/** listener.name.<l>.max.connections or .max.connection.creation.rate: kept beside the key table (the listener names vary). */
export function isListenerConnectionLimitKey(key: string): boolean {
  return listenerLimitKey.test(key);
}

/** A per-listener limit's definition: an int of at least 0, with no default (unset: no limit). */
export const listenerConnectionLimitDef: KeyDef = { kind: "int", default: null, min: 0 };

/** The per-listener connection limits; a key naming no listener is an error, as a typo would go unnoticed. */
function parseListenerConnectionLimits(input: ReadonlyMap<string, string>, listenerNames: ReadonlySet<string>) {
  const out = new Map<string, { maxConnections?: number; maxConnectionCreationRate?: number }>();
  for (const [k, v] of input) {
    const m = listenerLimitKey.exec(k);
    if (m === null) continue;
    const name = m[1].toUpperCase();
    if (!listenerNames.has(name)) throw new ConfigError(k, `listener ${name} is not one of the listeners (${[...listenerNames].join(", ")})`);
    checkValue(k, listenerConnectionLimitDef, v);
    const limits = out.get(name) ?? {};
    if (m[2] === "max.connections") limits.maxConnections = Number(v.trim());
    else limits.maxConnectionCreationRate = Number(v.trim());
    out.set(name, limits);
  }
  return out;
}

/**
 * Builds the typed config from raw pairs. Returns the config and the keys strand does not know
 * (the caller logs them; Kafka's many tuning keys are accepted and ignored this way).
 */
export function parseBrokerConfig(input: Map<string, string>): { config: BrokerConfig; unknownKeys: string[] } {
  const raw = new Map<string, string>();
  const unknownKeys: string[] = [];
  const securityInput = new Map<string, string>();
  for (const [k, v] of input) {
    const def = brokerConfigKeys[k];
    if (def === undefined) {
      if (isListenerPrefixedSecurityKey(k)) securityInput.set(k, v);
      // Checked by parseListenerConnectionLimits; kept in raw so a dynamic merge and DescribeConfigs see it.
      else if (listenerLimitKey.test(k)) raw.set(k, v.trim());
      else unknownKeys.push(k);
      continue;
    }
    checkValue(k, def, v);
    raw.set(k, v.trim());
  }
  const configured = new Set(raw.keys());
  for (const [k, def] of Object.entries(brokerConfigKeys)) {
    if (!raw.has(k) && def.default !== null) raw.set(k, def.default);
  }
  const int = (k: string) => Math.min(Number(raw.get(k)), Number.MAX_SAFE_INTEGER);
  const opt = (k: string) => raw.get(k) ?? null;
  const bool = (k: string) => raw.get(k)!.toLowerCase() === "true";
  const listeners = splitList(raw.get("listeners")!).map((l) => parseListener(l)!);
  if (listeners.length === 0) throw new ConfigError("listeners", "at least one listener is needed");
  const names = new Set(listeners.map((l) => l.name));
  if (names.size !== listeners.length) throw new ConfigError("listeners", "each listener needs its own name");
  const security = parseSecurityConfig(input, listeners.map((l) => l.name));
  const advertised = opt("advertised.listeners") === null
    ? listeners
    : splitList(raw.get("advertised.listeners")!).map((l) => parseListener(l)!);
  // Kafka's rule: every advertised name is a listener's name, and appears once.
  const advertisedNames = new Set<string>();
  for (const l of advertised) {
    if (!names.has(l.name)) {
      throw new ConfigError("advertised.listeners", `listener name ${l.name} is not one of the listeners (${[...names].join(", ")})`);
    }
    if (advertisedNames.has(l.name)) throw new ConfigError("advertised.listeners", `listener name ${l.name} is advertised twice`);
    advertisedNames.add(l.name);
  }
  const logDirs = splitList(raw.get("log.dirs") ?? raw.get("log.dir")!);
  if (logDirs.length === 0) throw new ConfigError("log.dirs", "at least one directory is needed");
  const rollMs = raw.has("log.roll.ms") ? int("log.roll.ms") : int("log.roll.hours") * HOUR_MS;
  const retentionMs = raw.has("log.retention.ms")
    ? int("log.retention.ms")
    : raw.has("log.retention.minutes") ? int("log.retention.minutes") * 60_000 : int("log.retention.hours") * HOUR_MS;
  const flushIntervalMs = raw.has("log.flush.interval.ms") ? int("log.flush.interval.ms") : int("log.flush.scheduler.interval.ms");
  const adminListeners = splitList(raw.get("admin.listeners")!).map((l) => parseAdminListener(l)!);
  const config: BrokerConfig = {
    brokerId: int("broker.id"),
    rack: opt("broker.rack"),
    listeners,
    advertisedListeners: advertised,
    logDirs,
    zookeeperConnect: opt("zookeeper.connect"),
    zookeeperSessionTimeoutMs: int("zookeeper.session.timeout.ms"),
    zookeeperConnectionTimeoutMs: raw.has("zookeeper.connection.timeout.ms")
      ? int("zookeeper.connection.timeout.ms")
      : int("zookeeper.session.timeout.ms"),
    zookeeperSetAcl: raw.get("zookeeper.set.acl")!.toLowerCase() === "true",
    zookeeperDigestAuth: opt("zookeeper.digest.auth"),
    authorizer: (opt("authorizer.class.name") ?? "").trim() === "" ? null : {
      superUsers: parseSuperUsers(raw.get("super.users") ?? "") as string[],
      allowEveryoneIfNoAclFound: raw.get("allow.everyone.if.no.acl.found")!.toLowerCase() === "true",
    },
    numPartitions: int("num.partitions"),
    defaultReplicationFactor: int("default.replication.factor"),
    autoCreateTopicsEnable: raw.get("auto.create.topics.enable")!.toLowerCase() === "true",
    deleteTopicEnable: raw.get("delete.topic.enable")!.toLowerCase() === "true",
    messageMaxBytes: int("message.max.bytes"),
    logMessageDownconversionEnable: bool("log.message.downconversion.enable"),
    socketRequestMaxBytes: int("socket.request.max.bytes"),
    fetchMaxBytes: int("fetch.max.bytes"),
    maxIncrementalFetchSessionCacheSlots: int("max.incremental.fetch.session.cache.slots"),
    replicaSelectorClass: (raw.get("replica.selector.class") ?? "").trim(),
    connectionsMaxIdleMs: int("connections.max.idle.ms"),
    quotaWindowNum: int("quota.window.num"),
    quotaWindowSizeSeconds: int("quota.window.size.seconds"),
    controllerQuotaWindowNum: int("controller.quota.window.num"),
    controllerQuotaWindowSizeSeconds: int("controller.quota.window.size.seconds"),
    queuedMaxRequestBytes: queuedMaxRequestBytes(raw),
    maxConnections: int("max.connections"),
    maxConnectionsPerIp: int("max.connections.per.ip"),
    maxConnectionsPerIpOverrides: parseIpOverrides(raw.get("max.connections.per.ip.overrides")!) as Map<string, number>,
    maxConnectionCreationRate: int("max.connection.creation.rate"),
    listenerConnectionLimits: parseListenerConnectionLimits(input, names),
    logSegmentBytes: int("log.segment.bytes"),
    logRollMs: rollMs,
    logRollJitterMs: raw.has("log.roll.jitter.ms") ? int("log.roll.jitter.ms") : int("log.roll.jitter.hours") * HOUR_MS,
    logIndexIntervalBytes: int("log.index.interval.bytes"),
    logIndexSizeMaxBytes: int("log.index.size.max.bytes"),
    logRetentionMs: retentionMs < 0 ? -1 : retentionMs,
    logRetentionBytes: int("log.retention.bytes"),
    logRetentionCheckIntervalMs: int("log.retention.check.interval.ms"),
    producerIdExpirationMs: int("producer.id.expiration.ms"),
    producerIdExpirationCheckIntervalMs: int("producer.id.expiration.check.interval.ms"),
    logDirMinFreeBytes: int("log.dir.min.free.bytes"),
    logFlushIntervalMessages: int("log.flush.interval.messages"),
    logFlushIntervalMs: flushIntervalMs,
    logFlushSchedulerIntervalMs: int("log.flush.scheduler.interval.ms"),
    logFlushOffsetCheckpointIntervalMs: int("log.flush.offset.checkpoint.interval.ms"),
    logFlushStartOffsetCheckpointIntervalMs: int("log.flush.start.offset.checkpoint.interval.ms"),
    replicaHighWatermarkCheckpointIntervalMs: int("replica.high.watermark.checkpoint.interval.ms"),
    numRecoveryThreadsPerDataDir: int("num.recovery.threads.per.data.dir"),
    logSegmentDeleteDelayMs: int("log.segment.delete.delay.ms"),
    logCleanupPolicy: splitList(raw.get("log.cleanup.policy")!).join(","),
    logMessageTimestamp: {
      type: raw.get("log.message.timestamp.type")!,
      beforeMaxMs: int("log.message.timestamp.before.max.ms"),
      afterMaxMs: int("log.message.timestamp.after.max.ms"),
      differenceMaxMs: int("log.message.timestamp.difference.max.ms"),
    },
    compression: {
      type: raw.get("compression.type")!,
      gzipLevel: int("compression.gzip.level"),
      lz4Level: int("compression.lz4.level"),
      zstdLevel: int("compression.zstd.level"),
    },
    logCleaner: {
      enable: raw.get("log.cleaner.enable")!.toLowerCase() === "true",
      threads: int("log.cleaner.threads"),
      dedupeBufferBytes: int("log.cleaner.dedupe.buffer.size"),
      ioBufferBytes: int("log.cleaner.io.buffer.size"),
      ioBufferLoadFactor: Number(raw.get("log.cleaner.io.buffer.load.factor")),
      backoffMs: int("log.cleaner.backoff.ms"),
      minCleanableRatio: Number(raw.get("log.cleaner.min.cleanable.ratio")),
      deleteRetentionMs: int("log.cleaner.delete.retention.ms"),
      minCompactionLagMs: int("log.cleaner.min.compaction.lag.ms"),
      maxCompactionLagMs: int("log.cleaner.max.compaction.lag.ms"),
    },
    minInsyncReplicas: int("min.insync.replicas"),
    replication: {
      numReplicaFetchers: int("num.replica.fetchers"),
      replicaFetchMaxBytes: int("replica.fetch.max.bytes"),
      replicaFetchResponseMaxBytes: int("replica.fetch.response.max.bytes"),
      replicaFetchWaitMaxMs: int("replica.fetch.wait.max.ms"),
      replicaFetchMinBytes: int("replica.fetch.min.bytes"),
      replicaFetchBackoffMs: int("replica.fetch.backoff.ms"),
      replicaLagTimeMaxMs: int("replica.lag.time.max.ms"),
      replicaSocketTimeoutMs: int("replica.socket.timeout.ms"),
      uncleanLeaderElectionEnable: bool("unclean.leader.election.enable"),
      alterPartitionEnable: usesAlterPartition(raw.get("inter.broker.protocol.version")!),
      controlledShutdownEnable: bool("controlled.shutdown.enable"),
      controlledShutdownMaxRetries: int("controlled.shutdown.max.retries"),
      controlledShutdownRetryBackoffMs: int("controlled.shutdown.retry.backoff.ms"),
      controllerSocketTimeoutMs: int("controller.socket.timeout.ms"),
      autoLeaderRebalanceEnable: bool("auto.leader.rebalance.enable"),
      leaderImbalanceCheckIntervalMs: int("leader.imbalance.check.interval.seconds") * 1000,
      leaderImbalancePerBrokerPercentage: int("leader.imbalance.per.broker.percentage"),
      leaderReplicationThrottledRate: int("leader.replication.throttled.rate"),
      followerReplicationThrottledRate: int("follower.replication.throttled.rate"),
      replicationQuotaWindowNum: int("replication.quota.window.num"),
      replicationQuotaWindowSizeMs: int("replication.quota.window.size.seconds") * 1000,
    },
    clusterId: opt("cluster.id"),
    groupCoordinator: {
      groupMinSessionTimeoutMs: int("group.min.session.timeout.ms"),
      groupMaxSessionTimeoutMs: int("group.max.session.timeout.ms"),
      groupInitialRebalanceDelayMs: int("group.initial.rebalance.delay.ms"),
      groupMaxSize: int("group.max.size"),
      offsetsTopicNumPartitions: int("offsets.topic.num.partitions"),
      offsetsTopicReplicationFactor: int("offsets.topic.replication.factor"),
      offsetsTopicSegmentBytes: int("offsets.topic.segment.bytes"),
      offsetsRetentionMs: int("offsets.retention.minutes") * 60_000,
      offsetsRetentionCheckIntervalMs: int("offsets.retention.check.interval.ms"),
      offsetMetadataMaxBytes: int("offset.metadata.max.bytes"),
    },
    transactions: {
      transactionalIdExpirationMs: int("transactional.id.expiration.ms"),
      transactionMaxTimeoutMs: int("transaction.max.timeout.ms"),
      transactionLogNumPartitions: int("transaction.state.log.num.partitions"),
      transactionLogReplicationFactor: int("transaction.state.log.replication.factor"),
      transactionLogSegmentBytes: int("transaction.state.log.segment.bytes"),
      transactionLogLoadBufferSize: int("transaction.state.log.load.buffer.size"),
      transactionLogMinInsyncReplicas: int("transaction.state.log.min.isr"),
      abortTimedOutTransactionsIntervalMs: int("transaction.abort.timed.out.transaction.cleanup.interval.ms"),
      removeExpiredTransactionalIdsIntervalMs: int("transaction.remove.expired.transaction.cleanup.interval.ms"),
    },
    transactionPartitionVerificationEnable: bool("transaction.partition.verification.enable"),
    adminListeners,
    adminSsl: adminListeners.some((l) => l.tls) ? parseListenerSsl(input, "ADMIN", false) : null,
    security,
    adminAuthToken: opt("admin.auth.token"),
    adminAuthTokenFile: opt("admin.auth.token.file"),
    raw,
    configured,
    securityInput,
  };
  // Kafka's rules: a zero per-ip limit needs overrides to let anyone in.
  if (config.maxConnectionsPerIp === 0 && config.maxConnectionsPerIpOverrides.size === 0) {
    throw new ConfigError("max.connections.per.ip", "0 refuses every connection unless max.connections.per.ip.overrides lets some in");
  }
  if (config.adminAuthToken !== null && config.adminAuthTokenFile !== null) {
    throw new ConfigError("admin.auth.token.file", "set admin.auth.token or admin.auth.token.file, not both");
  }
  if (config.adminAuthToken === "") throw new ConfigError("admin.auth.token", "the token is empty");
  if (config.zookeeperSetAcl && config.zookeeperDigestAuth === null) {
    throw new ConfigError("zookeeper.set.acl", "true needs a credential to own the nodes: set zookeeper.digest.auth=user:password");
  }
  return { config, unknownKeys };
}

/** What the ZooKeeper registry needs from the broker's config (the CLI's and the tests' alike). */
export function zookeeperRegistryOptions(config: BrokerConfig): {
  connectString: string;
  sessionTimeoutMs: number;
  connectionTimeoutMs: number;
  setAcl: boolean;
  digestAuth: string | null;
} {
  return {
    connectString: config.zookeeperConnect ?? "",
    sessionTimeoutMs: config.zookeeperSessionTimeoutMs,
    connectionTimeoutMs: config.zookeeperConnectionTimeoutMs,
    setAcl: config.zookeeperSetAcl,
    digestAuth: config.zookeeperDigestAuth,
  };
}
