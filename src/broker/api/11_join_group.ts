// JoinGroup (11), v0-9. v0 has no rebalance timeout (the session timeout serves); v4+ asks an
// unknown member to rejoin with the id it is given (MEMBER_ID_REQUIRED, KIP-394); v5+ static
// membership (group.instance.id, KIP-345). Needs READ on the group (GROUP_AUTHORIZATION_FAILED).
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { JoinGroupApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { allowed } from "../authorize.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const joinGroupHandler: ApiHandler<BrokerServices> = {
  api: JoinGroupApi,
  async handle(s, ctx, req) {
    if (!allowed(s, ctx, AclOperation.READ, ResourceType.GROUP, req.groupId as string)) {
      // Kafka's JoinGroupRequest.getErrorResponse: no member id, generation -1.
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
        generationId: -1,
        protocolType: null,
        protocolName: ctx.version < 7 ? "" : null,
        leader: "",
        skipAssignment: false,
        memberId: "",
        members: [],
      };
    }
    const sessionTimeoutMs = req.sessionTimeoutMs as number;
    const rebalance = req.rebalanceTimeoutMs as number;
    const r = await s.coordinator.groups.join({
      groupId: req.groupId as string,
      memberId: req.memberId as string,
      groupInstanceId: req.groupInstanceId as string | null,
      requireKnownMemberId: ctx.version >= 4,
      clientId: ctx.header.clientId ?? "",
      clientHost: `/${ctx.conn.remote.replace(/:\d+$/, "")}`,
      rebalanceTimeoutMs: ctx.version === 0 || rebalance < 0 ? sessionTimeoutMs : rebalance,
      sessionTimeoutMs,
      protocolType: req.protocolType as string,
      protocols: req.protocols as { name: string; metadata: Uint8Array }[],
      reason: req.reason as string | null,
    });
    return {
      throttleTimeMs: 0,
      errorCode: r.errorCode,
      generationId: r.generationId,
      protocolType: r.protocolType,
      // Before v7 the field is not nullable: Kafka sends "" when no protocol is chosen.
      protocolName: ctx.version < 7 ? r.protocolName ?? "" : r.protocolName,
      leader: r.leader,
      skipAssignment: r.skipAssignment,
      memberId: r.memberId,
      members: r.members,
    };
  },
};
