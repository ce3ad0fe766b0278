// CreateTopics (19), v2-7. Each topic is validated (name, partitions, replication factor,
// assignment, configs) and written to the registry; the answer waits (up to timeout_ms) until the
// controller has made the partitions known to this broker. validate_only checks without writing.
// From v5 the answer lists every topic key with its value and source, as DescribeConfigs does.
// As Kafka: CREATE on the cluster, or else on the topic (TOPIC_AUTHORIZATION_FAILED); the
// partitions, replication factor and configs are answered only with DESCRIBE_CONFIGS on the
// topic (else topic_config_error_code TOPIC_AUTHORIZATION_FAILED).
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { CreateTopicsApi } from "../../protocol/mod.ts";
import type { Struct } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { authorizedNames, clusterAllowed } from "../authorize_checks.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { CreateTopicSpec, MutationAdmit } from "../../controller/mod.ts";
import type { BrokerServices } from "../services.ts";
import { describeTopicConfigs } from "../config_describe.ts";
import { mutationAdmit } from "../client_quota_manager.ts";

interface CreatableTopic {
  name: string;
  numPartitions: number;
  replicationFactor: number;
  assignments: { partitionIndex: number; brokerIds: number[] }[];
  configs: { name: string; value: string | null }[];
}

function toSpec(s: BrokerServices, t: CreatableTopic): CreateTopicSpec | string {
  const configs: Record<string, string> = {};
  for (const c of t.configs) {
    if (c.value === null) return `config ${c.name} has no value`;
    configs[c.name] = c.value;
  }
  let assignment: Map<number, number[]> | null = null;
  if (t.assignments.length > 0) {
    if (t.numPartitions !== -1 || t.replicationFactor !== -1) {
      return "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.";
    }
    assignment = new Map(t.assignments.map((a) => [a.partitionIndex, a.brokerIds]));
  }
  return {
    name: t.name,
    numPartitions: assignment ? assignment.size : t.numPartitions === -1 ? s.config.numPartitions : t.numPartitions,
    replicationFactor: assignment
      ? (t.assignments[0]?.brokerIds.length ?? 0)
      : t.replicationFactor === -1
      ? s.config.defaultReplicationFactor
      : t.replicationFactor,
    assignment,
    configs,
  };
}

export const createTopicsHandler: ApiHandler<BrokerServices> = {
  api: CreateTopicsApi,
  async handle(s, ctx, req) {
    const topics = req.topics as CreatableTopic[];
    const names = topics.map((t) => t.name);
    const creatable = clusterAllowed(s, ctx, AclOperation.CREATE) ? new Set(names) : authorizedNames(s, ctx, AclOperation.CREATE, ResourceType.TOPIC, names);
    const configsShown = authorizedNames(s, ctx, AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, names);
    const seen = new Map<string, number>();
    for (const t of topics) seen.set(t.name, (seen.get(t.name) ?? 0) + 1);
    const timeoutMs = Math.max(0, req.timeoutMs as number);
    // KIP-599: the partitions created count against controller_mutation_rate; strict from v6.
    const admit = mutationAdmit(s.controllerMutationQuota, ctx, 6);
    // Kafka (ZkAdminManager.createTopics) validates and charges the quota topic by topic in
    // request order, so which topics meet an empty bucket is fixed by the request. Each topic's
    // checks (which await the registry) start only once the one before has been charged or has
    // failed; the registry writes after the charge still overlap.
    let previousDecided: Promise<void> = Promise.resolve();
    const results = await Promise.all(topics.map(async (t): Promise<Struct> => {
      if (admit === undefined) return await createOne(t, undefined);
      const before = previousDecided;
      let decide = () => {};
      previousDecided = new Promise<void>((r) => (decide = r));
      try {
        await before;
        return await createOne(t, (partitions) => {
          const refused = admit(partitions);
          decide();
          return refused;
        });
      } finally {
        decide();
      }
    }));
    async function createOne(t: CreatableTopic, admit: MutationAdmit | undefined): Promise<Struct> {
      const out = {
        name: t.name,
        topicId: new Uint8Array(16),
        errorCode: ErrorCode.NONE,
        errorMessage: null as string | null,
        topicConfigErrorCode: configsShown.has(t.name) ? ErrorCode.NONE : ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        numPartitions: -1,
        replicationFactor: -1,
        configs: null,
      };
      if ((seen.get(t.name) ?? 0) > 1) {
        return { ...out, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Create topics request from client contains a duplicate topic ${t.name}` };
      }
      if (!creatable.has(t.name)) return { ...out, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: "Authorization failed." };
      const spec = toSpec(s, t);
      if (typeof spec === "string") return { ...out, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: spec };
      const r = await s.topicAdmin.createTopic(spec, req.validateOnly as boolean, timeoutMs, admit);
      if (r.errorCode !== ErrorCode.NONE) return { ...out, errorCode: r.errorCode, errorMessage: r.errorMessage };
      const meta = s.metadata.getTopic(t.name);
      if (!configsShown.has(t.name)) return { ...out, topicId: meta?.topicId ?? out.topicId };
      return {
        ...out,
        topicId: meta?.topicId ?? out.topicId,
        numPartitions: spec.numPartitions,
        replicationFactor: spec.replicationFactor,
        configs: describeTopicConfigs(s.config, spec.configs, s.dynamicConfig.values).map((e) => ({
          name: e.name,
          value: e.value,
          readOnly: e.readOnly,
          configSource: e.source,
          isSensitive: e.isSensitive,
        })),
      };
    }
    return { throttleTimeMs: 0, topics: results };
  },
  errorResponse(req, _version, errorCode, errorMessage) {
    const topics = req.topics as { name: string }[];
    return { throttleTimeMs: 0, topics: topics.map((t) => ({ name: t.name, errorCode, errorMessage, configs: null })) };
  },
};
