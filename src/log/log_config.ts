// Topic-level configuration (Kafka's LogConfig): the keys a topic may override, their validation,
// and how they combine with the broker's defaults into a LogConfig.

import type { LogConfig } from "./log.ts";

type Check = (v: string) => string | null;

const long = (min: number): Check => (v) =>
  /^-?\d+$/.test(v) && Number.isSafeInteger(Number(v)) && Number(v) >= min ? null : `must be an integer >= ${min}`;
const oneOf = (...allowed: string[]): Check => (v) => {
  const parts = v.split(",").map((s) => s.trim());
  return parts.length > 0 && parts.every((p) => allowed.includes(p)) ? null : `must be one of ${allowed.join(", ")}`;
};
const bool: Check = (v) => (v === "true" || v === "false" ? null : "must be true or false");

/** Topic config keys strand accepts. Stored in the registry; applied where strand implements them. */
export const topicConfigChecks: Record<string, Check> = {
  "cleanup.policy": oneOf("delete", "compact"),
  "compression.type": oneOf("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"),
  "delete.retention.ms": long(0),
  "file.delete.delay.ms": long(0),
  "flush.messages": long(1),
  "flush.ms": long(0),
  "index.interval.bytes": long(0),
  "max.compaction.lag.ms": long(1),
  "max.message.bytes": long(0),
  "message.timestamp.type": oneOf("CreateTime", "LogAppendTime"),
  "min.cleanable.dirty.ratio": (v) => (Number(v) >= 0 && Number(v) <= 1 ? null : "must be between 0 and 1"),
  "min.compaction.lag.ms": long(0),
  "min.insync.replicas": long(1),
  "preallocate": bool,
  "retention.bytes": long(-1),
  "retention.ms": long(-1),
  "segment.bytes": long(14),
  "segment.index.bytes": long(8),
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
  };
}
