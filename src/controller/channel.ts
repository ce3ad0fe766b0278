// The controller's channel to brokers: what Kafka sends as LeaderAndIsr (4), UpdateMetadata (6)
// and StopReplica (5). The local implementation applies them to this process's broker; the
// replication issue adds one that sends the requests over the wire to other brokers.

import type { PartitionState } from "../replication/mod.ts";

export interface BrokerInfo {
  id: number;
  host: string;
  port: number;
  rack: string | null;
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
  leaderAndIsr(brokerId: number, controllerEpoch: number, topics: TopicInfo[]): Promise<void>;
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
}
