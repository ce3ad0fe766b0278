// util: the leaves every other module may import. Pure TypeScript, no I/O.
// Invariants: Reader never throws on malformed input (it marks itself bad); every bound on input
// lives in limits.ts; error codes are Kafka's numbers under Kafka's names.
export * from "./assert.ts";
export * from "./bytes.ts";
export * from "./crc32.ts";
export * from "./crc32c.ts";
export * from "./errors.ts";
export * from "./ip_address.ts";
export * from "./java_hash.ts";
export * from "./limits.ts";
export * as limits from "./limits.ts";
export * from "./logger.ts";
export * from "./sampled_rate.ts";
export * from "./time_slice.ts";
export * from "./ssl_principal.ts";
export * from "./x509.ts";
