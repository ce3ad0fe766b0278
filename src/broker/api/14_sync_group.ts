// SyncGroup (14), v0-5: the leader brings the assignment; every member gets its own part.
// Needs READ on the group (GROUP_AUTHORIZATION_FAILED), as in Kafka.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { SyncGroupApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { allowed } from "../authorize.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const syncGroupHandler: ApiHandler<BrokerServices> = {
  api: SyncGroupApi,
  async handle(s, ctx, req) {
    if (!allowed(s, ctx, AclOperation.READ, ResourceType.GROUP, req.groupId as string)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, protocolType: null, protocolName: null, assignment: new Uint8Array(0) };
    }
    const r = await s.coordinator.groups.sync({
      groupId: req.groupId as string,
      generationId: req.generationId as number,
      memberId: req.memberId as string,
      groupInstanceId: req.groupInstanceId as string | null,
      protocolType: req.protocolType as string | null,
      protocolName: req.protocolName as string | null,
      assignments: req.assignments as { memberId: string; assignment: Uint8Array }[],
    });
    return { throttleTimeMs: 0, ...r };
  },
};
