// DeleteTopics (20), v1-6. Deletion is queued in the registry (/admin/delete_topics/<t>) for the
// controller, as Kafka does; the answer waits (up to timeout_ms) until the topic has left this
// broker's metadata, else REQUEST_TIMED_OUT. v6 may name topics by id. As Kafka: DELETE on the
// topic (TOPIC_AUTHORIZATION_FAILED, before UNKNOWN_TOPIC_OR_PARTITION); a topic named by id also
// needs DESCRIBE, else its name is not returned.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { DeleteTopicsApi } from "../../protocol/mod.ts";
import type { Struct } from "../../protocol/mod.ts";
import { bytesEqual, zeroUuid, ErrorCode } from "../../util/mod.ts";
import { internalTopics } from "../../controller/mod.ts";
import { allowed } from "../authorize.ts";
import { mutationAdmit } from "../client_quota_manager.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const deleteTopicsHandler: ApiHandler<BrokerServices> = {
  api: DeleteTopicsApi,
  async handle(s, ctx, req) {
    const wanted: { name: string | null; topicId: Uint8Array }[] = ctx.version >= 6
      ? (req.topics as { name: string | null; topicId: Uint8Array }[])
      : (req.topicNames as string[]).map((name) => ({ name, topicId: zeroUuid }));
    const timeoutMs = Math.max(0, req.timeoutMs as number);
    // KIP-599: the partitions deleted count against controller_mutation_rate; strict from v5.
    const admit = mutationAdmit(s.controllerMutationQuota, ctx, 5);
    const responses = await Promise.all(wanted.map(async (w): Promise<Struct> => {
      let name = w.name;
      if (name === null && !bytesEqual(w.topicId, zeroUuid)) name = s.metadata.getTopicById(w.topicId)?.name ?? null;
      const base = { name, topicId: w.topicId, errorCode: ErrorCode.NONE, errorMessage: null as string | null };
      if (name === null) return { ...base, errorCode: ErrorCode.UNKNOWN_TOPIC_ID, errorMessage: "unknown topic id" };
      if (!s.config.deleteTopicEnable) return { ...base, errorCode: ErrorCode.TOPIC_DELETION_DISABLED, errorMessage: "delete.topic.enable is false" };
      const denied = { ...base, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: "Authorization failed." };
      if (w.name === null && !allowed(s, ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, name)) return { ...denied, name: null };
      if (!allowed(s, ctx, AclOperation.DELETE, ResourceType.TOPIC, name)) return denied;
      if (internalTopics.has(name)) {
        return { ...base, errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: `Topic ${name} is an internal topic and cannot be deleted` };
      }
      const known = s.metadata.getTopic(name);
      const topicId = known?.topicId ?? w.topicId;
      // An unknown topic is answered by deleteTopic and charges nothing (Kafka filters it first).
      const refused = known === undefined ? null : admit?.(known.partitions.length) ?? null;
      if (refused !== null) return { ...base, topicId, ...refused };
      const r = await s.topicAdmin.deleteTopic(name, timeoutMs);
      return { ...base, topicId, errorCode: r.errorCode, errorMessage: r.errorMessage };
    }));
    return { throttleTimeMs: 0, responses };
  },
  errorResponse(req, version, errorCode, errorMessage) {
    const named = version >= 6
      ? (req.topics as { name: string | null; topicId: Uint8Array }[]).map((t) => ({ name: t.name, topicId: t.topicId }))
      : (req.topicNames as string[]).map((name) => ({ name }));
    return { throttleTimeMs: 0, responses: named.map((t) => ({ ...t, errorCode, errorMessage })) };
  },
};
