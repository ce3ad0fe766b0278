// OffsetDelete (47), v0: removes committed offsets of topics the group's members do not
// subscribe to (GROUP_SUBSCRIBED_TO_TOPIC for those they do). As Kafka: DELETE on the group
// (else GROUP_AUTHORIZATION_FAILED at the top), READ on each topic (TOPIC_AUTHORIZATION_FAILED).
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { decodeConsumerSubscription, OffsetDeleteApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { authorizedNames } from "../authorize_checks.ts";
import { allowed } from "../authorize.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

function subscribedTopics(s: BrokerServices, groupId: string): Set<string> {
  const out = new Set<string>();
  const g = s.coordinator.manager.getGroup(groupId);
  if (g === undefined || g.protocolType !== "consumer" || g.protocolName === null) return out;
  for (const m of g.members.values()) {
    // During a rebalance a member may have rejoined without the group's current protocol: then
    // every subscription it sent counts (refusing a deletion is safer than deleting in use).
    const chosen = m.protocols.find((p) => p.name === g.protocolName);
    for (const p of chosen !== undefined ? [chosen] : m.protocols) {
      const sub = decodeConsumerSubscription(p.metadata);
      if (sub.kind === "subscription") for (const t of sub.topics) out.add(t);
    }
  }
  return out;
}

export const offsetDeleteHandler: ApiHandler<BrokerServices> = {
  api: OffsetDeleteApi,
  async handle(s, ctx, req) {
    const groupId = req.groupId as string;
    const topics = req.topics as { name: string; partitions: { partitionIndex: number }[] }[];
    if (!allowed(s, ctx, AclOperation.DELETE, ResourceType.GROUP, groupId)) {
      return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, throttleTimeMs: 0, topics: [] };
    }
    const readable = authorizedNames(s, ctx, AclOperation.READ, ResourceType.TOPIC, topics.map((t) => t.name));
    const wanted = topics.filter((t) => readable.has(t.name)).flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex })));
    const r = await s.coordinator.offsets.deleteOffsets(groupId, wanted, subscribedTopics(s, groupId));
    const codes = new Map(r.partitions.map((p) => [`${p.topic}\u0000${p.partition}`, p.errorCode]));
    return {
      errorCode: r.errorCode,
      throttleTimeMs: 0,
      topics: r.errorCode !== ErrorCode.NONE ? [] : topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: !readable.has(t.name) ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : codes.get(`${t.name}\u0000${p.partitionIndex}`) ?? 0 })),
      })),
    };
  },
};
