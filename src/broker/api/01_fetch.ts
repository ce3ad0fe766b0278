// Fetch (1), v0-16, for consumers and followers. v0-3 read legacy message sets: the stored
// batches are down-converted (fetch_down_convert.ts; message.downconversion.enable).
// Full fetches only: strand creates no incremental
// fetch sessions (KIP-227), answering session id 0, which tells clients to keep sending full
// requests; a request naming a session id answers FETCH_SESSION_ID_NOT_FOUND. Consumers read up to
// the high watermark (isolation_level 1, read_committed: up to the last stable offset, with the
// aborted transactions their records overlap; every answer carries the last stable offset); followers (replica_id >= 0; in v15+ ReplicaState.replicaId) up to the log
// end offset, and their fetch offset moves the high watermark (ReplicaManager). A follower must be
// allowed to send inter-broker requests (inter_broker.ts: CLUSTER_ACTION with an authorizer, else
// the inter-broker listener, never in single-node mode); otherwise every partition answers
// TOPIC_AUTHORIZATION_FAILED, as Kafka answers a follower without CLUSTER_ACTION. A replica id
// that is not a live broker of the cluster is refused with NOT_LEADER_OR_FOLLOWER for every
// partition, and one not assigned to a partition as Kafka does (ReplicaManager: UNKNOWN_LEADER_EPOCH
// when the request names a current leader epoch, else NOT_LEADER_OR_FOLLOWER). currentLeaderEpoch (v9+)
// is checked (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH). max_wait_ms is capped at
// limits.fetchMaxWaitMsMax.
//
// v13+ names topics by id: each id is resolved through the metadata cache, and the partitions of
// an id it does not know answer UNKNOWN_TOPIC_ID (Kafka's full-fetch answer; its
// FETCH_SESSION_TOPIC_ID_ERROR belongs to sessions). Answers carry the id and an empty name.
// v16+ (KIP-951): a partition answering NOT_LEADER_OR_FOLLOWER names the current leader and its
// epoch, and the response lists those leaders' endpoints, so the client need not ask Metadata.
import { FetchApi, type Struct } from "../../protocol/mod.ts";
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { bytesEqual, ErrorCode, fetchMaxWaitMsMax, zeroUuid } from "../../util/mod.ts";
import { authorizedNames } from "../authorize_checks.ts";
import type { ApiHandler } from "../dispatch.ts";
import { downConvertFetched, FETCH_LEGACY_FORMAT_TO } from "../fetch_down_convert.ts";
import { refuseInterBroker } from "../inter_broker.ts";
import type { BrokerEndpoint } from "../metadata_cache.ts";
import type { BrokerServices } from "../services.ts";

interface FetchPartition {
  partition: number;
  currentLeaderEpoch: number;
  fetchOffset: bigint;
  partitionMaxBytes: number;
}
interface FetchTopic {
  topic: string;
  topicId: Uint8Array;
  partitions: FetchPartition[];
}

const TOPIC_IDS_FROM = 13;
const REPLICA_STATE_FROM = 15;
const NODE_ENDPOINTS_FROM = 16;

/** A partition's answer when it could not be read at all. */
function errorPartition(partitionIndex: number, errorCode: number): Struct {
  return {
    partitionIndex,
    errorCode,
    highWatermark: -1n,
    lastStableOffset: -1n,
    logStartOffset: -1n,
    abortedTransactions: null,
    preferredReadReplica: -1,
    records: new Uint8Array(0),
  };
}

/** The partition's leader as this broker's metadata has it; its endpoint goes into `endpoints`. */
function currentLeader(s: BrokerServices, topic: string, partition: number, endpoints: Map<number, BrokerEndpoint>, listener: string) {
  const state = s.metadata.getTopic(topic)?.partitions.find((p) => p.partition === partition);
  if (state === undefined) return { leaderId: -1, leaderEpoch: -1 };
  const node = s.metadata.endpointFor(state.leader, listener);
  if (node !== undefined) endpoints.set(node.id, node);
  return { leaderId: state.leader, leaderEpoch: state.leaderEpoch };
}

export const fetchHandler: ApiHandler<BrokerServices> = {
  api: FetchApi,
  async handle(s, ctx, req) {
    const topics = req.topics as FetchTopic[];
    const base = { throttleTimeMs: 0, sessionId: 0, nodeEndpoints: [] as Struct[] };
    if ((req.sessionId as number) !== 0) {
      return { ...base, errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND, responses: [] };
    }
    const replicaId = ctx.version >= REPLICA_STATE_FROM ? (req.replicaState as { replicaId: number }).replicaId : req.replicaId as number;
    if (replicaId >= 0 && refuseInterBroker(s, ctx, "Fetch", { replica: replicaId })) {
      return { ...base, errorCode: ErrorCode.NONE, responses: refusedFollower(topics, ctx.version >= TOPIC_IDS_FROM) };
    }
    const refusedReplica = replicaId >= 0 && (replicaId === s.brokerId || s.metadata.getBroker(replicaId) === undefined);
    const byId = ctx.version >= TOPIC_IDS_FROM;
    // Each topic's name; null for an id this broker does not know.
    const names = topics.map((t) => {
      if (!byId) return t.topic;
      return bytesEqual(t.topicId, zeroUuid) ? null : s.metadata.getTopicById(t.topicId)?.name ?? null;
    });
    // A consumer needs READ on each topic (TOPIC_AUTHORIZATION_FAILED, before existence, as Kafka);
    // the follower side (replica_id >= 0) is authorized on its own.
    const known = names.filter((n): n is string => n !== null);
    const readable = replicaId >= 0 ? new Set(known) : authorizedNames(s, ctx, AclOperation.READ, ResourceType.TOPIC, known);
    const partitions = topics.flatMap((t, ti) =>
      names[ti] === null || refusedReplica || !readable.has(names[ti]) ? [] : t.partitions.map((p) => ({
        topic: names[ti] as string,
        partition: p.partition,
        fetchOffset: Number(p.fetchOffset),
        maxBytes: Math.max(0, p.partitionMaxBytes),
        currentLeaderEpoch: p.currentLeaderEpoch ?? -1,
      }))
    );
    const read = await s.replicaManager.fetchMessages({
      partitions,
      maxWaitMs: Math.min(Math.max(0, req.maxWaitMs as number), fetchMaxWaitMsMax),
      minBytes: req.minBytes as number,
      maxBytes: Math.min(Math.max(0, req.maxBytes as number), s.config.fetchMaxBytes),
      replicaId: refusedReplica ? -1 : replicaId,
      isolationLevel: ctx.version >= 4 ? req.isolationLevel as number : 0,
      onParked: (ms) => (ctx.parkedMs += ms),
    });
    const results = ctx.version <= FETCH_LEGACY_FORMAT_TO ? downConvertFetched(s, ctx.version, replicaId >= 0, read, partitions) : read;
    const endpoints = new Map<number, BrokerEndpoint>();
    let i = 0;
    const responses = topics.map((t, ti) => {
      const name = names[ti];
      return {
        topic: byId ? "" : t.topic,
        topicId: t.topicId,
        partitions: t.partitions.map((p): Struct => {
          if (name === null) return errorPartition(p.partition, ErrorCode.UNKNOWN_TOPIC_ID);
          if (refusedReplica) return errorPartition(p.partition, ErrorCode.NOT_LEADER_OR_FOLLOWER);
          if (!readable.has(name)) return errorPartition(p.partition, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
          const r = results[i++];
          const out: Struct = {
            partitionIndex: r.partition,
            errorCode: r.errorCode,
            highWatermark: BigInt(r.highWatermark),
            lastStableOffset: BigInt(r.lastStableOffset),
            logStartOffset: BigInt(r.logStartOffset),
            abortedTransactions: r.abortedTransactions?.map((t) => ({ producerId: t.producerId, firstOffset: BigInt(t.firstOffset) })) ?? null,
            preferredReadReplica: -1,
            records: r.records ?? new Uint8Array(0),
          };
          if (ctx.version >= NODE_ENDPOINTS_FROM && r.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER) {
            out.currentLeader = currentLeader(s, name, r.partition, endpoints, ctx.conn.listener);
          }
          return out;
        }),
      };
    });
    const nodeEndpoints = [...endpoints.values()]
      .sort((a, b) => a.id - b.id)
      .map((b) => ({ nodeId: b.id, host: b.host, port: b.port, rack: b.rack }));
    return { ...base, errorCode: ErrorCode.NONE, responses, nodeEndpoints };
  },
};

/** A follower that may not fetch: every partition TOPIC_AUTHORIZATION_FAILED (Kafka's answer). */
function refusedFollower(topics: FetchTopic[], byId: boolean): Struct[] {
  return topics.map((t) => ({
    topic: byId ? "" : t.topic,
    topicId: t.topicId,
    partitions: t.partitions.map((p) => errorPartition(p.partition, ErrorCode.TOPIC_AUTHORIZATION_FAILED)),
  }));
}
