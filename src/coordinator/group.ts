// GroupMetadata: one consumer group's state as Kafka's classic group coordinator keeps it.
//
// States (Kafka's GroupState) and the transitions allowed:
//   Empty               → PreparingRebalance (a member joins), Dead (deleted, or partition moved)
//   PreparingRebalance  → CompletingRebalance (every member rejoined, or the rebalance timeout),
//                         Empty (all members left), Dead
//   CompletingRebalance → Stable (the leader's SyncGroup), PreparingRebalance (a member joined,
//                         left or expired), Dead
//   Stable              → PreparingRebalance, Dead
//   Dead                → (terminal)
//
// Invariants: every member in `members` supports the selected protocol; the leader is a member
// (or null when the group is empty); a member has at most one JoinGroup and one SyncGroup waiting.
// Committed offsets live here too, keyed by topic-partition.

import { assert, offsetKeysCachedMax, offsetKeysPartitionMax } from "../util/mod.ts";
import type { Timer } from "../platform/mod.ts";

export type GroupState = "Empty" | "PreparingRebalance" | "CompletingRebalance" | "Stable" | "Dead";

const validPrevious: Record<GroupState, GroupState[]> = {
  Empty: ["PreparingRebalance"],
  PreparingRebalance: ["Empty", "CompletingRebalance", "Stable"],
  CompletingRebalance: ["PreparingRebalance"],
  Stable: ["CompletingRebalance"],
  Dead: ["Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"],
};

export interface Protocol {
  name: string;
  metadata: Uint8Array;
}

export interface JoinResult {
  errorCode: number;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leader: string;
  skipAssignment: boolean;
  memberId: string;
  members: { memberId: string; groupInstanceId: string | null; metadata: Uint8Array }[];
}

export interface SyncResult {
  errorCode: number;
  protocolType: string | null;
  protocolName: string | null;
  assignment: Uint8Array;
}

export class MemberMetadata {
  assignment: Uint8Array = new Uint8Array(0);
  awaitingJoin: ((r: JoinResult) => void) | null = null;
  awaitingSync: ((r: SyncResult) => void) | null = null;
  heartbeatTimer: Timer | null = null;
  /** Joined during the current rebalance and not yet through a generation. */
  isNew = false;

  constructor(
    readonly memberId: string,
    public groupInstanceId: string | null,
    public clientId: string,
    public clientHost: string,
    public rebalanceTimeoutMs: number,
    public sessionTimeoutMs: number,
    public protocolType: string,
    public protocols: Protocol[],
  ) {}

  metadataFor(protocol: string): Uint8Array {
    const p = this.protocols.find((x) => x.name === protocol);
    assert(p !== undefined, `member ${this.memberId} supports protocol ${protocol}`);
    return p.metadata;
  }

  sameProtocols(protocols: Protocol[]): boolean {
    if (protocols.length !== this.protocols.length) return false;
    return protocols.every((p, i) => {
      const mine = this.protocols[i];
      return mine.name === p.name && mine.metadata.length === p.metadata.length &&
        mine.metadata.every((b, j) => b === p.metadata[j]);
    });
  }
}

export interface CommittedOffset {
  offset: bigint;
  leaderEpoch: number;
  metadata: string;
  commitTimestampMs: bigint;
  /** Set by OffsetCommit v2-4 with an explicit retention time (now + retention); -1 otherwise. */
  expireTimestampMs: bigint;
  /**
   * Where its record lies in the partition's log order (the batch's offset when replayed; an
   * increasing count taken at the append after a load), -1 when not known. A transaction's
   * offsets become visible at its commit marker only over older commits (Kafka's olderThan).
   */
  appendOrder?: number;
}

/**
 * The keys handed out so far, by topic and partition: a commit or fetch of 1,000 partitions looks
 * its keys up instead of building 1,000 strings, and a string handed out again keeps the hash the
 * group's offset map computed for it. Dropped whole at offsetKeysCachedMax (topics come and go).
 */
const offsetKeys = new Map<string, string[]>();
let offsetKeysCached = 0;

export function offsetKey(topic: string, partition: number): string {
  let keys = offsetKeys.get(topic);
  const known = keys?.[partition];
  if (known !== undefined) return known;
  const key = `${topic}\u0000${partition}`;
  if (!Number.isInteger(partition) || partition < 0 || partition >= offsetKeysPartitionMax) return key;
  if (offsetKeysCached >= offsetKeysCachedMax) {
    offsetKeys.clear();
    offsetKeysCached = 0;
    keys = undefined;
  }
  if (keys === undefined) offsetKeys.set(topic, keys = []);
  keys[partition] = key;
  offsetKeysCached++;
  return key;
}

export function splitOffsetKey(key: string): { topic: string; partition: number } {
  const i = key.lastIndexOf("\u0000");
  return { topic: key.slice(0, i), partition: Number(key.slice(i + 1)) };
}

export class GroupMetadata {
  state: GroupState = "Empty";
  generationId = 0;
  protocolType: string | null = null;
  protocolName: string | null = null;
  leaderId: string | null = null;
  currentStateTimestampMs = -1n;
  readonly members = new Map<string, MemberMetadata>();
  /** Members given an id by a v4+ JoinGroup (MEMBER_ID_REQUIRED), expected back with it. */
  readonly pendingMembers = new Map<string, Timer>();
  /** group.instance.id → member id of the static member holding it. */
  readonly staticMembers = new Map<string, string>();
  readonly offsets = new Map<string, CommittedOffset>();
  /**
   * Offsets committed inside transactions still open, by producer id (Kafka's
   * pendingTransactionalOffsetCommits): visible once the commit marker reaches the group's
   * partition, dropped at an abort marker. appendOrder -1 until the record is in the log.
   */
  readonly pendingTxnOffsets = new Map<bigint, Map<string, CommittedOffset>>();
  /** The delayed join of the rebalance in progress. */
  joinTimer: Timer | null = null;
  /** In the initial rebalance delay of a group that was empty: joins wait for the timer. */
  inInitialDelay = false;
  /** A member joined since the initial delay last fired (it then waits another delay). */
  newMemberAdded = false;
  /** Monotonic time by which the initial delay must end (the rebalance timeout). */
  initialDelayDeadlineMs = 0;

  constructor(readonly groupId: string, readonly partition: number) {}

  is(state: GroupState): boolean {
    return this.state === state;
  }

  transitionTo(next: GroupState, nowMs: number): void {
    assert(validPrevious[next].includes(this.state), `group ${this.groupId}: ${this.state} → ${next} is allowed`);
    this.state = next;
    this.currentStateTimestampMs = BigInt(nowMs);
  }

  /** Kafka's hasOffsets: committed offsets, or offsets of a transaction still open. */
  get hasOffsets(): boolean {
    return this.offsets.size > 0 || this.pendingTxnOffsets.size > 0;
  }

  /** Whether an open transaction has an offset for the partition (OffsetFetch's require_stable). */
  hasPendingTxnOffset(key: string): boolean {
    for (const m of this.pendingTxnOffsets.values()) if (m.has(key)) return true;
    return false;
  }

  get isEmptyOfMembers(): boolean {
    return this.members.size === 0;
  }

  allMembersJoined(): boolean {
    for (const m of this.members.values()) if (m.awaitingJoin === null) return false;
    return this.pendingMembers.size === 0;
  }

  /** Can a member with these protocols join? (The group's type must match, and some protocol be common to all.) */
  supportsProtocols(protocolType: string, protocols: Protocol[]): boolean {
    if (this.members.size === 0) return protocolType !== "" && protocols.length > 0;
    if (this.protocolType !== protocolType) return false;
    const names = new Set(protocols.map((p) => p.name));
    return this.candidateProtocols().some((c) => names.has(c));
  }

  /** Protocols every member supports, in no particular order. */
  candidateProtocols(): string[] {
    let common: string[] | null = null;
    for (const m of this.members.values()) {
      const names = new Set(m.protocols.map((p) => p.name));
      common = common === null ? [...names] : common.filter((n) => names.has(n));
    }
    return common ?? [];
  }

  /** Kafka's vote: each member picks its most preferred candidate; the most votes win. */
  selectProtocol(): string {
    const candidates = new Set(this.candidateProtocols());
    assert(candidates.size > 0, `group ${this.groupId} has a protocol common to all members`);
    const votes = new Map<string, number>();
    for (const m of this.members.values()) {
      const choice = m.protocols.find((p) => candidates.has(p.name))!.name;
      votes.set(choice, (votes.get(choice) ?? 0) + 1);
    }
    let best = "";
    let bestVotes = -1;
    for (const [name, n] of votes) {
      if (n > bestVotes) {
        best = name;
        bestVotes = n;
      }
    }
    return best;
  }

  /** The longest rebalance timeout of any member: how long a rebalance may wait for rejoins. */
  rebalanceTimeoutMs(): number {
    let t = 0;
    for (const m of this.members.values()) t = Math.max(t, m.rebalanceTimeoutMs);
    return t;
  }

  addMember(m: MemberMetadata): void {
    if (this.members.size === 0) this.protocolType = m.protocolType;
    assert(this.protocolType === m.protocolType, "members share the group's protocol type");
    this.members.set(m.memberId, m);
    if (m.groupInstanceId !== null) this.staticMembers.set(m.groupInstanceId, m.memberId);
    if (this.leaderId === null) this.leaderId = m.memberId;
  }

  removeMember(memberId: string): MemberMetadata | undefined {
    const m = this.members.get(memberId);
    if (m === undefined) return undefined;
    this.members.delete(memberId);
    m.heartbeatTimer?.cancel();
    m.heartbeatTimer = null;
    if (m.groupInstanceId !== null && this.staticMembers.get(m.groupInstanceId) === memberId) {
      this.staticMembers.delete(m.groupInstanceId);
    }
    if (this.leaderId === memberId) this.leaderId = this.members.keys().next().value ?? null;
    return m;
  }
}
