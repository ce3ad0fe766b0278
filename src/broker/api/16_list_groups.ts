// ListGroups (16), v0-5: the groups this broker coordinates (v4 filters by state, v5 by type;
// every strand group is "classic").
import { ListGroupsApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const listGroupsHandler: ApiHandler<BrokerServices> = {
  api: ListGroupsApi,
  handle(s, _ctx, req) {
    const types = (req.typesFilter as string[]).map((t) => t.toLowerCase());
    const wantsClassic = types.length === 0 || types.includes("classic");
    const groups = wantsClassic ? s.coordinator.listGroups(req.statesFilter as string[]) : [];
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      groups: groups.map((g) => ({ groupId: g.groupId, protocolType: g.protocolType, groupState: g.state, groupType: "classic" })),
    };
  },
};
