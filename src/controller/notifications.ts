// The controller's notification events, as Kafka's KafkaController handles them in ZooKeeper
// mode: IsrChangeNotification (leaders announce ISR changes under /isr_change_notification) and
// LogDirEventNotification (a broker that lost a log dir writes
// /log_dir_event_notification/log_dir_event_<seq>). Both are sequential znodes the controller
// reads and then deletes.
//
// Invariants: the ISR change notices read are deleted even when handling them failed half-way
// (the resync that follows reads every state again); a broker that reported a failed log dir is
// sent the states of all its replicas, and the replicas it answers KAFKA_STORAGE_ERROR for are
// offline for the rest of its registration: never leader, never in an ISR.

import {
  IsrChangeNotificationSequenceZNode,
  IsrChangeNotificationZNode,
  LogDirEventNotificationSequenceZNode,
  LogDirEventNotificationZNode,
  type Registry,
} from "../registry/mod.ts";
import type { PartitionState } from "../replication/mod.ts";
import type { Logger } from "../util/mod.ts";
import { type ControllerContext, isReassigning, type TermWatcher, type TopicPartitionRef, tpKey } from "./context.ts";
import type { PartitionStateMachine } from "./partition_states.ts";
import type { PartitionReassigner } from "./reassignment.ts";
import { getDataOrNull } from "./zk_reads.ts";

export class NotificationEvents {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly registry: Registry,
    private readonly reassigner: PartitionReassigner,
    private readonly states: PartitionStateMachine,
    private readonly watcher: TermWatcher,
    private readonly logger: Logger,
  ) {}

  /**
   * Leaders announce ISR changes under /isr_change_notification: re-read those partitions'
   * states, tell every broker, check the reassignments waiting for them, delete the notices.
   */
  async onIsrChange(): Promise<void> {
    const ctx = this.ctx;
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
      for (const s of fresh) if (isReassigning(s)) await this.reassigner.maybeComplete(s.topic, s.partition);
    } finally {
      for (const name of names) await ctx.store.delete(`${IsrChangeNotificationZNode.path}/${name}`);
    }
  }

  /**
   * Reads and deletes the log dir failure notifications brokers wrote, then (Kafka's
   * onBrokerLogDirFailure) sends each reporting broker the states of all its replicas: it answers
   * KAFKA_STORAGE_ERROR for those in a failed dir, and onOfflineReplicas moves their leadership.
   */
  async onLogDirEvents(): Promise<void> {
    const ctx = this.ctx;
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
    for (const id of brokers) if (ctx.isLive(id)) ctx.sendLeaderAndIsr([id], ctx.allPartitions());
  }

  /**
   * Kafka's LeaderAndIsrResponseReceived: a broker answered KAFKA_STORAGE_ERROR for replicas in a
   * failed log dir. Those it had not reported before become offline (onReplicasBecomeOffline):
   * partitions they led elect another ISR member (or go offline), they leave the ISRs, and the
   * replicas and every broker hear the new states.
   */
  async onOfflineReplicas(brokerId: number, partitions: TopicPartitionRef[]): Promise<void> {
    const ctx = this.ctx;
    if (!ctx.isLive(brokerId)) return;
    let set = ctx.offlineReplicas.get(brokerId);
    const fresh: PartitionState[] = [];
    for (const tp of partitions) {
      const key = tpKey(tp.topic, tp.partition);
      const s = ctx.partition(tp.topic, tp.partition);
      if (s === undefined || set?.has(key)) continue;
      if (set === undefined) ctx.offlineReplicas.set(brokerId, set = new Set());
      set.add(key);
      fresh.push(s);
    }
    if (fresh.length === 0) return;
    this.logger.warn({ broker: brokerId, partitions: fresh.map((s) => tpKey(s.topic, s.partition)) }, "replicas offline in a failed log dir: moving leadership");
    const changed = await this.states.reconcile(fresh);
    ctx.sendLeaderAndIsrToReplicas(changed);
    if (changed.length > 0) ctx.sendUpdateMetadata(changed.map((s) => s.topic));
  }
}
