// AlterConfigs (33), v0-2. For a topic (type 2) the request's keys become the topic's whole set
// of overrides (keys left out go back to their defaults), written to /config/topics/<t> with a
// change notification that every broker applies. Each new value is checked (INVALID_CONFIG names
// the key); validate_only checks without writing. Broker resources (type 4) have no dynamic
// configs yet: only an empty change succeeds.
import { AlterConfigsApi } from "../../protocol/mod.ts";
import type { Struct } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { brokerAlterOutcome, ConfigResourceType, duplicateResources, resourceKey } from "../config_describe.ts";
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
    case ConfigResourceType.BROKER:
      return brokerAlterOutcome(r.resourceName, s.brokerId, r.configs.length);
    default:
      return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unsupported resource type ${r.resourceType}` };
  }
}

export const alterConfigsHandler: ApiHandler<BrokerServices> = {
  api: AlterConfigsApi,
  async handle(s, _ctx, req) {
    const resources = req.resources as AlterResource[];
    const duplicates = duplicateResources(resources);
    const validateOnly = req.validateOnly as boolean;
    const responses = await Promise.all(resources.map(async (r): Promise<Struct> => {
      const base = { resourceType: r.resourceType, resourceName: r.resourceName };
      if (duplicates.has(resourceKey(r))) {
        return { ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: "Each resource must appear at most once." };
      }
      return { ...base, ...(await alter(s, r, validateOnly)) };
    }));
    return { throttleTimeMs: 0, responses };
  },
};
