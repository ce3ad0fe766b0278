// AlterClientQuotas (49), v0-1: sets and removes quota keys under /config/users and
// /config/clients with a change notification, so every broker re-reads the entity
// (quota_config.ts). Needs ALTER_CONFIGS on the cluster; without it every entry answers
// CLUSTER_AUTHORIZATION_FAILED, as Kafka's.
import { AclOperation, clusterResourceName, ResourceType } from "../../authorizer/mod.ts";
import { AlterClientQuotasApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { allowed } from "../authorize.ts";
import type { ApiHandler } from "../dispatch.ts";
import { type AlterEntry, alterClientQuotas } from "../quota_config.ts";
import type { BrokerServices } from "../services.ts";

export const alterClientQuotasHandler: ApiHandler<BrokerServices> = {
  api: AlterClientQuotasApi,
  async handle(s, ctx, req) {
    const entries = req.entries as AlterEntry[];
    if (!allowed(s, ctx, AclOperation.ALTER_CONFIGS, ResourceType.CLUSTER, clusterResourceName)) {
      return {
        throttleTimeMs: 0,
        entries: entries.map((e) => ({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: "Cluster authorization failed.", entity: e.entity })),
      };
    }
    return { throttleTimeMs: 0, entries: await alterClientQuotas(s.registry, entries, req.validateOnly as boolean, s.resolveHost) };
  },
};
