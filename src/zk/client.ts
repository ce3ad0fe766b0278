// ZooKeeperClient: ZooKeeper's operations, promise-based, over one session (cnxn.ts holds the
// session machinery: connections, failover, pings, watches, auth, renewal after expiry).
//
//   const zk = await ZooKeeperClient.connect(platform, { connectString: "h1:2181,h2:2181/app",
//     sessionTimeoutMs: 18_000 });
//   await zk.create("/lock-", data, { mode: "ephemeral-sequential" });
//   const { data, stat } = await zk.getData("/config", (event) => ...);  // one-shot watch
//
// Invariants:
// - Every argument is checked before anything is sent: paths by ZooKeeper's rules, modes, ACLs
//   (an empty list is InvalidACL, as in Java); failures are ZkErrors (BadArguments, ...).
// - Paths in and out are the client's (chroot-free); the chroot is applied on the way out and
//   removed from results and watch events on the way in.
// - Watches are registered only when the read that set them succeeds (exists on a missing node:
//   an exist watch), at the moment its reply is read, so no event can slip between.
// - A multi is one transaction: the results, or a ZkMultiError naming the first failing op.

import { ZkError, zkError, ZkErrorNumber } from "./errors.ts";
import { ClientCnxn, type ZkPlatform, type ZkSessionEvent, type ZooKeeperClientOptions } from "./cnxn.ts";
import { validatePath } from "./paths.ts";
import {
  type AclValue,
  CheckVersionRequest,
  Create2Response,
  CreateFlags,
  CreateRequest,
  DeleteRequest,
  ExistsResponse,
  GetACLResponse,
  GetChildren2Response,
  GetDataResponse,
  Ids,
  type MultiOpRecord,
  OpCode,
  PathRequest,
  PathWatchRequest,
  readMultiResponse,
  SetDataRequest,
  SetDataResponse,
  type StatRecord,
  writeMulti,
} from "./records.ts";
import type { WatchKind, ZkWatcher } from "./watches.ts";
import type { Reader } from "../util/mod.ts";

export type { ZkPlatform, ZkSessionEvent, ZooKeeperClientOptions };

export type ZkCreateMode = keyof typeof CreateFlags;

export interface ZkStat {
  czxid: bigint;
  mzxid: bigint;
  pzxid: bigint;
  ctime: number;
  mtime: number;
  version: number;
  cversion: number;
  aversion: number;
  /** Session owning an ephemeral node; 0n for other nodes. */
  ephemeralOwner: bigint;
  dataLength: number;
  numChildren: number;
}

export type ZkOp =
  | { op: "create"; path: string; data: Uint8Array; mode?: ZkCreateMode; acl?: AclValue[] }
  | { op: "delete"; path: string; version?: number }
  | { op: "setData"; path: string; data: Uint8Array; version?: number }
  | { op: "check"; path: string; version: number };

export type ZkOpResult =
  | { op: "create"; path: string }
  | { op: "delete" }
  | { op: "setData"; stat: ZkStat }
  | { op: "check" };

/** A multi that failed as a whole: which op failed first, and every op's outcome. */
export class ZkMultiError extends ZkError {
  override name = "ZkMultiError";
  constructor(
    code: ZkError["code"],
    path: string,
    readonly opIndex: number,
    /** Per op: null where it would have succeeded, else its error (later ops: RuntimeInconsistency). */
    readonly opErrors: Array<ZkError["code"] | null>,
  ) {
    super(code, path, `op ${opIndex} of multi`);
  }
}

const emptyBytes = new Uint8Array(0);

export class ZooKeeperClient {
  private constructor(private readonly cnxn: ClientCnxn) {}

  /**
   * Connects and resolves once a session is established; rejects with ConnectionLoss (naming the
   * servers and the last failure) when none is within connectionTimeoutMs, and with BadArguments
   * for a malformed connect string.
   */
  static async connect(platform: ZkPlatform, options: ZooKeeperClientOptions): Promise<ZooKeeperClient> {
    const cnxn = new ClientCnxn(platform, options);
    await cnxn.start();
    return new ZooKeeperClient(cnxn);
  }

  // --- session ---------------------------------------------------------------------------------

  get chroot(): string {
    return this.cnxn.chroot;
  }

  /** The current session's id; 0n between an expiry and the next session. */
  get sessionId(): bigint {
    return this.cnxn.sessionId;
  }

  /** The current session's password (with the id, lets another client resume the session). */
  get sessionPassword(): Uint8Array {
    return this.cnxn.sessionPassword;
  }

  /** The timeout the server granted. */
  get negotiatedSessionTimeoutMs(): number {
    return this.cnxn.negotiatedSessionTimeoutMs;
  }

  get isConnected(): boolean {
    return this.cnxn.isConnected;
  }

  /** True once close() was called (or auth failed): operations fail with SessionExpired. */
  get isClosed(): boolean {
    return this.cnxn.isClosed;
  }

  /** `host:port` of the server this client is connected to, or null. */
  get connectedServer(): string | null {
    return this.cnxn.connectedServer;
  }

  /** The largest zxid seen in any reply. */
  get lastZxidSeen(): bigint {
    return this.cnxn.lastZxidSeen;
  }

  /** Calls fn on every session state change; returns a function that unsubscribes. */
  onStateChange(fn: (event: ZkSessionEvent) => void): () => void {
    return this.cnxn.onStateChange(fn);
  }

  /**
   * Calls fn each time an expired session has been replaced by a new one: the new session holds
   * none of the old one's ephemerals, so owners re-create them. Returns an unsubscribe function.
   */
  onNewSession(fn: (sessionId: bigint) => void): () => void {
    return this.cnxn.onNewSession(fn);
  }

  /**
   * Adds a credential to the session (ZooKeeper's addauth): sent now and on every reconnect.
   * Resolves when the server accepts it; AuthFailed ends the client, as in Java.
   */
  addAuth(scheme: string, auth: string | Uint8Array): Promise<void> {
    return this.cnxn.addAuth(scheme, auth);
  }

  /**
   * Closes the current connection without ending the session: the client reconnects (to the
   * next server) and resumes it. For tests and tools that exercise failover.
   */
  dropConnection(reason?: string): void {
    this.cnxn.dropConnection(reason);
  }

  /** Ends the session: its ephemeral nodes are deleted and later operations fail with SessionExpired. */
  close(): Promise<void> {
    return this.cnxn.close();
  }

  // --- operations ------------------------------------------------------------------------------

  /** Creates a node; returns its real path (sequence suffix included) and Stat. */
  async create(
    path: string,
    data: Uint8Array = emptyBytes,
    options: { mode?: ZkCreateMode; acl?: AclValue[] } = {},
  ): Promise<{ path: string; stat: ZkStat }> {
    const mode = options.mode ?? "persistent";
    const record = this.createRecord(path, data, mode, options.acl);
    const opcode = mode === "container" ? OpCode.createContainer : OpCode.create2;
    return await this.cnxn.submit(path, opcode, (w) => CreateRequest.encode(w, record), (err, r) => {
      if (err !== 0) throw zkError(err, path);
      const res = Create2Response.decode(r);
      return { path: this.cnxn.clientPath(res.path), stat: toStat(res.stat) };
    });
  }

  /** Deletes a node; version -1 matches any. */
  async delete(path: string, version = -1): Promise<void> {
    validatePath(path);
    const req = { path: this.cnxn.serverPath(path), version };
    await this.cnxn.submit(path, OpCode.delete, (w) => DeleteRequest.encode(w, req), failOn(path));
  }

  /** The node's Stat, or null when it does not exist; watch fires on its creation, change or deletion. */
  async exists(path: string, watch?: ZkWatcher): Promise<ZkStat | null> {
    validatePath(path);
    const req = { path: this.cnxn.serverPath(path), watch: watch !== undefined };
    return await this.cnxn.submit(path, OpCode.exists, (w) => PathWatchRequest.encode(w, req), (err, r) => {
      if (err === ZkErrorNumber.NoNode) {
        if (watch) this.cnxn.addWatch("exist", path, watch);
        return null;
      }
      if (err !== 0) throw zkError(err, path);
      const stat = toStat(ExistsResponse.decode(r).stat);
      watchOnSuccess(this.cnxn, r, "data", path, watch);
      return stat;
    });
  }

  /** The node's data and Stat; watch fires on its next change or deletion. */
  async getData(path: string, watch?: ZkWatcher): Promise<{ data: Uint8Array; stat: ZkStat }> {
    validatePath(path);
    const req = { path: this.cnxn.serverPath(path), watch: watch !== undefined };
    return await this.cnxn.submit(path, OpCode.getData, (w) => PathWatchRequest.encode(w, req), (err, r) => {
      if (err !== 0) throw zkError(err, path);
      const res = GetDataResponse.decode(r);
      watchOnSuccess(this.cnxn, r, "data", path, watch);
      return { data: res.data, stat: toStat(res.stat) };
    });
  }

  /** Replaces the node's data; version -1 matches any. Returns the new Stat. */
  async setData(path: string, data: Uint8Array, version = -1): Promise<ZkStat> {
    validatePath(path);
    checkData(path, data);
    const req = { path: this.cnxn.serverPath(path), data, version };
    return await this.cnxn.submit(path, OpCode.setData, (w) => SetDataRequest.encode(w, req), (err, r) => {
      if (err !== 0) throw zkError(err, path);
      return toStat(SetDataResponse.decode(r).stat);
    });
  }

  /** Child names in the server's order, and the node's Stat; watch fires on a child change or deletion. */
  async getChildren(path: string, watch?: ZkWatcher): Promise<{ children: string[]; stat: ZkStat }> {
    validatePath(path);
    const req = { path: this.cnxn.serverPath(path), watch: watch !== undefined };
    return await this.cnxn.submit(path, OpCode.getChildren2, (w) => PathWatchRequest.encode(w, req), (err, r) => {
      if (err !== 0) throw zkError(err, path);
      const res = GetChildren2Response.decode(r);
      watchOnSuccess(this.cnxn, r, "child", path, watch);
      return { children: res.children, stat: toStat(res.stat) };
    });
  }

  /** Waits until the server this client talks to has caught up with the leader for path. */
  async sync(path: string): Promise<void> {
    validatePath(path);
    const req = { path: this.cnxn.serverPath(path) };
    await this.cnxn.submit(path, OpCode.sync, (w) => PathRequest.encode(w, req), failOn(path));
  }

  async getACL(path: string): Promise<{ acl: AclValue[]; stat: ZkStat }> {
    validatePath(path);
    const req = { path: this.cnxn.serverPath(path) };
    return await this.cnxn.submit(path, OpCode.getACL, (w) => PathRequest.encode(w, req), (err, r) => {
      if (err !== 0) throw zkError(err, path);
      const res = GetACLResponse.decode(r);
      return { acl: res.acl, stat: toStat(res.stat) };
    });
  }

  /**
   * Applies ops as one transaction: all or none. On failure rejects with ZkMultiError naming
   * the first failing op (its path, and "op N of multi").
   */
  async multi(ops: ZkOp[]): Promise<ZkOpResult[]> {
    if (!Array.isArray(ops)) throw new ZkError("BadArguments", "", "multi takes an array of ops");
    const records = ops.map((op) => this.multiRecord(op));
    if (ops.length === 0) {
      if (this.cnxn.isClosed) throw new ZkError("SessionExpired", "", "the client is closed");
      return [];
    }
    return await this.cnxn.submit("", OpCode.multi, (w) => writeMulti(w, records), (err, r) => {
      const results = readMultiResponse(r, ops.length);
      if (!r.ok) return [];
      // A whole-request error comes in the header, with no results (e.g. a read-only server).
      if (results.length === 0 && err !== 0) throw zkError(err, ops[0].path, "multi");
      if (results.length !== ops.length) {
        throw new ZkError("MarshallingError", "", `${results.length} multi results for ${ops.length} ops`);
      }
      return this.multiResults(ops, results);
    });
  }

  private createRecord(path: string, data: Uint8Array, mode: ZkCreateMode, acl?: AclValue[]) {
    const flags = Object.hasOwn(CreateFlags, mode) ? CreateFlags[mode] : undefined;
    if (flags === undefined) throw new ZkError("BadArguments", String(path), `unknown create mode ${mode}`);
    validatePath(path, mode.endsWith("-sequential"));
    checkData(path, data);
    const acls = acl ?? Ids.OPEN_ACL_UNSAFE;
    // As the Java client: an empty ACL list would make the node unreachable.
    if (!Array.isArray(acls) || acls.length === 0) throw new ZkError("InvalidACL", path, "empty ACL list");
    return { path: this.cnxn.serverPath(path), data, acl: acls, flags };
  }

  private multiRecord(op: ZkOp): MultiOpRecord {
    switch (op?.op) {
      case "create": {
        const mode = op.mode ?? "persistent";
        if (mode === "container") throw new ZkError("BadArguments", op.path, "no container nodes in a multi");
        const rec = this.createRecord(op.path, op.data, mode, op.acl);
        return { type: OpCode.create, write: (w) => CreateRequest.encode(w, rec) };
      }
      case "delete": {
        validatePath(op.path);
        const rec = { path: this.cnxn.serverPath(op.path), version: op.version ?? -1 };
        return { type: OpCode.delete, write: (w) => DeleteRequest.encode(w, rec) };
      }
      case "setData": {
        validatePath(op.path);
        checkData(op.path, op.data);
        const rec = { path: this.cnxn.serverPath(op.path), data: op.data, version: op.version ?? -1 };
        return { type: OpCode.setData, write: (w) => SetDataRequest.encode(w, rec) };
      }
      case "check": {
        validatePath(op.path);
        const rec = { path: this.cnxn.serverPath(op.path), version: op.version };
        return { type: OpCode.check, write: (w) => CheckVersionRequest.encode(w, rec) };
      }
      default:
        throw new ZkError("BadArguments", String((op as { path?: unknown })?.path ?? ""), "unknown op");
    }
  }

  private multiResults(ops: ZkOp[], results: ReturnType<typeof readMultiResponse>): ZkOpResult[] {
    const firstError = results.findIndex((res) => res.type === OpCode.error && res.err !== 0);
    if (firstError >= 0) {
      const errors = results.map((res) =>
        res.type === OpCode.error && res.err !== 0 ? zkError(res.err, "").code : null
      );
      throw new ZkMultiError(errors[firstError]!, ops[firstError].path, firstError, errors);
    }
    return results.map((res): ZkOpResult => {
      switch (res.type) {
        case OpCode.create:
        case OpCode.create2:
          return { op: "create", path: this.cnxn.clientPath(res.path) };
        case OpCode.setData:
          return { op: "setData", stat: toStat(res.stat) };
        case OpCode.delete:
          return { op: "delete" };
        case OpCode.check:
          return { op: "check" };
        default:
          throw new ZkError("MarshallingError", "", "multi result of an unexpected type");
      }
    });
  }
}

function watchOnSuccess(cnxn: ClientCnxn, r: Reader, kind: WatchKind, path: string, watch?: ZkWatcher): void {
  if (watch && r.ok) cnxn.addWatch(kind, path, watch);
}

function toStat(s: StatRecord): ZkStat {
  return {
    czxid: s.czxid,
    mzxid: s.mzxid,
    pzxid: s.pzxid,
    ctime: Number(s.ctime),
    mtime: Number(s.mtime),
    version: s.version,
    cversion: s.cversion,
    aversion: s.aversion,
    ephemeralOwner: s.ephemeralOwner,
    dataLength: s.dataLength,
    numChildren: s.numChildren,
  };
}

function failOn(path: string): (err: number) => void {
  return (err) => {
    if (err !== 0) throw zkError(err, path);
  };
}

function checkData(path: string, data: Uint8Array): void {
  if (!(data instanceof Uint8Array)) throw new ZkError("BadArguments", String(path), "data must be a Uint8Array");
}

