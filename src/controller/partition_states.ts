// The controller's partition state changes, as Kafka's PartitionStateMachine makes them over a
// ControllerContext (the controller runs them on its event queue): reading a partition's state
// znode with its assignment, creating the states of new partitions (NewPartition →
// OnlinePartition), and electing leaders for partitions without a live one while taking dead
// replicas (and replicas in failed log dirs) out of ISRs (OfflinePartition → OnlinePartition, the
// OfflineReplica transition).
//
// Invariants: a new partition's state is created once (a NodeExists means someone else did, and
// the state is read instead); every later write goes through ControllerContext.updateStates, so it
// is conditional on the partition epoch; isNew stays in the cache only until the LeaderAndIsr
// that creates the partition went out.

import type { Registry, ReplicaAssignment } from "../registry/mod.ts";
import { RegistryError } from "../registry/mod.ts";
import type { PartitionState } from "../replication/mod.ts";
import { partitionWritesInFlightMax, TimeSlice } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";
import type { ControllerContext, TopicEntry } from "./context.ts";
import { isrWithout, offlineLeader, sameReplicas } from "./election.ts";
import { readTopicConfigVersioned } from "./zk_reads.ts";

const uncleanConfigKey = "unclean.leader.election.enable";

export class PartitionStateMachine {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly registry: Registry,
    /** unclean.leader.election.enable, the broker default; a topic's config overrides it. */
    private readonly uncleanDefault: boolean,
    private readonly logger: Logger,
  ) {}

  /** A partition's state znode with its assignment; partitionEpoch -1 when it has no state yet. */
  async readPartition(entry: TopicEntry, partition: number, a: ReplicaAssignment): Promise<PartitionState> {
    const z = await this.ctx.store.readState(entry.name, partition);
    const base = {
      topic: entry.name,
      partition,
      topicId: entry.topicId,
      replicas: a.replicas,
      addingReplicas: a.addingReplicas,
      removingReplicas: a.removingReplicas,
    };
    if (z === null) return { ...base, controllerEpoch: this.ctx.epoch, leader: -1, leaderEpoch: 0, isr: [], partitionEpoch: -1 };
    const l = z.leaderAndIsr;
    return { ...base, controllerEpoch: z.controllerEpoch, leader: l.leader, leaderEpoch: l.leaderEpoch, isr: l.isr, partitionEpoch: l.partitionEpoch };
  }

  /**
   * Kafka's initializeLeaderAndIsrForPartitions: a state znode for each partition that has none,
   * led by its first online replica with every online replica in the ISR. A partition with no
   * online replica waits (no state) until one registers.
   */
  async initPartitions(states: PartitionState[]): Promise<PartitionState[]> {
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
    const ctx = this.ctx;
    const live = s.replicas.filter(ctx.isOnline);
    if (live.length === 0) {
      this.logger.warn({ topic: s.topic, partition: s.partition, replicas: s.replicas }, "no replica of the new partition is alive; it waits");
      return null;
    }
    const next: PartitionState = { ...s, leader: live[0], leaderEpoch: 0, isr: live, controllerEpoch: ctx.epoch, partitionEpoch: 0, isNew: true };
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
  clearIsNew(states: PartitionState[]): void {
    const ctx = this.ctx;
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
  async reconcile(states: PartitionState[]): Promise<PartitionState[]> {
    const ctx = this.ctx;
    // A replica in a failed log dir counts as dead for its partition (Kafka's isReplicaOnline).
    const needUnclean = new Set(states.filter((s) => ctx.replicaGone(s)(s.leader) && !s.isr.some(ctx.replicaOnline(s))).map((s) => s.topic));
    const unclean = await this.uncleanElectionEnabled(needUnclean);
    const r = await ctx.updateStates(states.filter((s) => s.partitionEpoch >= 0), (s) => {
      const dead = ctx.replicaGone(s);
      if (dead(s.leader)) {
        const e = offlineLeader(s.replicas, s.isr, ctx.replicaOnline(s), unclean.get(s.topic) ?? this.uncleanDefault);
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
      const entry = this.ctx.topics.get(name);
      if (entry !== undefined && read.zxid > entry.configsZxid) {
        entry.configs = read.configs;
        entry.configsZxid = read.zxid;
      }
      const v = read.configs[uncleanConfigKey]?.trim().toLowerCase();
      out.set(name, v === "true" ? true : v === "false" ? false : this.uncleanDefault);
    }
    return out;
  }
}
