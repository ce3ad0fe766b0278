// client: a small internal Kafka client, what one broker uses to talk to another. Runtime-agnostic:
// sockets come from the Platform (net.connect), requests are encoded with protocol/'s schemas.
//
// - connection.ts: KafkaConnection, one pipelined connection (correlation ids, timeouts, bounded
//   response frames), and ApiVersions negotiation.
// - control_requests.ts: the controller's requests (LeaderAndIsr, UpdateMetadata, StopReplica)
//   built from and decoded back into the ControllerChannel's values. Pure.
// - controller_channel.ts: RemoteControllerChannel, the controller's channel to every broker (in
//   process for itself, one ordered queue and connection per other broker).
// - replica_fetcher.ts: ReplicaFetcherManager, the follower side of replication (fetcher loops per
//   leader, truncation, fetch, error handling); truncation.ts: the truncation decision. Pure.
// - controlled_shutdown.ts: a stopping broker's ControlledShutdown request to the controller.
// - cluster_client.ts: ClusterClient, the command-line tools' view of a cluster (bootstrap
//   servers, metadata, one connection per broker, routing, bounded retries, ClientError).
// - admin.ts: topic, config, offset and group operations routed as Kafka's AdminClient does.
// - producer.ts, producer_batch.ts, partitioner.ts: a pipelining producer (per-partition batches,
//   linger, compression, acks, retries; murmur2 for keys, sticky batches without).
// - consumer.ts, record_reader.ts: a prefetching consumer of assigned partitions (records
//   decoded with number arithmetic); group.ts: classic consumer group membership
//   (JoinGroup/SyncGroup/Heartbeat, the range assignor, offset commits).
//
// Invariants: no runtime APIs here (only the Platform); every request ends exactly once (answered,
// or rejected with a reason naming the peer); responses are bounded by limits.clientResponseBytesMax;
// nothing received from a peer is trusted before it decodes whole; the controller never waits on a
// remote broker, and a broker's control requests arrive in the order they were made; a follower
// appends only what it asked for, at its own log end offset, under the leader and epoch it was told.
export * from "./admin.ts";
export * from "./cluster_client.ts";
export * from "./connection.ts";
export * from "./consumer.ts";
export * from "./group.ts";
export * from "./partitioner.ts";
export * from "./producer.ts";
export * from "./producer_batch.ts";
export * from "./record_reader.ts";
