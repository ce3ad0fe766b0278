// replication: partitions this broker holds (leader state, ISR, high watermark), the produce and
// fetch paths over their logs, and the delayed-operation purgatory (fetch long-poll; produce
// acks=all once followers exist).
//
// Invariants: partition state changes only through the controller's LeaderAndIsr / StopReplica;
// high watermark <= log end offset and never decreases; consumers never read past it.
export * from "./partition.ts";
export * from "./purgatory.ts";
export * from "./replica_manager.ts";
export * from "./topic_stats.ts";
