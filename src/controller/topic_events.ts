// The controller's topic events, as Kafka's KafkaController handles them in ZooKeeper mode:
// TopicChange (children of /brokers/topics: new topics get partition states, gone ones leave the
// cache), PartitionModifications (a topic znode changed: partitions CreatePartitions added get
// states) and TopicDeletion (/admin/delete_topics: StopReplica with delete to the replicas, then
// the topic's znodes go), plus the conditional write of a topic's assignment znode.
//
// Invariants: a topic is in the cache with every partition of its assignment znode, read at the
// version recorded in its entry; an assignment write is conditional on that version, and on a
// conflict what others added is read in before writing again. A new partition's LeaderAndIsr
// carries isNew; metadata goes to every broker after it.

import {
  ConfigEntityZNode,
  ConfigType,
  DeleteTopicsTopicZNode,
  DeleteTopicsZNode,
  type Registry,
  RegistryError,
  TopicZNode,
  type Watcher,
} from "../registry/mod.ts";
import type { PartitionState } from "../replication/mod.ts";
import { partitionWritesInFlightMax, TimeSlice } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";
import type { ControllerContext, TermWatcher, TopicEntry } from "./context.ts";
import type { PartitionStateMachine } from "./partition_states.ts";
import { getDataOrNull, readTopicConfigVersioned, readTopicNames } from "./zk_reads.ts";

/** Attempts at the controller's conditional assignment write while others change the topic. */
const assignmentWriteAttemptsMax = 10;

export interface TopicEventHooks {
  /** Forgets this term's watcher for `key`: the znode it watched is gone. */
  unwatch(key: string): void;
  /** The topic (with these partitions) left the cache: what watched or moved them is dropped. */
  forgotten(topic: string, partitions: number[]): void;
  /** Topics were deleted: reassignment requests that named them are written again. */
  topicsDeleted(): Promise<void>;
}

export class TopicEvents {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly registry: Registry,
    private readonly states: PartitionStateMachine,
    private readonly watcher: TermWatcher,
    private readonly hooks: TopicEventHooks,
    /** delete.topic.enable; when false, deletion requests are dropped, as Kafka drops them. */
    private readonly deleteTopicEnable: boolean,
    private readonly logger: Logger,
  ) {}

  /** At failover: every topic into the cache, watching /brokers/topics and each topic znode. */
  async loadAll(): Promise<void> {
    const names = await readTopicNames(this.registry, this.watcher("TopicChange", () => this.onTopicChange()));
    for (const name of names) await this.loadTopic(name);
  }

  /** Reads a topic's assignment (watching it), configs and partition states into the cache. */
  private async loadTopic(name: string): Promise<TopicEntry | null> {
    const node = await getDataOrNull(this.registry, TopicZNode.path(name), this.topicWatcher(name));
    // In pieces: the znode of 10,000 partitions took tens of ms to decode in one.
    const slice = new TimeSlice();
    const assignment = node === null ? null : await TopicZNode.decodeGradually(name, node.data, slice);
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
    this.ctx.topics.set(name, entry);
    // Read together, a slice at a time (one ZooKeeper round trip for many; the loop breathes).
    const all = [...assignment.assignment];
    for (let i = 0; i < all.length;) {
      const batch: Promise<PartitionState>[] = [];
      const size = slice.groupSize(partitionWritesInFlightMax);
      do batch.push(this.states.readPartition(entry, all[i][0], all[i++][1])); while (i < all.length && batch.length < size && !slice.due);
      for (const s of await slice.settle(batch)) entry.partitions.set(s.partition, s);
      await slice.yield();
    }
    return entry;
  }

  private topicWatcher(topic: string): Watcher {
    return this.watcher(`PartitionModifications:${topic}`, () => this.onPartitionModifications(topic));
  }

  private async onTopicChange(): Promise<void> {
    const ctx = this.ctx;
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
    const ctx = this.ctx;
    await this.states.initPartitions(states.filter((s) => s.partitionEpoch < 0));
    const latest = states.map((s) => ctx.partition(s.topic, s.partition)).filter((s): s is PartitionState => s !== undefined);
    ctx.sendLeaderAndIsrToReplicas(latest);
    ctx.sendUpdateMetadata(latest.map((s) => s.topic));
    this.states.clearIsNew(latest);
  }

  /** The topic znode changed: partitions added by CreatePartitions get states. */
  private async onPartitionModifications(topic: string): Promise<void> {
    const ctx = this.ctx;
    const node = await getDataOrNull(this.registry, TopicZNode.path(topic), this.topicWatcher(topic));
    if (node === null) return;
    const assignment = await TopicZNode.decodeGradually(topic, node.data);
    // Looked up after the decode's yields: the topic may have gone meanwhile.
    const entry = ctx.topics.get(topic);
    if (entry === undefined) return;
    if (assignment === null) {
      this.logger.warn({ topic }, "topic znode is malformed; change ignored");
      return;
    }
    entry.zkVersion = node.stat.version;
    const added: PartitionState[] = [];
    for (const [p, a] of assignment.assignment) {
      if (entry.partitions.has(p)) continue;
      const s = await this.states.readPartition(entry, p, a);
      entry.partitions.set(p, s);
      added.push(s);
    }
    if (added.length === 0) return;
    this.logger.info({ topic, partitions: added.map((s) => s.partition) }, "new partitions");
    await this.onNewPartitions(added);
  }

  /** Writes a topic's assignment znode from the cache, conditional on the version last read. */
  async writeAssignment(topic: string): Promise<void> {
    const ctx = this.ctx;
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
    const partitions = [...(this.ctx.topics.get(name)?.partitions.keys() ?? [])];
    this.hooks.unwatch(`PartitionModifications:${name}`);
    this.ctx.topics.delete(name);
    this.hooks.forgotten(name, partitions);
  }

  async onDeleteTopics(): Promise<void> {
    const ctx = this.ctx;
    const queued = await this.registry.getChildren(DeleteTopicsZNode.path, this.watcher("TopicDeletion", () => this.onDeleteTopics()));
    if (queued.length === 0) return;
    if (!this.deleteTopicEnable) {
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
    await this.hooks.topicsDeleted();
  }
}
