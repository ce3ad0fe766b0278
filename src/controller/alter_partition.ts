// AlterPartition (56) on the active controller (KIP-497), as Kafka 3.8's ZooKeeper-mode
// KafkaController.processAlterPartition decides it. A partition leader proposes a new ISR instead
// of writing the state znode itself; the controller checks it, writes
// /brokers/topics/<t>/partitions/<p>/state (fenced on /controller_epoch and conditional on the
// partition epoch, as every controller write), updates its cache, tells every broker through
// UpdateMetadata and answers the state written, with its new partition epoch.
//
// Checks, in Kafka's order:
// - the sender is a live broker at the registration it names (broker epoch = the czxid of its
//   /brokers/ids znode), else STALE_BROKER_EPOCH for the whole request;
// - per partition: unknown → UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID for an id, v2+); a
//   leader or partition epoch newer than the controller's → NOT_CONTROLLER (this controller is
//   likely deposed); an older leader epoch → FENCED_LEADER_EPOCH; the state already as asked →
//   answered as is (idempotent retries); an older partition epoch → INVALID_UPDATE_VERSION; a
//   new ISR member not live, or (v3) not at the broker epoch named → INELIGIBLE_REPLICA (v0-1:
//   OPERATION_NOT_ATTEMPTED).
// - Beyond Kafka's ZooKeeper controller (whose check is implied by the leader epoch): a sender
//   that is not the partition's leader is INVALID_REQUEST, as Kafka's KRaft controller answers;
//   the new ISR must include the leader and lie within the replicas (INVALID_REQUEST).
// A state write that loses its condition (a write the controller had not read) answers
// INVALID_UPDATE_VERSION and re-reads the state, so the leader's next proposal starts from it.

import { RegistryError } from "../registry/mod.ts";
import type { PartitionState } from "../replication/mod.ts";
import { ErrorCode, type Logger } from "../util/mod.ts";
import { type ControllerContext, isReassigning } from "./context.ts";
import type { PartitionReassigner } from "./reassignment.ts";

export interface AlterPartitionItem {
  /** The topic's name; null when the request named an id this controller does not know. */
  topic: string | null;
  partition: number;
  leaderEpoch: number;
  newIsr: number[];
  /** v3: each new ISR member's broker epoch (-1: not given). */
  newIsrEpochs: bigint[] | null;
  partitionEpoch: number;
}

export interface AlterPartitionOutcome {
  errorCode: number;
  /** The partition's state when errorCode is NONE. */
  state: PartitionState | null;
}

export interface AlterPartitionAnswer {
  errorCode: number;
  partitions: AlterPartitionOutcome[];
}

const fail = (errorCode: number): AlterPartitionOutcome => ({ errorCode, state: null });

function sameLeaderAndIsr(a: PartitionState, leader: number, leaderEpoch: number, isr: number[]): boolean {
  return a.leader === leader && a.leaderEpoch === leaderEpoch && a.isr.length === isr.length && a.isr.every((id, i) => id === isr[i]);
}

/** What the controller decides for one proposal before any write: an outcome, or "write". */
function check(ctx: ControllerContext, brokerId: number, version: number, it: AlterPartitionItem): AlterPartitionOutcome | "write" {
  if (it.topic === null) return fail(ErrorCode.UNKNOWN_TOPIC_ID);
  const cur = ctx.partition(it.topic, it.partition);
  if (cur === undefined || cur.partitionEpoch < 0) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  if (it.partitionEpoch > cur.partitionEpoch || it.leaderEpoch > cur.leaderEpoch) return fail(ErrorCode.NOT_CONTROLLER);
  if (it.leaderEpoch < cur.leaderEpoch) return fail(ErrorCode.FENCED_LEADER_EPOCH);
  if (cur.leader !== brokerId) return fail(ErrorCode.INVALID_REQUEST);
  if (sameLeaderAndIsr(cur, brokerId, it.leaderEpoch, it.newIsr)) return { errorCode: ErrorCode.NONE, state: cur };
  if (it.partitionEpoch < cur.partitionEpoch) return fail(ErrorCode.INVALID_UPDATE_VERSION);
  if (!it.newIsr.includes(brokerId) || it.newIsr.some((id) => !cur.replicas.includes(id)) || new Set(it.newIsr).size !== it.newIsr.length) {
    return fail(ErrorCode.INVALID_REQUEST);
  }
  const ineligible = it.newIsr.some((id, i) => {
    const live = ctx.liveBrokers.get(id);
    if (live === undefined) return true;
    const named = it.newIsrEpochs?.[i] ?? -1n;
    return named !== -1n && named !== live.epoch;
  });
  if (ineligible) return fail(version > 1 ? ErrorCode.INELIGIBLE_REPLICA : ErrorCode.OPERATION_NOT_ATTEMPTED);
  return "write";
}

/**
 * Handles one AlterPartition on the controller's queue. ControllerMovedError (a newer controller
 * was elected) propagates: the caller answers NOT_CONTROLLER and resigns.
 */
export async function alterPartitionNow(
  ctx: ControllerContext,
  reassigner: PartitionReassigner,
  logger: Logger,
  brokerId: number,
  brokerEpoch: bigint,
  version: number,
  items: AlterPartitionItem[],
): Promise<AlterPartitionAnswer> {
  const sender = ctx.liveBrokers.get(brokerId);
  if (sender === undefined || sender.epoch !== brokerEpoch) return { errorCode: ErrorCode.STALE_BROKER_EPOCH, partitions: [] };
  const out: AlterPartitionOutcome[] = [];
  const written: PartitionState[] = [];
  for (const it of items) {
    const d = check(ctx, brokerId, version, it);
    if (d !== "write") {
      if (d.errorCode !== ErrorCode.NONE) logger.info({ topic: it.topic, partition: it.partition, broker: brokerId, isr: it.newIsr, errorCode: d.errorCode }, "AlterPartition refused");
      out.push(d);
      continue;
    }
    const cur = ctx.partition(it.topic!, it.partition)!;
    const { isNew: _, ...base } = cur;
    const next: PartitionState = { ...base, isr: it.newIsr, controllerEpoch: ctx.epoch };
    try {
      next.partitionEpoch = await ctx.store.setState(next, cur.partitionEpoch);
    } catch (e) {
      if (!(e instanceof RegistryError && (e.code === "BadVersion" || e.code === "NoNode"))) throw e;
      await ctx.reread(cur);
      out.push(fail(ErrorCode.INVALID_UPDATE_VERSION));
      continue;
    }
    ctx.setPartition(next);
    written.push(next);
    logger.info({ topic: next.topic, partition: next.partition, broker: brokerId, isr: next.isr, was: cur.isr, partitionEpoch: next.partitionEpoch }, "ISR changed by AlterPartition");
    out.push({ errorCode: ErrorCode.NONE, state: next });
  }
  if (written.length > 0) ctx.sendUpdateMetadata(written.map((s) => s.topic));
  for (const s of written) if (isReassigning(s)) await reassigner.maybeComplete(s.topic, s.partition);
  return { errorCode: ErrorCode.NONE, partitions: out };
}
