// ACLs as Kafka's AclAuthorizer models and matches them (org.apache.kafka.common.acl/resource,
// kafka.security.authorizer.AclAuthorizer.authorizeAction, AclEntry.supportedOperations):
//
// - A binding is a resource pattern (type, name, LITERAL or PREFIXED) and an entry (principal
//   "Type:name", host, operation, ALLOW or DENY).
// - A request on resource (type, name) is matched by the literal patterns named `name` and "*",
//   and by every prefixed pattern whose name starts `name`.
// - An entry applies when its principal is the request's or "User:*", its host is the client's
//   address or "*", and its operation is the one asked or ALL.
// - Super users are always allowed; with no matching ACL at all the answer is
//   allow.everyone.if.no.acl.found; otherwise a DENY entry for the operation wins, and an ALLOW
//   entry for the operation, or for one that implies it, allows (DESCRIBE is implied by READ,
//   WRITE, DELETE and ALTER; DESCRIBE_CONFIGS by ALTER_CONFIGS). A DENY of READ does not deny
//   DESCRIBE, as in Kafka.
//
// AclCache holds every binding in memory, by resource pattern, and answers synchronously.
import {
  AclOperation,
  AclPermissionType,
  type Authorizer,
  clusterResourceName,
  PatternType,
  type RequestPrincipal,
  ResourceType,
} from "./types.ts";

export interface ResourcePattern {
  resourceType: ResourceType;
  name: string;
  /** LITERAL or PREFIXED (a stored pattern is never ANY, MATCH or UNKNOWN). */
  patternType: PatternType;
}

export interface AccessControlEntry {
  principal: string;
  host: string;
  operation: AclOperation;
  permissionType: AclPermissionType;
}

export interface AclBinding {
  pattern: ResourcePattern;
  entry: AccessControlEntry;
}

/** Kafka's AclBindingFilter: null names/principal/host and the ANY codes match everything. */
export interface AclBindingFilter {
  resourceType: ResourceType;
  name: string | null;
  /** ANY, MATCH, LITERAL or PREFIXED. */
  patternType: PatternType;
  principal: string | null;
  host: string | null;
  operation: AclOperation;
  permissionType: AclPermissionType;
}

export const wildcardResource = "*";
export const wildcardPrincipal = "User:*";
export const wildcardHost = "*";

// ---------------------------------------------------------------------------------------------
// Names: Kafka spells these PascalCase in ZooKeeper ("TransactionalId", "DescribeConfigs") and
// accepts the enum's upper-case name too (SecurityUtils).

function pascal(enumName: string): string {
  return enumName.split("_").map((w) => w.charAt(0) + w.slice(1).toLowerCase()).join("");
}

function namesOf<T extends Record<string, number>>(codes: T): Map<number, string> {
  return new Map(Object.entries(codes).map(([k, v]) => [v, k]));
}

const resourceTypeEnum = namesOf(ResourceType);
const operationEnum = namesOf(AclOperation);
const permissionEnum = namesOf(AclPermissionType);
const patternEnum = namesOf(PatternType);

function parser(codes: Record<string, number>): (name: string) => number | null {
  const byName = new Map<string, number>();
  for (const [k, v] of Object.entries(codes)) {
    byName.set(k, v);
    byName.set(pascal(k), v);
  }
  return (name) => byName.get(name) ?? byName.get(name.toUpperCase()) ?? null;
}

/** "Topic", "TransactionalId" (as /kafka-acl/<ResourceType> spells it). */
export function resourceTypeName(t: ResourceType): string {
  return pascal(resourceTypeEnum.get(t) ?? "UNKNOWN");
}
/** "TOPIC", "TRANSACTIONAL_ID" (Java's enum name, as change notifications spell it). */
export function resourceTypeEnumName(t: ResourceType): string {
  return resourceTypeEnum.get(t) ?? "UNKNOWN";
}
export function operationName(op: AclOperation): string {
  return pascal(operationEnum.get(op) ?? "UNKNOWN");
}
export function permissionTypeName(p: AclPermissionType): string {
  return pascal(permissionEnum.get(p) ?? "UNKNOWN");
}
export function patternTypeEnumName(p: PatternType): string {
  return patternEnum.get(p) ?? "UNKNOWN";
}
export const parseResourceType = parser(ResourceType) as (name: string) => ResourceType | null;
export const parseOperation = parser(AclOperation) as (name: string) => AclOperation | null;
export const parsePermissionType = parser(AclPermissionType) as (name: string) => AclPermissionType | null;
export const parsePatternType = parser(PatternType) as (name: string) => PatternType | null;

const concreteResourceTypes: readonly ResourceType[] = [
  ResourceType.TOPIC,
  ResourceType.GROUP,
  ResourceType.CLUSTER,
  ResourceType.TRANSACTIONAL_ID,
  ResourceType.DELEGATION_TOKEN,
  ResourceType.USER,
];

export function isConcreteResourceType(t: number): t is ResourceType {
  return (concreteResourceTypes as readonly number[]).includes(t);
}

/** Kafka's SecurityUtils.parseKafkaPrincipal: "Type:name", split at the first colon. */
export function principalProblem(principal: string): string | null {
  if (principal.indexOf(":") <= 0) {
    return `Could not parse principal from \`${principal}\` (no colon is present separating the principal type from the principal name)`;
  }
  return null;
}

/**
 * Why a binding cannot be stored (Kafka's AclControlManager.validateNewAcl and
 * AclAuthorizer.validateAclBinding, with their messages), or null when it can.
 */
export function bindingProblem(b: AclBinding): string | null {
  const { pattern, entry } = b;
  if (!isConcreteResourceType(pattern.resourceType)) return `Invalid resourceType ${resourceTypeEnumName(pattern.resourceType)}`;
  if (pattern.patternType !== PatternType.LITERAL && pattern.patternType !== PatternType.PREFIXED) {
    return `Invalid patternType ${patternTypeEnumName(pattern.patternType)}`;
  }
  if (entry.operation < AclOperation.ALL || entry.operation > AclOperation.DESCRIBE_TOKENS) {
    return `Invalid operation ${operationEnum.get(entry.operation) ?? entry.operation}`;
  }
  if (entry.permissionType !== AclPermissionType.ALLOW && entry.permissionType !== AclPermissionType.DENY) {
    return `Invalid permissionType ${permissionEnum.get(entry.permissionType) ?? entry.permissionType}`;
  }
  if (pattern.name === "") return "Invalid empty resource name";
  if (pattern.resourceType === ResourceType.CLUSTER && pattern.name !== clusterResourceName) {
    return `The only valid name for the CLUSTER resource is ${clusterResourceName}`;
  }
  // The name is one znode path component.
  if (pattern.name.includes("/") || pattern.name === "." || pattern.name === ".." || /[\u0000-\u001f\u007f]/.test(pattern.name)) {
    return `ACL binding contains invalid resource name: ${pattern.name}`;
  }
  return principalProblem(entry.principal);
}

/** Why a filter cannot be used (UNKNOWN anywhere, as Kafka's request validation), or null. */
export function filterProblem(f: AclBindingFilter): string | null {
  if (f.resourceType === ResourceType.UNKNOWN || !(f.resourceType === ResourceType.ANY || isConcreteResourceType(f.resourceType))) {
    return "the filter's resource type is UNKNOWN";
  }
  if (f.patternType < PatternType.ANY || f.patternType > PatternType.PREFIXED) return "the filter's pattern type is UNKNOWN";
  if (f.operation < AclOperation.ANY || f.operation > AclOperation.DESCRIBE_TOKENS) return "the filter's operation is UNKNOWN";
  if (f.permissionType < AclPermissionType.ANY || f.permissionType > AclPermissionType.ALLOW) return "the filter's permission type is UNKNOWN";
  return null;
}

// ---------------------------------------------------------------------------------------------
// Filters (ResourcePatternFilter.matches, AccessControlEntryFilter.matches)

export function patternFilterMatches(f: AclBindingFilter, p: ResourcePattern): boolean {
  if (f.resourceType !== ResourceType.ANY && f.resourceType !== p.resourceType) return false;
  if (f.patternType !== PatternType.ANY && f.patternType !== PatternType.MATCH && f.patternType !== p.patternType) return false;
  if (f.name === null) return true;
  if (f.patternType === PatternType.ANY || f.patternType === p.patternType) return f.name === p.name;
  // MATCH: the patterns that would apply to a resource named f.name.
  if (p.patternType === PatternType.LITERAL) return f.name === p.name || p.name === wildcardResource;
  return f.name.startsWith(p.name);
}

export function entryFilterMatches(f: AclBindingFilter, e: AccessControlEntry): boolean {
  if (f.principal !== null && f.principal !== e.principal) return false;
  if (f.host !== null && f.host !== e.host) return false;
  if (f.operation !== AclOperation.ANY && f.operation !== e.operation) return false;
  return f.permissionType === AclPermissionType.ANY || f.permissionType === e.permissionType;
}

export function sameEntry(a: AccessControlEntry, b: AccessControlEntry): boolean {
  return a.principal === b.principal && a.host === b.host && a.operation === b.operation && a.permissionType === b.permissionType;
}

export function patternKey(p: ResourcePattern): string {
  return `${p.resourceType}:${p.patternType}:${p.name}`;
}

// ---------------------------------------------------------------------------------------------
// Authorization

/** The operations Kafka lists per resource type (AclEntry.supportedOperations, Kafka 3.8). */
export function supportedOperations(t: ResourceType): readonly AclOperation[] {
  const O = AclOperation;
  switch (t) {
    case ResourceType.TOPIC:
      return [O.READ, O.WRITE, O.CREATE, O.DESCRIBE, O.DELETE, O.ALTER, O.DESCRIBE_CONFIGS, O.ALTER_CONFIGS];
    case ResourceType.GROUP:
      return [O.READ, O.DESCRIBE, O.DELETE];
    case ResourceType.CLUSTER:
      return [O.CREATE, O.CLUSTER_ACTION, O.DESCRIBE_CONFIGS, O.ALTER_CONFIGS, O.IDEMPOTENT_WRITE, O.ALTER, O.DESCRIBE];
    case ResourceType.TRANSACTIONAL_ID:
      return [O.DESCRIBE, O.WRITE];
    case ResourceType.DELEGATION_TOKEN:
      return [O.DESCRIBE];
    case ResourceType.USER:
      return [O.CREATE_TOKENS, O.DESCRIBE_TOKENS];
    default:
      return [];
  }
}

const describeAllowedBy: readonly AclOperation[] = [AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER];
const describeConfigsAllowedBy: readonly AclOperation[] = [AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS];
const allowedByItself: readonly (readonly AclOperation[])[] = Object.values(AclOperation).map((op) => [op]);

/** The operations whose ALLOW allows `op` (Kafka's implied operations). */
function allowingOperations(op: AclOperation): readonly AclOperation[] {
  if (op === AclOperation.DESCRIBE) return describeAllowedBy;
  if (op === AclOperation.DESCRIBE_CONFIGS) return describeConfigsAllowedBy;
  return allowedByItself[op] ?? [op];
}

export interface AclAuthorizerSettings {
  /** Principals ("User:admin") always allowed (`super.users`). */
  superUsers: readonly string[];
  /** The answer when no ACL matches the resource (`allow.everyone.if.no.acl.found`). */
  allowEveryoneIfNoAclFound: boolean;
}

/** `super.users`: semicolon-separated principals; a string naming the bad one when malformed. */
export function parseSuperUsers(text: string): string[] | string {
  if (text.trim() === "") return [];
  const out: string[] = [];
  for (const part of text.split(";")) {
    const p = part.trim();
    if (p.indexOf(":") <= 0) return `"${p}" is not a principal (expected Type:name, e.g. User:admin)`;
    out.push(p);
  }
  return out;
}

interface Stored {
  pattern: ResourcePattern;
  entries: AccessControlEntry[];
}

/** A prefix trie over UTF-16 code units: a name's prefixed patterns are the nodes on its path. */
interface TrieNode {
  children: Map<number, TrieNode>;
  stored: Stored | null;
}

/** One resource type's patterns of one pattern type, by name (and, for prefixed ones, a trie). */
interface PatternTable {
  byName: Map<string, Stored>;
  trie: TrieNode;
}

function trieSet(root: TrieNode, name: string, stored: Stored | null): void {
  const path: TrieNode[] = [root];
  let node = root;
  for (let i = 0; i < name.length; i++) {
    let next = node.children.get(name.charCodeAt(i));
    if (next === undefined) {
      if (stored === null) return;
      next = { children: new Map(), stored: null };
      node.children.set(name.charCodeAt(i), next);
    }
    node = next;
    path.push(node);
  }
  node.stored = stored;
  // A removed pattern's nodes go too, unless they lead to others.
  for (let i = path.length - 1; i > 0 && path[i].stored === null && path[i].children.size === 0; i--) {
    path[i - 1].children.delete(name.charCodeAt(i - 1));
  }
}

/**
 * Every ACL in memory, by resource type, pattern type and name, and Kafka's authorization over
 * them. A request's resource is matched by two literal lookups (its name and "*") and, for
 * prefixed patterns, a walk down a trie of the prefixes along the name's characters, as far as
 * the longest prefix that fits (slicing prefixes instead costs a new string per length, which
 * Bun hashes slowly). authorize() allocates nothing.
 */
export class AclCache implements Authorizer {
  private readonly tables = new Map<number, PatternTable>();
  private readonly superUsers: Set<string>;
  /** Scratch list of the matching entry arrays, reused by each call (calls never nest). */
  private readonly matched: (readonly AccessControlEntry[])[] = [];

  constructor(readonly settings: AclAuthorizerSettings) {
    this.superUsers = new Set(settings.superUsers);
  }

  private table(resourceType: ResourceType, patternType: PatternType, create: boolean): PatternTable | undefined {
    const key = resourceType * 8 + patternType;
    let t = this.tables.get(key);
    if (t === undefined && create) {
      t = { byName: new Map(), trie: { children: new Map(), stored: null } };
      this.tables.set(key, t);
    }
    return t;
  }

  /** Replaces one pattern's entries (none: removes it). */
  set(pattern: ResourcePattern, entries: readonly AccessControlEntry[]): void {
    const t = this.table(pattern.resourceType, pattern.patternType, entries.length > 0);
    if (t === undefined) return;
    const prefixed = pattern.patternType === PatternType.PREFIXED;
    if (entries.length === 0) {
      t.byName.delete(pattern.name);
      if (prefixed) trieSet(t.trie, pattern.name, null);
      return;
    }
    const stored = { pattern: { ...pattern }, entries: [...entries] };
    t.byName.set(pattern.name, stored);
    if (prefixed) trieSet(t.trie, pattern.name, stored);
  }

  get(pattern: ResourcePattern): readonly AccessControlEntry[] {
    return this.table(pattern.resourceType, pattern.patternType, false)?.byName.get(pattern.name)?.entries ?? [];
  }

  private *stored(): Generator<Stored> {
    for (const t of this.tables.values()) yield* t.byName.values();
  }

  patterns(): ResourcePattern[] {
    return [...this.stored()].map((s) => s.pattern);
  }

  get size(): number {
    let n = 0;
    for (const s of this.stored()) n += s.entries.length;
    return n;
  }

  /** Every stored binding the filter matches. */
  acls(filter: AclBindingFilter): AclBinding[] {
    const out: AclBinding[] = [];
    for (const s of this.stored()) {
      if (!patternFilterMatches(filter, s.pattern)) continue;
      for (const e of s.entries) if (entryFilterMatches(filter, e)) out.push({ pattern: s.pattern, entry: e });
    }
    return out;
  }

  /** The entries of every pattern that applies to the resource (AclAuthorizer.matchingAcls). */
  matchingEntries(resourceType: ResourceType, name: string): AccessControlEntry[] {
    return this.match(resourceType, name).flat();
  }

  /** Fills and returns the scratch list with the entry arrays of the patterns that apply. */
  private match(resourceType: ResourceType, name: string): (readonly AccessControlEntry[])[] {
    const out = this.matched;
    out.length = 0;
    const literal = this.table(resourceType, PatternType.LITERAL, false);
    if (literal !== undefined) {
      const wildcard = literal.byName.get(wildcardResource);
      if (wildcard !== undefined) out.push(wildcard.entries);
      const exact = name === wildcardResource ? undefined : literal.byName.get(name);
      if (exact !== undefined) out.push(exact.entries);
    }
    const prefixed = this.table(resourceType, PatternType.PREFIXED, false);
    if (prefixed !== undefined) {
      // Walk the name's code units down the trie: no substring is made.
      let node: TrieNode | undefined = prefixed.trie;
      for (let i = 0; i < name.length && node !== undefined; i++) {
        node = node.children.get(name.charCodeAt(i));
        if (node?.stored) out.push(node.stored.entries);
      }
    }
    return out;
  }

  authorize(who: RequestPrincipal, operation: AclOperation, resourceType: ResourceType, name: string): boolean {
    if (this.superUsers.has(who.principal)) return true;
    return this.allowedBy(this.match(resourceType, name), who.principal, aclHost(who.host), operation);
  }

  authorizedOperations(who: RequestPrincipal, resourceType: ResourceType, name: string): number {
    const ops = supportedOperations(resourceType);
    const superUser = this.superUsers.has(who.principal);
    const matched = superUser ? [] : this.match(resourceType, name);
    const host = aclHost(who.host);
    let bits = 0;
    for (const op of ops) if (superUser || this.allowedBy(matched, who.principal, host, op)) bits |= 1 << op;
    return bits;
  }

  /**
   * Kafka's AclAuthorizer.authorizeByResourceType: a DENY on the wildcard resource denies;
   * otherwise allow.everyone.if.no.acl.found allows; otherwise some ALLOW (literal or prefixed)
   * must name a resource that no DENY literal of the same name or DENY prefix of it covers. Only
   * the operation itself and ALL count (no implied operations), principal and host exact or
   * wildcard. Scans the type's patterns: asked once per InitProducerId, not per record.
   */
  authorizeByResourceType(who: RequestPrincipal, operation: AclOperation, resourceType: ResourceType): boolean {
    if (this.superUsers.has(who.principal)) return true;
    const host = aclHost(who.host);
    const names = (patternType: PatternType, permission: AclPermissionType): Set<string> => {
      const out = new Set<string>();
      const t = this.table(resourceType, patternType, false);
      if (t === undefined) return out;
      for (const s of t.byName.values()) {
        for (const e of s.entries) {
          if (e.permissionType === permission && (e.principal === who.principal || e.principal === wildcardPrincipal) &&
            (e.operation === operation || e.operation === AclOperation.ALL) && (e.host === wildcardHost || e.host === host)) {
            out.add(s.pattern.name);
            break;
          }
        }
      }
      return out;
    };
    const denyLiterals = names(PatternType.LITERAL, AclPermissionType.DENY);
    if (denyLiterals.has(wildcardResource)) return false;
    if (this.settings.allowEveryoneIfNoAclFound) return true;
    const denyPrefixes = names(PatternType.PREFIXED, AclPermissionType.DENY);
    const deniedByPrefix = (name: string) => {
      for (const p of denyPrefixes) if (name.startsWith(p)) return true;
      return false;
    };
    for (const p of names(PatternType.PREFIXED, AclPermissionType.ALLOW)) if (!deniedByPrefix(p)) return true;
    for (const l of names(PatternType.LITERAL, AclPermissionType.ALLOW)) {
      if (l === wildcardResource || (!denyLiterals.has(l) && !deniedByPrefix(l))) return true;
    }
    return false;
  }

  private allowedBy(matched: readonly (readonly AccessControlEntry[])[], principal: string, host: string, operation: AclOperation): boolean {
    let any = false;
    for (const entries of matched) if (entries.length > 0) any = true;
    if (!any) return this.settings.allowEveryoneIfNoAclFound;
    for (const entries of matched) for (const e of entries) if (applies(e, principal, host, operation, AclPermissionType.DENY)) return false;
    for (const op of allowingOperations(operation)) {
      for (const entries of matched) for (const e of entries) if (applies(e, principal, host, op, AclPermissionType.ALLOW)) return true;
    }
    return false;
  }
}

function applies(e: AccessControlEntry, principal: string, host: string, operation: AclOperation, permission: AclPermissionType): boolean {
  return e.permissionType === permission &&
    (e.principal === principal || e.principal === wildcardPrincipal) &&
    (e.operation === operation || e.operation === AclOperation.ALL) &&
    (e.host === wildcardHost || e.host === host);
}

/**
 * The client's address as Kafka's ACLs name it (InetAddress.getHostAddress): an IPv4 client on a
 * dual-stack listener arrives as "::ffff:10.0.0.1", which Java sees as the IPv4 address.
 */
export function aclHost(address: string): string {
  return address.length > 7 && address.charCodeAt(0) === 58 /* : */ && /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address;
}
