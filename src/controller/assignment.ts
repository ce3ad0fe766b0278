// Replica assignment for new topics, as Kafka's AdminUtils.assignReplicasToBrokers does it
// (rack-unaware form): partition p's first replica is broker (p + start) mod n; the others follow
// at a shift that changes every n partitions, so leaders and followers spread evenly. `start` and
// `shift` are random in Kafka; they are parameters here so tests can fix them.

import { assert } from "../util/mod.ts";

export function assignReplicas(
  brokerIds: number[],
  numPartitions: number,
  replicationFactor: number,
  start: number,
  shift: number,
): Map<number, number[]> {
  const brokers = [...brokerIds].sort((a, b) => a - b);
  const n = brokers.length;
  assert(replicationFactor >= 1 && replicationFactor <= n, "replication factor within the live brokers");
  const out = new Map<number, number[]>();
  let nextReplicaShift = shift % n;
  for (let p = 0; p < numPartitions; p++) {
    if (p > 0 && p % n === 0) nextReplicaShift++;
    const first = (p + start) % n;
    const replicas = [brokers[first]];
    for (let j = 0; j < replicationFactor - 1; j++) {
      replicas.push(brokers[replicaIndex(first, nextReplicaShift, j, n)]);
    }
    out.set(p, replicas);
  }
  return out;
}

function replicaIndex(first: number, secondShift: number, j: number, n: number): number {
  const shift = 1 + ((secondShift + j) % (n - 1));
  return (first + shift) % n;
}

/** Null when an explicit assignment is usable, else why not (Kafka's wording where it has one). */
export function assignmentError(assignment: Map<number, number[]>, liveBrokers: Set<number>): string | null {
  const partitions = [...assignment.keys()].sort((a, b) => a - b);
  if (partitions.length === 0) return "Replica assignment is empty";
  if (partitions.some((p, i) => p !== i)) return "Partitions should be a consecutive 0-based integer sequence";
  const rf = assignment.get(0)!.length;
  for (const [p, replicas] of assignment) {
    if (replicas.length === 0) return `Partition ${p} has no replicas`;
    if (replicas.length !== rf) return "All partitions should have the same number of replicas";
    if (new Set(replicas).size !== replicas.length) return `Duplicate replica assignment found: ${replicas}`;
    const missing = replicas.filter((b) => !liveBrokers.has(b));
    if (missing.length > 0) return `Unknown broker(s) in replica assignment: ${missing.join(", ")}`;
  }
  return null;
}
