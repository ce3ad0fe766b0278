// What a handler calls before it acts on a resource: allowed() asks the broker's authorizer, or
// allows everything when none is configured (Kafka without authorizer.class.name). The check is
// synchronous, so nothing can change between it and the action it guards.
import type { AclOperation, RequestPrincipal, ResourceType } from "../authorizer/mod.ts";
import type { RequestContext } from "./dispatch.ts";
import type { BrokerServices } from "./services.ts";

export function requestPrincipal(ctx: RequestContext): RequestPrincipal {
  return { principal: ctx.conn.principal, host: ctx.conn.host, listener: ctx.conn.listener, request: ctx.requestName ?? `ApiKey ${ctx.header.apiKey}` };
}

/**
 * True when the request's principal may perform `operation` on the named resource; `logIfDenied`
 * false when the answer only filters what the client sees (Kafka's Action.logIfDenied).
 */
export function allowed(s: BrokerServices, ctx: RequestContext, operation: AclOperation, resourceType: ResourceType, name: string, logIfDenied = true): boolean {
  return s.authorizer === null || s.authorizer.authorize(requestPrincipal(ctx), operation, resourceType, name, logIfDenied);
}
