// Wires the transaction coordinator to this broker: its __transaction_state log (through the
// ReplicaManager, acks=all as Kafka's TransactionLog enforces), its leadership of the
// __transaction_state partitions (load at the partition's leader epoch, the coordinator epoch;
// unload on loss), the partition leaders its markers go to (the MetadataCache), and the creation of
// __transaction_state on first use (FindCoordinator key type 1, next slice).
//
// Not wired into broker.ts yet: no request handler reaches the coordinator until the partition
// side of transactions (markers, the last stable offset) lands; see CONTRACT15.md.

import type { TopicAdmin } from "../controller/mod.ts";
import {
  type MarkerLeaderLookup,
  TRANSACTION_STATE_TOPIC,
  TransactionCoordinator,
  transactionTopicConfigs,
  type TxnMarkerSender,
  TxnStateManager,
} from "../coordinator/mod.ts";
import type { Platform } from "../platform/mod.ts";
import type { ReplicaManager } from "../replication/mod.ts";
import type { Logger } from "../util/mod.ts";
import type { BrokerConfig } from "./config.ts";
import { internalTopicEnsurer, ReplicaTopicLog } from "./group_wiring.ts";
import type { MetadataCache } from "./metadata_cache.ts";

/**
 * How long a __transaction_state append waits for the ISR before answering COORDINATOR_NOT_AVAILABLE
 * (the client retries). Kafka waits up to the transaction's own timeout; request.timeout.ms's
 * default is the bound here, so a pending state is never held longer than a client waits.
 */
const TXN_STATE_APPEND_TIMEOUT_MS = 30_000;

export interface TxnWiringDeps {
  /** ProducerIdManager.generateProducerId (helper I's, src/coordinator/producer_id_manager.ts). */
  generateProducerId: () => Promise<bigint>;
  /** WriteTxnMarkers to partition leaders (the inter-broker client, next slice). */
  markerSender: TxnMarkerSender;
  leaderOf: MarkerLeaderLookup;
  /**
   * __transaction_state's partition count when the topic exists (the metadata's, or the registry's
   * as Kafka reads it); undefined: transaction.state.log.num.partitions. Asked at each election.
   */
  transactionTopicPartitionCount?: () => number | undefined;
}

export function createTxnCoordinator(
  platform: Platform,
  config: BrokerConfig,
  replicaManager: ReplicaManager,
  logger: Logger,
  deps: TxnWiringDeps,
): TransactionCoordinator {
  const log = new ReplicaTopicLog(
    replicaManager,
    TRANSACTION_STATE_TOPIC,
    Math.max(config.messageMaxBytes, config.transactions.transactionLogSegmentBytes),
    TXN_STATE_APPEND_TIMEOUT_MS,
  );
  const txnLogger = logger.child({ component: "txn-coordinator" });
  const state = new TxnStateManager(log, config.transactions, platform.clock, txnLogger);
  const coordinator = new TransactionCoordinator(state, {
    ...deps,
    offsetsTopicNumPartitions: config.groupCoordinator.offsetsTopicNumPartitions,
  }, platform.clock, txnLogger);
  replicaManager.leadershipListeners.push((topic, partition, isLeader) => {
    if (topic !== TRANSACTION_STATE_TOPIC) return;
    if (isLeader) {
      // The coordinator epoch is the partition's leader epoch (Kafka takes it from LeaderAndIsr).
      const epoch = replicaManager.getPartition(topic, partition)?.leaderEpoch ?? 0;
      const count = deps.transactionTopicPartitionCount?.();
      if (count !== undefined) state.setPartitionCount(count);
      coordinator.onElection(partition, epoch).catch((e) => logger.error({ partition, err: String(e) }, "loading transaction state partition failed"));
    } else coordinator.onResignation(partition);
  });
  return coordinator;
}

/** Markers go to each partition's leader as this broker's metadata knows it. */
export function metadataLeaderLookup(metadata: MetadataCache): MarkerLeaderLookup {
  return (topic, partition) => {
    const p = metadata.getTopic(topic)?.partitions.find((s) => s.partition === partition);
    if (p === undefined) return null;
    return p.leader >= 0 && metadata.getBroker(p.leader) !== undefined ? p.leader : -1;
  };
}

/** Makes sure __transaction_state exists, created as Kafka creates it (compacted, uncompressed, transaction.state.log.*). */
export function transactionTopicEnsurer(
  config: BrokerConfig,
  metadata: MetadataCache,
  topicAdmin: TopicAdmin,
  logger: Logger,
): () => Promise<boolean> {
  const tc = config.transactions;
  return internalTopicEnsurer({
    name: TRANSACTION_STATE_TOPIC,
    numPartitions: tc.transactionLogNumPartitions,
    replicationFactor: tc.transactionLogReplicationFactor,
    replicationFactorKey: "transaction.state.log.replication.factor",
    // With the replication factor capped (a single node), min.insync.replicas is capped with it, or
    // no append could ever succeed (Kafka asks the operator to lower both instead).
    configs: (rf) => ({ ...transactionTopicConfigs(tc), "min.insync.replicas": String(Math.min(tc.transactionLogMinInsyncReplicas, rf)) }),
  }, metadata, topicAdmin, logger);
}
