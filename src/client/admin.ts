// Admin operations over a ClusterClient, as Kafka's AdminClient routes them: topic creation,
// deletion and partition increases to the controller; configs to any broker; offsets to each
// partition's leader; group operations to the group's coordinator (FindCoordinator), ListGroups
// to every broker. Each returns plain values or throws a ClientError with a one-line message;
// retriable failures (moved controller, coordinator loading, leader changes) are retried by the
// ClusterClient's bounded policy.
import {
  AlterClientQuotasApi,
  CreatePartitionsApi,
  CreateTopicsApi,
  decodeConsumerAssignment,
  DeleteGroupsApi,
  DeleteTopicsApi,
  DescribeClientQuotasApi,
  DescribeConfigsApi,
  DescribeGroupsApi,
  FindCoordinatorApi,
  IncrementalAlterConfigsApi,
  ListGroupsApi,
  ListOffsetsApi,
  OffsetCommitApi,
  OffsetFetchApi,
  type Struct,
  type TopicPartitions,
} from "../protocol/mod.ts";
import { ErrorCode, zeroUuid } from "../util/mod.ts";
import { ClientError, type ClusterClient, errorFor, needsMetadataRefresh, RetriableError } from "./cluster_client.ts";
import type { KafkaConnection } from "./connection.ts";

/** How long the broker may take over a topic creation, deletion or partition increase. */
export const adminTimeoutMsDefault = 30_000;

/** DescribeConfigs' and IncrementalAlterConfigs' resource types. */
export const ConfigResource = { topic: 2, broker: 4 } as const;

/** DescribeConfigs' config sources (v1+). */
export const ConfigSource = {
  unknown: 0,
  dynamicTopic: 1,
  dynamicBroker: 2,
  dynamicDefaultBroker: 3,
  staticBroker: 4,
  default: 5,
  dynamicBrokerLogger: 6,
} as const;

export interface TopicPartition {
  topic: string;
  partition: number;
}

/** A map key for a topic-partition (topic names never hold a colon). */
export function tpKey(topic: string, partition: number): string {
  return `${topic}:${partition}`;
}

export function throwFirst(errors: { code: number; context: string; message: string | null }[]): void {
  const e = errors.find((x) => x.code !== ErrorCode.NONE);
  if (e === undefined) return;
  const err = errorFor(e.code, e.context, e.message);
  // The routing went stale: another try goes elsewhere after a metadata refresh.
  if (needsMetadataRefresh(e.code) && !(err instanceof RetriableError)) throw new RetriableError(err.message, e.code);
  throw err;
}

// --- topics ------------------------------------------------------------------------------------

export interface NewTopic {
  name: string;
  /** -1: the broker's num.partitions. */
  partitions: number;
  /** -1: the broker's default.replication.factor. */
  replicationFactor: number;
  configs: Record<string, string>;
}

export async function createTopic(c: ClusterClient, t: NewTopic, timeoutMs = adminTimeoutMsDefault): Promise<void> {
  await c.retrying(async (attempt) => {
    const conn = await c.controllerConnection();
    const { res } = await c.call(conn, CreateTopicsApi, 7, (v) => {
      if (v < 4 && (t.partitions < 0 || t.replicationFactor < 0)) {
        throw new ClientError(`${conn.endpoint} needs --partitions and --replication-factor (CreateTopics v${v})`);
      }
      return {
        topics: [{
          name: t.name,
          numPartitions: t.partitions,
          replicationFactor: t.replicationFactor,
          assignments: [],
          configs: Object.entries(t.configs).map(([name, value]) => ({ name, value })),
        }],
        timeoutMs,
        validateOnly: false,
      };
    }, timeoutMs + c.requestTimeoutMs);
    const r = (res.topics as Struct[])[0];
    const code = r.errorCode as number;
    // A retried creation that the first try already made counts as done.
    if (code === ErrorCode.TOPIC_ALREADY_EXISTS && attempt > 0) return;
    throwFirst([{ code, context: `cannot create topic "${t.name}"`, message: r.errorMessage as string | null }]);
  });
}

export async function deleteTopics(c: ClusterClient, names: string[], timeoutMs = adminTimeoutMsDefault): Promise<void> {
  await c.retrying(async (attempt) => {
    const conn = await c.controllerConnection();
    const { res } = await c.call(conn, DeleteTopicsApi, 6, () => ({
      topics: names.map((name) => ({ name, topicId: zeroUuid })),
      topicNames: names,
      timeoutMs,
    }), timeoutMs + c.requestTimeoutMs);
    for (const r of res.responses as Struct[]) {
      const code = r.errorCode as number;
      if (code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
        if (attempt > 0) continue; // deleted by an earlier try whose answer was lost
        throw new ClientError(`topic "${r.name}" does not exist`, code);
      }
      throwFirst([{ code, context: `cannot delete topic "${r.name}"`, message: (r.errorMessage as string | null) ?? null }]);
    }
  });
}

export async function createPartitions(c: ClusterClient, topic: string, count: number, timeoutMs = adminTimeoutMsDefault): Promise<void> {
  await c.retrying(async (attempt) => {
    const conn = await c.controllerConnection();
    const { res } = await c.call(conn, CreatePartitionsApi, 3, () => ({
      topics: [{ name: topic, count, assignments: null }],
      timeoutMs,
      validateOnly: false,
    }), timeoutMs + c.requestTimeoutMs);
    const r = (res.results as Struct[])[0];
    let code = r.errorCode as number;
    const message = r.errorMessage as string | null;
    // A retry of an increase the first try made: the count is already there.
    if (code === ErrorCode.INVALID_PARTITIONS && attempt > 0 && /already has|has \d+ partitions/.test(message ?? "")) code = ErrorCode.NONE;
    if (code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) throw new ClientError(`topic "${topic}" does not exist`, code);
    throwFirst([{ code, context: `cannot add partitions to "${topic}"`, message }]);
  });
}

export interface ConfigEntry {
  name: string;
  value: string | null;
  readOnly: boolean;
  /** ConfigSource; 5 (default) for values nobody set. */
  source: number;
  isSensitive: boolean;
}

/** Every config of each topic, with its source (topic overrides have source dynamicTopic). */
export async function describeTopicConfigs(c: ClusterClient, topics: string[]): Promise<Map<string, ConfigEntry[]>> {
  return await c.retrying(async () => {
    const conn = await c.anyConnection();
    const { version, res } = await c.call(conn, DescribeConfigsApi, 4, () => ({
      resources: topics.map((t) => ({ resourceType: ConfigResource.topic, resourceName: t, configurationKeys: null })),
      includeSynonyms: false,
      includeDocumentation: false,
    }));
    const out = new Map<string, ConfigEntry[]>();
    for (const r of res.results as Struct[]) {
      const name = r.resourceName as string;
      const code = r.errorCode as number;
      if (code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) throw new ClientError(`topic "${name}" does not exist`, code);
      throwFirst([{ code, context: `cannot describe the configs of "${name}"`, message: r.errorMessage as string | null }]);
      out.set(name, (r.configs as Struct[]).map((e) => ({
        name: e.name as string,
        value: e.value as string | null,
        readOnly: e.readOnly as boolean,
        source: version >= 1 ? (e.configSource as number) : (e.isDefault ? ConfigSource.default : ConfigSource.dynamicTopic),
        isSensitive: e.isSensitive as boolean,
      })));
    }
    return out;
  });
}

/** Sets and removes (back to the default) topic config overrides, leaving the others as they are. */
export async function alterTopicConfigs(c: ClusterClient, topic: string, set: Record<string, string>, remove: string[]): Promise<void> {
  await c.retrying(async () => {
    const conn = await c.anyConnection();
    const { res } = await c.call(conn, IncrementalAlterConfigsApi, 1, () => ({
      resources: [{
        resourceType: ConfigResource.topic,
        resourceName: topic,
        configs: [
          ...Object.entries(set).map(([name, value]) => ({ name, configOperation: 0, value })),
          ...remove.map((name) => ({ name, configOperation: 1, value: null })),
        ],
      }],
      validateOnly: false,
    }));
    for (const r of res.responses as Struct[]) {
      const code = r.errorCode as number;
      if (code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) throw new ClientError(`topic "${topic}" does not exist`, code);
      throwFirst([{ code, context: `cannot alter the configs of "${topic}"`, message: r.errorMessage as string | null }]);
    }
  });
}

// --- offsets -----------------------------------------------------------------------------------

/** ListOffsets' special timestamps. */
export const OffsetSpec = { latest: -1n, earliest: -2n } as const;

/**
 * The offset for `timestamp` (OffsetSpec.latest: the log end offset; earliest: the log start
 * offset) of each partition, asked of each partition's leader. Keyed by tpKey.
 */
export async function listOffsets(c: ClusterClient, tps: TopicPartition[], timestamp: bigint): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (tps.length === 0) return out;
  const topics = [...new Set(tps.map((tp) => tp.topic))];
  let todo = tps;
  await c.retrying(async (attempt) => {
    if (attempt === 0) await c.refreshMetadata(topics);
    const byLeader = new Map<number, TopicPartition[]>();
    for (const tp of todo) {
      const t = c.metadata.topics.get(tp.topic);
      if (t === undefined || t.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
        throw new ClientError(`topic "${tp.topic}" does not exist`, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      }
      const p = t.partitions.find((x) => x.partition === tp.partition);
      if (p === undefined) throw new ClientError(`topic "${tp.topic}" has no partition ${tp.partition}`, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      if (p.leader < 0) throw new RetriableError(`${tp.topic}-${tp.partition} has no leader`, ErrorCode.LEADER_NOT_AVAILABLE);
      byLeader.set(p.leader, [...(byLeader.get(p.leader) ?? []), tp]);
    }
    const failed: TopicPartition[] = [];
    let lastError: ClientError | null = null;
    await Promise.all([...byLeader].map(async ([leader, list]) => {
      try {
        const conn = await c.brokerConnection(leader);
        const { res } = await c.call(conn, ListOffsetsApi, 7, () => ({
          replicaId: -1,
          isolationLevel: 0,
          topics: groupByTopic(list).map(([name, parts]) => ({
            name,
            partitions: parts.map((partitionIndex) => ({ partitionIndex, currentLeaderEpoch: -1, timestamp })),
          })),
        }));
        for (const t of res.topics as Struct[]) {
          for (const p of t.partitions as Struct[]) {
            const code = p.errorCode as number;
            const tp = { topic: t.name as string, partition: p.partitionIndex as number };
            if (code === ErrorCode.NONE) out.set(tpKey(tp.topic, tp.partition), Number(p.offset as bigint));
            else {
              failed.push(tp);
              lastError = errorFor(code, `list offsets of ${tp.topic}-${tp.partition}`);
            }
          }
        }
      } catch (e) {
        if (!(e instanceof RetriableError)) throw e;
        failed.push(...list);
        lastError = e;
      }
    }));
    todo = failed;
    if (lastError !== null) throw lastError;
  }, topics);
  return out;
}

function groupByTopic(tps: TopicPartition[]): [string, number[]][] {
  const m = new Map<string, number[]>();
  for (const tp of tps) m.set(tp.topic, [...(m.get(tp.topic) ?? []), tp.partition]);
  return [...m];
}

// --- groups ------------------------------------------------------------------------------------

/** The connection to a group's coordinator (retried while the coordinator is loading or moving). */
export async function coordinatorConnection(c: ClusterClient, groupId: string): Promise<KafkaConnection> {
  return await c.retrying(async () => {
    const conn = await c.anyConnection();
    const { version, res } = await c.call(conn, FindCoordinatorApi, 3, () => ({ key: groupId, keyType: 0, coordinatorKeys: [groupId] }));
    const r = version >= 4 ? (res.coordinators as Struct[])[0] : res;
    const code = r.errorCode as number;
    throwFirst([{ code, context: `find the coordinator of group "${groupId}"`, message: r.errorMessage as string | null }]);
    return await c.connectTo({ host: r.host as string, port: r.port as number });
  });
}

export interface GroupListing {
  groupId: string;
  protocolType: string;
  /** "" when the broker does not say (ListGroups below v4). */
  state: string;
}

/** Every group of the cluster: ListGroups asked of each broker. */
export async function listGroups(c: ClusterClient): Promise<GroupListing[]> {
  const md = await c.retrying(() => c.refreshMetadata([]));
  const out = new Map<string, GroupListing>();
  await Promise.all([...md.brokers.keys()].map(async (id) => {
    await c.retrying(async () => {
      const conn = await c.brokerConnection(id);
      const { res } = await c.call(conn, ListGroupsApi, 4, () => ({ statesFilter: [], typesFilter: [] }));
      throwFirst([{ code: res.errorCode as number, context: `list groups on broker ${id}`, message: null }]);
      for (const g of res.groups as Struct[]) {
        out.set(g.groupId as string, {
          groupId: g.groupId as string,
          protocolType: g.protocolType as string,
          state: (g.groupState as string | undefined) ?? "",
        });
      }
    });
  }));
  return [...out.values()].sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
}

export interface GroupMemberDescription {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  /** Decoded when the group speaks the consumer protocol; empty otherwise. */
  assignment: TopicPartitions[];
}

export interface GroupDescription {
  groupId: string;
  /** "Empty", "Stable", "PreparingRebalance", "CompletingRebalance", "Dead". */
  state: string;
  protocolType: string;
  /** The chosen assignor ("range"), "" while none is. */
  protocol: string;
  members: GroupMemberDescription[];
}

export async function describeGroup(c: ClusterClient, groupId: string): Promise<GroupDescription> {
  return await c.retrying(async () => {
    const conn = await coordinatorConnection(c, groupId);
    const { res } = await c.call(conn, DescribeGroupsApi, 5, () => ({ groups: [groupId], includeAuthorizedOperations: false }));
    const g = (res.groups as Struct[])[0];
    throwFirst([{ code: g.errorCode as number, context: `describe group "${groupId}"`, message: null }]);
    const consumer = g.protocolType === "consumer";
    return {
      groupId,
      state: g.groupState as string,
      protocolType: g.protocolType as string,
      protocol: g.protocolData as string,
      members: (g.members as Struct[]).map((m) => {
        const a = consumer ? decodeConsumerAssignment(m.memberAssignment as Uint8Array) : null;
        return {
          memberId: m.memberId as string,
          groupInstanceId: (m.groupInstanceId as string | null | undefined) ?? null,
          clientId: m.clientId as string,
          clientHost: m.clientHost as string,
          assignment: a !== null && a.kind === "assignment" ? a.assignedPartitions : [],
        };
      }),
    };
  });
}

export interface CommittedOffset extends TopicPartition {
  offset: number;
  metadata: string | null;
}

/** The group's committed offsets for `topics` (null: every topic it has offsets for). */
export async function fetchCommittedOffsets(c: ClusterClient, groupId: string, topics: TopicPartition[] | null): Promise<CommittedOffset[]> {
  return await c.retrying(async () => {
    const conn = await coordinatorConnection(c, groupId);
    const { res } = await c.call(conn, OffsetFetchApi, 7, () => ({
      groupId,
      topics: topics === null ? null : groupByTopic(topics).map(([name, partitionIndexes]) => ({ name, partitionIndexes })),
      requireStable: false,
    }));
    throwFirst([{ code: (res.errorCode as number | undefined) ?? 0, context: `fetch the offsets of group "${groupId}"`, message: null }]);
    const out: CommittedOffset[] = [];
    for (const t of res.topics as Struct[]) {
      for (const p of t.partitions as Struct[]) {
        const code = p.errorCode as number;
        if (code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) continue;
        throwFirst([{ code, context: `fetch the offset of group "${groupId}" for ${t.name}-${p.partitionIndex}`, message: null }]);
        const offset = Number(p.committedOffset as bigint);
        if (offset < 0) continue; // nothing committed
        out.push({ topic: t.name as string, partition: p.partitionIndex as number, offset, metadata: p.metadata as string | null });
      }
    }
    return out.sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
  });
}

export interface OffsetToCommit extends TopicPartition {
  offset: number;
}

/**
 * Commits offsets for the group: as a member (generation and member id) or, for an empty group,
 * as an admin (generation -1, no member), which Kafka accepts only while no member is active.
 */
export async function commitOffsets(
  c: ClusterClient,
  groupId: string,
  offsets: OffsetToCommit[],
  member: { generationId: number; memberId: string; groupInstanceId?: string | null } = { generationId: -1, memberId: "" },
): Promise<void> {
  if (offsets.length === 0) return;
  await c.retrying(async () => {
    const conn = await coordinatorConnection(c, groupId);
    const byTopic = new Map<string, OffsetToCommit[]>();
    for (const o of offsets) byTopic.set(o.topic, [...(byTopic.get(o.topic) ?? []), o]);
    const { res } = await c.call(conn, OffsetCommitApi, 8, () => ({
      groupId,
      generationIdOrMemberEpoch: member.generationId,
      memberId: member.memberId,
      groupInstanceId: member.groupInstanceId ?? null,
      retentionTimeMs: -1n,
      topics: [...byTopic].map(([name, list]) => ({
        name,
        partitions: list.map((o) => ({
          partitionIndex: o.partition,
          committedOffset: BigInt(o.offset),
          committedLeaderEpoch: -1,
          commitTimestamp: -1n,
          committedMetadata: "",
        })),
      })),
    }));
    const errors: { code: number; context: string; message: null }[] = [];
    for (const t of res.topics as Struct[]) {
      for (const p of t.partitions as Struct[]) {
        errors.push({ code: p.errorCode as number, context: `commit offsets of group "${groupId}" for ${t.name}-${p.partitionIndex}`, message: null });
      }
    }
    throwFirst(errors);
  });
}

/** Deletes empty groups; a group with active members answers NON_EMPTY_GROUP. */
export async function deleteGroup(c: ClusterClient, groupId: string): Promise<void> {
  await c.retrying(async () => {
    const conn = await coordinatorConnection(c, groupId);
    const { res } = await c.call(conn, DeleteGroupsApi, 2, () => ({ groupsNames: [groupId] }));
    const r = (res.results as Struct[])[0];
    const code = r.errorCode as number;
    if (code === ErrorCode.GROUP_ID_NOT_FOUND) throw new ClientError(`group "${groupId}" does not exist`, code);
    if (code === ErrorCode.NON_EMPTY_GROUP) throw new ClientError(`group "${groupId}" is not empty: it has active members`, code);
    throwFirst([{ code, context: `delete group "${groupId}"`, message: null }]);
  });
}


// ---- client quotas (KIP-546), to any broker, as Kafka's AdminClient sends them

/** A quota entity's parts: "user" and/or "client-id", or "ip" alone, each a name or null for the default entity. */
export type ClientQuotaEntity = Partial<Record<"user" | "client-id" | "ip", string | null>>;

/** One part of a DescribeClientQuotas filter: an exact name, the default (null), or any (undefined match). */
export interface ClientQuotaFilterComponent {
  entityType: "user" | "client-id" | "ip";
  /** A name matches exactly; null matches the default entity; undefined matches any specified entity. */
  match?: string | null;
}

export interface ClientQuotaDescription {
  entity: ClientQuotaEntity;
  values: Record<string, number>;
}

/** The quotas of the entities the filter matches; strict leaves out entities with parts the filter does not name. */
export async function describeClientQuotas(c: ClusterClient, components: ClientQuotaFilterComponent[], strict: boolean): Promise<ClientQuotaDescription[]> {
  return await c.retrying(async () => {
    const conn = await c.anyConnection();
    const { res } = await c.call(conn, DescribeClientQuotasApi, 1, () => ({
      components: components.map((f) => ({
        entityType: f.entityType,
        matchType: f.match === undefined ? 2 : f.match === null ? 1 : 0,
        match: f.match ?? null,
      })),
      strict,
    }));
    if (res.errorCode !== ErrorCode.NONE) throw errorFor(res.errorCode as number, "cannot describe client quotas", res.errorMessage as string | null);
    return ((res.entries ?? []) as Struct[]).map((e) => ({
      entity: Object.fromEntries((e.entity as { entityType: string; entityName: string | null }[]).map((p) => [p.entityType, p.entityName])) as ClientQuotaEntity,
      values: Object.fromEntries((e.values as { key: string; value: number }[]).map((v) => [v.key, v.value])),
    }));
  });
}

/** Sets and removes quota keys of one entity (validateOnly: the broker checks and writes nothing). */
export async function alterClientQuotas(
  c: ClusterClient,
  entity: ClientQuotaEntity,
  set: Record<string, number>,
  remove: string[],
  validateOnly = false,
): Promise<void> {
  const ops = [
    ...Object.entries(set).map(([key, value]) => ({ key, value, remove: false })),
    ...remove.map((key) => ({ key, value: 0, remove: true })),
  ];
  await c.retrying(async () => {
    const conn = await c.anyConnection();
    const { res } = await c.call(conn, AlterClientQuotasApi, 1, () => ({
      entries: [{ entity: Object.entries(entity).map(([entityType, entityName]) => ({ entityType, entityName })), ops }],
      validateOnly,
    }));
    for (const e of res.entries as { errorCode: number; errorMessage: string | null }[]) {
      if (e.errorCode !== ErrorCode.NONE) throw errorFor(e.errorCode, "cannot change client quotas", e.errorMessage);
    }
  });
}
