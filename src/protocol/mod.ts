// protocol: Kafka's wire protocol as data. Pure: no I/O.
//
// - schema.ts: the text DSL each API message is declared in (per-field version ranges,
//   nullability, tagged fields, defaults); api/NN_name.ts: one declaration per API key.
// - codec.ts: encoder and decoder derived from a declaration for one version; flexible versions
//   use compact lengths and tagged-field sections. Decoding never throws on malformed input.
// - headers.ts: request header v0-v2, response header v0-v1 (ApiVersions always answers in v0).
// - record_batch.ts: the record batch v2 header (61 bytes), validation and offset assignment.
//
// Invariants: every length read from the wire is checked against the bytes left and a named
// limit before allocating; records stay bytes (only batch headers are parsed).
export * from "./api/mod.ts";
export * from "./codec.ts";
export * from "./headers.ts";
export * from "./record_batch.ts";
export * from "./schema.ts";
