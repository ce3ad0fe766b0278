// What request handlers may use. The Broker builds one of these; handlers receive it and stay
// small: they translate wire structs to calls on these services and back.

import type { Authorizer } from "../authorizer/mod.ts";
import type { ConfigAdmin, ControllerChannel, KafkaController, TopicAdmin } from "../controller/mod.ts";
import type { Coordinator, ProducerIdManager, TransactionCoordinator } from "../coordinator/mod.ts";
import type { LogManager } from "../log/mod.ts";
import type { Clock } from "../platform/mod.ts";
import type { Registry } from "../registry/mod.ts";
import type { ReplicaManager } from "../replication/mod.ts";
import type { Logger } from "../util/mod.ts";
import type { BrokerConfig } from "./config.ts";
import type { ControllerMutationQuotaManager } from "./client_quota_manager.ts";
import type { ControlFence } from "./control_fence.ts";
import type { DynamicBrokerConfig } from "./dynamic_config.ts";
import type { FetchSessionCache } from "./fetch_session.ts";
import type { MetadataCache } from "./metadata_cache.ts";
import type { InterBrokerConnections } from "./txn_marker_sender.ts";

export interface BrokerServices {
  /** Resolves a host name (an ip quota entity may name a host, as Kafka's InetAddress.getByName takes). */
  resolveHost?: (name: string) => Promise<string | null>;
  /** server.properties as parsed at start-up (the static configs). */
  config: BrokerConfig;
  /** The dynamic broker configs (the log defaults changed at run time) and the merged config. */
  dynamicConfig: DynamicBrokerConfig;
  brokerId: number;
  metadata: MetadataCache;
  replicaManager: ReplicaManager;
  /** The log dirs and their logs (DescribeLogDirs). */
  logManager: LogManager;
  topicAdmin: TopicAdmin;
  configAdmin: ConfigAdmin;
  coordinator: Coordinator;
  /** Producer ids for InitProducerId, in blocks from /latest_producer_id_block. */
  producerIds: ProducerIdManager;
  /** Creates __consumer_offsets if it does not exist; true once it is in the metadata. */
  ensureOffsetsTopic(): Promise<boolean>;
  /** Applies the controller's LeaderAndIsr / UpdateMetadata / StopReplica here (local_channel.ts). */
  controlPlane: ControllerChannel;
  /** This broker's controller (active or not): ControlledShutdown, ElectLeaders, reassignments. */
  controller: KafkaController;
  /**
   * Leader election by the active controller: this broker's own when it is the controller, else
   * an ElectLeaders request to it (the admin API's elect-leader route).
   */
  electLeaders(electionType: 0 | 1, partitions: { topic: string; partition: number }[]): Promise<
    { topic: string; partition: number; errorCode: number; errorMessage: string | null }[]
  >;
  /** The czxid of this broker's /brokers/ids/<id> registration (Kafka's broker epoch). */
  brokerEpoch(): bigint;
  /** Checks a control request's controller and broker epochs against the registry (control_fence.ts). */
  controlFence: ControlFence;
  /** For state kept in the registry by old clients (OffsetCommit v0). */
  registry: Registry;
  clock: Clock;
  logger: Logger;
  /**
   * The ACL authorizer (`authorizer.class.name`), or null when none is configured: then every
   * API a listener accepts is allowed, except the inter-broker ones (see authorize.ts).
   */
  authorizer: Authorizer | null;
  /**
   * controller_mutation_rate (KIP-599) for CreateTopics, CreatePartitions and DeleteTopics;
   * absent or null: not enforced.
   */
  controllerMutationQuota?: ControllerMutationQuotaManager | null;
  /**
   * The transaction coordinator (txn_wiring.ts); absent or null: transactions are not served
   * (the handlers of AddPartitionsToTxn, AddOffsetsToTxn and EndTxn answer COORDINATOR_NOT_AVAILABLE).
   */
  txnCoordinator?: TransactionCoordinator | null;
  /** Creates __transaction_state if it does not exist; true once it is in the metadata (FindCoordinator key type 1). */
  ensureTransactionTopic?: () => Promise<boolean>;
  /** The coordinator's WriteTxnMarkers connections to partition leaders, closed at shutdown. */
  txnMarkerSender?: { shutdown(): void } | null;
  /** Connections to transaction coordinators for KIP-890's verification of transactional produce (txn_verify.ts). */
  txnVerifyConnections?: InterBrokerConnections | null;
  /** Incremental fetch sessions (KIP-227, fetch_session.ts); absent or null: every fetch is sessionless. */
  fetchSessions?: FetchSessionCache | null;
}

/** Thrown by a handler when Kafka would close the connection (e.g. acks=0 produce that failed). */
export class CloseConnection extends Error {
  override name = "CloseConnection";
}
