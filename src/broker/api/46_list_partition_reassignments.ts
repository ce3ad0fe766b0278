// ListPartitionReassignments (46), v0. The moves in progress with their full replica set and the
// replicas being added and removed, for the named partitions or (topics null) all of them;
// partitions not moving are left out. Only the active controller answers; any other broker
// answers NOT_CONTROLLER at the top level. Needs DESCRIBE on the cluster
// (CLUSTER_AUTHORIZATION_FAILED), as in Kafka.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { ListPartitionReassignmentsApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { clusterAllowed } from "../authorize_checks.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const listPartitionReassignmentsHandler: ApiHandler<BrokerServices> = {
  api: ListPartitionReassignmentsApi,
  handle(s, ctx, req) {
    if (!clusterAllowed(s, ctx, AclOperation.DESCRIBE)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: "Cluster authorization failed.", topics: [] };
    }
    if (!s.controller.isActive) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: null, topics: [] };
    }
    const asked = req.topics as { name: string; partitionIndexes: number[] }[] | null;
    const parts = asked === null ? null : asked.flatMap((t) => t.partitionIndexes.map((partition) => ({ topic: t.name, partition })));
    const ongoing = s.controller.listPartitionReassignments(parts);
    const byTopic = new Map<string, { partitionIndex: number; replicas: number[]; addingReplicas: number[]; removingReplicas: number[] }[]>();
    for (const r of ongoing) {
      const list = byTopic.get(r.topic) ?? [];
      list.push({ partitionIndex: r.partition, replicas: r.replicas, addingReplicas: r.addingReplicas, removingReplicas: r.removingReplicas });
      byTopic.set(r.topic, list);
    }
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
    };
  },
  errorResponse(_req, _version, errorCode, errorMessage) {
    return { throttleTimeMs: 0, errorCode, errorMessage, topics: [] };
  },
};
