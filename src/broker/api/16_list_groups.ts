// ListGroups (16), v0-5: the groups this broker coordinates (v4 filters by state, v5 by type;
// every strand group is "classic"). With DESCRIBE on the cluster every group is listed, else only
// the groups the principal may DESCRIBE, as in Kafka.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { ListGroupsApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { clusterAllowed } from "../authorize_checks.ts";
import { allowed } from "../authorize.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const listGroupsHandler: ApiHandler<BrokerServices> = {
  api: ListGroupsApi,
  handle(s, ctx, req) {
    const types = (req.typesFilter as string[]).map((t) => t.toLowerCase());
    const wantsClassic = types.length === 0 || types.includes("classic");
    const all = wantsClassic ? s.coordinator.listGroups(req.statesFilter as string[]) : [];
    const groups = clusterAllowed(s, ctx, AclOperation.DESCRIBE) ? all : all.filter((g) => allowed(s, ctx, AclOperation.DESCRIBE, ResourceType.GROUP, g.groupId));
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      groups: groups.map((g) => ({ groupId: g.groupId, protocolType: g.protocolType, groupState: g.state, groupType: "classic" })),
    };
  },
};
