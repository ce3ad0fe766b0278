// DescribeProducers (61), v0: the producers with state on each partition (kafka-transactions.sh
// describe-producers), from the local replica's producer state (Log.producerState). As Kafka's
// ReplicaManager.activeProducerState, any replica answers, leader or follower (the admin client
// may ask a chosen broker, KIP-664); a broker without a replica answers NOT_LEADER_OR_FOLLOWER,
// or UNKNOWN_TOPIC_OR_PARTITION when the partition does not exist, KAFKA_STORAGE_ERROR when its
// log dir failed. Each topic needs READ (TOPIC_AUTHORIZATION_FAILED, before the existence check).
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { DescribeProducersApi, type Struct } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { authorizedNames } from "../authorize_checks.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

function partitionError(partitionIndex: number, errorCode: number, errorMessage: string | null): Struct {
  return { partitionIndex, errorCode, errorMessage, activeProducers: [] };
}

function activeProducerState(s: BrokerServices, topic: string, partitionIndex: number): Struct {
  if (s.replicaManager.isOffline(topic, partitionIndex)) return partitionError(partitionIndex, ErrorCode.KAFKA_STORAGE_ERROR, null);
  const part = s.replicaManager.getPartition(topic, partitionIndex);
  if (part === undefined) {
    const known = (s.metadata.getTopic(topic)?.partitions.length ?? 0) > partitionIndex && partitionIndex >= 0;
    return partitionError(partitionIndex, known ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, null);
  }
  const activeProducers: Struct[] = [];
  for (const [producerId, e] of part.log.producerState.activeProducers()) {
    activeProducers.push({
      producerId,
      producerEpoch: e.producerEpoch,
      lastSequence: e.batches.length === 0 ? -1 : e.batches[e.batches.length - 1].lastSeq,
      lastTimestamp: BigInt(e.lastTimestampMs),
      coordinatorEpoch: e.coordinatorEpoch,
      currentTxnStartOffset: BigInt(e.currentTxnFirstOffset),
    });
  }
  return { partitionIndex, errorCode: ErrorCode.NONE, errorMessage: null, activeProducers };
}

export const describeProducersHandler: ApiHandler<BrokerServices> = {
  api: DescribeProducersApi,
  handle(s, ctx, req) {
    const topics = req.topics as { name: string; partitionIndexes: number[] }[];
    const readable = authorizedNames(s, ctx, AclOperation.READ, ResourceType.TOPIC, topics.map((t) => t.name));
    return {
      throttleTimeMs: 0,
      topics: topics.map((t) => {
        const denied = !readable.has(t.name);
        const unknown = !denied && s.metadata.getTopic(t.name) === undefined;
        return {
          name: t.name,
          partitions: t.partitionIndexes.map((p) => {
            if (denied) return partitionError(p, ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed.");
            if (unknown) return partitionError(p, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.");
            return activeProducerState(s, t.name, p);
          }),
        };
      }),
    };
  },
};
