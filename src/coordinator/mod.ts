// coordinator: consumer groups (Kafka's classic group protocol) and committed offsets, stored in
// the internal compacted topic __consumer_offsets in Kafka's record formats.
//
// Invariants:
// - A group lives on partition abs(javaHash(groupId)) % offsets.topic.num.partitions; only the
//   leader of that partition answers for it, and only once the partition is loaded.
// - Group state changes follow Kafka's state machine (group.ts); generation ids fence stale
//   members; every JoinGroup/SyncGroup reply is sent exactly once.
// - In-memory offsets and group metadata change only after their records are in the log, so a
//   restart (replaying the partition) rebuilds exactly what clients were told.
export * from "./config.ts";
export * from "./coordinator.ts";
export * from "./group.ts";
export * from "./group_coordinator.ts";
export * from "./group_metadata_manager.ts";
export * from "./group_partition.ts";
export * from "./offsets.ts";
export * from "./producer_id_manager.ts";
