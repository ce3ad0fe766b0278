// AlterConfigs (33), v0-2. For a topic (type 2) the request's keys become the topic's whole set
// of overrides (keys left out go back to their defaults), written to /config/topics/<t> with a
// change notification that every broker applies. Each new value is checked (INVALID_CONFIG names
// the key); validate_only checks without writing. For a broker (type 4: this broker's id, or ""
// for the cluster-wide defaults) the keys become the entity's whole set of dynamic values in
// /config/brokers/<id|<default>> (dynamic_config.ts; a null value leaves its key out, as Kafka
// does); a key that is not dynamic is refused with INVALID_CONFIG naming it.
// Needs ALTER_CONFIGS on the topic, or on the cluster for a broker (authorize_checks.ts).
import { AclOperation } from "../../authorizer/mod.ts";
import { AlterConfigsApi } from "../../protocol/mod.ts";
import type { Struct } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { brokerResourceError, ConfigResourceType, duplicateResources, resourceKey } from "../config_describe.ts";
import { configResourceDenied } from "../authorize_checks.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

interface AlterResource {
  resourceType: number;
  resourceName: string;
  configs: { name: string; value: string | null }[];
}

type Outcome = { errorCode: number; errorMessage: string | null };

async function alter(s: BrokerServices, r: AlterResource, validateOnly: boolean): Promise<Outcome> {
  switch (r.resourceType) {
    case ConfigResourceType.TOPIC: {
      const names = r.configs.map((c) => c.name);
      if (new Set(names).size !== names.length) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: "Error due to duplicate config keys" };
      const nullOne = r.configs.find((c) => c.value === null);
      if (nullOne !== undefined) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Null value not supported for : ${nullOne.name}` };
      const configs = Object.fromEntries(r.configs.map((c) => [c.name, c.value as string]));
      return await s.configAdmin.alterTopicConfig(r.resourceName, () => ({ configs }), validateOnly);
    }
    case ConfigResourceType.BROKER: {
      const why = brokerResourceError(r.resourceName, s.brokerId);
      if (why !== null) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: why };
      const names = r.configs.map((c) => c.name);
      if (new Set(names).size !== names.length) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: "Error due to duplicate config keys" };
      const configs = Object.fromEntries(r.configs.filter((c) => c.value !== null).map((c) => [c.name, (c.value as string).trim()]));
      return await s.dynamicConfig.alter(r.resourceName, () => ({ configs }), validateOnly);
    }
    default:
      return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unsupported resource type ${r.resourceType}` };
  }
}

export const alterConfigsHandler: ApiHandler<BrokerServices> = {
  api: AlterConfigsApi,
  async handle(s, ctx, req) {
    const resources = req.resources as AlterResource[];
    const duplicates = duplicateResources(resources);
    const validateOnly = req.validateOnly as boolean;
    const responses = await Promise.all(resources.map(async (r): Promise<Struct> => {
      const base = { resourceType: r.resourceType, resourceName: r.resourceName };
      if (duplicates.has(resourceKey(r))) {
        return { ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: "Each resource must appear at most once." };
      }
      return { ...base, ...(configResourceDenied(s, ctx, AclOperation.ALTER_CONFIGS, r) ?? await alter(s, r, validateOnly)) };
    }));
    return { throttleTimeMs: 0, responses };
  },
  errorResponse(req, _version, errorCode, errorMessage) {
    const resources = req.resources as { resourceType: number; resourceName: string }[];
    return { throttleTimeMs: 0, responses: resources.map((r) => ({ errorCode, errorMessage, resourceType: r.resourceType, resourceName: r.resourceName })) };
  },
};
