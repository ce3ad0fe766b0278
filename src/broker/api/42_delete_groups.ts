// DeleteGroups (42), v0-2: only groups without members (NON_EMPTY_GROUP otherwise).
import { DeleteGroupsApi } from "../../protocol/mod.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const deleteGroupsHandler: ApiHandler<BrokerServices> = {
  api: DeleteGroupsApi,
  async handle(s, _ctx, req) {
    const results = [];
    for (const groupId of req.groupsNames as string[]) {
      results.push({ groupId, errorCode: await s.coordinator.offsets.deleteGroup(groupId) });
    }
    return { throttleTimeMs: 0, results };
  },
};
