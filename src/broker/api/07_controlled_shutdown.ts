// ControlledShutdown (7), v1-3: a broker about to stop asks this broker's controller to move its
// partition leaderships away; the answer lists the partitions it still leads. NOT_CONTROLLER when
// this broker's controller is not the active one (the asking broker then finds the controller
// again); otherwise the controller's answer (STALE_BROKER_EPOCH unless the broker epoch is the
// asking broker's registration exactly, v2+; v1 carries none and is refused). First,
// CLUSTER_AUTHORIZATION_FAILED when the sender may not send inter-broker requests (inter_broker.ts):
// without that, anyone could have the controller move every leadership off a healthy broker.
// v0 is not answered: its request header has no client id, which the dispatcher always reads
// (Kafka's only exception to the header rules), so ApiVersions advertises v1-3.
import { ControlledShutdownApi } from "../../protocol/mod.ts";
import { ErrorCode, KafkaError } from "../../util/mod.ts";
import type { ApiHandler } from "../dispatch.ts";
import { refuseInterBroker } from "../inter_broker.ts";
import type { BrokerServices } from "../services.ts";

const fromV1 = { min: 1, max: ControlledShutdownApi.request.versions.max };

export const controlledShutdownHandler: ApiHandler<BrokerServices> = {
  api: {
    ...ControlledShutdownApi,
    request: { ...ControlledShutdownApi.request, versions: fromV1 },
    response: { ...ControlledShutdownApi.response, versions: fromV1 },
  },
  async handle(s, ctx, req) {
    const brokerId = req.brokerId as number;
    const brokerEpoch = req.brokerEpoch as bigint;
    if (refuseInterBroker(s, ctx, "ControlledShutdown", { broker: brokerId, brokerEpoch: String(brokerEpoch) })) {
      return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, remainingPartitions: [] };
    }
    if (!s.controller.isActive) return { errorCode: ErrorCode.NOT_CONTROLLER, remainingPartitions: [] };
    try {
      const r = await s.controller.controlledShutdown(brokerId, brokerEpoch);
      s.logger.info({ broker: brokerId, errorCode: r.errorCode, remaining: r.remaining.length }, "controlled shutdown asked");
      return {
        errorCode: r.errorCode,
        remainingPartitions: r.remaining.map((p) => ({ topicName: p.topic, partitionIndex: p.partition })),
      };
    } catch (e) {
      if (!(e instanceof KafkaError)) throw e;
      s.logger.warn({ broker: brokerId, errorCode: e.code, reason: e.message }, "controlled shutdown refused");
      return { errorCode: e.code, remainingPartitions: [] };
    }
  },
};
