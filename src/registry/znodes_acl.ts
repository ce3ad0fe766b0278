// The ACL znodes of Kafka's layout (the rest are in znodes.ts, under the same invariants: Kafka's
// paths, JSON and spelling; decoders never throw on foreign content).
import { assert } from "../util/mod.ts";
import {
  textEncoder,
  text,
  isObject,
  parseObject,
  jsonBytes,
  empty,
} from "./znodes_json.ts";

// ACLs (Kafka's AclAuthorizer; ZkData's ZkAclStore, ZkAclChangeStore, ResourceZNode)
//
//   /kafka-acl/<ResourceType>/<name>                     literal patterns ("*" is the wildcard name)
//   /kafka-acl-extended/prefixed/<ResourceType>/<name>   prefixed patterns
//     {"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}
//   /kafka-acl-changes/acl_changes_<10 digits>           "TOPIC:<name>" (literal; the enum's name)
//   /kafka-acl-extended-changes/acl_changes_<10 digits>
//     {"version":1,"resourceType":"TOPIC","name":"<name>","patternType":"PREFIXED"}
// Names are Kafka's: resource types, operations and permissions PascalCase in the ACL nodes
// (SecurityUtils.resourceTypeName), the enum constants' names in change events. Decoding accepts
// either spelling, as Kafka's parsers do.

/** One ACL entry as stored: names, not wire codes (the authorizer maps them). */
export interface ZkAclEntry {
  principal: string;
  permissionType: string;
  operation: string;
  host: string;
}

/** A resource pattern as a change notification names it (types spelled as Kafka's enums). */
export interface ZkAclResource {
  /** "TOPIC", "GROUP", ... (case-insensitive on read). */
  resourceType: string;
  name: string;
  /** "LITERAL" or "PREFIXED". */
  patternType: string;
}

/** Resource type names as the ACL paths spell them (Kafka's AclEntry.RESOURCE_TYPES). */
export const AclResourceTypeNames = ["Topic", "Group", "Cluster", "TransactionalId", "DelegationToken", "User"] as const;

export const LiteralAclZNode = { path: "/kafka-acl" };
export const ExtendedAclZNode = { path: "/kafka-acl-extended" };

/** Where the ACLs of one pattern type live: "/kafka-acl" (literal), "/kafka-acl-extended/prefixed". */
export function aclStorePath(patternType: "LITERAL" | "PREFIXED"): string {
  return patternType === "LITERAL" ? LiteralAclZNode.path : `${ExtendedAclZNode.path}/prefixed`;
}

/** The ACLs of one resource pattern: `{"version":1,"acls":[...]}`. */
export const ResourceAclZNode = {
  /** resourceTypeName as Kafka spells it in paths ("Topic", "TransactionalId"). */
  typePath(patternType: "LITERAL" | "PREFIXED", resourceTypeName: string): string {
    return `${aclStorePath(patternType)}/${resourceTypeName}`;
  },
  path(patternType: "LITERAL" | "PREFIXED", resourceTypeName: string, name: string): string {
    assert(name.length > 0 && !name.includes("/"), `ACL resource name ${JSON.stringify(name)} validated before use in a znode path`);
    return `${aclStorePath(patternType)}/${resourceTypeName}/${name}`;
  },
  encode(acls: readonly ZkAclEntry[]): Uint8Array {
    return jsonBytes({
      version: 1,
      acls: acls.map((a) => ({ principal: a.principal, permissionType: a.permissionType, operation: a.operation, host: a.host })),
    });
  },
  /** The entries; an empty node has none (as Kafka's AclEntry.fromBytes). Null when malformed. */
  decode(bytes: Uint8Array): ZkAclEntry[] | null {
    if (bytes.length === 0) return [];
    const js = parseObject(bytes);
    if (js === null || js.version !== 1 || !Array.isArray(js.acls)) return null;
    const out: ZkAclEntry[] = [];
    for (const a of js.acls) {
      if (!isObject(a)) return null;
      const { principal, permissionType, operation, host } = a;
      if (typeof principal !== "string" || typeof permissionType !== "string" || typeof operation !== "string" || typeof host !== "string") return null;
      out.push({ principal, permissionType, operation, host });
    }
    return out;
  },
};

export const AclChangeSequencePrefix = "acl_changes_";

/** Persistent-sequential notifications of literal ACL changes: "TOPIC:<name>". */
export const LiteralAclChangeZNode = {
  path: "/kafka-acl-changes",
  createPath: `/kafka-acl-changes/${AclChangeSequencePrefix}`,
  encode(resourceTypeEnumName: string, name: string): Uint8Array {
    return textEncoder.encode(`${resourceTypeEnumName}:${name}`);
  },
  decode(bytes: Uint8Array): ZkAclResource | null {
    const s = text(bytes);
    const colon = s === null ? -1 : s.indexOf(":");
    if (s === null || colon < 0) return null;
    return { resourceType: s.slice(0, colon), name: s.slice(colon + 1), patternType: "LITERAL" };
  },
};

/** Persistent-sequential notifications of prefixed ACL changes (Kafka's ExtendedAclChangeEvent, version 1). */
export const ExtendedAclChangeZNode = {
  path: "/kafka-acl-extended-changes",
  createPath: `/kafka-acl-extended-changes/${AclChangeSequencePrefix}`,
  encode(resource: ZkAclResource): Uint8Array {
    return jsonBytes({ version: 1, resourceType: resource.resourceType, name: resource.name, patternType: resource.patternType });
  },
  decode(bytes: Uint8Array): ZkAclResource | null {
    const js = parseObject(bytes);
    if (js === null || js.version !== 1) return null;
    const { resourceType, name, patternType } = js;
    if (typeof resourceType !== "string" || typeof name !== "string" || typeof patternType !== "string") return null;
    return { resourceType, name, patternType };
  },
};

/** The paths Kafka's KafkaZkClient.createAclPaths makes: both stores, a node per resource type, both change paths. */
export const aclPersistentPaths: readonly string[] = [
  ...AclResourceTypeNames.map((t) => ResourceAclZNode.typePath("LITERAL", t)),
  ...AclResourceTypeNames.map((t) => ResourceAclZNode.typePath("PREFIXED", t)),
  LiteralAclChangeZNode.path,
  ExtendedAclChangeZNode.path,
];
