// UpdateMetadata (6), v0-8: the controller's view of the live brokers and every partition's
// state, applied to this broker's metadata cache through the local control plane (topics being
// deleted arrive as partitions led by -2 and are passed on as deleted topics). Each broker is
// reached at its endpoint on this broker's inter-broker listener (the one the controller names
// too), else its first endpoint. Answers CLUSTER_AUTHORIZATION_FAILED (the sender may not send
// inter-broker requests: inter_broker.ts), STALE_BROKER_EPOCH (not this broker's registration;
// v0-4 carry no broker epoch and are always refused), STALE_CONTROLLER_EPOCH (not the registry's
// controller, or an older one: control_fence.ts), another KafkaError's code, or NONE.
import { decodeUpdateMetadataRequest } from "../../controller/mod.ts";
import { UpdateMetadataApi } from "../../protocol/mod.ts";
import { ErrorCode, KafkaError } from "../../util/mod.ts";
import { checkControlNames } from "./control_names.ts";
import type { ApiHandler } from "../dispatch.ts";
import { refuseInterBroker } from "../inter_broker.ts";
import type { BrokerServices } from "../services.ts";

export const updateMetadataHandler: ApiHandler<BrokerServices> = {
  api: UpdateMetadataApi,
  async handle(s, ctx, req) {
    const r = decodeUpdateMetadataRequest(ctx.version, req, s.config.security.interBrokerListener);
    checkControlNames("UpdateMetadata", [
      ...r.topics.flatMap((t) => [{ topic: t.name }, ...t.partitions.map((p) => ({ topic: t.name, partition: p.partition }))]),
      ...r.deletedTopics.map((topic) => ({ topic })),
    ]);
    const fields = { controller: r.controllerId, controllerEpoch: r.controllerEpoch, brokerEpoch: String(r.brokerEpoch) };
    if (refuseInterBroker(s, ctx, "UpdateMetadata", fields)) return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED };
    const fenced = await s.controlFence.check("UpdateMetadata", r, s.logger, { ...fields, remote: ctx.conn.remote });
    if (fenced !== ErrorCode.NONE) return { errorCode: fenced };
    try {
      await s.controlPlane.updateMetadata(s.brokerId, r.controllerEpoch, r.controllerId, r.brokers, r.topics, r.deletedTopics);
    } catch (e) {
      if (!(e instanceof KafkaError)) throw e;
      s.logger.warn({ ...fields, errorCode: e.code, reason: e.message }, "UpdateMetadata refused");
      return { errorCode: e.code };
    }
    return { errorCode: ErrorCode.NONE };
  },
};
