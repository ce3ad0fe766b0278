// sasl: the SASL mechanisms Kafka brokers and clients speak inside SaslHandshake/SaslAuthenticate,
// both ends of each, pure (no I/O; WebCrypto for the hashes).
//
// - scram.ts: SCRAM-SHA-256/512 (RFC 5802/7677): server and client exchanges, Kafka's stored
//   credential string (salt, stored_key, server_key, iterations), credentials from a password.
// - plain.ts: PLAIN (RFC 4616) checked against a user table, and the client's token.
// - jaas.ts: Kafka's JAAS config text (one login module, options), and PlainLoginModule's users.
//
// Invariants: a failed step is final (the caller answers SASL_AUTHENTICATION_FAILED and closes);
// the message meant for the client never says whether the user exists; secrets are compared in
// constant time; no password is ever stored on the server side of SCRAM, only derived keys.
export * from "./jaas.ts";
export * from "./plain.ts";
export * from "./scram.ts";
