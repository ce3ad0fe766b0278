// replication: partitions this broker holds (leader and follower state, ISR, high watermark,
// leader epochs), the produce and fetch paths over their logs, the delayed-operation purgatories
// (produce acks=all, fetch long-poll), the leader's ISR writes to the registry, and the follower
// side: the replica fetchers (replica_fetcher.ts, over the client's connections) and where a
// follower truncates (truncation.ts), working on the local replicas through types.ts's interfaces.
//
// Invariants: partition state changes only through the controller's LeaderAndIsr / StopReplica
// and the leader's own conditional ISR writes; the leader's high watermark <= log end offset,
// never decreases, and is the minimum over the (maximal) ISR; consumers never read past it; an
// acks=all produce is answered only once the high watermark covers it with at least
// min.insync.replicas in the ISR; a follower appends only what it asked for, at its own log end
// offset, under the leader and epoch it was told.
export * from "./isr_writer.ts";
export * from "./partition.ts";
export * from "./purgatory.ts";
export * from "./replica_fetcher.ts";
export * from "./replica_manager.ts";
export * from "./replication_quota.ts";
export * from "./topic_stats.ts";
export * from "./truncation.ts";
export * from "./types.ts";
