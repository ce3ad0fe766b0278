// A raw consumer-group member for tests and benchmarks, over WireClient: JoinGroup (with the
// MEMBER_ID_REQUIRED round trip of v4+), SyncGroup, Heartbeat, LeaveGroup, OffsetCommit and
// OffsetFetch, each one request at a time so a test decides exactly what the broker sees (and
// what it does not: a member that just stops is a "killed" consumer).
import {
  FindCoordinatorApi,
  HeartbeatApi,
  JoinGroupApi,
  LeaveGroupApi,
  OffsetCommitApi,
  OffsetFetchApi,
  SyncGroupApi,
} from "../../src/protocol/api/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { Writer } from "../../src/util/bytes.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { WireClient } from "./wire.ts";

const RETRIABLE: Set<number> = new Set([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR]);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * ConsumerProtocolSubscription v0 (int16 version, topics []string, userData bytes), written by
 * hand from Kafka's ConsumerProtocolSubscription.json rather than with src/protocol's schema.
 */
export function subscriptionV0(topics: string[]): Uint8Array {
  const w = new Writer(64);
  w.int16(0);
  w.int32(topics.length);
  for (const t of topics) {
    const b = new TextEncoder().encode(t);
    w.int16(b.length).bytes(b);
  }
  w.int32(-1); // null user data
  return w.finish().slice();
}

/** ConsumerProtocolAssignment v0: int16 version, [topic string, partitions []int32], userData bytes. */
export function assignmentV0(assigned: Record<string, number[]>): Uint8Array {
  const w = new Writer(64);
  w.int16(0);
  const topics = Object.entries(assigned);
  w.int32(topics.length);
  for (const [t, ps] of topics) {
    const b = new TextEncoder().encode(t);
    w.int16(b.length).bytes(b);
    w.int32(ps.length);
    for (const p of ps) w.int32(p);
  }
  w.int32(-1);
  return w.finish().slice();
}

/** Decodes ConsumerProtocolAssignment (any version: v1-3 only append fields). */
export function decodeAssignment(bytes: Uint8Array): Record<string, number[]> {
  if (bytes.length === 0) return {};
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 2;
  const n = dv.getInt32(pos);
  pos += 4;
  const out: Record<string, number[]> = {};
  for (let i = 0; i < n; i++) {
    const len = dv.getInt16(pos);
    pos += 2;
    const topic = new TextDecoder().decode(bytes.subarray(pos, pos + len));
    pos += len;
    const k = dv.getInt32(pos);
    pos += 4;
    const ps: number[] = [];
    for (let j = 0; j < k; j++, pos += 4) ps.push(dv.getInt32(pos));
    out[topic] = ps;
  }
  return out;
}

/** FindCoordinator until it answers (the offsets topic is created and loaded on first use). */
export async function findCoordinator(c: WireClient, groupId: string, timeoutMs = 15_000): Promise<{ nodeId: number; port: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await c.request(FindCoordinatorApi, 2, { key: groupId, keyType: 0 });
    if (r.errorCode === 0) return { nodeId: r.nodeId as number, port: r.port as number };
    if (Date.now() > deadline) throw new Error(`FindCoordinator(${groupId}) answers ${r.errorCode}`);
    await sleep(50);
  }
}

export interface MemberOptions {
  sessionTimeoutMs?: number;
  rebalanceTimeoutMs?: number;
  instanceId?: string | null;
  protocolType?: string;
  protocols?: { name: string; metadata: Uint8Array }[];
  /** JoinGroup version (default 5: MEMBER_ID_REQUIRED and static membership, not flexible). */
  joinVersion?: number;
}

export interface JoinAnswer {
  errorCode: number;
  generationId: number;
  leader: string;
  memberId: string;
  protocolName: string | null;
  members: { memberId: string; metadata: Uint8Array }[];
}

export class RawMember {
  memberId = "";
  generationId = -1;
  leader = "";
  protocolName: string | null = null;
  members: { memberId: string; metadata: Uint8Array }[] = [];
  assignment: Uint8Array = new Uint8Array(0);

  constructor(readonly c: WireClient, readonly groupId: string, readonly opts: MemberOptions = {}) {}

  static async connect(port: number, groupId: string, opts: MemberOptions = {}): Promise<RawMember> {
    return new RawMember(await WireClient.connect(port), groupId, opts);
  }

  get isLeader(): boolean {
    return this.memberId !== "" && this.memberId === this.leader;
  }

  joinBody(overrides: Struct = {}): Struct {
    return {
      groupId: this.groupId,
      sessionTimeoutMs: this.opts.sessionTimeoutMs ?? 10_000,
      rebalanceTimeoutMs: this.opts.rebalanceTimeoutMs ?? 30_000,
      memberId: this.memberId,
      groupInstanceId: this.opts.instanceId ?? null,
      protocolType: this.opts.protocolType ?? "consumer",
      protocols: this.opts.protocols ?? [{ name: "range", metadata: subscriptionV0(["t"]) }],
      reason: null,
      ...overrides,
    };
  }

  /** One JoinGroup request as is; records the answer's member id and generation when it succeeds. */
  async joinOnce(overrides: Struct = {}, timeoutMs = 60_000): Promise<JoinAnswer> {
    const v = this.opts.joinVersion ?? 5;
    const r = await this.c.request(JoinGroupApi, v, this.joinBody(overrides), timeoutMs);
    const a: JoinAnswer = {
      errorCode: r.errorCode as number,
      generationId: r.generationId as number,
      leader: r.leader as string,
      memberId: r.memberId as string,
      protocolName: r.protocolName as string | null,
      members: (r.members as { memberId: string; metadata: Uint8Array }[]).map((m) => ({ memberId: m.memberId, metadata: m.metadata.slice() })),
    };
    if (a.errorCode === ErrorCode.MEMBER_ID_REQUIRED) this.memberId = a.memberId;
    if (a.errorCode === 0) {
      this.memberId = a.memberId;
      this.generationId = a.generationId;
      this.leader = a.leader;
      this.protocolName = a.protocolName;
      this.members = a.members;
    }
    return a;
  }

  /** JoinGroup until it succeeds (MEMBER_ID_REQUIRED, coordinator loading); throws on other errors. */
  async join(timeoutMs = 60_000): Promise<JoinAnswer> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const a = await this.joinOnce({}, timeoutMs);
      if (a.errorCode === 0) return a;
      if (a.errorCode !== ErrorCode.MEMBER_ID_REQUIRED && !RETRIABLE.has(a.errorCode)) {
        throw new Error(`JoinGroup ${this.groupId} failed with ${a.errorCode}`);
      }
      if (Date.now() > deadline) throw new Error(`JoinGroup ${this.groupId}: still ${a.errorCode}`);
      if (a.errorCode !== ErrorCode.MEMBER_ID_REQUIRED) await sleep(50);
    }
  }

  async sync(assignments: { memberId: string; assignment: Uint8Array }[] = [], generationId = this.generationId, timeoutMs = 60_000): Promise<number> {
    const r = await this.c.request(SyncGroupApi, 3, {
      groupId: this.groupId,
      generationId,
      memberId: this.memberId,
      groupInstanceId: this.opts.instanceId ?? null,
      assignments,
    }, timeoutMs);
    if (r.errorCode === 0) this.assignment = (r.assignment as Uint8Array).slice();
    return r.errorCode as number;
  }

  /** As leader: assigns every member the partitions assign(memberIds) gives it, then syncs. */
  async syncAsLeader(assign: (memberIds: string[]) => Record<string, Uint8Array>): Promise<number> {
    const plan = assign(this.members.map((m) => m.memberId));
    return await this.sync(Object.entries(plan).map(([memberId, assignment]) => ({ memberId, assignment })));
  }

  async heartbeat(generationId = this.generationId): Promise<number> {
    const r = await this.c.request(HeartbeatApi, 3, {
      groupId: this.groupId,
      generationId,
      memberId: this.memberId,
      groupInstanceId: this.opts.instanceId ?? null,
    });
    return r.errorCode as number;
  }

  async leave(): Promise<number> {
    const r = await this.c.request(LeaveGroupApi, 3, {
      groupId: this.groupId,
      members: [{ memberId: this.memberId, groupInstanceId: this.opts.instanceId ?? null }],
    });
    const m = (r.members as { errorCode: number }[])[0];
    return (r.errorCode as number) || (m?.errorCode ?? 0);
  }

  async commit(offsets: Record<string, Record<number, bigint>>, opts: { generationId?: number; memberId?: string; version?: number } = {}): Promise<number[]> {
    return await commitOffsets(this.c, this.groupId, offsets, {
      generationId: opts.generationId ?? this.generationId,
      memberId: opts.memberId ?? this.memberId,
      instanceId: this.opts.instanceId ?? null,
      version: opts.version,
    });
  }

  close(): void {
    this.c.close();
  }
}

/** OffsetCommit (v7 by default); the error code of each partition, in request order. */
export async function commitOffsets(
  c: WireClient,
  groupId: string,
  offsets: Record<string, Record<number, bigint>>,
  o: { generationId?: number; memberId?: string; instanceId?: string | null; version?: number; metadata?: string | null; leaderEpoch?: number; retentionTimeMs?: bigint } = {},
): Promise<number[]> {
  const r = await c.request(OffsetCommitApi, o.version ?? 7, {
    groupId,
    generationIdOrMemberEpoch: o.generationId ?? -1,
    memberId: o.memberId ?? "",
    groupInstanceId: o.instanceId ?? null,
    retentionTimeMs: o.retentionTimeMs ?? -1n,
    topics: Object.entries(offsets).map(([name, ps]) => ({
      name,
      partitions: Object.entries(ps).map(([p, off]) => ({
        partitionIndex: Number(p),
        committedOffset: off,
        committedLeaderEpoch: o.leaderEpoch ?? -1,
        commitTimestamp: -1n,
        committedMetadata: o.metadata ?? null,
      })),
    })),
  });
  return (r.topics as { partitions: { errorCode: number }[] }[]).flatMap((t) => t.partitions.map((p) => p.errorCode));
}

/** OffsetFetch v7 for the given topics (null: all): "topic-partition" → offset, or the group error. */
export async function fetchOffsets(c: WireClient, groupId: string, topics: Record<string, number[]> | null): Promise<{ errorCode: number; offsets: Record<string, bigint> }> {
  const r = await c.request(OffsetFetchApi, 7, {
    groupId,
    topics: topics === null ? null : Object.entries(topics).map(([name, partitionIndexes]) => ({ name, partitionIndexes })),
    requireStable: false,
  });
  const offsets: Record<string, bigint> = {};
  for (const t of r.topics as { name: string; partitions: { partitionIndex: number; committedOffset: bigint }[] }[]) {
    for (const p of t.partitions) offsets[`${t.name}-${p.partitionIndex}`] = p.committedOffset;
  }
  return { errorCode: r.errorCode as number, offsets };
}
