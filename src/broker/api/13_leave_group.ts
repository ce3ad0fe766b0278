// LeaveGroup (13), v0-5 (v3+ batched, with group.instance.id).
import { LeaveGroupApi } from "../../protocol/mod.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const leaveGroupHandler: ApiHandler<BrokerServices> = {
  api: LeaveGroupApi,
  handle(s, ctx, req) {
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
