// Client quotas as Kafka keeps them in ZooKeeper (KIP-55, KIP-546), and the two admin APIs over them.
//
//   /config/users/<user>                        {"version":1,"config":{"producer_byte_rate":"1048576", "SCRAM-SHA-256":"…"}}
//   /config/users/<user>/clients/<client-id>    {"version":1,"config":{"consumer_byte_rate":"2048"}}
//   /config/clients/<client-id>                 {"version":1,"config":{"request_percentage":"50.0"}}
//   /config/ips/<ip>                            {"version":1,"config":{"connection_creation_rate":"10"}}
//   /config/changes/config_change_<10 digits>   {"version":2,"entity_path":"users/<user>/clients/<client-id>"}
//
// Names are sanitized as Kafka's Sanitizer does; "<default>" is the default entity. A user's node
// also holds the user's SCRAM credentials (scram_credentials.ts): a quota change rewrites only the
// quota keys of the node it reads and keeps every other key, at the version it read.
//
// QuotaStore is each broker's copy of every quota, loaded at start-up and one entity re-read when
// a change notification names it (ConfigChangeWatcher). resolve() picks the quota that applies
// to a (user, client id) with Kafka's precedence (DefaultQuotaCallback), first match wins:
//   1 users/<u>/clients/<c>   2 users/<u>/clients/<default>   3 users/<u>
//   4 users/<default>/clients/<c>   5 users/<default>/clients/<default>   6 users/<default>
//   7 clients/<c>   8 clients/<default>
// and the tags the usage is counted under: levels 1, 2, 4, 5 per (user, client id), 3 and 6 per
// user (all its clients share the quota), 7 and 8 per client id.
//
// An ip entity (KIP-612) stands alone, never beside a user or client id, and has one key,
// connection_creation_rate: new connections per second accepted from that address (the address's
// own quota, else ips/<default>); ip_connection_rate.ts enforces it at accept.
import { registryWriteFailure } from "../controller/mod.ts";
import {
  ClientQuotaEntityZNode,
  ConfigEntityChangeNotificationSequenceZNode,
  ConfigEntityName,
  ConfigEntityTypeZNode,
  ConfigEntityZNode,
  ConfigType,
  type Registry,
  RegistryError,
} from "../registry/mod.ts";
import type { Struct } from "../protocol/mod.ts";
import { canonicalIp, configWriteAttemptsMax, ErrorCode, type Logger } from "../util/mod.ts";

// Defined in util (the authorizer compares addresses with it too); still reachable where it was.
export { canonicalIp };
import { desanitizeEntityName, sanitizeEntityName } from "./scram_credentials.ts";

/** Kafka's QuotaConfigs keys for users and client ids, with their ConfigDef types. */
export const QuotaConfigKey = {
  ProducerByteRate: "producer_byte_rate",
  ConsumerByteRate: "consumer_byte_rate",
  RequestPercentage: "request_percentage",
  ControllerMutationRate: "controller_mutation_rate",
  /** The ip entity's only key (Kafka's QuotaConfigs.IP_CONNECTION_RATE_OVERRIDE_CONFIG, an INT). */
  ConnectionCreationRate: "connection_creation_rate",
} as const;
const keyTypes: ReadonlyMap<string, "long" | "double"> = new Map([
  [QuotaConfigKey.ProducerByteRate, "long"],
  [QuotaConfigKey.ConsumerByteRate, "long"],
  [QuotaConfigKey.RequestPercentage, "double"],
  [QuotaConfigKey.ControllerMutationRate, "double"],
]);
/** Kafka's DynamicConfig.Ip keys: the only ones an ip entity takes. */
const ipKeyTypes: ReadonlyMap<string, "long" | "double" | "int"> = new Map([[QuotaConfigKey.ConnectionCreationRate, "int"]]);
const allKeyTypes: ReadonlyMap<string, "long" | "double" | "int"> = new Map([...keyTypes, ...ipKeyTypes]);

/** The quotas strand enforces, each with its key (Kafka's ClientQuotaType). */
export type QuotaType = "produce" | "fetch" | "request" | "controller_mutation";
export const quotaKeyOf: Readonly<Record<QuotaType, string>> = {
  produce: QuotaConfigKey.ProducerByteRate,
  fetch: QuotaConfigKey.ConsumerByteRate,
  request: QuotaConfigKey.RequestPercentage,
  controller_mutation: QuotaConfigKey.ControllerMutationRate,
};

/** Entity types as the admin APIs name them (Kafka's ClientQuotaEntity). */
export const QuotaEntityType = { User: "user", ClientId: "client-id", Ip: "ip" } as const;

/** A quota entity: a name, null for the default entity, undefined when that part is absent. */
export interface QuotaEntity {
  user?: string | null;
  clientId?: string | null;
  /** An address in canonical form (canonicalIp), never beside user or clientId. */
  ip?: string | null;
}

function entityKey(e: QuotaEntity): string {
  const part = (n: string | null | undefined) => (n === undefined ? "-" : n === null ? "d" : `n${n}`);
  return `${part(e.user)}\u0000${part(e.clientId)}\u0000${part(e.ip)}`;
}

function sanitized(name: string | null): string {
  return name === null ? ConfigEntityName.Default : sanitizeEntityName(name);
}

function desanitized(text: string): string | null | undefined {
  if (text === ConfigEntityName.Default) return null;
  return desanitizeEntityName(text) ?? undefined;
}

/** The sanitized entity path of an entity ("users/alice/clients/%3Cx%3E"). */
export function quotaEntityPath(e: QuotaEntity): string {
  if (e.ip !== undefined) return `${ConfigType.Ip}/${sanitized(e.ip)}`;
  return ClientQuotaEntityZNode.entityPath(e.user === undefined ? null : sanitized(e.user), e.clientId === undefined ? null : sanitized(e.clientId));
}

/** The entity an entity path names, or null when it is no quota entity ("topics/t", a malformed name). */
export function parseQuotaEntityPath(entityPath: string): QuotaEntity | null {
  const parts = entityPath.split("/");
  const user = ConfigType.User, client = ConfigType.Client;
  const names = (texts: string[]) => {
    const out = texts.map((t) => (t === "" ? undefined : desanitized(t)));
    return out.includes(undefined) ? null : (out as (string | null)[]);
  };
  if (parts.length === 2 && (parts[0] === user || parts[0] === client)) {
    const n = names([parts[1]]);
    if (n === null) return null;
    return parts[0] === user ? { user: n[0] } : { clientId: n[0] };
  }
  if (parts.length === 2 && parts[0] === ConfigType.Ip) {
    const n = names([parts[1]]);
    if (n === null) return null;
    // Not an address: a host name, as Kafka stores it; the QuotaStore resolves it when read.
    return { ip: n[0] === null ? null : canonicalIp(n[0]) ?? n[0] };
  }
  if (parts.length === 4 && parts[0] === user && parts[2] === client) {
    const n = names([parts[1], parts[3]]);
    return n === null ? null : { user: n[0], clientId: n[1] };
  }
  return null;
}

/** The quota keys of a config node, as numbers; other keys (SCRAM credentials) are left out. */
function quotaValuesOf(config: ReadonlyMap<string, string>, entity: QuotaEntity): Map<string, number> {
  const types = entity.ip !== undefined ? ipKeyTypes : keyTypes;
  const out = new Map<string, number>();
  for (const [k, v] of config) {
    if (!types.has(k)) continue;
    const n = Number(v);
    if (v.trim() !== "" && Number.isFinite(n)) out.set(k, n);
  }
  return out;
}

async function readNode(registry: Registry, path: string): Promise<{ config: Map<string, string>; version: number } | null> {
  try {
    const { data, stat } = await registry.getData(path);
    return { config: ConfigEntityZNode.decode(data) ?? new Map(), version: stat.version };
  } catch (e) {
    if (e instanceof RegistryError && e.code === "NoNode") return null;
    throw e;
  }
}

async function childrenOrNone(registry: Registry, path: string): Promise<string[]> {
  try {
    return await registry.getChildren(path);
  } catch (e) {
    if (e instanceof RegistryError && e.code === "NoNode") return [];
    throw e;
  }
}

/** Every quota entity path stored: users, clients, and users' clients (sanitized). */
async function allQuotaEntityPaths(registry: Registry): Promise<string[]> {
  const paths: string[] = [];
  for (const u of await childrenOrNone(registry, ConfigEntityTypeZNode.path(ConfigType.User))) {
    paths.push(`${ConfigType.User}/${u}`);
    for (const c of await childrenOrNone(registry, ClientQuotaEntityZNode.userClientsPath(u))) paths.push(`${ConfigType.User}/${u}/${ConfigType.Client}/${c}`);
  }
  for (const c of await childrenOrNone(registry, ConfigEntityTypeZNode.path(ConfigType.Client))) paths.push(`${ConfigType.Client}/${c}`);
  for (const ip of await childrenOrNone(registry, ConfigEntityTypeZNode.path(ConfigType.Ip))) paths.push(`${ConfigType.Ip}/${ip}`);
  return paths;
}

/** The quota that applies to a client, and the tags its usage is counted under. */
export interface ResolvedQuota {
  bound: number;
  /** The user the usage is counted for ("" when shared by every user of the client id). */
  user: string;
  /** The client id the usage is counted for ("" when shared by every client of the user). */
  clientId: string;
}

export class QuotaStore {
  private byEntity = new Map<string, { entity: QuotaEntity; values: Map<string, number> }>();
  /** Quota types with at least one quota set anywhere: the others cost nothing per request. */
  private typesSet = new Set<string>();

  /** Addresses of the ip entities named by host name, resolved when read (Kafka's ConnectionQuotas keys by InetAddress). */
  private namedIps = new Map<string, string>();

  constructor(
    private readonly registry: Registry,
    private readonly logger: Logger,
    private readonly resolveHost?: (name: string) => Promise<string | null>,
  ) {}

  /** Reads every quota entity (start-up). */
  async load(): Promise<void> {
    const next = new Map<string, { entity: QuotaEntity; values: Map<string, number> }>();
    for (const path of await allQuotaEntityPaths(this.registry)) {
      const entity = parseQuotaEntityPath(path);
      if (entity === null) continue;
      const node = await readNode(this.registry, ClientQuotaEntityZNode.path(path));
      const values = node === null ? new Map<string, number>() : quotaValuesOf(node.config, entity);
      if (values.size > 0) next.set(entityKey(entity), { entity, values });
    }
    this.byEntity = next;
    await this.resolveNamedIps();
    this.recount();
    if (next.size > 0) this.logger.info({ entities: next.size }, "client quotas loaded");
  }

  /** Re-reads one entity after a change notification named it; false when the path names no quota entity. */
  async refresh(entityPath: string): Promise<boolean> {
    const entity = parseQuotaEntityPath(entityPath);
    if (entity === null) return false;
    const node = await readNode(this.registry, ClientQuotaEntityZNode.path(entityPath));
    const values = node === null ? new Map<string, number>() : quotaValuesOf(node.config, entity);
    const key = entityKey(entity);
    const had = this.byEntity.get(key)?.values;
    if (values.size > 0) this.byEntity.set(key, { entity, values });
    else this.byEntity.delete(key);
    if (entity.ip !== undefined) await this.resolveNamedIps();
    this.recount();
    const text = (m: Map<string, number> | undefined) => JSON.stringify([...(m ?? new Map())].sort());
    if (text(had) !== text(values)) this.logger.info({ entity: entityPath, quotas: Object.fromEntries(values) }, "client quotas changed");
    return true;
  }

  private async resolveNamedIps(): Promise<void> {
    const next = new Map<string, string>();
    for (const { entity } of [...this.byEntity.values()]) {
      if (typeof entity.ip !== "string" || canonicalIp(entity.ip) !== null || this.resolveHost === undefined) continue;
      const address = await this.resolveHost(entity.ip);
      const ip = address === null ? null : canonicalIp(address);
      if (ip === null) this.logger.warn({ ip: entity.ip }, "an ip quota names a host that does not resolve; it applies to no connection");
      else next.set(ip, entity.ip);
    }
    this.namedIps = next;
  }

  /** Whether any entity has a quota of this type (enforcement skips the type when none does). */
  hasAny(type: QuotaType): boolean {
    return this.typesSet.has(quotaKeyOf[type]);
  }

  /** The value one entity has for a key, if set. */
  get(entity: QuotaEntity, key: string): number | undefined {
    return this.byEntity.get(entityKey(entity))?.values.get(key);
  }

  /** connection_creation_rate for connections from `ip` (canonical): its own quota, else ips/<default>. */
  connectionCreationRate(ip: string): number | undefined {
    if (!this.typesSet.has(QuotaConfigKey.ConnectionCreationRate)) return undefined;
    const named = this.namedIps.get(ip);
    return this.get({ ip }, QuotaConfigKey.ConnectionCreationRate) ??
      (named === undefined ? undefined : this.get({ ip: named }, QuotaConfigKey.ConnectionCreationRate)) ??
      this.get({ ip: null }, QuotaConfigKey.ConnectionCreationRate);
  }

  /** Every entity with quotas (for the admin API and the dashboard). */
  entries(): { entity: QuotaEntity; values: Map<string, number> }[] {
    return [...this.byEntity.values()];
  }

  /** The quota of `type` for a client by Kafka's precedence, or null when none applies. */
  resolve(type: QuotaType, user: string, clientId: string): ResolvedQuota | null {
    if (!this.typesSet.has(quotaKeyOf[type])) return null;
    const r = resolveQuota((e) => this.get(e, quotaKeyOf[type]), user, clientId);
    return r;
  }

  private recount(): void {
    this.typesSet = new Set();
    for (const { values } of this.byEntity.values()) for (const k of values.keys()) this.typesSet.add(k);
  }
}

/** Kafka's 8 levels (module comment), over any lookup of one entity's value. */
export function resolveQuota(lookup: (e: QuotaEntity) => number | undefined, user: string, clientId: string): ResolvedQuota | null {
  const levels: [QuotaEntity, "both" | "user" | "client"][] = [
    [{ user, clientId }, "both"],
    [{ user, clientId: null }, "both"],
    [{ user }, "user"],
    [{ user: null, clientId }, "both"],
    [{ user: null, clientId: null }, "both"],
    [{ user: null }, "user"],
    [{ clientId }, "client"],
    [{ clientId: null }, "client"],
  ];
  for (const [entity, tags] of levels) {
    const bound = lookup(entity);
    if (bound === undefined) continue;
    return { bound, user: tags === "client" ? "" : user, clientId: tags === "user" ? "" : clientId };
  }
  return null;
}

/** Why a request fails as a whole or for one entry: Kafka's InvalidRequestException and kin. */
class QuotaRequestError extends Error {
  constructor(readonly errorCode: number, message: string) {
    super(message);
  }
}
const invalid = (message: string) => new QuotaRequestError(ErrorCode.INVALID_REQUEST, message);

interface WireEntity {
  entityType: string;
  entityName: string | null;
}

/** The entity of an AlterClientQuotas entry, as Kafka's ZkAdminManager.parseAndSanitizeQuotaEntity checks it. */
function entityOf(parts: WireEntity[]): QuotaEntity {
  if (parts.length === 0) throw invalid("Invalid empty client quota entity");
  const e: QuotaEntity = {};
  for (const p of parts) {
    if (p.entityType === QuotaEntityType.User) {
      if (e.user !== undefined) throw invalid("Duplicate user entity type in a client quota entity");
      e.user = p.entityName;
    } else if (p.entityType === QuotaEntityType.ClientId) {
      if (e.clientId !== undefined) throw invalid("Duplicate client-id entity type in a client quota entity");
      e.clientId = p.entityName;
    } else if (p.entityType === QuotaEntityType.Ip) {
      if (e.ip !== undefined) throw invalid("Duplicate ip entity type in a client quota entity");
      e.ip = p.entityName;
    } else throw invalid(`Unhandled client quota entity type: ${p.entityType}`);
    if (p.entityName === "") throw invalid(`Empty ${p.entityType} not supported`);
  }
  if (e.ip !== undefined) {
    if (e.user !== undefined || e.clientId !== undefined) {
      throw invalid("Invalid quota entity combination, IP entity should not be used with user/client ID entity.");
    }
    // A host name stays as given (Kafka stores it so); alterClientQuotas checks that it resolves.
    if (e.ip !== null) e.ip = canonicalIp(e.ip) ?? e.ip;
  }
  return e;
}

function wireEntity(e: QuotaEntity): Struct[] {
  const out: Struct[] = [];
  if (e.user !== undefined) out.push({ entityType: QuotaEntityType.User, entityName: e.user });
  if (e.clientId !== undefined) out.push({ entityType: QuotaEntityType.ClientId, entityName: e.clientId });
  if (e.ip !== undefined) out.push({ entityType: QuotaEntityType.Ip, entityName: e.ip });
  return out;
}

interface Op {
  key: string;
  value: number;
  remove: boolean;
}

/** The stored text of one set operation (Kafka's LONG keys must be whole numbers). */
function valueText(op: Op): string {
  const type = allKeyTypes.get(op.key);
  if (type === undefined) throw invalid(`Invalid configuration key ${op.key}`);
  if (!Number.isFinite(op.value)) throw invalid(`Configuration ${op.key} must be a finite number, not ${op.value}`);
  // A quota of zero would throttle without end (the throttle time divides by the bound).
  if (op.value <= 0) throw invalid(`Configuration ${op.key} must be positive, not ${op.value}`);
  if (type === "double") return String(op.value);
  const epsilon = 1e-6;
  const whole = Math.trunc(op.value + epsilon);
  const max = type === "int" ? 2 ** 31 - 1 : Number.MAX_SAFE_INTEGER;
  if (Math.abs(whole - op.value) > epsilon || whole > max) throw invalid(`Configuration ${op.key} must be a ${type.toUpperCase()} value`);
  return String(whole);
}

/** One entry's new quota keys from its operations; throws when any is invalid (the entry is refused whole). */
function applyOps(config: Map<string, string>, ops: Op[], entity: QuotaEntity): void {
  const types = entity.ip !== undefined ? ipKeyTypes : keyTypes;
  const seen = new Set<string>();
  for (const op of ops) {
    if (seen.has(op.key)) throw invalid(`Duplicate quota key ${op.key} in one entry`);
    seen.add(op.key);
    if (!types.has(op.key)) throw invalid(`Invalid configuration key ${op.key}`);
    if (op.remove) config.delete(op.key);
    else config.set(op.key, valueText(op));
  }
}

export interface AlterEntry {
  entity: WireEntity[];
  ops: Op[];
}

/** AlterClientQuotas' entries, one result per entry, as Kafka's ZkAdminManager answers them. */
export async function alterClientQuotas(
  registry: Registry,
  entries: AlterEntry[],
  validateOnly: boolean,
  resolveHost?: (name: string) => Promise<string | null>,
): Promise<Struct[]> {
  const results: Struct[] = [];
  for (const entry of entries) {
    let errorCode: number = ErrorCode.NONE;
    let errorMessage: string | null = null;
    try {
      const entity = entityOf(entry.entity);
      // Kafka's DynamicConfig.Ip.isValidIpEntity: InetAddress.getByName must take the name.
      if (typeof entity.ip === "string" && canonicalIp(entity.ip) === null && (resolveHost === undefined || (await resolveHost(entity.ip)) === null)) {
        throw invalid(`${entity.ip} is not a valid IP or resolvable host.`);
      }
      applyOps(new Map(), entry.ops, entity);
      if (!validateOnly) await alterEntity(registry, entity, entry.ops);
    } catch (e) {
      if (e instanceof QuotaRequestError) {
        errorCode = e.errorCode;
        errorMessage = e.message;
      } else {
        const storage = registryWriteFailure(e, "The client quotas were not changed");
        errorCode = storage?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR;
        errorMessage = storage?.errorMessage ?? (e instanceof Error ? e.message : String(e));
      }
    }
    results.push({ errorCode, errorMessage, entity: entry.entity.map((p) => ({ entityType: p.entityType, entityName: p.entityName })) });
  }
  return results;
}

/** Read, change the quota keys, write at the version read with the notification (one multi). */
async function alterEntity(registry: Registry, entity: QuotaEntity, ops: Op[]): Promise<void> {
  const entityPath = quotaEntityPath(entity);
  const path = ClientQuotaEntityZNode.path(entityPath);
  for (let attempt = 0; attempt < configWriteAttemptsMax; attempt++) {
    const node = await readNode(registry, path);
    const config = new Map(node?.config ?? []);
    applyOps(config, ops, entity);
    if (node === null) {
      // The parents (/config/users/<u>/clients for a user's client) exist empty, as Kafka's createRecursive leaves them.
      await registry.ensurePath(path.slice(0, path.lastIndexOf("/")));
    }
    const data = ConfigEntityZNode.encode(config);
    try {
      await registry.multi([
        node === null ? { op: "create", path, data } : { op: "setData", path, data, version: node.version },
        {
          op: "create",
          path: ConfigEntityChangeNotificationSequenceZNode.createPath,
          data: ConfigEntityChangeNotificationSequenceZNode.encode(entityPath),
          mode: "persistent-sequential",
        },
      ]);
      return;
    } catch (e) {
      // Someone else (a SCRAM change of the same user) wrote the node since it was read.
      if (e instanceof RegistryError && (e.code === "BadVersion" || e.code === "NodeExists" || e.code === "NoNode")) continue;
      throw e;
    }
  }
  throw new QuotaRequestError(ErrorCode.UNKNOWN_SERVER_ERROR, `the config of ${entityPath} kept changing under this request; try again`);
}

/** A DescribeClientQuotas filter component (KIP-546): exact name (0), default (1), any specified (2). */
export interface FilterComponent {
  entityType: string;
  matchType: number;
  match: string | null;
}
export const MatchType = { Exact: 0, Default: 1, Any: 2 } as const;

/** The entities matching a filter with their quota values, as Kafka's ZkAdminManager.describeClientQuotas. */
export function describeClientQuotas(
  entries: { entity: QuotaEntity; values: Map<string, number> }[],
  components: FilterComponent[],
  strict: boolean,
): { entity: QuotaEntity; values: Map<string, number> }[] {
  let user: FilterComponent | undefined, client: FilterComponent | undefined, ip: FilterComponent | undefined;
  for (const c of components) {
    if (c.matchType !== MatchType.Exact && c.matchType !== MatchType.Default && c.matchType !== MatchType.Any) {
      throw invalid(`Unexpected match type ${c.matchType}`);
    }
    if (c.matchType === MatchType.Exact && c.match === null) throw invalid(`Missing entity name for an exact ${c.entityType} match`);
    if (c.entityType === QuotaEntityType.User) {
      if (user !== undefined) throw invalid("Duplicate user filter component entity type");
      user = c;
    } else if (c.entityType === QuotaEntityType.ClientId) {
      if (client !== undefined) throw invalid("Duplicate client filter component entity type");
      client = c;
    } else if (c.entityType === QuotaEntityType.Ip) {
      if (ip !== undefined) throw invalid("Duplicate ip filter component entity type");
      ip = c;
    } else if (c.entityType === "") throw invalid("Unexpected empty filter component entity type");
    else throw new QuotaRequestError(ErrorCode.UNSUPPORTED_VERSION, `Custom entity type '${c.entityType}' not supported`);
  }
  if ((user !== undefined || client !== undefined) && ip !== undefined) {
    throw invalid("Invalid entity filter component combination, IP filter component should not be used with user or clientId filter component.");
  }
  const matches = (component: FilterComponent | undefined, name: string | null | undefined) => {
    if (component === undefined) return name === undefined || !strict;
    if (name === undefined) return false;
    if (component.matchType === MatchType.Any) return true;
    if (component.matchType === MatchType.Default) return name === null;
    return name === component.match;
  };
  // As Kafka's handleDescribeIpQuotas: ip entities answer an ip filter, or an empty filter not strict.
  const ipMatch = ip === undefined ? null : { ...ip, match: ip.matchType === MatchType.Exact && ip.match !== null ? canonicalIp(ip.match) ?? ip.match : ip.match };
  return entries.filter((e) => {
    if (e.values.size === 0) return false;
    if (e.entity.ip !== undefined) return user === undefined && client === undefined && (ip !== undefined || !strict) && matches(ipMatch ?? undefined, e.entity.ip);
    return ip === undefined && matches(user, e.entity.user) && matches(client, e.entity.clientId);
  });
}

/** Every quota entity the registry holds now, with its quota keys (read fresh, as Kafka reads ZooKeeper). */
export async function readClientQuotas(registry: Registry): Promise<{ entity: QuotaEntity; values: Map<string, number> }[]> {
  const all: { entity: QuotaEntity; values: Map<string, number> }[] = [];
  for (const path of await allQuotaEntityPaths(registry)) {
    const entity = parseQuotaEntityPath(path);
    if (entity === null) continue;
    const node = await readNode(registry, ClientQuotaEntityZNode.path(path));
    if (node !== null) all.push({ entity, values: quotaValuesOf(node.config, entity) });
  }
  return all;
}

/** Thrown for a request Kafka refuses (INVALID_REQUEST, UNSUPPORTED_VERSION): its code and message. */
export function quotaRequestError(e: unknown): { errorCode: number; errorMessage: string } | null {
  return e instanceof QuotaRequestError ? { errorCode: e.errorCode, errorMessage: e.message } : null;
}

/** DescribeClientQuotas' body from what the registry holds now. */
export async function describeClientQuotasResponse(registry: Registry, components: FilterComponent[], strict: boolean): Promise<Struct> {
  try {
    const found = describeClientQuotas(await readClientQuotas(registry), components, strict);
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      entries: found.map(({ entity, values }) => ({
        entity: wireEntity(entity),
        values: [...values].map(([key, value]) => ({ key, value })),
      })),
    };
  } catch (e) {
    const code = e instanceof QuotaRequestError ? e.errorCode : ErrorCode.UNKNOWN_SERVER_ERROR;
    return { throttleTimeMs: 0, errorCode: code, errorMessage: e instanceof Error ? e.message : String(e), entries: null };
  }
}
