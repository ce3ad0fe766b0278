// WriteTxnMarkers (27), v0-1: a transaction coordinator asks this broker, as partition leader, to
// end a producer's transaction on each listed partition with a commit or abort marker (a control
// batch, protocol/control_batch.ts), as KafkaApis 3.8 handleWriteTxnMarkersRequest does:
// - Inter-broker only (inter_broker.ts; Kafka: ALTER or CLUSTER_ACTION on the cluster): otherwise
//   every partition answers CLUSTER_AUTHORIZATION_FAILED.
// - Per partition: UNKNOWN_TOPIC_OR_PARTITION when this broker has no replica of it,
//   NOT_LEADER_OR_FOLLOWER when it does not lead it; the marker is then checked against the
//   producer state (an older producer epoch: INVALID_PRODUCER_EPOCH; an older coordinator epoch:
//   TRANSACTION_COORDINATOR_FENCED; an unknown producer is accepted, as Kafka writes its marker),
//   written with acks=all and answered once the ISR has it (REQUEST_TIMED_OUT after
//   txnMarkerReplicationTimeoutMs). Markers of different producers are written independently.
import { AclOperation, clusterResourceName, ResourceType } from "../../authorizer/mod.ts";
import { WriteTxnMarkersApi } from "../../protocol/mod.ts";
import { ErrorCode, txnMarkerReplicationTimeoutMs } from "../../util/mod.ts";
import { allowed } from "../authorize.ts";
import type { ApiHandler } from "../dispatch.ts";
import { refuseInterBroker } from "../inter_broker.ts";
import type { BrokerServices } from "../services.ts";

interface MarkerRequest {
  producerId: bigint;
  producerEpoch: number;
  transactionResult: boolean;
  topics: { name: string; partitionIndexes: number[] }[];
  coordinatorEpoch: number;
}

export const writeTxnMarkersHandler: ApiHandler<BrokerServices> = {
  api: WriteTxnMarkersApi,
  async handle(s, ctx, req) {
    const markers = req.markers as MarkerRequest[];
    const answer = (m: MarkerRequest, code: (topic: string, partition: number) => number) => ({
      producerId: m.producerId,
      topics: m.topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((p) => ({ partitionIndex: p, errorCode: code(t.name, p) })) })),
    });
    // Kafka asks ALTER on the cluster first, then CLUSTER_ACTION (inter_broker.ts decides the rest).
    const alter = s.config.zookeeperConnect !== null && s.authorizer !== null && allowed(s, ctx, AclOperation.ALTER, ResourceType.CLUSTER, clusterResourceName);
    if (!alter && refuseInterBroker(s, ctx, "WriteTxnMarkers", { markers: markers.length })) {
      return { markers: markers.map((m) => answer(m, () => ErrorCode.CLUSTER_AUTHORIZATION_FAILED)) };
    }
    const out = await Promise.all(markers.map(async (m) => {
      const marker = { producerId: m.producerId, producerEpoch: m.producerEpoch, coordinatorEpoch: m.coordinatorEpoch, committed: m.transactionResult };
      // Appended in the order listed (the appends run before the first await), then waited for together.
      const codes = new Map<string, Promise<number>>();
      for (const t of m.topics) {
        for (const p of t.partitionIndexes) codes.set(`${p}:${t.name}`, s.replicaManager.appendTxnMarker(t.name, p, marker, txnMarkerReplicationTimeoutMs));
      }
      const settled = new Map<string, number>();
      for (const [k, c] of codes) settled.set(k, await c);
      return answer(m, (topic, partition) => settled.get(`${partition}:${topic}`) ?? ErrorCode.UNKNOWN_SERVER_ERROR);
    }));
    return { markers: out };
  },
};
