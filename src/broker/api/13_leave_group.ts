// LeaveGroup (13), v0-5 (v3+ batched, with group.instance.id). Needs READ on the group
// (GROUP_AUTHORIZATION_FAILED at the top, no members), as in Kafka.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { LeaveGroupApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { allowed } from "../authorize.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const leaveGroupHandler: ApiHandler<BrokerServices> = {
  api: LeaveGroupApi,
  handle(s, ctx, req) {
    if (!allowed(s, ctx, AclOperation.READ, ResourceType.GROUP, req.groupId as string)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, members: [] };
    }
    const members = ctx.version >= 3
      ? (req.members as { memberId: string; groupInstanceId: string | null }[])
      : [{ memberId: req.memberId as string, groupInstanceId: null }];
    const r = s.coordinator.groups.leave(req.groupId as string, members);
    // Before v3 the one member's error is the response's error.
    const errorCode = ctx.version < 3 && r.errorCode === 0 ? r.members[0] ?? 0 : r.errorCode;
    return {
      throttleTimeMs: 0,
      errorCode,
      members: members.map((m, i) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode: r.members[i] ?? r.errorCode })),
    };
  },
};
