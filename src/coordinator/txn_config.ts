// The transaction coordinator's configuration, in Kafka's key names (TransactionStateManagerConfigs
// and TransactionLogConfigs, Kafka 3.8); the broker fills it from server.properties.

export interface TransactionConfig {
  /** transactional.id.expiration.ms (604800000): an idle transactional id is forgotten after this. */
  transactionalIdExpirationMs: number;
  /** transaction.max.timeout.ms (900000): the largest transaction timeout a producer may ask for. */
  transactionMaxTimeoutMs: number;
  /** transaction.state.log.num.partitions (50). */
  transactionLogNumPartitions: number;
  /** transaction.state.log.replication.factor (3; capped at the live brokers when the topic is made). */
  transactionLogReplicationFactor: number;
  /** transaction.state.log.segment.bytes (104857600). */
  transactionLogSegmentBytes: number;
  /** transaction.state.log.load.buffer.size (5242880): bytes read at once while loading a partition. */
  transactionLogLoadBufferSize: number;
  /** transaction.state.log.min.isr (2). */
  transactionLogMinInsyncReplicas: number;
  /** transaction.abort.timed.out.transaction.cleanup.interval.ms (10000). */
  abortTimedOutTransactionsIntervalMs: number;
  /** transaction.remove.expired.transaction.cleanup.interval.ms (3600000). */
  removeExpiredTransactionalIdsIntervalMs: number;
}

export const defaultTransactionConfig: TransactionConfig = {
  transactionalIdExpirationMs: 7 * 24 * 3_600_000,
  transactionMaxTimeoutMs: 15 * 60_000,
  transactionLogNumPartitions: 50,
  transactionLogReplicationFactor: 3,
  transactionLogSegmentBytes: 104_857_600,
  transactionLogLoadBufferSize: 5 * 1024 * 1024,
  transactionLogMinInsyncReplicas: 2,
  abortTimedOutTransactionsIntervalMs: 10_000,
  removeExpiredTransactionalIdsIntervalMs: 3_600_000,
};

export const TRANSACTION_STATE_TOPIC = "__transaction_state";

/**
 * The topic configs Kafka forces on __transaction_state (TransactionStateManager.transactionTopicConfigs):
 * compacted, uncompressed, no unclean leader election.
 */
export function transactionTopicConfigs(c: TransactionConfig): Record<string, string> {
  return {
    "unclean.leader.election.enable": "false",
    "compression.type": "uncompressed",
    "cleanup.policy": "compact",
    "min.insync.replicas": String(c.transactionLogMinInsyncReplicas),
    "segment.bytes": String(c.transactionLogSegmentBytes),
  };
}
