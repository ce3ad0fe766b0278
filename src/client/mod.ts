// client: a Kafka client library for TypeScript applications on Bun and Deno: producer, consumer,
// consumer group member and admin operations, over Kafka's wire protocol (versions negotiated with
// ApiVersions; tested against strand). It imports only util/, platform/ and protocol/: sockets and timers come from a
// Platform (loadPlatform() in platform/mod.ts picks the running runtime's), requests are encoded
// with protocol/'s schemas. The strand tools use it, and so do the broker's own connections to
// other brokers (replica fetchers, the controller's channel, ControlledShutdown, ElectLeaders):
// connection.ts is the one place that opens a socket to a Kafka broker (TLS and SASL go there).
//
// - connection.ts: KafkaConnection, one pipelined connection (correlation ids, timeouts, bounded
//   response frames), and ApiVersions negotiation.
// - cluster_client.ts: ClusterClient, a view of a whole cluster (bootstrap servers, metadata, one
//   connection per broker, routing to leaders, controller and coordinators, bounded retries),
//   and ClientError (a one-line message and Kafka's error code) for whatever still fails.
// - producer.ts, producer_batch.ts, partitioner.ts: Producer, pipelining and without idempotence
//   (per-partition batches, linger, compression, acks, retries; murmur2 for keys as Kafka's Java
//   client, sticky batches without).
// - scram_users.ts: SCRAM users (AlterUserScramCredentials, DescribeUserScramCredentials).
// - acls.ts: ACLs (CreateAcls, DescribeAcls, DeleteAcls), with Kafka's names for their codes.
// - consumer.ts, record_reader.ts: Consumer, a prefetching reader of assigned partitions (records
//   decoded with number arithmetic). group.ts: GroupMember, classic consumer group membership
//   (JoinGroup/SyncGroup/Heartbeat/LeaveGroup, the range assignor, offset commits).
// - admin.ts: topics, configs, offsets and groups, routed as Kafka's AdminClient does.
//
// Example, an application next to a checkout of strand in ./strand (test/client/library_example.test.ts
// runs this very text against a broker, under Bun and under Deno):
//
//   import { loadPlatform } from "./strand/src/platform/mod.ts";
//   import { ClusterClient, Consumer, createTopic, fetchCommittedOffsets, GroupMember, parseBootstrapServers, Producer } from "./strand/src/client/mod.ts";
//
//   const cluster = new ClusterClient(await loadPlatform(), { bootstrap: parseBootstrapServers("localhost:9092") });
//   await createTopic(cluster, { name: "greetings", partitions: 3, replicationFactor: 1, configs: {} });
//
//   const producer = new Producer(cluster, { acks: -1, lingerMs: 5 });
//   await producer.prepareTopic("greetings");
//   for (const name of ["ada", "grace", "edsger"]) {
//     const key = new TextEncoder().encode(name);
//     producer.send({ topic: "greetings", key, value: new TextEncoder().encode(`hello ${name}`) }, (error, partition, offset) => {
//       if (error !== null) console.error(`${name}: ${error.message}`);
//       else console.log(`sent ${name} to greetings-${partition} at offset ${offset}`);
//     });
//   }
//   await producer.close(); // flushes: every callback has been called
//
//   const member = new GroupMember(cluster, { groupId: "readers", topics: ["greetings"] });
//   const owned = (await member.join()).flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition })));
//   const committed = await fetchCommittedOffsets(cluster, "readers", owned);
//   const consumer = new Consumer(cluster);
//   await consumer.assign(owned.map((tp) => ({
//     ...tp,
//     offset: committed.find((c) => c.topic === tp.topic && c.partition === tp.partition)?.offset ?? "earliest",
//   })));
//   for (let polls = 0, read = 0; read < 3 && polls < 20; polls++) {
//     for (const r of await consumer.poll(500)) {
//       console.log(`read ${new TextDecoder().decode(r.value ?? new Uint8Array())} at greetings-${r.partition}@${r.offset}`);
//       read++;
//     }
//   }
//   await member.commit(consumer.positions()); // the group resumes here next time
//   consumer.close();
//   await member.leave();
//   cluster.close();
//
// Invariants: no runtime APIs here (only the Platform); every request ends exactly once (answered,
// or rejected with a reason naming the peer); responses are bounded by limits.clientResponseBytesMax;
// nothing received from a peer is trusted before it decodes whole; every retry is bounded.
export * from "./admin.ts";
export * from "./cluster_client.ts";
export * from "./connection.ts";
export * from "./consumer.ts";
export * from "./group.ts";
export * from "./partitioner.ts";
export * from "./producer.ts";
export * from "./producer_batch.ts";
export * from "./record_reader.ts";
export * from "./scram_users.ts";
export * from "./acls.ts";
export * from "./transactions.ts";
