// Fetch from the closest replica (KIP-392): with replica.selector.class set to Kafka's
// RackAwareReplicaSelector, the leader answers a consumer's fetch (Fetch v11+, which carries the
// consumer's client.rack as rack_id) whose rack differs from its own with preferred_read_replica:
// the most caught-up in-sync follower in the consumer's rack (highest log end offset, then the
// most recently caught up, then the highest id: Kafka's ReplicaView.comparator), and reads
// nothing for it. No rack, no replica in that rack, or the leader itself in it: the leader serves.
// Followers considered are those the leader sees in the ISR holding the fetch offset
// (Partition.readReplicaCandidates) with an endpoint on the consumer's listener.
//
// The follower side (any v11+ consumer fetch, selector or not, as Kafka) is in ReplicaManager:
// it reads up to the follower's own high watermark (the last stable offset for read_committed).

import type { Partition } from "../replication/mod.ts";
import type { MetadataCache } from "./metadata_cache.ts";

export const rackAwareReplicaSelector = "org.apache.kafka.common.replica.RackAwareReplicaSelector";

/** replica.selector.class's check: empty or Kafka's RackAwareReplicaSelector. */
export function replicaSelectorError(v: string): string | null {
  const name = v.trim();
  return name === "" || name === rackAwareReplicaSelector ? null : `"${name}" is not ${rackAwareReplicaSelector} (the one replica selector strand has)`;
}

export interface ReplicaView {
  brokerId: number;
  rack: string | null;
  logEndOffset: number;
  timeSinceLastCaughtUpMs: number;
}

/** RackAwareReplicaSelector.select: the replica the client should read (the leader's id when it should stay). */
export function selectRackAware(clientRack: string, leader: ReplicaView, replicas: ReplicaView[]): number {
  if (clientRack === "") return leader.brokerId;
  const sameRack = replicas.filter((r) => r.rack === clientRack);
  if (sameRack.length === 0 || sameRack.some((r) => r.brokerId === leader.brokerId)) return leader.brokerId;
  let best = sameRack[0];
  for (const r of sameRack.slice(1)) if (better(r, best)) best = r;
  return best.brokerId;
}

function better(a: ReplicaView, b: ReplicaView): boolean {
  if (a.logEndOffset !== b.logEndOffset) return a.logEndOffset > b.logEndOffset;
  if (a.timeSinceLastCaughtUpMs !== b.timeSinceLastCaughtUpMs) return a.timeSinceLastCaughtUpMs < b.timeSinceLastCaughtUpMs;
  return a.brokerId > b.brokerId;
}

/**
 * The per-partition choice a consumer fetch's reads make on this leader, or undefined when no
 * selector is configured (replica.selector.class empty: Kafka's default, the leader serves).
 */
export function preferredReadReplicaFor(
  selectorClass: string,
  metadata: MetadataCache,
  listener: string,
  clientRack: string,
  monotonicMs: number,
): ((p: Partition, fetchOffset: number) => number) | undefined {
  if (selectorClass !== rackAwareReplicaSelector) return undefined;
  return (p, fetchOffset) => {
    const leaderNode = metadata.endpointFor(p.localBrokerId, listener);
    const leader: ReplicaView = { brokerId: p.localBrokerId, rack: leaderNode?.rack ?? null, logEndOffset: p.log.logEndOffset, timeSinceLastCaughtUpMs: 0 };
    const replicas = [leader];
    for (const c of p.readReplicaCandidates(fetchOffset, monotonicMs)) {
      const node = metadata.endpointFor(c.brokerId, listener);
      if (node !== undefined) replicas.push({ ...c, rack: node.rack });
    }
    const chosen = selectRackAware(clientRack, leader, replicas);
    return chosen === p.localBrokerId ? -1 : chosen;
  };
}
