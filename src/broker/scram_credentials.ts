// SCRAM credentials where Kafka keeps them, and the two admin APIs that read and change them.
//
//   /config/users/<sanitized user>              {"version":1,"config":{"SCRAM-SHA-256":"salt=…,stored_key=…,server_key=…,iterations=4096"}}
//   /config/changes/config_change_<10 digits>   {"version":2,"entity_path":"users/<sanitized user>"}
//
// A user node may hold other keys (quotas); a change rewrites only the SCRAM keys and keeps the
// rest. The user name is sanitized as Kafka's Sanitizer does (URL encoding, with "*" as %2A and
// " " as %20), so `kafka-configs.sh --entity-type users` and strand see the same nodes.
//
// ScramCredentialStore is each broker's cache for authentication: loaded at start-up, and one user
// re-read whenever a change notification names it (ConfigChangeWatcher calls refresh). A node that
// does not parse is logged and gives no credential, never a crash.
//
// DescribeUserScramCredentials and AlterUserScramCredentials follow Kafka's ZkAdminManager,
// messages and error codes included; the response never carries a key or a salt. A change the
// registry cannot store (its disk full) answers KAFKA_STORAGE_ERROR for that user, nothing applied.
import { registryWriteFailure } from "../controller/mod.ts";
import {
  ConfigEntityChangeNotificationSequenceZNode,
  ConfigEntityTypeZNode,
  ConfigEntityZNode,
  ConfigType,
  isRegistryUnavailable,
  type Registry,
  RegistryError,
} from "../registry/mod.ts";
import {
  type ScramCredential,
  scramCredentialFromSaltedPassword,
  scramCredentialFromString,
  scramCredentialToString,
  type ScramMechanism,
  scramMechanismByType,
  scramSha256,
  scramSha512,
  type Struct,
} from "../protocol/mod.ts";
import { configWriteAttemptsMax, ErrorCode, type Logger, scramIterationsMax, scramIterationsMin } from "../util/mod.ts";

const mechanisms: readonly ScramMechanism[] = [scramSha256, scramSha512];
const encoder = new TextEncoder();

/** Kafka's Sanitizer.sanitize: a name safe as one ZooKeeper path component. */
export function sanitizeEntityName(name: string): string {
  let out = "";
  for (const b of encoder.encode(name)) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9._-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** Kafka's Sanitizer.desanitize; null for text that is not valid percent-encoded UTF-8. */
export function desanitizeEntityName(text: string): string | null {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    return null;
  }
}

/** The SCRAM credentials of one user node, by mechanism name; malformed entries are reported. */
function credentialsOf(config: ReadonlyMap<string, string>): { creds: Map<string, ScramCredential>; bad: string[] } {
  const creds = new Map<string, ScramCredential>();
  const bad: string[] = [];
  for (const mech of mechanisms) {
    const text = config.get(mech.name);
    if (text === undefined) continue;
    const c = scramCredentialFromString(mech, text);
    if (typeof c === "string") bad.push(`${mech.name}: ${c}`);
    else creds.set(mech.name, c);
  }
  return { creds, bad };
}

async function readUserConfig(registry: Registry, user: string): Promise<{ config: Map<string, string>; version: number } | null> {
  try {
    const { data, stat } = await registry.getData(ConfigEntityZNode.path(ConfigType.User, sanitizeEntityName(user)));
    const config = ConfigEntityZNode.decode(data);
    return config === null ? { config: new Map(), version: stat.version } : { config, version: stat.version };
  } catch (e) {
    if (e instanceof RegistryError && e.code === "NoNode") return null;
    throw e;
  }
}

async function userNames(registry: Registry): Promise<string[]> {
  try {
    const children = await registry.getChildren(ConfigEntityTypeZNode.path(ConfigType.User));
    return children.map((c) => desanitizeEntityName(c)).filter((u): u is string => u !== null);
  } catch (e) {
    if (e instanceof RegistryError && e.code === "NoNode") return [];
    throw e;
  }
}

/** A user's credentials as one comparable text (mechanism order fixed). */
function credentialsText(creds: ReadonlyMap<string, ScramCredential> | undefined): string {
  if (creds === undefined) return "";
  return mechanisms.map((m) => {
    const c = creds.get(m.name);
    return c === undefined ? "" : `${m.name}=${scramCredentialToString(c)}`;
  }).join(";");
}

export class ScramCredentialStore {
  private byUser = new Map<string, Map<string, ScramCredential>>();

  constructor(private readonly registry: Registry, private readonly logger: Logger) {}

  /** Reads every user's credentials (start-up). */
  async load(): Promise<void> {
    const next = new Map<string, Map<string, ScramCredential>>();
    for (const user of await userNames(this.registry)) {
      const creds = await this.read(user);
      if (creds.size > 0) next.set(user, creds);
    }
    this.byUser = next;
    if (next.size > 0) this.logger.info({ users: next.size }, "SCRAM credentials loaded");
  }

  /**
   * Re-reads one user after a change notification named it. The node also holds the user's
   * quotas: a notification for a quota change leaves the credentials as they were, and says nothing.
   */
  async refresh(user: string): Promise<void> {
    const creds = await this.read(user);
    const changed = credentialsText(this.byUser.get(user)) !== credentialsText(creds);
    if (creds.size > 0) this.byUser.set(user, creds);
    else this.byUser.delete(user);
    if (changed) this.logger.info({ user, mechanisms: [...creds.keys()] }, "SCRAM credentials changed");
  }

  lookup(user: string, mech: ScramMechanism): ScramCredential | undefined {
    return this.byUser.get(user)?.get(mech.name);
  }

  private async read(user: string): Promise<Map<string, ScramCredential>> {
    const node = await readUserConfig(this.registry, user);
    if (node === null) return new Map();
    const { creds, bad } = credentialsOf(node.config);
    if (bad.length > 0) this.logger.warn({ user, problems: bad }, "user has SCRAM credentials that do not parse; they are ignored");
    return creds;
  }
}

type Result = { user: string; errorCode: number; errorMessage: string | null };

/** DescribeUserScramCredentials' body, as Kafka's ZkAdminManager answers it. */
export async function describeUserScramCredentials(registry: Registry, users: string[] | null): Promise<Struct> {
  const all = users === null || users.length === 0;
  const results: Struct[] = [];
  const describe = async (user: string, explicit: boolean) => {
    const node = await readUserConfig(registry, user);
    const config = node?.config ?? new Map<string, string>();
    const present = mechanisms.filter((m) => config.has(m.name));
    if (present.length === 0) {
      if (explicit) results.push(userResult(user, ErrorCode.RESOURCE_NOT_FOUND, `Attempt to describe a user credential that does not exist: ${user}`));
      return;
    }
    const { creds, bad } = credentialsOf(config);
    if (bad.length > 0) {
      results.push(userResult(user, ErrorCode.UNKNOWN_SERVER_ERROR, "Error processing describe user SCRAM credential configs request"));
      return;
    }
    const credentialInfos = mechanisms.filter((m) => creds.has(m.name)).map((m) => ({ mechanism: m.type, iterations: creds.get(m.name)!.iterations }));
    results.push({ user, errorCode: 0, errorMessage: null, credentialInfos });
  };
  try {
    if (all) {
      for (const user of (await userNames(registry)).sort()) await describe(user, false);
    } else {
      const seen = new Map<string, number>();
      for (const u of users) seen.set(u, (seen.get(u) ?? 0) + 1);
      for (const [user, count] of seen) {
        if (user === "") results.push(userResult(user, ErrorCode.RESOURCE_NOT_FOUND, "Username must not be empty"));
        else if (count > 1) {
          results.push(userResult(user, ErrorCode.DUPLICATE_RESOURCE, `Cannot describe SCRAM credentials for the same user twice in a single request: ${user}`));
        } else await describe(user, true);
      }
    }
  } catch (e) {
    return { throttleTimeMs: 0, errorCode: registryErrorCode(e), errorMessage: `Error processing describe user SCRAM credential configs request: ${message(e)}`, results: [] };
  }
  return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, results };
}

function userResult(user: string, errorCode: number, errorMessage: string): Struct {
  return { user, errorCode, errorMessage, credentialInfos: [] };
}

interface Deletion {
  name: string;
  mechanism: number;
}
interface Upsertion extends Deletion {
  iterations: number;
  salt: Uint8Array;
  saltedPassword: Uint8Array;
}

/** AlterUserScramCredentials' results, one per user, as Kafka's ZkAdminManager answers them. */
export async function alterUserScramCredentials(registry: Registry, deletions: Deletion[], upsertions: Upsertion[]): Promise<Result[]> {
  const results: Result[] = [];
  const failed = new Set<string>();
  const fail = (user: string, errorCode: number, errorMessage: string) => {
    if (failed.has(user)) return;
    failed.add(user);
    results.push({ user, errorCode, errorMessage });
  };
  for (const d of [...deletions, ...upsertions]) {
    if (d.name === "") fail(d.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty");
    else if (scramMechanismByType(d.mechanism) === undefined) fail(d.name, ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism");
  }
  for (const u of upsertions) {
    if (failed.has(u.name)) continue;
    if (u.iterations < scramIterationsMin) fail(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations");
    else if (u.iterations > scramIterationsMax) fail(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations");
    else if (u.salt.length === 0 || u.saltedPassword.length !== scramMechanismByType(u.mechanism)!.keyBytes) {
      fail(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Salt must not be empty and the salted password must be as long as the mechanism's hash");
    }
  }
  const pairs = new Map<string, number>();
  for (const d of [...deletions, ...upsertions]) {
    if (failed.has(d.name)) continue;
    const key = `${d.mechanism}/${d.name}`;
    pairs.set(key, (pairs.get(key) ?? 0) + 1);
  }
  for (const d of [...deletions, ...upsertions]) {
    if (!failed.has(d.name) && pairs.get(`${d.mechanism}/${d.name}`)! > 1) {
      fail(d.name, ErrorCode.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request");
    }
  }
  const users = [...new Set([...deletions, ...upsertions].map((d) => d.name))].filter((u) => !failed.has(u));
  for (const user of users) {
    const outcome = await alterOneUser(
      registry,
      user,
      deletions.filter((d) => d.name === user),
      upsertions.filter((u) => u.name === user),
    );
    results.push({ user, ...outcome });
  }
  return results;
}

async function alterOneUser(
  registry: Registry,
  user: string,
  deletions: Deletion[],
  upsertions: Upsertion[],
): Promise<{ errorCode: number; errorMessage: string | null }> {
  const sanitized = sanitizeEntityName(user);
  const path = ConfigEntityZNode.path(ConfigType.User, sanitized);
  const computed = new Map<string, string>();
  for (const u of upsertions) {
    const mech = scramMechanismByType(u.mechanism)!;
    computed.set(mech.name, scramCredentialToString(await scramCredentialFromSaltedPassword(mech, u.saltedPassword, u.salt, u.iterations)));
  }
  try {
    for (let attempt = 0; attempt < configWriteAttemptsMax; attempt++) {
      const node = await readUserConfig(registry, user);
      const config = new Map(node?.config ?? []);
      for (const d of deletions) {
        const name = scramMechanismByType(d.mechanism)!.name;
        if (!config.has(name)) return { errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: "Attempt to delete a user credential that does not exist" };
        config.delete(name);
      }
      for (const [name, text] of computed) config.set(name, text);
      const data = ConfigEntityZNode.encode(config);
      try {
        await registry.ensurePath(ConfigEntityTypeZNode.path(ConfigType.User));
        await registry.multi([
          node === null ? { op: "create", path, data } : { op: "setData", path, data, version: node.version },
          {
            op: "create",
            path: ConfigEntityChangeNotificationSequenceZNode.createPath,
            data: ConfigEntityChangeNotificationSequenceZNode.encode(`${ConfigType.User}/${sanitized}`),
            mode: "persistent-sequential",
          },
        ]);
        return { errorCode: 0, errorMessage: null };
      } catch (e) {
        // Someone else changed the node since it was read: read it again.
        if (e instanceof RegistryError && (e.code === "BadVersion" || e.code === "NodeExists" || e.code === "NoNode")) continue;
        throw e;
      }
    }
    return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: `the config of user ${user} kept changing under this request; try again` };
  } catch (e) {
    const storage = registryWriteFailure(e, `The SCRAM credentials of ${user}`);
    if (storage !== null) return { errorCode: storage.errorCode, errorMessage: storage.errorMessage };
    return { errorCode: registryErrorCode(e), errorMessage: message(e) };
  }
}

function registryErrorCode(e: unknown): number {
  // A registry that cannot be written (its disk full, ZooKeeper unreachable) is the broker's
  // storage or availability problem, not the request's.
  if (isRegistryUnavailable(e)) {
    return ErrorCode.REQUEST_TIMED_OUT;
  }
  return ErrorCode.UNKNOWN_SERVER_ERROR;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
