// The controller's requests to brokers as wire structs, and back: LeaderAndIsr (4), StopReplica
// (5) and UpdateMetadata (6) built from what the controller hands its ControllerChannel
// (TopicInfo, BrokerInfo), and decoded on the receiving broker into the same values, so its
// handler makes the same call on its local channel. Pure: no I/O. The structs are the codec's
// (protocol/api/04, 05, 06), for any version the schemas declare.
//
// What the wire does not carry comes back as a fixed value: topic configs ({} and configsZxid -1:
// each broker's config watcher owns configs), broker epochs of the live brokers (-1), the topic id
// before LeaderAndIsr v5 / UpdateMetadata v7 (all zero), a rack before UpdateMetadata v2 (null),
// isNew before LeaderAndIsr v1 (false), adding/removing replicas before LeaderAndIsr v3 ([]).
//
// UpdateMetadata has no list of deleted topics: as Kafka does, a topic being deleted is sent as
// partition states whose leader is -2 (LeaderDuringDelete). We know only the deleted topics'
// names, so each is one partition state (partition 0, leader -2); the decoder turns any leader -2
// partition back into its topic's name in deletedTopics.

import { inRange, LeaderAndIsrApi, StopReplicaApi, type Struct, UpdateMetadataApi } from "../protocol/mod.ts";
import type { PartitionState } from "../replication/mod.ts";
import { assert } from "../util/mod.ts";
import type { BrokerInfo, TopicInfo } from "./channel.ts";

/** The versions the controller sends (what Kafka 3.x's ZooKeeper-mode controller sends with IBP 2.8+). */
export const LEADER_AND_ISR_VERSION = 6;
export const UPDATE_METADATA_VERSION = 7;
export const STOP_REPLICA_VERSION = 3;

/** A broker epoch the sender does not know (Kafka's AbstractControlRequest.UNKNOWN_BROKER_EPOCH). */
export const UNKNOWN_BROKER_EPOCH = -1n;
/** UpdateMetadata's leader of a partition whose topic is being deleted (Kafka's LeaderDuringDelete). */
export const LEADER_DURING_DELETE = -2;
/** StopReplica's leader epoch for a partition being deleted: skips the epoch check (EpochDuringDelete). */
export const EPOCH_DURING_DELETE = -2;
/** The listener a controller names in UpdateMetadata endpoints unless told otherwise. */
export const DEFAULT_LISTENER_NAME = "PLAINTEXT";
/** UpdateMetadata's security protocol ids (Kafka's SecurityProtocol). */
const securityProtocolIds: Record<string, number> = { PLAINTEXT: 0, SSL: 1, SASL_PLAINTEXT: 2, SASL_SSL: 3 };
const securityProtocolNames = ["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"];

/**
 * Kafka's rule (isBrokerEpochStale): whether a control request's broker epoch is older than the
 * receiving broker's registration. -1 (the sender does not know it) and a newer one pass: the
 * controller may see a re-registration before the broker has learnt its own new czxid. strand's
 * broker is stricter (broker/control_fence.ts: the registration exactly, confirmed in the
 * registry when newer); this stays for what Kafka would answer.
 */
export function isStaleBrokerEpoch(requestBrokerEpoch: bigint, currentBrokerEpoch: bigint): boolean {
  return requestBrokerEpoch !== UNKNOWN_BROKER_EPOCH && requestBrokerEpoch < currentBrokerEpoch;
}

// ---- wire shapes (as the codec decodes them) ------------------------------------------------------

interface LeaderAndIsrPartitionWire {
  topicName: string; // v0-1 only (ungroupedPartitionStates)
  partitionIndex: number;
  controllerEpoch: number;
  leader: number;
  leaderEpoch: number;
  isr: number[];
  partitionEpoch: number;
  replicas: number[];
  addingReplicas?: number[]; // absent from v0-1's ungroupedPartitionStates
  removingReplicas?: number[];
  isNew: boolean;
}

interface UpdateMetadataPartitionWire {
  topicName: string; // v0-4 only
  partitionIndex: number;
  controllerEpoch: number;
  leader: number;
  leaderEpoch: number;
  isr: number[];
  zkVersion: number;
  replicas: number[];
}

interface UpdateMetadataBrokerWire {
  id: number;
  v0Host: string;
  v0Port: number;
  endpoints: { port: number; host: string; listener: string; securityProtocol: number }[];
  rack: string | null;
}

interface PartitionErrorWire {
  topicName: string;
  partitionIndex: number;
  errorCode: number;
}

// ---- helpers --------------------------------------------------------------------------------------

function checkVersion(name: string, versions: { min: number; max: number }, version: number): void {
  assert(inRange(versions, version), `${name} v${version} is one the schema declares`);
}

function newTopic(name: string, topicId: Uint8Array): TopicInfo {
  return { name, topicId, partitions: [], configs: {}, configsZxid: -1n };
}

/** Items grouped by topic name, topics in order of first appearance. */
function groupByTopic<T extends { topic: string }>(items: T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const it of items) {
    const list = out.get(it.topic);
    if (list === undefined) out.set(it.topic, [it]);
    else list.push(it);
  }
  return out;
}

/** The TopicInfo for `name` in `byName`, created (and appended to `topics`) on first use. */
function topicFor(topics: TopicInfo[], byName: Map<string, TopicInfo>, name: string, topicId: Uint8Array): TopicInfo {
  let t = byName.get(name);
  if (t === undefined) {
    t = newTopic(name, topicId);
    byName.set(name, t);
    topics.push(t);
  }
  return t;
}

function liveBroker(id: number, host: string, port: number, rack: string | null): BrokerInfo {
  return { id, host, port, rack, epoch: UNKNOWN_BROKER_EPOCH };
}

// ---- LeaderAndIsr (4) -----------------------------------------------------------------------------

export interface LeaderAndIsrRequestData {
  controllerId: number;
  controllerEpoch: number;
  brokerEpoch: bigint;
  topics: TopicInfo[];
  liveLeaders: BrokerInfo[];
}

function leaderAndIsrPartition(p: PartitionState): Struct {
  return {
    partitionIndex: p.partition,
    controllerEpoch: p.controllerEpoch,
    leader: p.leader,
    leaderEpoch: p.leaderEpoch,
    isr: p.isr,
    partitionEpoch: p.partitionEpoch,
    replicas: p.replicas,
    addingReplicas: p.addingReplicas ?? [],
    removingReplicas: p.removingReplicas ?? [],
    isNew: p.isNew ?? false,
    leaderRecoveryState: 0,
  };
}

/** LeaderAndIsr's body: v0-1 list partitions with their topic's name, v2+ group them by topic. */
export function leaderAndIsrRequest(
  controllerId: number,
  controllerEpoch: number,
  brokerEpoch: bigint,
  topics: TopicInfo[],
  liveBrokers: BrokerInfo[],
  version = LEADER_AND_ISR_VERSION,
): Struct {
  checkVersion("LeaderAndIsr", LeaderAndIsrApi.request.versions, version);
  return {
    controllerId,
    isKRaftController: false,
    controllerEpoch,
    brokerEpoch,
    type: 0, // unknown: the ZooKeeper-mode controller does not say whether the request is full
    ungroupedPartitionStates: version <= 1
      ? topics.flatMap((t) => t.partitions.map((p) => ({ topicName: t.name, ...leaderAndIsrPartition(p) })))
      : [],
    topicStates: version >= 2
      ? topics.map((t) => ({ topicName: t.name, topicId: t.topicId, partitionStates: t.partitions.map(leaderAndIsrPartition) }))
      : [],
    liveLeaders: liveBrokers.map((b) => ({ brokerId: b.id, hostName: b.host, port: b.port })),
  };
}

function partitionFromLeaderAndIsr(t: TopicInfo, p: LeaderAndIsrPartitionWire): PartitionState {
  return {
    topic: t.name,
    partition: p.partitionIndex,
    topicId: t.topicId,
    controllerEpoch: p.controllerEpoch,
    leader: p.leader,
    leaderEpoch: p.leaderEpoch,
    isr: p.isr,
    replicas: p.replicas,
    partitionEpoch: p.partitionEpoch,
    addingReplicas: p.addingReplicas ?? [],
    removingReplicas: p.removingReplicas ?? [],
    isNew: p.isNew,
  };
}

/** A decoded LeaderAndIsr body (any version) as the channel call it stands for. */
export function decodeLeaderAndIsrRequest(version: number, body: Struct): LeaderAndIsrRequestData {
  checkVersion("LeaderAndIsr", LeaderAndIsrApi.request.versions, version);
  const topics: TopicInfo[] = [];
  if (version <= 1) {
    const byName = new Map<string, TopicInfo>();
    for (const p of body.ungroupedPartitionStates as LeaderAndIsrPartitionWire[]) {
      const t = topicFor(topics, byName, p.topicName, new Uint8Array(16));
      t.partitions.push(partitionFromLeaderAndIsr(t, p));
    }
  } else {
    const states = body.topicStates as { topicName: string; topicId: Uint8Array; partitionStates: LeaderAndIsrPartitionWire[] }[];
    for (const s of states) {
      // A copy: the decoded uuid is a view of the request frame.
      const t = newTopic(s.topicName, version >= 5 ? s.topicId.slice() : new Uint8Array(16));
      t.partitions = s.partitionStates.map((p) => partitionFromLeaderAndIsr(t, p));
      topics.push(t);
    }
  }
  const leaders = body.liveLeaders as { brokerId: number; hostName: string; port: number }[];
  return {
    controllerId: body.controllerId as number,
    controllerEpoch: body.controllerEpoch as number,
    brokerEpoch: body.brokerEpoch as bigint,
    topics,
    liveLeaders: leaders.map((l) => liveBroker(l.brokerId, l.hostName, l.port, null)),
  };
}

export interface PartitionError {
  topic: string;
  partition: number;
  errorCode: number;
}

/**
 * LeaderAndIsr's answer: v0-4 list partitions by topic name, v5+ group them by topic id (so each
 * error needs its topic's id; errors are grouped by topic name, so topics without an id stay apart).
 */
export function leaderAndIsrResponse(
  version: number,
  errorCode: number,
  partitions: (PartitionError & { topicId: Uint8Array })[],
): Struct {
  checkVersion("LeaderAndIsr", LeaderAndIsrApi.response.versions, version);
  if (version <= 4) {
    return {
      errorCode,
      partitionErrors: partitions.map((p) => ({ topicName: p.topic, partitionIndex: p.partition, errorCode: p.errorCode })),
    };
  }
  return {
    errorCode,
    topics: [...groupByTopic(partitions).values()].map((ps) => ({
      topicId: ps[0].topicId,
      partitionErrors: ps.map((p) => ({ partitionIndex: p.partition, errorCode: p.errorCode })),
    })),
  };
}

/**
 * A LeaderAndIsr answer read back. v5+ names topics by id: `topics` (the request's) gives the
 * names, matched by position first (two topics without an id share the zero id), then by id;
 * an id the request did not carry comes back with the name "".
 */
export function decodeLeaderAndIsrResponse(
  version: number,
  body: Struct,
  topics: TopicInfo[],
): { errorCode: number; partitions: PartitionError[] } {
  checkVersion("LeaderAndIsr", LeaderAndIsrApi.response.versions, version);
  const errorCode = body.errorCode as number;
  if (version <= 4) {
    const list = body.partitionErrors as PartitionErrorWire[];
    return { errorCode, partitions: list.map((p) => ({ topic: p.topicName, partition: p.partitionIndex, errorCode: p.errorCode })) };
  }
  const hex = (u: Uint8Array) => Array.from(u, (b) => b.toString(16).padStart(2, "0")).join("");
  const byId = new Map<string, string>();
  for (const t of topics) if (!byId.has(hex(t.topicId))) byId.set(hex(t.topicId), t.name);
  const wire = body.topics as { topicId: Uint8Array; partitionErrors: { partitionIndex: number; errorCode: number }[] }[];
  const partitions = wire.flatMap((w, i) => {
    const id = hex(w.topicId);
    const name = topics[i] !== undefined && hex(topics[i].topicId) === id ? topics[i].name : byId.get(id) ?? "";
    return w.partitionErrors.map((p) => ({ topic: name, partition: p.partitionIndex, errorCode: p.errorCode }));
  });
  return { errorCode, partitions };
}

// ---- UpdateMetadata (6) ---------------------------------------------------------------------------

export interface UpdateMetadataRequestData {
  controllerId: number;
  controllerEpoch: number;
  brokerEpoch: bigint;
  brokers: BrokerInfo[];
  topics: TopicInfo[];
  deletedTopics: string[];
}

function updateMetadataPartition(p: PartitionState): Struct {
  return {
    partitionIndex: p.partition,
    controllerEpoch: p.controllerEpoch,
    leader: p.leader,
    leaderEpoch: p.leaderEpoch,
    isr: p.isr,
    zkVersion: p.partitionEpoch,
    replicas: p.replicas,
    offlineReplicas: [], // strand's controller does not track offline log dirs of other brokers
  };
}

/** The one partition state that stands for a deleted topic (see the file's comment). */
function deletedTopicPartition(controllerEpoch: number): Struct {
  return {
    partitionIndex: 0,
    controllerEpoch,
    leader: LEADER_DURING_DELETE,
    leaderEpoch: 0,
    isr: [],
    zkVersion: 0,
    replicas: [],
    offlineReplicas: [],
  };
}

function updateMetadataBroker(b: BrokerInfo, version: number, listenerName: string): Struct {
  const endpoints = b.endpoints ?? [{ listener: listenerName, host: b.host, port: b.port, securityProtocol: "PLAINTEXT" }];
  return {
    id: b.id,
    v0Host: b.host,
    v0Port: b.port,
    endpoints: version >= 1
      ? endpoints.map((e) => ({ port: e.port, host: e.host, listener: e.listener, securityProtocol: securityProtocolIds[e.securityProtocol] ?? 0 }))
      : [],
    rack: b.rack,
  };
}

/**
 * UpdateMetadata's body: v0-4 list partitions with their topic's name, v5+ group them by topic.
 * Deleted topics go first, as the receiving broker applies deletions before updates. Each broker
 * is one endpoint on `listenerName` (v1+; the name itself from v3).
 */
export function updateMetadataRequest(
  controllerId: number,
  controllerEpoch: number,
  brokerEpoch: bigint,
  brokers: BrokerInfo[],
  topics: TopicInfo[],
  deletedTopics: string[],
  version = UPDATE_METADATA_VERSION,
  listenerName = DEFAULT_LISTENER_NAME,
): Struct {
  checkVersion("UpdateMetadata", UpdateMetadataApi.request.versions, version);
  const deleted = deletedTopics.map((name) => ({ name, topicId: new Uint8Array(16), states: [deletedTopicPartition(controllerEpoch)] }));
  const live = topics.map((t) => ({ name: t.name, topicId: t.topicId, states: t.partitions.map(updateMetadataPartition) }));
  const all = [...deleted, ...live];
  return {
    controllerId,
    isKRaftController: false,
    type: 0,
    controllerEpoch,
    brokerEpoch,
    ungroupedPartitionStates: version <= 4 ? all.flatMap((t) => t.states.map((s) => ({ topicName: t.name, ...s }))) : [],
    topicStates: version >= 5 ? all.map((t) => ({ topicName: t.name, topicId: t.topicId, partitionStates: t.states })) : [],
    liveBrokers: brokers.map((b) => updateMetadataBroker(b, version, listenerName)),
  };
}

function partitionFromUpdateMetadata(t: TopicInfo, p: UpdateMetadataPartitionWire): PartitionState {
  return {
    topic: t.name,
    partition: p.partitionIndex,
    topicId: t.topicId,
    controllerEpoch: p.controllerEpoch,
    leader: p.leader,
    leaderEpoch: p.leaderEpoch,
    isr: p.isr,
    replicas: p.replicas,
    partitionEpoch: p.zkVersion,
  };
}

/**
 * A broker as this broker should reach it: the endpoint on `listenerName` (v3+ name endpoints;
 * v1-2 carry only the security protocol, and strand speaks PLAINTEXT only), else the first one.
 * Null for a broker without endpoints.
 */
function brokerFromUpdateMetadata(b: UpdateMetadataBrokerWire, version: number, listenerName: string): BrokerInfo | null {
  if (version === 0) return liveBroker(b.id, b.v0Host, b.v0Port, null);
  // v1-2 endpoints carry no name: Kafka names such a listener after its security protocol.
  const endpoints = b.endpoints.map((x) => {
    const securityProtocol = securityProtocolNames[x.securityProtocol] ?? "PLAINTEXT";
    return { listener: version >= 3 ? x.listener : securityProtocol, host: x.host, port: x.port, securityProtocol };
  });
  const e = endpoints.find((x) => x.listener === listenerName) ?? endpoints[0];
  if (e === undefined) return null;
  return { ...liveBroker(b.id, e.host, e.port, version >= 2 ? b.rack : null), endpoints };
}

/**
 * A decoded UpdateMetadata body (any version) as the channel call it stands for. Partitions led by
 * -2 name deleted topics; the topic's other partitions (none, as the controller sends them) stay
 * in `topics`. Brokers without an endpoint are left out.
 */
export function decodeUpdateMetadataRequest(
  version: number,
  body: Struct,
  listenerName = DEFAULT_LISTENER_NAME,
): UpdateMetadataRequestData {
  checkVersion("UpdateMetadata", UpdateMetadataApi.request.versions, version);
  const topics: TopicInfo[] = [];
  const deleted = new Set<string>();
  const byName = new Map<string, TopicInfo>();
  const add = (name: string, topicId: Uint8Array, p: UpdateMetadataPartitionWire) => {
    if (p.leader === LEADER_DURING_DELETE) {
      deleted.add(name);
      return;
    }
    const t = topicFor(topics, byName, name, topicId);
    t.partitions.push(partitionFromUpdateMetadata(t, p));
  };
  if (version <= 4) {
    for (const p of body.ungroupedPartitionStates as UpdateMetadataPartitionWire[]) add(p.topicName, new Uint8Array(16), p);
  } else {
    const states = body.topicStates as { topicName: string; topicId: Uint8Array; partitionStates: UpdateMetadataPartitionWire[] }[];
    for (const s of states) {
      const id = version >= 7 ? s.topicId.slice() : new Uint8Array(16);
      // Each topic state is its own topic (a topic deleted and created again may appear twice).
      byName.delete(s.topicName);
      for (const p of s.partitionStates) add(s.topicName, id, p);
    }
  }
  const brokers = (body.liveBrokers as UpdateMetadataBrokerWire[])
    .map((b) => brokerFromUpdateMetadata(b, version, listenerName))
    .filter((b): b is BrokerInfo => b !== null);
  return {
    controllerId: body.controllerId as number,
    controllerEpoch: body.controllerEpoch as number,
    brokerEpoch: body.brokerEpoch as bigint,
    brokers,
    topics,
    deletedTopics: [...deleted],
  };
}

// ---- StopReplica (5) ------------------------------------------------------------------------------

export interface StopReplicaPartition {
  topic: string;
  partition: number;
  /** Delete the replica's log too (topic deletion, a replica reassigned away). */
  deletePartition: boolean;
  /** The leader epoch the controller knows (-1 unknown, -2 while the topic is deleted); v3+. */
  leaderEpoch: number;
}

export interface StopReplicaRequestData {
  controllerId: number;
  controllerEpoch: number;
  brokerEpoch: bigint;
  partitions: StopReplicaPartition[];
}

/**
 * StopReplica's body: v0 lists partitions, v1-2 group them by topic, v3+ give each its own
 * deletePartition and leader epoch. v0-2 have one deletePartitions for the whole request, so the
 * partitions must agree on it.
 */
export function stopReplicaRequest(
  controllerId: number,
  controllerEpoch: number,
  brokerEpoch: bigint,
  partitions: StopReplicaPartition[],
  version = STOP_REPLICA_VERSION,
): Struct {
  checkVersion("StopReplica", StopReplicaApi.request.versions, version);
  const deletePartitions = partitions[0]?.deletePartition ?? false;
  assert(
    version >= 3 || partitions.every((p) => p.deletePartition === deletePartitions),
    `StopReplica v${version} has one deletePartitions for all partitions`,
  );
  const byTopic = [...groupByTopic(partitions)];
  return {
    controllerId,
    isKRaftController: false,
    controllerEpoch,
    brokerEpoch,
    deletePartitions,
    ungroupedPartitions: version === 0 ? partitions.map((p) => ({ topicName: p.topic, partitionIndex: p.partition })) : [],
    topics: version >= 1 && version <= 2
      ? byTopic.map(([name, ps]) => ({ name, partitionIndexes: ps.map((p) => p.partition) }))
      : [],
    topicStates: version >= 3
      ? byTopic.map(([name, ps]) => ({
        topicName: name,
        partitionStates: ps.map((p) => ({ partitionIndex: p.partition, leaderEpoch: p.leaderEpoch, deletePartition: p.deletePartition })),
      }))
      : [],
  };
}

/** A decoded StopReplica body (any version); before v3 every partition's leader epoch is -1. */
export function decodeStopReplicaRequest(version: number, body: Struct): StopReplicaRequestData {
  checkVersion("StopReplica", StopReplicaApi.request.versions, version);
  const del = body.deletePartitions as boolean;
  let partitions: StopReplicaPartition[];
  if (version === 0) {
    const list = body.ungroupedPartitions as { topicName: string; partitionIndex: number }[];
    partitions = list.map((p) => ({ topic: p.topicName, partition: p.partitionIndex, deletePartition: del, leaderEpoch: -1 }));
  } else if (version <= 2) {
    const list = body.topics as { name: string; partitionIndexes: number[] }[];
    partitions = list.flatMap((t) =>
      t.partitionIndexes.map((partition) => ({ topic: t.name, partition, deletePartition: del, leaderEpoch: -1 }))
    );
  } else {
    const list = body.topicStates as {
      topicName: string;
      partitionStates: { partitionIndex: number; leaderEpoch: number; deletePartition: boolean }[];
    }[];
    partitions = list.flatMap((t) =>
      t.partitionStates.map((p) => ({
        topic: t.topicName,
        partition: p.partitionIndex,
        deletePartition: p.deletePartition,
        leaderEpoch: p.leaderEpoch,
      }))
    );
  }
  return {
    controllerId: body.controllerId as number,
    controllerEpoch: body.controllerEpoch as number,
    brokerEpoch: body.brokerEpoch as bigint,
    partitions,
  };
}

/** StopReplica's answer (the same in every version). */
export function stopReplicaResponse(errorCode: number, partitions: PartitionError[]): Struct {
  return {
    errorCode,
    partitionErrors: partitions.map((p) => ({ topicName: p.topic, partitionIndex: p.partition, errorCode: p.errorCode })),
  };
}

export function decodeStopReplicaResponse(body: Struct): { errorCode: number; partitions: PartitionError[] } {
  const list = body.partitionErrors as PartitionErrorWire[];
  return {
    errorCode: body.errorCode as number,
    partitions: list.map((p) => ({ topic: p.topicName, partition: p.partitionIndex, errorCode: p.errorCode })),
  };
}
