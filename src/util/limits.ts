// Every bound strand enforces, named in one place. Config keys can lower or raise some of them
// (named beside each); the rest are hard ceilings that protect the process from hostile input.

/** Largest frame accepted before `socket.request.max.bytes` is known (Kafka's default, 100 MiB). */
export const socketRequestMaxBytesDefault = 104_857_600;
/** Longest topic name Kafka accepts (so `<topic>-<partition>` fits a 255-byte file name). */
export const topicNameLengthMax = 249;
/** Most partitions one topic may have; a CreateTopics asking for more is refused. */
export const partitionsPerTopicMax = 10_000;
/** Most elements any array read from the wire may declare, whatever the bytes left. */
export const wireArrayLengthMax = 1_000_000;
/** Most tagged fields one struct may carry on the wire. */
export const wireTaggedFieldsMax = 1_000;
/** Requests a connection may have read and not yet answered; reading pauses past this. */
export const requestsInFlightPerConnectionMax = 128;
/** Fetch long-poll ceiling, whatever a client asks for in max_wait_ms. */
export const fetchMaxWaitMsMax = 60_000;
/** Record batch v2 header size: everything before the first record. */
export const recordBatchHeaderBytes = 61;
/** Smallest frame we answer (api key, version, correlation id). */
export const requestHeaderBytesMin = 8;
/** Bytes read from a segment at once when a fetch asks for more. */
export const segmentReadChunkBytesMax = 8 * 1024 * 1024;
