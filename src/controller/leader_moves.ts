// Moving leadership on request, over a ControllerContext (the controller runs these on its event
// queue): controlled shutdown of a broker (Kafka's doControlledShutdown), ElectLeaders (Kafka's
// processReplicaLeaderElection) and the automatic rebalance's choice of partitions (Kafka's
// checkAndTriggerAutoLeaderRebalance). Each writes through ControllerContext.updateStates and
// tells the brokers.

import type { PartitionState } from "../replication/mod.ts";
import { ErrorCode } from "../util/mod.ts";
import { type ControllerContext, type PartitionResult, ref, type TopicPartitionRef, tpKey } from "./context.ts";
import { controlledShutdownLeader, isrWithout, offlineLeader, preferredLeader, sameReplicas } from "./election.ts";

/**
 * For a broker already marked shutting down: partitions it leads (with other replicas) move to
 * another ISR member (it hears it now follows); partitions it follows drop it from the ISR (the
 * other replicas hear it) and it stops fetching them (StopReplica without delete). `remaining`:
 * partitions with other replicas it still leads (Kafka's answer; single-replica ones are not
 * counted, they go offline with it).
 */
export async function moveLeadershipOff(ctx: ControllerContext, brokerId: number): Promise<{ moved: number; remaining: TopicPartitionRef[] }> {
  const mine = ctx.allPartitions().filter((s) => s.replicas.includes(brokerId) && s.replicas.length > 1 && s.partitionEpoch >= 0);
  const shuttingDown = (id: number) => ctx.shuttingDown.has(id);
  const led = await ctx.updateStates(mine.filter((s) => s.leader === brokerId), (s) => {
    if (s.leader !== brokerId) return null;
    return controlledShutdownLeader(s.replicas, s.isr, ctx.replicaOnline(s), shuttingDown) ?? { error: "no other replica in the ISR can lead" };
  });
  ctx.sendLeaderAndIsrToReplicas(led.updated);
  const followed = mine.filter((s) => s.leader !== brokerId);
  const shrunk = await ctx.updateStates(followed.filter((s) => s.isr.includes(brokerId)), (s) => {
    if (s.leader === brokerId) return null;
    const isr = isrWithout(s.isr, (r) => r === brokerId);
    return sameReplicas(isr, s.isr) ? null : { leader: s.leader, isr };
  });
  const others = new Set(shrunk.updated.flatMap((s) => s.replicas).filter((r) => r !== brokerId));
  ctx.sendLeaderAndIsr(others, shrunk.updated);
  ctx.sendStopReplica(brokerId, followed, false);
  ctx.sendUpdateMetadata([...led.updated, ...shrunk.updated].map((s) => s.topic));
  const remaining = ctx.allPartitions()
    .filter((s) => s.leader === brokerId && s.replicas.length > 1)
    .map(ref);
  return { moved: led.updated.length, remaining };
}

/**
 * ElectLeaders: type 0 moves leadership to the preferred replica (first in assignment order)
 * when it is online and in the ISR; type 1 elects a leader for partitions without a live one,
 * from the ISR if it can, else any online replica. One result per distinct partition asked, in
 * the order asked.
 */
export async function electLeadersOnRequest(
  ctx: ControllerContext,
  electionType: 0 | 1,
  asked: TopicPartitionRef[],
): Promise<{ results: PartitionResult[]; elected: PartitionState[] }> {
  const results = new Map<string, PartitionResult>();
  const electable = new Map<string, PartitionState>();
  for (const tp of asked) {
    const key = tpKey(tp.topic, tp.partition);
    if (results.has(key) || electable.has(key)) continue;
    const s = ctx.partition(tp.topic, tp.partition);
    if (s === undefined) {
      results.set(key, { ...ref(tp), errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: "The partition does not exist." });
    } else if (electionType === 0 ? s.leader === s.replicas[0] : ctx.isLive(s.leader)) {
      results.set(key, { ...ref(tp), errorCode: ErrorCode.ELECTION_NOT_NEEDED, errorMessage: "Leader election not needed for topic partition." });
    } else {
      electable.set(key, s);
    }
  }
  const strategy = electionType === 0 ? "PreferredReplicaPartitionLeaderElectionStrategy" : "OfflinePartitionLeaderElectionStrategy(true)";
  const r = await ctx.updateStates([...electable.values()], (s) => {
    const failed = { error: `Failed to elect leader for partition ${s.topic}-${s.partition} under strategy ${strategy}` };
    if (electionType === 0) {
      const leader = preferredLeader(s.replicas, s.isr, ctx.replicaOnline(s));
      return leader === null ? failed : { leader, isr: s.isr };
    }
    const e = offlineLeader(s.replicas, s.isr, ctx.replicaOnline(s), true);
    return e === null ? failed : { leader: e.leader, isr: e.isr };
  });
  const failedCode = electionType === 0 ? ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE : ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE;
  for (const s of r.updated) results.set(tpKey(s.topic, s.partition), { ...ref(s), errorCode: ErrorCode.NONE, errorMessage: null });
  for (const f of r.failed) results.set(tpKey(f.state.topic, f.state.partition), { ...ref(f.state), errorCode: failedCode, errorMessage: f.reason });
  ctx.sendLeaderAndIsrToReplicas(r.updated);
  ctx.sendUpdateMetadata(r.updated.map((s) => s.topic));
  const out: PartitionResult[] = [];
  const seen = new Set<string>();
  for (const tp of asked) {
    const key = tpKey(tp.topic, tp.partition);
    const res = results.get(key);
    if (res !== undefined && !seen.has(key)) out.push(res);
    seen.add(key);
  }
  return { results: out, elected: r.updated };
}

/**
 * The automatic rebalance's candidates: for each broker, the share of the partitions it is the
 * preferred replica of that another broker leads; above `ratioMax`, those of them whose
 * preferred replica can lead now.
 */
export function imbalancedPartitions(ctx: ControllerContext, ratioMax: number): TopicPartitionRef[] {
  const byPreferred = new Map<number, PartitionState[]>();
  for (const s of ctx.allPartitions()) {
    if (s.partitionEpoch < 0 || s.replicas.length === 0) continue;
    const list = byPreferred.get(s.replicas[0]) ?? [];
    list.push(s);
    byPreferred.set(s.replicas[0], list);
  }
  const candidates: TopicPartitionRef[] = [];
  for (const [broker, parts] of byPreferred) {
    const elsewhere = parts.filter((s) => s.leader !== broker);
    if (elsewhere.length / parts.length <= ratioMax) continue;
    for (const s of elsewhere) if (preferredLeader(s.replicas, s.isr, ctx.replicaOnline(s)) !== null) candidates.push(ref(s));
  }
  return candidates;
}
