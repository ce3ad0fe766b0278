// DescribeAcls, CreateAcls and DeleteAcls as Kafka's AclApis answers them:
// - the principal needs CLUSTER DESCRIBE (Describe) or CLUSTER ALTER (Create, Delete), else
//   CLUSTER_AUTHORIZATION_FAILED for the whole request;
// - with no authorizer (or one that manages no ACLs), SECURITY_DISABLED;
// - v0 is literal only: a v0 filter's ANY pattern type means LITERAL (Kafka's normalizeAndValidate);
// - each binding or filter is validated whole: an UNKNOWN or out-of-range code, ANY where a
//   concrete value is needed, a principal without "Type:", an empty name, a CLUSTER not named
//   kafka-cluster answer INVALID_REQUEST with Kafka's message, for that binding only (Kafka
//   closes the connection for UNKNOWN codes; an error answer tells the client more).
import {
  type AclBinding,
  type AclBindingFilter,
  AclOperation,
  AclPermissionType,
  aclStoreOf,
  clusterResourceName,
  filterProblem,
  PatternType,
  ResourceType,
} from "../authorizer/mod.ts";
import type { Struct } from "../protocol/mod.ts";
import { ErrorCode } from "../util/mod.ts";
import { allowed } from "./authorize.ts";
import type { RequestContext } from "./dispatch.ts";
import type { BrokerServices } from "./services.ts";

const clusterDenied = "Cluster authorization failed.";

interface WireFilter {
  resourceTypeFilter: number;
  resourceNameFilter: string | null;
  patternTypeFilter: number;
  principalFilter: string | null;
  hostFilter: string | null;
  operation: number;
  permissionType: number;
}

interface WireCreation {
  resourceType: number;
  resourceName: string;
  resourcePatternType: number;
  principal: string;
  host: string;
  operation: number;
  permissionType: number;
}

function filterOf(w: WireFilter, version: number): AclBindingFilter {
  // v0 knows only literal patterns; Kafka reads its ANY as LITERAL (the field is absent in v0, so
  // this is the default 3, unless a client sent v1+ semantics through v0).
  const patternType = version === 0 && w.patternTypeFilter === PatternType.ANY ? PatternType.LITERAL : w.patternTypeFilter;
  return {
    resourceType: w.resourceTypeFilter as ResourceType,
    name: w.resourceNameFilter,
    patternType: patternType as PatternType,
    principal: w.principalFilter,
    host: w.hostFilter,
    operation: w.operation as AclOperation,
    permissionType: w.permissionType as AclPermissionType,
  };
}

function v0Problem(f: AclBindingFilter, version: number): string | null {
  return version === 0 && f.patternType !== PatternType.LITERAL ? "Version 0 only supports literal resource pattern types" : null;
}

export function describeAcls(s: BrokerServices, ctx: RequestContext, req: Struct): Struct {
  const fail = (errorCode: number, errorMessage: string) => ({ throttleTimeMs: 0, errorCode, errorMessage, resources: [] });
  if (!allowed(s, ctx, AclOperation.DESCRIBE, ResourceType.CLUSTER, clusterResourceName)) return fail(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, clusterDenied);
  const store = aclStoreOf(s.authorizer);
  if (store === null) return fail(ErrorCode.SECURITY_DISABLED, "No Authorizer is configured on the broker");
  const filter = filterOf(req as unknown as WireFilter, ctx.version);
  const v0 = v0Problem(filter, ctx.version);
  if (v0 !== null) return fail(ErrorCode.UNSUPPORTED_VERSION, v0);
  const problem = filterProblem(filter);
  if (problem !== null) return fail(ErrorCode.INVALID_REQUEST, `DescribeAclsRequest contains UNKNOWN elements: ${problem}`);
  return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, resources: groupByResource(store.acls(filter)) };
}

/** DescribeAclsResponse.aclsResources: one entry per pattern, ordered by type, pattern type, name. */
function groupByResource(bindings: AclBinding[]): Struct[] {
  const byPattern = new Map<string, Struct & { acls: Struct[] }>();
  const sorted = [...bindings].sort((a, b) =>
    a.pattern.resourceType - b.pattern.resourceType || a.pattern.patternType - b.pattern.patternType ||
    (a.pattern.name < b.pattern.name ? -1 : a.pattern.name > b.pattern.name ? 1 : 0)
  );
  for (const { pattern, entry } of sorted) {
    const key = `${pattern.resourceType}:${pattern.patternType}:${pattern.name}`;
    let r = byPattern.get(key);
    if (r === undefined) {
      r = { resourceType: pattern.resourceType, resourceName: pattern.name, patternType: pattern.patternType, acls: [] };
      byPattern.set(key, r);
    }
    r.acls.push({ principal: entry.principal, host: entry.host, operation: entry.operation, permissionType: entry.permissionType });
  }
  return [...byPattern.values()];
}

export async function createAcls(s: BrokerServices, ctx: RequestContext, req: Struct): Promise<Struct> {
  const creations = req.creations as WireCreation[];
  const all = (errorCode: number, errorMessage: string) => ({ throttleTimeMs: 0, results: creations.map(() => ({ errorCode, errorMessage })) });
  if (!allowed(s, ctx, AclOperation.ALTER, ResourceType.CLUSTER, clusterResourceName)) return all(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, clusterDenied);
  const store = aclStoreOf(s.authorizer);
  if (store === null) return all(ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.");
  if (ctx.version === 0 && creations.some((c) => c.resourcePatternType !== PatternType.LITERAL)) {
    return all(ErrorCode.UNSUPPORTED_VERSION, "Version 0 only supports literal resource pattern types");
  }
  const bindings: AclBinding[] = creations.map((c) => ({
    pattern: { resourceType: c.resourceType as ResourceType, name: c.resourceName, patternType: c.resourcePatternType as PatternType },
    entry: { principal: c.principal, host: c.host, operation: c.operation as AclOperation, permissionType: c.permissionType as AclPermissionType },
  }));
  return { throttleTimeMs: 0, results: await store.createAcls(bindings) };
}

export async function deleteAcls(s: BrokerServices, ctx: RequestContext, req: Struct): Promise<Struct> {
  const wire = req.filters as WireFilter[];
  const all = (errorCode: number, errorMessage: string) => ({
    throttleTimeMs: 0,
    filterResults: wire.map(() => ({ errorCode, errorMessage, matchingAcls: [] })),
  });
  if (!allowed(s, ctx, AclOperation.ALTER, ResourceType.CLUSTER, clusterResourceName)) return all(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, clusterDenied);
  const store = aclStoreOf(s.authorizer);
  if (store === null) return all(ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.");
  const filters = wire.map((w) => filterOf(w, ctx.version));
  const v0 = filters.map((f) => v0Problem(f, ctx.version)).find((p) => p !== null);
  if (v0 !== undefined) return all(ErrorCode.UNSUPPORTED_VERSION, `Version 0 does not support pattern types other than LITERAL and ANY`);
  const results = await store.deleteAcls(filters);
  return {
    throttleTimeMs: 0,
    filterResults: results.map((r) => ({
      errorCode: r.errorCode,
      errorMessage: r.errorCode === 0 ? null : `Filters contain UNKNOWN elements: ${r.errorMessage}`,
      matchingAcls: r.deleted.map((d) => ({
        errorCode: d.errorCode,
        errorMessage: d.errorMessage,
        resourceType: d.pattern.resourceType,
        resourceName: d.pattern.name,
        patternType: d.pattern.patternType,
        principal: d.entry.principal,
        host: d.entry.host,
        operation: d.entry.operation,
        permissionType: d.entry.permissionType,
      })),
    })),
  };
}
