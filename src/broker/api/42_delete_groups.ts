// DeleteGroups (42), v0-2: only groups without members (NON_EMPTY_GROUP otherwise). Each group
// needs DELETE (GROUP_AUTHORIZATION_FAILED), as in Kafka.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { DeleteGroupsApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { allowed } from "../authorize.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const deleteGroupsHandler: ApiHandler<BrokerServices> = {
  api: DeleteGroupsApi,
  async handle(s, ctx, req) {
    const results = [];
    for (const groupId of req.groupsNames as string[]) {
      if (!allowed(s, ctx, AclOperation.DELETE, ResourceType.GROUP, groupId)) results.push({ groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED });
      else results.push({ groupId, errorCode: await s.coordinator.offsets.deleteGroup(groupId) });
    }
    return { throttleTimeMs: 0, results };
  },
};
