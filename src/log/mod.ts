// log: partition logs on disk in Kafka's layout.
//
//   <log.dir>/meta.properties                      version=0, broker.id, cluster.id
//   <log.dir>/<topic>-<partition>/<20-digit base offset>.log    record batches v2, as on the wire
//   <log.dir>/<topic>-<partition>/<20-digit base offset>.index  8-byte (relative offset, position)
//   <log.dir>/<topic>-<partition>/<20-digit base offset>.timeindex  12-byte (timestamp, relative offset)
//   <log.dir>/<topic>-<partition>/<name>.deleted  a deleted segment's file, until file.delete.delay.ms
//   <log.dir>/<topic>-<partition>.<uuid>-delete    a deleted partition, until removed (the topic cut
//                                                   short to fit 255 bytes, as Kafka's; async_delete.ts)
//   <log.dir>/<topic>-<partition>/leader-epoch-checkpoint  Kafka's text format: `0`, count, `epoch
//                                                   startOffset` lines: where each leader epoch's
//                                                   offsets start (leader_epoch_cache.ts)
//   <log.dir>/recovery-point-offset-checkpoint     Kafka's text format: `0`, count, `topic partition
//   <log.dir>/replication-offset-checkpoint         offset` lines (checkpoint.ts); recovery point,
//   <log.dir>/log-start-offset-checkpoint           high watermark and log start offset per log
//   <log.dir>/.kafka_cleanshutdown                  present only between a clean stop and a start
//   <log.dir>/cleaner-offset-checkpoint              per compacted log: its first dirty offset (cleaner.ts)
//   <log.dir>/<topic>-<partition>/<name>.cleaned|.swap  a cleaned segment being swapped in (swap.ts)
//   <log.dir>/<topic>-<partition>/<20-digit offset>.snapshot  Kafka's producer state snapshot: the
//                                                   idempotent producers' state below that offset
//                                                   (producer_snapshot.ts, log_producer_state.ts)
//   <log.dir>/<topic>-<partition>/<20-digit base>.txnindex  Kafka's transaction index: the aborted
//                                                   transactions whose markers are in that segment
//                                                   (txn_index.ts; the last stable offset: producer_state.ts)
//
// Invariants (details in each file): batches are stored whole and unparsed beyond their header;
// offsets increase; only the active (last) segment is written; every append is synchronous.
// After an unclean stop, everything past each log's recovery point is checked batch by batch and
// cut at the first invalid one (log_loader.ts); the active segment is never deleted by retention;
// the log start offset only moves forward, except when a follower starts its log over
// (truncateFullyAndStartAt). A follower appends its leader's batches with their offsets and epochs
// (appendAsFollower) and drops what diverges (truncateTo); the leader epoch checkpoint never
// claims offsets past the log end.
export * from "./checkpoint.ts";
export * from "./cleaner.ts";
export * from "./follower_batches.ts";
export * from "./leader_epoch_cache.ts";
export * from "./log.ts";
export * from "./log_config.ts";
export * from "./log_dir_failure.ts";
export * from "./log_loader.ts";
export * from "./log_manager.ts";
export * from "./offset_index.ts";
export * from "./offset_map.ts";
export * from "./producer_snapshot.ts";
export * from "./producer_state.ts";
export * from "./segment.ts";
export * from "./swap.ts";
export * from "./time_index.ts";
export * from "./timestamp.ts";
export * from "./timestamp_search.ts";
export * from "./txn_index.ts";
