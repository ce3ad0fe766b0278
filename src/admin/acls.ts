// The admin API's ACL JSON: bindings and filters in Kafka's names, snake_case keys.
//
//   {"resource_type":"Topic","resource_name":"orders","pattern_type":"LITERAL",
//    "principal":"User:alice","host":"*","operation":"Read","permission_type":"Allow"}
//
// Names are taken in either of Kafka's spellings (Topic/TOPIC, DescribeConfigs/DESCRIBE_CONFIGS,
// and with "-" for "_"); a filter's absent field matches anything. Parsers return the value or a
// message for a 400; the authorizer validates the binding itself.
import {
  type AclBinding,
  type AclBindingFilter,
  AclOperation,
  AclPermissionType,
  operationName,
  parseOperation,
  parsePatternType,
  parsePermissionType,
  parseResourceType,
  PatternType,
  patternTypeEnumName,
  permissionTypeName,
  ResourceType,
  resourceTypeName,
} from "../authorizer/mod.ts";

export function aclJson(b: AclBinding) {
  return {
    resource_type: resourceTypeName(b.pattern.resourceType),
    resource_name: b.pattern.name,
    pattern_type: patternTypeEnumName(b.pattern.patternType),
    principal: b.entry.principal,
    host: b.entry.host,
    operation: operationName(b.entry.operation),
    permission_type: permissionTypeName(b.entry.permissionType),
  };
}

function code<T>(parse: (s: string) => T | null, key: string, v: unknown, fallback: T | undefined): T | string {
  if (v === undefined || v === null || v === "") return fallback === undefined ? `${key} is required` : fallback;
  if (typeof v !== "string") return `${key} must be a string`;
  const c = parse(v.replace(/-/g, "_"));
  return c === null ? `${key} ${JSON.stringify(v)} is not one of Kafka's names` : c;
}

function text(key: string, v: unknown, fallback: string | null | undefined): string | null | { error: string } {
  if (v === undefined || v === null) return fallback === undefined ? { error: `${key} is required` } : fallback;
  if (typeof v !== "string") return { error: `${key} must be a string` };
  return v;
}

/** An ACL from a POST body item; pattern_type defaults to LITERAL, host to "*", permission_type to Allow. */
export function parseAclBinding(o: unknown): AclBinding | string {
  if (typeof o !== "object" || o === null || Array.isArray(o)) return "each ACL must be a JSON object";
  const x = o as Record<string, unknown>;
  const resourceType = code(parseResourceType, "resource_type", x.resource_type, undefined);
  const patternType = code(parsePatternType, "pattern_type", x.pattern_type, PatternType.LITERAL);
  const operation = code(parseOperation, "operation", x.operation, undefined);
  const permissionType = code(parsePermissionType, "permission_type", x.permission_type, AclPermissionType.ALLOW);
  const name = text("resource_name", x.resource_name, undefined);
  const principal = text("principal", x.principal, undefined);
  const host = text("host", x.host, "*");
  for (const v of [resourceType, patternType, operation, permissionType]) if (typeof v === "string") return v;
  for (const v of [name, principal, host]) if (typeof v === "object" && v !== null) return v.error;
  return {
    pattern: { resourceType: resourceType as ResourceType, name: name as string, patternType: patternType as PatternType },
    entry: { principal: principal as string, host: host as string, operation: operation as AclOperation, permissionType: permissionType as AclPermissionType },
  };
}

/** A filter from query parameters (GET and DELETE /v1/acls); every one is optional. */
export function parseAclFilter(q: Record<string, string | undefined>): AclBindingFilter | string {
  const resourceType = code(parseResourceType, "resource_type", q.resource_type, ResourceType.ANY);
  const patternType = code(parsePatternType, "pattern_type", q.pattern_type, PatternType.ANY);
  const operation = code(parseOperation, "operation", q.operation, AclOperation.ANY);
  const permissionType = code(parsePermissionType, "permission_type", q.permission_type, AclPermissionType.ANY);
  for (const v of [resourceType, patternType, operation, permissionType]) if (typeof v === "string") return v;
  return {
    resourceType: resourceType as ResourceType,
    name: q.resource_name ?? null,
    patternType: patternType as PatternType,
    principal: q.principal ?? null,
    host: q.host ?? null,
    operation: operation as AclOperation,
    permissionType: permissionType as AclPermissionType,
  };
}

/** The query keys parseAclFilter reads (anything else is a 400, so a typo cannot widen a DELETE). */
export const aclFilterKeys = ["resource_type", "resource_name", "pattern_type", "principal", "host", "operation", "permission_type"];
