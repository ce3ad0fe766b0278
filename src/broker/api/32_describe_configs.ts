// DescribeConfigs (32), v0-4. Topics (type 2): every topic key strand knows, with its effective
// value and where it comes from (the topic's override, server.properties or the default), read
// from /config/topics/<t> (their broker synonyms include the dynamic broker values). Brokers
// (type 4, named by this broker's id): every broker key strand reads, with its dynamic, static or
// default value; "" (the cluster-wide dynamic defaults): the keys set there. Synonyms from v1 when
// asked for, documentation from v3 when asked for; v0 reports isDefault instead of a source.
// Needs DESCRIBE_CONFIGS on the topic, or on the cluster for a broker (authorize_checks.ts).
import { AclOperation } from "../../authorizer/mod.ts";
import { topicNameError } from "../../controller/mod.ts";
import { DescribeConfigsApi } from "../../protocol/mod.ts";
import type { Struct } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import {
  brokerResourceError,
  type ConfigEntry,
  ConfigResourceType,
  ConfigSource,
  describeBrokerConfigs,
  describeClusterDefaultConfigs,
  describeTopicConfigs,
} from "../config_describe.ts";
import { configResourceDenied } from "../authorize_checks.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

interface DescribeResource {
  resourceType: number;
  resourceName: string;
  configurationKeys: string[] | null;
}

type Described = { entries: ConfigEntry[] } | { errorCode: number; errorMessage: string };

async function describe(s: BrokerServices, r: DescribeResource): Promise<Described> {
  switch (r.resourceType) {
    case ConfigResourceType.TOPIC: {
      const why = topicNameError(r.resourceName);
      if (why !== null) return { errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: why };
      const overrides = await s.configAdmin.topicOverrides(r.resourceName);
      if (overrides === null) {
        return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `Topic ${r.resourceName} does not exist.` };
      }
      return { entries: describeTopicConfigs(s.config, overrides, s.dynamicConfig.values) };
    }
    case ConfigResourceType.BROKER: {
      const why = brokerResourceError(r.resourceName, s.brokerId);
      if (why !== null) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: why };
      const dynamic = s.dynamicConfig.values;
      return { entries: r.resourceName === "" ? describeClusterDefaultConfigs(s.config, dynamic) : describeBrokerConfigs(s.config, dynamic) };
    }
    case ConfigResourceType.BROKER_LOGGER:
      return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: "broker logger configs are not supported yet" };
    default:
      return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unsupported resource type ${r.resourceType}` };
  }
}

export const describeConfigsHandler: ApiHandler<BrokerServices> = {
  api: DescribeConfigsApi,
  async handle(s, ctx, req) {
    const includeSynonyms = ctx.version >= 1 && (req.includeSynonyms as boolean);
    const includeDocumentation = ctx.version >= 3 && (req.includeDocumentation as boolean);
    const results = await Promise.all((req.resources as DescribeResource[]).map(async (r): Promise<Struct> => {
      const base = { resourceType: r.resourceType, resourceName: r.resourceName };
      const d = configResourceDenied(s, ctx, AclOperation.DESCRIBE_CONFIGS, r) ?? await describe(s, r);
      if ("errorCode" in d) return { ...base, errorCode: d.errorCode, errorMessage: d.errorMessage, configs: [] };
      const wanted = r.configurationKeys === null || r.configurationKeys.length === 0 ? null : new Set(r.configurationKeys);
      const configs = d.entries.filter((e) => wanted === null || wanted.has(e.name)).map((e) => ({
        name: e.name,
        value: e.value,
        readOnly: e.readOnly,
        isDefault: e.source === ConfigSource.DEFAULT_CONFIG,
        configSource: e.source,
        isSensitive: e.isSensitive,
        synonyms: includeSynonyms ? e.synonyms : [],
        configType: e.configType,
        documentation: includeDocumentation ? e.documentation : null,
      }));
      return { ...base, errorCode: ErrorCode.NONE, errorMessage: null, configs };
    }));
    return { throttleTimeMs: 0, results };
  },
  errorResponse(req, _version, errorCode, errorMessage) {
    const resources = req.resources as { resourceType: number; resourceName: string }[];
    return { throttleTimeMs: 0, results: resources.map((r) => ({ errorCode, errorMessage, resourceType: r.resourceType, resourceName: r.resourceName, configs: [] })) };
  },
};
