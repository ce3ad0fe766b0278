// log: partition logs on disk in Kafka's layout.
//
//   <log.dir>/meta.properties                      version=0, broker.id, cluster.id
//   <log.dir>/<topic>-<partition>/<20-digit base offset>.log    record batches v2, as on the wire
//   <log.dir>/<topic>-<partition>/<20-digit base offset>.index  8-byte (relative offset, position)
//
// Invariants (details in each file): batches are stored whole and unparsed beyond their header;
// offsets increase; only the active (last) segment is written; every append is synchronous.
export * from "./log.ts";
export * from "./log_config.ts";
export * from "./log_manager.ts";
export * from "./offset_index.ts";
export * from "./segment.ts";
