// GroupCoordinator: the classic consumer-group protocol (JoinGroup, SyncGroup, Heartbeat,
// LeaveGroup) over GroupMetadata, following Kafka's GroupCoordinator.
//
// A rebalance: the first JoinGroup (or a member leaving, expiring, or changing its protocols) puts
// the group in PreparingRebalance; the join completes when every known member has rejoined, or
// when the rebalance timeout (the longest of the members') passes, dropping those that did not;
// a new group first waits group.initial.rebalance.delay.ms, extended while members keep arriving.
// The completed join starts generation N+1: the leader gets every member's metadata, computes the
// assignment and sends it with its SyncGroup; the coordinator stores the group and hands each
// member its part. Heartbeats keep members alive for their session timeout.
//
// Invariants: everything here runs on the event loop with no await between a check and the
// change it guards; a reply callback is called exactly once; timers are cancelled when their
// member or group goes away.

import type { Clock, Timer } from "../platform/mod.ts";
import { ErrorCode, int16StringBytesMax, type Logger, utf8Length } from "../util/mod.ts";
import type { GroupCoordinatorConfig } from "./config.ts";
import { GroupMetadata, type JoinResult, MemberMetadata, type Protocol, type SyncResult } from "./group.ts";

export interface JoinRequest {
  groupId: string;
  memberId: string;
  groupInstanceId: string | null;
  /** JoinGroup v4+: an unknown member must first fetch an id (MEMBER_ID_REQUIRED). */
  requireKnownMemberId: boolean;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  sessionTimeoutMs: number;
  protocolType: string;
  protocols: Protocol[];
  reason: string | null;
}

export interface SyncRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  protocolType: string | null;
  protocolName: string | null;
  assignments: { memberId: string; assignment: Uint8Array }[];
}

/** What the membership logic needs from group storage and placement. */
export interface GroupHost {
  /** NONE, NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS for the group's partition. */
  coordinatorError(groupId: string): number;
  getGroup(groupId: string): GroupMetadata | undefined;
  getOrCreateGroup(groupId: string): GroupMetadata;
  /** Writes the group's metadata record; resolves to an error code. */
  storeGroup(group: GroupMetadata, assignments: Map<string, Uint8Array>): Promise<number>;
  newMemberId(clientId: string): string;
}

const emptyBytes = new Uint8Array(0);

function joinError(memberId: string, errorCode: number): JoinResult {
  return {
    errorCode,
    generationId: -1,
    protocolType: null,
    protocolName: null,
    leader: "",
    skipAssignment: false,
    memberId,
    members: [],
  };
}

function syncError(errorCode: number): SyncResult {
  return { errorCode, protocolType: null, protocolName: null, assignment: emptyBytes };
}

export class GroupCoordinator {
  constructor(
    private readonly host: GroupHost,
    private readonly config: GroupCoordinatorConfig,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  // ---- JoinGroup -----------------------------------------------------------------------------

  join(req: JoinRequest): Promise<JoinResult> {
    const early = this.validateJoin(req);
    if (early !== null) return Promise.resolve(joinError(req.memberId, early));
    const group = req.memberId === "" ? this.host.getOrCreateGroup(req.groupId) : this.host.getGroup(req.groupId);
    if (group === undefined) return Promise.resolve(joinError(req.memberId, ErrorCode.UNKNOWN_MEMBER_ID));
    if (group.is("Dead")) return Promise.resolve(joinError(req.memberId, ErrorCode.COORDINATOR_NOT_AVAILABLE));
    if (!group.supportsProtocols(req.protocolType, req.protocols)) {
      return Promise.resolve(joinError(req.memberId, ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
    }
    return new Promise((reply) => {
      if (req.memberId === "") this.joinNewMember(group, req, reply);
      else this.joinKnownMember(group, req, reply);
    });
  }

  private validateJoin(req: JoinRequest): number | null {
    if (req.groupId === "") return ErrorCode.INVALID_GROUP_ID;
    const err = this.host.coordinatorError(req.groupId);
    if (err !== ErrorCode.NONE) return err;
    if (req.sessionTimeoutMs < this.config.groupMinSessionTimeoutMs || req.sessionTimeoutMs > this.config.groupMaxSessionTimeoutMs) {
      return ErrorCode.INVALID_SESSION_TIMEOUT;
    }
    // These end up in the group's record, whose strings have int16 lengths.
    const strings = [req.groupInstanceId ?? "", req.protocolType, ...req.protocols.map((p) => p.name)];
    if (strings.some((x) => utf8Length(x) > int16StringBytesMax)) return ErrorCode.INVALID_REQUEST;
    return null;
  }

  private groupFull(group: GroupMetadata): boolean {
    return group.members.size + group.pendingMembers.size >= this.config.groupMaxSize;
  }

  private joinNewMember(group: GroupMetadata, req: JoinRequest, reply: (r: JoinResult) => void): void {
    if (this.groupFull(group)) return reply(joinError("", ErrorCode.GROUP_MAX_SIZE_REACHED));
    const memberId = this.host.newMemberId(req.clientId);
    if (req.groupInstanceId !== null) {
      const old = group.staticMembers.get(req.groupInstanceId);
      if (old !== undefined) return this.replaceStaticMember(group, old, memberId, req, reply);
    } else if (req.requireKnownMemberId) {
      // KIP-394: hand out the id first, so a client that dies before rejoining leaves no member.
      const timer = this.clock.setTimeout(() => this.expirePendingMember(group, memberId), req.sessionTimeoutMs);
      group.pendingMembers.set(memberId, timer);
      return reply(joinError(memberId, ErrorCode.MEMBER_ID_REQUIRED));
    }
    this.addMemberAndRebalance(group, memberId, req, reply);
  }

  private joinKnownMember(group: GroupMetadata, req: JoinRequest, reply: (r: JoinResult) => void): void {
    const pending = group.pendingMembers.get(req.memberId);
    if (pending !== undefined) {
      pending.cancel();
      group.pendingMembers.delete(req.memberId);
      return this.addMemberAndRebalance(group, req.memberId, req, reply);
    }
    const member = group.members.get(req.memberId);
    const fenced = this.fencedInstance(group, req.groupInstanceId, req.memberId);
    if (fenced !== null) return reply(joinError(req.memberId, fenced));
    if (member === undefined) return reply(joinError(req.memberId, ErrorCode.UNKNOWN_MEMBER_ID));
    switch (group.state) {
      case "PreparingRebalance":
        return this.updateMemberAndRebalance(group, member, req, reply, "member rejoined");
      case "CompletingRebalance":
        if (member.sameProtocols(req.protocols)) return reply(this.joinResultFor(group, member));
        return this.updateMemberAndRebalance(group, member, req, reply, "member changed its protocols");
      case "Stable":
        if (group.leaderId === member.memberId || !member.sameProtocols(req.protocols)) {
          return this.updateMemberAndRebalance(group, member, req, reply, "leader or protocols changed");
        }
        this.scheduleHeartbeat(group, member);
        return reply(this.joinResultFor(group, member));
      default:
        return reply(joinError(req.memberId, ErrorCode.UNKNOWN_MEMBER_ID));
    }
  }

  /** A static member (group.instance.id) came back with a new member id: it takes the old one's place. */
  private replaceStaticMember(
    group: GroupMetadata,
    oldMemberId: string,
    newMemberId: string,
    req: JoinRequest,
    reply: (r: JoinResult) => void,
  ): void {
    const old = group.members.get(oldMemberId);
    if (old === undefined) return this.addMemberAndRebalance(group, newMemberId, req, reply);
    // The old incarnation's waiting calls are answered as fenced.
    old.awaitingJoin?.(joinError(oldMemberId, ErrorCode.FENCED_INSTANCE_ID));
    old.awaitingSync?.(syncError(ErrorCode.FENCED_INSTANCE_ID));
    const wasLeader = group.leaderId === oldMemberId;
    group.removeMember(oldMemberId);
    const member = this.newMember(newMemberId, req);
    member.assignment = old.assignment;
    group.addMember(member);
    if (wasLeader) group.leaderId = newMemberId;
    if (group.is("Stable") && old.sameProtocols(req.protocols)) {
      // Same subscription: no rebalance, as KIP-345 promises; persist the new member id.
      this.scheduleHeartbeat(group, member);
      const result = { ...this.joinResultFor(group, member), members: [] };
      void this.host.storeGroup(group, this.currentAssignments(group)).then((err) => {
        reply(err === ErrorCode.NONE ? result : joinError(newMemberId, err));
      });
      return;
    }
    member.awaitingJoin = reply;
    this.maybePrepareRebalance(group, "static member rejoined with new metadata");
  }

  private fencedInstance(group: GroupMetadata, instanceId: string | null, memberId: string): number | null {
    if (instanceId === null) return null;
    const holder = group.staticMembers.get(instanceId);
    if (holder !== undefined && holder !== memberId) return ErrorCode.FENCED_INSTANCE_ID;
    return null;
  }

  private newMember(memberId: string, req: JoinRequest): MemberMetadata {
    return new MemberMetadata(
      memberId,
      req.groupInstanceId,
      req.clientId,
      req.clientHost,
      req.rebalanceTimeoutMs,
      req.sessionTimeoutMs,
      req.protocolType,
      req.protocols,
    );
  }

  private addMemberAndRebalance(group: GroupMetadata, memberId: string, req: JoinRequest, reply: (r: JoinResult) => void): void {
    const member = this.newMember(memberId, req);
    member.isNew = true;
    member.awaitingJoin = reply;
    // Only a new group's first rebalance is stretched by later arrivals (Kafka: generation 0).
    if (group.is("PreparingRebalance") && group.generationId === 0) group.newMemberAdded = true;
    group.addMember(member);
    this.logger.info({ group: group.groupId, member: memberId, members: group.members.size }, "member joined");
    this.maybePrepareRebalance(group, `member ${memberId} joined`);
  }

  private updateMemberAndRebalance(
    group: GroupMetadata,
    member: MemberMetadata,
    req: JoinRequest,
    reply: (r: JoinResult) => void,
    reason: string,
  ): void {
    member.protocols = req.protocols;
    member.rebalanceTimeoutMs = req.rebalanceTimeoutMs;
    member.sessionTimeoutMs = req.sessionTimeoutMs;
    member.clientId = req.clientId;
    member.clientHost = req.clientHost;
    member.awaitingJoin?.(joinError(member.memberId, ErrorCode.REBALANCE_IN_PROGRESS));
    member.awaitingJoin = reply;
    this.maybePrepareRebalance(group, reason);
  }

  // ---- rebalance -----------------------------------------------------------------------------

  private maybePrepareRebalance(group: GroupMetadata, reason: string): void {
    if (group.is("Stable") || group.is("CompletingRebalance") || group.is("Empty")) this.prepareRebalance(group, reason);
    else if (group.is("PreparingRebalance")) this.tryCompleteJoin(group);
  }

  private prepareRebalance(group: GroupMetadata, reason: string): void {
    // Members waiting for their assignment will not get one in this generation.
    if (group.is("CompletingRebalance")) this.propagateSyncError(group, ErrorCode.REBALANCE_IN_PROGRESS);
    const initial = group.is("Empty");
    group.transitionTo("PreparingRebalance", this.clock.nowMs());
    this.logger.info({ group: group.groupId, generation: group.generationId, reason }, "preparing to rebalance");
    group.joinTimer?.cancel();
    if (initial && this.config.groupInitialRebalanceDelayMs > 0) {
      group.inInitialDelay = true;
      group.newMemberAdded = false;
      group.initialDelayDeadlineMs = this.clock.monotonicMs() + group.rebalanceTimeoutMs();
      group.joinTimer = this.clock.setTimeout(() => this.onInitialDelay(group), this.config.groupInitialRebalanceDelayMs);
      return;
    }
    group.joinTimer = this.clock.setTimeout(() => this.completeJoin(group), group.rebalanceTimeoutMs());
    this.tryCompleteJoin(group);
  }

  /** Kafka's InitialDelayedJoin: while members keep arriving, wait another delay (to the rebalance timeout). */
  private onInitialDelay(group: GroupMetadata): void {
    group.joinTimer = null;
    if (!group.is("PreparingRebalance")) return;
    const left = group.initialDelayDeadlineMs - this.clock.monotonicMs();
    if (group.newMemberAdded && left > 0) {
      group.newMemberAdded = false;
      const delay = Math.min(this.config.groupInitialRebalanceDelayMs, left);
      group.joinTimer = this.clock.setTimeout(() => this.onInitialDelay(group), delay);
      return;
    }
    this.completeJoin(group);
  }

  private tryCompleteJoin(group: GroupMetadata): void {
    if (!group.is("PreparingRebalance") || group.inInitialDelay) return;
    if (group.allMembersJoined()) this.completeJoin(group);
  }

  private completeJoin(group: GroupMetadata): void {
    if (!group.is("PreparingRebalance")) return;
    group.joinTimer?.cancel();
    group.joinTimer = null;
    group.inInitialDelay = false;
    for (const m of [...group.members.values()]) {
      if (m.awaitingJoin === null) {
        this.logger.info({ group: group.groupId, member: m.memberId }, "member did not rejoin in time; removed");
        group.removeMember(m.memberId);
      }
    }
    group.generationId++;
    if (group.members.size === 0) {
      group.protocolName = null;
      group.transitionTo("Empty", this.clock.nowMs());
      void this.host.storeGroup(group, new Map());
      this.logger.info({ group: group.groupId, generation: group.generationId }, "group is empty");
      return;
    }
    group.protocolName = group.selectProtocol();
    group.transitionTo("CompletingRebalance", this.clock.nowMs());
    this.logger.info(
      { group: group.groupId, generation: group.generationId, members: group.members.size, protocol: group.protocolName },
      "rebalance: join complete",
    );
    for (const m of group.members.values()) {
      const reply = m.awaitingJoin!;
      m.awaitingJoin = null;
      m.isNew = false;
      this.scheduleHeartbeat(group, m);
      reply(this.joinResultFor(group, m));
    }
  }

  private joinResultFor(group: GroupMetadata, member: MemberMetadata): JoinResult {
    const isLeader = group.leaderId === member.memberId;
    return {
      errorCode: ErrorCode.NONE,
      generationId: group.generationId,
      protocolType: group.protocolType,
      protocolName: group.protocolName,
      leader: group.leaderId ?? "",
      skipAssignment: false,
      memberId: member.memberId,
      members: isLeader
        ? [...group.members.values()].map((m) => ({
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          metadata: m.metadataFor(group.protocolName!),
        }))
        : [],
    };
  }

  // ---- SyncGroup -----------------------------------------------------------------------------

  sync(req: SyncRequest): Promise<SyncResult> {
    if (req.groupId === "") return Promise.resolve(syncError(ErrorCode.INVALID_GROUP_ID));
    const err = this.host.coordinatorError(req.groupId);
    if (err !== ErrorCode.NONE) return Promise.resolve(syncError(err));
    const group = this.host.getGroup(req.groupId);
    // A static member's old incarnation is told it is fenced (a fatal error for it), before the
    // unknown-member check that would only make it rejoin and fence the new one in turn (Kafka's order).
    const fenced = group === undefined ? null : this.fencedInstance(group, req.groupInstanceId, req.memberId);
    if (fenced !== null) return Promise.resolve(syncError(fenced));
    const member = group?.members.get(req.memberId);
    if (group === undefined || member === undefined) return Promise.resolve(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
    if (req.generationId !== group.generationId) return Promise.resolve(syncError(ErrorCode.ILLEGAL_GENERATION));
    if ((req.protocolType !== null && req.protocolType !== group.protocolType) ||
      (req.protocolName !== null && req.protocolName !== group.protocolName)) {
      return Promise.resolve(syncError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
    }
    switch (group.state) {
      case "PreparingRebalance":
        return Promise.resolve(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
      case "Stable":
        this.scheduleHeartbeat(group, member);
        return Promise.resolve(this.syncResult(group, member.assignment));
      case "CompletingRebalance":
        return new Promise((reply) => this.completingSync(group, member, req, reply));
      default:
        return Promise.resolve(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
    }
  }

  private completingSync(group: GroupMetadata, member: MemberMetadata, req: SyncRequest, reply: (r: SyncResult) => void): void {
    member.awaitingSync?.(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
    member.awaitingSync = reply;
    this.scheduleHeartbeat(group, member);
    if (group.leaderId !== member.memberId) return;
    const assignments = new Map<string, Uint8Array>();
    for (const a of req.assignments) if (group.members.has(a.memberId)) assignments.set(a.memberId, a.assignment);
    for (const id of group.members.keys()) if (!assignments.has(id)) assignments.set(id, emptyBytes);
    const generation = group.generationId;
    void this.host.storeGroup(group, assignments).then((err) => {
      // The group may have moved on while the write was in flight.
      if (!group.is("CompletingRebalance") || group.generationId !== generation) return;
      if (err !== ErrorCode.NONE) {
        this.propagateSyncError(group, err);
        return this.prepareRebalance(group, "storing the group failed");
      }
      for (const [id, a] of assignments) {
        const m = group.members.get(id);
        if (m !== undefined) m.assignment = a;
      }
      group.transitionTo("Stable", this.clock.nowMs());
      this.logger.info({ group: group.groupId, generation }, "group is stable");
      for (const m of group.members.values()) {
        const r = m.awaitingSync;
        m.awaitingSync = null;
        if (r === null) continue;
        // Its session starts again from its answer, as Kafka's propagateAssignment does.
        this.scheduleHeartbeat(group, m);
        r(this.syncResult(group, m.assignment));
      }
    });
  }

  private syncResult(group: GroupMetadata, assignment: Uint8Array): SyncResult {
    return { errorCode: ErrorCode.NONE, protocolType: group.protocolType, protocolName: group.protocolName, assignment };
  }

  private propagateSyncError(group: GroupMetadata, errorCode: number): void {
    for (const m of group.members.values()) {
      const r = m.awaitingSync;
      m.awaitingSync = null;
      r?.(syncError(errorCode));
    }
  }

  private currentAssignments(group: GroupMetadata): Map<string, Uint8Array> {
    return new Map([...group.members.values()].map((m) => [m.memberId, m.assignment]));
  }

  // ---- Heartbeat and LeaveGroup ----------------------------------------------------------------

  heartbeat(groupId: string, memberId: string, groupInstanceId: string | null, generationId: number): number {
    if (groupId === "") return ErrorCode.INVALID_GROUP_ID;
    const err = this.host.coordinatorError(groupId);
    if (err !== ErrorCode.NONE) return err;
    const group = this.host.getGroup(groupId);
    if (group === undefined || group.is("Empty") || group.is("Dead")) {
      return group?.is("Dead") ? ErrorCode.COORDINATOR_NOT_AVAILABLE : ErrorCode.UNKNOWN_MEMBER_ID;
    }
    const member = group.members.get(memberId);
    const fenced = this.fencedInstance(group, groupInstanceId, memberId);
    if (fenced !== null) return fenced;
    if (member === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    this.scheduleHeartbeat(group, member);
    return group.is("PreparingRebalance") ? ErrorCode.REBALANCE_IN_PROGRESS : ErrorCode.NONE;
  }

  /** LeaveGroup; returns the group-level error and one error per member asked about. */
  leave(groupId: string, members: { memberId: string; groupInstanceId: string | null }[]): { errorCode: number; members: number[] } {
    // Kafka's isValidGroupId: the membership APIs need a non-empty group id.
    if (groupId === "") return { errorCode: ErrorCode.INVALID_GROUP_ID, members: [] };
    const err = this.host.coordinatorError(groupId);
    if (err !== ErrorCode.NONE) return { errorCode: err, members: [] };
    const group = this.host.getGroup(groupId);
    if (group === undefined) return { errorCode: ErrorCode.UNKNOWN_MEMBER_ID, members: members.map(() => ErrorCode.UNKNOWN_MEMBER_ID) };
    const codes = members.map((m) => this.leaveOne(group, m.memberId, m.groupInstanceId));
    return { errorCode: ErrorCode.NONE, members: codes };
  }

  private leaveOne(group: GroupMetadata, memberId: string, instanceId: string | null): number {
    // A static member may leave by instance id alone (KIP-345 batch leave from admin tools).
    const id = memberId === "" && instanceId !== null ? group.staticMembers.get(instanceId) ?? "" : memberId;
    const pending = group.pendingMembers.get(id);
    if (pending !== undefined) {
      pending.cancel();
      group.pendingMembers.delete(id);
      this.tryCompleteJoin(group);
      return ErrorCode.NONE;
    }
    if (instanceId !== null && memberId !== "" && this.fencedInstance(group, instanceId, memberId) !== null) {
      return ErrorCode.FENCED_INSTANCE_ID;
    }
    if (!group.members.has(id)) return ErrorCode.UNKNOWN_MEMBER_ID;
    this.removeMemberAndUpdateGroup(group, id, "member left the group");
    return ErrorCode.NONE;
  }

  private removeMemberAndUpdateGroup(group: GroupMetadata, memberId: string, reason: string): void {
    const m = group.removeMember(memberId);
    if (m === undefined) return;
    m.awaitingJoin?.(joinError(memberId, ErrorCode.UNKNOWN_MEMBER_ID));
    m.awaitingSync?.(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
    this.logger.info({ group: group.groupId, member: memberId, reason }, "member removed");
    switch (group.state) {
      case "Stable":
      case "CompletingRebalance":
        return this.prepareRebalance(group, reason);
      case "PreparingRebalance":
        if (group.members.size === 0 && group.inInitialDelay) return this.completeJoin(group);
        return this.tryCompleteJoin(group);
      default:
        return;
    }
  }

  private scheduleHeartbeat(group: GroupMetadata, member: MemberMetadata): void {
    member.heartbeatTimer?.cancel();
    member.heartbeatTimer = this.clock.setTimeout(() => {
      member.heartbeatTimer = null;
      if (group.members.get(member.memberId) !== member) return;
      // A member with a JoinGroup or SyncGroup waiting is kept (Kafka's shouldKeepAlive): it cannot
      // heartbeat meanwhile. The rebalance bounds the join; the answer to the sync restarts the session.
      if (member.awaitingJoin !== null || member.awaitingSync !== null) return this.scheduleHeartbeat(group, member);
      this.removeMemberAndUpdateGroup(group, member.memberId, "session timeout expired");
    }, member.sessionTimeoutMs);
  }

  private expirePendingMember(group: GroupMetadata, memberId: string): void {
    if (!group.pendingMembers.delete(memberId)) return;
    this.logger.info({ group: group.groupId, member: memberId }, "pending member expired");
    this.tryCompleteJoin(group);
  }

  /** The group leaves this coordinator (partition moved, or deleted): answer everything waiting. */
  unloadGroup(group: GroupMetadata): void {
    group.joinTimer?.cancel();
    for (const t of group.pendingMembers.values()) t.cancel();
    group.pendingMembers.clear();
    for (const m of group.members.values()) {
      m.heartbeatTimer?.cancel();
      m.awaitingJoin?.(joinError(m.memberId, ErrorCode.NOT_COORDINATOR));
      m.awaitingSync?.(syncError(ErrorCode.NOT_COORDINATOR));
      m.awaitingJoin = null;
      m.awaitingSync = null;
    }
  }
}

export type { Timer };
