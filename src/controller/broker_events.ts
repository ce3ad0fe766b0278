// The controller's broker events, as Kafka's KafkaController handles them in ZooKeeper mode:
// BrokerChange (children of /brokers/ids: onBrokerFailure for the gone and the bounced,
// onBrokerStartup for the new and the bounced) and ControlledShutdown (a broker asks to stop
// leading before it stops).
//
// Invariants: ctx.liveBrokers is the registered brokers with their epochs (the czxid of their
// znode) as last read; a broker whose epoch changed lost its state and is handled as failed, then
// started. The channel has a queue for each live broker and for no other.

import type { Registry } from "../registry/mod.ts";
import { ErrorCode } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";
import type { BrokerInfo, ControllerChannel } from "./channel.ts";
import { type ControllerContext, isReassigning, type TermWatcher, type TopicPartitionRef } from "./context.ts";
import { moveLeadershipOff } from "./leader_moves.ts";
import type { PartitionStateMachine } from "./partition_states.ts";
import type { PartitionReassigner } from "./reassignment.ts";
import { type BrokerRegistration, readLiveBrokers } from "./zk_reads.ts";

export class BrokerEvents {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly registry: Registry,
    private readonly channel: ControllerChannel,
    private readonly states: PartitionStateMachine,
    private readonly reassigner: PartitionReassigner,
    private readonly watcher: TermWatcher,
    /** Listener name whose endpoint brokers advertise to clients. */
    private readonly listenerName: string,
    private readonly logger: Logger,
  ) {}

  /** At failover: the registered brokers (watching /brokers/ids), each with a queue on the channel. */
  async loadLiveBrokers(): Promise<void> {
    const ctx = this.ctx;
    const brokers = await readLiveBrokers(this.registry, this.watcher("BrokerChange", () => this.onBrokerChange()));
    for (const b of brokers) ctx.liveBrokers.set(b.id, this.toBrokerInfo(b));
    for (const b of ctx.liveBrokers.values()) this.channel.addBroker?.(b);
  }

  private toBrokerInfo(b: BrokerRegistration): BrokerInfo {
    const e = b.endpoints.find((x) => x.listenerName === this.listenerName) ?? b.endpoints[0];
    const endpoints = b.endpoints.map((x) => ({ listener: x.listenerName, host: x.host ?? "", port: x.port, securityProtocol: x.securityProtocol }));
    return { id: b.id, host: e?.host ?? "", port: e?.port ?? -1, rack: b.rack, epoch: b.epoch, endpoints };
  }

  private async onBrokerChange(): Promise<void> {
    const ctx = this.ctx;
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
      ctx.offlineReplicas.delete(id); // a broker that registers again has reopened its dirs
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
    const ctx = this.ctx;
    const dead = new Set(ids);
    const affected = ctx.allPartitions().filter((s) => s.replicas.some((r) => dead.has(r)) || !ctx.isLive(s.leader));
    const changed = await this.states.reconcile(affected);
    ctx.sendLeaderAndIsrToReplicas(changed);
    ctx.sendUpdateMetadataForAll();
  }

  /**
   * Kafka's onBrokerStartup: partitions without a state or a live leader may get one now; the new
   * brokers hear every partition they hold (as followers of the current leaders), the others
   * what changed, and everyone the new broker list.
   */
  private async onBrokerStartup(ids: number[]): Promise<void> {
    const ctx = this.ctx;
    const started = new Set(ids);
    const created = await this.states.initPartitions(ctx.allPartitions().filter((s) => s.partitionEpoch < 0));
    const changed = await this.states.reconcile(ctx.allPartitions().filter((s) => s.partitionEpoch >= 0 && !ctx.isLive(s.leader)));
    ctx.sendLeaderAndIsr(started, ctx.allPartitions());
    ctx.sendLeaderAndIsr([...ctx.liveBrokers.keys()].filter((id) => !started.has(id)), [...created, ...changed]);
    this.states.clearIsNew(created);
    ctx.sendUpdateMetadataForAll();
    // A move that waited for a target replica able to lead may finish now.
    for (const s of ctx.allPartitions()) if (isReassigning(s)) await this.reassigner.maybeComplete(s.topic, s.partition);
  }

  /**
   * Kafka's ControlledShutdown (doControlledShutdown): the broker stops being a leader candidate;
   * partitions it leads (with other replicas) move to another ISR member; partitions it follows
   * drop it from the ISR and it stops fetching them. `remaining` lists what it still leads.
   */
  async controlledShutdown(brokerId: number, brokerEpoch: bigint): Promise<{ errorCode: number; remaining: TopicPartitionRef[] }> {
    const ctx = this.ctx;
    const info = ctx.liveBrokers.get(brokerId);
    if (info === undefined) return { errorCode: ErrorCode.BROKER_NOT_AVAILABLE, remaining: [] };
    // Kafka refuses only an older registration and lets -1 (unknown) pass; strand wants the
    // registration exactly, so a request that cannot name it (v1, or forged) moves nothing. A
    // broker whose newer registration this controller has not read yet retries.
    if (brokerEpoch !== info.epoch) return { errorCode: ErrorCode.STALE_BROKER_EPOCH, remaining: [] };
    ctx.shuttingDown.add(brokerId);
    const { moved, remaining } = await moveLeadershipOff(ctx, brokerId);
    this.logger.info({ broker: brokerId, movedLeaders: moved, remaining: remaining.length }, "controlled shutdown");
    return { errorCode: ErrorCode.NONE, remaining };
  }
}
