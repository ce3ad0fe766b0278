// OffsetCommit (8), v0-9. v0 stores offsets in the registry at
// /consumers/<group>/offsets/<topic>/<partition>, as Kafka 0.8 clients expect; v1+ in
// __consumer_offsets through the group coordinator (generation-fenced, see coordinator/offsets.ts).
// As Kafka: READ on the group (else GROUP_AUTHORIZATION_FAILED on every partition), then READ on
// each topic (TOPIC_AUTHORIZATION_FAILED, before UNKNOWN_TOPIC_OR_PARTITION).
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { OffsetCommitApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { authorizedNames } from "../authorize_checks.ts";
import { allowed } from "../authorize.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";
import { commitToRegistry } from "./registry_offsets.ts";

interface CommitTopic {
  name: string;
  partitions: {
    partitionIndex: number;
    committedOffset: bigint;
    committedLeaderEpoch: number;
    commitTimestamp: bigint;
    committedMetadata: string | null;
  }[];
}

export const offsetCommitHandler: ApiHandler<BrokerServices> = {
  api: OffsetCommitApi,
  async handle(s, ctx, req) {
    const groupId = req.groupId as string;
    const topics = req.topics as CommitTopic[];
    const answerAll = (code: (t: string) => number) => ({
      throttleTimeMs: 0,
      topics: topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code(t.name) })) })),
    });
    if (!allowed(s, ctx, AclOperation.READ, ResourceType.GROUP, groupId)) return answerAll(() => ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const readable = authorizedNames(s, ctx, AclOperation.READ, ResourceType.TOPIC, topics.map((t) => t.name));
    const flat = topics.flatMap((t) =>
      t.partitions.map((p) => ({
        topic: t.name,
        partition: p.partitionIndex,
        offset: p.committedOffset,
        leaderEpoch: p.committedLeaderEpoch,
        metadata: p.committedMetadata,
        commitTimestamp: p.commitTimestamp,
      }))
    );
    // As Kafka: partitions this cluster does not have are refused one by one, the rest committed.
    const known = (o: { topic: string; partition: number }) =>
      readable.has(o.topic) && s.metadata.getPartition(o.topic, o.partition) !== undefined;
    const existing = flat.filter(known);
    const committed = ctx.version === 0
      ? await commitToRegistry(s, groupId, existing)
      : await s.coordinator.offsets.commit({
        groupId,
        generationId: req.generationIdOrMemberEpoch as number,
        memberId: req.memberId as string,
        groupInstanceId: req.groupInstanceId as string | null,
        commitTimestampMs: ctx.version === 1 ? (existing[0]?.commitTimestamp ?? -1n) : -1n,
        retentionTimeMs: req.retentionTimeMs as bigint,
        offsets: existing,
      });
    let j = 0;
    const results = flat.map((o) =>
      known(o) ? committed[j++] : { errorCode: readable.has(o.topic) ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.TOPIC_AUTHORIZATION_FAILED }
    );
    let i = 0;
    return {
      throttleTimeMs: 0,
      topics: topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: results[i++]?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR })),
      })),
    };
  },
  errorResponse(req, _version, errorCode) {
    const topics = req.topics as { name: string; partitions: { partitionIndex: number }[] }[];
    return { throttleTimeMs: 0, topics: topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) })) };
  },
};
