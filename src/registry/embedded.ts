// EmbeddedRegistryStore: the registry tree inside the broker process, for a single node run
// without ZooKeeper. It keeps ZooKeeper's semantics (see types.ts) so the controller cannot tell
// it from a real ensemble: a Stat per node, one zxid per transaction, sequential suffixes taken
// from the parent's count of child creations (as ZooKeeper's), ephemerals per session,
// one-shot watches, all-or-nothing multi.
//
// Invariants:
// - Every mutation, single or multi, runs as one transaction: ops are applied in order with an
//   undo log; if any op fails, or the snapshot cannot be written, everything is undone and no
//   watch fires. A committed transaction has one zxid, larger than every earlier one.
// - Parents exist before children; ephemeral nodes have no children and are not persisted.
// - Watches are removed when an event takes them (at commit) and their callbacks run later, in
//   a microtask, in commit order: the mutation is complete before any watcher sees it.
// - A transaction that changes persistent state (a persistent node, or a parent's child list
//   and counters) is on disk before the call returns: it is applied in memory and appended to
//   the journal (journal.ts) synchronously, inside the call, and the call's promise resolves
//   after the next group commit: one fsync for every transaction made since the last one (the
//   commit runs in a microtask, so every write issued in one turn of the event loop, e.g. the
//   partition states of one CreateTopics issued together, shares it). A write therefore costs
//   what it changes, not the size of the tree. Watches fire at the group commit, before the
//   callers resume: a watcher never sees a change that is not on disk. A read from another
//   session in the same turn may see a change whose fsync is still pending.
// - If the journal append fails, the transaction is undone and fails with SystemError (as
//   before). If the fsync fails, the changes cannot be undone (others may have read them): every
//   waiting call fails with SystemError and the store refuses all later writes until reopened,
//   as a database stops after a failed fsync (the kernel may have dropped the dirty pages).
// - Once the journal is larger than registryJournalCompactBytes and than the last snapshot, the
//   snapshot is rewritten (writeFileAtomic) after a group commit and the journal emptied. Open
//   reads the snapshot, then replays the journal records with a larger zxid (a crash between the
//   two steps leaves records the snapshot already holds).
//
// Snapshot file: `<dir>/snapshot.json`, UTF-8 JSON, one node per line for operators' eyes:
//   {"format":"strand-registry-snapshot","version":1,"zxid":"<last zxid, decimal>","nodes":[
//   {"path":"/","data":"<base64>","czxid":"0","mzxid":"0","pzxid":"7","ctime":0,"mtime":0,
//    "version":0,"cversion":3},
//   ...]}
// zxids are decimal strings (64-bit); cversion (creations + deletions of children, as ZooKeeper
// shows it) with the number of children gives the sequence counter for sequential
// children. On open the zxid epoch (high 32 bits) is bumped, as a new ZooKeeper leader does, so
// zxids stay unique even though changes to ephemerals after the last snapshot were not saved.

import type { Clock, FileSystem, Platform } from "../platform/mod.ts";
import {
  assert,
  type Logger,
  nodeDataBytesMax,
  registryJournalCompactBytes,
  silentLogger,
  TimeSlice,
  utf8Bytes,
} from "../util/mod.ts";
import { journalFileName, journalHeaderBytes, readJournal, RegistryJournal } from "./journal.ts";
import {
  type CreateMode,
  type Op,
  type OpResult,
  type Registry,
  RegistryError,
  type Stat,
  type Watcher,
  type WatchEvent,
} from "./types.ts";

export { nodeDataBytesMax } from "../util/mod.ts";
export { journalFileName } from "./journal.ts";
export const snapshotFileName = "snapshot.json";
const snapshotFormat = "strand-registry-snapshot";
const snapshotVersion = 1;
const createModes: readonly CreateMode[] = [
  "persistent",
  "ephemeral",
  "persistent-sequential",
  "ephemeral-sequential",
];

/** What the store needs from the platform. A full Platform fits. */
export type RegistryPlatform = Pick<Platform, "fs" | "clock">;

export interface EmbeddedRegistryOptions {
  /** Receives watcher exceptions and snapshot failures that cannot be reported to a caller. */
  logger?: Logger;
  /** Journal bytes past which the snapshot is rewritten (default registryJournalCompactBytes). */
  journalCompactBytes?: number;
}

interface ZNode {
  data: Uint8Array;
  czxid: bigint;
  mzxid: bigint;
  pzxid: bigint;
  ctime: number;
  mtime: number;
  version: number;
  cversion: number;
  ephemeralOwner: bigint;
  children: Set<string>;
}

/** The changes of one transaction, kept so they can be undone or announced. */
class Txn {
  readonly undo: Array<() => void> = [];
  readonly events: WatchEvent[] = [];
  /** Persistent nodes created, changed or deleted, in the order first touched (for the journal). */
  readonly touched = new Set<string>();
  constructor(readonly zxid: bigint, readonly nowMs: number) {}
}

// ---------------------------------------------------------------------------------------------
// Paths

/** Why path is not a valid znode path, or null. The same rules as ZooKeeper's PathUtils. */
export function pathProblem(path: string): string | null {
  if (typeof path !== "string" || path.length === 0) return "empty path";
  if (path[0] !== "/") return "not absolute";
  if (path === "/") return null;
  if (path.endsWith("/")) return "trailing slash";
  for (const segment of path.slice(1).split("/")) {
    if (segment === "") return "empty segment";
    if (segment === "." || segment === "..") return `relative segment "${segment}"`;
  }
  // ZooKeeper refuses these because they do not survive its string handling and display.
  if (/[\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff]/.test(path)) {
    return "control or reserved character";
  }
  return null;
}

/** Throws BadArguments unless path is valid; a sequential path is checked with its suffix. */
export function validatePath(path: string, sequential = false): void {
  const why = pathProblem(sequential ? `${path}1` : path);
  if (why !== null) throw new RegistryError("BadArguments", String(path), why);
}

export function parentPath(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash <= 0 ? "/" : path.slice(0, slash);
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

function joinPath(parent: string, name: string): string {
  return parent === "/" ? `/${name}` : `${parent}/${name}`;
}

// ---------------------------------------------------------------------------------------------
// The store

export class EmbeddedRegistryStore {
  private readonly nodes = new Map<string, ZNode>();
  private readonly sessions = new Map<bigint, EmbeddedSession>();
  private readonly ephemeralsBySession = new Map<bigint, Set<string>>();
  private lastZxid = 0n;
  private nextSessionId: bigint;
  private closed = false;
  /** Null for a store that is never saved. */
  private journal: RegistryJournal | null = null;
  /** Size of the snapshot file last written or read, to pace the rewrites. */
  private snapshotBytesLast = 0;
  private journalCompactBytes = registryJournalCompactBytes;
  /** Why writes are refused for good (a failed fsync), or null. */
  private broken: string | null = null;
  // The group commit: watch deliveries and callers waiting for the next fsync.
  private pendingDeliveries: Array<[Watcher, WatchEvent]> = [];
  private waiters: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  private flushQueued = false;
  /** An fsync of the journal is under way. */
  private syncing = false;

  private constructor(
    private readonly clock: Clock,
    /** Null for a store that is never saved. */
    private readonly fs: FileSystem | null,
    /** Where the snapshot lives, or null for a store that is never saved. */
    readonly snapshotPath: string | null,
    private readonly logger: Logger,
  ) {
    this.nodes.set("/", newNode(new Uint8Array(0), 0n, 0, 0n));
    // As ZooKeeper does: the clock in the high bits, so ids differ from one run to the next.
    this.nextSessionId = ((BigInt(clock.nowMs()) << 24n) & ((1n << 56n) - 1n)) + 1n;
  }

  /** Opens the store saved under dir (created if missing). Throws naming the file if it is corrupt. */
  static open(
    platform: RegistryPlatform,
    dir: string,
    options: EmbeddedRegistryOptions = {},
  ): EmbeddedRegistryStore {
    const steps = EmbeddedRegistryStore.openSteps(platform, dir, options);
    for (let r = steps.next(); ; r = steps.next()) if (r.done) return r.value;
  }

  /**
   * open(), giving the event loop back every eventLoopSliceMs (TimeSlice) while the snapshot's
   * nodes are parsed: some 30,000 of them for 10,000 partitions, which held the loop for a
   * quarter of a second or more in one piece.
   */
  static async openGradually(
    platform: RegistryPlatform,
    dir: string,
    options: EmbeddedRegistryOptions = {},
  ): Promise<EmbeddedRegistryStore> {
    const slice = new TimeSlice();
    const steps = EmbeddedRegistryStore.openSteps(platform, dir, options);
    for (let r = steps.next(); ; r = steps.next()) {
      if (r.done) return r.value;
      await slice.yield();
    }
  }

  /** open()'s work; each `yield` is a point where the loop may be given back. */
  private static *openSteps(
    platform: RegistryPlatform,
    dir: string,
    options: EmbeddedRegistryOptions,
  ): Generator<void, EmbeddedRegistryStore> {
    platform.fs.mkdirp(dir);
    const base = dir.replace(/\/+$/, "");
    const file = `${base}/${snapshotFileName}`;
    const journalFile = `${base}/${journalFileName}`;
    const store = new EmbeddedRegistryStore(
      platform.clock,
      platform.fs,
      file,
      options.logger ?? silentLogger,
    );
    const bytes = platform.fs.readFile(file);
    const journalBytes = platform.fs.readFile(journalFile);
    // A dir written before the journal existed has only snapshot.json: it opens as it is.
    const journal = journalBytes === null ? { payloads: [], validBytes: 0 } : readJournal(journalFile, journalBytes);
    yield* store.load(file, bytes, journalFile, journal.payloads);
    store.snapshotBytesLast = bytes?.length ?? 0;
    store.journalCompactBytes = options.journalCompactBytes ?? registryJournalCompactBytes;
    store.journal = RegistryJournal.open(platform.fs, base, journalFile, journal.validBytes);
    if (journalBytes !== null && journalBytes.length > journal.validBytes) {
      store.logger.warn(
        { file: journalFile, droppedBytes: journalBytes.length - journal.validBytes },
        "registry journal ended with an incomplete record (a crash during its write); dropped it",
      );
    }
    return store;
  }

  /** A store that lives only in memory: for tests and tools. */
  static inMemory(
    platform: Pick<Platform, "clock">,
    options: EmbeddedRegistryOptions = {},
  ): EmbeddedRegistryStore {
    return new EmbeddedRegistryStore(platform.clock, null, null, options.logger ?? silentLogger);
  }

  /** Opens a new session on the tree. */
  session(): Registry {
    assert(!this.closed, "no session is opened on a closed registry store");
    const session = new EmbeddedSession(this, this.nextSessionId++);
    this.sessions.set(session.sessionId, session);
    return session;
  }

  /** Closes every session (their ephemerals go); later operations on them fail with SessionExpired. */
  async close(): Promise<void> {
    for (const session of [...this.sessions.values()]) await session.close();
    this.closed = true;
    await this.committed().catch(() => {}); // a failed fsync was reported to its callers
    // A clean stop leaves a snapshot and an empty journal: the next start has nothing to replay.
    if (this.broken === null && this.journal !== null && this.journal.size() > journalHeaderBytes) await this.compactAtClose();
    this.journal?.close();
  }

  /** The zxid of the last committed transaction. */
  get zxid(): bigint {
    return this.lastZxid;
  }

  // --- used by EmbeddedSession ---------------------------------------------------------------

  /**
   * @internal Applies ops as one transaction on behalf of owner, and appends it to the journal;
   * the caller then awaits committed() before reporting success.
   */
  applyOps(owner: bigint, ops: readonly Op[], inMulti: boolean): OpResult[] {
    if (this.broken !== null) throw new RegistryError("SystemError", String(this.journalPath), this.broken);
    const txn = new Txn(this.lastZxid + 1n, this.clock.nowMs());
    let results: OpResult[];
    try {
      results = ops.map((op, i) => this.applyOpOf(txn, owner, op, inMulti ? i : -1));
      if (txn.touched.size > 0) this.appendOrFail(txn);
    } catch (e) {
      rollBack(txn);
      throw e;
    }
    this.commit(txn);
    return results;
  }

  /**
   * @internal Resolves once every transaction committed so far is on disk and its watches were
   * delivered; rejects with SystemError if the fsync failed.
   */
  committed(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.scheduleFlush();
    });
  }

  private get journalPath(): string | null {
    return this.journal?.path ?? this.snapshotPath;
  }

  /** @internal */
  readNode(path: string): { data: Uint8Array; stat: Stat } | null {
    validatePath(path);
    const node = this.nodes.get(path);
    return node === undefined ? null : { data: node.data.slice(), stat: statOf(node) };
  }

  /** @internal Child names, sorted, or null when the node does not exist. */
  childrenOf(path: string): string[] | null {
    validatePath(path);
    const node = this.nodes.get(path);
    return node === undefined ? null : [...node.children].sort();
  }

  /** @internal Deletes the session's ephemerals in one transaction and forgets the session. */
  endSession(session: EmbeddedSession): void {
    this.sessions.delete(session.sessionId);
    const owned = this.ephemeralsBySession.get(session.sessionId);
    if (owned === undefined || owned.size === 0) return;
    const txn = new Txn(this.lastZxid + 1n, this.clock.nowMs());
    for (const path of [...owned].sort()) this.deleteNode(txn, path, -1);
    // Only parents' counters changed on disk; losing them cannot reuse a sequence number, since
    // the creation that raised cversion was saved. So a failed write does not keep a dead
    // session's nodes alive.
    try {
      if (this.broken === null) this.journal?.append(journalRecord(txn, this.nodes));
    } catch (e) {
      this.logger.error(
        { err: String(e), file: this.journalPath },
        "registry journal write failed on session close",
      );
    }
    this.commit(txn);
  }

  // --- transactions --------------------------------------------------------------------------

  private applyOpOf(txn: Txn, owner: bigint, op: Op, index: number): OpResult {
    try {
      return this.applyOp(txn, owner, op);
    } catch (e) {
      if (index < 0 || !(e instanceof RegistryError)) throw e;
      const detail = `op ${index} of multi${e.detail ? `: ${e.detail}` : ""}`;
      throw new RegistryError(e.code, e.path, detail);
    }
  }

  private applyOp(txn: Txn, owner: bigint, op: Op): OpResult {
    switch (op?.op) {
      case "create":
        return { op: "create", path: this.createNode(txn, owner, op.path, op.data, op.mode ?? "persistent") };
      case "delete":
        this.deleteNode(txn, op.path, op.version ?? -1);
        return { op: "delete" };
      case "setData":
        return { op: "setData", stat: this.setNodeData(txn, op.path, op.data, op.version ?? -1) };
      case "check":
        this.checkNode(op.path, op.version);
        return { op: "check" };
      default:
        throw new RegistryError("BadArguments", String((op as { path?: unknown })?.path), "unknown op");
    }
  }

  private createNode(txn: Txn, owner: bigint, path: string, data: Uint8Array, mode: CreateMode): string {
    if (!createModes.includes(mode)) {
      throw new RegistryError("BadArguments", path, `unknown create mode ${mode}`);
    }
    const sequential = mode.endsWith("-sequential");
    validatePath(path, sequential);
    checkData(path, data);
    if (path === "/" && !sequential) throw new RegistryError("NodeExists", path);
    const parentName = parentPath(path);
    const parent = this.nodes.get(parentName);
    if (parent === undefined) throw new RegistryError("NoNode", path, `parent ${parentName} does not exist`);
    const realPath = sequential ? path + String(childCreations(parent)).padStart(10, "0") : path;
    if (this.nodes.has(realPath)) throw new RegistryError("NodeExists", realPath);
    if (parent.ephemeralOwner !== 0n) throw new RegistryError("NoChildrenForEphemerals", realPath);
    const ephemeralOwner = mode.startsWith("ephemeral") ? owner : 0n;
    this.nodes.set(realPath, newNode(data.slice(), txn.zxid, txn.nowMs, ephemeralOwner));
    if (ephemeralOwner === 0n) txn.touched.add(realPath);
    this.linkChild(txn, parent, baseName(realPath), parentName);
    if (ephemeralOwner !== 0n) this.trackEphemeral(txn, ephemeralOwner, realPath, true);
    txn.undo.push(() => this.nodes.delete(realPath));
    txn.events.push(event("created", realPath), event("childrenChanged", parentName));
    return realPath;
  }

  private deleteNode(txn: Txn, path: string, version: number): void {
    validatePath(path);
    if (path === "/") throw new RegistryError("BadArguments", path, "the root cannot be deleted");
    const node = this.nodes.get(path);
    if (node === undefined) throw new RegistryError("NoNode", path);
    checkVersion(path, node, version);
    if (node.children.size > 0) throw new RegistryError("NotEmpty", path, `${node.children.size} children`);
    const parentName = parentPath(path);
    const parent = this.nodes.get(parentName);
    assert(parent !== undefined, "every node but the root has a parent");
    this.nodes.delete(path);
    txn.undo.push(() => this.nodes.set(path, node));
    if (node.ephemeralOwner === 0n) txn.touched.add(path);
    this.unlinkChild(txn, parent, baseName(path), parentName);
    if (node.ephemeralOwner !== 0n) this.trackEphemeral(txn, node.ephemeralOwner, path, false);
    txn.events.push(event("deleted", path), event("childrenChanged", parentName));
  }

  private setNodeData(txn: Txn, path: string, data: Uint8Array, version: number): Stat {
    validatePath(path);
    checkData(path, data);
    const node = this.nodes.get(path);
    if (node === undefined) throw new RegistryError("NoNode", path);
    checkVersion(path, node, version);
    const before = { data: node.data, version: node.version, mzxid: node.mzxid, mtime: node.mtime };
    txn.undo.push(() => Object.assign(node, before));
    Object.assign(node, { data: data.slice(), version: node.version + 1, mzxid: txn.zxid, mtime: txn.nowMs });
    if (node.ephemeralOwner === 0n) txn.touched.add(path);
    txn.events.push(event("dataChanged", path));
    return statOf(node);
  }

  private checkNode(path: string, version: number): void {
    validatePath(path);
    const node = this.nodes.get(path);
    if (node === undefined) throw new RegistryError("NoNode", path);
    checkVersion(path, node, version);
  }

  /** Adds a child name; as in ZooKeeper, cversion counts child creations and deletions. */
  private linkChild(txn: Txn, parent: ZNode, name: string, parentName: string): void {
    const before = { cversion: parent.cversion, pzxid: parent.pzxid };
    parent.children.add(name);
    parent.cversion += 1;
    parent.pzxid = txn.zxid;
    txn.undo.push(() => {
      parent.children.delete(name);
      Object.assign(parent, before);
    });
    txn.touched.add(parentName); // the parent is persistent: ephemerals have no children
  }

  private unlinkChild(txn: Txn, parent: ZNode, name: string, parentName: string): void {
    const before = { cversion: parent.cversion, pzxid: parent.pzxid };
    parent.children.delete(name);
    parent.cversion += 1;
    parent.pzxid = txn.zxid;
    txn.undo.push(() => {
      parent.children.add(name);
      Object.assign(parent, before);
    });
    txn.touched.add(parentName);
  }

  private trackEphemeral(txn: Txn, owner: bigint, path: string, add: boolean): void {
    let owned = this.ephemeralsBySession.get(owner);
    if (owned === undefined) {
      owned = new Set();
      this.ephemeralsBySession.set(owner, owned);
    }
    const set = owned;
    if (add) set.add(path);
    else set.delete(path);
    txn.undo.push(() => (add ? set.delete(path) : set.add(path)));
  }

  /** Makes txn visible: advances the zxid and hands its events to the watchers. */
  private commit(txn: Txn): void {
    if (txn.undo.length === 0) return; // only checks: nothing happened
    this.lastZxid = txn.zxid;
    const deliveries: Array<[Watcher, WatchEvent]> = [];
    for (const ev of txn.events) {
      for (const session of this.sessions.values()) {
        for (const watcher of session.takeWatchers(ev)) deliveries.push([watcher, ev]);
      }
    }
    if (deliveries.length > 0) {
      for (const d of deliveries) this.pendingDeliveries.push(d);
      this.scheduleFlush();
    }
  }

  private scheduleFlush(): void {
    // While an fsync is under way, what comes meanwhile waits for the next one (started when
    // it ends): so each group holds everything written during the previous fsync.
    if (this.flushQueued || this.syncing) return;
    this.flushQueued = true;
    queueMicrotask(() => void this.flush());
  }

  /**
   * The group commit: one fsync for everything appended since the last, then the watches, then
   * the callers. The fsync runs off the event loop (FileHandle.syncAsync) where the platform
   * can, so a slow disk delays the writers, never the other clients.
   */
  private async flush(): Promise<void> {
    this.flushQueued = false;
    const deliveries = this.pendingDeliveries;
    const waiters = this.waiters;
    this.pendingDeliveries = [];
    this.waiters = [];
    if (this.broken === null && this.journal !== null && this.journal.dirty) {
      this.syncing = true;
      try {
        await this.journal.sync();
      } catch (e) {
        this.broken = `registry journal fsync failed (${e}); the broker must be restarted`;
        this.logger.error({ err: String(e), file: this.journalPath }, "registry journal fsync failed; refusing registry writes");
      }
      this.syncing = false;
      if (this.broken === null) this.maybeCompact();
    }
    const failure = this.broken === null ? null : new RegistryError("SystemError", String(this.journalPath), this.broken);
    if (deliveries.length > 0) this.deliver(deliveries);
    for (const w of waiters) {
      if (failure === null) w.resolve();
      else w.reject(failure);
    }
    if (this.waiters.length > 0 || this.pendingDeliveries.length > 0) this.scheduleFlush();
  }

  private deliver(deliveries: Array<[Watcher, WatchEvent]>): void {
    for (const [watcher, ev] of deliveries) {
      try {
        watcher(ev);
      } catch (e) {
        // As ZooKeeper's event thread does: one failing watcher must not starve the others.
        this.logger.error({ err: String(e), path: ev.path, type: ev.type }, "registry watcher threw");
      }
    }
  }

  // --- persistence ---------------------------------------------------------------------------

  private appendOrFail(txn: Txn): void {
    if (this.journal === null) return;
    try {
      this.journal.append(journalRecord(txn, this.nodes));
    } catch (e) {
      throw new RegistryError("SystemError", String(this.journalPath), `journal write failed: ${e}`);
    }
  }

  /**
   * Rewrites the snapshot and empties the journal once the journal outgrew both the bound and
   * the snapshot. Runs right after a successful fsync, so the journal holds everything the
   * snapshot will; a failure leaves the journal as it is (nothing lost) and is only logged.
   */
  private maybeCompact(): void {
    const journal = this.journal;
    if (journal === null || this.fs === null || this.snapshotPath === null) return;
    const size = journal.size();
    if (size < this.journalCompactBytes || size < this.snapshotBytesLast) return;
    this.compact();
  }

  private compact(): void {
    const journal = this.journal;
    if (journal === null || this.fs === null || this.snapshotPath === null) return;
    try {
      const bytes = this.snapshotBytes(this.lastZxid);
      this.fs.writeFileAtomic(this.snapshotPath, bytes);
      this.snapshotBytesLast = bytes.length;
      journal.reset();
    } catch (e) {
      this.logger.error({ err: String(e), file: this.snapshotPath }, "registry snapshot rewrite failed; the journal keeps every change");
    }
  }

  /**
   * compact() as close() runs it: every session is closed, so the tree no longer changes, and the
   * snapshot is built a slice at a time (TimeSlice) and written off the event loop (the async
   * platform calls and fsync). For 10,000 partitions it is some 30,000 nodes and megabytes, which
   * held the loop for a quarter to half a second in one piece; the process may still be serving
   * (the broker's tests, a tool that embeds the store).
   */
  private async compactAtClose(): Promise<void> {
    const journal = this.journal;
    const fs = this.fs;
    const path = this.snapshotPath;
    if (journal === null || fs === null || path === null) return;
    try {
      const slice = new TimeSlice();
      // writeFileAtomic's steps, each off the loop: temp file, fsync, rename, fsync of the dir.
      // The text (snapshotText's, byte for byte) is written as it is made, a slice's lines at a
      // time: joined and encoded whole, megabytes took tens of ms in one piece.
      const tmp = `${path}.tmp`;
      const file = await fs.openAsync(tmp, "readwrite");
      let size = 0;
      try {
        file.truncate(0);
        const head = JSON.stringify({ format: snapshotFormat, version: snapshotVersion, zxid: String(this.lastZxid) });
        let text = `${head.slice(0, -1)},"nodes":[\n`;
        let first = true;
        for (const [nodePath, node] of this.nodes) {
          if (node.ephemeralOwner !== 0n) continue;
          text += `${first ? "" : ",\n"}${JSON.stringify(snapshotEntry(nodePath, node))}`;
          first = false;
          if (!slice.due) continue;
          const bytes = utf8Bytes(text);
          file.writeAt(bytes, size);
          size += bytes.length;
          text = "";
          await slice.yield();
        }
        const bytes = utf8Bytes(`${text}\n]}\n`);
        file.writeAt(bytes, size);
        size += bytes.length;
        await (file.syncAsync?.() ?? file.sync());
      } finally {
        file.close();
      }
      await fs.renameAsync(tmp, path);
      const dir = path.slice(0, path.lastIndexOf("/")) || "/";
      const dirHandle = await fs.openAsync(dir, "read");
      try {
        await (dirHandle.syncAsync?.() ?? dirHandle.sync());
      } finally {
        dirHandle.close();
      }
      this.snapshotBytesLast = size;
      journal.reset();
    } catch (e) {
      this.logger.error({ err: String(e), file: path }, "registry snapshot rewrite failed; the journal keeps every change");
    }
  }

  private snapshotBytes(zxid: bigint): Uint8Array {
    const lines: string[] = [];
    // Map order is creation order, so parents come before their children.
    for (const [path, node] of this.nodes) {
      if (node.ephemeralOwner === 0n) lines.push(JSON.stringify(snapshotEntry(path, node)));
    }
    return snapshotText(zxid, lines);
  }

  /** The snapshot (if any), then the journal's records with a larger zxid. */
  private *load(file: string, bytes: Uint8Array | null, journalFile: string, records: Uint8Array[]): Generator<void> {
    const fail = (why: string): never => {
      throw new Error(
        `registry snapshot ${file} is corrupt (${why}); restore it from a backup, or move it aside to ` +
          "start with an empty registry (its topics, assignments and configs are then forgotten)",
      );
    };
    let zxid = 0n;
    if (bytes !== null) {
      const snapshot = yield* parseSnapshotGradually(bytes, fail);
      zxid = snapshot.zxid;
      this.nodes.clear();
      for (const { path, node } of snapshot.entries) {
        if (this.nodes.has(path)) fail(`node ${path} appears twice`);
        this.nodes.set(path, node);
      }
      yield;
    }
    if (!this.nodes.has("/")) fail("no root node");
    zxid = this.replay(journalFile, records, zxid);
    yield;
    for (const path of this.nodes.keys()) {
      if (path === "/") continue;
      const parent = this.nodes.get(parentPath(path));
      if (parent === undefined) fail(`node ${path} has no parent`);
      parent!.children.add(baseName(path));
    }
    let maxZxid = zxid;
    for (const node of this.nodes.values()) {
      for (const z of [node.czxid, node.mzxid, node.pzxid]) if (z > maxZxid) maxZxid = z;
    }
    this.lastZxid = ((maxZxid >> 32n) + 1n) << 32n;
  }

  /** Applies the journal's records newer than the snapshot; returns the last zxid. */
  private replay(file: string, records: Uint8Array[], snapshotZxid: bigint): bigint {
    let zxid = snapshotZxid;
    records.forEach((payload, i) => {
      const fail = (why: string): never => {
        throw new Error(
          `registry journal ${file} is corrupt (record #${i}: ${why}); restore the registry dir from a ` +
            "backup, or move the journal aside to start from the last snapshot (changes since it are then forgotten)",
        );
      };
      const { zxid: recordZxid, put, del } = parseJournalRecord(payload, fail);
      if (recordZxid <= snapshotZxid) return; // the snapshot was rewritten after this record
      if (recordZxid <= zxid) fail(`zxid ${recordZxid} does not follow ${zxid}`);
      zxid = recordZxid;
      // Map.set keeps an existing key's place, so parents stay before their children.
      for (const { path, node } of put) this.nodes.set(path, node);
      for (const path of del) {
        if (path === "/") fail("deletes the root");
        this.nodes.delete(path);
      }
    });
    return zxid;
  }
}

// ---------------------------------------------------------------------------------------------
// Sessions

class EmbeddedSession implements Registry {
  private closed = false;
  private readonly dataWatches = new Map<string, Set<Watcher>>();
  private readonly childWatches = new Map<string, Set<Watcher>>();

  constructor(private readonly store: EmbeddedRegistryStore, readonly sessionId: bigint) {}

  // Bodies run synchronously up to their first await: the change is made when the call is made,
  // and no other event can slip between a caller's check and its mutation. The await is the
  // group commit (the change on disk, its watches delivered).
  async create(path: string, data: Uint8Array, mode: CreateMode = "persistent"): Promise<string> {
    const [result] = this.mutate([{ op: "create", path, data, mode }], false);
    await this.store.committed();
    return (result as { path: string }).path;
  }

  async ensurePath(path: string): Promise<void> {
    this.checkOpen();
    validatePath(path);
    // Ancestors first, each its own transaction, as a ZooKeeper client must do it.
    const segments = path === "/" ? [] : path.slice(1).split("/");
    let prefix = "";
    for (const segment of segments) {
      prefix += `/${segment}`;
      if (this.store.readNode(prefix) !== null) continue;
      this.mutate([{ op: "create", path: prefix, data: new Uint8Array(0) }], false);
    }
    await this.store.committed();
  }

  async delete(path: string, version = -1): Promise<void> {
    this.mutate([{ op: "delete", path, version }], false);
    await this.store.committed();
  }

  async exists(path: string, watch?: Watcher): Promise<Stat | null> {
    this.checkOpen();
    const found = this.store.readNode(path);
    if (watch) addWatch(this.dataWatches, path, watch);
    return found === null ? null : found.stat;
  }

  async getData(path: string, watch?: Watcher): Promise<{ data: Uint8Array; stat: Stat }> {
    this.checkOpen();
    const found = this.store.readNode(path);
    if (found === null) throw new RegistryError("NoNode", path);
    if (watch) addWatch(this.dataWatches, path, watch);
    return found;
  }

  async setData(path: string, data: Uint8Array, version = -1): Promise<Stat> {
    const [result] = this.mutate([{ op: "setData", path, data, version }], false);
    await this.store.committed();
    return (result as { stat: Stat }).stat;
  }

  async getChildren(path: string, watch?: Watcher): Promise<string[]> {
    this.checkOpen();
    const children = this.store.childrenOf(path);
    if (children === null) throw new RegistryError("NoNode", path);
    if (watch) addWatch(this.childWatches, path, watch);
    return children;
  }

  async multi(ops: Op[]): Promise<OpResult[]> {
    if (!Array.isArray(ops)) throw new RegistryError("BadArguments", "", "multi takes an array of ops");
    const results = this.mutate(ops, true);
    await this.store.committed();
    return results;
  }

  /** Embedded sessions end only by close(): never renewed, so fn is never called. */
  onNewSession(_fn: () => void): () => void {
    return () => {};
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // A closing client stops hearing events, including those of its own ephemerals' deletion.
    this.dataWatches.clear();
    this.childWatches.clear();
    this.store.endSession(this);
    await this.store.committed().catch(() => {}); // the store logged it; the ephemerals are gone
  }

  /** @internal Removes and returns this session's watchers that ev triggers, each once. */
  takeWatchers(ev: WatchEvent): Set<Watcher> {
    const taken = new Set<Watcher>();
    const take = (watches: Map<string, Set<Watcher>>) => {
      for (const w of watches.get(ev.path) ?? []) taken.add(w);
      watches.delete(ev.path);
    };
    if (ev.type !== "childrenChanged") take(this.dataWatches);
    if (ev.type === "childrenChanged" || ev.type === "deleted") take(this.childWatches);
    return taken;
  }

  private mutate(ops: readonly Op[], inMulti: boolean): OpResult[] {
    this.checkOpen();
    return this.store.applyOps(this.sessionId, ops, inMulti);
  }

  private checkOpen(): void {
    if (this.closed) {
      throw new RegistryError("SessionExpired", "", `session 0x${this.sessionId.toString(16)} is closed`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

function newNode(data: Uint8Array, zxid: bigint, nowMs: number, ephemeralOwner: bigint): ZNode {
  return {
    data,
    czxid: zxid,
    mzxid: zxid,
    pzxid: zxid,
    ctime: nowMs,
    mtime: nowMs,
    version: 0,
    cversion: 0,
    ephemeralOwner,
    children: new Set(),
  };
}

/**
 * The next sequential suffix: how many children were ever created. ZooKeeper keeps that count
 * (DataNode's internal cversion) and shows cversion as 2 * creations - children, which counts
 * deletions too; so creations = (cversion + children) / 2, and a deletion consumes no number.
 */
function childCreations(node: ZNode): number {
  return (node.cversion + node.children.size) / 2;
}

function statOf(node: ZNode): Stat {
  return {
    czxid: node.czxid,
    mzxid: node.mzxid,
    pzxid: node.pzxid,
    ctime: node.ctime,
    mtime: node.mtime,
    version: node.version,
    cversion: node.cversion,
    aversion: 0,
    ephemeralOwner: node.ephemeralOwner,
    dataLength: node.data.length,
    numChildren: node.children.size,
  };
}

function event(type: WatchEvent["type"], path: string): WatchEvent {
  return Object.freeze({ type, path });
}

function addWatch(watches: Map<string, Set<Watcher>>, path: string, watcher: Watcher): void {
  let set = watches.get(path);
  if (set === undefined) {
    set = new Set();
    watches.set(path, set);
  }
  set.add(watcher);
}

function rollBack(txn: Txn): void {
  for (let i = txn.undo.length - 1; i >= 0; i--) txn.undo[i]();
}

/** -1 matches any version, as in ZooKeeper. */
function checkVersion(path: string, node: ZNode, version: number): void {
  if (version !== -1 && version !== node.version) {
    throw new RegistryError("BadVersion", path, `expected version ${version}, node is at ${node.version}`);
  }
}

function checkData(path: string, data: Uint8Array): void {
  if (!(data instanceof Uint8Array)) {
    throw new RegistryError("BadArguments", path, "data must be a Uint8Array");
  }
  if (data.length > nodeDataBytesMax) {
    throw new RegistryError(
      "BadArguments",
      path,
      `data is ${data.length} bytes, more than ${nodeDataBytesMax}`,
    );
  }
}

// --- snapshot and journal encoding -------------------------------------------------------------

/** The journal record of txn: the state after it of every persistent node it touched. */
function journalRecord(txn: Txn, nodes: ReadonlyMap<string, ZNode>): Uint8Array {
  const put: string[] = [];
  const del: string[] = [];
  for (const path of txn.touched) {
    const node = nodes.get(path);
    if (node === undefined) del.push(JSON.stringify(path));
    else if (node.ephemeralOwner === 0n) put.push(JSON.stringify(snapshotEntry(path, node)));
  }
  return utf8Bytes(`{"zxid":"${txn.zxid}","put":[${put.join(",")}],"del":[${del.join(",")}]}`);
}

function parseJournalRecord(
  payload: Uint8Array,
  fail: (why: string) => never,
): { zxid: bigint; put: Array<{ path: string; node: ZNode }>; del: string[] } {
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(payload));
  } catch (e) {
    fail(`not JSON: ${e instanceof Error ? e.message : e}`);
  }
  if (!isRecord(doc)) fail("not an object");
  const d = doc as Record<string, unknown>;
  const zxid = zxidField(d.zxid, "zxid", fail);
  if (!Array.isArray(d.put) || !Array.isArray(d.del)) fail("put or del is not an array");
  const put = (d.put as unknown[]).map((raw, i) => parseEntry(raw, i, fail));
  const del = (d.del as unknown[]).map((p) => {
    if (typeof p !== "string" || pathProblem(p) !== null) fail(`bad path ${JSON.stringify(p)} in del`);
    return p as string;
  });
  return { zxid, put, del };
}

/** The snapshot file's bytes: its head, then one node (a snapshotEntry's JSON) per line. */
function snapshotText(zxid: bigint, lines: string[]): Uint8Array {
  const head = JSON.stringify({ format: snapshotFormat, version: snapshotVersion, zxid: String(zxid) });
  return utf8Bytes(`${head.slice(0, -1)},"nodes":[\n${lines.join(",\n")}\n]}\n`);
}

function snapshotEntry(path: string, node: ZNode): Record<string, unknown> {
  return {
    path,
    data: toBase64(node.data),
    czxid: String(node.czxid),
    mzxid: String(node.mzxid),
    pzxid: String(node.pzxid),
    ctime: node.ctime,
    mtime: node.mtime,
    version: node.version,
    cversion: node.cversion,
  };
}

/**
 * parseSnapshot a node at a time (a `yield` after each): the file as snapshotText writes it has
 * one node per line, each parsed on its own. A file laid out otherwise, or one that does not
 * parse, goes to parseSnapshot whole, whose answer (or error) is the one that counts.
 */
function* parseSnapshotGradually(
  bytes: Uint8Array,
  fail: (why: string) => never,
): Generator<void, { zxid: bigint; entries: Array<{ path: string; node: ZNode }> }> {
  const nodesOpen = ',"nodes":[';
  // Split at newline bytes and decode each line alone (a newline byte is never inside a UTF-8
  // sequence): decoding megabytes whole took tens of ms in one piece.
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const lines: Uint8Array[] = [];
  for (let from = 0;;) {
    const nl = bytes.indexOf(0x0a, from);
    lines.push(bytes.subarray(from, nl < 0 ? bytes.length : nl));
    if (nl < 0) break;
    from = nl + 1;
  }
  let head: Record<string, unknown>;
  try {
    const n = lines.length;
    const first = decoder.decode(lines[0]);
    if (n < 4 || !first.endsWith(nodesOpen) || decoder.decode(lines[n - 2]) !== "]}" || lines[n - 1].length !== 0) return parseSnapshot(bytes, fail);
    head = JSON.parse(first.slice(0, -nodesOpen.length) + "}");
  } catch {
    return parseSnapshot(bytes, fail);
  }
  if (!isRecord(head) || head.format !== snapshotFormat || head.version !== snapshotVersion) return parseSnapshot(bytes, fail);
  const zxid = zxidField(head.zxid, "zxid", fail);
  const entries: Array<{ path: string; node: ZNode }> = [];
  const last = lines.length - 3;
  for (let i = 1; i <= last; i++) {
    let raw: unknown;
    try {
      const line = decoder.decode(lines[i]);
      const comma = line.endsWith(",");
      if (comma === (i === last)) return parseSnapshot(bytes, fail); // a comma after all but the last
      raw = JSON.parse(comma ? line.slice(0, -1) : line);
    } catch {
      return parseSnapshot(bytes, fail);
    }
    entries.push(parseEntry(raw, i - 1, fail));
    yield;
  }
  return { zxid, entries };
}

function parseSnapshot(
  bytes: Uint8Array,
  fail: (why: string) => never,
): { zxid: bigint; entries: Array<{ path: string; node: ZNode }> } {
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (e) {
    fail(`not JSON: ${e instanceof Error ? e.message : e}`);
  }
  if (!isRecord(doc) || doc.format !== snapshotFormat) fail(`not a ${snapshotFormat} document`);
  const d = doc as Record<string, unknown>;
  if (d.version !== snapshotVersion) fail(`unsupported version ${JSON.stringify(d.version)}`);
  const zxid = zxidField(d.zxid, "zxid", fail);
  if (!Array.isArray(d.nodes)) fail("nodes is not an array");
  const entries = (d.nodes as unknown[]).map((raw, i) => parseEntry(raw, i, fail));
  return { zxid, entries };
}

function parseEntry(
  raw: unknown,
  index: number,
  fail: (why: string) => never,
): { path: string; node: ZNode } {
  const where = `node #${index}`;
  if (!isRecord(raw)) fail(`${where} is not an object`);
  const r = raw as Record<string, unknown>;
  if (typeof r.path !== "string" || pathProblem(r.path) !== null) fail(`${where} has a bad path`);
  const path = r.path as string;
  const data = typeof r.data === "string" ? fromBase64(r.data) : null;
  if (data === null) fail(`${path}: data is not base64`);
  if (data!.length > nodeDataBytesMax) fail(`${path}: data larger than ${nodeDataBytesMax} bytes`);
  const int = (v: unknown, name: string): number => {
    if (!Number.isSafeInteger(v)) fail(`${path}: ${name} is not an integer`);
    return v as number;
  };
  return {
    path,
    node: {
      data: data!,
      czxid: zxidField(r.czxid, `${path}: czxid`, fail),
      mzxid: zxidField(r.mzxid, `${path}: mzxid`, fail),
      pzxid: zxidField(r.pzxid, `${path}: pzxid`, fail),
      ctime: int(r.ctime, "ctime"),
      mtime: int(r.mtime, "mtime"),
      version: int(r.version, "version"),
      cversion: int(r.cversion, "cversion"),
      ephemeralOwner: 0n,
      children: new Set(),
    },
  };
}

function zxidField(v: unknown, name: string, fail: (why: string) => never): bigint {
  if (typeof v !== "string" || !/^\d{1,19}$/.test(v)) fail(`${name} is not a decimal zxid`);
  const z = BigInt(v as string);
  if (z >= 1n << 63n) fail(`${name} is out of range`);
  return z;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

// Uint8Array's own base64 (ES2026; Bun 1.4 and Deno 2.9 have it) is some ten times faster than
// btoa over a binary string: a topic znode of 10,000 partitions is ~100 KB, encoded at every
// journal record and snapshot. btoa/atob (web globals in both runtimes, one char per byte) stay
// as the fallback.
const nativeBase64 = typeof (Uint8Array.prototype as { toBase64?: unknown }).toBase64 === "function" &&
  typeof (Uint8Array as { fromBase64?: unknown }).fromBase64 === "function";

function toBase64(bytes: Uint8Array): string {
  if (nativeBase64) return (bytes as unknown as { toBase64(): string }).toBase64();
  let binary = "";
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) {
    binary += String.fromCharCode(...bytes.subarray(i, i + chunk));
  }
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return null;
  try {
    if (nativeBase64) return (Uint8Array as unknown as { fromBase64(t: string): Uint8Array }).fromBase64(text);
    const binary = atob(text);
    const out = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}
