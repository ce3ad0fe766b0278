// AlterPartitionReassignments (45), v0. Starts moving partitions to new replica sets, or cancels
// a move in progress (replicas null), as KIP-455 describes; the answer comes once each move is
// started (or refused), not when it completes. Only the active controller answers; any other
// broker answers NOT_CONTROLLER at the top level. Needs ALTER on the cluster: else
// CLUSTER_AUTHORIZATION_FAILED at the top and for each partition named, as in Kafka.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { AlterPartitionReassignmentsApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { clusterAllowed } from "../authorize_checks.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

interface ReassignableTopic {
  name: string;
  partitions: { partitionIndex: number; replicas: number[] | null }[];
}

export const alterPartitionReassignmentsHandler: ApiHandler<BrokerServices> = {
  api: AlterPartitionReassignmentsApi,
  async handle(s, ctx, req) {
    if (!clusterAllowed(s, ctx, AclOperation.ALTER)) {
      const e = { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: "Cluster authorization failed." };
      const responses = (req.topics as ReassignableTopic[]).map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, ...e })) }));
      return { throttleTimeMs: 0, ...e, responses };
    }
    if (!s.controller.isActive) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: null, responses: [] };
    }
    const topics = req.topics as ReassignableTopic[];
    const reqs = topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, replicas: p.replicas })));
    const results = await s.controller.alterPartitionReassignments(reqs);
    const byTopic = new Map<string, { partitionIndex: number; errorCode: number; errorMessage: string | null }[]>();
    for (const r of results) {
      const list = byTopic.get(r.topic) ?? [];
      list.push({ partitionIndex: r.partition, errorCode: r.errorCode, errorMessage: r.errorMessage });
      byTopic.set(r.topic, list);
    }
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      responses: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
    };
  },
  errorResponse(_req, _version, errorCode, errorMessage) {
    return { throttleTimeMs: 0, errorCode, errorMessage, responses: [] };
  },
};
