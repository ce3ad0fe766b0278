// AlterPartition (56), v0-3 (KIP-497): a partition leader proposes an ISR change to the active
// controller, which checks it, writes the state znode and answers the new partition epoch
// (controller/alter_partition.ts has the checks and Kafka 3.8's error codes). Inter-broker only:
// CLUSTER_AUTHORIZATION_FAILED unless the sender may send inter-broker requests (inter_broker.ts:
// CLUSTER_ACTION with an authorizer, else the inter-broker listener; never in single-node mode),
// as Kafka authorizes it (CLUSTER_ACTION); without this check any client could empty an ISR.
// NOT_CONTROLLER when this broker's controller is not the active one. v0-1 name topics, v2+ give
// their ids; v1+ carry the leader recovery state (strand's leaders are always RECOVERED), v3 the
// broker epoch of each new ISR member (KIP-903), checked against its registration.
import { AlterPartitionApi, type Struct } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import type { ApiHandler } from "../dispatch.ts";
import { refuseInterBroker } from "../inter_broker.ts";
import type { BrokerServices } from "../services.ts";

const TOPIC_IDS_FROM = 2;
const ISR_EPOCHS_FROM = 3;

interface RequestPartition {
  partitionIndex: number;
  leaderEpoch: number;
  newIsr?: number[];
  newIsrWithEpochs?: { brokerId: number; brokerEpoch: bigint }[];
  partitionEpoch: number;
}
interface RequestTopic {
  topicName: string;
  topicId: Uint8Array;
  partitions: RequestPartition[];
}

function partitionAnswer(partitionIndex: number, errorCode: number): Struct {
  return { partitionIndex, errorCode, leaderId: -1, leaderEpoch: -1, isr: [], leaderRecoveryState: 0, partitionEpoch: -1 };
}

export const alterPartitionHandler: ApiHandler<BrokerServices> = {
  api: AlterPartitionApi,
  async handle(s, ctx, req) {
    const brokerId = req.brokerId as number;
    const brokerEpoch = req.brokerEpoch as bigint;
    const topics = req.topics as RequestTopic[];
    if (refuseInterBroker(s, ctx, "AlterPartition", { broker: brokerId })) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, topics: [] };
    }
    if (!s.controller.isActive) return { throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, topics: [] };
    const byId = ctx.version >= TOPIC_IDS_FROM;
    const items = topics.flatMap((t) =>
      t.partitions.map((p) => {
        const withEpochs = ctx.version >= ISR_EPOCHS_FROM ? p.newIsrWithEpochs ?? [] : null;
        return {
          topic: byId ? null : t.topicName,
          topicId: byId ? t.topicId : null,
          partition: p.partitionIndex,
          leaderEpoch: p.leaderEpoch,
          newIsr: withEpochs === null ? p.newIsr ?? [] : withEpochs.map((m) => m.brokerId),
          newIsrEpochs: withEpochs === null ? null : withEpochs.map((m) => m.brokerEpoch),
          partitionEpoch: p.partitionEpoch,
        };
      })
    );
    const answer = await s.controller.alterPartition(brokerId, brokerEpoch, ctx.version, items);
    if (answer.errorCode !== ErrorCode.NONE) return { throttleTimeMs: 0, errorCode: answer.errorCode, topics: [] };
    let i = 0;
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      topics: topics.map((t) => ({
        topicName: t.topicName,
        topicId: t.topicId,
        partitions: t.partitions.map((p) => {
          const r = answer.partitions[i++];
          if (r.state === null) return partitionAnswer(p.partitionIndex, r.errorCode);
          return {
            partitionIndex: p.partitionIndex,
            errorCode: ErrorCode.NONE,
            leaderId: r.state.leader,
            leaderEpoch: r.state.leaderEpoch,
            isr: r.state.isr,
            leaderRecoveryState: 0,
            partitionEpoch: r.state.partitionEpoch,
          };
        }),
      })),
    };
  },
};
