// The controller's channel to brokers: what Kafka sends as LeaderAndIsr (4), UpdateMetadata (6)
// and StopReplica (5). The local implementation applies them to this process's broker; the
// remote one (controller_channel.ts) sends them over the wire to the other brokers.
// The controller sends without waiting for answers: a channel keeps each broker's requests in
// order, and a slow or dead broker must not stall the controller.

import type { PartitionState } from "../replication/mod.ts";
import type { PartitionError } from "./control_requests.ts";

/** One of a broker's listeners, as its registration (and UpdateMetadata v3+) names it. */
export interface ListenerEndpoint {
  listener: string;
  host: string;
  port: number;
  securityProtocol: string;
}

export interface BrokerInfo {
  id: number;
  /** Where brokers reach it: its endpoint on the inter-broker listener. */
  host: string;
  port: number;
  rack: string | null;
  /** The czxid of its /brokers/ids/<id> znode (Kafka's broker epoch): a new one per registration. */
  epoch: bigint;
  /** Every listener it has, for clients (each is answered with the listener it came in on). */
  endpoints?: ListenerEndpoint[];
}

export interface TopicInfo {
  name: string;
  topicId: Uint8Array;
  partitions: PartitionState[];
  configs: Record<string, string>;
  /**
   * The mzxid of /config/topics/<t> when `configs` was read (-1 for none): a broker keeps the
   * newer of this and what its config change watcher read since.
   */
  configsZxid: bigint;
}

export interface ControllerChannel {
  /** `liveBrokers`: where the named leaders are (Kafka's liveLeaders), so followers can fetch. */
  leaderAndIsr(brokerId: number, controllerEpoch: number, topics: TopicInfo[], liveBrokers: BrokerInfo[]): Promise<void>;
  updateMetadata(
    brokerId: number,
    controllerEpoch: number,
    controllerId: number,
    brokers: BrokerInfo[],
    topics: TopicInfo[],
    deletedTopics: string[],
  ): Promise<void>;
  stopReplica(
    brokerId: number,
    controllerEpoch: number,
    partitions: { topic: string; partition: number }[],
    deletePartitions: boolean,
  ): Promise<void>;
  /**
   * Optional: leaderAndIsr that also answers, as a broker's LeaderAndIsr response does, the
   * partitions it could not apply with their error (KAFKA_STORAGE_ERROR: the replica's log dir is
   * offline). The local broker's channel has it; the controller learns offline replicas from it.
   */
  leaderAndIsrPartitionErrors?(brokerId: number, controllerEpoch: number, topics: TopicInfo[], liveBrokers: BrokerInfo[]): Promise<PartitionError[]>;
  /**
   * Optional: the controller found a broker registered (new, or again with a new epoch); requests
   * to it may start (RemoteControllerChannel opens its queue and connection).
   */
  addBroker?(info: BrokerInfo): void;
  /**
   * Optional: the broker's registration is gone (or replaced), or this controller resigned:
   * drop what is queued for it (RemoteControllerChannel closes its queue and connection).
   */
  removeBroker?(id: number): void;
}
