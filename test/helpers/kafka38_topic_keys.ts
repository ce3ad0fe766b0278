// Kafka 3.8's topic config names (LogConfig.configNames(), sorted), for the tests that check
// strand accepts and describes exactly these.
/** Every topic key a Kafka 3.8 broker accepts and describes. */
export const kafka38TopicKeys: readonly string[] = [
  "cleanup.policy", "compression.gzip.level", "compression.lz4.level", "compression.type", "compression.zstd.level",
  "delete.retention.ms", "file.delete.delay.ms", "flush.messages", "flush.ms", "follower.replication.throttled.replicas",
  "index.interval.bytes", "leader.replication.throttled.replicas", "local.retention.bytes", "local.retention.ms",
  "max.compaction.lag.ms", "max.message.bytes", "message.downconversion.enable", "message.format.version",
  "message.timestamp.after.max.ms", "message.timestamp.before.max.ms", "message.timestamp.difference.max.ms",
  "message.timestamp.type", "min.cleanable.dirty.ratio", "min.compaction.lag.ms", "min.insync.replicas", "preallocate",
  "remote.storage.enable", "retention.bytes", "retention.ms", "segment.bytes", "segment.index.bytes", "segment.jitter.ms",
  "segment.ms", "unclean.leader.election.enable",
];
