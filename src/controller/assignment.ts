// Replica assignment for new topics and new partitions, as Kafka's AdminUtils.assignReplicasToBrokers
// does it.
//
// Rack-unaware (no broker has a rack): brokers sorted by id; partition p's first replica is broker
// (p + start) mod n, the others follow at a shift that grows every n partitions, so leaders and
// followers spread evenly.
// Rack-aware (every broker has a rack): the same walk over a rack-alternated broker list (one
// broker of each rack in turn, racks sorted by name, brokers by id within a rack); a follower is
// skipped while its rack already holds a replica and some rack holds none, or while its broker
// already holds one and some broker holds none. Some brokers with a rack and others without is
// refused, as Kafka refuses it.
//
// `fixedStartIndex` -1 takes a random start index and shift (Kafka's default); CreatePartitions
// passes the index of partition 0's first replica and the current partition count, so new
// partitions continue the existing pattern.

import { ErrorCode, KafkaError } from "../util/mod.ts";

export interface BrokerRack {
  id: number;
  rack: string | null;
}

/** Kafka's wording for a cluster where only some brokers name their rack (AdminOperationException). */
export const mixedRacksMessage = "Not all brokers have rack information for replica rack aware assignment.";

/**
 * Partition → replicas for partitions startPartitionId .. startPartitionId + nPartitions - 1.
 * Throws KafkaError (INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR, or UNKNOWN_SERVER_ERROR for
 * mixed rack information, which Kafka answers as an unexpected admin failure).
 */
export function assignReplicasToBrokers(
  brokers: readonly BrokerRack[],
  nPartitions: number,
  replicationFactor: number,
  fixedStartIndex: number,
  startPartitionId: number,
  random: (n: number) => number,
): Map<number, number[]> {
  if (nPartitions <= 0) throw new KafkaError(ErrorCode.INVALID_PARTITIONS, "Number of partitions must be larger than 0.");
  if (replicationFactor <= 0) throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0.");
  if (replicationFactor > brokers.length) {
    throw new KafkaError(
      ErrorCode.INVALID_REPLICATION_FACTOR,
      `Replication factor: ${replicationFactor} larger than available brokers: ${brokers.length}.`,
    );
  }
  const sorted = [...brokers].sort((a, b) => a.id - b.id);
  if (sorted.every((b) => b.rack === null)) {
    return rackUnaware(sorted.map((b) => b.id), nPartitions, replicationFactor, fixedStartIndex, startPartitionId, random);
  }
  if (sorted.some((b) => b.rack === null)) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, mixedRacksMessage);
  const racks = new Map(sorted.map((b) => [b.id, b.rack as string]));
  return rackAware(racks, nPartitions, replicationFactor, fixedStartIndex, startPartitionId, random);
}

function rackUnaware(
  brokers: number[],
  nPartitions: number,
  replicationFactor: number,
  fixedStartIndex: number,
  startPartitionId: number,
  random: (n: number) => number,
): Map<number, number[]> {
  const n = brokers.length;
  const startIndex = fixedStartIndex >= 0 ? fixedStartIndex : random(n);
  let nextReplicaShift = fixedStartIndex >= 0 ? fixedStartIndex : random(n);
  const out = new Map<number, number[]>();
  let partition = Math.max(0, startPartitionId);
  for (let i = 0; i < nPartitions; i++, partition++) {
    if (partition > 0 && partition % n === 0) nextReplicaShift++;
    const first = (partition + startIndex) % n;
    const replicas = [brokers[first]];
    for (let j = 0; j < replicationFactor - 1; j++) replicas.push(brokers[replicaIndex(first, nextReplicaShift, j, n)]);
    out.set(partition, replicas);
  }
  return out;
}

function rackAware(
  rackOf: Map<number, string>,
  nPartitions: number,
  replicationFactor: number,
  fixedStartIndex: number,
  startPartitionId: number,
  random: (n: number) => number,
): Map<number, number[]> {
  const numRacks = new Set(rackOf.values()).size;
  const arranged = rackAlternatedBrokerList(rackOf);
  const n = arranged.length;
  const startIndex = fixedStartIndex >= 0 ? fixedStartIndex : random(n);
  let nextReplicaShift = fixedStartIndex >= 0 ? fixedStartIndex : random(n);
  const out = new Map<number, number[]>();
  let partition = Math.max(0, startPartitionId);
  for (let i = 0; i < nPartitions; i++, partition++) {
    if (partition > 0 && partition % n === 0) nextReplicaShift++;
    const first = (partition + startIndex) % n;
    const leader = arranged[first];
    const replicas = [leader];
    const racksWithReplicas = new Set([rackOf.get(leader)!]);
    const brokersWithReplicas = new Set([leader]);
    let k = 0;
    for (let j = 0; j < replicationFactor - 1; j++) {
      // Terminates: once every rack (and broker) holds a replica the conditions accept anything
      // not yet chosen, and the shifted walk visits every other broker within n - 1 steps.
      for (;;) {
        const broker = arranged[replicaIndex(first, nextReplicaShift * numRacks, k, n)];
        const rack = rackOf.get(broker)!;
        k++;
        if (
          (!racksWithReplicas.has(rack) || racksWithReplicas.size === numRacks) &&
          (!brokersWithReplicas.has(broker) || brokersWithReplicas.size === n)
        ) {
          replicas.push(broker);
          racksWithReplicas.add(rack);
          brokersWithReplicas.add(broker);
          break;
        }
      }
    }
    out.set(partition, replicas);
  }
  return out;
}

function replicaIndex(first: number, secondShift: number, j: number, n: number): number {
  const shift = 1 + ((secondShift + j) % (n - 1));
  return (first + shift) % n;
}

/** One broker from each rack in turn (racks by name, brokers by id), e.g. r1:[0,5] r2:[3,4] r3:[1,2] → 0,3,1,5,4,2. */
export function rackAlternatedBrokerList(rackOf: ReadonlyMap<number, string>): number[] {
  const byRack = new Map<string, number[]>();
  for (const [id, rack] of rackOf) {
    const list = byRack.get(rack) ?? [];
    list.push(id);
    byRack.set(rack, list);
  }
  const racks = [...byRack.keys()].sort();
  const lists = racks.map((r) => byRack.get(r)!.sort((a, b) => a - b));
  const out: number[] = [];
  for (let round = 0; out.length < rackOf.size; round++) {
    for (const list of lists) if (round < list.length) out.push(list[round]);
  }
  return out;
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
