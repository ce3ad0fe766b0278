// Java's String.hashCode (over UTF-16 code units, int32 arithmetic) and Kafka's Utils.abs:
// `n == Integer.MIN_VALUE ? 0 : Math.abs(n)` (a true absolute value, not the `n & 0x7fffffff` of
// Utils.toPositive that the producer's partitioner uses; the two differ for every negative hash).
// Kafka places things with them: a group on its __consumer_offsets partition
// (coordinator/group_partition.ts), a partition on its replica fetcher
// (replication/replica_fetcher.ts). Clients and tools (Burrow, kafka-consumer-groups) rely on the
// same placement, so it must match bit for bit.

export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's Utils.abs: Math.abs, except that Integer.MIN_VALUE (which has none) maps to 0. */
export function kafkaAbs(n: number): number {
  return n === -2147483648 ? 0 : Math.abs(n);
}
