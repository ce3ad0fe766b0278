// The checks Kafka's KafkaApis repeats across handlers (its AuthHelper): a request's names split
// into those the principal may act on and the rest, a cluster-wide check, and the
// authorized-operations bit sets of Metadata and DescribeGroups. Everything here is synchronous,
// so a handler checks and acts in one turn of the event loop.
import { AclOperation, clusterResourceName, ResourceType, supportedOperations } from "../authorizer/mod.ts";
import { ErrorCode } from "../util/mod.ts";
import { allowed, requestPrincipal } from "./authorize.ts";
import { ConfigResourceType } from "./config_describe.ts";
import type { RequestContext } from "./dispatch.ts";
import type { BrokerServices } from "./services.ts";

/** The schema default of the authorized-operations fields: "not asked for" (Integer.MIN_VALUE). */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;

/** True when the principal may perform `operation` on the cluster ("kafka-cluster"). */
export function clusterAllowed(s: BrokerServices, ctx: RequestContext, operation: AclOperation): boolean {
  return allowed(s, ctx, operation, ResourceType.CLUSTER, clusterResourceName);
}

/** The names (each asked once) the principal may perform `operation` on (Kafka's filterByAuthorized). */
export function authorizedNames(
  s: BrokerServices,
  ctx: RequestContext,
  operation: AclOperation,
  resourceType: ResourceType,
  names: Iterable<string>,
): Set<string> {
  const out = new Set<string>();
  if (s.authorizer === null) {
    for (const n of names) out.add(n);
    return out;
  }
  const denied = new Set<string>();
  for (const n of names) {
    if (out.has(n) || denied.has(n)) continue;
    (allowed(s, ctx, operation, resourceType, n) ? out : denied).add(n);
  }
  return out;
}

/**
 * The operations the principal may perform on the resource, as a bit set (bit n = AclOperation n).
 * With no authorizer every operation the type supports, as Kafka's AuthHelper answers.
 */
export function authorizedOperations(s: BrokerServices, ctx: RequestContext, resourceType: ResourceType, name: string): number {
  if (s.authorizer !== null) return s.authorizer.authorizedOperations(requestPrincipal(ctx), resourceType, name);
  let bits = 0;
  for (const op of supportedOperations(resourceType)) bits |= 1 << op;
  return bits;
}

/**
 * The error for a config resource the principal may not `operation` (DESCRIBE_CONFIGS or
 * ALTER_CONFIGS), or null when it may: topics are checked on the topic
 * (TOPIC_AUTHORIZATION_FAILED), brokers and broker loggers on the cluster
 * (CLUSTER_AUTHORIZATION_FAILED), as Kafka's KafkaApis; other types are the handler's to refuse.
 * Kafka's messages: DescribeConfigs gives the error's text, the alters none.
 */
export function configResourceDenied(
  s: BrokerServices,
  ctx: RequestContext,
  operation: AclOperation,
  r: { resourceType: number; resourceName: string },
): { errorCode: number; errorMessage: string | null } | null {
  const text = (t: string) => (operation === AclOperation.DESCRIBE_CONFIGS ? t : null);
  if (r.resourceType === ConfigResourceType.TOPIC) {
    if (allowed(s, ctx, operation, ResourceType.TOPIC, r.resourceName)) return null;
    return { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: text("Topic authorization failed.") };
  }
  if (r.resourceType === ConfigResourceType.BROKER || r.resourceType === ConfigResourceType.BROKER_LOGGER) {
    if (clusterAllowed(s, ctx, operation)) return null;
    return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: text("Cluster authorization failed.") };
  }
  return null;
}
