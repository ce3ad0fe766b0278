// ACLs over the Kafka protocol, as Kafka's Admin client manages them: CreateAcls, DescribeAcls and
// DeleteAcls (v3, any broker answers). Types, operations, pattern and permission types travel as
// Kafka's codes (org.apache.kafka.common.acl / resource); the names here are Kafka's (the ones
// kafka-acls.sh prints and takes), so the CLI and the admin HTTP API can speak them. The client
// cannot import the broker's authorizer module, so the codes are written here again.
import { CreateAclsApi, DeleteAclsApi, DescribeAclsApi, type Struct } from "../protocol/mod.ts";
import { ErrorCode } from "../util/mod.ts";
import { ClientError, type ClusterClient, errorFor } from "./cluster_client.ts";

export const AclResourceType = { any: 1, topic: 2, group: 3, cluster: 4, transactionalId: 5, delegationToken: 6, user: 7 } as const;
export const AclOperationCode = {
  any: 1,
  all: 2,
  read: 3,
  write: 4,
  create: 5,
  delete: 6,
  alter: 7,
  describe: 8,
  clusterAction: 9,
  describeConfigs: 10,
  alterConfigs: 11,
  idempotentWrite: 12,
  createTokens: 13,
  describeTokens: 14,
} as const;
export const AclPatternType = { any: 1, match: 2, literal: 3, prefixed: 4 } as const;
export const AclPermission = { any: 1, deny: 2, allow: 3 } as const;

/** One ACL with Kafka's names: resourceType "Topic", operation "Read", patternType "LITERAL", permissionType "Allow". */
export interface AclEntryView {
  resourceType: string;
  resourceName: string;
  patternType: string;
  principal: string;
  host: string;
  operation: string;
  permissionType: string;
}

/** A filter with Kafka's names; absent fields match anything (ANY, or null for strings). */
export interface AclFilterView {
  resourceType?: string;
  resourceName?: string | null;
  patternType?: string;
  principal?: string | null;
  host?: string | null;
  operation?: string;
  permissionType?: string;
}

function pascal(key: string): string {
  return key.charAt(0).toUpperCase() + key.slice(1);
}

function enumName(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
}

/** Parses Kafka's spellings: "TransactionalId", "TRANSACTIONAL_ID", "transactional-id", "transactionalId". */
function codeOf(codes: Record<string, number>, what: string, name: string): number {
  const wanted = name.replace(/[-_]/g, "").toLowerCase();
  for (const [k, v] of Object.entries(codes)) if (k.toLowerCase() === wanted) return v;
  throw new ClientError(`unknown ${what} "${name}" (${Object.keys(codes).map(pascal).join(", ")})`);
}

function nameOf(codes: Record<string, number>, code: number, style: (k: string) => string): string {
  for (const [k, v] of Object.entries(codes)) if (v === code) return style(k);
  return `Unknown(${code})`;
}

export const aclNames = {
  resourceType: (code: number) => nameOf(AclResourceType, code, pascal),
  operation: (code: number) => nameOf(AclOperationCode, code, pascal),
  patternType: (code: number) => nameOf(AclPatternType, code, enumName),
  permissionType: (code: number) => nameOf(AclPermission, code, pascal),
};

export const aclCodes = {
  resourceType: (name: string) => codeOf(AclResourceType, "resource type", name),
  operation: (name: string) => codeOf(AclOperationCode, "operation", name),
  patternType: (name: string) => codeOf(AclPatternType, "pattern type", name),
  permissionType: (name: string) => codeOf(AclPermission, "permission type", name),
};

function wireFilter(f: AclFilterView): Struct {
  return {
    resourceTypeFilter: f.resourceType === undefined ? AclResourceType.any : aclCodes.resourceType(f.resourceType),
    resourceNameFilter: f.resourceName ?? null,
    patternTypeFilter: f.patternType === undefined ? AclPatternType.any : aclCodes.patternType(f.patternType),
    principalFilter: f.principal ?? null,
    hostFilter: f.host ?? null,
    operation: f.operation === undefined ? AclOperationCode.any : aclCodes.operation(f.operation),
    permissionType: f.permissionType === undefined ? AclPermission.any : aclCodes.permissionType(f.permissionType),
  };
}

function view(s: Struct, resource: Struct): AclEntryView {
  return {
    resourceType: aclNames.resourceType(resource.resourceType as number),
    resourceName: resource.resourceName as string,
    patternType: aclNames.patternType(resource.patternType as number),
    principal: s.principal as string,
    host: s.host as string,
    operation: aclNames.operation(s.operation as number),
    permissionType: aclNames.permissionType(s.permissionType as number),
  };
}

/** Creates the ACLs; throws on the first one the broker refused, naming it. */
export async function createAcls(c: ClusterClient, acls: AclEntryView[]): Promise<void> {
  const creations = acls.map((a) => ({
    resourceType: aclCodes.resourceType(a.resourceType),
    resourceName: a.resourceName,
    resourcePatternType: aclCodes.patternType(a.patternType),
    principal: a.principal,
    host: a.host,
    operation: aclCodes.operation(a.operation),
    permissionType: aclCodes.permissionType(a.permissionType),
  }));
  await c.retrying(async () => {
    const conn = await c.anyConnection();
    const { res } = await c.call(conn, CreateAclsApi, 3, () => ({ creations }));
    (res.results as { errorCode: number; errorMessage: string | null }[]).forEach((r, i) => {
      if (r.errorCode !== ErrorCode.NONE) throw errorFor(r.errorCode, `cannot create ${describeAcl(acls[i])}`, r.errorMessage);
    });
  });
}

/** The ACLs the filter matches. */
export async function describeAcls(c: ClusterClient, filter: AclFilterView = {}): Promise<AclEntryView[]> {
  const body = wireFilter(filter);
  return await c.retrying(async () => {
    const conn = await c.anyConnection();
    const { res } = await c.call(conn, DescribeAclsApi, 3, () => body);
    if (res.errorCode !== ErrorCode.NONE) throw errorFor(res.errorCode as number, "cannot describe ACLs", res.errorMessage as string | null);
    const out: AclEntryView[] = [];
    for (const r of res.resources as Struct[]) for (const a of r.acls as Struct[]) out.push(view(a, r));
    return out;
  });
}

/** Deletes what each filter matches; returns the ACLs deleted. */
export async function deleteAcls(c: ClusterClient, filters: AclFilterView[]): Promise<AclEntryView[]> {
  const body = { filters: filters.map(wireFilter) };
  return await c.retrying(async () => {
    const conn = await c.anyConnection();
    const { res } = await c.call(conn, DeleteAclsApi, 3, () => body);
    const out: AclEntryView[] = [];
    for (const r of res.filterResults as Struct[]) {
      if (r.errorCode !== ErrorCode.NONE) throw errorFor(r.errorCode as number, "cannot delete ACLs", r.errorMessage as string | null);
      for (const m of r.matchingAcls as Struct[]) {
        if (m.errorCode !== ErrorCode.NONE) throw errorFor(m.errorCode as number, "cannot delete an ACL", m.errorMessage as string | null);
        out.push(view(m, m));
      }
    }
    return out;
  });
}

/** "DescribeConfigs" → "DESCRIBE_CONFIGS". */
function upper(pascalName: string): string {
  return pascalName.replace(/(?!^)([A-Z])/g, "_$1").toUpperCase();
}

/** As kafka-acls.sh prints an ACL. */
export function describeAcl(a: AclEntryView): string {
  return `(principal=${a.principal}, host=${a.host}, operation=${upper(a.operation)}, permissionType=${upper(a.permissionType)}) on ` +
    `ResourcePattern(resourceType=${upper(a.resourceType)}, name=${a.resourceName}, patternType=${upper(a.patternType)})`;
}
