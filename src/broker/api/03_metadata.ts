// Metadata (3), v0-12. Topics requested by name (or, v12+, by id; strand answers by name and
// reports an id it does not know as UNKNOWN_TOPIC_ID; an id or a null name in v10-11 makes every
// topic INVALID_REQUEST, as in Kafka). A null list (v1+) or an empty one (v0)
// means every topic. An unknown topic is created when allow_auto_topic_creation (v4+, always in
// earlier versions) and auto.create.topics.enable both say so, with num.partitions and
// default.replication.factor; the answer waits briefly for it, else says LEADER_NOT_AVAILABLE
// so the client retries, as Kafka does.
// A replica on this broker whose log dir failed is listed in offlineReplicas; when it was the
// leader, the partition answers leader -1 and LEADER_NOT_AVAILABLE, as after Kafka's controller
// found no other leader (strand's controller does not move leadership yet).
// Authorization as Kafka's: a topic needs DESCRIBE to be listed (left out of an all-topics answer,
// TOPIC_AUTHORIZATION_FAILED with a zero id when named, so its existence is not revealed; by id,
// the id is no secret and is echoed), and auto-creation needs CREATE on the cluster or the topic.
// include_*_authorized_operations (v8+) answer the principal's bit sets; the cluster's (v8-10)
// is 0 without DESCRIBE on the cluster.
import { AclOperation, clusterResourceName, ResourceType } from "../../authorizer/mod.ts";
import { MetadataApi } from "../../protocol/mod.ts";
import type { Struct } from "../../protocol/mod.ts";
import { internalTopics, topicNameError } from "../../controller/mod.ts";
import { isRegistryUnavailable } from "../../registry/mod.ts";
import { bytesEqual, ErrorCode, metadataPartitionsPerStep, TimeSlice, zeroUuid } from "../../util/mod.ts";
import { AUTHORIZED_OPERATIONS_OMITTED, authorizedOperations, clusterAllowed } from "../authorize_checks.ts";
import { allowed } from "../authorize.ts";
import type { ApiHandler, RequestContext } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

const AUTO_CREATE_WAIT_MS = 3000;

/** Who is asking: the listener the request came in on picks the endpoints it is given. */
interface ClientView {
  listener: string;
  version: number;
}

function topicEntry(s: BrokerServices, view: ClientView, name: string, errorCode: number = ErrorCode.NONE): Struct {
  const t = s.metadata.getTopic(name);
  const base = topicBase(name, t?.topicId ?? zeroUuid, errorCode);
  if (t === undefined || errorCode !== ErrorCode.NONE) return base;
  base.partitions = t.partitions.map((p) => partitionEntry(s, view, name, p));
  return base;
}

/**
 * topicEntry() for a topic that exists, giving the event loop back (slice) between pieces of its
 * partitions: the answer for a topic of 10,000 partitions took tens of ms to build in one piece.
 * The topic is read once, so its partitions come from one state of the cache.
 */
async function topicEntryGradually(s: BrokerServices, view: ClientView, name: string, slice: TimeSlice): Promise<Struct> {
  const t = s.metadata.getTopic(name);
  const base = topicBase(name, t?.topicId ?? zeroUuid, ErrorCode.NONE);
  if (t === undefined) return base;
  for (let i = 0; i < t.partitions.length; i++) {
    base.partitions.push(partitionEntry(s, view, name, t.partitions[i]));
    if (i % metadataPartitionsPerStep === metadataPartitionsPerStep - 1) await slice.yield();
  }
  return base;
}

function topicBase(name: string, topicId: Uint8Array, errorCode: number) {
  return {
    errorCode,
    name,
    topicId,
    isInternal: internalTopics.has(name),
    partitions: [] as Struct[],
    topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
  };
}

type CachedPartition = { partition: number; leader: number; leaderEpoch: number; replicas: number[]; isr: number[] };

function partitionEntry(s: BrokerServices, view: ClientView, name: string, p: CachedPartition): Struct {
  const localOffline = p.replicas.includes(s.brokerId) && s.replicaManager.isOffline(name, p.partition);
  const live = (id: number) => s.metadata.getBroker(id) !== undefined && !(localOffline && id === s.brokerId);
  // A live leader without the client's listener: Kafka's LISTENER_NOT_FOUND (v6+), so a
  // misconfigured listener shows as such, not as an election in progress.
  const reachable = live(p.leader) && s.metadata.endpointFor(p.leader, view.listener) !== undefined;
  const unreachable = live(p.leader) ? (view.version >= 6 ? ErrorCode.LISTENER_NOT_FOUND : ErrorCode.LEADER_NOT_AVAILABLE) : ErrorCode.LEADER_NOT_AVAILABLE;
  return {
    errorCode: reachable ? ErrorCode.NONE : unreachable,
    partitionIndex: p.partition,
    leaderId: reachable ? p.leader : -1,
    leaderEpoch: p.leaderEpoch,
    replicaNodes: p.replicas,
    isrNodes: p.isr,
    offlineReplicas: p.replicas.filter((r) => !live(r)),
  };
}

async function autoCreate(s: BrokerServices, name: string): Promise<number> {
  const nameError = topicNameError(name);
  if (nameError !== null) return ErrorCode.INVALID_TOPIC_EXCEPTION;
  // Internal topics are made only with their own settings (compacted, offsets.topic.*), as Kafka does.
  if (name === "__consumer_offsets") return (await s.ensureOffsetsTopic()) ? ErrorCode.NONE : ErrorCode.LEADER_NOT_AVAILABLE;
  if (internalTopics.has(name)) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  let outcome;
  try {
    outcome = await s.topicAdmin.createTopic(
      {
        name,
        numPartitions: s.config.numPartitions,
        replicationFactor: s.config.defaultReplicationFactor,
        assignment: null,
        configs: {},
      },
      false,
      AUTO_CREATE_WAIT_MS,
    );
  } catch (e) {
    // The registry out of reach: retriable, the client asks again (Kafka answers the same while
    // a topic is being created).
    if (!isRegistryUnavailable(e)) throw e;
    s.logger.warn({ topic: name, reason: e.message }, "auto-create failed: the registry is unavailable");
    return ErrorCode.LEADER_NOT_AVAILABLE;
  }
  if (outcome.errorCode === ErrorCode.NONE || outcome.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS) {
    return s.metadata.getTopic(name) === undefined ? ErrorCode.LEADER_NOT_AVAILABLE : ErrorCode.NONE;
  }
  s.logger.warn({ topic: name, errorCode: outcome.errorCode, reason: outcome.errorMessage }, "auto-create failed");
  return outcome.errorCode === ErrorCode.INVALID_REPLICATION_FACTOR ? ErrorCode.LEADER_NOT_AVAILABLE : outcome.errorCode;
}

export const metadataHandler: ApiHandler<BrokerServices> = {
  api: MetadataApi,
  async handle(s, ctx, req) {
    const requested = req.topics as { topicId: Uint8Array; name: string | null }[] | null;
    const allTopics = requested === null || (ctx.version === 0 && requested.length === 0);
    const allowAuto = (ctx.version < 4 || (req.allowAutoTopicCreation as boolean)) && s.config.autoCreateTopicsEnable;
    const topics: Struct[] = [];
    const view: ClientView = { listener: ctx.conn.listener, version: ctx.version };
    // Listing all topics only filters: a topic left out is no denied attempt (Kafka logs it at trace).
    const describable = (name: string) => allowed(s, ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, name, !allTopics);
    // Only the topics the principal may describe get their operations (Kafka's topicMetadata).
    const withOperations = (e: Struct): Struct => {
      if (ctx.version >= 8 && (req.includeTopicAuthorizedOperations as boolean)) {
        e.topicAuthorizedOperations = authorizedOperations(s, ctx, ResourceType.TOPIC, e.name as string);
      }
      return e;
    };
    const denied = (name: string | null, topicId: Uint8Array, isInternal = false): Struct => ({
      ...topicEntry(s, view, "", ErrorCode.TOPIC_AUTHORIZATION_FAILED),
      name,
      topicId,
      isInternal,
    });
    if (!allTopics && ctx.version < 12 && requested.some((t) => t.name === null || !bytesEqual(t.topicId, zeroUuid))) {
      // v10-11 carry a topic id and a nullable name, but no broker looks topics up by id before
      // v12: Kafka throws InvalidRequestException and answers every topic INVALID_REQUEST (a null
      // name as "", which those versions' answers must carry).
      for (const t of requested) {
        topics.push({ ...topicEntry(s, view, "", ErrorCode.INVALID_REQUEST), name: t.name ?? "", topicId: t.topicId, isInternal: false });
      }
      return answer(s, ctx, req, view, topics);
    }
    const slice = new TimeSlice();
    if (allTopics) {
      for (const name of s.metadata.topicNames()) {
        if (!describable(name)) continue;
        topics.push(withOperations(await topicEntryGradually(s, view, name, slice)));
        await slice.yield(); // many small topics weigh as much as one large one
      }
    } else {
      for (const t of requested) {
        if (t.name === null) {
          const byId = bytesEqual(t.topicId, zeroUuid) ? undefined : s.metadata.getTopicById(t.topicId);
          if (byId === undefined) topics.push({ ...topicEntry(s, view, "", ErrorCode.UNKNOWN_TOPIC_ID), name: null, topicId: t.topicId });
          else if (!describable(byId.name)) topics.push(denied(null, t.topicId));
          else topics.push(withOperations(topicEntry(s, view, byId.name)));
          continue;
        }
        if (!describable(t.name)) {
          topics.push(denied(t.name, zeroUuid));
          continue;
        }
        if (s.metadata.getTopic(t.name) !== undefined) {
          topics.push(withOperations(await topicEntryGradually(s, view, t.name, slice)));
          continue;
        }
        if (allowAuto && !mayCreate(s, ctx, t.name)) {
          topics.push(denied(t.name, zeroUuid, internalTopics.has(t.name)));
          continue;
        }
        const code = topicNameError(t.name) !== null
          ? ErrorCode.INVALID_TOPIC_EXCEPTION
          : allowAuto
          ? await autoCreate(s, t.name)
          : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        topics.push(withOperations(topicEntry(s, view, t.name, code)));
      }
    }
    return answer(s, ctx, req, view, topics);
  },
};

/** Auto-creation needs CREATE on the cluster, or else on the topic. */
function mayCreate(s: BrokerServices, ctx: RequestContext, name: string): boolean {
  return clusterAllowed(s, ctx, AclOperation.CREATE) || allowed(s, ctx, AclOperation.CREATE, ResourceType.TOPIC, name);
}

function answer(s: BrokerServices, ctx: RequestContext, req: Struct, view: ClientView, topics: Struct[]): Struct {
  let clusterAuthorizedOperations = AUTHORIZED_OPERATIONS_OMITTED;
  if (ctx.version >= 8 && ctx.version <= 10 && (req.includeClusterAuthorizedOperations as boolean)) {
    clusterAuthorizedOperations = clusterAllowed(s, ctx, AclOperation.DESCRIBE)
      ? authorizedOperations(s, ctx, ResourceType.CLUSTER, clusterResourceName)
      : 0;
  }
  return {
    throttleTimeMs: 0,
    brokers: s.metadata.brokersOn(view.listener).map((b) => ({ nodeId: b.id, host: b.host, port: b.port, rack: b.rack })),
    clusterId: s.metadata.clusterId,
    controllerId: s.metadata.controllerId,
    topics,
    clusterAuthorizedOperations,
  };
}
