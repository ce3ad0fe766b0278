// The group coordinator's configuration, in Kafka's key names (KafkaConfig / GroupCoordinatorConfig
// and OffsetConfig); the broker fills it from server.properties.

export interface GroupCoordinatorConfig {
  /** group.min.session.timeout.ms (6000) and group.max.session.timeout.ms (1800000). */
  groupMinSessionTimeoutMs: number;
  groupMaxSessionTimeoutMs: number;
  /** group.initial.rebalance.delay.ms (3000): wait for more members before a new group's first rebalance. */
  groupInitialRebalanceDelayMs: number;
  /** group.max.size (Integer.MAX_VALUE). */
  groupMaxSize: number;
  /** offsets.topic.num.partitions (50). */
  offsetsTopicNumPartitions: number;
  /** offsets.topic.replication.factor (3; capped at the live brokers when the topic is made). */
  offsetsTopicReplicationFactor: number;
  /** offsets.topic.segment.bytes (104857600). */
  offsetsTopicSegmentBytes: number;
  /** offsets.retention.minutes (10080) in ms. */
  offsetsRetentionMs: number;
  /** offsets.retention.check.interval.ms (600000). */
  offsetsRetentionCheckIntervalMs: number;
  /** offset.metadata.max.bytes (4096). */
  offsetMetadataMaxBytes: number;
}

export const defaultGroupCoordinatorConfig: GroupCoordinatorConfig = {
  groupMinSessionTimeoutMs: 6000,
  groupMaxSessionTimeoutMs: 1_800_000,
  groupInitialRebalanceDelayMs: 3000,
  groupMaxSize: 2 ** 31 - 1,
  offsetsTopicNumPartitions: 50,
  offsetsTopicReplicationFactor: 3,
  offsetsTopicSegmentBytes: 104_857_600,
  offsetsRetentionMs: 10080 * 60_000,
  offsetsRetentionCheckIntervalMs: 600_000,
  offsetMetadataMaxBytes: 4096,
};

export const OFFSETS_TOPIC = "__consumer_offsets";
