// KafkaController: elected through the ephemeral /controller znode; while active it owns
// partition state, as Kafka's ZooKeeper-mode KafkaController does: it gives new partitions a
// leader and ISR, moves leadership off dead and shutting-down brokers, takes dead replicas out of
// ISRs, runs preferred and unclean elections, reassignments and topic deletions, and tells
// brokers through the ControllerChannel (LeaderAndIsr, UpdateMetadata, StopReplica).
//
// Invariants:
// - Every event (election, registry watch, API call, timer) runs on one queue, in order; no two
//   handlers interleave, so a check and the write it guards are never separated by another
//   event. Watches set during one term are ignored after it (a generation number).
// - The election is one multi: create /controller and bump /controller_epoch at the version read.
//   Every later registry write is fenced on that version (ControllerStore); a fenced write that
//   fails means another controller was elected: this one resigns at once.
// - Partition-state writes are conditional on the partition epoch; on a conflict the state is
//   re-read and the decision made again on it (ControllerContext.updateStates).
// - A leader is the first live ISR member in assignment order; a replica outside the ISR leads
//   only after an unclean election (topic or broker unclean.leader.election.enable, or an
//   ElectLeaders of type unclean). Without a leader the partition is offline (leader -1) and
//   keeps its last ISR member, which leads again when it returns.
// - A new partition's state carries isNew only in the LeaderAndIsr that creates it (Kafka's rule):
//   a broker with an offline log dir may create its log elsewhere only then.
// - A broker that loses a log dir writes /log_dir_event_notification/log_dir_event_<seq>; the
//   controller reads and deletes each (Kafka's LogDirEventNotification) and logs them: the broker
//   itself reports its offline replicas (Metadata's offlineReplicas) and answers
//   KAFKA_STORAGE_ERROR.

import type { Clock, Timer } from "../platform/mod.ts";
import {
  ConfigEntityZNode,
  ConfigType,
  ControllerEpochZNode,
  ControllerZNode,
  DeleteTopicsTopicZNode,
  DeleteTopicsZNode,
  IsrChangeNotificationSequenceZNode,
  IsrChangeNotificationZNode,
  LogDirEventNotificationSequenceZNode,
  LogDirEventNotificationZNode,
  PreferredReplicaElectionZNode,
  ReassignPartitionsZNode,
  type PartitionReplicas,
  type Registry,
  RegistryError,
  type ReplicaAssignment,
  type Stat,
  TopicPartitionStateZNode,
  TopicZNode,
  type Watcher,
  type WatchEvent,
} from "../registry/mod.ts";
import type { PartitionState } from "../replication/mod.ts";
import { ErrorCode, partitionWritesInFlightMax, TimeSlice } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";
import type { BrokerInfo, ControllerChannel } from "./channel.ts";
import {
  ControllerContext,
  isReassigning,
  type OngoingReassignment,
  type PartitionResult,
  type TopicEntry,
  type TopicPartitionRef,
  tpKey,
} from "./context.ts";
import { isrWithout, offlineLeader, sameReplicas } from "./election.ts";
import { electLeadersOnRequest, imbalancedPartitions, moveLeadershipOff } from "./leader_moves.ts";
import { type ApiError, PartitionReassigner, targetReplicas } from "./reassignment.ts";
import { ControllerMovedError, ControllerStore } from "./store.ts";
import { type BrokerRegistration, getDataOrNull, readLiveBrokers, readTopicConfigVersioned, readTopicNames } from "./zk_reads.ts";

export type { OngoingReassignment, PartitionResult, TopicPartitionRef };

export interface ControllerOptions {
  brokerId: number;
  /** Listener name whose endpoint brokers advertise to clients. */
  listenerName: string;
  /** unclean.leader.election.enable, the broker default (false); a topic's config overrides it. */
  uncleanLeaderElectionEnable?: boolean;
  /** auto.leader.rebalance.enable (true). */
  autoLeaderRebalanceEnable?: boolean;
  /** leader.imbalance.check.interval.seconds, in ms (300 000). */
  leaderImbalanceCheckIntervalMs?: number;
  /** leader.imbalance.per.broker.percentage (10). */
  leaderImbalancePerBrokerPercentage?: number;
  /** delete.topic.enable (true); when false, deletion requests are dropped, as Kafka drops them. */
  deleteTopicEnable?: boolean;
}

/** Attempts at winning the election while other brokers race for it. */
const electionAttemptsMax = 10;
/** Attempts at the controller's conditional assignment write while others change the topic. */
const assignmentWriteAttemptsMax = 10;
/** Kafka checks the leader balance first 5 s after becoming controller, then at each interval. */
const firstRebalanceCheckDelayMs = 5_000;
const uncleanConfigKey = "unclean.leader.election.enable";
/** Pause before reading everything again after an event failed half-way. */
const resyncDelayMs = 1_000;

export class KafkaController {
  private queue: Promise<unknown> = Promise.resolve();
  private active = false;
  private stopped = false;
  /** Bumped on every election and resignation; a watch set in an older term does nothing. */
  private generation = 0;
  epoch = 0;
  private ctx: ControllerContext | null = null;
  private reassigner: PartitionReassigner | null = null;
  /** This term's watchers by name: one function per path, so the registry calls it once per event. */
  private watchers = new Map<string, Watcher>();
  /** Moves /admin/reassign_partitions asked for that are still running, by partition. */
  private zkReassignments = new Map<string, PartitionReplicas>();
  private loadingZkReassignments = false;
  private rebalanceTimer: Timer | null = null;
  private resyncPending = false;
  private readonly controllerWatcher: Watcher = () => void this.enqueue("ControllerChange", () => this.onControllerChange());

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

  // --- the event queue -------------------------------------------------------------------------

  /** Runs an event on the controller's queue; errors are logged, never thrown into the queue. */
  private enqueue(name: string, fn: () => Promise<void>): Promise<void> {
    return this.call(name, fn, () => undefined);
  }

  /** Runs fn on the queue and answers its result, or `fallback(error)` when it failed. */
  private call<T>(name: string, fn: () => Promise<T>, fallback: (error: unknown) => T): Promise<T> {
    const run = this.queue.then(async () => {
      if (this.stopped) return fallback(null);
      try {
        return await fn();
      } catch (e) {
        if (e instanceof ControllerMovedError) {
          this.logger.warn({ event: name, reason: e.message }, "another controller was elected: resigning");
          this.resign();
          try {
            await this.onControllerChange();
          } catch (e2) {
            this.logger.error({ event: name, err: e2 instanceof Error ? e2.stack : String(e2) }, "re-election after resigning failed");
            this.scheduleResync();
          }
        } else {
          this.logger.error({ event: name, err: e instanceof Error ? e.stack : String(e) }, "controller event failed");
          this.scheduleResync();
        }
        return fallback(e);
      }
    });
    this.queue = run.catch(() => {});
    return run;
  }

  /** This term's watcher for `key`: runs fn as an event while the term lasts. */
  private watcher(key: string, fn: (event: WatchEvent) => Promise<void>): Watcher {
    let w = this.watchers.get(key);
    if (w === undefined) {
      const generation = this.generation;
      w = (event) =>
        void this.enqueue(key, async () => {
          if (generation !== this.generation || !this.active) return;
          await fn(event);
        });
      this.watchers.set(key, w);
    }
    return w;
  }

  // --- election and resignation ----------------------------------------------------------------

  startup(): Promise<void> {
    return this.enqueue("Startup", () => this.elect());
  }

  /**
   * The registry replaced an expired session: /controller went with the old one, so resign and
   * run for election again (Kafka's RegisterBrokerAndReelect). Watches carried over.
   */
  onNewSession(): Promise<void> {
    return this.enqueue("Reelect", async () => {
      this.resign();
      await this.onControllerChange();
    });
  }

  async shutdown(): Promise<void> {
    await this.queue;
    this.stopped = true;
    this.rebalanceTimer?.cancel();
    this.rebalanceTimer = null;
    if (this.active) {
      this.active = false;
      this.generation++;
      try {
        await this.registry.delete(ControllerZNode.path);
      } catch {
        // Gone already, or the session is closing: either way another broker can take over.
      }
    }
  }

  /** /controller changed (or a fenced write failed): keep, give up or run for the role. */
  private async onControllerChange(): Promise<void> {
    const stat = await this.registry.exists(ControllerZNode.path, this.controllerWatcher);
    if (stat !== null && stat.ephemeralOwner === this.registry.sessionId) {
      if (this.active) return;
      // Our claim from a term another election superseded (our fenced writes fail): give it up.
      await this.registry.delete(ControllerZNode.path).catch(() => {});
      return await this.elect();
    }
    if (this.active) this.resign();
    if (stat === null) await this.elect();
  }

  private async elect(): Promise<void> {
    for (let attempt = 0; attempt < electionAttemptsMax; attempt++) {
      const current = await this.readControllerEpoch();
      const data = ControllerZNode.encode(this.options.brokerId, this.clock.nowMs());
      let results;
      try {
        results = await this.registry.multi([
          { op: "create", path: ControllerZNode.path, data, mode: "ephemeral" },
          {
            op: "setData",
            path: ControllerEpochZNode.path,
            data: ControllerEpochZNode.encode(current.epoch + 1),
            version: current.version,
          },
        ]);
      } catch (e) {
        if (!(e instanceof RegistryError)) throw e;
        if (e.code === "BadVersion" || (e.code === "NoNode" && e.path === ControllerEpochZNode.path)) continue;
        if (e.code !== "NodeExists") throw e;
        const stat = await this.registry.exists(ControllerZNode.path, this.controllerWatcher);
        if (stat === null) continue;
        if (stat.ephemeralOwner === this.registry.sessionId) {
          await this.registry.delete(ControllerZNode.path).catch(() => {});
          continue;
        }
        this.logger.info({}, "another broker is the controller");
        return;
      }
      this.epoch = current.epoch + 1;
      await this.registry.exists(ControllerZNode.path, this.controllerWatcher);
      this.becomeActive((results[1] as { stat: Stat }).stat.version);
      this.logger.info({ controllerEpoch: this.epoch }, "elected controller");
      await this.onControllerFailover();
      return;
    }
    throw new Error(`no controller election won or lost in ${electionAttemptsMax} attempts`);
  }

  private async readControllerEpoch(): Promise<{ epoch: number; version: number }> {
    let node = await getDataOrNull(this.registry, ControllerEpochZNode.path);
    if (node === null) {
      try {
        await this.registry.create(ControllerEpochZNode.path, ControllerEpochZNode.encode(0));
      } catch (e) {
        if (!(e instanceof RegistryError && e.code === "NodeExists")) throw e;
      }
      node = await getDataOrNull(this.registry, ControllerEpochZNode.path);
      if (node === null) return { epoch: 0, version: -2 };
    }
    return { epoch: ControllerEpochZNode.decode(node.data) ?? 0, version: node.stat.version };
  }

  private becomeActive(epochZkVersion: number): void {
    this.generation++;
    this.watchers.clear();
    this.zkReassignments.clear();
    this.active = true;
    const ctx = new ControllerContext(new ControllerStore(this.registry, epochZkVersion), this.channel, this.epoch, this.options.brokerId, this.logger);
    this.ctx = ctx;
    this.reassigner = new PartitionReassigner(ctx, {
      writeAssignment: (topic) => this.writeAssignment(topic),
      watchState: (topic, partition) => this.watchReassigningState(topic, partition),
      finished: (topic, partition) => this.zkReassignmentFinished(topic, partition),
    }, this.logger);
  }

  /** Kafka's onControllerResignation: forget this term's state and stop talking to brokers. */
  private resign(): void {
    if (!this.active) return;
    this.active = false;
    this.generation++;
    this.watchers.clear();
    this.zkReassignments.clear();
    this.rebalanceTimer?.cancel();
    this.rebalanceTimer = null;
    for (const id of this.ctx?.liveBrokers.keys() ?? []) this.channel.removeBroker?.(id);
    this.ctx = null;
    this.reassigner = null;
    this.logger.info({ controllerEpoch: this.epoch }, "resigned as controller");
  }

  /**
   * An event failed half-way (a lost connection, a write whose outcome is unknown): the cache
   * may no longer match the registry, and a watch may have fired unheard. After a pause the
   * active controller reads everything again and tells every broker, as at an election but
   * keeping its epoch (its fence is still valid); an inactive one looks at /controller again (an
   * election whose answer was lost may have made it the owner).
   */
  private scheduleResync(): void {
    if (this.stopped || this.resyncPending) return;
    this.resyncPending = true;
    this.clock.setTimeout(() => {
      void this.enqueue("Resync", async () => {
        this.resyncPending = false;
        if (!this.active || this.ctx === null) return await this.onControllerChange();
        const before = [...this.ctx.liveBrokers.keys()];
        this.becomeActive(this.ctx.store.epochZkVersion);
        this.logger.warn({ controllerEpoch: this.epoch }, "controller state read again after a failed event");
        await this.onControllerFailover();
        for (const id of before) if (!this.c.liveBrokers.has(id)) this.channel.removeBroker?.(id);
      });
    }, resyncDelayMs);
  }

  private get c(): ControllerContext {
    if (this.ctx === null) throw new ControllerMovedError("not the active controller");
    return this.ctx;
  }

  private get uncleanDefault(): boolean {
    return this.options.uncleanLeaderElectionEnable ?? false;
  }

  // --- failover --------------------------------------------------------------------------------

  private async onControllerFailover(): Promise<void> {
    const ctx = this.c;
    const brokers = await readLiveBrokers(this.registry, this.watcher("BrokerChange", () => this.onBrokerChange()));
    for (const b of brokers) ctx.liveBrokers.set(b.id, this.toBrokerInfo(b));
    for (const b of ctx.liveBrokers.values()) this.channel.addBroker?.(b);
    const names = await readTopicNames(this.registry, this.watcher("TopicChange", () => this.onTopicChange()));
    for (const name of names) await this.loadTopic(name);
    await this.initPartitions(ctx.allPartitions().filter((s) => s.partitionEpoch < 0));
    await this.reconcile(ctx.allPartitions());
    // Every live broker hears the whole state of its partitions, and the whole metadata.
    ctx.sendLeaderAndIsr(ctx.liveBrokers.keys(), ctx.allPartitions());
    ctx.sendUpdateMetadataForAll();
    this.clearIsNew(ctx.allPartitions());
    for (const s of ctx.allPartitions()) {
      if (isReassigning(s)) await this.reassigner!.start(s.topic, s.partition, targetReplicas(s));
    }
    await this.onZkReassignment(null);
    await this.onIsrChange();
    await this.onDeleteTopics();
    await this.onPreferredReplicaElection(null);
    await this.onLogDirEvents();
    this.scheduleAutoRebalance(firstRebalanceCheckDelayMs);
  }

  private toBrokerInfo(b: BrokerRegistration): BrokerInfo {
    const e = b.endpoints.find((x) => x.listenerName === this.options.listenerName) ?? b.endpoints[0];
    return { id: b.id, host: e?.host ?? "", port: e?.port ?? -1, rack: b.rack, epoch: b.epoch };
  }

  // --- topics and partitions -------------------------------------------------------------------

  /** Reads a topic's assignment (watching it), configs and partition states into the cache. */
  private async loadTopic(name: string): Promise<TopicEntry | null> {
    const node = await getDataOrNull(this.registry, TopicZNode.path(name), this.topicWatcher(name));
    const assignment = node === null ? null : TopicZNode.decode(name, node.data);
    if (node === null || assignment === null) {
      this.logger.warn({ topic: name }, "topic znode is missing or malformed; skipped");
      return null;
    }
    const { configs, zxid: configsZxid } = await readTopicConfigVersioned(this.registry, name);
    const entry: TopicEntry = {
      name,
      topicId: assignment.topicId ?? new Uint8Array(16),
      hasTopicId: assignment.topicId !== null,
      configs,
      configsZxid,
      partitions: new Map(),
      zkVersion: node.stat.version,
    };
    this.c.topics.set(name, entry);
    // Read together, a slice at a time (one ZooKeeper round trip for many; the loop breathes).
    const all = [...assignment.assignment];
    const slice = new TimeSlice();
    for (let i = 0; i < all.length;) {
      const batch: Promise<PartitionState>[] = [];
      const size = slice.groupSize(partitionWritesInFlightMax);
      do batch.push(this.readPartition(entry, all[i][0], all[i++][1])); while (i < all.length && batch.length < size && !slice.due);
      for (const s of await slice.settle(batch)) entry.partitions.set(s.partition, s);
      await slice.yield();
    }
    return entry;
  }

  private topicWatcher(topic: string): Watcher {
    return this.watcher(`PartitionModifications:${topic}`, () => this.onPartitionModifications(topic));
  }

  /** A partition's state znode with its assignment; partitionEpoch -1 when it has no state yet. */
  private async readPartition(entry: TopicEntry, partition: number, a: ReplicaAssignment): Promise<PartitionState> {
    const z = await this.c.store.readState(entry.name, partition);
    const base = {
      topic: entry.name,
      partition,
      topicId: entry.topicId,
      replicas: a.replicas,
      addingReplicas: a.addingReplicas,
      removingReplicas: a.removingReplicas,
    };
    if (z === null) return { ...base, controllerEpoch: this.epoch, leader: -1, leaderEpoch: 0, isr: [], partitionEpoch: -1 };
    const l = z.leaderAndIsr;
    return { ...base, controllerEpoch: z.controllerEpoch, leader: l.leader, leaderEpoch: l.leaderEpoch, isr: l.isr, partitionEpoch: l.partitionEpoch };
  }

  /**
   * Kafka's initializeLeaderAndIsrForPartitions: a state znode for each partition that has none,
   * led by its first online replica with every online replica in the ISR. A partition with no
   * online replica waits (no state) until one registers.
   */
  private async initPartitions(states: PartitionState[]): Promise<PartitionState[]> {
    const created: PartitionState[] = [];
    // The writes of one slice go out together (Kafka's controller pipelines them too): the
    // embedded registry commits them with one fsync, ZooKeeper answers them in one round trip.
    // Each partition's write and cache update is its own unit; they touch different znodes.
    const slice = new TimeSlice();
    for (let i = 0; i < states.length;) {
      const batch: Promise<PartitionState | null>[] = [];
      const size = slice.groupSize(partitionWritesInFlightMax);
      do batch.push(this.initPartition(states[i++])); while (i < states.length && batch.length < size && !slice.due);
      for (const s of await slice.settle(batch)) if (s !== null) created.push(s);
      await slice.yield();
    }
    return created;
  }

  private async initPartition(s: PartitionState): Promise<PartitionState | null> {
    const ctx = this.c;
    const live = s.replicas.filter(ctx.isOnline);
    if (live.length === 0) {
      this.logger.warn({ topic: s.topic, partition: s.partition, replicas: s.replicas }, "no replica of the new partition is alive; it waits");
      return null;
    }
    const next: PartitionState = { ...s, leader: live[0], leaderEpoch: 0, isr: live, controllerEpoch: this.epoch, partitionEpoch: 0, isNew: true };
    try {
      next.partitionEpoch = await ctx.store.createState(next);
    } catch (e) {
      if (!(e instanceof RegistryError && e.code === "NodeExists")) throw e;
      await ctx.reread(s);
      return null;
    }
    ctx.setPartition(next);
    return next;
  }

  /** Drops isNew from the cached states once the creating LeaderAndIsr went out. */
  private clearIsNew(states: PartitionState[]): void {
    const ctx = this.c;
    for (const s of states) {
      const cur = ctx.partition(s.topic, s.partition);
      if (cur?.isNew) {
        const { isNew: _, ...rest } = cur;
        ctx.setPartition(rest);
      }
    }
  }

  /**
   * Kafka's triggerOnlinePartitionStateChange plus the OfflineReplica transition: partitions
   * without a live leader get one (offline election), and replicas on dead brokers leave the
   * ISRs. Returns the states written.
   */
  private async reconcile(states: PartitionState[]): Promise<PartitionState[]> {
    const ctx = this.c;
    const needUnclean = new Set(states.filter((s) => !ctx.isLive(s.leader) && !s.isr.some(ctx.isOnline)).map((s) => s.topic));
    const unclean = await this.uncleanElectionEnabled(needUnclean);
    const dead = (id: number) => !ctx.isLive(id);
    const r = await ctx.updateStates(states.filter((s) => s.partitionEpoch >= 0), (s) => {
      if (!ctx.isLive(s.leader)) {
        const e = offlineLeader(s.replicas, s.isr, ctx.isOnline, unclean.get(s.topic) ?? this.uncleanDefault);
        if (e !== null) {
          if (e.unclean) this.logger.warn({ topic: s.topic, partition: s.partition, leader: e.leader, isr: s.isr }, "unclean leader election");
          return { leader: e.leader, isr: e.isr };
        }
        const isr = isrWithout(s.isr, dead);
        return s.leader === -1 && sameReplicas(isr, s.isr) ? null : { leader: -1, isr };
      }
      const isr = isrWithout(s.isr, dead);
      return sameReplicas(isr, s.isr) ? null : { leader: s.leader, isr };
    });
    for (const s of r.updated) {
      this.logger.info({ topic: s.topic, partition: s.partition, leader: s.leader, leaderEpoch: s.leaderEpoch, isr: s.isr }, s.leader === -1 ? "partition offline" : "partition state changed");
    }
    return r.updated;
  }

  /** The topics' unclean.leader.election.enable, read fresh (Kafka reads it at each offline election). */
  private async uncleanElectionEnabled(topics: Set<string>): Promise<Map<string, boolean>> {
    const out = new Map<string, boolean>();
    for (const name of topics) {
      const read = await readTopicConfigVersioned(this.registry, name);
      const entry = this.c.topics.get(name);
      if (entry !== undefined && read.zxid > entry.configsZxid) {
        entry.configs = read.configs;
        entry.configsZxid = read.zxid;
      }
      const v = read.configs[uncleanConfigKey]?.trim().toLowerCase();
      out.set(name, v === "true" ? true : v === "false" ? false : this.uncleanDefault);
    }
    return out;
  }

  private async onTopicChange(): Promise<void> {
    const ctx = this.c;
    const names = await readTopicNames(this.registry, this.watcher("TopicChange", () => this.onTopicChange()));
    const present = new Set(names);
    const gone = [...ctx.topics.keys()].filter((n) => !present.has(n));
    for (const name of gone) this.forgetTopic(name);
    if (gone.length > 0) ctx.sendUpdateMetadata([], gone);
    const added: PartitionState[] = [];
    for (const name of names) {
      if (ctx.topics.has(name)) continue;
      const entry = await this.loadTopic(name);
      if (entry !== null) added.push(...entry.partitions.values());
    }
    if (added.length === 0) return;
    this.logger.info({ topics: [...new Set(added.map((s) => s.topic))] }, "new topics");
    await this.onNewPartitions(added);
  }

  /** New partitions (of a new topic, or added to one): states, LeaderAndIsr with isNew, metadata. */
  private async onNewPartitions(states: PartitionState[]): Promise<void> {
    const ctx = this.c;
    await this.initPartitions(states.filter((s) => s.partitionEpoch < 0));
    const latest = states.map((s) => ctx.partition(s.topic, s.partition)).filter((s): s is PartitionState => s !== undefined);
    ctx.sendLeaderAndIsrToReplicas(latest);
    ctx.sendUpdateMetadata(latest.map((s) => s.topic));
    this.clearIsNew(latest);
  }

  /** The topic znode changed: partitions added by CreatePartitions get states. */
  private async onPartitionModifications(topic: string): Promise<void> {
    const ctx = this.c;
    const node = await getDataOrNull(this.registry, TopicZNode.path(topic), this.topicWatcher(topic));
    const entry = ctx.topics.get(topic);
    if (node === null || entry === undefined) return;
    const assignment = TopicZNode.decode(topic, node.data);
    if (assignment === null) {
      this.logger.warn({ topic }, "topic znode is malformed; change ignored");
      return;
    }
    entry.zkVersion = node.stat.version;
    const added: PartitionState[] = [];
    for (const [p, a] of assignment.assignment) {
      if (entry.partitions.has(p)) continue;
      const s = await this.readPartition(entry, p, a);
      entry.partitions.set(p, s);
      added.push(s);
    }
    if (added.length === 0) return;
    this.logger.info({ topic, partitions: added.map((s) => s.partition) }, "new partitions");
    await this.onNewPartitions(added);
  }

  /** Writes a topic's assignment znode from the cache, conditional on the version last read. */
  private async writeAssignment(topic: string): Promise<void> {
    const ctx = this.c;
    for (let attempt = 0; attempt < assignmentWriteAttemptsMax; attempt++) {
      const entry = ctx.topics.get(topic);
      if (entry === undefined) return;
      try {
        entry.zkVersion = await ctx.store.setAssignment(topic, entry.hasTopicId ? entry.topicId : null, ctx.assignmentOf(topic), entry.zkVersion);
        return;
      } catch (e) {
        if (e instanceof RegistryError && e.code === "NoNode") return;
        if (!(e instanceof RegistryError && e.code === "BadVersion")) throw e;
        // Someone (CreatePartitions) changed the topic since: take in what they added, then again.
        await this.onPartitionModifications(topic);
      }
    }
    throw new Error(`the assignment of topic ${topic} kept changing over ${assignmentWriteAttemptsMax} attempts`);
  }

  private forgetTopic(name: string): void {
    const entry = this.c.topics.get(name);
    for (const p of entry?.partitions.keys() ?? []) this.watchers.delete(`ReassignmentIsrChange:${tpKey(name, p)}`);
    this.watchers.delete(`PartitionModifications:${name}`);
    this.c.topics.delete(name);
    for (const [key, r] of this.zkReassignments) if (r.topic === name) this.zkReassignments.delete(key);
  }

  private async onDeleteTopics(): Promise<void> {
    const ctx = this.c;
    const queued = await this.registry.getChildren(DeleteTopicsZNode.path, this.watcher("TopicDeletion", () => this.onDeleteTopics()));
    if (queued.length === 0) return;
    if (this.options.deleteTopicEnable === false) {
      this.logger.info({ topics: queued }, "delete.topic.enable is false: topic deletion requests dropped");
      for (const name of queued) await ctx.store.delete(DeleteTopicsTopicZNode.path(name));
      return;
    }
    const deleted: string[] = [];
    for (const name of queued) {
      const entry = ctx.topics.get(name);
      if (entry !== undefined) {
        for (const id of ctx.liveBrokers.keys()) {
          const mine = [...entry.partitions.values()].filter((p) => p.replicas.includes(id));
          ctx.sendStopReplica(id, mine, true);
        }
      }
      await ctx.store.deleteRecursive(TopicZNode.path(name));
      await ctx.store.deleteRecursive(ConfigEntityZNode.path(ConfigType.Topic, name));
      await ctx.store.delete(DeleteTopicsTopicZNode.path(name));
      this.forgetTopic(name);
      deleted.push(name);
    }
    this.logger.info({ topics: deleted }, "deleted topics");
    ctx.sendUpdateMetadata([], deleted);
    if (this.zkReassignments.size > 0) await this.writeZkReassignments();
  }

  // --- brokers ---------------------------------------------------------------------------------

  private async onBrokerChange(): Promise<void> {
    const ctx = this.c;
    const now = new Map((await readLiveBrokers(this.registry, this.watcher("BrokerChange", () => this.onBrokerChange()))).map((b) => [b.id, this.toBrokerInfo(b)]));
    const dead = [...ctx.liveBrokers.keys()].filter((id) => !now.has(id));
    const added = [...now.keys()].filter((id) => !ctx.liveBrokers.has(id));
    // A broker that registered again (a new epoch) before its old session expired: it lost its
    // state, so it is handled as failed, then started (Kafka's bounced brokers).
    const bounced = [...now.keys()].filter((id) => ctx.liveBrokers.has(id) && now.get(id)!.epoch !== ctx.liveBrokers.get(id)!.epoch);
    if (dead.length === 0 && added.length === 0 && bounced.length === 0) return;
    this.logger.info({ added, dead, bounced }, "brokers changed");
    const failed = [...dead, ...bounced];
    for (const id of failed) {
      ctx.liveBrokers.delete(id);
      ctx.shuttingDown.delete(id);
      this.channel.removeBroker?.(id);
    }
    if (failed.length > 0) await this.onBrokerFailure(failed);
    const started = [...added, ...bounced];
    for (const id of started) {
      ctx.liveBrokers.set(id, now.get(id)!);
      this.channel.addBroker?.(now.get(id)!);
    }
    if (started.length > 0) await this.onBrokerStartup(started);
  }

  /**
   * Kafka's onBrokerFailure: partitions the dead brokers led get new leaders (or go offline), the
   * dead replicas leave the ISRs, the remaining replicas hear the new states, and every broker
   * the new broker list.
   */
  private async onBrokerFailure(ids: number[]): Promise<void> {
    const ctx = this.c;
    const dead = new Set(ids);
    const affected = ctx.allPartitions().filter((s) => s.replicas.some((r) => dead.has(r)) || !ctx.isLive(s.leader));
    const changed = await this.reconcile(affected);
    ctx.sendLeaderAndIsrToReplicas(changed);
    ctx.sendUpdateMetadataForAll();
  }

  /**
   * Kafka's onBrokerStartup: partitions without a state or a live leader may get one now; the new
   * brokers hear every partition they hold (as followers of the current leaders), the others
   * what changed, and everyone the new broker list.
   */
  private async onBrokerStartup(ids: number[]): Promise<void> {
    const ctx = this.c;
    const started = new Set(ids);
    const created = await this.initPartitions(ctx.allPartitions().filter((s) => s.partitionEpoch < 0));
    const changed = await this.reconcile(ctx.allPartitions().filter((s) => s.partitionEpoch >= 0 && !ctx.isLive(s.leader)));
    ctx.sendLeaderAndIsr(started, ctx.allPartitions());
    ctx.sendLeaderAndIsr([...ctx.liveBrokers.keys()].filter((id) => !started.has(id)), [...created, ...changed]);
    this.clearIsNew(created);
    ctx.sendUpdateMetadataForAll();
    // A move that waited for a target replica able to lead may finish now.
    for (const s of ctx.allPartitions()) if (isReassigning(s)) await this.reassigner!.maybeComplete(s.topic, s.partition);
  }

  /**
   * Kafka's ControlledShutdown (doControlledShutdown): the broker stops being a leader candidate;
   * partitions it leads (with other replicas) move to another ISR member; partitions it follows
   * drop it from the ISR and it stops fetching them. `remaining` lists what it still leads.
   */
  controlledShutdown(brokerId: number, brokerEpoch: bigint): Promise<{ errorCode: number; remaining: TopicPartitionRef[] }> {
    return this.call<{ errorCode: number; remaining: TopicPartitionRef[] }>("ControlledShutdown", async () => {
      if (!this.active) return { errorCode: ErrorCode.NOT_CONTROLLER, remaining: [] };
      const ctx = this.c;
      const info = ctx.liveBrokers.get(brokerId);
      if (info === undefined) return { errorCode: ErrorCode.BROKER_NOT_AVAILABLE, remaining: [] };
      // Kafka refuses only an older registration; -1 is a broker that does not know its epoch.
      if (brokerEpoch !== -1n && brokerEpoch < info.epoch) return { errorCode: ErrorCode.STALE_BROKER_EPOCH, remaining: [] };
      ctx.shuttingDown.add(brokerId);
      const { moved, remaining } = await moveLeadershipOff(ctx, brokerId);
      this.logger.info({ broker: brokerId, movedLeaders: moved, remaining: remaining.length }, "controlled shutdown");
      return { errorCode: ErrorCode.NONE, remaining };
    }, (e) => ({ errorCode: e === null ? ErrorCode.NOT_CONTROLLER : ErrorCode.UNKNOWN_SERVER_ERROR, remaining: [] }));
  }

  // --- ISR changes -----------------------------------------------------------------------------

  /**
   * Leaders announce ISR changes under /isr_change_notification: re-read those partitions'
   * states, tell every broker, check the reassignments waiting for them, delete the notices.
   */
  private async onIsrChange(): Promise<void> {
    const ctx = this.c;
    const names = (await this.registry.getChildren(IsrChangeNotificationZNode.path, this.watcher("IsrChangeNotification", () => this.onIsrChange())))
      .filter((n) => n.startsWith(IsrChangeNotificationSequenceZNode.SequenceNumberPrefix));
    if (names.length === 0) return;
    try {
      const tps = new Map<string, TopicPartitionRef>();
      for (const name of names) {
        const node = await getDataOrNull(this.registry, `${IsrChangeNotificationZNode.path}/${name}`);
        const parts = node === null ? null : IsrChangeNotificationSequenceZNode.decode(node.data);
        for (const tp of parts ?? []) tps.set(tpKey(tp.topic, tp.partition), tp);
      }
      const fresh: PartitionState[] = [];
      for (const tp of tps.values()) {
        const cur = ctx.partition(tp.topic, tp.partition);
        if (cur === undefined || cur.partitionEpoch < 0) continue;
        const s = await ctx.reread(cur);
        if (s !== null) fresh.push(s);
      }
      if (fresh.length > 0) ctx.sendUpdateMetadata(fresh.map((s) => s.topic));
      for (const s of fresh) if (isReassigning(s)) await this.reassigner!.maybeComplete(s.topic, s.partition);
    } finally {
      for (const name of names) await ctx.store.delete(`${IsrChangeNotificationZNode.path}/${name}`);
    }
  }

  /** Reads and deletes the log dir failure notifications brokers wrote; logs each broker's. */
  private async onLogDirEvents(): Promise<void> {
    const ctx = this.c;
    const names = await this.registry.getChildren(
      LogDirEventNotificationZNode.path,
      this.watcher("LogDirEventNotification", () => this.onLogDirEvents()),
    );
    const brokers = new Set<number>();
    for (const name of names) {
      if (!name.startsWith(LogDirEventNotificationSequenceZNode.SequenceNumberPrefix)) continue;
      const path = `${LogDirEventNotificationZNode.path}/${name}`;
      const node = await getDataOrNull(this.registry, path);
      const brokerId = node === null ? null : LogDirEventNotificationSequenceZNode.decode(node.data);
      if (brokerId !== null) brokers.add(brokerId);
      await ctx.store.delete(path);
    }
    if (brokers.size > 0) this.logger.warn({ brokers: [...brokers] }, "brokers reported log dir failures");
  }

  // --- leader elections on request ---------------------------------------------------------------

  /**
   * ElectLeaders (43): electionType 0 moves leadership to the preferred replica, 1 elects a leader
   * (cleanly if it can, else any live replica) for partitions without one. null: every partition.
   */
  electLeaders(electionType: 0 | 1, partitions: TopicPartitionRef[] | null): Promise<PartitionResult[]> {
    return this.call("ElectLeaders", async () => {
      if (!this.active) return (partitions ?? []).map((tp) => ({ ...ref(tp), errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: null }));
      const asked = partitions ?? this.c.allPartitions().map(ref);
      return await this.electLeadersNow(electionType, asked);
    }, (e) => (partitions ?? []).map((tp) => ({
      ...ref(tp),
      errorCode: e === null ? ErrorCode.NOT_CONTROLLER : ErrorCode.UNKNOWN_SERVER_ERROR,
      errorMessage: null,
    })));
  }

  /** Kafka's processReplicaLeaderElection, on the queue already. */
  private async electLeadersNow(electionType: 0 | 1, asked: TopicPartitionRef[]): Promise<PartitionResult[]> {
    const { results, elected } = await electLeadersOnRequest(this.c, electionType, asked);
    if (elected.length > 0) this.logger.info({ electionType, partitions: elected.map((s) => `${s.topic}-${s.partition}:${s.leader}`) }, "leaders elected");
    return results;
  }

  private scheduleAutoRebalance(delayMs: number): void {
    if (this.options.autoLeaderRebalanceEnable === false) return;
    const generation = this.generation;
    this.rebalanceTimer?.cancel();
    this.rebalanceTimer = this.clock.setTimeout(() => {
      void this.enqueue("AutoPreferredReplicaLeaderElection", async () => {
        if (generation !== this.generation || !this.active) return;
        try {
          await this.checkAndTriggerAutoLeaderRebalance();
        } finally {
          if (generation === this.generation && this.active) this.scheduleAutoRebalance(this.options.leaderImbalanceCheckIntervalMs ?? 300_000);
        }
      });
    }, delayMs);
  }

  /**
   * Kafka's checkAndTriggerAutoLeaderRebalance: for each broker, the share of the partitions it
   * is preferred for that another broker leads; above leader.imbalance.per.broker.percentage,
   * preferred elections for those whose preferred replica can lead.
   */
  private async checkAndTriggerAutoLeaderRebalance(): Promise<void> {
    const candidates = imbalancedPartitions(this.c, (this.options.leaderImbalancePerBrokerPercentage ?? 10) / 100);
    if (candidates.length === 0) return;
    this.logger.info({ partitions: candidates.length }, "leader imbalance: preferred replica elections");
    await this.electLeadersNow(0, candidates);
  }

  /** /admin/preferred_replica_election (the pre-2.4 tools' request): elect, then delete it. */
  private async onPreferredReplicaElection(event: WatchEvent | null): Promise<void> {
    const ctx = this.c;
    const path = PreferredReplicaElectionZNode.path;
    const stat = await this.registry.exists(path, this.watcher("PreferredReplicaElection", (ev) => this.onPreferredReplicaElection(ev)));
    if (stat === null || (event !== null && event.type !== "created")) return;
    const node = await getDataOrNull(this.registry, path);
    const partitions = node === null ? null : PreferredReplicaElectionZNode.decode(node.data);
    if (partitions === null) this.logger.warn({ path }, "malformed preferred replica election request; deleted");
    else await this.electLeadersNow(0, partitions);
    await ctx.store.delete(path);
  }

  // --- reassignments ---------------------------------------------------------------------------

  /** AlterPartitionReassignments (45): start, replace or (replicas null) cancel moves. */
  alterPartitionReassignments(reqs: { topic: string; partition: number; replicas: number[] | null }[]): Promise<PartitionResult[]> {
    return this.call("AlterPartitionReassignments", async () => {
      if (!this.active) return reqs.map((r) => ({ ...ref(r), errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: null }));
      const out: PartitionResult[] = [];
      for (const r of reqs) out.push({ ...ref(r), ...(await this.alterReassignment(r.topic, r.partition, r.replicas)) });
      return out;
    }, (e) => reqs.map((r) => ({ ...ref(r), errorCode: e === null ? ErrorCode.NOT_CONTROLLER : ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null })));
  }

  private async alterReassignment(topic: string, partition: number, replicas: number[] | null): Promise<ApiError> {
    const s = this.c.partition(topic, partition);
    if (s === undefined) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: "The partition does not exist." };
    if (replicas === null) {
      if (!isReassigning(s)) {
        return { errorCode: ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, errorMessage: `No partition reassignment is in progress for ${topic}-${partition}.` };
      }
    } else {
      const err = this.reassigner!.validate(s, replicas);
      if (err !== null) return err;
    }
    // The latest request wins, whichever way it came: it replaces a /admin/reassign_partitions one.
    if (this.zkReassignments.delete(tpKey(topic, partition))) await this.writeZkReassignments();
    if (replicas === null) await this.reassigner!.cancel(topic, partition);
    else await this.reassigner!.start(topic, partition, replicas);
    return { errorCode: ErrorCode.NONE, errorMessage: null };
  }

  /** ListPartitionReassignments (46): the moves in progress, among `parts` (null: all). */
  listPartitionReassignments(parts: TopicPartitionRef[] | null): OngoingReassignment[] {
    if (!this.active || this.ctx === null) return [];
    const ctx = this.ctx;
    const states = parts === null
      ? ctx.allPartitions().sort((a, b) => a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition)
      : parts.map((tp) => ctx.partition(tp.topic, tp.partition)).filter((s): s is PartitionState => s !== undefined);
    return states.filter(isReassigning).map((s) => ({
      ...ref(s),
      replicas: s.replicas,
      addingReplicas: s.addingReplicas ?? [],
      removingReplicas: s.removingReplicas ?? [],
    }));
  }

  /**
   * /admin/reassign_partitions (Kafka's pre-2.4 tools): read when created (and at failover),
   * each valid entry started; invalid ones are dropped from the znode, finished ones too, and
   * the znode is deleted once none is left. Changes to an existing znode are ignored, as in Kafka.
   */
  private async onZkReassignment(event: WatchEvent | null): Promise<void> {
    const ctx = this.c;
    const path = ReassignPartitionsZNode.path;
    const stat = await this.registry.exists(path, this.watcher("ZkPartitionReassignment", (ev) => this.onZkReassignment(ev)));
    if (stat === null || (event !== null && event.type !== "created")) return;
    const node = await getDataOrNull(this.registry, path);
    const entries = node === null ? null : ReassignPartitionsZNode.decode(node.data);
    if (entries === null) {
      this.logger.warn({ path }, "malformed partition reassignment request; deleted");
      await ctx.store.delete(path);
      return;
    }
    this.loadingZkReassignments = true;
    try {
      for (const e of entries) {
        const s = ctx.partition(e.topic, e.partition);
        const err = s === undefined ? { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: "The partition does not exist." } : this.reassigner!.validate(s, e.replicas);
        if (err !== null) {
          this.logger.warn({ topic: e.topic, partition: e.partition, replicas: e.replicas, reason: err.errorMessage }, "partition reassignment refused");
          continue;
        }
        this.zkReassignments.set(tpKey(e.topic, e.partition), e);
        await this.reassigner!.start(e.topic, e.partition, e.replicas);
      }
    } finally {
      this.loadingZkReassignments = false;
    }
    await this.writeZkReassignments();
  }

  private async zkReassignmentFinished(topic: string, partition: number): Promise<void> {
    if (this.zkReassignments.delete(tpKey(topic, partition)) && !this.loadingZkReassignments) await this.writeZkReassignments();
  }

  /** /admin/reassign_partitions with the moves it asked for that still run; deleted when none. */
  private async writeZkReassignments(): Promise<void> {
    const ctx = this.c;
    const path = ReassignPartitionsZNode.path;
    if (this.zkReassignments.size === 0) return await ctx.store.delete(path);
    try {
      await ctx.store.setData(path, ReassignPartitionsZNode.encode(this.zkReassignments.values()));
    } catch (e) {
      if (!(e instanceof RegistryError && e.code === "NoNode")) throw e;
    }
  }

  private async watchReassigningState(topic: string, partition: number): Promise<void> {
    const key = `ReassignmentIsrChange:${tpKey(topic, partition)}`;
    await this.registry.exists(TopicPartitionStateZNode.path(topic, partition), this.watcher(key, () => this.onReassigningStateChange(topic, partition)));
  }

  /** A moving partition's state znode changed: re-read it, complete the move if it can. */
  private async onReassigningStateChange(topic: string, partition: number): Promise<void> {
    const cur = this.c.partition(topic, partition);
    if (cur === undefined || !isReassigning(cur) || cur.partitionEpoch < 0) return;
    await this.watchReassigningState(topic, partition);
    if ((await this.c.reread(cur)) === null) return;
    await this.reassigner!.maybeComplete(topic, partition);
  }
}

function ref(tp: TopicPartitionRef): TopicPartitionRef {
  return { topic: tp.topic, partition: tp.partition };
}
