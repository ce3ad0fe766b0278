// coordinator: consumer groups (Kafka's classic group protocol) and committed offsets, stored in
// the internal compacted topic __consumer_offsets in Kafka's record formats.
//
// Invariants:
// - A group lives on partition abs(javaHash(groupId)) % offsets.topic.num.partitions; only the
//   leader of that partition answers for it, and only once the partition is loaded.
// - Group state changes follow Kafka's state machine (group.ts); generation ids fence stale
//   members; every JoinGroup/SyncGroup reply is sent exactly once.
// - A transactional id lives on partition abs(javaHash(id)) % transaction.state.log.num.partitions
//   of __transaction_state (txn_*.ts, Kafka's transaction coordinator); its transitions follow
//   Kafka's transaction state machine and are in the log before they are applied.
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
export * from "./partition_replay.ts";
export * from "./txn_config.ts";
export * from "./txn_coordinator.ts";
export * from "./txn_markers.ts";
export * from "./txn_metadata.ts";
export * from "./txn_state_manager.ts";
