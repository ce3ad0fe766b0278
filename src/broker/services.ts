// What request handlers may use. The Broker builds one of these; handlers receive it and stay
// small: they translate wire structs to calls on these services and back.

import type { Clock } from "../platform/types.ts";
import type { ReplicaManager } from "../replication/replica_manager.ts";
import type { Logger } from "../util/logger.ts";
import type { BrokerConfig } from "./config.ts";
import type { MetadataCache } from "./metadata_cache.ts";

export interface TopicOutcome {
  errorCode: number;
  errorMessage: string | null;
}

export interface CreateTopicSpec {
  name: string;
  numPartitions: number;
  replicationFactor: number;
  /** Explicit replica assignment by partition, or null to let the controller's rules assign. */
  assignment: Map<number, number[]> | null;
  configs: Record<string, string>;
}

/** Topic creation and deletion as Kafka's AdminZkClient does it: through the registry. */
export interface TopicAdmin {
  createTopic(spec: CreateTopicSpec, validateOnly: boolean, timeoutMs: number): Promise<TopicOutcome>;
  deleteTopic(name: string, timeoutMs: number): Promise<TopicOutcome>;
}

export interface BrokerServices {
  config: BrokerConfig;
  brokerId: number;
  metadata: MetadataCache;
  replicaManager: ReplicaManager;
  topicAdmin: TopicAdmin;
  clock: Clock;
  logger: Logger;
}

/** Thrown by a handler when Kafka would close the connection (e.g. acks=0 produce that failed). */
export class CloseConnection extends Error {
  override name = "CloseConnection";
}
