// Topic-level configuration (Kafka's LogConfig): the keys a topic may override, their validation,
// and how they combine with the broker's defaults into a LogConfig.
//
// Topic key → broker default it overrides (Kafka's pairs):
//   segment.bytes ← log.segment.bytes          segment.ms ← log.roll.ms|hours
//   retention.ms ← log.retention.ms|minutes|hours (-1: no limit)
//   retention.bytes ← log.retention.bytes (-1: no limit)
//   flush.messages ← log.flush.interval.messages  flush.ms ← log.flush.interval.ms
//   file.delete.delay.ms ← log.segment.delete.delay.ms   cleanup.policy ← log.cleanup.policy
//   index.interval.bytes ← log.index.interval.bytes   segment.index.bytes ← log.index.size.max.bytes
//   delete.retention.ms ← log.cleaner.delete.retention.ms
//   min.cleanable.dirty.ratio ← log.cleaner.min.cleanable.ratio
//   min.compaction.lag.ms ← log.cleaner.min.compaction.lag.ms
//   max.compaction.lag.ms ← log.cleaner.max.compaction.lag.ms
//   message.timestamp.{type,before.max.ms,after.max.ms,difference.max.ms} ← log.message.timestamp.*
//   (the produce path's record validation reads them: protocol/record_validator.ts)
//   segment.jitter.ms ← log.roll.jitter.ms|hours (each new active segment rolls up to this much early)
//   compression.type ← compression.type, compression.{gzip,zstd}.level ← the same names (the
//   produce path recompresses batches whose codec differs: protocol/recompress.ts)
// Accepted and reported, not applied (README's topic config table says why): preallocate,
// message.format.version (ignored by Kafka itself since inter-broker protocol 3.0),
// message.downconversion.enable, compression.lz4.level, local.retention.{ms,bytes};
// remote.storage.enable only as false (tiered storage is off, as in a Kafka without
// remote.log.storage.system.enable). leader/follower.replication.throttled.replicas name the
// replicas the broker's leader/follower.replication.throttled.rate applies to.

import type { SegmentConfig } from "./segment.ts";

export interface LogConfig extends SegmentConfig {
  segmentBytes: number;
  segmentMs: number;
  /** segment.jitter.ms: the most a segment's time-based roll may come early (Kafka's rollJitterMs). */
  segmentJitterMs?: number;
  /** retention.ms: segments whose newest batch is older are deleted; -1: no time limit. */
  retentionMs?: number;
  /** retention.bytes: oldest segments are deleted while the log is larger; -1: no size limit. */
  retentionBytes?: number;
  /** flush.messages: fsync once this many messages are unflushed. */
  flushMessages?: number;
  /** flush.ms: the flush scheduler fsyncs a log not flushed for this long. */
  flushMs?: number;
  /** file.delete.delay.ms: how long a deleted segment's `.deleted` files remain. */
  fileDeleteDelayMs?: number;
  /** cleanup.policy: time and size retention apply only when it includes "delete"; the cleaner only when "compact". */
  cleanupPolicy?: string;
  /** delete.retention.ms: how long the cleaner keeps a tombstone after it first saw it. */
  deleteRetentionMs?: number;
  /** min.cleanable.dirty.ratio: the share of the log past the cleaner checkpoint that makes it worth cleaning. */
  minCleanableDirtyRatio?: number;
  /** min.compaction.lag.ms: a segment with a record younger than this is not cleaned. */
  minCompactionLagMs?: number;
  /** max.compaction.lag.ms: a dirty segment older than this is cleaned whatever the dirty ratio. */
  maxCompactionLagMs?: number;
}

const DAY_MS = 24 * 3_600_000;

/** Kafka's defaults for every LogConfig field; a config given without a field takes these. */
export const logConfigDefaults: Required<LogConfig> = {
  segmentBytes: 1 << 30,
  segmentMs: 7 * DAY_MS,
  segmentJitterMs: 0,
  indexIntervalBytes: 4096,
  segmentIndexBytes: 10 << 20,
  retentionMs: 7 * DAY_MS,
  retentionBytes: -1,
  flushMessages: Number.MAX_SAFE_INTEGER,
  flushMs: Number.MAX_SAFE_INTEGER,
  fileDeleteDelayMs: 60_000,
  cleanupPolicy: "delete",
  deleteRetentionMs: DAY_MS,
  minCleanableDirtyRatio: 0.5,
  minCompactionLagMs: 0,
  maxCompactionLagMs: Number.MAX_SAFE_INTEGER,
};

/**
 * A segment's roll jitter (Kafka's LogConfig.randomSegmentJitter): uniform in
 * [0, min(segment.jitter.ms, segment.ms)), from a random non-negative 31-bit int as Kafka draws it.
 */
export function randomSegmentJitterMs(config: LogConfig, random: { randomBytes(out: Uint8Array): void }): number {
  const jitterMs = config.segmentJitterMs ?? 0;
  if (jitterMs <= 0) return 0;
  const b = new Uint8Array(4);
  random.randomBytes(b);
  const r = new DataView(b.buffer).getUint32(0) & 0x7fffffff;
  return r % Math.min(jitterMs, config.segmentMs);
}

/** Any negative retention.ms means no time limit (Kafka treats them all as -1). */
const retentionMsOf = (ms: number) => (ms < 0 ? -1 : ms);

type Check = (v: string) => string | null;

// A Java long: Kafka's "never" defaults are Long.MAX_VALUE (flush.messages, flush.ms,
// max.compaction.lag.ms), so the whole int64 range is accepted; past 2^53 a value reads as a
// number that means the same for counts and milliseconds.
const int64Max = (1n << 63n) - 1n;
const long = (min: number): Check => (v) =>
  /^-?\d{1,19}$/.test(v) && BigInt(v) <= int64Max && BigInt(v) >= BigInt(min) ? null : `must be an integer >= ${min}`;
/** A Java int (Kafka's INT keys: sizes, counts). */
const int = (min: number): Check => (v) =>
  /^-?\d{1,10}$/.test(v) && Number(v) <= 2 ** 31 - 1 && Number(v) >= min ? null : `must be an integer >= ${min} and <= ${2 ** 31 - 1}`;
/** One of the allowed words. */
const word = (...allowed: string[]): Check => (v) => (allowed.includes(v) ? null : `must be one of ${allowed.join(", ")}`);
/** A number within [min, max] (Kafka's DOUBLE keys). */
const double = (min: number, max: number): Check => (v) =>
  /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v) && Number(v) >= min && Number(v) <= max ? null : `must be a number between ${min} and ${max}`;
/** A comma-separated list of allowed words (Kafka's LIST keys). */
const oneOf = (...allowed: string[]): Check => (v) => {
  const parts = v.split(",").map((s) => s.trim());
  return parts.length > 0 && parts.every((p) => allowed.includes(p)) ? null : `must be one of ${allowed.join(", ")}`;
};
const bool: Check = (v) => (v === "true" || v === "false" ? null : "must be true or false");
/** An int within [min, max], or one extra value (gzip's -1: the codec's default level). */
const level = (min: number, max: number, orValue = min): Check => (v) =>
  /^-?\d{1,7}$/.test(v) && ((Number(v) >= min && Number(v) <= max) || Number(v) === orValue)
    ? null
    : `must be between ${min} and ${max}${orValue < min ? ` or equal to ${orValue}` : ""}`;

/**
 * Kafka's MetadataVersion strings (MetadataVersionValidator): "0.8.0" … "0.11.0-IV2", "1.0-IV0" …
 * "3.9-IV0", or a release's short form ("0.10.2", "2.8", "3.8"); a patch level is ignored
 * ("0.10.2.1", "2.8.1"), as MetadataVersion.fromVersionString cuts it.
 */
const metadataVersions = new Set([
  "0.8.0", "0.8.1", "0.8.2", "0.9.0", "0.10.0-IV0", "0.10.0-IV1", "0.10.1-IV0", "0.10.1-IV1", "0.10.1-IV2",
  "0.10.2-IV0", "0.11.0-IV0", "0.11.0-IV1", "0.11.0-IV2", "1.0-IV0", "1.1-IV0", "2.0-IV0", "2.0-IV1", "2.1-IV0",
  "2.1-IV1", "2.1-IV2", "2.2-IV0", "2.2-IV1", "2.3-IV0", "2.3-IV1", "2.4-IV0", "2.4-IV1", "2.5-IV0", "2.6-IV0",
  "2.7-IV0", "2.7-IV1", "2.7-IV2", "2.8-IV0", "2.8-IV1", "3.0-IV0", "3.0-IV1", "3.1-IV0", "3.2-IV0", "3.3-IV0",
  "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0", "3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2",
  "3.7-IV0", "3.7-IV1", "3.7-IV2", "3.7-IV3", "3.7-IV4", "3.8-IV0", "3.9-IV0",
  "0.10.0", "0.10.1", "0.10.2", "0.11.0", "1.0", "1.1", "2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7",
  "2.8", "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8",
]);
const metadataVersion: Check = (v) => {
  const parts = v.split(".");
  const n = v.startsWith("0.") ? 3 : 2;
  return metadataVersions.has(parts.length <= n ? v : parts.slice(0, n).join(".")) ? null : `Version ${v} is not a valid version`;
};

/** Kafka's ThrottledReplicaListValidator: "*", or partition:broker pairs. */
const throttledReplicas: Check = (v) => {
  const parts = v.split(",").map((s) => s.trim());
  return parts.every((p) => /^(\d+:\d+)?$/.test(p)) || parts.join("") === "*"
    ? null
    : "must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...";
};

/** Topic config keys strand accepts. Stored in the registry; applied where strand implements them. */
export const topicConfigChecks: Record<string, Check> = {
  "cleanup.policy": oneOf("delete", "compact"),
  "compression.gzip.level": level(1, 9, -1),
  "compression.lz4.level": level(1, 17),
  "compression.zstd.level": level(-131072, 22),
  "compression.type": word("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"),
  "delete.retention.ms": long(0),
  "file.delete.delay.ms": long(0),
  "flush.messages": long(1),
  "flush.ms": long(0),
  "follower.replication.throttled.replicas": throttledReplicas,
  "index.interval.bytes": int(0),
  "leader.replication.throttled.replicas": throttledReplicas,
  "local.retention.bytes": long(-2),
  "local.retention.ms": long(-2),
  "max.compaction.lag.ms": long(1),
  "max.message.bytes": int(0),
  "message.downconversion.enable": bool,
  "message.format.version": metadataVersion,
  "message.timestamp.after.max.ms": long(0),
  "message.timestamp.before.max.ms": long(0),
  "message.timestamp.difference.max.ms": long(0),
  "message.timestamp.type": word("CreateTime", "LogAppendTime"),
  "min.cleanable.dirty.ratio": double(0, 1),
  "min.compaction.lag.ms": long(0),
  "min.insync.replicas": int(1),
  "preallocate": bool,
  "remote.storage.enable": bool,
  "retention.bytes": long(-1),
  "retention.ms": long(-1),
  "segment.bytes": int(14),
  "segment.index.bytes": int(8),
  "segment.jitter.ms": long(0),
  "segment.ms": long(1),
  "unclean.leader.election.enable": bool,
};

/** Error message for a bad topic config entry, or null when it is valid. */
export function checkTopicConfig(key: string, value: string | null): string | null {
  const check = topicConfigChecks[key];
  if (check === undefined) return `unknown topic config ${key}`;
  if (value === null) return `${key} needs a value`;
  const why = check(value.trim());
  return why === null ? null : `${key}=${value}: ${why}`;
}

/**
 * Error message when a topic's whole config (its overrides after a change) is inconsistent, as
 * Kafka's LogConfig.validate checks it past the single keys: min.compaction.lag.ms may not exceed
 * max.compaction.lag.ms, and remote.storage.enable=true is refused because strand has no tiered
 * storage (Kafka's answer while remote.log.storage.system.enable is false).
 */
export function checkTopicConfigSet(configs: Record<string, string>): string | null {
  const longOf = (k: string, d: bigint) => {
    const v = configs[k]?.trim();
    return v !== undefined && /^-?\d{1,19}$/.test(v) ? BigInt(v) : d;
  };
  const min = longOf("min.compaction.lag.ms", 0n);
  const max = longOf("max.compaction.lag.ms", int64Max);
  if (min > max) return `conflict topic config setting min.compaction.lag.ms (${min}) > max.compaction.lag.ms (${max})`;
  if (configs["remote.storage.enable"]?.trim() === "true") {
    return "remote.storage.enable=true: Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.";
  }
  return null;
}

export interface TopicLogConfig extends LogConfig {
  maxMessageBytes: number;
  /** min.insync.replicas: acks=all writes need this many ISR members (the Partition checks it). */
  minInsyncReplicas?: number;
  /** message.timestamp.type: CreateTime (the producer's) or LogAppendTime (the leader's clock). */
  messageTimestampType?: string;
  /**
   * message.timestamp.before.max.ms / after.max.ms / difference.max.ms as set (Long.MAX_VALUE
   * arrives as Number.MAX_SAFE_INTEGER or more). As in Kafka, before and after at that default
   * fall back to the legacy difference.max.ms.
   */
  messageTimestampBeforeMaxMs?: number;
  messageTimestampAfterMaxMs?: number;
  messageTimestampDifferenceMaxMs?: number;
  /** leader.replication.throttled.replicas, parsed: the replicas throttled on the leader side. */
  leaderThrottledReplicas?: ThrottledReplicas;
  /** follower.replication.throttled.replicas, parsed: the replicas throttled on the follower side. */
  followerThrottledReplicas?: ThrottledReplicas;
  /** compression.type: the codec produced batches are stored in ("producer": as they came). */
  compressionType?: string;
  /** compression.gzip.level / compression.zstd.level, used when batches are recompressed. */
  compressionGzipLevel?: number;
  compressionZstdLevel?: number;
}

/** A throttled-replicas list: every replica of the topic ("*"), or partition:broker pairs. */
export type ThrottledReplicas = "all" | readonly { partition: number; broker: number }[];

/** Parses a checked leader/follower.replication.throttled.replicas value (Kafka's parseThrottledPartitions). */
export function parseThrottledReplicas(value: string | undefined): ThrottledReplicas {
  const v = value?.trim() ?? "";
  if (v === "*") return "all";
  const out: { partition: number; broker: number }[] = [];
  for (const part of v.split(",")) {
    const m = /^\s*(\d+):(\d+)\s*$/.exec(part);
    if (m !== null) out.push({ partition: Number(m[1]), broker: Number(m[2]) });
  }
  return out;
}

/** True when the list throttles the partition's replica on brokerId (Kafka's ReplicationQuotaManager.isThrottled). */
export function isThrottledReplica(list: ThrottledReplicas | undefined, partition: number, brokerId: number): boolean {
  if (list === undefined) return false;
  return list === "all" || list.some((r) => r.partition === partition && r.broker === brokerId);
}

/**
 * Whether a cleanup.policy value ("delete", "compact", "compact,delete", any spacing or case as
 * validated) names the policy: the one reading of it every user shares.
 */
export function hasCleanupPolicy(cleanupPolicy: string | undefined, policy: "delete" | "compact"): boolean {
  return (cleanupPolicy ?? logConfigDefaults.cleanupPolicy).split(",").some((p) => p.trim().toLowerCase() === policy);
}

/** The topic's effective log config: its overrides over the broker's defaults. */
export function effectiveLogConfig(defaults: TopicLogConfig, overrides: Record<string, string>): TopicLogConfig {
  const num = (k: string, d: number) => (overrides[k] !== undefined ? Number(overrides[k]) : d);
  return {
    segmentBytes: num("segment.bytes", defaults.segmentBytes),
    segmentMs: num("segment.ms", defaults.segmentMs),
    segmentJitterMs: num("segment.jitter.ms", defaults.segmentJitterMs ?? 0),
    indexIntervalBytes: num("index.interval.bytes", defaults.indexIntervalBytes),
    segmentIndexBytes: num("segment.index.bytes", defaults.segmentIndexBytes),
    maxMessageBytes: num("max.message.bytes", defaults.maxMessageBytes),
    minInsyncReplicas: num("min.insync.replicas", defaults.minInsyncReplicas ?? 1),
    retentionMs: retentionMsOf(num("retention.ms", defaults.retentionMs ?? logConfigDefaults.retentionMs)),
    retentionBytes: num("retention.bytes", defaults.retentionBytes ?? logConfigDefaults.retentionBytes),
    flushMessages: num("flush.messages", defaults.flushMessages ?? logConfigDefaults.flushMessages),
    flushMs: num("flush.ms", defaults.flushMs ?? logConfigDefaults.flushMs),
    fileDeleteDelayMs: num("file.delete.delay.ms", defaults.fileDeleteDelayMs ?? logConfigDefaults.fileDeleteDelayMs),
    deleteRetentionMs: num("delete.retention.ms", defaults.deleteRetentionMs ?? logConfigDefaults.deleteRetentionMs),
    minCleanableDirtyRatio: num("min.cleanable.dirty.ratio", defaults.minCleanableDirtyRatio ?? logConfigDefaults.minCleanableDirtyRatio),
    minCompactionLagMs: num("min.compaction.lag.ms", defaults.minCompactionLagMs ?? logConfigDefaults.minCompactionLagMs),
    maxCompactionLagMs: num("max.compaction.lag.ms", defaults.maxCompactionLagMs ?? logConfigDefaults.maxCompactionLagMs),
    messageTimestampType: overrides["message.timestamp.type"]?.trim() ?? defaults.messageTimestampType ?? "CreateTime",
    messageTimestampBeforeMaxMs: num("message.timestamp.before.max.ms", defaults.messageTimestampBeforeMaxMs ?? Number.MAX_SAFE_INTEGER),
    messageTimestampAfterMaxMs: num("message.timestamp.after.max.ms", defaults.messageTimestampAfterMaxMs ?? Number.MAX_SAFE_INTEGER),
    messageTimestampDifferenceMaxMs: num("message.timestamp.difference.max.ms", defaults.messageTimestampDifferenceMaxMs ?? Number.MAX_SAFE_INTEGER),
    leaderThrottledReplicas: parseThrottledReplicas(overrides["leader.replication.throttled.replicas"]),
    followerThrottledReplicas: parseThrottledReplicas(overrides["follower.replication.throttled.replicas"]),
    compressionType: overrides["compression.type"]?.trim() ?? defaults.compressionType ?? "producer",
    compressionGzipLevel: num("compression.gzip.level", defaults.compressionGzipLevel ?? -1),
    compressionZstdLevel: num("compression.zstd.level", defaults.compressionZstdLevel ?? 3),
    cleanupPolicy: overrides["cleanup.policy"] !== undefined
      ? overrides["cleanup.policy"].split(",").map((p) => p.trim()).join(",")
      : defaults.cleanupPolicy ?? logConfigDefaults.cleanupPolicy,
  };
}
