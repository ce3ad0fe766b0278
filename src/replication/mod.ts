// replication: partitions this broker holds (leader and follower state, ISR, high watermark,
// leader epochs), the produce and fetch paths over their logs, the delayed-operation purgatories
// (produce acks=all, fetch long-poll), the leader's ISR writes to the registry, and the
// interfaces the replica fetchers (src/client) work through (types.ts).
//
// Invariants: partition state changes only through the controller's LeaderAndIsr / StopReplica
// and the leader's own conditional ISR writes; the leader's high watermark <= log end offset,
// never decreases, and is the minimum over the (maximal) ISR; consumers never read past it; an
// acks=all produce is answered only once the high watermark covers it with at least
// min.insync.replicas in the ISR.
export * from "./isr_writer.ts";
export * from "./partition.ts";
export * from "./purgatory.ts";
export * from "./replica_manager.ts";
export * from "./topic_stats.ts";
export * from "./types.ts";
