// Heartbeat (12), v0-4. Needs READ on the group (GROUP_AUTHORIZATION_FAILED), as in Kafka.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { HeartbeatApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { allowed } from "../authorize.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const heartbeatHandler: ApiHandler<BrokerServices> = {
  api: HeartbeatApi,
  handle(s, ctx, req) {
    if (!allowed(s, ctx, AclOperation.READ, ResourceType.GROUP, req.groupId as string)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
    }
    const errorCode = s.coordinator.groups.heartbeat(
      req.groupId as string,
      req.memberId as string,
      req.groupInstanceId as string | null,
      req.generationId as number,
    );
    return { throttleTimeMs: 0, errorCode };
  },
};
