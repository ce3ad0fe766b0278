// OffsetCommit, OffsetFetch, OffsetDelete and DeleteGroups over the GroupMetadataManager,
// following Kafka's GroupCoordinator.handleCommitOffsets / handleFetchOffsets / handleDeleteGroups.
//
// A commit from a group member is fenced by generation (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
// REBALANCE_IN_PROGRESS while assignments are being handed out); a commit with generation -1 and
// no member id is a "simple" commit, allowed while the group has no members (standalone
// consumers, admin tools resetting offsets).

import { ErrorCode, utf8Length } from "../util/mod.ts";
import type { GroupCoordinatorConfig } from "./config.ts";
import { type CommittedOffset, type GroupMetadata, offsetKey, splitOffsetKey } from "./group.ts";
import type { GroupMetadataManager } from "./group_metadata_manager.ts";

export interface CommitRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  /** OffsetCommit v1 only: -1 (now), or the commit time the client states (retention counts from it). */
  commitTimestampMs: bigint;
  /** OffsetCommit v2-4: -1, or how long to keep them (an explicit expire timestamp: now + this). */
  retentionTimeMs: bigint;
  offsets: { topic: string; partition: number; offset: bigint; leaderEpoch: number; metadata: string | null }[];
}

export interface PartitionError {
  topic: string;
  partition: number;
  errorCode: number;
}

type OffsetIn = CommitRequest["offsets"][number];

/**
 * The offsets a commit stores (keyed by partition) and the answer for each: metadata longer than
 * offset.metadata.max.bytes is OFFSET_METADATA_TOO_LARGE and not stored, as Kafka's validateOffsetMetadataLength.
 */
export function acceptOffsets(offsets: OffsetIn[], config: GroupCoordinatorConfig, make: (o: OffsetIn, metadata: string) => CommittedOffset) {
  const accepted = new Map<string, CommittedOffset>();
  const results: PartitionError[] = [];
  for (const o of offsets) {
    const metadata = o.metadata ?? "";
    // A UTF-16 unit is at most 3 UTF-8 bytes: most metadata is measured without encoding it.
    const tooLarge = metadata.length * 3 > config.offsetMetadataMaxBytes && utf8Length(metadata) > config.offsetMetadataMaxBytes;
    results.push({ topic: o.topic, partition: o.partition, errorCode: tooLarge ? ErrorCode.OFFSET_METADATA_TOO_LARGE : ErrorCode.NONE });
    if (!tooLarge) accepted.set(offsetKey(o.topic, o.partition), make(o, metadata));
  }
  return { accepted, results };
}

export class OffsetsOps {
  constructor(
    private readonly manager: GroupMetadataManager,
    private readonly config: GroupCoordinatorConfig,
    private readonly nowMs: () => number,
  ) {}

  /** The error for the whole commit, or NONE to go ahead. */
  private commitFence(group: GroupMetadata | undefined, req: CommitRequest): number {
    const simple = req.generationId < 0 && req.memberId === "";
    if (group === undefined) return simple ? ErrorCode.NONE : ErrorCode.ILLEGAL_GENERATION;
    if (group.is("Dead")) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (simple) return group.members.size === 0 ? ErrorCode.NONE : ErrorCode.UNKNOWN_MEMBER_ID;
    if (req.groupInstanceId !== null) {
      const holder = group.staticMembers.get(req.groupInstanceId);
      if (holder !== undefined && holder !== req.memberId) return ErrorCode.FENCED_INSTANCE_ID;
    }
    if (!group.members.has(req.memberId)) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (req.generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    if (group.is("CompletingRebalance")) return ErrorCode.REBALANCE_IN_PROGRESS;
    return ErrorCode.NONE;
  }

  async commit(req: CommitRequest): Promise<PartitionError[]> {
    const all = (code: number) => req.offsets.map((o) => ({ topic: o.topic, partition: o.partition, errorCode: code }));
    const err = this.manager.coordinatorError(req.groupId);
    if (err !== ErrorCode.NONE) return all(err);
    if (req.groupId === "") return all(ErrorCode.INVALID_GROUP_ID);
    let group = this.manager.getGroup(req.groupId);
    const fence = this.commitFence(group, req);
    if (fence !== ErrorCode.NONE) return all(fence);
    group ??= this.manager.getOrCreateGroup(req.groupId);
    const now = BigInt(this.nowMs());
    // As Kafka's KafkaApis: v1's timestamp is the commit time, not an expiry; only v2-4's
    // retention time sets an expire timestamp.
    const expire = req.retentionTimeMs >= 0n ? now + req.retentionTimeMs : -1n;
    const { accepted, results } = acceptOffsets(req.offsets, this.config, (o, metadata) => ({
      offset: o.offset,
      leaderEpoch: o.leaderEpoch,
      metadata,
      commitTimestampMs: req.commitTimestampMs >= 0n ? req.commitTimestampMs : now,
      expireTimestampMs: expire,
    }));
    const code = accepted.size > 0 ? await this.manager.storeOffsets(group, accepted) : ErrorCode.NONE;
    if (code !== ErrorCode.NONE) for (const r of results) if (r.errorCode === ErrorCode.NONE) r.errorCode = code;
    return results;
  }

  /**
   * Committed offsets of a group: for the partitions asked, or all when topics is null. A partition
   * with no commit answers offset -1 with no error, as Kafka does. requireStable (OffsetFetch v7+,
   * read_committed consumers): a partition with an offset in an open transaction answers
   * UNSTABLE_OFFSET_COMMIT (offset -1) and the client retries, as Kafka's handleFetchOffsets.
   */
  fetch(groupId: string, topics: { topic: string; partitions: number[] }[] | null, requireStable = false) {
    const err = this.manager.coordinatorError(groupId);
    const group = err === ErrorCode.NONE ? this.manager.getGroup(groupId) : undefined;
    const entry = (topic: string, partition: number) => {
      const k = offsetKey(topic, partition);
      const unstable = requireStable && group !== undefined && group.hasPendingTxnOffset(k);
      const o = unstable ? undefined : group?.offsets.get(k);
      return {
        topic,
        partition,
        offset: o?.offset ?? -1n,
        leaderEpoch: o?.leaderEpoch ?? -1,
        metadata: o?.metadata ?? "",
        errorCode: unstable ? ErrorCode.UNSTABLE_OFFSET_COMMIT : ErrorCode.NONE,
      };
    };
    if (err !== ErrorCode.NONE) return { errorCode: err, partitions: [] as ReturnType<typeof entry>[] };
    if (topics === null) {
      const partitions = [...(group?.offsets.keys() ?? [])].map((k) => {
        const { topic, partition } = splitOffsetKey(k);
        return entry(topic, partition);
      });
      return { errorCode: ErrorCode.NONE, partitions };
    }
    return { errorCode: ErrorCode.NONE, partitions: topics.flatMap((t) => t.partitions.map((p) => entry(t.topic, p))) };
  }

  /** DeleteGroups: only groups without members; their offsets and metadata get tombstones. */
  async deleteGroup(groupId: string): Promise<number> {
    const err = this.manager.coordinatorError(groupId);
    if (err !== ErrorCode.NONE) return err;
    const group = this.manager.getGroup(groupId);
    if (group === undefined || group.is("Dead")) return ErrorCode.GROUP_ID_NOT_FOUND;
    if (!group.is("Empty")) return ErrorCode.NON_EMPTY_GROUP;
    const code = await this.manager.removeOffsets(group, [...group.offsets.keys()], true);
    if (code !== ErrorCode.NONE) return code;
    if (group.is("Empty")) {
      group.transitionTo("Dead", this.nowMs());
      this.manager.groups.delete(groupId);
    }
    return ErrorCode.NONE;
  }

  /**
   * OffsetDelete: removes committed offsets of partitions the group does not consume now
   * (subscribedTopics is what the members' subscriptions name; empty for groups without members).
   */
  async deleteOffsets(groupId: string, partitions: { topic: string; partition: number }[], subscribedTopics: Set<string>) {
    const err = this.manager.coordinatorError(groupId);
    if (err !== ErrorCode.NONE) return { errorCode: err, partitions: [] as PartitionError[] };
    const group = this.manager.getGroup(groupId);
    if (group === undefined || group.is("Dead")) return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, partitions: [] as PartitionError[] };
    const results: PartitionError[] = [];
    const doomed: string[] = [];
    for (const p of partitions) {
      if (subscribedTopics.has(p.topic)) {
        results.push({ ...p, errorCode: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC });
        continue;
      }
      results.push({ ...p, errorCode: ErrorCode.NONE });
      if (group.offsets.has(offsetKey(p.topic, p.partition))) doomed.push(offsetKey(p.topic, p.partition));
    }
    const code = await this.manager.removeOffsets(group, doomed, false);
    if (code !== ErrorCode.NONE) return { errorCode: code, partitions: [] as PartitionError[] };
    return { errorCode: ErrorCode.NONE, partitions: results };
  }
}
