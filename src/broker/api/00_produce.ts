// Produce (0), v3-9. Each partition's record set is validated (header, CRC32C, counts, size) and
// appended as bytes by the partition leader. acks: 0 (no response; a failure closes the
// connection, as Kafka does, so the client refreshes metadata), 1, or -1 (all: the same as 1
// while partitions have no followers; the replication issue adds the purgatory wait).
import { ProduceApi } from "../../protocol/mod.ts";
import type { Struct } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import type { ApiHandler } from "../dispatch.ts";
import { type BrokerServices, CloseConnection } from "../services.ts";

interface PartitionData {
  index: number;
  records: Uint8Array | null;
}
interface TopicData {
  name: string;
  partitionData: PartitionData[];
}

export const produceHandler: ApiHandler<BrokerServices> = {
  api: ProduceApi,
  handle(s, ctx, req) {
    const acks = req.acks as number;
    const topics = req.topicData as TopicData[];
    const badAcks = acks !== 0 && acks !== 1 && acks !== -1;
    let failed = false;
    const responses = topics.map((t) => ({
      name: t.name,
      partitionResponses: t.partitionData.map((p): Struct => {
        const r = badAcks
          ? { errorCode: ErrorCode.INVALID_REQUIRED_ACKS, errorMessage: `acks=${acks}`, baseOffset: -1, logStartOffset: -1 }
          : s.replicaManager.appendToPartition(t.name, p.index, p.records, s.config.messageMaxBytes);
        if (r.errorCode !== ErrorCode.NONE) {
          failed = true;
          s.logger.debug({ topic: t.name, partition: p.index, errorCode: r.errorCode, reason: r.errorMessage }, "produce refused");
        }
        return {
          index: p.index,
          errorCode: r.errorCode,
          baseOffset: BigInt(r.baseOffset),
          logAppendTimeMs: -1n,
          logStartOffset: BigInt(r.logStartOffset),
          recordErrors: [],
          errorMessage: r.errorMessage,
        };
      }),
    }));
    if (acks === 0) {
      if (failed) throw new CloseConnection("acks=0 produce failed");
      return null;
    }
    return { responses, throttleTimeMs: 0 };
  },
};
