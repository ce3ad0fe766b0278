// Produce (0), v0-9. Each partition's record set is validated (header, CRC32C, counts, size) and
// appended as bytes by the partition leader; in v0-2 a legacy message set (magic 0/1) is first
// up-converted into one record batch v2 (protocol/message_set.ts), the only format stored.
// acks: 0 (no response; a failure closes the connection, as Kafka does, so the client refreshes
// metadata), 1, or -1 (all: the same as 1 while partitions have no followers; the replication
// issue adds the purgatory wait).
import { anyBatchUsesCodec, Compression, ProduceApi } from "../../protocol/mod.ts";
import type { Struct } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { internalTopics } from "../../controller/mod.ts";
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
        // Internal topics (__consumer_offsets) take only their coordinator's writes, which do not
        // come through here: a client's produce is INVALID_TOPIC_EXCEPTION, as Kafka answers.
        const r = badAcks
          ? { errorCode: ErrorCode.INVALID_REQUIRED_ACKS, errorMessage: `acks=${acks}`, baseOffset: -1, logStartOffset: -1 }
          : internalTopics.has(t.name)
          ? { errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: `cannot append to internal topic ${t.name}`, baseOffset: -1, logStartOffset: -1 }
          // zstd arrived with Produce v7 (KIP-110); older requests may not carry it.
          : ctx.version < 7 && p.records !== null && anyBatchUsesCodec(p.records, Compression.zstd)
          ? { errorCode: ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, errorMessage: `zstd needs Produce v7+, got v${ctx.version}`, baseOffset: -1, logStartOffset: -1 }
          : s.replicaManager.appendToPartition(t.name, p.index, p.records, s.config.messageMaxBytes, ctx.version < 3);
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
