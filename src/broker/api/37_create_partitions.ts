// CreatePartitions (37), v0-3. Raises each topic's partition count: the extended assignment is
// written to the topic znode (any broker may, as CreateTopics here; Kafka's ZooKeeper mode does
// it through AdminZkClient too) and the controller creates the new partitions. The answer waits
// (up to timeout_ms; 0 does not wait) until this broker's metadata shows them. validate_only
// checks without writing. A topic named twice is refused with INVALID_REQUEST. Each topic needs
// ALTER (TOPIC_AUTHORIZATION_FAILED), as in Kafka.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { CreatePartitionsApi } from "../../protocol/mod.ts";
import type { Struct } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { allowed } from "../authorize.ts";
import { mutationAdmit } from "../client_quota_manager.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

interface CreatePartitionsTopic {
  name: string;
  count: number;
  assignments: { brokerIds: number[] }[] | null;
}

export const createPartitionsHandler: ApiHandler<BrokerServices> = {
  api: CreatePartitionsApi,
  async handle(s, ctx, req) {
    const topics = req.topics as CreatePartitionsTopic[];
    const seen = new Map<string, number>();
    for (const t of topics) seen.set(t.name, (seen.get(t.name) ?? 0) + 1);
    const timeoutMs = Math.max(0, req.timeoutMs as number);
    const validateOnly = req.validateOnly as boolean;
    // KIP-599: the partitions added count against controller_mutation_rate; strict from v3.
    const admit = mutationAdmit(s.controllerMutationQuota, ctx, 3);
    const results = await Promise.all(topics.map(async (t): Promise<Struct> => {
      if ((seen.get(t.name) ?? 0) > 1) return { name: t.name, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: "Duplicate topic in request." };
      if (!allowed(s, ctx, AclOperation.ALTER, ResourceType.TOPIC, t.name)) {
        return { name: t.name, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: "The topic authorization is failed." };
      }
      const assignment = t.assignments === null ? null : t.assignments.map((a) => a.brokerIds);
      const r = await s.topicAdmin.createPartitions(t.name, t.count, assignment, validateOnly, timeoutMs, admit);
      return { name: t.name, errorCode: r.errorCode, errorMessage: r.errorCode === ErrorCode.NONE ? null : r.errorMessage };
    }));
    return { throttleTimeMs: 0, results };
  },
  errorResponse(req, _version, errorCode, errorMessage) {
    return { throttleTimeMs: 0, results: (req.topics as { name: string }[]).map((t) => ({ name: t.name, errorCode, errorMessage })) };
  },
};
