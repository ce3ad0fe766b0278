// ZooKeeperRegistry: the Registry contract over a real ZooKeeper ensemble, through the client in
// zk/. One registry is one ZooKeeper session. The chroot of the connect string
// (`h1:2181,h2:2181/strand`) is created if missing, as Kafka does, and applied by the client, so
// the registry's paths are Kafka's own (/brokers/ids/0 is /strand/brokers/ids/0 on the server).
//
// Invariants:
// - ZooKeeper's errors come out as RegistryErrors of the same name (RequestTimeout as
//   OperationTimeout; codes the contract does not name as SystemError, with ZooKeeper's name in
//   the detail). A failed multi names its first failing op's path and index.
// - Reads (exists, getData, getChildren) that lose their connection are retried a bounded number
//   of times: they change nothing, and the client resumes the session. Writes are not retried:
//   a ConnectionLoss leaves it unknown whether they were applied, and the caller decides.
// - With zookeeper.set.acl, every node strand creates gets Kafka's ACLs (ZkData.defaultAcls):
//   all rights for the creating identity, plus read for anyone except under the sensitive paths
//   /config/users, /config/brokers and /delegation_token; /consumers stays open. The identity is
//   the digest credential `zookeeper.digest.auth` (user:password), sent on every connection.
// - The root of the tree (the chroot) is never deleted through the registry (BadArguments), and
//   creating it gives NodeExists, as on a ZooKeeper without chroot.

import type { Logger } from "../util/mod.ts";
import { silentLogger, zkReadRetriesMax } from "../util/mod.ts";
import {
  type AclValue,
  Ids,
  parseConnectString,
  serverName,
  validatePath as zkValidatePath,
  ZkError,
  type ZkOp,
  type ZkPlatform,
  ZooKeeperClient,
} from "../zk/mod.ts";
import {
  type CreateMode,
  type Op,
  type OpResult,
  type Registry,
  RegistryError,
  type RegistryErrorCode,
  type Stat,
  type Watcher,
} from "./types.ts";
import { ConfigEntityTypeZNode, ConfigType, ConsumerPathZNode } from "./znodes.ts";

export interface ZooKeeperRegistryOptions {
  /** Kafka's zookeeper.connect: `host:port[,host:port...][/chroot]`. */
  connectString: string;
  /** zookeeper.session.timeout.ms */
  sessionTimeoutMs: number;
  /** zookeeper.connection.timeout.ms: how long open() waits for a session (default: the session timeout). */
  connectionTimeoutMs?: number;
  /** zookeeper.digest.auth: `user:password`, added to the session on every connection. */
  digestAuth?: string | null;
  /** zookeeper.set.acl: nodes get creator-all (+ world-read) ACLs instead of open ones. */
  setAcl?: boolean;
  logger?: Logger;
}

const registryCodes: ReadonlySet<string> = new Set<RegistryErrorCode>([
  "NoNode",
  "NodeExists",
  "BadVersion",
  "NotEmpty",
  "NoChildrenForEphemerals",
  "BadArguments",
  "SessionExpired",
  "ConnectionLoss",
  "NoAuth",
  "OperationTimeout",
  "Unimplemented",
  "SystemError",
]);

const createModes: readonly CreateMode[] = ["persistent", "ephemeral", "persistent-sequential", "ephemeral-sequential"];

/** Kafka's ZkData.sensitiveRootPaths: no world-read ACL under these. */
const sensitiveRootPaths = [
  ConfigEntityTypeZNode.path(ConfigType.User),
  ConfigEntityTypeZNode.path(ConfigType.Broker),
  "/delegation_token",
];

/** ZooKeeper's error as the registry's. */
export function toRegistryError(e: unknown): unknown {
  if (!(e instanceof ZkError)) return e;
  if (e.code === "RequestTimeout") return new RegistryError("OperationTimeout", e.path, e.detail);
  if (registryCodes.has(e.code)) return new RegistryError(e.code as RegistryErrorCode, e.path, e.detail);
  return new RegistryError("SystemError", e.path, `ZooKeeper ${e.code}${e.detail ? `: ${e.detail}` : ""}`);
}

async function mapped<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    throw toRegistryError(e);
  }
}

export class ZooKeeperRegistry implements Registry {
  private constructor(
    private readonly client: ZooKeeperClient,
    private readonly setAcl: boolean,
  ) {}

  /**
   * Connects (waiting up to the connection timeout), creating the chroot if it is missing.
   * Rejects with a RegistryError: BadArguments for a malformed connect string, ConnectionLoss
   * naming the servers when no session could be had in time.
   */
  static async open(platform: ZkPlatform, options: ZooKeeperRegistryOptions): Promise<ZooKeeperRegistry> {
    const setAcl = options.setAcl ?? false;
    if (setAcl && !options.digestAuth) {
      throw new RegistryError("BadArguments", "", "ACLs need a credential (zookeeper.digest.auth=user:password)");
    }
    const { servers, chroot } = await mapped(Promise.resolve().then(() => parseConnectString(options.connectString)));
    const clientOptions = {
      sessionTimeoutMs: options.sessionTimeoutMs,
      connectionTimeoutMs: options.connectionTimeoutMs ?? options.sessionTimeoutMs,
      auth: options.digestAuth ? [{ scheme: "digest", auth: options.digestAuth }] : [],
      // As Kafka: through a ZooKeeper outage the broker keeps its session, and only the server
      // says it expired (a quorum loss then costs no re-registration and no controller change).
      expireWhenUnreachable: false,
      logger: options.logger ?? silentLogger,
    };
    if (chroot !== "") {
      // As Kafka's createChrootIfNecessary: a short session without the chroot makes it.
      const root = await mapped(ZooKeeperClient.connect(platform, {
        ...clientOptions,
        connectString: servers.map(serverName).join(","),
      }));
      try {
        await new ZooKeeperRegistry(root, setAcl).ensurePath(chroot);
      } finally {
        await root.close();
      }
    }
    const client = await mapped(ZooKeeperClient.connect(platform, { ...clientOptions, connectString: options.connectString }));
    return new ZooKeeperRegistry(client, setAcl);
  }

  get sessionId(): bigint {
    return this.client.sessionId;
  }

  /** The client underneath: session state events, failover details (tests, admin). */
  get zooKeeper(): ZooKeeperClient {
    return this.client;
  }

  async create(path: string, data: Uint8Array, mode: CreateMode = "persistent"): Promise<string> {
    if (!createModes.includes(mode)) throw new RegistryError("BadArguments", String(path), `unknown create mode ${mode}`);
    if (path === "/" && !mode.endsWith("-sequential")) {
      this.checkOpen();
      throw new RegistryError("NodeExists", path);
    }
    const created = await mapped(this.client.create(path, data, { mode, acl: this.aclFor(path) }));
    return created.path;
  }

  async ensurePath(path: string): Promise<void> {
    this.checkOpen();
    await mapped(Promise.resolve().then(() => zkValidatePath(path)));
    if (path === "/") return;
    // The whole path first: one round trip when it (or all but it) exists, as Kafka's createRecursive.
    if (await this.createIfMissing(path)) return;
    await this.ensurePath(parentOf(path));
    await this.createIfMissing(path);
  }

  async delete(path: string, version = -1): Promise<void> {
    this.refuseRoot(path);
    await mapped(this.client.delete(path, version));
  }

  async exists(path: string, watch?: Watcher): Promise<Stat | null> {
    return await this.read(() => this.client.exists(path, watch));
  }

  async getData(path: string, watch?: Watcher): Promise<{ data: Uint8Array; stat: Stat }> {
    return await this.read(() => this.client.getData(path, watch));
  }

  async setData(path: string, data: Uint8Array, version = -1): Promise<Stat> {
    return await mapped(this.client.setData(path, data, version));
  }

  async sync(path: string): Promise<void> {
    await this.read(() => this.client.sync(path));
  }

  async getChildren(path: string, watch?: Watcher): Promise<string[]> {
    const { children } = await this.read(() => this.client.getChildren(path, watch));
    return children.sort();
  }

  async multi(ops: Op[]): Promise<OpResult[]> {
    if (!Array.isArray(ops)) throw new RegistryError("BadArguments", "", "multi takes an array of ops");
    ops.forEach((op, i) => {
      if (op?.op === "delete") this.refuseRoot(op.path, i);
      if (op?.op === "create" && !createModes.includes(op.mode ?? "persistent")) {
        throw new RegistryError("BadArguments", String(op.path), `unknown create mode ${op.mode}`);
      }
    });
    const zkOps = ops.map((op): ZkOp => op?.op === "create" ? { ...op, acl: this.aclFor(op.path) } : op);
    return await mapped(this.client.multi(zkOps));
  }

  onNewSession(fn: () => void): () => void {
    return this.client.onNewSession(() => fn());
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  // ---------------------------------------------------------------------------------------------

  /** True when path now exists (created or there already); false when its parent is missing. */
  private async createIfMissing(path: string): Promise<boolean> {
    try {
      await this.client.create(path, new Uint8Array(0), { acl: this.aclFor(path) });
      return true;
    } catch (e) {
      if (e instanceof ZkError && e.code === "NodeExists") return true;
      if (e instanceof ZkError && e.code === "NoNode") return false;
      throw toRegistryError(e);
    }
  }

  private async read<T>(op: () => Promise<T>): Promise<T> {
    for (let attempt = 1;; attempt++) {
      try {
        return await op();
      } catch (e) {
        const lost = e instanceof ZkError && e.code === "ConnectionLoss";
        if (!lost || attempt >= zkReadRetriesMax) throw toRegistryError(e);
      }
    }
  }

  private aclFor(path: string): AclValue[] {
    if (!this.setAcl || path === ConsumerPathZNode.path) return Ids.OPEN_ACL_UNSAFE;
    const sensitive = sensitiveRootPaths.some((root) => path.startsWith(root));
    return sensitive ? Ids.CREATOR_ALL_ACL : [...Ids.CREATOR_ALL_ACL, ...Ids.READ_ACL_UNSAFE];
  }

  private refuseRoot(path: string, opIndex = -1): void {
    this.checkOpen();
    if (path !== "/") return;
    const detail = opIndex < 0 ? "the root cannot be deleted" : `op ${opIndex} of multi: the root cannot be deleted`;
    throw new RegistryError("BadArguments", path, detail);
  }

  private checkOpen(): void {
    if (this.client.isClosed) throw new RegistryError("SessionExpired", "", "the session is closed");
  }
}

function parentOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash <= 0 ? "/" : path.slice(0, slash);
}

