// Fetch (1), v0-16, for consumers and followers. v0-3 read legacy message sets: the stored
// batches are down-converted (fetch_down_convert.ts; message.downconversion.enable).
// v7+: incremental fetch sessions (KIP-227,
// fetch_session.ts: which partitions a request reads, and which of them its answer carries).
// v11+: a consumer may read a follower, and the leader may name a preferred read replica in the
// consumer's rack (KIP-392, replica_selector.ts). Consumers read up to
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
import { bytesEqual, ErrorCode, fetchMaxWaitMsMax, uuidToString, zeroUuid } from "../../util/mod.ts";
import { authorizedNames } from "../authorize_checks.ts";
import type { ApiHandler } from "../dispatch.ts";
import { downConvertFetched, FETCH_LEGACY_FORMAT_TO, FETCH_ZSTD_FROM, refuseZstdTopics } from "../fetch_down_convert.ts";
import { CachedPartition, type FetchContext, type FetchSessionCache, INVALID_SESSION_ID, newFetchContext, type RequestedPartition } from "../fetch_session.ts";
import { refuseInterBroker } from "../inter_broker.ts";
import type { BrokerEndpoint } from "../metadata_cache.ts";
import { preferredReadReplicaFor } from "../replica_selector.ts";
import type { BrokerServices } from "../services.ts";

interface FetchPartition {
  partition: number;
  currentLeaderEpoch: number;
  fetchOffset: bigint;
  lastFetchedEpoch: number;
  logStartOffset: bigint;
  partitionMaxBytes: number;
}
interface FetchTopic {
  topic: string;
  topicId: Uint8Array;
  partitions: FetchPartition[];
}
interface ForgottenTopic {
  topic: string;
  topicId: Uint8Array;
  partitions: number[];
}

const TOPIC_IDS_FROM = 13;
const REPLICA_STATE_FROM = 15;
const NODE_ENDPOINTS_FROM = 16;
const CLIENT_METADATA_FROM = 11;

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
  const state = s.metadata.getPartition(topic, partition);
  if (state === undefined) return { leaderId: -1, leaderEpoch: -1 };
  const node = s.metadata.endpointFor(state.leader, listener);
  if (node !== undefined) endpoints.set(node.id, node);
  return { leaderId: state.leader, leaderEpoch: state.leaderEpoch };
}

/** A session's key for a partition: its topic id in v13+ (names may change), else its name. */
function partitionKey(byId: boolean, topic: string, topicId: Uint8Array, partition: number): string {
  return byId ? `${uuidToString(topicId)}:${partition}` : `${topic}\u0000${partition}`;
}

/** The partitions a request names, in its order. */
function requestedPartitions(topics: FetchTopic[], byId: boolean): RequestedPartition[] {
  return topics.flatMap((t) => {
    // The decoded id is a view of the request's frame: a session must not keep the frame alive.
    const topicId = t.topicId.slice();
    return t.partitions.map((p) => ({
      key: partitionKey(byId, t.topic, topicId, p.partition),
      topic: byId ? "" : t.topic,
      topicId,
      partition: p.partition,
      fetchOffset: p.fetchOffset,
      partitionMaxBytes: p.partitionMaxBytes,
      currentLeaderEpoch: p.currentLeaderEpoch ?? -1,
      logStartOffset: p.logStartOffset ?? -1n,
      lastFetchedEpoch: p.lastFetchedEpoch ?? -1,
    }));
  });
}

function forgottenKeys(forgotten: ForgottenTopic[] | undefined, byId: boolean): string[] {
  return (forgotten ?? []).flatMap((t) => t.partitions.map((p) => partitionKey(byId, t.topic, t.topicId, p)));
}

export const fetchHandler: ApiHandler<BrokerServices> = {
  api: FetchApi,
  async handle(s, ctx, req) {
    const byId = ctx.version >= TOPIC_IDS_FROM;
    const replicaId = ctx.version >= REPLICA_STATE_FROM ? (req.replicaState as { replicaId: number }).replicaId : req.replicaId as number;
    const requested = requestedPartitions(req.topics as FetchTopic[], byId);
    const cache: FetchSessionCache | null = s.fetchSessions ?? null;
    const context = newFetchContext(cache, {
      version: ctx.version,
      sessionId: req.sessionId as number,
      epoch: req.sessionEpoch as number,
      privileged: replicaId >= 0,
      requested,
      forgotten: forgottenKeys(req.forgottenTopicsData as ForgottenTopic[] | undefined, byId),
      nowMs: s.clock.nowMs(),
    });
    const base = { throttleTimeMs: 0, nodeEndpoints: [] as Struct[] };
    if (context.kind === "error") return { ...base, errorCode: context.errorCode, sessionId: INVALID_SESSION_ID, responses: [] };
    // What this fetch reads: an incremental fetch reads every partition of its session.
    const wanted: RequestedPartition[] = context.kind === "incremental" ? [...context.session.partitions.values()] : requested;
    const refusedFollower = replicaId >= 0 && refuseInterBroker(s, ctx, "Fetch", { replica: replicaId });
    const refusedReplica = replicaId >= 0 && (replicaId === s.brokerId || s.metadata.getBroker(replicaId) === undefined);
    // Each partition's topic name; null for an id this broker does not know.
    const names = wanted.map((w) => {
      if (!byId) return w.topic;
      return bytesEqual(w.topicId, zeroUuid) ? null : s.metadata.getTopicById(w.topicId)?.name ?? null;
    });
    // A consumer needs READ on each topic (TOPIC_AUTHORIZATION_FAILED, before existence, as Kafka);
    // the follower side (replica_id >= 0) is authorized on its own.
    const known = [...new Set(names.filter((n): n is string => n !== null))];
    const readable = replicaId >= 0 ? new Set(known) : authorizedNames(s, ctx, AclOperation.READ, ResourceType.TOPIC, known);
    const readsHere = (i: number) => names[i] !== null && !refusedFollower && !refusedReplica && readable.has(names[i] as string);
    const clientMetadata = replicaId < 0 && ctx.version >= CLIENT_METADATA_FROM;
    const selector = clientMetadata
      ? preferredReadReplicaFor(s.config.replicaSelectorClass, s.metadata, ctx.conn.listener, req.rackId as string ?? "", s.clock.monotonicMs())
      : undefined;
    const partitions = wanted.flatMap((w, i) => {
      if (!readsHere(i)) return [];
      const fetchOffset = Number(w.fetchOffset);
      return [{
        topic: names[i] as string,
        partition: w.partition,
        fetchOffset,
        maxBytes: Math.max(0, w.partitionMaxBytes),
        currentLeaderEpoch: w.currentLeaderEpoch,
        preferredReadReplica: selector === undefined ? undefined : (p: Parameters<typeof selector>[0]) => selector(p, fetchOffset),
      }];
    });
    const read = await s.replicaManager.fetchMessages({
      partitions,
      maxWaitMs: Math.min(Math.max(0, req.maxWaitMs as number), fetchMaxWaitMsMax),
      minBytes: req.minBytes as number,
      maxBytes: Math.min(Math.max(0, req.maxBytes as number), s.config.fetchMaxBytes),
      replicaId: refusedReplica ? -1 : replicaId,
      isolationLevel: ctx.version >= 4 ? req.isolationLevel as number : 0,
      // Kafka's FetchParams.fetchOnlyLeader: followers, and consumers without client metadata (< v11).
      fetchOnlyLeader: !clientMetadata,
      onParked: (ms) => (ctx.parkedMs += ms),
    });
    const zstdChecked = ctx.version < FETCH_ZSTD_FROM ? refuseZstdTopics(s, read) : read;
    const results = ctx.version <= FETCH_LEGACY_FORMAT_TO ? downConvertFetched(s, ctx.version, replicaId >= 0, zstdChecked, partitions) : zstdChecked;
    const endpoints = new Map<number, BrokerEndpoint>();
    let r = 0;
    const answers = wanted.map((w, i): Struct => {
      const name = names[i];
      if (name === null) return errorPartition(w.partition, ErrorCode.UNKNOWN_TOPIC_ID);
      if (refusedFollower) return errorPartition(w.partition, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
      if (refusedReplica) return errorPartition(w.partition, ErrorCode.NOT_LEADER_OR_FOLLOWER);
      if (!readable.has(name)) return errorPartition(w.partition, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
      const res = results[r++];
      res.errorCode = s.metadata.notHostedError(name, res.partition, res.errorCode);
      // Before v6 clients do not know KAFKA_STORAGE_ERROR: Kafka answers them NOT_LEADER_OR_FOLLOWER.
      if (res.errorCode === ErrorCode.KAFKA_STORAGE_ERROR && ctx.version < 6) res.errorCode = ErrorCode.NOT_LEADER_OR_FOLLOWER;
      const out: Struct = {
        partitionIndex: res.partition,
        errorCode: res.errorCode,
        highWatermark: BigInt(res.highWatermark),
        lastStableOffset: BigInt(res.lastStableOffset),
        logStartOffset: BigInt(res.logStartOffset),
        abortedTransactions: res.abortedTransactions?.map((t) => ({ producerId: t.producerId, firstOffset: BigInt(t.firstOffset) })) ?? null,
        preferredReadReplica: res.preferredReadReplica ?? -1,
        records: res.records ?? new Uint8Array(0),
      };
      if (ctx.version >= NODE_ENDPOINTS_FROM && res.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER) {
        out.currentLeader = currentLeader(s, name, res.partition, endpoints, ctx.conn.listener);
      }
      return out;
    });
    const { sessionId, errorCode, carried } = sessionAnswer(s, cache, context, wanted, answers);
    const nodeEndpoints = [...endpoints.values()]
      .sort((a, b) => a.id - b.id)
      .map((b) => ({ nodeId: b.id, host: b.host, port: b.port, rack: b.rack }));
    if (errorCode !== ErrorCode.NONE) return { ...base, errorCode, sessionId, responses: [] };
    return { ...base, errorCode, sessionId, responses: groupByTopic(wanted, answers, carried, byId), nodeEndpoints };
  },
};

/**
 * The session side of an answer (Kafka's FetchContext.updateAndGenerateResponseData): a full fetch
 * may make a session of what it read; an incremental one carries only the partitions with news.
 */
function sessionAnswer(s: BrokerServices, cache: FetchSessionCache | null, context: FetchContext, wanted: RequestedPartition[], answers: Struct[]) {
  if (context.kind === "full" && cache !== null) {
    const sessionId = cache.maybeCreateSession(s.clock.nowMs(), context.privileged, wanted.length, context.usesTopicIds, () => {
      const partitions = new Map<string, CachedPartition>();
      wanted.forEach((w, i) => {
        const cached = new CachedPartition(w.key, w.topic, w.topicId, w.partition, w);
        cached.mustRespond(partitionAnswer(answers[i]), true);
        partitions.set(w.key, cached);
      });
      return partitions;
    });
    return { sessionId, errorCode: ErrorCode.NONE, carried: null };
  }
  if (context.kind !== "incremental") return { sessionId: INVALID_SESSION_ID, errorCode: ErrorCode.NONE, carried: null };
  const session = context.session;
  // Another fetch of this session got in while this one waited: the client has lost count.
  if (session.epoch !== context.expectedEpoch) return { sessionId: session.id, errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH, carried: null };
  const carried = answers.map((a, i) => {
    const cached = wanted[i] as CachedPartition;
    const must = cached.mustRespond(partitionAnswer(a), true);
    if (must && (a.records as Uint8Array).length > 0) session.moveToEnd(cached);
    return must;
  });
  return { sessionId: session.id, errorCode: ErrorCode.NONE, carried };
}

function partitionAnswer(a: Struct) {
  return {
    errorCode: a.errorCode as number,
    highWatermark: a.highWatermark as bigint,
    lastStableOffset: a.lastStableOffset as bigint,
    logStartOffset: a.logStartOffset as bigint,
    preferredReadReplica: a.preferredReadReplica as number,
    recordBytes: (a.records as Uint8Array | null)?.length ?? 0,
    diverging: false,
  };
}

/** The answer's topics: runs of the same topic in `wanted` order, with the partitions carried (all when `carried` is null). */
function groupByTopic(wanted: RequestedPartition[], answers: Struct[], carried: boolean[] | null, byId: boolean): Struct[] {
  const out: { topic: string; topicId: Uint8Array; partitions: Struct[] }[] = [];
  let lastTopicKey = "";
  wanted.forEach((w, i) => {
    if (carried !== null && !carried[i]) return;
    const topicKey = byId ? uuidToString(w.topicId) : w.topic;
    if (out.length === 0 || topicKey !== lastTopicKey) out.push({ topic: byId ? "" : w.topic, topicId: w.topicId, partitions: [] });
    lastTopicKey = topicKey;
    out[out.length - 1].partitions.push(answers[i]);
  });
  return out;
}
