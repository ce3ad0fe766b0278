// LeaderAndIsr (4), v0-7: the controller's partition states for this broker (which it leads,
// which it follows and from whom), applied through the local control plane, the same call the
// controller makes when it runs in this process. Answers, as Kafka does: STALE_BROKER_EPOCH
// (v2+: the request names an older registration of this broker) or STALE_CONTROLLER_EPOCH (an
// older controller) for the whole request, echoed on every partition; otherwise per partition
// NONE, or UNKNOWN_TOPIC_OR_PARTITION for a partition whose replicas do not include this broker
// (ignored, as Kafka ignores it). Another expected failure (KafkaError) is answered on every
// partition.
import { decodeLeaderAndIsrRequest, isStaleBrokerEpoch, leaderAndIsrResponse } from "../../controller/mod.ts";
import { LeaderAndIsrApi } from "../../protocol/mod.ts";
import type { PartitionState } from "../../replication/mod.ts";
import { ErrorCode, KafkaError } from "../../util/mod.ts";
import { checkControlNames } from "./control_names.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const leaderAndIsrHandler: ApiHandler<BrokerServices> = {
  api: LeaderAndIsrApi,
  async handle(s, ctx, req) {
    const r = decodeLeaderAndIsrRequest(ctx.version, req);
    checkControlNames("LeaderAndIsr", r.topics.flatMap((t) => [{ topic: t.name }, ...t.partitions.map((p) => ({ topic: t.name, partition: p.partition }))]));
    const answer = (errorCode: number, partitionError: (p: PartitionState) => number) =>
      leaderAndIsrResponse(
        ctx.version,
        errorCode,
        r.topics.flatMap((t) =>
          t.partitions.map((p) => ({ topic: t.name, topicId: t.topicId, partition: p.partition, errorCode: partitionError(p) }))
        ),
      );
    const fields = { controller: r.controllerId, controllerEpoch: r.controllerEpoch, brokerEpoch: String(r.brokerEpoch) };
    if (isStaleBrokerEpoch(r.brokerEpoch, s.brokerEpoch())) {
      s.logger.warn({ ...fields, currentBrokerEpoch: String(s.brokerEpoch()) }, "LeaderAndIsr refused: stale broker epoch");
      return answer(ErrorCode.STALE_BROKER_EPOCH, () => ErrorCode.STALE_BROKER_EPOCH);
    }
    try {
      await s.controlPlane.leaderAndIsr(s.brokerId, r.controllerEpoch, r.topics, r.liveLeaders);
    } catch (e) {
      if (!(e instanceof KafkaError)) throw e;
      s.logger.warn({ ...fields, errorCode: e.code, reason: e.message }, "LeaderAndIsr refused");
      const top = e.code === ErrorCode.STALE_CONTROLLER_EPOCH ? e.code : ErrorCode.NONE;
      return answer(top, () => e.code);
    }
    return answer(ErrorCode.NONE, (p) => p.replicas.includes(s.brokerId) ? ErrorCode.NONE : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  },
};
