// The controller's channel to the broker in the same process: LeaderAndIsr, UpdateMetadata and
// StopReplica applied directly, with the epochs checked as a remote broker would check them.
// Deleted topics named by UpdateMetadata are passed on (to the group coordinator, which drops
// their committed offsets), as Kafka's handleUpdateMetadataRequest calls onPartitionsDeleted.

import type { BrokerInfo, ControllerChannel, TopicInfo } from "../controller/mod.ts";
import { effectiveLogConfig, type TopicLogConfig } from "../log/mod.ts";
import type { ReplicaManager } from "../replication/mod.ts";
import { ErrorCode, KafkaError } from "../util/mod.ts";
import type { MetadataCache } from "./metadata_cache.ts";

export class LocalControllerChannel implements ControllerChannel {
  private controllerEpoch = 0;

  constructor(
    private readonly brokerId: number,
    private readonly metadata: MetadataCache,
    private readonly replicaManager: ReplicaManager,
    private readonly logDefaults: TopicLogConfig,
    private readonly onTopicsDeleted: (topics: string[]) => void = () => {},
  ) {}

  private checkEpoch(epoch: number): void {
    if (epoch < this.controllerEpoch) {
      throw new KafkaError(ErrorCode.STALE_CONTROLLER_EPOCH, `controller epoch ${epoch} is older than ${this.controllerEpoch}`);
    }
    this.controllerEpoch = epoch;
  }

  leaderAndIsr(brokerId: number, controllerEpoch: number, topics: TopicInfo[]): Promise<void> {
    this.checkEpoch(controllerEpoch);
    for (const t of topics) {
      const config = effectiveLogConfig(this.logDefaults, this.metadata.offerTopicConfigs(t.name, t.configs, t.configsZxid));
      for (const p of t.partitions) {
        if (p.replicas.includes(brokerId)) this.replicaManager.becomeLeaderOrFollower(p, config);
      }
    }
    return Promise.resolve();
  }

  updateMetadata(
    _brokerId: number,
    controllerEpoch: number,
    controllerId: number,
    brokers: BrokerInfo[],
    topics: TopicInfo[],
    deletedTopics: string[],
  ): Promise<void> {
    this.checkEpoch(controllerEpoch);
    this.metadata.controllerId = controllerId;
    this.metadata.setBrokers(brokers);
    for (const name of deletedTopics) this.metadata.removeTopic(name);
    if (deletedTopics.length > 0) this.onTopicsDeleted(deletedTopics);
    for (const t of topics) {
      const configs = this.metadata.offerTopicConfigs(t.name, t.configs, t.configsZxid);
      this.metadata.updateTopic({ name: t.name, topicId: t.topicId, isInternal: false, partitions: t.partitions, configs });
    }
    return Promise.resolve();
  }

  stopReplica(
    _brokerId: number,
    controllerEpoch: number,
    partitions: { topic: string; partition: number }[],
    deletePartitions: boolean,
  ): Promise<void> {
    this.checkEpoch(controllerEpoch);
    for (const p of partitions) this.replicaManager.stopReplica(p.topic, p.partition, deletePartitions);
    return Promise.resolve();
  }

  get localBrokerId(): number {
    return this.brokerId;
  }
}
