// What the admin API shows, built from the broker's services: pure functions from state to plain
// JSON objects (snake_case keys, as Redpanda's admin API and Kafka's tools print them). Nothing
// here changes state or knows HTTP.
//
// Offsets are int64 in Kafka; here they are numbers (every offset strand keeps is a safe integer,
// see ARCHITECTURE "64-bit integers"), and a committed offset past 2^53 (a client's nonsense) is
// shown as a string rather than rounded.

import type { BrokerServices, TopicMetadata } from "../broker/mod.ts";
import { internalTopics } from "../controller/mod.ts";
import { decodeConsumerAssignment, decodeConsumerSubscription, type TopicPartitions } from "../protocol/mod.ts";
import type { PartitionState } from "../replication/mod.ts";
import { uuidToBase64 } from "../util/mod.ts";

export interface BrokerView {
  id: number;
  host: string;
  port: number;
  rack: string | null;
  is_controller: boolean;
  is_local: boolean;
}

export function brokersView(s: BrokerServices): BrokerView[] {
  return s.metadata.aliveBrokers().map((b) => ({
    id: b.id,
    host: b.host,
    port: b.port,
    rack: b.rack,
    is_controller: b.id === s.metadata.controllerId,
    is_local: b.id === s.brokerId,
  }));
}

export function clusterView(s: BrokerServices) {
  const controllerId = s.metadata.controllerId;
  return {
    cluster_id: s.metadata.clusterId,
    controller_id: controllerId >= 0 ? controllerId : null,
    local_broker_id: s.brokerId,
    brokers: brokersView(s),
  };
}

/**
 * This broker's log dirs: online or why offline, the volume's space as the last free-space check
 * saw it, and why appends are refused there (short of space), if they are.
 */
export function logDirsView(s: BrokerServices) {
  const space = new Map(s.logManager.spaceStates().map((x) => [x.dir, x.state]));
  return s.logManager.describeDirs().map((d) => {
    const state = space.get(d.dir);
    return {
      dir: d.dir,
      online: d.offlineReason === null,
      offline_reason: d.offlineReason,
      partitions: d.logs.length,
      usable_bytes: d.space?.usableBytes ?? null,
      total_bytes: d.space?.totalBytes ?? null,
      min_free_bytes: s.config.logDirMinFreeBytes,
      appends_refused: d.appendRefusal,
      full: state?.full ?? false,
    };
  });
}

/**
 * Partitions this broker should lead (the metadata names it leader, or names none while this
 * broker holds a replica) but cannot serve: its log dir failed, its log could not be opened (out of
 * file descriptors), or it does not hold the partition as leader. /v1/status/ready is false while
 * any is.
 */
export function unservedPartitions(s: BrokerServices): { topic: string; partition: number; reason: string }[] {
  const out: { topic: string; partition: number; reason: string }[] = [];
  for (const name of s.metadata.topicNames()) {
    for (const p of s.metadata.getTopic(name)?.partitions ?? []) {
      const mine = p.leader === s.brokerId || (p.leader < 0 && p.replicas.includes(s.brokerId));
      if (!mine) continue;
      const reason = s.replicaManager.unavailableReason(p.topic, p.partition);
      if (reason !== null) out.push({ topic: p.topic, partition: p.partition, reason });
      else if (p.leader === s.brokerId && s.replicaManager.getPartition(p.topic, p.partition)?.isLeader !== true) {
        out.push({ topic: p.topic, partition: p.partition, reason: `${p.topic}-${p.partition} is not led here yet` });
      }
    }
  }
  return out;
}

const isOfflineLeader = (s: BrokerServices, p: PartitionState) => p.leader < 0 || s.metadata.getBroker(p.leader) === undefined;

export function topicSummaryView(s: BrokerServices, t: TopicMetadata) {
  return {
    name: t.name,
    topic_id: uuidToBase64(t.topicId),
    // As Metadata answers it: the cache's flag is not set for topics the controller creates.
    internal: t.isInternal || internalTopics.has(t.name),
    partitions: t.partitions.length,
    replication_factor: t.partitions[0]?.replicas.length ?? 0,
    under_replicated_partitions: t.partitions.filter((p) => p.isr.length < p.replicas.length).length,
    offline_partitions: t.partitions.filter((p) => isOfflineLeader(s, p)).length,
  };
}

export function topicsView(s: BrokerServices) {
  return s.metadata.topicNames().flatMap((name) => {
    const t = s.metadata.getTopic(name);
    return t === undefined ? [] : [topicSummaryView(s, t)];
  });
}

/** One partition: the controller's state, and this broker's replica of it when it holds one. */
export function partitionView(s: BrokerServices, p: PartitionState) {
  const local = s.replicaManager.getPartition(p.topic, p.partition);
  const localOffline = s.replicaManager.isOffline(p.topic, p.partition);
  const log = local !== undefined && !localOffline ? local.log : null;
  return {
    partition: p.partition,
    leader: p.leader >= 0 ? p.leader : null,
    leader_epoch: p.leaderEpoch,
    replicas: p.replicas,
    isr: p.isr,
    under_replicated: p.isr.length < p.replicas.length,
    offline: isOfflineLeader(s, p),
    local_replica: local !== undefined || localOffline ? (localOffline ? "offline" : "online") : null,
    log_start_offset: log?.logStartOffset ?? null,
    log_end_offset: log?.logEndOffset ?? null,
    high_watermark: log?.highWatermark ?? null,
    size_bytes: log?.sizeBytes ?? null,
  };
}

export function topicView(s: BrokerServices, t: TopicMetadata) {
  return {
    ...topicSummaryView(s, t),
    configs: t.configs,
    partition_details: [...t.partitions].sort((a, b) => a.partition - b.partition).map((p) => partitionView(s, p)),
  };
}

export interface OffsetWithLag {
  topic: string;
  partition: number;
  committed_offset: number | string;
  metadata: string;
  /** The partition's high watermark when this broker leads it, else null. */
  high_watermark: number | null;
  lag: number | null;
}

/** A bigint offset as JSON shows it: a number when safe, else its decimal string. */
function offsetJson(o: bigint): number | string {
  return o >= BigInt(Number.MIN_SAFE_INTEGER) && o <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(o) : o.toString();
}

/**
 * A group's committed offsets with lag (high watermark - committed, never below 0) where this
 * broker leads the partition; sorted by topic and partition. Empty when this broker is not the
 * group's coordinator.
 */
export function groupOffsetsWithLag(s: BrokerServices, groupId: string): OffsetWithLag[] {
  const fetched = s.coordinator.offsets.fetch(groupId, null);
  return fetched.partitions
    .filter((o) => o.offset >= 0n)
    .sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1))
    .map((o) => {
      const p = s.replicaManager.getPartition(o.topic, o.partition);
      const hw = p !== undefined && p.isLeader && !s.replicaManager.isOffline(o.topic, o.partition) ? p.highWatermark : null;
      const committed = offsetJson(o.offset);
      const lag = hw === null || typeof committed !== "number" ? null : Math.max(0, hw - committed);
      return { topic: o.topic, partition: o.partition, committed_offset: committed, metadata: o.metadata, high_watermark: hw, lag };
    });
}

function assignmentJson(tps: TopicPartitions[]) {
  return tps.map((tp) => ({ topic: tp.topic, partitions: [...tp.partitions].sort((a, b) => a - b) }));
}

/** Member subscription and assignment, decoded when the group speaks Kafka's consumer protocol. */
function memberView(protocolType: string, m: { memberId: string; groupInstanceId: string | null; clientId: string; clientHost: string; metadata: Uint8Array; assignment: Uint8Array }) {
  const consumer = protocolType === "consumer";
  const sub = consumer && m.metadata.length > 0 ? decodeConsumerSubscription(m.metadata) : null;
  const asg = consumer && m.assignment.length > 0 ? decodeConsumerAssignment(m.assignment) : null;
  return {
    member_id: m.memberId,
    group_instance_id: m.groupInstanceId,
    client_id: m.clientId,
    client_host: m.clientHost,
    subscription: sub === null ? null : sub.kind === "invalid" ? { error: sub.error } : { topics: sub.topics },
    assignment: asg === null ? null : asg.kind === "invalid" ? { error: asg.error } : assignmentJson(asg.assignedPartitions),
  };
}

export type GroupLookup =
  | { found: true; view: ReturnType<typeof groupDetail> }
  | { found: false; errorCode: number };

function groupDetail(s: BrokerServices, groupId: string, g: ReturnType<BrokerServices["coordinator"]["describeGroup"]>["group"]) {
  const offsets = groupOffsetsWithLag(s, groupId);
  const lags = offsets.map((o) => o.lag).filter((l): l is number => l !== null);
  return {
    group_id: groupId,
    state: g.state,
    protocol_type: g.protocolType,
    protocol: g.protocolName,
    coordinator_id: s.brokerId,
    members: g.members.map((m) => memberView(g.protocolType, m)),
    offsets,
    total_lag: lags.reduce((a, b) => a + b, 0),
  };
}

/** The group as its coordinator (this broker) knows it; not found when Dead with no offsets. */
export function lookupGroup(s: BrokerServices, groupId: string): GroupLookup {
  const { errorCode, group } = s.coordinator.describeGroup(groupId);
  if (errorCode !== 0) return { found: false, errorCode };
  const view = groupDetail(s, groupId, group);
  if (group.state === "Dead" && view.offsets.length === 0) return { found: false, errorCode: 0 };
  return { found: true, view };
}

export function groupsView(s: BrokerServices) {
  return s.coordinator.listGroups([]).map((g) => ({ group_id: g.groupId, state: g.state, protocol_type: g.protocolType }));
}

/**
 * This broker's per-topic totals since it started (records and batch bytes appended as leader,
 * record bytes fetched by consumers), with the clocks to turn two readings into rates: the
 * dashboard's chart divides the counters' increase by monotonic_ms's (a wall clock may jump).
 */
export function statsView(s: BrokerServices) {
  const topics = [...s.replicaManager.topicStats.entries()]
    .map(([topic, c]) => ({ topic, messages_in: c.messagesIn, bytes_in: c.bytesIn, bytes_out: c.bytesOut }))
    .sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
  return { broker_id: s.brokerId, time_ms: s.clock.nowMs(), monotonic_ms: s.clock.monotonicMs(), topics };
}

/**
 * Transactions as this broker sees them: those its transaction coordinator holds (every state but
 * Dead), and the open transactions on partitions it leads. An open transaction older than
 * transaction.max.timeout.ms is hanging: its coordinator would have aborted it by then (Kafka's
 * kafka-transactions.sh find-hanging looks for the same); it holds the last stable offset, so
 * read_committed consumers of the partition stop there until it is aborted.
 */
export function transactionsView(s: BrokerServices) {
  const now = s.clock.nowMs();
  const coordinator = (s.txnCoordinator?.list().txns ?? []).map((t) => ({
    transactional_id: t.transactionalId,
    producer_id: String(t.producerId),
    producer_epoch: t.producerEpoch,
    state: t.state,
    timeout_ms: t.txnTimeoutMs,
    start_time_ms: t.txnStartTimestampMs,
    partitions: t.partitions.map((p) => `${p.topic}-${p.partition}`),
  }));
  const maxTimeoutMs = s.config.transactions.transactionMaxTimeoutMs;
  const open = [];
  for (const p of s.replicaManager.allPartitions()) {
    if (!p.isLeader || s.replicaManager.isOffline(p.topic, p.partition)) continue;
    for (const e of p.log.producerState.activeProducers().values()) {
      if (e.currentTxnFirstOffset < 0) continue;
      const ageMs = Math.max(0, now - e.lastTimestampMs);
      open.push({
        topic: p.topic,
        partition: p.partition,
        producer_id: String(e.producerId),
        producer_epoch: e.producerEpoch,
        first_offset: e.currentTxnFirstOffset,
        last_write_ms: e.lastTimestampMs,
        age_ms: ageMs,
        hanging: ageMs > maxTimeoutMs,
      });
    }
  }
  return { broker_id: s.brokerId, transaction_max_timeout_ms: maxTimeoutMs, coordinator, open_on_partitions: open, hanging: open.filter((o) => o.hanging).length };
}
