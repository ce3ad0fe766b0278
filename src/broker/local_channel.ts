// The broker's side of the controller's requests: LeaderAndIsr, UpdateMetadata and StopReplica
// applied to this broker's ReplicaManager and MetadataCache. The controller in the same process
// calls it directly (through the composite channel the Broker wires); the wire handlers
// (api/04_leader_and_isr.ts, 05_stop_replica.ts, 06_update_metadata.ts) call the same methods
// for a controller elsewhere, so both paths check the same epochs.
//
// Invariants:
// - A request from an older controller epoch than the newest seen is refused whole
//   (STALE_CONTROLLER_EPOCH); per partition, a state older than the one held is skipped
//   (ReplicaManager.becomeLeaderOrFollower).
// - A follower reaches its leader only at an address the registry holds: the metadata's live
//   brokers (from the controller), the live brokers the in-process controller passes (read from
//   the registry), else the leader's own /brokers/ids/<id> registration, read before the
//   partitions are applied, so a new follower can fetch before UpdateMetadata arrives. The wire
//   handler passes no live brokers: a LeaderAndIsr's own liveLeaders addresses are never used.
//   A leader with no registration (not a live broker) is not followed: the partition still
//   becomes a follower (it stops leading, as the controller decided), its fetcher finds no
//   endpoint and waits until the metadata names the leader; a warning says so.
// - Only controller epochs confirmed against the registry reach this class from the wire
//   (control_fence.ts); the newest one seen is adopted here, synchronously, at apply time.
// - A topic's config overrides are not on the wire: a LeaderAndIsr for a topic this broker has no
//   configs for reads /config/topics/<t> first through ConfigAdmin (Kafka's LogManager reads them
//   from ZooKeeper when it creates a log), so min.insync.replicas and the log settings hold from
//   the first append.
// - Deleted topics named by UpdateMetadata are passed on (to the group coordinator, which drops
//   their committed offsets), as Kafka's handleUpdateMetadataRequest calls onPartitionsDeleted.
// - Requests are applied one at a time, in the order they were made (the remote channel keeps
//   that order per broker; here a promise chain does): a LeaderAndIsr or StopReplica of
//   thousands of partitions gives the event loop back between partitions (TimeSlice), and a
//   later request must not overtake it (a StopReplica that deletes a topic whose creation is
//   still under way would leave the rest of its logs behind). Meanwhile each partition is either
//   applied whole or not yet: a produce to one not yet created gets UNKNOWN_TOPIC_OR_PARTITION,
//   which clients retry. The controller epoch is checked again after every yield.

import type { BrokerInfo, ConfigAdmin, ControllerChannel, PartitionError, TopicInfo } from "../controller/mod.ts";
import { effectiveLogConfig, type TopicLogConfig } from "../log/mod.ts";
import type { ReplicaManager } from "../replication/mod.ts";
import { ErrorCode, KafkaError, logCreationsInFlightMax, type Logger, silentLogger, TimeSlice } from "../util/mod.ts";
import type { BrokerEndpoint, MetadataCache } from "./metadata_cache.ts";

export class LocalControllerChannel implements ControllerChannel {
  private controllerEpoch = 0;
  /** Leaders' endpoints from LeaderAndIsr (Kafka's liveLeaders), for brokers the metadata lacks. */
  private leaderEndpoints = new Map<number, BrokerEndpoint>();
  /** The request being applied (and those before it): the next one starts after it. */
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly brokerId: number,
    private readonly metadata: MetadataCache,
    private readonly replicaManager: ReplicaManager,
    private readonly logDefaults: TopicLogConfig,
    private readonly configAdmin: ConfigAdmin | null,
    private readonly onTopicsDeleted: (topics: string[]) => void = () => {},
    private readonly leaders: {
      /** Broker `id`'s registration on the inter-broker listener; null when it is not registered. */
      registeredBroker?: (id: number) => Promise<BrokerEndpoint | null>;
      logger?: Logger;
    } = {},
  ) {}

  /** The newest controller epoch applied (what a request's epoch must not be below). */
  get controllerEpochSeen(): number {
    return this.controllerEpoch;
  }

  private checkEpoch(epoch: number): void {
    if (epoch < this.controllerEpoch) {
      throw new KafkaError(ErrorCode.STALE_CONTROLLER_EPOCH, `controller epoch ${epoch} is older than ${this.controllerEpoch}`);
    }
    this.controllerEpoch = epoch;
  }

  /** Where broker `id` listens: the metadata's live brokers, else a LeaderAndIsr's leaders. */
  brokerEndpoint(id: number): BrokerEndpoint | undefined {
    return this.metadata.getBroker(id) ?? this.leaderEndpoints.get(id);
  }

  /** Runs fn after every request made before it has been applied. */
  private inOrder(fn: () => Promise<void>): Promise<void> {
    const run = this.tail.then(fn);
    this.tail = run.catch(() => {});
    return run;
  }

  leaderAndIsr(brokerId: number, controllerEpoch: number, topics: TopicInfo[], liveBrokers: BrokerInfo[]): Promise<void> {
    return this.leaderAndIsrPartitionErrors(brokerId, controllerEpoch, topics, liveBrokers).then(() => {});
  }

  /** leaderAndIsr, answering the partitions not applied with their code (KAFKA_STORAGE_ERROR: offline dir). */
  leaderAndIsrPartitionErrors(brokerId: number, controllerEpoch: number, topics: TopicInfo[], liveBrokers: BrokerInfo[]): Promise<PartitionError[]> {
    const errors: PartitionError[] = [];
    return this.inOrder(() => this.applyLeaderAndIsr(brokerId, controllerEpoch, topics, liveBrokers, errors)).then(() => errors);
  }

  private async applyLeaderAndIsr(brokerId: number, controllerEpoch: number, topics: TopicInfo[], liveBrokers: BrokerInfo[], errors: PartitionError[]): Promise<void> {
    this.checkEpoch(controllerEpoch);
    for (const b of liveBrokers) this.leaderEndpoints.set(b.id, { id: b.id, host: b.host, port: b.port, rack: b.rack });
    const configs = new Map<string, Record<string, string>>();
    for (const t of topics) configs.set(t.name, await this.topicConfigs(t));
    await this.resolveLeaders(brokerId, controllerEpoch, topics);
    // Re-checked after the reads: a newer controller may have spoken meanwhile.
    this.checkEpoch(controllerEpoch);
    const slice = new TimeSlice();
    for (const t of topics) {
      const config = effectiveLogConfig(this.logDefaults, configs.get(t.name)!);
      const mine = t.partitions.filter((p) => p.replicas.includes(brokerId) || (p.addingReplicas ?? []).includes(brokerId));
      for (let i = 0; i < mine.length;) {
        // New logs' files are created off the event loop, a group at a time, then applied.
        const group = mine.slice(i, i + logCreationsInFlightMax);
        await this.replicaManager.prepareLogs(group);
        this.checkEpoch(controllerEpoch);
        for (const p of group) {
          if (slice.due) {
            await slice.yield();
            this.checkEpoch(controllerEpoch);
          }
          const code = this.replicaManager.becomeLeaderOrFollower(p, config);
          if (code !== ErrorCode.NONE) errors.push({ topic: t.name, partition: p.partition, errorCode: code });
          i++;
        }
      }
    }
  }

  /**
   * Reads the registration of each leader this broker is told to follow that neither the metadata
   * nor an earlier read knows; a leader with none is left unknown (its fetcher waits) and logged.
   */
  private async resolveLeaders(brokerId: number, controllerEpoch: number, topics: TopicInfo[]): Promise<void> {
    const lookup = this.leaders.registeredBroker;
    if (lookup === undefined) return;
    const wanted = new Set<number>();
    for (const t of topics) {
      for (const p of t.partitions) {
        if (p.leader < 0 || p.leader === brokerId || !(p.replicas.includes(brokerId) || (p.addingReplicas ?? []).includes(brokerId))) continue;
        if (this.brokerEndpoint(p.leader) === undefined) wanted.add(p.leader);
      }
    }
    for (const id of wanted) {
      const e = await lookup(id);
      if (e !== null) this.leaderEndpoints.set(id, e);
      else {
        (this.leaders.logger ?? silentLogger).warn(
          { leader: id, controllerEpoch },
          "LeaderAndIsr names a leader that is not a registered broker: not fetching from it until the metadata names it",
        );
      }
    }
  }

  /** The topic's overrides: the controller's (in process), the cache's, or the registry's. */
  private async topicConfigs(t: TopicInfo): Promise<Record<string, string>> {
    if (t.configsZxid >= 0n || this.configAdmin === null || this.metadata.hasTopicConfigs(t.name)) {
      return this.metadata.offerTopicConfigs(t.name, t.configs, t.configsZxid);
    }
    const read = await this.configAdmin.readTopicConfig(t.name);
    return this.metadata.offerTopicConfigs(t.name, read.configs, read.zxid);
  }

  // A refused epoch is a rejected promise, as from the wire, never a synchronous throw.
  updateMetadata(
    _brokerId: number,
    controllerEpoch: number,
    controllerId: number,
    brokers: BrokerInfo[],
    topics: TopicInfo[],
    deletedTopics: string[],
  ): Promise<void> {
    return this.inOrder(async () => this.applyUpdateMetadata(controllerEpoch, controllerId, brokers, topics, deletedTopics));
  }

  private applyUpdateMetadata(
    controllerEpoch: number,
    controllerId: number,
    brokers: BrokerInfo[],
    topics: TopicInfo[],
    deletedTopics: string[],
  ): void {
    this.checkEpoch(controllerEpoch);
    this.metadata.controllerId = controllerId;
    this.metadata.setBrokers(brokers);
    for (const name of deletedTopics) this.metadata.removeTopic(name);
    if (deletedTopics.length > 0) this.onTopicsDeleted(deletedTopics);
    for (const t of topics) {
      const configs = this.metadata.offerTopicConfigs(t.name, t.configs, t.configsZxid);
      this.metadata.updateTopic({ name: t.name, topicId: t.topicId, isInternal: false, partitions: t.partitions, configs });
    }
  }

  stopReplica(
    _brokerId: number,
    controllerEpoch: number,
    partitions: { topic: string; partition: number }[],
    deletePartitions: boolean,
  ): Promise<void> {
    return this.inOrder(async () => {
      this.checkEpoch(controllerEpoch);
      const slice = new TimeSlice();
      for (const p of partitions) {
        if (slice.due) {
          await slice.yield();
          this.checkEpoch(controllerEpoch);
        }
        this.replicaManager.stopReplica(p.topic, p.partition, deletePartitions);
      }
      // The deleted logs' dirs are renamed off the event loop: the next request (a LeaderAndIsr
      // creating the same topic again) starts once their paths are free.
      if (deletePartitions) await this.replicaManager.logDeletionsSettled();
    });
  }

  get localBrokerId(): number {
    return this.brokerId;
  }
}
