// The Registry contract: a tree of znodes with ZooKeeper's semantics, so the embedded backend
// (single node) and the ZooKeeper backend (clusters) are interchangeable. Paths are absolute
// ("/brokers/ids/0"), without the chroot, which the backend applies.
//
// Semantics (as ZooKeeper's):
// - Each node has data (bytes, may be empty), a data version (bumped by every setData), a child
//   version (bumped when a child is created or deleted), and creation/modification zxids.
// - create fails with NodeExists if present and NoNode if the parent is missing; ephemeral nodes
//   belong to the session that created them and vanish when it closes or expires; they cannot
//   have children. Sequential nodes get a 10-digit, zero-padded counter suffix from the parent.
// - setData/delete with a version other than -1 fail with BadVersion unless it matches; delete of
//   a node with children fails with NotEmpty.
// - Watches are one-shot: a data watch (set by getData/exists) fires once on the next change,
//   creation or deletion of that node; a child watch (getChildren) fires once on the next child
//   creation or deletion, or deletion of the node itself. exists() on a missing node sets a watch
//   for its creation; getData/getChildren on a missing node fail with NoNode and set none. A
//   watcher registered several ways on one path is called once per event (as ZooKeeper's client
//   collects watchers into a set). Events reach a session in the order the changes happened,
//   never synchronously inside the call that made the change.
// - Paths are validated as ZooKeeper does: absolute, no trailing slash (except "/"), no empty,
//   "." or ".." segments, no control characters; otherwise BadArguments. The root cannot be
//   deleted (BadArguments). Operations on a closed session fail with SessionExpired.
// - multi applies all operations or none; on failure it names the first failing op's error.

export type CreateMode = "persistent" | "ephemeral" | "persistent-sequential" | "ephemeral-sequential";

export interface Stat {
  czxid: bigint;
  mzxid: bigint;
  pzxid: bigint;
  ctime: number;
  mtime: number;
  version: number;
  cversion: number;
  aversion: number;
  /** Session id owning an ephemeral node, 0n for persistent ones. */
  ephemeralOwner: bigint;
  dataLength: number;
  numChildren: number;
}

export type WatchEventType = "created" | "deleted" | "dataChanged" | "childrenChanged";

export interface WatchEvent {
  type: WatchEventType;
  path: string;
}

export type Watcher = (event: WatchEvent) => void;

export type RegistryErrorCode =
  | "NoNode"
  | "NodeExists"
  | "BadVersion"
  | "NotEmpty"
  | "NoChildrenForEphemerals"
  | "BadArguments"
  | "SessionExpired"
  | "ConnectionLoss"
  | "NoAuth"
  | "OperationTimeout"
  | "Unimplemented"
  | "SystemError";

/**
 * The registry cannot be reached (ZooKeeper's connection lost and not back within its timeout,
 * or the session expired): the request's fate is unknown or it was not sent. Not the request's
 * fault, and retriable: admin handlers answer REQUEST_TIMED_OUT instead of closing the connection.
 */
export function isRegistryUnavailable(e: unknown): e is RegistryError {
  return e instanceof RegistryError && (e.code === "ConnectionLoss" || e.code === "OperationTimeout" || e.code === "SessionExpired");
}

export class RegistryError extends Error {
  override name = "RegistryError";
  constructor(
    readonly code: RegistryErrorCode,
    readonly path: string,
    readonly detail = "",
    /**
     * For a SystemError of the embedded store: the errno of the file operation that failed
     * (ENOSPC, EMFILE, EIO, ...), so callers can answer a full disk as a storage error.
     */
    readonly ioCode: string | null = null,
  ) {
    super(`${code}: ${path}${detail ? ` (${detail})` : ""}`);
  }
}

/**
 * The errno of a change the registry could not store on its disk (the embedded store's journal
 * write or fsync failed: ENOSPC, EDQUOT, EMFILE, EIO, ...), or null for any other error.
 */
export function registryStorageErrno(e: unknown): string | null {
  return e instanceof RegistryError && e.code === "SystemError" ? e.ioCode : null;
}

export type Op =
  | { op: "create"; path: string; data: Uint8Array; mode?: CreateMode }
  | { op: "delete"; path: string; version?: number }
  | { op: "setData"; path: string; data: Uint8Array; version?: number }
  | { op: "check"; path: string; version: number };

export type OpResult =
  | { op: "create"; path: string }
  | { op: "delete" }
  | { op: "setData"; stat: Stat }
  | { op: "check" };

export interface Registry {
  /** Creates a node; returns its real path (with the sequence suffix for sequential modes). */
  create(path: string, data: Uint8Array, mode?: CreateMode): Promise<string>;
  /** Creates every missing ancestor (persistent, empty) and then path; no error if it exists. */
  ensurePath(path: string): Promise<void>;
  delete(path: string, version?: number): Promise<void>;
  exists(path: string, watch?: Watcher): Promise<Stat | null>;
  getData(path: string, watch?: Watcher): Promise<{ data: Uint8Array; stat: Stat }>;
  setData(path: string, data: Uint8Array, version?: number): Promise<Stat>;
  /** Child names, sorted. */
  getChildren(path: string, watch?: Watcher): Promise<string[]>;
  multi(ops: Op[]): Promise<OpResult[]>;
  /** This client's session id (ephemeral owner of the nodes it creates). */
  readonly sessionId: bigint;
  /**
   * Calls fn after the backend replaced an expired session with a new one (ZooKeeper; embedded
   * sessions never expire). The new session owns none of the old one's ephemerals, so their
   * owners re-create them (the broker its /brokers/ids/<id>, as Kafka's KafkaZkClient does).
   * Watches set before the expiry stay set and fire for any change the gap hid. Returns a
   * function that unsubscribes.
   */
  onNewSession(fn: () => void): () => void;
  /**
   * Optional (ZooKeeper's sync): waits until the server this session reads from has caught up with
   * the ensemble's leader for path, so a read after it sees every write committed before it. The
   * embedded registry has one copy, always current, and leaves it out.
   */
  sync?(path: string): Promise<void>;
  /** Ends the session: its ephemeral nodes are deleted and their watches fire. */
  close(): Promise<void>;
}
