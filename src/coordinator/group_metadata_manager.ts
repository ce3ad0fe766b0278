// GroupMetadataManager: where groups live. Each group belongs to one partition of
// __consumer_offsets (group_partition.ts); the broker leading that partition is the group's coordinator.
// The partition's log is the group's durable state, in Kafka's record formats
// (protocol/internal/offsets_records.ts): an OffsetCommit record per committed offset
// (key group/topic/partition), a GroupMetadata record per generation (key group), and
// tombstones (null values) for expired offsets and deleted groups. Compaction keeps the latest
// record per key, so replaying the partition from its start rebuilds every group.
//
// Invariants: a group is answered for only while its partition is owned and loaded
// (NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS otherwise); the in-memory state changes only
// after the records describing it are appended.

import type { Clock } from "../platform/mod.ts";
import {
  decodeGroupMetadataValue,
  decodeOffsetCommitValue,
  decodeOffsetsKey,
  encodeGroupMetadataKey,
  encodeGroupMetadataValue,
  encodeOffsetCommitKey,
  encodeOffsetCommitValue,
  RecordBatchBuilder,
} from "../protocol/mod.ts";
import { ErrorCode, int16StringBytesMax, type Logger, utf8Length } from "../util/mod.ts";
import { type GroupCoordinatorConfig, OFFSETS_TOPIC } from "./config.ts";
import { type CommittedOffset, GroupMetadata, MemberMetadata, offsetKey, splitOffsetKey } from "./group.ts";
import { partitionForGroup } from "./group_partition.ts";
import { replayPartition } from "./partition_replay.ts";
import { completeTxnOffsets, isOlder, type TxnReplay } from "./txn_offsets.ts";

/** The broker's side of __consumer_offsets, as the coordinator needs it. */
export interface OffsetsTopicLog {
  /** Appends one batch to the partition as its leader; resolves to a Kafka error code. */
  append(partition: number, batch: Uint8Array): Promise<number>;
  /**
   * The sequence the producer's next batch on the partition starts at under this epoch (0 for a
   * producer or epoch the partition has not seen): the coordinator's transactional batches pass
   * the leader's sequence checks, where Kafka's skip them (its AppendOrigin.COORDINATOR).
   * Absent: 0.
   */
  nextSequence?(partition: number, producerId: bigint, producerEpoch: number): number;
  /** Whole batches from offset (at most maxBytes, at least one), or null when not held here. */
  read(partition: number, offset: number, maxBytes: number): { records: Uint8Array; logEndOffset: number } | null;
  logStartOffset(partition: number): number;
}

export interface OffsetsRecord {
  key: Uint8Array;
  value: Uint8Array | null;
}

const LOAD_READ_BYTES = 4 * 1024 * 1024;
/** Characters of the client id kept in a generated member id (Kafka keeps all; ids must fit int16 strings). */
const memberIdClientPrefixMax = 1024;

/** A transactional batch's producer (TxnOffsetCommit). */
export interface TxnProducer {
  producerId: bigint;
  producerEpoch: number;
}

/** Transactional batch attribute (bit 4). */
const TRANSACTIONAL_ATTRIBUTE = 0x10;

export class GroupMetadataManager {
  readonly groups = new Map<string, GroupMetadata>();
  private owned = new Set<number>();
  private loading = new Set<number>();
  /**
   * The load under way per partition: leadership lost and regained while a load runs starts a
   * second one, and the first must then neither go on, install its groups, nor mark the
   * partition loaded while the second still replays (Kafka's load scheduling has one at a time).
   */
  private loads = new Map<number, number>();
  private loadSeq = 0;
  /**
   * The log order given to the next append (CommittedOffset.appendOrder): above every offset a
   * load replayed, increasing with each append in the order the appends reach the log (the
   * append is synchronous up to the ISR wait).
   */
  private nextAppendOrder = 0;
  /** The groups holding offsets of each open transaction (Kafka's openGroupsForProducer). */
  readonly openGroupsForProducer = new Map<bigint, Set<string>>();

  constructor(
    private readonly log: OffsetsTopicLog,
    private readonly config: GroupCoordinatorConfig,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly randomHex: () => string,
  ) {}

  partitionFor(groupId: string): number {
    return partitionForGroup(groupId, this.config.offsetsTopicNumPartitions);
  }

  coordinatorError(groupId: string): number {
    // Records below their flexible versions carry int16-length strings: a longer id cannot be stored.
    if (utf8Length(groupId) > int16StringBytesMax) return ErrorCode.INVALID_GROUP_ID;
    const p = this.partitionFor(groupId);
    if (this.loading.has(p)) return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
    if (!this.owned.has(p)) return ErrorCode.NOT_COORDINATOR;
    return ErrorCode.NONE;
  }

  isOwned(partition: number): boolean {
    return this.owned.has(partition) && !this.loading.has(partition);
  }

  getGroup(groupId: string): GroupMetadata | undefined {
    return this.groups.get(groupId);
  }

  getOrCreateGroup(groupId: string): GroupMetadata {
    let g = this.groups.get(groupId);
    if (g === undefined) this.groups.set(groupId, (g = new GroupMetadata(groupId, this.partitionFor(groupId))));
    return g;
  }

  /** Kafka's `clientId-uuid`, with the client id cut so the id stays storable. */
  newMemberId(clientId: string): string {
    return `${clientId.slice(0, memberIdClientPrefixMax)}-${this.randomHex()}`;
  }

  // ---- writing ---------------------------------------------------------------------------------

  /** Appends records to the group's partition; resolves to a Kafka error code. */
  append(groupId: string, records: OffsetsRecord[], txn: TxnProducer | null = null): Promise<number> {
    return this.appendOrdered(groupId, records, txn).done;
  }

  /**
   * As append, with the log order of the batch (taken before the first await, so the orders of
   * two appends are those of their batches in the log). A transactional batch carries the
   * producer's id, epoch and next sequence on the partition.
   */
  appendOrdered(groupId: string, records: OffsetsRecord[], txn: TxnProducer | null = null): { order: number; done: Promise<number> } {
    const order = this.nextAppendOrder++;
    if (records.length === 0) return { order, done: Promise.resolve(ErrorCode.NONE) };
    const b = new RecordBatchBuilder();
    const now = BigInt(this.clock.nowMs());
    for (const r of records) b.append(now, r.key, r.value);
    const partition = this.partitionFor(groupId);
    const batch = txn === null ? b.build(0) : b.build(0, {
      attributeFlags: TRANSACTIONAL_ATTRIBUTE,
      producerId: txn.producerId,
      producerEpoch: txn.producerEpoch,
      baseSequence: this.log.nextSequence?.(partition, txn.producerId, txn.producerEpoch) ?? 0,
    });
    return { order, done: this.mapAppendError(this.log.append(partition, batch)) };
  }

  private async mapAppendError(appended: Promise<number>): Promise<number> {
    const code = await appended;
    // Kafka maps storage errors on the offsets topic to errors clients retry on.
    // KAFKA_STORAGE_ERROR (a full disk, no file descriptors) as Kafka's storeOffsets maps it: no
    // OffsetCommit or SyncGroup version may carry it, and NOT_COORDINATOR is retried.
    if (
      code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION || code === ErrorCode.NOT_LEADER_OR_FOLLOWER ||
      code === ErrorCode.KAFKA_STORAGE_ERROR
    ) return ErrorCode.NOT_COORDINATOR;
    if (code === ErrorCode.MESSAGE_TOO_LARGE || code === ErrorCode.RECORD_LIST_TOO_LARGE) return ErrorCode.UNKNOWN_SERVER_ERROR;
    // Not (yet) on enough replicas: the client retries against a coordinator that can commit.
    if (
      code === ErrorCode.NOT_ENOUGH_REPLICAS || code === ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND ||
      code === ErrorCode.REQUEST_TIMED_OUT
    ) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    return code;
  }

  groupRecord(group: GroupMetadata, assignments: Map<string, Uint8Array>): OffsetsRecord {
    const key = encodeGroupMetadataKey({ group: group.groupId });
    const value = encodeGroupMetadataValue({
      protocolType: group.protocolType ?? "",
      generation: group.generationId,
      protocol: group.protocolName,
      leader: group.leaderId,
      currentStateTimestamp: group.currentStateTimestampMs,
      members: [...group.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        rebalanceTimeout: m.rebalanceTimeoutMs,
        sessionTimeout: m.sessionTimeoutMs,
        subscription: group.protocolName === null ? new Uint8Array(0) : m.metadataFor(group.protocolName),
        assignment: assignments.get(m.memberId) ?? m.assignment,
      })),
    });
    return { key, value };
  }

  storeGroup(group: GroupMetadata, assignments: Map<string, Uint8Array>): Promise<number> {
    return this.append(group.groupId, [this.groupRecord(group, assignments)]);
  }

  offsetRecord(groupId: string, topic: string, partition: number, o: CommittedOffset | null): OffsetsRecord {
    const key = encodeOffsetCommitKey({ group: groupId, topic, partition });
    if (o === null) return { key, value: null };
    const value = encodeOffsetCommitValue({
      offset: o.offset,
      leaderEpoch: o.leaderEpoch,
      metadata: o.metadata,
      commitTimestamp: o.commitTimestampMs,
      expireTimestamp: o.expireTimestampMs,
    });
    return { key, value };
  }

  /**
   * Appends the commits, then applies them to the group (only once they are in the log, and only
   * over older commits: a transaction's offsets that became visible meanwhile may be newer).
   */
  async storeOffsets(group: GroupMetadata, offsets: Map<string, CommittedOffset>): Promise<number> {
    const records = [...offsets].map(([k, o]) => {
      const { topic, partition } = splitOffsetKey(k);
      return this.offsetRecord(group.groupId, topic, partition, o);
    });
    const { order, done } = this.appendOrdered(group.groupId, records);
    const code = await done;
    if (code !== ErrorCode.NONE) return code;
    for (const [k, o] of offsets) {
      o.appendOrder = order;
      const current = group.offsets.get(k);
      if (current === undefined || isOlder(current, o)) group.offsets.set(k, o);
    }
    return code;
  }

  /** Tombstones for the given offsets (and the group itself when deleteGroup); then forgets them. */
  async removeOffsets(group: GroupMetadata, keys: string[], deleteGroup: boolean): Promise<number> {
    const records = keys.map((k) => {
      const { topic, partition } = splitOffsetKey(k);
      return this.offsetRecord(group.groupId, topic, partition, null);
    });
    if (deleteGroup) records.push({ key: encodeGroupMetadataKey({ group: group.groupId }), value: null });
    const code = await this.append(group.groupId, records);
    if (code !== ErrorCode.NONE) return code;
    for (const k of keys) group.offsets.delete(k);
    return ErrorCode.NONE;
  }

  /**
   * Topics were deleted (Kafka's onPartitionsDeleted → cleanupGroupMetadata): each owned group's
   * committed offsets for them get tombstones, so a topic re-created under the same name starts
   * its consumers afresh. A group left Empty with no offsets is deleted too (its metadata record
   * gets a tombstone when it has one, generation > 0, as Kafka writes). Returns the offsets removed.
   */
  async removeOffsetsOfTopics(topics: ReadonlySet<string>): Promise<number> {
    let removed = 0;
    for (const g of [...this.groups.values()]) {
      if (!this.isOwned(g.partition)) continue;
      const doomed = [...g.offsets.keys()].filter((k) => topics.has(splitOffsetKey(k).topic));
      if (doomed.length === 0) continue;
      const dead = g.is("Empty") && g.offsets.size === doomed.length && g.pendingTxnOffsets.size === 0;
      if (await this.removeOffsets(g, doomed, dead && g.generationId > 0) !== ErrorCode.NONE) continue;
      removed += doomed.length;
      // The group may have gained members or offsets while the tombstones were written.
      if (dead && g.is("Empty") && !g.hasOffsets) {
        g.transitionTo("Dead", this.clock.nowMs());
        this.groups.delete(g.groupId);
      }
    }
    return removed;
  }

  // ---- loading ---------------------------------------------------------------------------------

  /**
   * Becoming leader of an offsets partition: replays it from its start and owns its groups.
   * Requests for them answer COORDINATOR_LOAD_IN_PROGRESS until the replay is done.
   */
  async loadPartition(partition: number, onLoaded: (group: GroupMetadata) => void): Promise<void> {
    if (this.owned.has(partition)) return;
    this.owned.add(partition);
    this.loading.add(partition);
    const load = ++this.loadSeq;
    this.loads.set(partition, load);
    const current = () => this.owned.has(partition) && this.loads.get(partition) === load;
    const t0 = this.clock.monotonicMs();
    const loaded = new Map<string, GroupMetadata>();
    // Offsets of transactions not yet ended, by producer, then group (Kafka's pendingOffsets).
    const pending: TxnReplay = new Map();
    let records: number | null;
    let lastOrder = -1;
    try {
      records = await replayPartition(
        this.log,
        OFFSETS_TOPIC,
        partition,
        LOAD_READ_BYTES,
        this.clock,
        this.logger,
        (key, value, batch) => {
          lastOrder = batch.baseOffset;
          this.replay(loaded, pending, partition, key, value, batch);
        },
        current,
        (batch, key) => {
          lastOrder = batch.baseOffset;
          // A marker's key: version int16, type int16 (0 abort, 1 commit), as Kafka's ControlRecordType.
          if (key === null || key.length < 4) return;
          const type = (key[2] << 8) | key[3];
          if (type !== 0 && type !== 1) return;
          completeTxnOffsets(pending.get(batch.producerId), type === 1, (id) => loaded.get(id) ?? this.newLoadedGroup(loaded, id, partition));
          pending.delete(batch.producerId);
        },
      );
    } finally {
      if (this.loads.get(partition) === load) this.loading.delete(partition);
    }
    if (records === null || !current()) return; // unloaded meanwhile (and maybe loading again)
    this.nextAppendOrder = Math.max(this.nextAppendOrder, lastOrder + 1);
    // Transactions still open: their offsets wait in their groups for the markers.
    for (const [producerId, byGroup] of pending) {
      for (const [groupId, offsets] of byGroup) {
        const g = loaded.get(groupId) ?? this.newLoadedGroup(loaded, groupId, partition);
        g.pendingTxnOffsets.set(producerId, offsets);
        this.trackOpenGroup(producerId, groupId);
      }
    }
    for (const g of loaded.values()) {
      if (g.is("Dead")) continue;
      this.groups.set(g.groupId, g);
      onLoaded(g);
    }
    this.logger.info(
      { partition, groups: loaded.size, records, ms: Math.round(this.clock.monotonicMs() - t0) },
      "loaded __consumer_offsets partition",
    );
  }

  private newLoadedGroup(groups: Map<string, GroupMetadata>, id: string, partition: number): GroupMetadata {
    const g = new GroupMetadata(id, partition);
    groups.set(id, g);
    return g;
  }

  /** Remembers that producerId's open transaction holds offsets of groupId. */
  trackOpenGroup(producerId: bigint, groupId: string): void {
    let set = this.openGroupsForProducer.get(producerId);
    if (set === undefined) this.openGroupsForProducer.set(producerId, (set = new Set()));
    set.add(groupId);
  }

  private replay(
    groups: Map<string, GroupMetadata>,
    pending: TxnReplay,
    partition: number,
    keyBytes: Uint8Array | null,
    value: Uint8Array | null,
    batch: { baseOffset: number; attributes: number; producerId: bigint },
  ): void {
    if (keyBytes === null) return;
    const key = decodeOffsetsKey(keyBytes);
    const get = (id: string) => groups.get(id) ?? this.newLoadedGroup(groups, id, partition);
    if (key.kind === "offsetCommit") {
      const k = offsetKey(key.topic, key.partition);
      const v = value === null ? null : decodeOffsetCommitValue(value);
      if (v !== null && v.kind === "invalid") return;
      const o: CommittedOffset | null = v === null ? null : {
        offset: v.offset,
        leaderEpoch: v.leaderEpoch,
        metadata: v.metadata,
        commitTimestampMs: v.commitTimestamp,
        expireTimestampMs: v.expireTimestamp,
        appendOrder: batch.baseOffset,
      };
      if ((batch.attributes & TRANSACTIONAL_ATTRIBUTE) !== 0) {
        // Inside a transaction: held until its marker (Kafka keys these by producer id).
        let byGroup = pending.get(batch.producerId);
        if (byGroup === undefined) pending.set(batch.producerId, (byGroup = new Map()));
        let offsets = byGroup.get(key.group);
        if (offsets === undefined) byGroup.set(key.group, (offsets = new Map()));
        if (o === null) offsets.delete(k);
        else offsets.set(k, o);
        return;
      }
      const g = get(key.group);
      if (o === null) return void g.offsets.delete(k);
      g.offsets.set(k, o);
    } else if (key.kind === "groupMetadata") {
      if (value === null) {
        groups.delete(key.group);
        return;
      }
      const v = decodeGroupMetadataValue(value);
      if (v.kind === "invalid") return;
      const g = get(key.group);
      const offsets = new Map(g.offsets);
      const fresh = new GroupMetadata(key.group, partition);
      for (const [k, o] of offsets) fresh.offsets.set(k, o);
      fresh.generationId = v.generation;
      fresh.protocolType = v.protocolType === "" ? null : v.protocolType;
      fresh.protocolName = v.protocol;
      fresh.leaderId = v.leader;
      fresh.currentStateTimestampMs = v.currentStateTimestamp;
      for (const m of v.members) {
        const member = new MemberMetadata(
          m.memberId,
          m.groupInstanceId,
          m.clientId,
          m.clientHost,
          m.rebalanceTimeout,
          m.sessionTimeout,
          v.protocolType,
          v.protocol === null ? [] : [{ name: v.protocol, metadata: m.subscription }],
        );
        member.assignment = m.assignment;
        fresh.members.set(member.memberId, member);
        if (member.groupInstanceId !== null) fresh.staticMembers.set(member.groupInstanceId, member.memberId);
      }
      fresh.state = fresh.members.size > 0 ? "Stable" : "Empty";
      groups.set(key.group, fresh);
    }
  }

  /**
   * A transaction marker reached the offsets partition (WriteTxnMarkers, as Kafka's
   * handleTxnCompletion): the producer's offsets in the partition's groups become visible
   * (commit, over older commits only) or are dropped (abort).
   */
  completeTransaction(partition: number, producerId: bigint, committed: boolean): void {
    const ids = this.openGroupsForProducer.get(producerId);
    if (ids === undefined) return;
    for (const id of [...ids]) {
      const g = this.groups.get(id);
      if (g === undefined || g.partition !== partition) {
        if (g === undefined) ids.delete(id);
        continue;
      }
      const offsets = g.pendingTxnOffsets.get(producerId);
      g.pendingTxnOffsets.delete(producerId);
      ids.delete(id);
      if (offsets === undefined) continue;
      completeTxnOffsets(new Map([[id, offsets]]), committed, () => g, (k) => this.logger.warn({ group: id, producerId: String(producerId), partition: k }, "a transaction's offset was never appended; not made visible"));
    }
    if (ids.size === 0) this.openGroupsForProducer.delete(producerId);
  }

  /** The partition moved away (or the broker stops): forget its groups. */
  unloadPartition(partition: number, onUnload: (group: GroupMetadata) => void): void {
    this.owned.delete(partition);
    this.loading.delete(partition);
    this.loads.delete(partition);
    for (const [id, g] of this.groups) {
      if (g.partition !== partition) continue;
      onUnload(g);
      this.groups.delete(id);
    }
  }

  // ---- expiry ----------------------------------------------------------------------------------

  /**
   * offsets.retention.minutes (Kafka 2.1+, KIP-211): offsets of a group with no members expire
   * once retention has passed since the group became Empty (its currentStateTimestamp), or, for a
   * group never managed by the coordinator (simple commits only, no protocol type) or stored
   * without that timestamp, since the last commit; offsets with an explicit expire timestamp
   * (OffsetCommit v2-4 with a retention time) expire at it. Empty groups with no offsets left are deleted.
   */
  async expireOffsets(): Promise<number> {
    const now = BigInt(this.clock.nowMs());
    const retention = BigInt(this.config.offsetsRetentionMs);
    let removed = 0;
    for (const g of [...this.groups.values()]) {
      if (!this.isOwned(g.partition)) continue;
      const expired: string[] = [];
      for (const [k, o] of g.offsets) {
        const explicit = o.expireTimestampMs >= 0n && o.expireTimestampMs <= now;
        const since = g.protocolType !== null && g.currentStateTimestampMs >= 0n ? g.currentStateTimestampMs : o.commitTimestampMs;
        const byRetention = g.is("Empty") && since + retention <= now;
        if (explicit || byRetention) expired.push(k);
      }
      const nothingLeft = g.offsets.size === expired.length && g.pendingTxnOffsets.size === 0;
      const deleteGroup = g.is("Empty") && nothingLeft && (expired.length > 0 || this.groupIsStale(g, now, retention));
      if (expired.length === 0 && !deleteGroup) continue;
      if (await this.removeOffsets(g, expired, deleteGroup) !== ErrorCode.NONE) continue;
      removed += expired.length;
      // The group may have gained members while the tombstones were written.
      if (deleteGroup && g.is("Empty") && !g.hasOffsets) {
        g.transitionTo("Dead", this.clock.nowMs());
        this.groups.delete(g.groupId);
      }
    }
    if (removed > 0) this.logger.info({ offsets: removed }, "expired committed offsets");
    return removed;
  }

  private groupIsStale(g: GroupMetadata, now: bigint, retention: bigint): boolean {
    return g.currentStateTimestampMs >= 0n && g.currentStateTimestampMs + retention <= now;
  }
}
