// LeaderAndIsr (4), v0-7: the controller's partition states for this broker (which it leads,
// which it follows and from whom), applied through the local control plane, the same call the
// controller makes when it runs in this process. Checked first, in this order (each refusal
// answered for the whole request and echoed on every partition, as Kafka's getErrorResponse):
// CLUSTER_AUTHORIZATION_FAILED when the sender may not send inter-broker requests
// (inter_broker.ts: CLUSTER_ACTION with an authorizer; else only the inter-broker listener, never
// in single-node mode); STALE_BROKER_EPOCH when the broker epoch is not this broker's
// registration, STALE_CONTROLLER_EPOCH when the sender is not the registry's controller
// (control_fence.ts; v0-1 carry no broker epoch and are always refused). Otherwise per partition
// NONE, or UNKNOWN_TOPIC_OR_PARTITION for a partition whose replicas do not include this broker
// (ignored, as Kafka ignores it), KAFKA_STORAGE_ERROR for a partition whose log dir is offline
// here (the controller moves its leadership). Another expected failure (KafkaError) is answered on every
// partition. The request's liveLeaders addresses are not used: a follower reaches its leader at
// the address the metadata or the registry holds (local_channel.ts).
import { decodeLeaderAndIsrRequest, leaderAndIsrResponse } from "../../controller/mod.ts";
import { LeaderAndIsrApi } from "../../protocol/mod.ts";
import type { PartitionState } from "../../replication/mod.ts";
import { ErrorCode, KafkaError } from "../../util/mod.ts";
import { checkControlNames } from "./control_names.ts";
import type { ApiHandler } from "../dispatch.ts";
import { refuseInterBroker } from "../inter_broker.ts";
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
    if (refuseInterBroker(s, ctx, "LeaderAndIsr", fields)) {
      return answer(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, () => ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    }
    const fenced = await s.controlFence.check("LeaderAndIsr", r, s.logger, { ...fields, remote: ctx.conn.remote });
    if (fenced !== ErrorCode.NONE) return answer(fenced, () => fenced);
    let errors: { topic: string; partition: number; errorCode: number }[] = [];
    try {
      if (s.controlPlane.leaderAndIsrPartitionErrors === undefined) await s.controlPlane.leaderAndIsr(s.brokerId, r.controllerEpoch, r.topics, []);
      else errors = await s.controlPlane.leaderAndIsrPartitionErrors(s.brokerId, r.controllerEpoch, r.topics, []);
    } catch (e) {
      if (!(e instanceof KafkaError)) throw e;
      s.logger.warn({ ...fields, errorCode: e.code, reason: e.message }, "LeaderAndIsr refused");
      const top = e.code === ErrorCode.STALE_CONTROLLER_EPOCH ? e.code : ErrorCode.NONE;
      return answer(top, () => e.code);
    }
    // A partition whose log dir is offline answers KAFKA_STORAGE_ERROR: the controller then
    // elects another ISR member (Kafka's LeaderAndIsrResponseReceived).
    const storage = new Set(errors.filter((e) => e.errorCode === ErrorCode.KAFKA_STORAGE_ERROR).map((e) => `${e.topic}\u0000${e.partition}`));
    return answer(ErrorCode.NONE, (p) =>
      !p.replicas.includes(s.brokerId) ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
      : storage.has(`${p.topic}\u0000${p.partition}`) ? ErrorCode.KAFKA_STORAGE_ERROR
      : ErrorCode.NONE);
  },
};
