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

import type { SegmentConfig } from "./segment.ts";

export interface LogConfig extends SegmentConfig {
  segmentBytes: number;
  segmentMs: number;
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

/** Topic config keys strand accepts. Stored in the registry; applied where strand implements them. */
export const topicConfigChecks: Record<string, Check> = {
  "cleanup.policy": oneOf("delete", "compact"),
  "compression.type": word("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"),
  "delete.retention.ms": long(0),
  "file.delete.delay.ms": long(0),
  "flush.messages": long(1),
  "flush.ms": long(0),
  "index.interval.bytes": int(0),
  "max.compaction.lag.ms": long(1),
  "max.message.bytes": int(0),
  "message.timestamp.after.max.ms": long(0),
  "message.timestamp.before.max.ms": long(0),
  "message.timestamp.difference.max.ms": long(0),
  "message.timestamp.type": word("CreateTime", "LogAppendTime"),
  "min.cleanable.dirty.ratio": double(0, 1),
  "min.compaction.lag.ms": long(0),
  "min.insync.replicas": int(1),
  "preallocate": bool,
  "retention.bytes": long(-1),
  "retention.ms": long(-1),
  "segment.bytes": int(14),
  "segment.index.bytes": int(8),
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
}

/** The topic's effective log config: its overrides over the broker's defaults. */
export function effectiveLogConfig(defaults: TopicLogConfig, overrides: Record<string, string>): TopicLogConfig {
  const num = (k: string, d: number) => (overrides[k] !== undefined ? Number(overrides[k]) : d);
  return {
    segmentBytes: num("segment.bytes", defaults.segmentBytes),
    segmentMs: num("segment.ms", defaults.segmentMs),
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
    cleanupPolicy: overrides["cleanup.policy"] !== undefined
      ? overrides["cleanup.policy"].split(",").map((p) => p.trim()).join(",")
      : defaults.cleanupPolicy ?? logConfigDefaults.cleanupPolicy,
  };
}
