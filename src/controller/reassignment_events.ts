// The controller's reassignment events, as Kafka's KafkaController handles them in ZooKeeper mode:
// ApiPartitionReassignment (AlterPartitionReassignments starts, replaces or cancels a move;
// ListPartitionReassignments reads them), ZkPartitionReassignment (/admin/reassign_partitions, the
// pre-2.4 tools' request) and PartitionReassignmentIsrChange (a moving partition's state znode
// changed). The moves themselves are PartitionReassigner's (reassignment.ts).
//
// Invariants: the latest request for a partition wins, whichever way it came; the znode lists
// the moves it asked for that still run, and is deleted when none is left. Changes to an existing
// /admin/reassign_partitions are ignored, as in Kafka: only its creation is a request.

import { type PartitionReplicas, ReassignPartitionsZNode, type Registry, RegistryError, TopicPartitionStateZNode, type WatchEvent } from "../registry/mod.ts";
import type { PartitionState } from "../replication/mod.ts";
import { ErrorCode } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";
import { type ControllerContext, isReassigning, type OngoingReassignment, ref, type TermWatcher, type TopicPartitionRef, tpKey } from "./context.ts";
import { type ApiError, PartitionReassigner } from "./reassignment.ts";
import { getDataOrNull } from "./zk_reads.ts";

export class ReassignmentEvents {
  readonly reassigner: PartitionReassigner;
  /** Moves /admin/reassign_partitions asked for that are still running, by partition. */
  private zkReassignments = new Map<string, PartitionReplicas>();
  private loadingZkReassignments = false;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly registry: Registry,
    private readonly watcher: TermWatcher,
    private readonly unwatch: (key: string) => void,
    /** Writes the topic's assignment znode from the controller's cache. */
    writeAssignment: (topic: string) => Promise<void>,
    private readonly logger: Logger,
  ) {
    this.reassigner = new PartitionReassigner(ctx, {
      writeAssignment,
      watchState: (topic, partition) => this.watchReassigningState(topic, partition),
      finished: (topic, partition) => this.zkReassignmentFinished(topic, partition),
    }, logger);
  }

  /** One partition of an AlterPartitionReassignments: start, replace or (replicas null) cancel its move. */
  async alterReassignment(topic: string, partition: number, replicas: number[] | null): Promise<ApiError> {
    const s = this.ctx.partition(topic, partition);
    if (s === undefined) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: "The partition does not exist." };
    if (replicas === null) {
      if (!isReassigning(s)) {
        return { errorCode: ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, errorMessage: `No partition reassignment is in progress for ${topic}-${partition}.` };
      }
    } else {
      const err = this.reassigner.validate(s, replicas);
      if (err !== null) return err;
    }
    // The latest request wins, whichever way it came: it replaces a /admin/reassign_partitions one.
    if (this.zkReassignments.delete(tpKey(topic, partition))) await this.writeZkReassignments();
    if (replicas === null) await this.reassigner.cancel(topic, partition);
    else await this.reassigner.start(topic, partition, replicas);
    return { errorCode: ErrorCode.NONE, errorMessage: null };
  }

  /** ListPartitionReassignments (46): the moves in progress, among `parts` (null: all). */
  listPartitionReassignments(parts: TopicPartitionRef[] | null): OngoingReassignment[] {
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
  async onZkReassignment(event: WatchEvent | null): Promise<void> {
    const ctx = this.ctx;
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
        const err = s === undefined ? { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: "The partition does not exist." } : this.reassigner.validate(s, e.replicas);
        if (err !== null) {
          this.logger.warn({ topic: e.topic, partition: e.partition, replicas: e.replicas, reason: err.errorMessage }, "partition reassignment refused");
          continue;
        }
        this.zkReassignments.set(tpKey(e.topic, e.partition), e);
        await this.reassigner.start(e.topic, e.partition, e.replicas);
      }
    } finally {
      this.loadingZkReassignments = false;
    }
    await this.writeZkReassignments();
  }

  private async zkReassignmentFinished(topic: string, partition: number): Promise<void> {
    if (this.zkReassignments.delete(tpKey(topic, partition)) && !this.loadingZkReassignments) await this.writeZkReassignments();
  }

  /** The topic is gone: its partitions' watches and the moves asked for it are dropped. */
  forgetTopic(topic: string, partitions: number[]): void {
    for (const p of partitions) this.unwatch(`ReassignmentIsrChange:${tpKey(topic, p)}`);
    for (const [key, r] of this.zkReassignments) if (r.topic === topic) this.zkReassignments.delete(key);
  }

  /** Topics were deleted: the znode no longer lists moves of theirs. */
  async topicsDeleted(): Promise<void> {
    if (this.zkReassignments.size > 0) await this.writeZkReassignments();
  }

  /** /admin/reassign_partitions with the moves it asked for that still run; deleted when none. */
  private async writeZkReassignments(): Promise<void> {
    const ctx = this.ctx;
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
    const cur = this.ctx.partition(topic, partition);
    if (cur === undefined || !isReassigning(cur) || cur.partitionEpoch < 0) return;
    await this.watchReassigningState(topic, partition);
    if ((await this.ctx.reread(cur)) === null) return;
    await this.reassigner.maybeComplete(topic, partition);
  }
}
