// protocol: Kafka's wire protocol as data. Pure: no I/O.
//
// - schema.ts: the text DSL each API message is declared in (per-field version ranges,
//   nullability, tagged fields, defaults); api/NN_name.ts: one declaration per API key.
// - codec.ts: encoder and decoder derived from a declaration for one version; flexible versions
//   use compact lengths and tagged-field sections. Decoding never throws on malformed input.
// - headers.ts: request header v0-v2, response header v0-v1 (ApiVersions always answers in v0).
// - record_batch.ts: the record batch v2 header (61 bytes) and offset assignment;
//   record_validator.ts: the produce path's check of every batch and record (Kafka's LogValidator);
//   record_batch_builder.ts: a v2 batch built record by record (for the broker's own writes).
//   records.ts: the records inside a batch, decoded (loading __consumer_offsets, compaction).
// - compression.ts: Kafka's codecs (gzip, snappy, lz4, zstd) on bytes; decompression is bounded
//   and answers an error code instead of throwing. recompress.ts: validated batches rewritten in a
//   topic's compression.type (the body only; the header keeps every other field).
// - produce_crc_ahead.ts: the CRC of a Produce request's first batch, computed as its bytes
//   arrive and remembered for exactly that buffer and range until the frame is handled.
// - message_set.ts: legacy message sets (magic 0/1, Produce v0-2) up-converted to one v2 batch.
// - down_convert.ts: stored batches v2 down-converted to legacy message sets (Fetch v0-3).
// - internal/offsets_records.ts: the __consumer_offsets key and value formats (version-prefixed);
//   internal/consumer_protocol.ts: consumer subscription and assignment bytes (JoinGroup, SyncGroup);
//   internal/txn_log.ts: the __transaction_state key and value formats (version-prefixed).
//
// Invariants: every length read from the wire is checked against the bytes left and a named
// limit before allocating; records stay bytes (walked with a cursor, never decoded into objects), except on the
// legacy up-conversion path, which only clients too old for record batch v2 take.
export * from "./api/mod.ts";
export * from "./codec.ts";
export * from "./compression.ts";
export * from "./control_batch.ts";
export * from "./down_convert.ts";
export * from "./headers.ts";
export * from "./internal/consumer_protocol.ts";
export * from "./internal/offsets_records.ts";
export * from "./internal/txn_log.ts";
export * from "./message_set.ts";
export * from "./produce_crc_ahead.ts";
export * from "./record_batch.ts";
export * from "./record_batch_builder.ts";
export * from "./record_validator.ts";
export * from "./recompress.ts";
export * from "./records.ts";
export * from "./schema.ts";
export * from "./throttle.ts";
export * from "./sasl/mod.ts";
