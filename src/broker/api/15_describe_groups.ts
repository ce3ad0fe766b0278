// DescribeGroups (15), v0-5. An unknown group is described as Dead with no error, as Kafka does.
// Each group needs DESCRIBE (else GROUP_AUTHORIZATION_FAILED with nothing about it); v3+ returns
// the principal's operations on it when include_authorized_operations asks.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { DescribeGroupsApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { AUTHORIZED_OPERATIONS_OMITTED, authorizedOperations } from "../authorize_checks.ts";
import { allowed } from "../authorize.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const describeGroupsHandler: ApiHandler<BrokerServices> = {
  api: DescribeGroupsApi,
  handle(s, ctx, req) {
    const withOperations = ctx.version >= 3 && (req.includeAuthorizedOperations as boolean);
    const groups = (req.groups as string[]).map((id) => {
      if (!allowed(s, ctx, AclOperation.DESCRIBE, ResourceType.GROUP, id)) {
        return {
          errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
          groupId: id,
          groupState: "",
          protocolType: "",
          protocolData: "",
          members: [],
          authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
        };
      }
      const { errorCode, group } = s.coordinator.describeGroup(id);
      return {
        errorCode,
        groupId: id,
        groupState: group.state,
        protocolType: group.protocolType,
        protocolData: group.protocolName,
        members: group.members.map((m) => ({
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          clientId: m.clientId,
          clientHost: m.clientHost,
          memberMetadata: m.metadata,
          memberAssignment: m.assignment,
        })),
        authorizedOperations: withOperations ? authorizedOperations(s, ctx, ResourceType.GROUP, id) : AUTHORIZED_OPERATIONS_OMITTED,
      };
    });
    return { throttleTimeMs: 0, groups };
  },
};
