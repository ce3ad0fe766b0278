// GroupMember: one consumer's membership of a classic consumer group, as Kafka's
// ConsumerCoordinator runs it: FindCoordinator, JoinGroup (protocol type "consumer", the "range"
// assignor, a ConsumerProtocolSubscription of the topics), the leader computes the assignment,
// SyncGroup hands it out, Heartbeats keep the membership alive and say when to rejoin, and
// LeaveGroup ends it. Offsets are committed under the member's generation.
//
// Invariants:
// - join() resolves only with the assignment of a completed generation; its partitions are
//   exactly the member's share (rangeAssign is pure and deterministic).
// - After a heartbeat answers REBALANCE_IN_PROGRESS, UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION,
//   `rebalanceNeeded` is true until the next join(); the owner commits what it consumed, then
//   joins again. Heartbeats stop while joining and after leave().
// - Retries are bounded (the ClusterClient's): a coordinator that never answers ends join() with
//   an error rather than waiting forever.
import type { Timer } from "../platform/mod.ts";
import {
  decodeConsumerAssignment,
  decodeConsumerSubscription,
  encodeConsumerAssignment,
  encodeConsumerSubscription,
  HeartbeatApi,
  JoinGroupApi,
  LeaveGroupApi,
  type Struct,
  SyncGroupApi,
  type TopicPartitions,
} from "../protocol/mod.ts";
import { ErrorCode, errorName } from "../util/mod.ts";
import { commitOffsets, coordinatorConnection, type OffsetToCommit } from "./admin.ts";
import { ClientError, type ClusterClient, errorFor, RetriableError } from "./cluster_client.ts";
import type { KafkaConnection } from "./connection.ts";

export interface GroupMemberOptions {
  groupId: string;
  topics: string[];
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  heartbeatIntervalMs: number;
}

export const groupMemberDefaults = {
  sessionTimeoutMs: 45_000,
  rebalanceTimeoutMs: 60_000,
  heartbeatIntervalMs: 3_000,
};

/** The assignor this member offers (Kafka's RangeAssignor). */
export const rangeAssignorName = "range";

/**
 * Kafka's RangeAssignor: for each topic, its partitions in order are split into contiguous ranges
 * over the members subscribed to it, sorted by member id; the first (partitions % members)
 * members get one more.
 */
export function rangeAssign(
  subscriptions: Map<string, string[]>,
  partitionCounts: Map<string, number>,
): Map<string, TopicPartitions[]> {
  const out = new Map<string, TopicPartitions[]>();
  for (const m of subscriptions.keys()) out.set(m, []);
  const topics = [...new Set([...subscriptions.values()].flat())].sort();
  for (const topic of topics) {
    const count = partitionCounts.get(topic);
    if (count === undefined || count <= 0) continue;
    const members = [...subscriptions].filter(([, ts]) => ts.includes(topic)).map(([m]) => m).sort();
    const per = Math.floor(count / members.length);
    const extra = count % members.length;
    members.forEach((m, i) => {
      const start = per * i + Math.min(i, extra);
      const length = per + (i < extra ? 1 : 0);
      if (length === 0) return;
      const partitions = Array.from({ length }, (_, k) => start + k);
      (out.get(m) as TopicPartitions[]).push({ topic, partitions });
    });
  }
  return out;
}

export class GroupMember {
  readonly opts: GroupMemberOptions;
  memberId = "";
  generationId = -1;
  assignment: TopicPartitions[] = [];
  /** Set when the coordinator wants this member to join again. */
  rebalanceNeeded = false;
  private heartbeat: Timer | null = null;
  private lastHeartbeatOkMs = 0;
  private left = false;

  constructor(private readonly cluster: ClusterClient, opts: Pick<GroupMemberOptions, "groupId" | "topics"> & Partial<GroupMemberOptions>) {
    this.opts = { ...groupMemberDefaults, ...opts };
  }

  /** Joins (or rejoins) the group; resolves with this member's partitions. */
  async join(): Promise<TopicPartitions[]> {
    this.stopHeartbeats();
    this.rebalanceNeeded = false;
    const c = this.cluster;
    let rounds = 0;
    for (;;) {
      rounds++;
      try {
        const conn = await coordinatorConnection(c, this.opts.groupId);
        const joined = await this.joinGroup(conn);
        const assignments = joined.leader === this.memberId ? await this.assign(joined.members) : [];
        const assignment = await this.syncGroup(conn, assignments);
        if (assignment === null) continue; // the group moved on: join again
        this.assignment = assignment;
        this.startHeartbeats();
        return assignment;
      } catch (e) {
        if (!(e instanceof RetriableError) || rounds > c.retries + 2) throw e;
        await c.sleep(c.retryBackoffMs * Math.min(rounds, 10));
      }
    }
  }

  /** Commits offsets under the current generation. */
  async commit(offsets: OffsetToCommit[]): Promise<void> {
    await commitOffsets(this.cluster, this.opts.groupId, offsets, { generationId: this.generationId, memberId: this.memberId });
  }

  /** Leaves the group (the others rebalance now rather than after the session timeout). */
  async leave(): Promise<void> {
    this.left = true;
    this.stopHeartbeats();
    if (this.memberId === "") return;
    try {
      const conn = await coordinatorConnection(this.cluster, this.opts.groupId);
      await this.cluster.call(conn, LeaveGroupApi, 4, () => ({
        groupId: this.opts.groupId,
        memberId: this.memberId,
        members: [{ memberId: this.memberId, groupInstanceId: null, reason: "the consumer is closing" }],
      }));
    } catch {
      // The session timeout ends the membership anyway.
    }
  }

  private async joinGroup(conn: KafkaConnection): Promise<{ leader: string; members: { memberId: string; metadata: Uint8Array }[] }> {
    for (let tries = 0;; tries++) {
      const { res } = await this.cluster.call(conn, JoinGroupApi, 9, () => ({
        groupId: this.opts.groupId,
        sessionTimeoutMs: this.opts.sessionTimeoutMs,
        rebalanceTimeoutMs: this.opts.rebalanceTimeoutMs,
        memberId: this.memberId,
        groupInstanceId: null,
        protocolType: "consumer",
        protocols: [{ name: rangeAssignorName, metadata: encodeConsumerSubscription({ topics: this.opts.topics }) }],
        reason: null,
      }), this.opts.rebalanceTimeoutMs + this.cluster.requestTimeoutMs);
      const code = res.errorCode as number;
      if (code === ErrorCode.MEMBER_ID_REQUIRED && tries < 2) {
        this.memberId = res.memberId as string; // KIP-394: join again with the id the coordinator gave
        continue;
      }
      if (code === ErrorCode.UNKNOWN_MEMBER_ID && tries < 2) {
        this.memberId = "";
        continue;
      }
      if (code === ErrorCode.REBALANCE_IN_PROGRESS && tries < this.cluster.retries) continue;
      if (code !== ErrorCode.NONE) throw errorFor(code, `join group "${this.opts.groupId}"`);
      this.memberId = res.memberId as string;
      this.generationId = res.generationId as number;
      return {
        leader: res.leader as string,
        members: (res.members as Struct[]).map((m) => ({ memberId: m.memberId as string, metadata: m.metadata as Uint8Array })),
      };
    }
  }

  /** The leader's part: every member's share by the range assignor. */
  private async assign(members: { memberId: string; metadata: Uint8Array }[]): Promise<{ memberId: string; assignment: Uint8Array }[]> {
    const subscriptions = new Map<string, string[]>();
    for (const m of members) {
      const s = decodeConsumerSubscription(m.metadata);
      subscriptions.set(m.memberId, s.kind === "subscription" ? s.topics : []);
    }
    const topics = [...new Set([...subscriptions.values()].flat())];
    const md = await this.cluster.refreshMetadata(topics);
    const counts = new Map<string, number>();
    for (const t of topics) {
      const info = md.topics.get(t);
      if (info !== undefined && info.errorCode === ErrorCode.NONE) counts.set(t, info.partitions.length);
    }
    const shares = rangeAssign(subscriptions, counts);
    return [...shares].map(([memberId, assignedPartitions]) => ({ memberId, assignment: encodeConsumerAssignment({ assignedPartitions }) }));
  }

  /** The member's assignment, or null when the group started another rebalance meanwhile. */
  private async syncGroup(conn: KafkaConnection, assignments: { memberId: string; assignment: Uint8Array }[]): Promise<TopicPartitions[] | null> {
    const { res } = await this.cluster.call(conn, SyncGroupApi, 5, () => ({
      groupId: this.opts.groupId,
      generationId: this.generationId,
      memberId: this.memberId,
      groupInstanceId: null,
      protocolType: "consumer",
      protocolName: rangeAssignorName,
      assignments,
    }), this.opts.rebalanceTimeoutMs + this.cluster.requestTimeoutMs);
    const code = res.errorCode as number;
    if (code === ErrorCode.REBALANCE_IN_PROGRESS) return null;
    if (code === ErrorCode.UNKNOWN_MEMBER_ID || code === ErrorCode.ILLEGAL_GENERATION) {
      if (code === ErrorCode.UNKNOWN_MEMBER_ID) this.memberId = "";
      return null;
    }
    if (code !== ErrorCode.NONE) throw errorFor(code, `sync group "${this.opts.groupId}"`);
    const bytes = res.assignment as Uint8Array;
    if (bytes.length === 0) return [];
    const a = decodeConsumerAssignment(bytes);
    if (a.kind !== "assignment") throw new ClientError(`group "${this.opts.groupId}": unreadable assignment (${a.error})`);
    return a.assignedPartitions;
  }

  private startHeartbeats(): void {
    if (this.left) return;
    this.lastHeartbeatOkMs = this.cluster.platform.clock.monotonicMs();
    let busy = false;
    this.heartbeat = this.cluster.platform.clock.setInterval(() => {
      if (busy || this.rebalanceNeeded) return;
      busy = true;
      void this.beat().finally(() => (busy = false));
    }, this.opts.heartbeatIntervalMs);
  }

  private stopHeartbeats(): void {
    this.heartbeat?.cancel();
    this.heartbeat = null;
  }

  private async beat(): Promise<void> {
    try {
      const conn = await coordinatorConnection(this.cluster, this.opts.groupId);
      const { res } = await this.cluster.call(conn, HeartbeatApi, 4, () => ({
        groupId: this.opts.groupId,
        generationId: this.generationId,
        memberId: this.memberId,
        groupInstanceId: null,
      }), Math.max(this.opts.heartbeatIntervalMs, 5_000));
      const code = res.errorCode as number;
      if (code === ErrorCode.NONE) {
        this.lastHeartbeatOkMs = this.cluster.platform.clock.monotonicMs();
        return;
      }
      if (code === ErrorCode.UNKNOWN_MEMBER_ID) this.memberId = "";
      if (code === ErrorCode.REBALANCE_IN_PROGRESS || code === ErrorCode.UNKNOWN_MEMBER_ID || code === ErrorCode.ILLEGAL_GENERATION) {
        this.rebalanceNeeded = true;
        return;
      }
      throw new ClientError(errorName(code));
    } catch {
      // The coordinator moved or is unreachable: past the session timeout our membership is gone.
      if (this.cluster.platform.clock.monotonicMs() - this.lastHeartbeatOkMs > this.opts.sessionTimeoutMs) {
        this.memberId = "";
        this.rebalanceNeeded = true;
      }
    }
  }
}
