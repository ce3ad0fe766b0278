// IncrementalAlterConfigs (44), v0-1. For a topic (type 2) each key is changed by its operation
// on the current overrides: SET (0), DELETE (1, back to the default), APPEND (2) and SUBTRACT (3)
// add or remove comma-separated elements of a list-type key (cleanup.policy), starting from the
// effective value when the topic has no override. The result is written like AlterConfigs, with
// the same checks; validate_only checks without writing. For a broker (type 4: this broker's id,
// or "" for the cluster-wide defaults) the operations change the entity's stored dynamic values
// (dynamic_config.ts), APPEND and SUBTRACT starting from the value in force when none is stored;
// a key that is not dynamic is refused with INVALID_CONFIG naming it.
// Needs ALTER_CONFIGS on the topic, or on the cluster for a broker (authorize_checks.ts).
import { AclOperation } from "../../authorizer/mod.ts";
import type { ConfigChange } from "../../controller/mod.ts";
import { IncrementalAlterConfigsApi } from "../../protocol/mod.ts";
import type { Struct } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { brokerConfigKeys, type BrokerConfig } from "../config.ts";
import {
  brokerResourceError,
  ConfigResourceType,
  duplicateResources,
  isListTopicKey,
  resourceKey,
  topicDefaultValue,
} from "../config_describe.ts";
import { configResourceDenied } from "../authorize_checks.ts";
import type { ApiHandler } from "../dispatch.ts";
import { type DynamicValues, noDynamicValues } from "../dynamic_config.ts";
import type { BrokerServices } from "../services.ts";

export const ConfigOperation = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;

interface AlterableConfig {
  name: string;
  configOperation: number;
  value: string | null;
}

interface AlterResource {
  resourceType: number;
  resourceName: string;
  configs: AlterableConfig[];
}

type Outcome = { errorCode: number; errorMessage: string | null };

const invalidRequest = (errorMessage: string): Outcome => ({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage });

/** Why a resource's operations cannot be applied whatever the current config is, or null. */
function requestError(configs: AlterableConfig[]): Outcome | null {
  const names = configs.map((c) => c.name);
  if (new Set(names).size !== names.length) return invalidRequest("Error due to duplicate config keys");
  for (const c of configs) {
    if (c.configOperation < ConfigOperation.SET || c.configOperation > ConfigOperation.SUBTRACT) {
      return invalidRequest(`Unknown config operation ${c.configOperation} for ${c.name}`);
    }
    if (c.configOperation !== ConfigOperation.DELETE && c.value === null) return invalidRequest(`Null value not supported for : ${c.name}`);
  }
  return null;
}

const listOf = (v: string) => v.split(",").map((p) => p.trim()).filter((p) => p !== "");

/** The operations applied in order to the current overrides (Kafka's prepareIncrementalConfigs). */
export function applyOperations(
  broker: BrokerConfig,
  current: Record<string, string>,
  ops: AlterableConfig[],
  dynamic: DynamicValues = noDynamicValues,
): ConfigChange {
  return applyOps(current, ops, isListTopicKey, (k) => topicDefaultValue(broker, k, dynamic));
}

/**
 * The operations on a broker entity's stored dynamic values; APPEND and SUBTRACT start from the
 * value in force without it (for this broker: the cluster default's, else server.properties').
 */
export function applyBrokerOperations(
  broker: BrokerConfig,
  resourceName: string,
  current: Record<string, string>,
  ops: AlterableConfig[],
  dynamic: DynamicValues,
): ConfigChange {
  const isList = (k: string) => brokerConfigKeys[k]?.kind === "list";
  const inForce = (k: string) => (resourceName !== "" ? dynamic.clusterDefault.get(k) : undefined) ?? broker.raw.get(k) ?? null;
  return applyOps(current, ops, isList, inForce);
}

function applyOps(
  current: Record<string, string>,
  ops: AlterableConfig[],
  isList: (key: string) => boolean,
  fallback: (key: string) => string | null,
): ConfigChange {
  const next = { ...current };
  for (const c of ops) {
    if (c.configOperation === ConfigOperation.SET) next[c.name] = c.value as string;
    else if (c.configOperation === ConfigOperation.DELETE) delete next[c.name];
    else {
      const verb = c.configOperation === ConfigOperation.APPEND ? "append" : "subtract";
      if (!isList(c.name)) {
        return { error: { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: `Config value ${verb} is not allowed for config key: ${c.name}` } };
      }
      const old = listOf(Object.hasOwn(next, c.name) ? next[c.name] : fallback(c.name) ?? "");
      const given = listOf(c.value as string);
      const list = verb === "append" ? [...old, ...given.filter((v) => !old.includes(v))] : old.filter((v) => !given.includes(v));
      next[c.name] = list.join(",");
    }
  }
  return { configs: next };
}

async function alter(s: BrokerServices, r: AlterResource, validateOnly: boolean): Promise<Outcome> {
  switch (r.resourceType) {
    case ConfigResourceType.TOPIC: {
      const bad = requestError(r.configs);
      if (bad !== null) return bad;
      const dynamic = s.dynamicConfig.values;
      return await s.configAdmin.alterTopicConfig(r.resourceName, (current) => applyOperations(s.config, current, r.configs, dynamic), validateOnly);
    }
    case ConfigResourceType.BROKER: {
      const why = brokerResourceError(r.resourceName, s.brokerId);
      if (why !== null) return invalidRequest(why);
      const bad = requestError(r.configs);
      if (bad !== null) return bad;
      const ops = r.configs.map((c) => ({ ...c, value: c.value === null ? null : c.value.trim() }));
      return await s.dynamicConfig.alter(
        r.resourceName,
        (current) => applyBrokerOperations(s.config, r.resourceName, current, ops, s.dynamicConfig.values),
        validateOnly,
      );
    }
    default:
      return invalidRequest(`Unsupported resource type ${r.resourceType}`);
  }
}

export const incrementalAlterConfigsHandler: ApiHandler<BrokerServices> = {
  api: IncrementalAlterConfigsApi,
  async handle(s, ctx, req) {
    const resources = req.resources as AlterResource[];
    const duplicates = duplicateResources(resources);
    const validateOnly = req.validateOnly as boolean;
    const responses = await Promise.all(resources.map(async (r): Promise<Struct> => {
      const base = { resourceType: r.resourceType, resourceName: r.resourceName };
      if (duplicates.has(resourceKey(r))) return { ...base, ...invalidRequest("Each resource must appear at most once.") };
      return { ...base, ...(configResourceDenied(s, ctx, AclOperation.ALTER_CONFIGS, r) ?? await alter(s, r, validateOnly)) };
    }));
    return { throttleTimeMs: 0, responses };
  },
  errorResponse(req, _version, errorCode, errorMessage) {
    const resources = req.resources as { resourceType: number; resourceName: string }[];
    return { throttleTimeMs: 0, responses: resources.map((r) => ({ errorCode, errorMessage, resourceType: r.resourceType, resourceName: r.resourceName })) };
  },
};
