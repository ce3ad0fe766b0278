// StopReplica (5), v0-4: the controller tells this broker to stop fetching some partitions and,
// for deleted topics or replicas moved away, to delete their logs; applied through the local
// control plane, one call per deletePartition value (v3+ give it per partition). Checked first,
// each refusal answered for the whole request and echoed on every partition (Kafka's
// getErrorResponse): CLUSTER_AUTHORIZATION_FAILED when the sender may not send inter-broker
// requests (inter_broker.ts), STALE_BROKER_EPOCH when the broker epoch is not this broker's
// registration (v0 carries none: always refused), STALE_CONTROLLER_EPOCH when the sender is not
// the registry's controller (control_fence.ts) or an older one. Otherwise each partition's NONE,
// or the KafkaError code its call failed with. The per-partition leader epochs (v3+) are not
// checked: the control plane's stopReplica takes none.
import { decodeStopReplicaRequest, stopReplicaResponse } from "../../controller/mod.ts";
import { StopReplicaApi } from "../../protocol/mod.ts";
import { ErrorCode, KafkaError } from "../../util/mod.ts";
import { checkControlNames } from "./control_names.ts";
import type { ApiHandler } from "../dispatch.ts";
import { refuseInterBroker } from "../inter_broker.ts";
import type { BrokerServices } from "../services.ts";

export const stopReplicaHandler: ApiHandler<BrokerServices> = {
  api: StopReplicaApi,
  async handle(s, ctx, req) {
    const r = decodeStopReplicaRequest(ctx.version, req);
    checkControlNames("StopReplica", r.partitions);
    const fields = { controller: r.controllerId, controllerEpoch: r.controllerEpoch, brokerEpoch: String(r.brokerEpoch) };
    const all = (code: number) => stopReplicaResponse(code, r.partitions.map((p) => ({ topic: p.topic, partition: p.partition, errorCode: code })));
    if (refuseInterBroker(s, ctx, "StopReplica", fields)) return all(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    const fenced = await s.controlFence.check("StopReplica", r, s.logger, { ...fields, remote: ctx.conn.remote });
    if (fenced !== ErrorCode.NONE) return all(fenced);
    const errors = new Map<boolean, number>();
    for (const del of [false, true]) {
      const parts = r.partitions.filter((p) => p.deletePartition === del).map((p) => ({ topic: p.topic, partition: p.partition }));
      if (parts.length === 0) continue;
      try {
        await s.controlPlane.stopReplica(s.brokerId, r.controllerEpoch, parts, del);
        errors.set(del, ErrorCode.NONE);
      } catch (e) {
        if (!(e instanceof KafkaError)) throw e;
        s.logger.warn({ ...fields, deletePartitions: del, errorCode: e.code, reason: e.message }, "StopReplica refused");
        if (e.code === ErrorCode.STALE_CONTROLLER_EPOCH) return all(e.code);
        errors.set(del, e.code);
      }
    }
    return stopReplicaResponse(
      ErrorCode.NONE,
      r.partitions.map((p) => ({ topic: p.topic, partition: p.partition, errorCode: errors.get(p.deletePartition) ?? ErrorCode.NONE })),
    );
  },
};
