// SyncGroup (14), v0-5: the leader brings the assignment; every member gets its own part.
import { SyncGroupApi } from "../../protocol/mod.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const syncGroupHandler: ApiHandler<BrokerServices> = {
  api: SyncGroupApi,
  async handle(s, _ctx, req) {
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
