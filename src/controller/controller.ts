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
//   controller reads and deletes each (Kafka's LogDirEventNotification), sends that broker the
//   states of its replicas, and the ones it answers KAFKA_STORAGE_ERROR for lose leadership and
//   ISR membership to the other replicas (Kafka's onReplicasBecomeOffline).
//
// This file holds the queue, the election and the term; each term's events are handled by
// BrokerEvents, TopicEvents, ReassignmentEvents and NotificationEvents (the *_events files and
// notifications.ts), over PartitionStateMachine and PartitionReassigner.

import type { Clock, Timer } from "../platform/mod.ts";
import {
  ControllerEpochZNode,
  ControllerZNode,
  DeleteTopicsZNode,
  PreferredReplicaElectionZNode,
  type Registry,
  RegistryError,
  type Stat,
  type Watcher,
  type WatchEvent,
} from "../registry/mod.ts";
import { controllerResyncBackoffMaxMs, ErrorCode } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";
import { type AlterPartitionAnswer, type AlterPartitionItem, alterPartitionNow } from "./alter_partition.ts";
import { BrokerEvents } from "./broker_events.ts";
import type { ControllerChannel } from "./channel.ts";
import {
  ControllerContext,
  isReassigning,
  type OngoingReassignment,
  type PartitionResult,
  ref,
  type TermWatcher,
  type TopicPartitionRef,
} from "./context.ts";
import { electLeadersOnRequest, imbalancedPartitions } from "./leader_moves.ts";
import { NotificationEvents } from "./notifications.ts";
import { PartitionStateMachine } from "./partition_states.ts";
import { type PartitionReassigner, targetReplicas } from "./reassignment.ts";
import { ReassignmentEvents } from "./reassignment_events.ts";
import { registryWriteFailure } from "./registry_failure.ts";
import { ControllerMovedError, ControllerStore } from "./store.ts";
import { TopicEvents } from "./topic_events.ts";
import { getDataOrNull } from "./zk_reads.ts";

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
/** Kafka checks the leader balance first 5 s after becoming controller, then at each interval. */
const firstRebalanceCheckDelayMs = 5_000;
/** Pause before reading everything again after an event failed half-way. */
const resyncDelayMs = 1_000;

/**
 * What one term of the active controller works with: its cache and the handlers of its events,
 * made at the election (and again at a resync), dropped at the resignation.
 */
interface Term {
  ctx: ControllerContext;
  states: PartitionStateMachine;
  reassigner: PartitionReassigner;
  reassignments: ReassignmentEvents;
  topics: TopicEvents;
  brokers: BrokerEvents;
  notifications: NotificationEvents;
}

export class KafkaController {
  private queue: Promise<unknown> = Promise.resolve();
  private active = false;
  private stopped = false;
  /** Bumped on every election and resignation; a watch set in an older term does nothing. */
  private generation = 0;
  epoch = 0;
  private term: Term | null = null;
  /** This term's watchers by name: one function per path, so the registry calls it once per event. */
  private watchers = new Map<string, Watcher>();
  private rebalanceTimer: Timer | null = null;
  private resyncPending = false;
  /** The pause before the next resync: doubles while the registry keeps refusing writes. */
  private resyncBackoffMs = resyncDelayMs;
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
          // The registry's disk is full: what was written stays (each write is whole), the rest
          // is done by the resync once there is room. Said at warn: it passes by itself.
          const storage = registryWriteFailure(e, `controller event ${name}`);
          if (storage?.transient) this.logger.warn({ event: name, reason: storage.errorMessage }, "controller event failed: the registry refused a write; state is read again later");
          else this.logger.error({ event: name, err: e instanceof Error ? e.stack : String(e) }, "controller event failed");
          this.scheduleResync(storage !== null);
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
    this.active = true;
    const ctx = new ControllerContext(new ControllerStore(this.registry, epochZkVersion), this.channel, this.epoch, this.options.brokerId, this.logger);
    const watcher: TermWatcher = (key, fn) => this.watcher(key, fn);
    const unwatch = (key: string) => void this.watchers.delete(key);
    const states = new PartitionStateMachine(ctx, this.registry, this.uncleanDefault, this.logger);
    const topics: TopicEvents = new TopicEvents(ctx, this.registry, states, watcher, {
      unwatch,
      forgotten: (topic, partitions) => reassignments.forgetTopic(topic, partitions),
      topicsDeleted: () => reassignments.topicsDeleted(),
    }, this.options.deleteTopicEnable !== false, this.logger);
    const reassignments: ReassignmentEvents = new ReassignmentEvents(ctx, this.registry, watcher, unwatch, (topic) => topics.writeAssignment(topic), this.logger);
    const { reassigner } = reassignments;
    this.term = {
      ctx,
      states,
      reassigner,
      reassignments,
      topics,
      brokers: new BrokerEvents(ctx, this.registry, this.channel, states, reassigner, watcher, this.options.listenerName, this.logger),
      notifications: new NotificationEvents(ctx, this.registry, reassigner, states, watcher, this.logger),
    };
  }

  /** Kafka's onControllerResignation: forget this term's state and stop talking to brokers. */
  private resign(): void {
    if (!this.active) return;
    this.active = false;
    this.generation++;
    this.watchers.clear();
    this.rebalanceTimer?.cancel();
    this.rebalanceTimer = null;
    for (const id of this.term?.ctx.liveBrokers.keys() ?? []) this.channel.removeBroker?.(id);
    this.term = null;
    this.logger.info({ controllerEpoch: this.epoch }, "resigned as controller");
  }

  /**
   * An event failed half-way (a lost connection, a write whose outcome is unknown): the cache
   * may no longer match the registry, and a watch may have fired unheard. After a pause the
   * active controller reads everything again and tells every broker, as at an election but
   * keeping its epoch (its fence is still valid); an inactive one looks at /controller again (an
   * election whose answer was lost may have made it the owner).
   */
  private scheduleResync(storageFailure = false): void {
    if (this.stopped || this.resyncPending) return;
    this.resyncPending = true;
    const delayMs = this.resyncBackoffMs;
    // While the registry keeps refusing writes (a full disk), each resync would re-send every
    // partition's state: back off, and start over at 1 s once one succeeds.
    this.resyncBackoffMs = storageFailure ? Math.min(delayMs * 2, controllerResyncBackoffMaxMs) : resyncDelayMs;
    this.clock.setTimeout(() => {
      void this.enqueue("Resync", async () => {
        this.resyncPending = false;
        if (!this.active || this.term === null) await this.onControllerChange();
        else {
          const before = [...this.term.ctx.liveBrokers.keys()];
          this.becomeActive(this.term.ctx.store.epochZkVersion);
          this.logger.warn({ controllerEpoch: this.epoch }, "controller state read again after a failed event");
          await this.onControllerFailover();
          for (const id of before) if (!this.c.liveBrokers.has(id)) this.channel.removeBroker?.(id);
        }
        if (!this.resyncPending) this.resyncBackoffMs = resyncDelayMs;
      });
    }, delayMs);
  }

  private get t(): Term {
    if (this.term === null) throw new ControllerMovedError("not the active controller");
    return this.term;
  }

  private get c(): ControllerContext {
    return this.t.ctx;
  }

  private get uncleanDefault(): boolean {
    return this.options.uncleanLeaderElectionEnable ?? false;
  }

  // --- failover --------------------------------------------------------------------------------

  /**
   * Kafka's onControllerFailover: read the brokers and topics (watching them), give partitions
   * leaders, tell every broker everything, resume the moves and take in the requests and
   * notifications that waited.
   */
  private async onControllerFailover(): Promise<void> {
    const t = this.t;
    const ctx = t.ctx;
    await t.brokers.loadLiveBrokers();
    await t.topics.loadAll();
    // A topic queued for deletion gets no new state: a deletion cut short (the registry's disk
    // full) removed some of its states already, and the deletion below finishes it.
    const deleting = new Set(await this.registry.getChildren(DeleteTopicsZNode.path).catch(() => [] as string[]));
    await t.states.initPartitions(ctx.allPartitions().filter((s) => s.partitionEpoch < 0 && !deleting.has(s.topic)));
    await t.states.reconcile(ctx.allPartitions());
    // Every live broker hears the whole state of its partitions, and the whole metadata.
    ctx.sendLeaderAndIsr(ctx.liveBrokers.keys(), ctx.allPartitions());
    ctx.sendUpdateMetadataForAll();
    t.states.clearIsNew(ctx.allPartitions());
    for (const s of ctx.allPartitions()) {
      if (isReassigning(s)) await t.reassigner.start(s.topic, s.partition, targetReplicas(s));
    }
    await t.reassignments.onZkReassignment(null);
    await t.notifications.onIsrChange();
    await t.topics.onDeleteTopics();
    await this.onPreferredReplicaElection(null);
    await t.notifications.onLogDirEvents();
    this.scheduleAutoRebalance(firstRebalanceCheckDelayMs);
  }

  /**
   * A broker's answer to a control request (the channel's onResponse): replicas it answered a
   * LeaderAndIsr with KAFKA_STORAGE_ERROR for are in a failed log dir; their leadership moves.
   */
  onControlResponse(r: { brokerId: number; api: string; partitionErrors: { topic: string; partition: number; errorCode: number }[] }): void {
    if (r.api !== "LeaderAndIsr") return;
    const offline = r.partitionErrors.filter((p) => p.errorCode === ErrorCode.KAFKA_STORAGE_ERROR).map(ref);
    if (offline.length === 0) return;
    void this.enqueue("LeaderAndIsrResponseReceived", async () => {
      if (this.active && this.term !== null) await this.term.notifications.onOfflineReplicas(r.brokerId, offline);
    });
  }

  /** ControlledShutdown (7), Kafka's doControlledShutdown: see BrokerEvents.controlledShutdown. */
  controlledShutdown(brokerId: number, brokerEpoch: bigint): Promise<{ errorCode: number; remaining: TopicPartitionRef[] }> {
    return this.call<{ errorCode: number; remaining: TopicPartitionRef[] }>("ControlledShutdown", async () => {
      if (!this.active) return { errorCode: ErrorCode.NOT_CONTROLLER, remaining: [] };
      return await this.t.brokers.controlledShutdown(brokerId, brokerEpoch);
    }, (e) => ({ errorCode: failureCode(e), remaining: [] }));
  }

  /**
   * AlterPartition (56): a leader's ISR proposal (alter_partition.ts). Topics named by id (v2+)
   * are resolved here; an id not known is UNKNOWN_TOPIC_ID.
   */
  alterPartition(
    brokerId: number,
    brokerEpoch: bigint,
    version: number,
    items: (Omit<AlterPartitionItem, "topic"> & { topic: string | null; topicId: Uint8Array | null })[],
  ): Promise<AlterPartitionAnswer> {
    return this.call("AlterPartition", async () => {
      if (!this.active) return { errorCode: ErrorCode.NOT_CONTROLLER, partitions: [] };
      const resolved = items.map((it) => ({ ...it, topic: it.topicId === null ? it.topic : this.topicNameOf(it.topicId) }));
      return await alterPartitionNow(this.c, this.t.reassigner, this.logger, brokerId, brokerEpoch, version, resolved);
    }, (e) => ({ errorCode: e instanceof ControllerMovedError ? ErrorCode.NOT_CONTROLLER : failureCode(e), partitions: [] }));
  }

  private topicNameOf(id: Uint8Array): string | null {
    for (const t of this.c.topics.values()) if (t.topicId.length === id.length && t.topicId.every((b, i) => b === id[i])) return t.name;
    return null;
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
      errorCode: failureCode(e),
      errorMessage: registryWriteFailure(e, "Leader election failed")?.errorMessage ?? null,
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
      for (const r of reqs) out.push({ ...ref(r), ...(await this.t.reassignments.alterReassignment(r.topic, r.partition, r.replicas)) });
      return out;
    }, (e) => reqs.map((r) => ({
      ...ref(r),
      errorCode: failureCode(e),
      errorMessage: registryWriteFailure(e, "The reassignment was not stored")?.errorMessage ?? null,
    })));
  }

  /** ListPartitionReassignments (46): the moves in progress, among `parts` (null: all). */
  listPartitionReassignments(parts: TopicPartitionRef[] | null): OngoingReassignment[] {
    if (!this.active || this.term === null) return [];
    return this.term.reassignments.listPartitionReassignments(parts);
  }
}

/**
 * The code a request answers when its controller event failed: NOT_CONTROLLER when it did not
 * run (stopped), KAFKA_STORAGE_ERROR when the registry could not store a change, else
 * UNKNOWN_SERVER_ERROR.
 */
function failureCode(e: unknown): number {
  if (e === null) return ErrorCode.NOT_CONTROLLER;
  return registryWriteFailure(e, "")?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR;
}
