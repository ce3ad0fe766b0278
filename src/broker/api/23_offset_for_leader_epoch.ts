// OffsetForLeaderEpoch (23), v0-4: for each partition this broker leads, the end offset of the
// asked leader epoch (the start of the next larger one, or the log end offset for the latest)
// and the epoch found, from the leader-epoch cache: what a new follower truncates to (KIP-101)
// and a consumer checks after a leader change (KIP-320). Per partition, as the replica manager
// answers: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR,
// FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH (currentLeaderEpoch, v2+, older / newer than the
// leader's), or -1/-1 for an epoch the log does not know. A request naming a replica (replicaId
// >= 0, v3+: a follower) must be allowed to send inter-broker requests (inter_broker.ts), else
// every partition answers TOPIC_AUTHORIZATION_FAILED (Kafka's answer without CLUSTER_ACTION);
// a replica that is not a live broker is refused with NOT_LEADER_OR_FOLLOWER, and one not
// assigned to a partition as a follower's Fetch is (ReplicaManager).
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { OffsetForLeaderEpochApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { authorizedNames, clusterAllowed } from "../authorize_checks.ts";
import type { ApiHandler } from "../dispatch.ts";
import { refuseInterBroker } from "../inter_broker.ts";
import type { BrokerServices } from "../services.ts";

interface OffsetForLeaderTopic {
  topic: string;
  partitions: { partition: number; currentLeaderEpoch: number; leaderEpoch: number }[];
}

export const offsetForLeaderEpochHandler: ApiHandler<BrokerServices> = {
  api: OffsetForLeaderEpochApi,
  handle(s, ctx, req) {
    const replicaId = req.replicaId as number; // -2 before v3 (the codec's default), -1 for consumers
    const topics = req.topics as OffsetForLeaderTopic[];
    if (replicaId >= 0 && refuseInterBroker(s, ctx, "OffsetForLeaderEpoch", { replica: replicaId })) {
      const denied = { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, leaderEpoch: -1, endOffset: -1n };
      return { throttleTimeMs: 0, topics: topics.map((t) => ({ topic: t.topic, partitions: t.partitions.map((p) => ({ ...denied, partition: p.partition })) })) };
    }
    const refused = replicaId >= 0 && s.metadata.getBroker(replicaId) === undefined;
    if (refused) s.logger.warn({ replica: replicaId }, "OffsetForLeaderEpoch from a replica that is not a live broker");
    // A consumer (KIP-320) needs DESCRIBE on each topic, unless it has CLUSTER_ACTION, as in Kafka.
    const names = topics.map((t) => t.topic);
    const describable = replicaId >= 0 || clusterAllowed(s, ctx, AclOperation.CLUSTER_ACTION)
      ? new Set(names)
      : authorizedNames(s, ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, names);
    return {
      throttleTimeMs: 0,
      topics: topics.map((t) => ({
        topic: t.topic,
        partitions: t.partitions.map((p) => {
          const r = refused
            ? { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, leaderEpoch: -1, endOffset: -1 }
            : !describable.has(t.topic)
            ? { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, leaderEpoch: -1, endOffset: -1 }
            : s.replicaManager.lastOffsetForLeaderEpoch(t.topic, p.partition, p.currentLeaderEpoch, p.leaderEpoch, replicaId);
          return { errorCode: s.metadata.notHostedError(t.topic, p.partition, r.errorCode), partition: p.partition, leaderEpoch: r.leaderEpoch, endOffset: BigInt(r.endOffset) };
        }),
      })),
    };
  },
};
