// Every bound strand enforces, named in one place. Config keys can lower or raise some of them
// (named beside each); the rest are hard ceilings that protect the process from hostile input.

/** Largest frame accepted before `socket.request.max.bytes` is known (Kafka's default, 100 MiB). */
export const socketRequestMaxBytesDefault = 104_857_600;
/** Longest topic name Kafka accepts (so `<topic>-<partition>` fits a 255-byte file name). */
export const topicNameLengthMax = 249;
/** Longest file name (bytes) Linux file systems take (NAME_MAX): a log dir's `-delete` name fits it. */
export const fileNameBytesMax = 255;
/** Most partitions one topic may have; a CreateTopics asking for more is refused. */
export const partitionsPerTopicMax = 10_000;
/** Most elements any array read from the wire may declare, whatever the bytes left. */
export const wireArrayLengthMax = 1_000_000;
/** Most tagged fields one struct may carry on the wire. */
export const wireTaggedFieldsMax = 1_000;
/** Requests a connection may have read and not yet answered; reading pauses past this. */
export const requestsInFlightPerConnectionMax = 128;
/**
 * Connections over max.connection.creation.rate waiting, unread, for their turn; past this, new
 * ones are closed at once (as a full listen backlog refuses them; Kafka's default backlog is 50).
 */
export const connectionsThrottledMax = 128;
/**
 * Connections waiting, unread, for a slot under max.connections or listener.name.<l>.max.connections
 * (Kafka's acceptor leaves them in the listen backlog, 50 by default); past this, new ones are closed.
 */
export const connectionsWaitingForSlotMax = 128;
/** Fetch long-poll ceiling, whatever a client asks for in max_wait_ms. */
export const fetchMaxWaitMsMax = 60_000;
/**
 * Incremental fetch sessions (KIP-227, broker/fetch_session.ts): a session unused this long may be
 * evicted for any newcomer (Kafka's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS); a younger one
 * only for a more valuable one.
 */
export const fetchSessionEvictionMs = 120_000;
/** Partitions one fetch session may hold; a larger full fetch gets no session (Kafka: unbounded). */
export const fetchSessionPartitionsMax = 50_000;
/** Partitions all fetch sessions together may hold (about 200 bytes each): 1,000 slots x 1,000 partitions. */
export const fetchSessionCachePartitionsMax = 1_000_000;
/**
 * Largest offset a segment's indexes can hold relative to its base offset (Kafka's int32 relative
 * offsets): a batch past it goes into a new segment.
 */
export const segmentRelativeOffsetMax = 0x7fffffff;
/** Record batch v2 header size: everything before the first record. */
export const recordBatchHeaderBytes = 61;
/** Smallest frame we answer (api key, version, correlation id). */
export const requestHeaderBytesMin = 8;
/** Bytes read from a segment at once when a fetch asks for more. */
export const segmentReadChunkBytesMax = 8 * 1024 * 1024;
/**
 * Index entries (offset and time index alike) gathered in memory before one write to the index
 * file: 512 offset-index entries are 4 KiB, and stand for at least 2 MiB of log at the default
 * index.interval.bytes. A crash loses at most these, and the log is walked from the last entry
 * the file has.
 */
export const indexWriteBufferEntries = 512;
/**
 * Most bytes one decompression may produce (a compressed batch's records, or a legacy wrapper
 * message's inner message set). A compression bomb stops here with an error instead of taking the
 * process's memory; 64 times Kafka's default message.max.bytes covers any real producer's batch.
 */
export const decompressedBytesMax = 64 * 1024 * 1024;
/**
 * Most bytes one stored batch may decompress to when a Fetch v0-3 answer down-converts it to a
 * legacy message set; a batch past it ends the answer there.
 */
export const downConversionDecompressedBytesMax = decompressedBytesMax;
/**
 * Most bytes of down-converted records one Fetch v0-3 answer holds (beyond one first message or
 * wrapper): Fetch v0-2 has no response limit, and stored compressed batches may convert to many
 * times their size, so the partitions past it answer no records this time.
 */
export const downConvertedResponseBytesMax = 64 * 1024 * 1024;
/**
 * Most per-record errors (recordErrors) one partition's Produce answer lists: a batch of a million
 * keyless records on a compacted topic is refused whole either way, and the answer stays small.
 */
export const produceRecordErrorsMax = 1_000;
/** Most entries a checkpoint file (recovery point, high watermark, log start offset) may list. */
export const checkpointEntriesMax = 10_000_000;
/**
 * Bytes read from a segment at once by crash recovery: big enough that the scan runs at memory
 * and CRC32C speed rather than per-call cost, small enough to keep in memory per recovery worker.
 */
export const recoveryReadChunkBytes = 8 * 1024 * 1024;
/**
 * Longest period a scheduled task may have. Timers take a signed 32-bit millisecond count; Kafka's
 * "never" defaults (Long.MAX_VALUE for log.flush.scheduler.interval.ms) are at or above this and
 * mean the task is not scheduled at all.
 */
export const schedulerIntervalMsMax = 2_147_483_647;
/**
 * Tries of one topic-config change (read, compute, conditional write) before giving up when other
 * writers keep changing the same config node in between.
 */
export const configWriteAttemptsMax = 10;

/**
 * Tries of one resource's ACL change (read, compute, conditional write) before giving up when
 * other brokers keep changing the same ACL node in between (Kafka's maxUpdateRetries).
 */
export const aclWriteAttemptsMax = 10;

/** Longest string (UTF-8 bytes) that fits an int16-length (non-flexible) protocol or record field. */
export const int16StringBytesMax = 32_767;

// --- ZooKeeper client (src/zk) -------------------------------------------------------------------
/**
 * Largest request frame the ZooKeeper client sends: ZooKeeper's default jute.maxbuffer (1 MiB - 1).
 * A server closes the connection on a bigger packet, so the client refuses it up front.
 */
export const zkRequestBytesMax = 0xfffff;
/**
 * Largest reply frame the client accepts. Above the server's jute.maxbuffer on purpose: a
 * getChildren of a crowded node can exceed it; past this, the length is garbage or hostile.
 */
export const zkReplyBytesMax = 4 * 1024 * 1024;
/** Most hosts a connect string may name. */
export const zkConnectStringHostsMax = 64;
/** Requests sent and not yet answered on one connection; more wait in the client's queue. */
export const zkRequestsInFlightMax = 10_000;
/**
 * Bytes of paths one SetWatches packet may carry when watches are re-registered after a reconnect
 * (the Java client's SET_WATCHES_MAX_LENGTH): more are split over several packets.
 */
export const zkSetWatchesBytesMax = 128 * 1024;
/** Shortest time one connection attempt (TCP connect and handshake) is given. */
export const zkConnectAttemptMsMin = 1_000;
/** Longest pause between rounds of connection attempts over every host. */
export const zkReconnectBackoffMsMax = 1_000;
/** Tries of a read that failed with ConnectionLoss before the registry reports it. */
export const zkReadRetriesMax = 3;

/**
 * Longest stretch of log cleaning between two yields to the event loop: the cleaner runs on the
 * broker's one event loop, so it works in slices this long, then lets requests and timers run.
 */
export const cleanerSliceMs = 10;
/**
 * Most bytes a decompressed batch may have when the cleaner reads it; a batch past it (a
 * decompression bomb) is kept as it is, never allocated. Tests may lower it through the cleaner's
 * config, not raise it.
 */
export const cleanerDecompressedBytesMax = decompressedBytesMax;

/** Largest admin HTTP request body (JSON for topics and configs); past it the answer is 413. */
export const adminRequestBodyBytesMax = 1024 * 1024;
/** How long an admin request waits for a created or deleted topic to reach this broker's metadata. */
export const adminTopicWaitMs = 30_000;
/** How often the dashboard page polls the admin API (its chart gets one point per poll). */
export const dashboardPollMs = 2_000;
/** Points the dashboard's rate chart keeps (dashboardPollMs apart: three minutes). */
export const dashboardChartPointsMax = 90;
/** Topics whose partitions the dashboard fetches and shows on each poll; the rest are listed only. */
export const dashboardTopicsDetailedMax = 200;
/** How long the admin API waits for another broker's admin API (cluster-wide views): a down broker must not hang the page. */
export const adminPeerRequestMs = 3_000;
/** Consumer groups whose offsets and lag the dashboard fetches and shows on each poll. */
export const dashboardGroupsDetailedMax = 100;
/** Most consumer-group lag series /metrics reports (group × partition); the rest are left out. */
export const metricsGroupLagSeriesMax = 100_000;
/** Most label sets one metric family keeps (per-topic and per-request series); new ones past it are dropped. */
export const metricsSeriesPerFamilyMax = 100_000;
/** How often the event-loop delay is sampled for /metrics. */
export const eventLoopSampleMs = 500;
/** Samples the event-loop delay maximum looks back over (eventLoopSampleMs each: one minute). */
export const eventLoopSamplesKept = 120;
/**
 * Bytes the cleaner writes to a new segment between two fsyncs of it: the segment must be on disk
 * before it is swapped in, and syncing as it goes keeps each fsync (which blocks the event loop)
 * short instead of one of a whole segment at the end.
 */
export const cleanerSyncIntervalBytes = 8 * 1024 * 1024;

/**
 * Chunks a connection may hold received and unread before the runtime stops reading the
 * socket. Small on purpose: past this, the kernel's receive buffer and TCP flow control push
 * back on the peer, which is the backpressure the contract promises.
 */
export const readQueueChunksMax = 4;
/** Bytes asked of the kernel per read where the runtime lets us choose (Deno). */
export const readChunkBytes = 64 * 1024;
/**
 * Longest a TLS handshake may take, on a listener (from accept) and in connect() when no timeout
 * is given: a peer that opens a socket and never finishes the handshake (a plaintext client
 * waiting for a reply, a stalled scanner) holds a socket the owner has not been handed yet.
 */
export const tlsHandshakeTimeoutMs = 10_000;
/**
 * Largest buffer a request frame spanning several reads is assembled in and then kept for the next
 * one (broker/frame_buffers.ts): clients' Produce requests stay near 1 MB (max.request.size,
 * message.max.bytes), and a larger frame gets a buffer of its own, let go after.
 */
export const frameBufferReuseBytesMax = 2 * 1024 * 1024;
/** Bytes of idle reusable frame buffers kept across all connections (frame_buffers.ts). */
export const frameBuffersIdleBytesMax = 16 * 1024 * 1024;
/**
 * How often a TLS listener's keystore and truststore files are checked for a change (mtime, size)
 * to reload the certificates without a restart: a renewed certificate is in use within this long.
 */
export const sslFileCheckIntervalMs = 5_000;
/** At most one warn line per this long for failed TLS handshakes on a listener (scanners, plaintext clients). */
export const tlsFailureLogIntervalMs = 10_000;
/** crypto.getRandomValues refuses more than this per call (Web Crypto's quota). */
export const randomBytesPerCallMax = 65_536;
/**
 * How long Platform.resolveHost waits for the system resolver (an ip quota entity named by host
 * name): an unreachable DNS server otherwise holds an AlterClientQuotas answer for its own
 * timeouts (5 s per try in glibc's default). Past it the name counts as not resolving.
 */
export const hostResolveTimeoutMs = 2_000;
/** ZooKeeper's default jute.maxbuffer: the largest payload a ZooKeeper server accepts per node. */
export const nodeDataBytesMax = 0xfffff;
/**
 * Largest record of the embedded registry's journal (the nodes one transaction changed). A multi
 * larger than this is refused; on open, a declared length above it is corruption, not a torn tail.
 */
export const registryJournalRecordBytesMax = 64 * 1024 * 1024;
/**
 * Longest a long task (creating, loading or deleting many partitions) runs before it gives the
 * event loop back (util/time_slice.ts): well under issue 11's 50 ms ceiling on any stall, since
 * one unit of work (one partition's files) may overrun it. At 20 ms, stalls of 50-70 ms were still
 * seen under Deno on a loaded 2-core host (a log's load is a handful of file calls, each slower
 * there); at 10 ms they stayed at or under 50 ms, for no measurable change in total time.
 */
export const eventLoopSliceMs = 10;
/**
 * New partition logs whose files (dir, .log, .index, .timeindex) are created together on the
 * runtime's I/O pool before they are applied (LogManager.prepareNewLogs): enough to keep the
 * pool busy, few enough that the descriptors held meanwhile (up to 3 each) stay small. Each
 * operation issued costs the event loop too (under Deno, waking a thread of its blocking pool,
 * up to a ms on a loaded host): 64 at a time (some 250 operations) held it for 100-200 ms.
 */
export const logCreationsInFlightMax = 16;
/**
 * File operations (mkdir, open) of new logs' preparation on the runtime's I/O pool at once, across
 * all logCreationsInFlightMax logs being prepared (log/prepared_logs.ts, log/in_flight_limit.ts).
 * Under Deno each is a task of tokio's blocking pool; some 50 at once (16 logs, their three files
 * opened together) grew the pool to as many threads, and the event loop's thread waited on the
 * pool's lock, which those threads held while preempted. Creating 10,000 partitions on a loaded
 * 2-core host (npm run bench:stall), the longest own stall under Deno was 22-118 ms before (over
 * 50 in 3 runs of 11), 19-58 ms at 4 (over 50 in 1 of 7), 21 ms at 8 (2 runs); total times were
 * within the host's noise (8-48 s for all three).
 */
export const logFileOpsInFlightMax = 4;
/**
 * Deleted logs' renames and removals (LogManager.deleteLog) running on the I/O pool at once: a
 * topic of 10,000 partitions deleted would otherwise issue them all together, and their
 * completions (each starting the next step) arrive together (see logCreationsInFlightMax).
 */
export const logDeletionsInFlightMax = 16;
/**
 * Most partition state writes the controller issues together (one group commit of the embedded
 * registry, one pipelined round of ZooKeeper requests) before it awaits their answers; within it,
 * TimeSlice.settle sizes each group by the measured time of the last one's completions.
 */
export const partitionWritesInFlightMax = 250;
/**
 * Journal bytes after which the embedded registry rewrites its snapshot and empties the journal
 * (once the journal is also larger than the last snapshot, so rewrites cost O(1) per byte changed).
 */
export const registryJournalCompactBytes = 16 * 1024 * 1024;
/**
 * After a snapshot rewrite failed (a full disk), the embedded registry waits this long before the
 * next try, instead of writing the whole tree again at every commit while the disk has no room.
 */
export const registryCompactRetryMs = 10_000;
/**
 * Characters of snapshot text the embedded registry encodes and writes at a time while it
 * rewrites its snapshot (registry/snapshot_writer.ts): encoding megabytes in one piece took tens
 * of ms; a chunk this size takes well under one.
 */
export const registrySnapshotChunkChars = 64 * 1024;
/**
 * Bytes of the embedded registry's snapshot and journals read at a time when it opens (the loop
 * is given back between reads): the snapshot of 10,000 partitions, megabytes read in one
 * synchronous call, held the event loop for 40-80 ms on a loaded host (Deno).
 */
export const registryReadChunkBytes = 1024 * 1024;
/**
 * Long tasks that loop over many small items ask their TimeSlice whether the slice is used up
 * once per this many items, not at each one (reading the clock costs more than the item). Each
 * step stays far under eventLoopSliceMs: nodes of the embedded registry's snapshot and journal
 * loaded at start-up (registry/embedded.ts, snapshot.ts), lines of an offset checkpoint parsed
 * (log/checkpoint.ts), partitions of a Metadata answer built (broker/api/03_metadata.ts).
 */
export const registryLoadNodesPerStep = 1024;
export const checkpointLinesPerStep = 512;
export const metadataPartitionsPerStep = 256;
/**
 * The controller reads everything again after an event failed half-way; while the registry keeps
 * failing (its disk full) the pause doubles from 1 s up to this, so a full disk does not make it
 * re-send every partition's state every second.
 */
export const controllerResyncBackoffMaxMs = 30_000;
/**
 * A leader whose ISR change could not be written (the registry's disk full, ZooKeeper away)
 * tries it again after this long (Kafka's AlterPartition retry), not at every follower fetch.
 */
export const isrChangeRetryBackoffMs = 1_000;

// --- Kafka client (src/client) -------------------------------------------------------------------
/**
 * Largest response frame a KafkaConnection accepts. A replica fetch answers up to
 * replica.fetch.response.max.bytes (10 MiB by default), or more when its first batch alone is
 * larger (KIP-74); this is the broker's default socket.request.max.bytes, ten times that. Past it
 * the length is garbage or hostile, and the connection is closed before anything is allocated.
 */
export const clientResponseBytesMax = 104_857_600;
/**
 * A request frame is sent from its encoding buffer as it is when at most this many bytes of the
 * buffer are unused (the runtime may hold the whole buffer until the kernel takes the frame);
 * past it, exactly the frame is copied out.
 */
export const clientFrameSlackBytesMax = 65_536;
/**
 * Queued request frames are joined into one write up to this many bytes together; larger ones
 * (Produce requests of big batches) are written one by one rather than copied into one buffer.
 */
export const clientConcatBytesMax = 262_144;
/**
 * Request frames of at least clientPooledFrameBytesMin are encoded into a buffer of an earlier
 * frame once the runtime has taken it (up to clientPooledFramesMax kept per connection): a
 * producer sending megabyte batches otherwise allocates and faults in a fresh megabyte a request;
 * with 16 KB batches, Deno spent more time allocating (zeroing) batch and frame buffers than
 * encoding records. Smaller frames are cheaper to allocate than to keep.
 */
export const clientPooledFrameBytesMin = 4_096;
export const clientPooledFramesMax = 2;
/** Batch buffers (of at least clientPooledFrameBytesMin) a client producer keeps for its next batches. */
export const producerSpareBuffersMax = 4;
/**
 * Longest line the console producer (`strand produce`) reads from stdin: one line is one record,
 * and no request may be larger than the broker's default socket.request.max.bytes. A longer line
 * ends the tool with an error instead of growing a buffer without end.
 */
export const consoleLineBytesMax = 104_857_600;

// --- Log dirs: resource errors and free space (src/log/log_manager.ts) ---------------------------
/**
 * How often each online log dir's volume is checked by statfs for log.dir.min.free.bytes. Appended
 * bytes are subtracted from the last figure in between, so a produce never waits on a syscall and
 * a burst cannot run far past the threshold unseen.
 */
export const logDirSpaceCheckMs = 1_000;
/**
 * After an ENOSPC, appends resume only once the usable space is above both log.dir.min.free.bytes
 * and this (1 MiB, or 1% of a volume smaller than 100 MiB), so a threshold of 0 does not make
 * every produce meet ENOSPC again at once.
 */
export const logDirNoSpaceResumeBytes = 1_048_576;
/** At most one warn line per log dir and kind of transient error (EMFILE, ENOSPC) this often. */
export const storageErrorLogIntervalMs = 10_000;
/** A log dir that cannot be read at start-up for a transient reason is tried again this often... */
export const logDirLoadRetryMs = 1_000;
/** ...this many times in all, before it is given up as offline. */
export const logDirLoadAttemptsMax = 30;
/** How often the ReplicaManager tries again to open the log of a partition a transient error kept closed. */
export const partitionLogRetryMs = 1_000;
/**
 * The largest SASL token a server reads before authentication (Kafka's internal
 * sasl.server.max.receive.size, 512 KiB): an unauthenticated peer may not make the broker buffer more.
 */
export const saslTokenBytesMax = 524_288;
/** SCRAM iteration counts a credential may have (Kafka's ScramMechanism bounds for SHA-256 and SHA-512). */
export const scramIterationsMin = 4_096;
export const scramIterationsMax = 16_384;
/** At most one log line this often for requests answered "registry unavailable" (clients retry them in a loop). */
export const registryUnavailableLogIntervalMs = 10_000;

/**
 * Client quota sensors kept per quota type (one per user and client id recorded within the last
 * hour): past it the idlest are dropped, so clients inventing client ids cannot grow the map.
 */
export const quotaSensorsMax = 100_000;

/** Per-client quota series /metrics reports per quota type (the rest are left out, not the totals). */
export const metricsQuotaSeriesMax = 1_000;
/** At most one log line this often for refused inter-broker requests (a forged-request flood must not flood the log). */
export const refusalLogIntervalMs = 10_000;
/**
 * Audit lines (kafka.authorizer.logger) per second at most: past it, decisions are counted and the
 * next line says how many went unsaid. Kafka logs every one; here a denied flood must not make the
 * log (a synchronous stdout) the broker's bottleneck.
 */
export const authorizerLogLinesPerSecondMax = 1_000;
/**
 * Addresses whose connection creation rate (the ip quota, connection_creation_rate) is tracked at
 * once; an address idle for the whole quota window is forgotten, and past this the idlest tenth
 * is dropped, so connections from many addresses cannot grow the map.
 */
export const ipConnectionRatesMax = 10_000;
/**
 * Connections refused by their address's connection_creation_rate held, unread, for the throttle
 * time before they are closed (Kafka's delayed close); past this they are closed at once.
 */
export const ipThrottledClosesMax = 1_024;
/**
 * Producer ids a broker takes from /latest_producer_id_block at once (Kafka's
 * ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE); the ids of a block it does not use are never handed out.
 */
export const producerIdBlockSize = 1000;
/**
 * Tries of one producer id block allocation (read, conditional write) before InitProducerId is
 * answered retriable, when other brokers keep taking blocks in between (Kafka retries unbounded).
 */
export const producerIdBlockWriteAttemptsMax = 20;
/** Batches kept per producer for duplicate detection (Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN). */
export const producerBatchesRetained = 5;
/**
 * Producers with state on one partition; past it the least recently written one without an open
 * transaction is evicted (strand's; Kafka 3.8 has no such bound), so clients inventing producer
 * ids cannot grow a partition's memory without end.
 */
export const producerStateEntriesMax = 10_000;
/** How long WriteTxnMarkers waits for the ISR to have a marker (Kafka's request.timeout.ms default, which it uses). */
export const txnMarkerReplicationTimeoutMs = 30_000;
/** Largest `.snapshot` file read (10,000 entries are 370 KB); a larger one is skipped as corrupt. */
export const producerSnapshotBytesMax = 64 * 1024 * 1024;
/**
 * Bytes of tombstones one append of expired transactional ids may carry (Kafka bounds the batch
 * by the topic's max.message.bytes, 1 MiB by default); more ids go in further batches.
 */
export const txnTombstoneBatchBytesMax = 1_000_000;
/**
 * Memory the transaction coordinator's loaded transactional ids may take on one broker, counted as
 * txnIdOverheadBytes plus two bytes per character of each id (strand's; Kafka 3.8 has no bound, so
 * a client sending InitProducerId with ever new ids grows the coordinator until it runs out of
 * heap: the 7 days of transactional.id.expiration.ms come too late). At the bound the idle ids
 * (no transaction open) least recently updated are expired early, with Kafka's tombstones, down
 * to nine tenths of it; new ids are answered COORDINATOR_LOAD_IN_PROGRESS (retriable) meanwhile.
 * 256 MiB is about half a million ids of ordinary length.
 */
export const txnIdsLoadedBytesMax = 256 * 1024 * 1024;
/** One loaded transactional id's memory besides its characters (measured: 300 B on Bun, 410 B on Deno). */
export const txnIdOverheadBytes = 512;
/** Pause before the next early expiry when one found too few idle ids (each scans every loaded id). */
export const txnIdsMakeRoomBackoffMs = 1_000;
/**
 * Pause before transaction markers that failed with a retriable error (or found no live leader)
 * are sent again, and before a failed completion record is appended again. Kafka's marker thread
 * retries on its next poll; the pause keeps a partition without a leader from spinning the loop.
 */
export const txnMarkerRetryBackoffMs = 100;
/** Markers one WriteTxnMarkers request to a broker carries; more wait for the next request. */
export const txnMarkersPerRequestMax = 1_000;
/**
 * __consumer_offsets keys (topic, partition) the group coordinator keeps built for reuse
 * (coordinator/group.ts offsetKey): a commit or fetch of many partitions looks them up instead of
 * building each. At the bound the cache is dropped and refilled. About 100 B each: 10 MB.
 */
export const offsetKeysCachedMax = 100_000;
/** Partitions above this are not cached (their keys are built each time): a sparse array stays small. */
export const offsetKeysPartitionMax = 100_000;
