// ControllerContext: what the active controller knows during one term (Kafka's ControllerContext
// plus the request batching of its ControllerChannelManager): live brokers with their epochs,
// brokers shutting down, every topic's partitions, and the fenced partition-state updates. A new
// context is made at each election, so nothing from an earlier term leaks into a later one.
//
// Invariants:
// - A cached PartitionState is never mutated: an update replaces it, so a state already handed
//   to the channel (which may queue it) stays what was sent.
// - A topic's cached partitions are exactly its assignment znode's partitions; `replicas` is the
//   full replica set (during a reassignment: target ∪ origin), with `addingReplicas` /
//   `removingReplicas` as the znode stores them.
// - `partitionEpoch` is the state znode's version; -1 marks a partition without a state znode yet
//   (no replica was online to lead it when it was created).
// - Every controller write of a state bumps the leader epoch and stamps this controller's epoch.

import { type Logger, TimeSlice } from "../util/mod.ts";
import type { ReplicaAssignment, Watcher, WatchEvent } from "../registry/mod.ts";
import { RegistryError } from "../registry/mod.ts";
import type { PartitionState } from "../replication/mod.ts";
import type { BrokerInfo, ControllerChannel, TopicInfo } from "./channel.ts";
import type { ControllerStore } from "./store.ts";

/** Attempts at one partition's state write while other writers keep changing it. */
export const stateWriteAttemptsMax = 10;

export interface TopicEntry {
  name: string;
  topicId: Uint8Array;
  /** Whether the assignment znode had a topic id (older tools wrote none; keep it that way). */
  hasTopicId: boolean;
  configs: Record<string, string>;
  configsZxid: bigint;
  partitions: Map<number, PartitionState>;
  /** Version of /brokers/topics/<t>, for the controller's conditional assignment writes. */
  zkVersion: number;
}

/** What an update decides for one partition: its new leader and ISR (and replica sets), nothing, or why not. */
export type Decision =
  | { leader: number; isr: number[]; replicas?: number[]; addingReplicas?: number[]; removingReplicas?: number[] }
  | { error: string }
  | null;

export interface UpdateResult {
  updated: PartitionState[];
  failed: { state: PartitionState; reason: string }[];
}

export interface TopicPartitionRef {
  topic: string;
  partition: number;
}

export interface PartitionResult extends TopicPartitionRef {
  errorCode: number;
  errorMessage: string | null;
}

export interface OngoingReassignment extends TopicPartitionRef {
  replicas: number[];
  addingReplicas: number[];
  removingReplicas: number[];
}

/**
 * The watcher a controller term sets for `key`: it runs fn as an event on the controller's queue
 * while the term lasts, and does nothing after it. One function per key, so the registry calls
 * it once per event however often it was set.
 */
export type TermWatcher = (key: string, fn: (event: WatchEvent) => Promise<void>) => Watcher;

/** Just the topic and partition of a reference (an answer must not echo a request's other fields). */
export function ref(tp: TopicPartitionRef): TopicPartitionRef {
  return { topic: tp.topic, partition: tp.partition };
}

export function tpKey(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

export function isReassigning(s: PartitionState): boolean {
  return (s.addingReplicas?.length ?? 0) > 0 || (s.removingReplicas?.length ?? 0) > 0;
}

export class ControllerContext {
  readonly liveBrokers = new Map<number, BrokerInfo>();
  readonly shuttingDown = new Set<number>();
  readonly topics = new Map<string, TopicEntry>();
  /**
   * Replicas whose log dir failed, by broker (Kafka's replicasOnOfflineDirs), from the brokers'
   * LeaderAndIsr answers (KAFKA_STORAGE_ERROR): they neither lead nor stay in ISRs. A broker's
   * set goes when it registers again (it reopened its dirs).
   */
  readonly offlineReplicas = new Map<number, Set<string>>();

  constructor(
    readonly store: ControllerStore,
    private readonly channel: ControllerChannel,
    readonly epoch: number,
    readonly controllerId: number,
    private readonly logger: Logger,
  ) {}

  /** Registered (shutting down or not). */
  isLive = (id: number): boolean => this.liveBrokers.has(id);
  /** May lead and join ISRs: registered and not shutting down. */
  isOnline = (id: number): boolean => this.liveBrokers.has(id) && !this.shuttingDown.has(id);

  /** Broker `id`'s replica of the partition is in a failed log dir. */
  isReplicaOffline(id: number, topic: string, partition: number): boolean {
    return this.offlineReplicas.get(id)?.has(tpKey(topic, partition)) ?? false;
  }

  /** May lead this partition and join its ISR: online, and its replica's log dir is not offline. */
  replicaOnline(s: TopicPartitionRef): (id: number) => boolean {
    if (this.offlineReplicas.size === 0) return this.isOnline;
    return (id) => this.isOnline(id) && !this.isReplicaOffline(id, s.topic, s.partition);
  }

  /** Gone for this partition: not registered, or its replica's log dir is offline. */
  replicaGone(s: TopicPartitionRef): (id: number) => boolean {
    return (id) => !this.isLive(id) || this.isReplicaOffline(id, s.topic, s.partition);
  }

  partition(topic: string, partition: number): PartitionState | undefined {
    return this.topics.get(topic)?.partitions.get(partition);
  }

  setPartition(state: PartitionState): void {
    const entry = this.topics.get(state.topic);
    if (entry !== undefined) entry.partitions.set(state.partition, state);
  }

  allPartitions(): PartitionState[] {
    const out: PartitionState[] = [];
    for (const t of this.topics.values()) out.push(...t.partitions.values());
    return out;
  }

  /** The topic as brokers are told of it: every partition, in partition order (a snapshot). */
  topicInfo(name: string, only?: (p: PartitionState) => boolean): TopicInfo | null {
    const t = this.topics.get(name);
    if (t === undefined) return null;
    const partitions = [...t.partitions.values()].filter((p) => only === undefined || only(p)).sort((a, b) => a.partition - b.partition);
    return { name, topicId: t.topicId, partitions, configs: t.configs, configsZxid: t.configsZxid };
  }

  /** The assignment znode's content, from the cache. */
  assignmentOf(topic: string): Map<number, ReplicaAssignment> {
    const out = new Map<number, ReplicaAssignment>();
    const t = this.topics.get(topic);
    if (t === undefined) return out;
    for (const p of [...t.partitions.values()].sort((a, b) => a.partition - b.partition)) {
      out.set(p.partition, { replicas: p.replicas, addingReplicas: p.addingReplicas ?? [], removingReplicas: p.removingReplicas ?? [] });
    }
    return out;
  }

  /**
   * Kafka's updateLeaderAndIsr: for each partition, decides the change on the cached state and
   * writes it conditional on the partition epoch; when a leader (or anyone) wrote the state
   * since, re-reads it and decides again on what is there now. ControllerMovedError propagates.
   */
  async updateStates(states: PartitionState[], decide: (s: PartitionState) => Decision): Promise<UpdateResult> {
    const result: UpdateResult = { updated: [], failed: [] };
    const slice = new TimeSlice();
    for (const initial of states) {
      await slice.yield(); // between partitions: each one's read, decision and write is a unit
      let cur: PartitionState = initial;
      let done = false;
      for (let attempt = 0; attempt < stateWriteAttemptsMax && !done; attempt++) {
        if (cur.partitionEpoch < 0) {
          result.failed.push({ state: cur, reason: "the partition has no state yet" });
          done = true;
          break;
        }
        const d = decide(cur);
        if (d === null) {
          done = true;
          break;
        }
        if ("error" in d) {
          result.failed.push({ state: cur, reason: d.error });
          done = true;
          break;
        }
        const { isNew: _, ...base } = cur;
        const next: PartitionState = { ...base, ...d, leaderEpoch: cur.leaderEpoch + 1, controllerEpoch: this.epoch };
        try {
          next.partitionEpoch = await this.store.setState(next, cur.partitionEpoch);
        } catch (e) {
          if (!(e instanceof RegistryError && (e.code === "BadVersion" || e.code === "NoNode"))) throw e;
          const fresh = await this.reread(cur);
          if (fresh === null) {
            result.failed.push({ state: cur, reason: "the partition state znode is gone" });
            done = true;
            break;
          }
          cur = fresh;
          continue;
        }
        this.setPartition(next);
        result.updated.push(next);
        done = true;
      }
      if (!done) result.failed.push({ state: cur, reason: `the state kept changing over ${stateWriteAttemptsMax} attempts` });
    }
    for (const f of result.failed) {
      this.logger.warn({ topic: f.state.topic, partition: f.state.partition, reason: f.reason }, "partition state change failed");
    }
    return result;
  }

  /** Re-reads a partition's state znode into the cache (keeping the assignment); null when gone. */
  async reread(cur: PartitionState): Promise<PartitionState | null> {
    const z = await this.store.readState(cur.topic, cur.partition);
    if (z === null) return null;
    const l = z.leaderAndIsr;
    const { isNew: _, ...base } = cur;
    const fresh: PartitionState = {
      ...base,
      leader: l.leader,
      leaderEpoch: l.leaderEpoch,
      isr: l.isr,
      controllerEpoch: z.controllerEpoch,
      partitionEpoch: l.partitionEpoch,
    };
    this.setPartition(fresh);
    return fresh;
  }

  // --- requests to brokers ---------------------------------------------------------------------
  // Sent without waiting: the channel keeps one ordered queue per broker, and a slow or dead
  // broker must not hold up the controller's events (Kafka's ControllerChannelManager).

  /**
   * LeaderAndIsr to each live broker in `brokers`, with the states it is a replica of (a
   * partition without a state znode yet has no leader to tell of, and is left out).
   */
  sendLeaderAndIsr(brokers: Iterable<number>, all: PartitionState[]): void {
    const states = all.filter((s) => s.partitionEpoch >= 0);
    if (states.length === 0) return;
    const live = [...this.liveBrokers.values()];
    for (const id of new Set(brokers)) {
      if (!this.liveBrokers.has(id)) continue;
      const topics = this.group(states.filter((s) => s.replicas.includes(id)));
      if (topics.length === 0) continue;
      this.fire("LeaderAndIsr", id, () => this.channel.leaderAndIsr(id, this.epoch, topics, live));
    }
  }

  /** LeaderAndIsr for each state to its live replicas. */
  sendLeaderAndIsrToReplicas(states: PartitionState[]): void {
    const brokers = new Set<number>();
    for (const s of states) for (const r of s.replicas) brokers.add(r);
    this.sendLeaderAndIsr(brokers, states);
  }

  /** UpdateMetadata with the whole of each named topic (and the deleted ones) to every live broker, or to `to`. */
  sendUpdateMetadata(topics: Iterable<string>, deleted: string[] = [], to?: Iterable<number>): void {
    const infos: TopicInfo[] = [];
    for (const name of new Set(topics)) {
      const info = this.topicInfo(name);
      if (info !== null) infos.push(info);
    }
    const brokers = [...this.liveBrokers.values()];
    for (const id of to ?? this.liveBrokers.keys()) {
      if (!this.liveBrokers.has(id)) continue;
      this.fire("UpdateMetadata", id, () => this.channel.updateMetadata(id, this.epoch, this.controllerId, brokers, infos, deleted));
    }
  }

  sendUpdateMetadataForAll(to?: Iterable<number>): void {
    this.sendUpdateMetadata(this.topics.keys(), [], to);
  }

  sendStopReplica(brokerId: number, partitions: { topic: string; partition: number }[], deletePartitions: boolean): void {
    if (partitions.length === 0 || !this.liveBrokers.has(brokerId)) return;
    const parts = partitions.map((p) => ({ topic: p.topic, partition: p.partition }));
    this.fire("StopReplica", brokerId, () => this.channel.stopReplica(brokerId, this.epoch, parts, deletePartitions));
  }

  /** States grouped into TopicInfos (configs from the cache), topics and partitions in order. */
  private group(states: PartitionState[]): TopicInfo[] {
    const byTopic = new Map<string, PartitionState[]>();
    for (const s of states) {
      const list = byTopic.get(s.topic) ?? [];
      list.push(s);
      byTopic.set(s.topic, list);
    }
    const out: TopicInfo[] = [];
    for (const [name, list] of byTopic) {
      const t = this.topics.get(name);
      if (t === undefined) continue;
      out.push({
        name,
        topicId: t.topicId,
        partitions: list.sort((a, b) => a.partition - b.partition),
        configs: t.configs,
        configsZxid: t.configsZxid,
      });
    }
    return out;
  }

  private fire(what: string, brokerId: number, send: () => Promise<void>): void {
    const fail = (e: unknown) =>
      this.logger.warn({ broker: brokerId, request: what, err: e instanceof Error ? e.message : String(e) }, "controller request failed");
    try {
      send().catch(fail);
    } catch (e) {
      fail(e);
    }
  }
}
