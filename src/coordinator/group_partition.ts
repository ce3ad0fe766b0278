// Kafka places a group on partition `Utils.abs(groupId.hashCode) % offsets.topic.num.partitions`
// of __consumer_offsets (util/java_hash.ts has both functions). Clients and tools (Burrow,
// kafka-consumer-groups) rely on the same placement, so it must match bit for bit.
import { javaStringHashCode, kafkaAbs } from "../util/mod.ts";

export function partitionForGroup(groupId: string, partitions: number): number {
  return kafkaAbs(javaStringHashCode(groupId)) % partitions;
}
