// ElectLeaders (43), v0-2. Asks this broker's controller to elect leaders: v0 always the preferred
// replica, v1+ electionType 0 (preferred) or 1 (unclean: any live replica when no ISR member is).
// topicPartitions null means every partition, and then (as Kafka answers) partitions that needed
// no election are left out. A broker that is not the active controller answers NOT_CONTROLLER
// for each partition named. Needs ALTER on the cluster: else CLUSTER_AUTHORIZATION_FAILED at the
// top (v1+) and for each partition named, as in Kafka.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { ElectLeadersApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import type { PartitionResult } from "../../controller/mod.ts";
import { clusterAllowed } from "../authorize_checks.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const electLeadersHandler: ApiHandler<BrokerServices> = {
  api: ElectLeadersApi,
  async handle(s, ctx, req) {
    const electionType = ctx.version >= 1 ? (req.electionType as number) : 0;
    const asked = req.topicPartitions as { topic: string; partitions: number[] }[] | null;
    const partitions = asked === null ? null : asked.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition })));
    if (electionType !== 0 && electionType !== 1) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REQUEST, replicaElectionResults: [] };
    }
    let results: PartitionResult[];
    const denied = !clusterAllowed(s, ctx, AclOperation.ALTER);
    if (denied) {
      results = (partitions ?? []).map((tp) => ({ ...tp, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null }));
    } else if (!s.controller.isActive) {
      results = (partitions ?? []).map((tp) => ({ ...tp, errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: null }));
    } else {
      results = await s.controller.electLeaders(electionType, partitions);
      if (partitions === null) results = results.filter((r) => r.errorCode !== ErrorCode.ELECTION_NOT_NEEDED);
    }
    const byTopic = new Map<string, { partitionId: number; errorCode: number; errorMessage: string | null }[]>();
    for (const r of results) {
      const list = byTopic.get(r.topic) ?? [];
      list.push({ partitionId: r.partition, errorCode: r.errorCode, errorMessage: r.errorMessage });
      byTopic.set(r.topic, list);
    }
    return {
      throttleTimeMs: 0,
      errorCode: denied ? ErrorCode.CLUSTER_AUTHORIZATION_FAILED : ErrorCode.NONE,
      replicaElectionResults: [...byTopic].map(([topic, partitionResult]) => ({ topic, partitionResult })),
    };
  },
  errorResponse(req, _version, errorCode, errorMessage) {
    // v1+ carry a top-level code; v0 only the per-partition ones, so those are filled too.
    const named = (req.topicPartitions as { topic: string; partitions: number[] }[] | null) ?? [];
    return {
      throttleTimeMs: 0,
      errorCode,
      replicaElectionResults: named.map((t) => ({ topic: t.topic, partitionResult: t.partitions.map((partitionId) => ({ partitionId, errorCode, errorMessage })) })),
    };
  },
};
