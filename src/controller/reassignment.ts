// Partition reassignment (KIP-455 in ZooKeeper mode), as Kafka's KafkaController.onPartitionReassignment
// runs it. With ORS the replicas before, TRS the target and RS = TRS ∪ ORS:
//
//   start:    RS, AR = RS - ORS (adding), RR = RS - TRS (removing) are written to the topic znode
//             (Kafka's version 3 layout, so a new controller resumes the move), then to the state
//             with a new leader epoch, and LeaderAndIsr with RS goes to every replica: the new ones
//             start fetching from the leader.
//   wait:     until every TRS replica is in the ISR (the leader adds them as they catch up; the
//             controller hears of it through the state znode's data watch and
//             /isr_change_notification).
//   complete: a leader from TRS (the current one when it is in TRS and online), replicas = TRS,
//             ISR without RR, one state write; LeaderAndIsr to TRS, StopReplica(delete) to RR, the
//             topic znode without AR/RR, UpdateMetadata everywhere.
//
// A new target for a partition already moving replaces the old one: replicas the old move was
// adding that the new one does not want are dropped at once. Cancelling (target null) moves back
// to ORS. A target equal to ORS (in any order) is not a move: it completes at once.

import type { PartitionState } from "../replication/mod.ts";
import { ErrorCode } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";
import { type ControllerContext, isReassigning } from "./context.ts";
import { isrWithout, offlineLeader, reassignmentLeader } from "./election.ts";

export interface ReassignmentHooks {
  /** Writes the topic's assignment znode from the controller's cache. */
  writeAssignment(topic: string): Promise<void>;
  /** Watches the partition's state znode, so an ISR change re-checks the move. */
  watchState(topic: string, partition: number): Promise<void>;
  /** The partition's move completed (or was replaced, or cancelled). */
  finished(topic: string, partition: number): Promise<void>;
}

export interface ApiError {
  errorCode: number;
  errorMessage: string | null;
}

const distinct = (xs: number[]): number[] => [...new Set(xs)];
const list = (xs: readonly number[]): string => `[${xs.join(", ")}]`;

/** The origin replicas (ORS) of a partition: its replica set without the ones being added. */
export function originReplicas(s: PartitionState): number[] {
  return s.replicas.filter((r) => !(s.addingReplicas ?? []).includes(r));
}

/** The target replicas (TRS) of a partition: its replica set without the ones being removed. */
export function targetReplicas(s: PartitionState): number[] {
  return s.replicas.filter((r) => !(s.removingReplicas ?? []).includes(r));
}

export class PartitionReassigner {
  constructor(private readonly ctx: ControllerContext, private readonly hooks: ReassignmentHooks, private readonly logger: Logger) {}

  /** Kafka's validateReassignment: null when `target` may be moved to. */
  validate(s: PartitionState, target: number[]): ApiError | null {
    const bad = (errorMessage: string): ApiError => ({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, errorMessage });
    if (target.length === 0) return bad("Empty replica list specified in partition reassignment.");
    if (new Set(target).size !== target.length) return bad(`Duplicate replica ids in partition reassignment replica list: ${list(target)}`);
    if (target.some((r) => r < 0)) return bad(`Invalid broker id in replica list: ${list(target)}`);
    const adding = target.filter((r) => !originReplicas(s).includes(r));
    if (!adding.every(this.ctx.isOnline)) {
      const live = [...this.ctx.liveBrokers.keys()].filter(this.ctx.isOnline).sort((a, b) => a - b);
      return bad(`Replica assignment has brokers that are not alive. Replica list: ${list(adding)}, live broker list: ${list(live)}`);
    }
    return null;
  }

  /** Starts (or replaces) the move of a partition to `target` (already validated). */
  async start(topic: string, partition: number, target: number[]): Promise<void> {
    const cur = this.ctx.partition(topic, partition);
    if (cur === undefined) return;
    const origin = originReplicas(cur);
    const rs = distinct([...target, ...origin]);
    const adding = rs.filter((r) => !origin.includes(r));
    const removing = rs.filter((r) => !target.includes(r));
    if (adding.length === 0 && removing.length === 0) {
      await this.complete(cur, target, false);
      return;
    }
    const unneeded = cur.replicas.filter((r) => !rs.includes(r));
    this.logger.info({ topic, partition, target, adding, removing, dropped: unneeded }, "partition reassignment started");
    // The znode first: a controller failing over from here on resumes the move.
    this.ctx.setPartition({ ...cur, replicas: rs, addingReplicas: adding, removingReplicas: removing });
    try {
      await this.hooks.writeAssignment(topic);
    } catch (e) {
      // Not stored (the registry's disk full): the cache shows what the registry holds, so
      // ListPartitionReassignments does not list a move that never started.
      if (this.ctx.partition(topic, partition)?.addingReplicas === adding) this.ctx.setPartition(cur);
      throw e;
    }
    await this.hooks.watchState(topic, partition);
    const online = this.ctx.replicaOnline({ topic, partition });
    const r = await this.ctx.updateStates([this.ctx.partition(topic, partition)!], (s) => {
      const isr = isrWithout(s.isr, (id) => !rs.includes(id));
      const leader = rs.includes(s.leader) ? s.leader : (offlineLeader(rs, isr, online, false)?.leader ?? -1);
      return { leader, isr, replicas: rs, addingReplicas: adding, removingReplicas: removing };
    });
    for (const id of unneeded) this.ctx.sendStopReplica(id, [{ topic, partition }], true);
    if (await this.maybeComplete(topic, partition)) return;
    this.ctx.sendLeaderAndIsrToReplicas(r.updated);
    this.ctx.sendUpdateMetadata([topic]);
  }

  /** Moves back to the origin replicas; false when no move is in progress. */
  async cancel(topic: string, partition: number): Promise<boolean> {
    const cur = this.ctx.partition(topic, partition);
    if (cur === undefined || !isReassigning(cur)) return false;
    this.logger.info({ topic, partition }, "partition reassignment cancelled");
    await this.start(topic, partition, originReplicas(cur));
    return true;
  }

  /** Completes the partition's move if every target replica is in the ISR; true when it did. */
  async maybeComplete(topic: string, partition: number): Promise<boolean> {
    const cur = this.ctx.partition(topic, partition);
    if (cur === undefined || !isReassigning(cur)) return false;
    const target = targetReplicas(cur);
    if (!target.every((r) => cur.isr.includes(r))) return false;
    return await this.complete(cur, target, true);
  }

  /**
   * Replicas = target, adding = removing = []. With `requireInIsr` (a real move) every target
   * replica must be in the (re-read) ISR and one of them must be able to lead.
   */
  private async complete(cur: PartitionState, target: number[], requireInIsr: boolean): Promise<boolean> {
    const { topic, partition } = cur;
    const removed = cur.replicas.filter((r) => !target.includes(r));
    const online = this.ctx.replicaOnline(cur);
    let done: PartitionState;
    if (cur.partitionEpoch < 0) {
      // No state yet (no replica was ever online): only the assignment changes.
      done = { ...cur, replicas: target, addingReplicas: [], removingReplicas: [] };
      this.ctx.setPartition(done);
    } else {
      const r = await this.ctx.updateStates([cur], (s) => {
        if (requireInIsr && !target.every((x) => s.isr.includes(x))) return null;
        let leader = s.leader;
        if (!target.includes(leader) || !online(leader)) {
          const chosen = reassignmentLeader(target, s.isr, online);
          if (chosen === null && requireInIsr) return { error: "no replica of the new replica set can lead" };
          leader = chosen ?? (target.includes(leader) ? leader : -1);
        }
        return { leader, isr: isrWithout(s.isr, (x) => !target.includes(x)), replicas: target, addingReplicas: [], removingReplicas: [] };
      });
      if (r.updated.length === 0) return false;
      done = r.updated[0];
      this.ctx.sendLeaderAndIsrToReplicas([done]);
    }
    for (const id of removed) this.ctx.sendStopReplica(id, [{ topic, partition }], true);
    await this.hooks.writeAssignment(topic);
    await this.hooks.finished(topic, partition);
    this.ctx.sendUpdateMetadata([topic]);
    this.logger.info({ topic, partition, replicas: target, leader: done.leader, removed }, "partition reassignment completed");
    return true;
  }
}
