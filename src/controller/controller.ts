// KafkaController: elected through the ephemeral /controller znode; while active it owns
// partition state: it gives new topics' partitions a leader and ISR, deletes topics queued under
// /admin/delete_topics, and tells brokers through the ControllerChannel (LeaderAndIsr,
// UpdateMetadata, StopReplica).
//
// Invariants:
// - Every event (election, topic change, deletion, broker change) runs on one queue, in order; no
//   two handlers interleave, so a check and the write it guards are never separated by another
//   event.
// - /controller_epoch is bumped on every election; each partition-state write is a multi that
//   checks the epoch znode's version, so a deposed controller's writes fail.
// - A partition's leader is the first live replica of its ISR (in assignment order); the leader
//   epoch grows on every leader change.
// - A new partition's state carries isNew only in the LeaderAndIsr that creates it (Kafka's rule):
//   a broker with an offline log dir may create its log elsewhere only then.
// - A broker that loses a log dir writes /log_dir_event_notification/log_dir_event_<seq>; the
//   controller reads and deletes each (Kafka's LogDirEventNotification). For now it only logs
//   them: the broker itself reports its offline replicas (Metadata's offlineReplicas) and answers
//   KAFKA_STORAGE_ERROR; moving leadership to another replica arrives with replication.

import type { Clock } from "../platform/mod.ts";
import {
  ControllerEpochZNode,
  ControllerZNode,
  DeleteTopicsTopicZNode,
  DeleteTopicsZNode,
  LogDirEventNotificationSequenceZNode,
  LogDirEventNotificationZNode,
  type Registry,
  RegistryError,
  TopicPartitionStateZNode,
  TopicPartitionsZNode,
  TopicPartitionZNode,
  ConfigEntityZNode,
  ConfigType,
  TopicZNode,
} from "../registry/mod.ts";
import type { PartitionState } from "../replication/mod.ts";
import type { Logger } from "../util/mod.ts";
import type { BrokerInfo, ControllerChannel, TopicInfo } from "./channel.ts";
import {
  deleteRecursive,
  getDataOrNull,
  readAssignment,
  readLiveBrokers,
  readPartitionState,
  readTopicConfigVersioned,
  readTopicNames,
} from "./zk_reads.ts";

export interface ControllerOptions {
  brokerId: number;
  /** Listener name whose endpoint brokers advertise to clients. */
  listenerName: string;
}

export class KafkaController {
  private queue: Promise<void> = Promise.resolve();
  private active = false;
  private stopped = false;
  epoch = 0;
  private epochZkVersion = -1;
  private liveBrokers = new Map<number, BrokerInfo>();
  private topics = new Map<string, TopicInfo>();

  constructor(
    private readonly registry: Registry,
    private readonly channel: ControllerChannel,
    private readonly clock: Clock,
    private readonly options: ControllerOptions,
    private readonly logger: Logger,
  ) {}

  get isActive(): boolean {
    return this.active;
  }

  /** Runs an event on the controller's queue; errors are logged, never thrown into the queue. */
  private enqueue(name: string, fn: () => Promise<void>): Promise<void> {
    const run = this.queue.then(async () => {
      if (this.stopped) return;
      try {
        await fn();
      } catch (e) {
        this.logger.error({ event: name, err: e instanceof Error ? e.stack : String(e) }, "controller event failed");
      }
    });
    this.queue = run;
    return run;
  }

  startup(): Promise<void> {
    return this.enqueue("Startup", () => this.elect());
  }

  /**
   * The registry replaced an expired session: /controller went with the old one, so resign and
   * run for election again (Kafka's RegisterBrokerAndReelect). Watches carried over.
   */
  onNewSession(): Promise<void> {
    return this.enqueue("Reelect", async () => {
      this.active = false;
      await this.elect();
    });
  }

  async shutdown(): Promise<void> {
    await this.queue;
    this.stopped = true;
    if (this.active) {
      this.active = false;
      try {
        await this.registry.delete(ControllerZNode.path);
      } catch {
        // Gone already, or the session is closing: either way another broker can take over.
      }
    }
  }

  private async elect(): Promise<void> {
    const data = ControllerZNode.encode(this.options.brokerId, this.clock.nowMs());
    try {
      await this.registry.create(ControllerZNode.path, data, "ephemeral");
    } catch (e) {
      if (!(e instanceof RegistryError && e.code === "NodeExists")) throw e;
      const watch = () => void this.enqueue("ControllerChange", () => this.elect());
      const stat = await this.registry.exists(ControllerZNode.path, watch);
      if (stat === null) return void this.enqueue("ControllerChange", () => this.elect());
      this.logger.info({}, "another broker is the controller");
      return;
    }
    await this.bumpEpoch();
    this.active = true;
    this.logger.info({ controllerEpoch: this.epoch }, "elected controller");
    await this.onControllerFailover();
  }

  private async bumpEpoch(): Promise<void> {
    const current = await getDataOrNull(this.registry, ControllerEpochZNode.path);
    if (current === null) {
      await this.registry.create(ControllerEpochZNode.path, ControllerEpochZNode.encode(1));
      this.epoch = 1;
      this.epochZkVersion = 0;
      return;
    }
    const epoch = (ControllerEpochZNode.decode(current.data) ?? 0) + 1;
    const stat = await this.registry.setData(ControllerEpochZNode.path, ControllerEpochZNode.encode(epoch), current.stat.version);
    this.epoch = epoch;
    this.epochZkVersion = stat.version;
  }

  private async onControllerFailover(): Promise<void> {
    await this.refreshBrokers();
    const names = await readTopicNames(this.registry, () => void this.enqueue("TopicChange", () => this.onTopicChange()));
    for (const name of names) await this.loadTopic(name);
    const live = [...this.liveBrokers.keys()];
    for (const id of live) await this.sendLeaderAndIsr(id, [...this.topics.values()]);
    await this.sendUpdateMetadata([...this.topics.values()], []);
    clearIsNew(this.topics.values());
    await this.onDeleteTopics();
    await this.onLogDirEvents();
  }

  /** Reads and deletes the log dir failure notifications brokers wrote; logs each broker's. */
  private async onLogDirEvents(): Promise<void> {
    if (!this.active) return;
    const names = await this.registry.getChildren(
      LogDirEventNotificationZNode.path,
      () => void this.enqueue("LogDirEventNotification", () => this.onLogDirEvents()),
    );
    const brokers = new Set<number>();
    for (const name of names) {
      if (!name.startsWith(LogDirEventNotificationSequenceZNode.SequenceNumberPrefix)) continue;
      const path = `${LogDirEventNotificationZNode.path}/${name}`;
      const node = await getDataOrNull(this.registry, path);
      const brokerId = node === null ? null : LogDirEventNotificationSequenceZNode.decode(node.data);
      if (brokerId !== null) brokers.add(brokerId);
      try {
        await this.registry.delete(path);
      } catch (e) {
        if (!(e instanceof RegistryError && e.code === "NoNode")) throw e;
      }
    }
    if (brokers.size > 0) this.logger.warn({ brokers: [...brokers] }, "brokers reported log dir failures");
  }

  private async refreshBrokers(): Promise<void> {
    const brokers = await readLiveBrokers(this.registry, () => void this.enqueue("BrokerChange", () => this.onBrokerChange()));
    this.liveBrokers = new Map(brokers.map((b) => [b.id, this.toBrokerInfo(b)]));
  }

  private toBrokerInfo(b: { id: number; endpoints: { listenerName: string; host: string | null; port: number }[]; rack: string | null }): BrokerInfo {
    const e = b.endpoints.find((x) => x.listenerName === this.options.listenerName) ?? b.endpoints[0];
    return { id: b.id, host: e?.host ?? "", port: e?.port ?? -1, rack: b.rack };
  }

  /** Reads a topic's assignment and states, creating states for partitions that have none. */
  private async loadTopic(name: string): Promise<TopicInfo | null> {
    const assignment = await readAssignment(this.registry, name);
    if (assignment === null) {
      this.logger.warn({ topic: name }, "topic znode is missing or malformed; skipped");
      return null;
    }
    const { configs, zxid: configsZxid } = await readTopicConfigVersioned(this.registry, name);
    const partitions: PartitionState[] = [];
    for (const [p, a] of assignment.assignment) {
      const existing = await readPartitionState(this.registry, name, p);
      let state: PartitionState;
      if (existing === null) state = await this.initPartitionState(name, p, a.replicas, assignment.topicId);
      else {
        const l = existing.leaderAndIsr;
        state = {
          topic: name,
          partition: p,
          topicId: assignment.topicId ?? new Uint8Array(16),
          controllerEpoch: existing.controllerEpoch,
          leader: l.leader,
          leaderEpoch: l.leaderEpoch,
          isr: l.isr,
          replicas: a.replicas,
        };
        if (!this.liveBrokers.has(state.leader)) state = await this.electLeader(state);
      }
      partitions.push(state);
    }
    const info: TopicInfo = { name, topicId: assignment.topicId ?? new Uint8Array(16), partitions, configs, configsZxid };
    this.topics.set(name, info);
    return info;
  }

  private async initPartitionState(topic: string, partition: number, replicas: number[], topicId: Uint8Array | null): Promise<PartitionState> {
    const live = replicas.filter((r) => this.liveBrokers.has(r));
    const state: PartitionState = {
      topic,
      partition,
      topicId: topicId ?? new Uint8Array(16),
      controllerEpoch: this.epoch,
      leader: live[0] ?? -1,
      leaderEpoch: 0,
      isr: live,
      replicas,
      isNew: true,
    };
    await this.registry.ensurePath(TopicPartitionsZNode.path(topic));
    await this.registry.ensurePath(TopicPartitionZNode.path(topic, partition));
    await this.registry.multi([
      { op: "check", path: ControllerEpochZNode.path, version: this.epochZkVersion },
      { op: "create", path: TopicPartitionStateZNode.path(topic, partition), data: this.encodeState(state) },
    ]);
    return state;
  }

  /** Picks the first live ISR member (in assignment order) as leader, bumping the leader epoch. */
  private async electLeader(state: PartitionState): Promise<PartitionState> {
    const leader = state.replicas.find((r) => state.isr.includes(r) && this.liveBrokers.has(r)) ?? -1;
    const isr = leader === -1 ? state.isr : state.isr.filter((r) => this.liveBrokers.has(r));
    const next = { ...state, leader, isr, leaderEpoch: state.leaderEpoch + 1, controllerEpoch: this.epoch };
    await this.registry.multi([
      { op: "check", path: ControllerEpochZNode.path, version: this.epochZkVersion },
      { op: "setData", path: TopicPartitionStateZNode.path(state.topic, state.partition), data: this.encodeState(next) },
    ]);
    this.logger.info({ topic: state.topic, partition: state.partition, leader, leaderEpoch: next.leaderEpoch }, "elected leader");
    return next;
  }

  private encodeState(s: PartitionState): Uint8Array {
    return TopicPartitionStateZNode.encode({
      leaderAndIsr: { leader: s.leader, leaderEpoch: s.leaderEpoch, isr: s.isr, leaderRecoveryState: 0 },
      controllerEpoch: s.controllerEpoch,
    });
  }

  private async onTopicChange(): Promise<void> {
    if (!this.active) return;
    const names = await readTopicNames(this.registry, () => void this.enqueue("TopicChange", () => this.onTopicChange()));
    const added: TopicInfo[] = [];
    for (const name of names) {
      if (this.topics.has(name)) continue;
      const info = await this.loadTopic(name);
      if (info !== null) added.push(info);
    }
    if (added.length === 0) return;
    this.logger.info({ topics: added.map((t) => t.name) }, "new topics");
    for (const id of this.liveBrokers.keys()) await this.sendLeaderAndIsr(id, added);
    await this.sendUpdateMetadata(added, []);
    clearIsNew(added);
  }

  private async onDeleteTopics(): Promise<void> {
    if (!this.active) return;
    const queued = await this.registry.getChildren(
      DeleteTopicsZNode.path,
      () => void this.enqueue("TopicDeletion", () => this.onDeleteTopics()),
    );
    const deleted: string[] = [];
    for (const name of queued) {
      const info = this.topics.get(name);
      if (info !== undefined) {
        for (const id of this.liveBrokers.keys()) {
          const mine = info.partitions.filter((p) => p.replicas.includes(id)).map((p) => ({ topic: name, partition: p.partition }));
          if (mine.length > 0) await this.channel.stopReplica(id, this.epoch, mine, true);
        }
      }
      await deleteRecursive(this.registry, TopicZNode.path(name));
      await deleteRecursive(this.registry, ConfigEntityZNode.path(ConfigType.Topic, name));
      await deleteRecursive(this.registry, DeleteTopicsTopicZNode.path(name));
      this.topics.delete(name);
      deleted.push(name);
    }
    if (deleted.length === 0) return;
    this.logger.info({ topics: deleted }, "deleted topics");
    await this.sendUpdateMetadata([], deleted);
  }

  private async onBrokerChange(): Promise<void> {
    if (!this.active) return;
    const before = new Set(this.liveBrokers.keys());
    await this.refreshBrokers();
    const added = [...this.liveBrokers.keys()].filter((id) => !before.has(id));
    const removed = [...before].filter((id) => !this.liveBrokers.has(id));
    if (added.length === 0 && removed.length === 0) return;
    this.logger.info({ added, removed }, "brokers changed");
    const changed: TopicInfo[] = [];
    for (const t of this.topics.values()) {
      let touched = false;
      for (let i = 0; i < t.partitions.length; i++) {
        const p = t.partitions[i];
        if (this.liveBrokers.has(p.leader)) continue;
        const next = await this.electLeader(p);
        if (next.leader !== p.leader) {
          t.partitions[i] = next;
          touched = true;
        }
      }
      if (touched) changed.push(t);
    }
    for (const id of this.liveBrokers.keys()) {
      await this.sendLeaderAndIsr(id, added.includes(id) ? [...this.topics.values()] : changed);
    }
    await this.sendUpdateMetadata([...this.topics.values()], []);
  }

  private async sendLeaderAndIsr(brokerId: number, topics: TopicInfo[]): Promise<void> {
    const mine = topics
      .map((t) => ({ ...t, partitions: t.partitions.filter((p) => p.replicas.includes(brokerId)) }))
      .filter((t) => t.partitions.length > 0);
    if (mine.length > 0) await this.channel.leaderAndIsr(brokerId, this.epoch, mine);
  }

  private async sendUpdateMetadata(topics: TopicInfo[], deleted: string[]): Promise<void> {
    const brokers = [...this.liveBrokers.values()];
    for (const id of this.liveBrokers.keys()) {
      await this.channel.updateMetadata(id, this.epoch, this.options.brokerId, brokers, topics, deleted);
    }
  }
}

/** Drops isNew from the topics' partition states once the creating LeaderAndIsr went out. */
function clearIsNew(topics: Iterable<TopicInfo>): void {
  for (const t of topics) {
    if (t.partitions.some((p) => p.isNew)) t.partitions = t.partitions.map(({ isNew: _, ...p }) => p);
  }
}
