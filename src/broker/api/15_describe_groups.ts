// DescribeGroups (15), v0-5. An unknown group is described as Dead with no error, as Kafka does.
import { DescribeGroupsApi } from "../../protocol/mod.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

const AUTHORIZED_OPERATIONS_UNKNOWN = -2147483648;

export const describeGroupsHandler: ApiHandler<BrokerServices> = {
  api: DescribeGroupsApi,
  handle(s, _ctx, req) {
    const groups = (req.groups as string[]).map((id) => {
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
        authorizedOperations: AUTHORIZED_OPERATIONS_UNKNOWN,
      };
    });
    return { throttleTimeMs: 0, groups };
  },
};
