// DeleteRecords (21), v0-2: moves each partition's log start offset to the given offset (-1: the
// high watermark), as AdminClient.deleteRecords and kafka-delete-records.sh ask. Codes as Kafka:
// UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, OFFSET_OUT_OF_RANGE (below -1 or past the
// high watermark), POLICY_VIOLATION (cleanup.policy without delete). The answer's low watermark is
// the log start offset after the move. The segments wholly below it go at the next retention check.
// Each topic needs DELETE (TOPIC_AUTHORIZATION_FAILED, before UNKNOWN_TOPIC_OR_PARTITION), as Kafka.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { DeleteRecordsApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { authorizedNames } from "../authorize_checks.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

interface DeleteTopic {
  name: string;
  partitions: { partitionIndex: number; offset: bigint }[];
}

export const deleteRecordsHandler: ApiHandler<BrokerServices> = {
  api: DeleteRecordsApi,
  handle(s, ctx, req) {
    const topics = req.topics as DeleteTopic[];
    const deletable = authorizedNames(s, ctx, AclOperation.DELETE, ResourceType.TOPIC, topics.map((t) => t.name));
    const requests = topics.filter((t) => deletable.has(t.name)).flatMap((t) =>
      t.partitions.map((p) => ({
        topic: t.name,
        partition: p.partitionIndex,
        // Past 2^53 no log reaches: clamp so it stays past the high watermark (OFFSET_OUT_OF_RANGE).
        offset: p.offset > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Math.max(Number(p.offset), -2),
      }))
    );
    const results = s.replicaManager.deleteRecords(requests);
    let i = 0;
    return {
      throttleTimeMs: 0,
      topics: topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => {
          if (!deletable.has(t.name)) return { partitionIndex: p.partitionIndex, lowWatermark: -1n, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED };
          const r = results[i++];
          return { partitionIndex: r.partition, lowWatermark: BigInt(r.lowWatermark), errorCode: s.metadata.notHostedError(t.name, r.partition, r.errorCode) };
        }),
      })),
    };
  },
};
