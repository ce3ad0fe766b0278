// Offsets committed inside transactions (TxnOffsetCommit, KIP-98/KIP-447), as Kafka 3.8's
// GroupCoordinator.handleTxnCommitOffsets and GroupMetadata's pendingTransactionalOffsetCommits.
//
// A TxnOffsetCommit is fenced like a member's commit (KIP-447: generation, member id, instance
// id; a commit without a member is taken as is), then held in the group by producer id before
// its transactional batch is appended to the group's __consumer_offsets partition. The offsets
// stay invisible to OffsetFetch (require_stable answers UNSTABLE_OFFSET_COMMIT for them) until
// the transaction's marker reaches the partition: a commit marker makes each one visible unless
// a newer commit (later in the log) is there, an abort marker drops them. A load replays the same
// rules from the log: transactional records wait for their producer's marker; the offsets of
// transactions without one yet are held again in their groups.

import { ErrorCode } from "../util/mod.ts";
import type { GroupCoordinatorConfig } from "./config.ts";
import { type CommittedOffset, type GroupMetadata, splitOffsetKey } from "./group.ts";
import type { GroupMetadataManager } from "./group_metadata_manager.ts";
import { acceptOffsets, type PartitionError } from "./offsets.ts";

/** Offsets of transactions being replayed: producer id → group id → partition key → offset. */
export type TxnReplay = Map<bigint, Map<string, Map<string, CommittedOffset>>>;

/** Kafka's CommitRecordMetadataAndOffset.olderThan: the record of `a` lies before that of `b`. */
export function isOlder(a: CommittedOffset, b: CommittedOffset): boolean {
  return (a.appendOrder ?? -1) < (b.appendOrder ?? -1);
}

/**
 * Ends a transaction's offsets: on commit each becomes the group's committed offset unless the
 * one there is newer; on abort they are dropped. An offset whose record never reached the log
 * (appendOrder -1) is not made visible (Kafka throws: the marker cannot precede the append).
 */
export function completeTxnOffsets(
  byGroup: Map<string, Map<string, CommittedOffset>> | undefined,
  committed: boolean,
  groupOf: (groupId: string) => GroupMetadata,
  onUnappended: (key: string) => void = () => {},
): void {
  if (byGroup === undefined || !committed) return;
  for (const [groupId, offsets] of byGroup) {
    const g = groupOf(groupId);
    for (const [k, o] of offsets) {
      if ((o.appendOrder ?? -1) < 0) {
        onUnappended(k);
        continue;
      }
      const current = g.offsets.get(k);
      if (current === undefined || isOlder(current, o)) g.offsets.set(k, o);
    }
  }
}

export interface TxnCommitRequest {
  transactionalId: string;
  groupId: string;
  producerId: bigint;
  producerEpoch: number;
  /** v3+ (KIP-447); -1, "" and null before. */
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  offsets: { topic: string; partition: number; offset: bigint; leaderEpoch: number; metadata: string | null }[];
}

export class TxnOffsetsOps {
  constructor(
    private readonly manager: GroupMetadataManager,
    private readonly config: GroupCoordinatorConfig,
    private readonly nowMs: () => number,
  ) {}

  /** Kafka's doTxnCommitOffsets fencing. */
  private fence(group: GroupMetadata, req: TxnCommitRequest): number {
    if (group.is("Dead")) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (req.groupInstanceId !== null) {
      const holder = group.staticMembers.get(req.groupInstanceId);
      if (holder !== undefined && holder !== req.memberId) return ErrorCode.FENCED_INSTANCE_ID;
    }
    if (req.memberId !== "" && !group.members.has(req.memberId)) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (req.generationId >= 0 && req.generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    return ErrorCode.NONE;
  }

  async commit(req: TxnCommitRequest): Promise<PartitionError[]> {
    const all = (code: number) => req.offsets.map((o) => ({ topic: o.topic, partition: o.partition, errorCode: code }));
    const err = this.manager.coordinatorError(req.groupId);
    if (err !== ErrorCode.NONE) return all(err);
    if (req.groupId === "") return all(ErrorCode.INVALID_GROUP_ID);
    // A group the coordinator has not seen is created (Empty), as Kafka does for these commits.
    const group = this.manager.getOrCreateGroup(req.groupId);
    const fence = this.fence(group, req);
    if (fence !== ErrorCode.NONE) return all(fence);
    const now = BigInt(this.nowMs());
    const { accepted, results } = acceptOffsets(req.offsets, this.config, (o, metadata) => ({ offset: o.offset, leaderEpoch: o.leaderEpoch, metadata, commitTimestampMs: now, expireTimestampMs: -1n, appendOrder: -1 }));
    if (accepted.size === 0) return results;
    // Held before the append (Kafka's prepareTxnOffsetCommit), so a marker arriving while the
    // append waits for the ISR finds them.
    let held = group.pendingTxnOffsets.get(req.producerId);
    if (held === undefined) group.pendingTxnOffsets.set(req.producerId, (held = new Map()));
    for (const [k, o] of accepted) held.set(k, o);
    this.manager.trackOpenGroup(req.producerId, req.groupId);
    const records = [...accepted].map(([k, o]) => {
      const { topic, partition } = splitOffsetKey(k);
      return this.manager.offsetRecord(req.groupId, topic, partition, o);
    });
    const { order, done } = this.manager.appendOrdered(req.groupId, records, { producerId: req.producerId, producerEpoch: req.producerEpoch });
    const code = await done;
    const still = group.pendingTxnOffsets.get(req.producerId);
    for (const [k, o] of accepted) {
      if (still?.get(k) !== o) continue; // replaced by a later commit, or the transaction ended
      if (code === ErrorCode.NONE) o.appendOrder = order;
      else still.delete(k); // Kafka's failPendingTxnOffsetCommit
    }
    if (still !== undefined && still.size === 0) group.pendingTxnOffsets.delete(req.producerId);
    if (code !== ErrorCode.NONE) for (const r of results) if (r.errorCode === ErrorCode.NONE) r.errorCode = code;
    return results;
  }
}
