// AclAuthorizer: Kafka's kafka.security.authorizer.AclAuthorizer over the registry. The ACLs live
// in Kafka's ZooKeeper layout (registry/znodes.ts: /kafka-acl, /kafka-acl-extended/prefixed, and
// the change notifications /kafka-acl-changes, /kafka-acl-extended-changes), so Kafka's
// kafka-acls.sh --authorizer-properties zookeeper.connect=... and strand read each other's ACLs.
//
// Invariants:
// - authorize() answers from the in-memory AclCache, never awaiting (see types.ts).
// - start() watches both notification paths and then loads every ACL (Kafka's order: no change
//   can fall between the load and the first watch); the broker awaits it before it binds a port.
// - Every change (create, delete, a notification's re-read) runs on one queue, as Kafka's
//   `lock`: a resource is read, changed and written conditionally on the version read (retried
//   when another writer got there first), and the write and its notification are one multi.
// - A notification names a resource; every broker re-reads that resource's node, so what it
//   holds converges on the registry whatever the order. Notifications older than Kafka's 15
//   minutes are deleted by whichever broker sees them (ZkNodeChangeNotificationListener).
// - A node that does not parse is logged and counts as no ACLs, never a crash.
// - Every decision of authorize() is counted (/metrics) and logged as Kafka's logAuditMessage, to
//   a child logger with logger=kafka.authorizer.logger: denied at info, allowed at debug.
import type { Clock } from "../platform/mod.ts";
import {
  AclChangeSequencePrefix,
  aclPersistentPaths,
  aclStorePath,
  ExtendedAclChangeZNode,
  isRegistryUnavailable,
  LiteralAclChangeZNode,
  type Op,
  type Registry,
  RegistryError,
  ResourceAclZNode,
  type ZkAclEntry,
  type ZkAclResource,
} from "../registry/mod.ts";
import { aclWriteAttemptsMax, authorizerLogLinesPerSecondMax, ErrorCode, type Logger } from "../util/mod.ts";
import {
  type AccessControlEntry,
  type AclAuthorizerSettings,
  type AclBinding,
  type AclBindingFilter,
  AclCache,
  bindingProblem,
  filterProblem,
  operationName,
  parseOperation,
  parsePatternType,
  parsePermissionType,
  parseResourceType,
  patternFilterMatches,
  patternKey,
  patternTypeEnumName,
  permissionTypeName,
  resourceTypeEnumName,
  resourceTypeName,
  type ResourcePattern,
  sameEntry,
  entryFilterMatches,
} from "./acl.ts";
import { AclOperation, AclPermissionType, type Authorizer, type AuthorizerMetrics, PatternType, type RequestPrincipal, ResourceType } from "./types.ts";

/** The `logger` field of the audit lines: Kafka's log4j logger name, for an operator's filter. */
export const authorizerLoggerName = "kafka.authorizer.logger";

/** How long a change notification stays in the registry (Kafka's changeExpirationMs). */
export const aclChangeExpirationMs = 15 * 60 * 1000;

/** One binding's outcome: errorCode 0, or Kafka's code with a message. */
export interface AclResult {
  errorCode: number;
  errorMessage: string | null;
}

export interface AclDeleteResult extends AclResult {
  /** The bindings the filter matched and deleted (each with its own outcome). */
  deleted: (AclBinding & AclResult)[];
}

const { INVALID_REQUEST, UNKNOWN_SERVER_ERROR, REQUEST_TIMED_OUT, KAFKA_STORAGE_ERROR } = ErrorCode;
/** An entry that passes validation, to check a pattern alone. */
const anyEntry: AccessControlEntry = { principal: "User:*", host: "*", operation: AclOperation.ALL, permissionType: AclPermissionType.ALLOW };

function storeOf(p: PatternType): "LITERAL" | "PREFIXED" {
  return p === PatternType.PREFIXED ? "PREFIXED" : "LITERAL";
}

function nodePath(p: ResourcePattern): string {
  return ResourceAclZNode.path(storeOf(p.patternType), resourceTypeName(p.resourceType), p.name);
}

function toZk(e: AccessControlEntry): ZkAclEntry {
  return { principal: e.principal, permissionType: permissionTypeName(e.permissionType), operation: operationName(e.operation), host: e.host };
}

function fromZk(z: ZkAclEntry): AccessControlEntry | null {
  const operation = parseOperation(z.operation);
  const permissionType = parsePermissionType(z.permissionType);
  if (operation === null || permissionType === null || z.principal.indexOf(":") <= 0) return null;
  return { principal: z.principal, host: z.host, operation, permissionType };
}

function changeNotification(p: ResourcePattern): Op {
  if (p.patternType === PatternType.LITERAL) {
    return { op: "create", path: LiteralAclChangeZNode.createPath, data: LiteralAclChangeZNode.encode(resourceTypeEnumName(p.resourceType), p.name), mode: "persistent-sequential" };
  }
  const event: ZkAclResource = { resourceType: resourceTypeEnumName(p.resourceType), name: p.name, patternType: patternTypeEnumName(p.patternType) };
  return { op: "create", path: ExtendedAclChangeZNode.createPath, data: ExtendedAclChangeZNode.encode(event), mode: "persistent-sequential" };
}

function errorOf(e: unknown): AclResult {
  if (e instanceof RegistryError) {
    if (e.code === "SystemError" && e.ioCode !== null) return { errorCode: KAFKA_STORAGE_ERROR, errorMessage: `the registry could not store the ACL change: ${e.message}` };
    if (isRegistryUnavailable(e)) return { errorCode: REQUEST_TIMED_OUT, errorMessage: e.message };
  }
  return { errorCode: UNKNOWN_SERVER_ERROR, errorMessage: e instanceof Error ? e.message : String(e) };
}

/**
 * What the ACL APIs need of an authorizer beyond the Authorizer contract (Kafka's Authorizer has
 * acls/createAcls/deleteAcls too); an authorizer without them (a test's) manages no ACLs.
 */
export interface AclStore {
  acls(filter: AclBindingFilter): AclBinding[];
  createAcls(bindings: readonly AclBinding[]): Promise<AclResult[]>;
  deleteAcls(filters: readonly AclBindingFilter[]): Promise<AclDeleteResult[]>;
  shutdown(): Promise<void>;
}

/** The authorizer's ACL management, or null when there is no authorizer or it manages no ACLs. */
export function aclStoreOf(a: Authorizer | null): AclStore | null {
  if (a === null || !("createAcls" in a) || !("deleteAcls" in a) || !("acls" in a)) return null;
  return a as unknown as AclStore;
}

interface Versioned {
  entries: AccessControlEntry[];
  /** The node's data version; -1 when the node does not exist. */
  version: number;
}

export class AclAuthorizer implements Authorizer, AclStore {
  readonly cache: AclCache;
  private readonly versions = new Map<string, number>();
  private queue: Promise<unknown> = Promise.resolve();
  private stopped = false;
  private readonly lastExecuted = new Map<string, number>();
  private readonly watchers = new Map<string, () => void>();
  private readonly queuedRounds = new Set<string>();
  private allowedTotal = 0;
  private deniedTotal = 0;
  /** Kafka's kafka.authorizer.logger, so an operator can filter (or silence) the decisions. */
  private readonly auditLogger: Logger;
  private readonly auditWindow = { startMs: -Infinity, lines: 0, unsaid: 0 };

  constructor(
    private readonly registry: Registry,
    settings: AclAuthorizerSettings,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    this.cache = new AclCache(settings);
    this.auditLogger = logger.child({ logger: authorizerLoggerName });
  }

  authorize(who: RequestPrincipal, operation: AclOperation, resourceType: ResourceType, name: string, logIfDenied = true): boolean {
    const ok = this.cache.authorize(who, operation, resourceType, name);
    if (ok) this.allowedTotal++;
    else this.deniedTotal++;
    // Kafka's logAuditMessage: denied at INFO (trace when only filtering), allowed at DEBUG.
    if (ok || logIfDenied) this.audit(who, operation, resourceType, name, ok);
    return ok;
  }

  metrics(): AuthorizerMetrics {
    return { aclsTotal: this.cache.size, allowedTotal: this.allowedTotal, deniedTotal: this.deniedTotal };
  }

  /**
   * One line in Kafka's words. Denials are capped at authorizerLogLinesPerSecondMax a second (the
   * rest counted, then said) so a denied flood cannot fill the log; allowed decisions go to debug
   * uncapped and do not count against the cap, or ordinary traffic (debug off) would hide denials.
   */
  private audit(who: RequestPrincipal, operation: AclOperation, resourceType: ResourceType, name: string, ok: boolean): void {
    const line = () =>
      `Principal = ${who.principal} is ${ok ? "Allowed" : "Denied"} Operation = ${operationName(operation)} from host = ${who.host} ` +
      `on resource = ${resourceTypeName(resourceType)}:LITERAL:${name} for request = ${who.request ?? "unknown"} with resourceRefCount = 1`;
    if (ok) {
      this.auditLogger.debug({}, line());
      return;
    }
    const now = this.clock.monotonicMs();
    const w = this.auditWindow;
    if (now - w.startMs >= 1000) {
      w.startMs = now;
      w.lines = 0;
    }
    if (w.lines >= authorizerLogLinesPerSecondMax) {
      w.unsaid++;
      return;
    }
    w.lines++;
    const fields = w.unsaid === 0 ? {} : { unsaidSinceLast: w.unsaid };
    w.unsaid = 0;
    this.auditLogger.info(fields, line());
  }

  authorizedOperations(who: RequestPrincipal, resourceType: ResourceType, name: string): number {
    return this.cache.authorizedOperations(who, resourceType, name);
  }

  authorizeByResourceType(who: RequestPrincipal, operation: AclOperation, resourceType: ResourceType): boolean {
    return this.cache.authorizeByResourceType(who, operation, resourceType);
  }

  /** Creates Kafka's ACL paths, watches the change paths, then loads every ACL. */
  async start(): Promise<void> {
    for (const path of aclPersistentPaths) await this.registry.ensurePath(path);
    await this.enqueue(() => this.processNotifications(LiteralAclChangeZNode.path));
    await this.enqueue(() => this.processNotifications(ExtendedAclChangeZNode.path));
    await this.enqueue(() => this.loadAll());
    this.logger.info({ acls: this.cache.size }, "ACLs loaded");
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    await this.queue.catch(() => {});
  }

  /** Every ACL the filter matches (DescribeAcls). */
  acls(filter: AclBindingFilter): AclBinding[] {
    return this.cache.acls(filter);
  }

  /** Stores the bindings (CreateAcls); one result per binding, in order. */
  createAcls(bindings: readonly AclBinding[]): Promise<AclResult[]> {
    return this.enqueue(async () => {
      const results: AclResult[] = bindings.map(() => ({ errorCode: 0, errorMessage: null }));
      const byPattern = new Map<string, { pattern: ResourcePattern; indexes: number[] }>();
      bindings.forEach((b, i) => {
        const problem = bindingProblem(b);
        if (problem !== null) {
          results[i] = { errorCode: INVALID_REQUEST, errorMessage: problem };
          return;
        }
        const key = patternKey(b.pattern);
        const group = byPattern.get(key) ?? { pattern: b.pattern, indexes: [] };
        group.indexes.push(i);
        byPattern.set(key, group);
      });
      for (const { pattern, indexes } of byPattern.values()) {
        try {
          await this.updateResource(pattern, (current) => {
            const next = [...current];
            for (const i of indexes) if (!next.some((e) => sameEntry(e, bindings[i].entry))) next.push({ ...bindings[i].entry });
            return next;
          });
        } catch (e) {
          const err = errorOf(e);
          for (const i of indexes) results[i] = err;
        }
      }
      return results;
    });
  }

  /** Deletes what each filter matches (DeleteAcls); one result per filter, in order. */
  deleteAcls(filters: readonly AclBindingFilter[]): Promise<AclDeleteResult[]> {
    return this.enqueue(async () => {
      const results: AclDeleteResult[] = filters.map((f) => {
        const problem = filterProblem(f);
        return { errorCode: problem === null ? 0 : INVALID_REQUEST, errorMessage: problem, deleted: [] };
      });
      const usable = filters.map((f, i) => ({ f, i })).filter(({ i }) => results[i].errorCode === 0);
      // Every pattern held here, and those a definite filter names (they may exist in the registry
      // before a notification has told this broker), as Kafka's deleteAcls.
      const resources = new Map<string, ResourcePattern>();
      for (const p of this.cache.patterns()) resources.set(patternKey(p), p);
      for (const { f } of usable) for (const p of definitePatterns(f)) resources.set(patternKey(p), p);
      for (const pattern of resources.values()) {
        const matching = usable.filter(({ f }) => patternFilterMatches(f, pattern));
        if (matching.length === 0) continue;
        const removed: { entry: AccessControlEntry; filter: number }[] = [];
        try {
          await this.updateResource(pattern, (current) => {
            removed.length = 0;
            return current.filter((entry) => {
              const by = matching.find(({ f }) => entryFilterMatches(f, entry));
              if (by === undefined) return true;
              removed.push({ entry, filter: by.i });
              return false;
            });
          });
          for (const r of removed) results[r.filter].deleted.push({ pattern, entry: r.entry, errorCode: 0, errorMessage: null });
        } catch (e) {
          const err = errorOf(e);
          for (const r of removed) results[r.filter].deleted.push({ pattern, entry: r.entry, ...err });
        }
      }
      return results;
    });
  }

  private enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => {});
    return run;
  }

  /**
   * Kafka's updateResourceAcls: read (from the cache when held, else the registry), compute, write
   * conditionally on the version read, with the change notification in the same multi; on a lost
   * race read again and retry, up to aclWriteAttemptsMax.
   */
  private async updateResource(pattern: ResourcePattern, change: (current: readonly AccessControlEntry[]) => AccessControlEntry[]): Promise<void> {
    const key = patternKey(pattern);
    const path = nodePath(pattern);
    let current: Versioned = this.versions.has(key) ? { entries: [...this.cache.get(pattern)], version: this.versions.get(key)! } : await this.read(pattern);
    for (let attempt = 0; attempt < aclWriteAttemptsMax; attempt++) {
      const next = change(current.entries);
      if (next.length === current.entries.length && next.every((e) => current.entries.some((c) => sameEntry(c, e)))) {
        this.apply(pattern, current);
        return;
      }
      const data = ResourceAclZNode.encode(next.map(toZk));
      const ops: Op[] = next.length === 0
        ? [{ op: "delete", path, version: current.version }]
        : current.version < 0
        ? [{ op: "create", path, data }]
        : [{ op: "setData", path, data, version: current.version }];
      ops.push(changeNotification(pattern));
      try {
        const results = await this.registry.multi(ops);
        const first = results[0];
        const version = first.op === "setData" ? first.stat.version : first.op === "create" ? 0 : -1;
        this.apply(pattern, { entries: next, version });
        this.logger.info({ resource: `${resourceTypeName(pattern.resourceType)}:${patternTypeEnumName(pattern.patternType)}:${pattern.name}`, acls: next.length }, "ACLs changed");
        return;
      } catch (e) {
        if (!(e instanceof RegistryError && (e.code === "BadVersion" || e.code === "NodeExists" || e.code === "NoNode"))) throw e;
        // Another writer changed the node since it was read: read it again.
        current = await this.read(pattern);
      }
    }
    throw new Error(`Failed to update ACLs for ${resourceTypeName(pattern.resourceType)}:${pattern.name} after trying a maximum of ${aclWriteAttemptsMax} times`);
  }

  private apply(pattern: ResourcePattern, v: Versioned): void {
    const key = patternKey(pattern);
    this.cache.set(pattern, v.entries);
    if (v.entries.length === 0 && v.version < 0) this.versions.delete(key);
    else this.versions.set(key, v.version);
  }

  private async read(pattern: ResourcePattern): Promise<Versioned> {
    const path = nodePath(pattern);
    let node;
    try {
      node = await this.registry.getData(path);
    } catch (e) {
      if (e instanceof RegistryError && e.code === "NoNode") return { entries: [], version: -1 };
      throw e;
    }
    const decoded = ResourceAclZNode.decode(node.data);
    if (decoded === null) {
      this.logger.warn({ path }, "ACL node does not parse; it grants nothing");
      return { entries: [], version: node.stat.version };
    }
    const entries: AccessControlEntry[] = [];
    for (const z of decoded) {
      const e = fromZk(z);
      if (e === null) this.logger.warn({ path, acl: z }, "ACL entry does not parse; ignored");
      else if (!entries.some((x) => sameEntry(x, e))) entries.push(e);
    }
    return { entries, version: node.stat.version };
  }

  /** Kafka's loadAllAcls: every resource type under both stores. */
  private async loadAll(): Promise<void> {
    for (const store of ["LITERAL", "PREFIXED"] as const) {
      const patternType = store === "LITERAL" ? PatternType.LITERAL : PatternType.PREFIXED;
      const typesPath = aclStorePath(store);
      for (const typeName of await this.children(typesPath)) {
        const resourceType = parseResourceType(typeName);
        if (resourceType === null || resourceType === ResourceType.ANY || resourceType === ResourceType.UNKNOWN) {
          this.logger.warn({ path: `${typesPath}/${typeName}` }, "ignoring unknown ACL resource type");
          continue;
        }
        for (const name of await this.children(`${typesPath}/${typeName}`)) {
          const pattern = { resourceType, name, patternType };
          this.apply(pattern, await this.read(pattern));
        }
      }
    }
  }

  private async children(path: string, watch?: () => void): Promise<string[]> {
    try {
      return await this.registry.getChildren(path, watch);
    } catch (e) {
      if (e instanceof RegistryError && e.code === "NoNode") return [];
      throw e;
    }
  }

  /** ZkNodeChangeNotificationListener: re-read the resources named by new notifications; purge old ones. */
  /**
   * The watcher of a change path: one function per path, so the registry holds it once however
   * many rounds set it, and a round already queued absorbs further events (it reads the children
   * after them).
   */
  private watcherOf(changePath: string): () => void {
    let w = this.watchers.get(changePath);
    if (w === undefined) {
      w = () => {
        if (this.queuedRounds.has(changePath)) return;
        this.queuedRounds.add(changePath);
        void this.enqueue(() => {
          this.queuedRounds.delete(changePath);
          return this.processNotifications(changePath);
        }).catch((e) => this.logger.error({ err: e instanceof Error ? e.stack : String(e), path: changePath }, "ACL change processing failed"));
      };
      this.watchers.set(changePath, w);
    }
    return w;
  }

  private async processNotifications(changePath: string): Promise<void> {
    if (this.stopped) return;
    const children = await this.children(changePath, this.watcherOf(changePath));
    const last = this.lastExecuted.get(changePath) ?? -1;
    const nowMs = this.clock.nowMs();
    for (const child of children) {
      const seq = child.startsWith(AclChangeSequencePrefix) ? Number(child.slice(AclChangeSequencePrefix.length)) : NaN;
      if (!Number.isSafeInteger(seq)) continue;
      const path = `${changePath}/${child}`;
      let node;
      try {
        node = await this.registry.getData(path);
      } catch (e) {
        if (e instanceof RegistryError && e.code === "NoNode") continue;
        throw e;
      }
      if (seq > last) {
        const pattern = this.decodeNotification(changePath, node.data);
        if (pattern === null) this.logger.warn({ path }, "malformed ACL change notification; skipped");
        else this.apply(pattern, await this.read(pattern));
        this.lastExecuted.set(changePath, seq);
      }
      if (nowMs - node.stat.ctime > aclChangeExpirationMs) {
        try {
          await this.registry.delete(path);
        } catch {
          // Another broker purged it first.
        }
      }
    }
  }

  private decodeNotification(changePath: string, data: Uint8Array): ResourcePattern | null {
    const r = changePath === LiteralAclChangeZNode.path ? LiteralAclChangeZNode.decode(data) : ExtendedAclChangeZNode.decode(data);
    if (r === null) return null;
    const resourceType = parseResourceType(r.resourceType);
    const patternType = parsePatternType(r.patternType);
    if (resourceType === null || patternType === null) return null;
    const pattern = { resourceType, name: r.name, patternType };
    if (bindingProblem({ pattern, entry: anyEntry }) !== null) return null;
    return pattern;
  }
}

/** The patterns a filter names exactly (Kafka's filterToResources, for matchesAtMostOne filters). */
function definitePatterns(f: AclBindingFilter): ResourcePattern[] {
  if (f.resourceType === ResourceType.ANY || f.name === null || f.patternType === PatternType.MATCH) return [];
  const types = f.patternType === PatternType.ANY ? [PatternType.LITERAL, PatternType.PREFIXED] : [f.patternType];
  return types
    .map((patternType) => ({ resourceType: f.resourceType, name: f.name!, patternType }))
    .filter((pattern) => bindingProblem({ pattern, entry: anyEntry }) === null);
}
