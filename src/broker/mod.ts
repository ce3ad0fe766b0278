// broker: the Kafka-protocol server. SocketServer (framing, ordering, backpressure) →
// RequestDispatcher (header, schema decode, one handler per API key in api/) → services
// (MetadataCache, ReplicaManager, TopicAdmin). Broker wires them and runs start-up/shutdown
// (controlled_shutdown.ts: the stopping broker's ControlledShutdown to the controller).
//
// Invariants: responses go out in request order per connection; malformed input closes the
// connection or gets a Kafka error code, never an exception out of the server; ApiVersions is
// derived from the registered handlers.
export * from "./broker.ts";
// IncrementalAlterConfigs' operations, shared with the admin API's topic config route.
export { applyBrokerOperations, applyOperations, ConfigOperation } from "./api/44_incremental_alter_configs.ts";
export * from "./config.ts";
export * from "./config_change_watcher.ts";
export * from "./config_describe.ts";
export * from "./controlled_shutdown.ts";
export * from "./dispatch.ts";
export * from "./dynamic_config.ts";
export * from "./metadata_cache.ts";
export * from "./server.ts";
export * from "./services.ts";
// The TLS files of a listener, read into the platform's options (the admin API's https listeners too).
export { loadListenerTls } from "./tls_settings.ts";
export * from "./quota_config.ts";
export * from "./client_quota_manager.ts";
