// Heartbeat (12), v0-4.
import { HeartbeatApi } from "../../protocol/mod.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const heartbeatHandler: ApiHandler<BrokerServices> = {
  api: HeartbeatApi,
  handle(s, _ctx, req) {
    const errorCode = s.coordinator.groups.heartbeat(
      req.groupId as string,
      req.memberId as string,
      req.groupInstanceId as string | null,
      req.generationId as number,
    );
    return { throttleTimeMs: 0, errorCode };
  },
};
