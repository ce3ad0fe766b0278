// Leader election strategies, as Kafka's Election.scala and PartitionLeaderElectionAlgorithms
// define them. Pure functions of a partition's replicas (assignment order), ISR and which brokers
// may lead (`online`: registered and not shutting down); the controller writes what they choose.
//
// Invariants:
// - A clean election picks an ISR member; only the offline strategy with `unclean` may pick a
//   replica outside the ISR, and then the ISR becomes that replica alone.
// - Candidates are tried in assignment order, so the preferred replica (the first) wins when it
//   can, and leadership returns to it once it is back in the ISR.

export interface LeaderAndIsrChoice {
  leader: number;
  isr: number[];
}

/**
 * A partition without a live leader: the first online ISR member (the ISR keeps its online
 * members); with `unclean`, failing that, the first online replica, whose ISR is itself.
 */
export function offlineLeader(
  replicas: readonly number[],
  isr: readonly number[],
  online: (id: number) => boolean,
  unclean: boolean,
): (LeaderAndIsrChoice & { unclean: boolean }) | null {
  const clean = replicas.find((r) => isr.includes(r) && online(r));
  if (clean !== undefined) return { leader: clean, isr: isr.filter(online), unclean: false };
  if (!unclean) return null;
  const any = replicas.find(online);
  return any === undefined ? null : { leader: any, isr: [any], unclean: true };
}

/** The first replica (the preferred one), when it is online and in the ISR; the ISR is kept. */
export function preferredLeader(replicas: readonly number[], isr: readonly number[], online: (id: number) => boolean): number | null {
  const preferred = replicas[0];
  return preferred !== undefined && online(preferred) && isr.includes(preferred) ? preferred : null;
}

/** A reassignment's new leader: the first target replica online and in the ISR. */
export function reassignmentLeader(target: readonly number[], isr: readonly number[], online: (id: number) => boolean): number | null {
  return target.find((r) => online(r) && isr.includes(r)) ?? null;
}

/**
 * Controlled shutdown of the leader: the first replica that is online (shutting-down brokers are
 * not) and in the ISR; the ISR drops every shutting-down broker.
 */
export function controlledShutdownLeader(
  replicas: readonly number[],
  isr: readonly number[],
  online: (id: number) => boolean,
  shuttingDown: (id: number) => boolean,
): LeaderAndIsrChoice | null {
  const leader = replicas.find((r) => online(r) && isr.includes(r));
  return leader === undefined ? null : { leader, isr: isr.filter((r) => !shuttingDown(r)) };
}

/**
 * The ISR without the replicas `gone` says are gone, one at a time in ISR order, never emptying
 * it: the last member stays (Kafka's removeReplicasFromIsr), so a partition whose whole ISR died
 * remembers which replica was last in sync and can take it back as leader when it returns.
 */
export function isrWithout(isr: readonly number[], gone: (id: number) => boolean): number[] {
  let out = [...isr];
  for (const id of isr) {
    if (gone(id) && out.length > 1) out = out.filter((r) => r !== id);
  }
  return out;
}

export function sameReplicas(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
