// DescribeClientQuotas (48), v0-1: the quotas of the entities a filter matches, read from the
// registry as Kafka's ZkAdminManager reads ZooKeeper (quota_config.ts). Needs DESCRIBE_CONFIGS on
// the cluster; without it the whole answer is CLUSTER_AUTHORIZATION_FAILED, as Kafka's.
import { AclOperation, clusterResourceName, ResourceType } from "../../authorizer/mod.ts";
import { DescribeClientQuotasApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { allowed } from "../authorize.ts";
import type { ApiHandler } from "../dispatch.ts";
import { describeClientQuotasResponse, type FilterComponent } from "../quota_config.ts";
import type { BrokerServices } from "../services.ts";

export const describeClientQuotasHandler: ApiHandler<BrokerServices> = {
  api: DescribeClientQuotasApi,
  async handle(s, ctx, req) {
    if (!allowed(s, ctx, AclOperation.DESCRIBE_CONFIGS, ResourceType.CLUSTER, clusterResourceName)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: "Cluster authorization failed.", entries: null };
    }
    return await describeClientQuotasResponse(s.registry, req.components as FilterComponent[], req.strict as boolean);
  },
};
