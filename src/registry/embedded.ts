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
// - If the journal append fails (a full disk: ENOSPC, EDQUOT; no descriptor: EMFILE), the
//   transaction is undone and fails with SystemError carrying the errno (RegistryError.ioCode),
//   so callers answer it as a storage error; the next transaction is tried afresh. If the fsync fails, the changes cannot be undone (others may have read them): every
//   waiting call fails with SystemError and the store refuses all later writes until reopened,
//   as a database stops after a failed fsync (the kernel may have dropped the dirty pages).
// - Once the journal is larger than registryJournalCompactBytes and than the last snapshot, the
//   snapshot is rewritten (compaction): at a group commit the journal is set aside (renamed
//   `registry.journal.<zxid>`, journal.ts) and a new one started, and the snapshot is written
//   a slice at a time while writes go on (snapshot_writer.ts: fuzzy, headed by that zxid); once
//   it is durable the set-aside journals are removed. One rewrite runs at a time; one that
//   fails (a full disk) is tried again only after registryCompactRetryMs. Open reads the
//   snapshot, then replays the records of the set-aside journals (oldest first) and of the
//   journal with a larger zxid than the snapshot's: a crash at any step leaves either the old
//   snapshot with every journal since it, or the new one with records it may already hold.
//
// On open the zxid epoch (high 32 bits) is bumped, as a new ZooKeeper leader does, so zxids stay
// unique even though changes to ephemerals after the last snapshot were not saved.
//
// The snapshot's and the journal records' format: snapshot.ts. Sessions and their watches:
// embedded_session.ts. Path rules: paths.ts.

import type { Clock, FileSystem, Platform } from "../platform/mod.ts";
import {
  assert,
  type Logger,
  nodeDataBytesMax,
  registryCompactRetryMs,
  registryJournalCompactBytes,
  registryLoadNodesPerStep,
  silentLogger,
  TimeSlice,
} from "../util/mod.ts";
import { isTransientErrno } from "../log/mod.ts";
import { EmbeddedSession } from "./embedded_session.ts";
import {
  isSetAsideJournalFileName,
  journalFileName,
  journalHeaderBytes,
  readFileSteps,
  readJournal,
  RegistryJournal,
  setAsideJournalFileName,
} from "./journal.ts";
import { baseName, parentPath, validatePath } from "./paths.ts";
import { journalRecord, newNode, parseJournalRecord, parseSnapshotGradually, type ZNode } from "./snapshot.ts";
import { writeSnapshotGradually } from "./snapshot_writer.ts";
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
export { parentPath, pathProblem, validatePath } from "./paths.ts";
export const snapshotFileName = "snapshot.json";
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

/** The changes of one transaction, kept so they can be undone or announced. */
class Txn {
  readonly undo: Array<() => void> = [];
  readonly events: WatchEvent[] = [];
  /** Persistent nodes created, changed or deleted, in the order first touched (for the journal). */
  readonly touched = new Set<string>();
  constructor(readonly zxid: bigint, readonly nowMs: number) {}
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
  /** The errno of the failed fsync ("EIO" when it had none). */
  private brokenErrno = "EIO";
  /** A failed snapshot rewrite (disk full) is not tried again before this time. */
  private compactRetryAtMs = -Infinity;
  /** The snapshot rewrite under way, or null. */
  private compaction: Promise<void> | null = null;
  /** The registry dir (null for a store that is never saved). */
  private dir: string | null = null;
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
    store.dir = base;
    const bytes = yield* readFileSteps(platform.fs, file);
    // Journals set aside by a rewrite that did not finish (a crash, a full disk), oldest first,
    // then the journal. Each was whole when set aside; only the journal may have a torn tail.
    const setAside = platform.fs.readdir(base).filter(isSetAsideJournalFileName).sort();
    const older: Array<{ file: string; payloads: Uint8Array[] }> = [];
    for (const name of setAside) {
      const path = `${base}/${name}`;
      older.push({ file: path, payloads: readJournal(path, (yield* readFileSteps(platform.fs, path)) ?? new Uint8Array(0)).payloads });
      yield;
    }
    const journalBytes = yield* readFileSteps(platform.fs, journalFile);
    // A dir written before the journal existed has only snapshot.json: it opens as it is.
    const journal = journalBytes === null ? { payloads: [], validBytes: 0 } : readJournal(journalFile, journalBytes);
    yield* store.load(file, bytes, [...older, { file: journalFile, payloads: journal.payloads }]);
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
    await this.compaction;
    // A clean stop leaves a snapshot and an empty journal: the next start has nothing to replay.
    // Every session is closed, so the tree no longer changes.
    const journal = this.journal;
    if (this.broken === null && journal !== null && this.fs !== null) {
      const leftOver = this.fs.readdir(this.dir!).some(isSetAsideJournalFileName);
      const zxid = journal.size() > journalHeaderBytes || leftOver ? this.setAside() : null;
      if (zxid !== null) {
        if (this.journal !== journal) journal.close(); // nothing is unsynced in it: committed() above
        await this.compact(zxid);
      }
    }
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
    if (this.broken !== null) throw new RegistryError("SystemError", String(this.journalPath), this.broken, this.brokenErrno);
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
      if (this.broken === null) this.journal?.append(journalRecord(txn.zxid, txn.touched, this.nodes));
    } catch (e) {
      // A full disk passes: warn. Anything else says the disk itself is failing.
      const level = isTransientErrno(errnoOf(e) ?? "") ? "warn" : "error";
      this.logger[level]({ err: String(e), file: this.journalPath }, "registry journal write failed on session close");
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
      // The journal this group's records are in: a rewrite starting now sets it aside, and the
      // records appended meanwhile go to the next one, for the next group.
      const journal = this.journal;
      const setAside = this.compactionDue() ? this.setAside() : null;
      this.syncing = true;
      try {
        await journal.sync();
      } catch (e) {
        this.broken = `registry journal fsync failed (${e}); the broker must be restarted`;
        this.brokenErrno = errnoOf(e) ?? "EIO";
        this.logger.error({ err: String(e), file: journal.path }, "registry journal fsync failed; refusing registry writes");
      }
      this.syncing = false;
      if (setAside !== null) {
        if (this.journal !== journal) journal.close();
        if (this.broken === null) void this.compact(setAside);
      }
    }
    const failure = this.broken === null ? null : new RegistryError("SystemError", String(this.journalPath), this.broken, this.brokenErrno);
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
      this.journal.append(journalRecord(txn.zxid, txn.touched, this.nodes));
    } catch (e) {
      // Nothing was stored (the append is cut off again): the change is undone by the caller and
      // may be made again once the disk has room or descriptors are free.
      throw new RegistryError("SystemError", String(this.journalPath), `journal write failed: ${e}`, errnoOf(e) ?? "EIO");
    }
  }

  /** Whether the journal outgrew both the bound and the last snapshot, with no rewrite under way. */
  private compactionDue(): boolean {
    const journal = this.journal;
    if (journal === null || this.fs === null || this.snapshotPath === null || this.compaction !== null) return false;
    const size = journal.size();
    if (size < this.journalCompactBytes || size < this.snapshotBytesLast) return false;
    // After a failed rewrite (a full disk), not at every commit: each try writes the whole tree.
    return this.clock.nowMs() >= this.compactRetryAtMs;
  }

  /**
   * Sets the journal aside and starts a new one (called at a group commit, which then fsyncs the
   * set-aside one); returns the zxid every set-aside record is at or below, or null when the new
   * journal could not be made (the old one, renamed or not, goes on; open reads it either way).
   */
  private setAside(): bigint | null {
    const journal = this.journal!;
    const zxid = this.lastZxid;
    const current = `${this.dir}/${journalFileName}`;
    const to = `${this.dir}/${setAsideJournalFileName(zxid)}`;
    try {
      // A journal set aside at this zxid already (by a rewrite that failed since): no record
      // came after it, so the journal holds none and there is nothing to set aside.
      if (this.fs!.stat(to) !== null) return zxid;
      journal.setAside(to);
      this.journal = RegistryJournal.create(this.fs!, this.dir!, current);
      return zxid;
    } catch (e) {
      this.compactRetryAtMs = this.clock.nowMs() + registryCompactRetryMs;
      const level = isTransientErrno(errnoOf(e) ?? "") ? "warn" : "error";
      this.logger[level]({ err: String(e), file: current }, "registry journal could not be set aside for a snapshot rewrite; trying later");
      return null;
    }
  }

  /**
   * Writes the snapshot a slice at a time (the tree may change meanwhile: snapshot_writer.ts),
   * then removes the journals set aside at or below zxid. A failure leaves them (nothing lost:
   * open replays them) and is only logged; the next rewrite removes them.
   */
  private compact(zxid: bigint): Promise<void> {
    const run = this.compactSteps(zxid).finally(() => {
      if (this.compaction === run) this.compaction = null;
    });
    this.compaction = run;
    return run;
  }

  private async compactSteps(zxid: bigint): Promise<void> {
    const fs = this.fs!;
    const path = this.snapshotPath!;
    try {
      this.snapshotBytesLast = await writeSnapshotGradually(fs, path, this.nodes, zxid, new TimeSlice());
      this.compactRetryAtMs = -Infinity;
      for (const name of fs.readdir(this.dir!).filter(isSetAsideJournalFileName).sort()) {
        if (name <= setAsideJournalFileName(zxid)) await fs.removeAsync(`${this.dir}/${name}`);
      }
    } catch (e) {
      // A full disk (or no descriptor) passes by itself: warn; anything else is a failing disk.
      this.compactRetryAtMs = this.clock.nowMs() + registryCompactRetryMs;
      const level = isTransientErrno(errnoOf(e) ?? "") ? "warn" : "error";
      this.logger[level]({ err: String(e), file: path }, "registry snapshot rewrite failed; the journals keep every change");
    }
  }

  /** The snapshot (if any), then the journals' records (in order) with a larger zxid. */
  private *load(file: string, bytes: Uint8Array | null, journals: Array<{ file: string; payloads: Uint8Array[] }>): Generator<void> {
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
      let n = 0;
      for (const { path, node } of snapshot.entries) {
        if (this.nodes.has(path)) fail(`node ${path} appears twice`);
        this.nodes.set(path, node);
        if (++n % registryLoadNodesPerStep === 0) yield;
      }
      yield;
    }
    if (!this.nodes.has("/")) fail("no root node");
    const snapshotZxid = zxid;
    for (const journal of journals) zxid = yield* this.replay(journal.file, journal.payloads, snapshotZxid, zxid);
    yield;
    // Nothing but this load touches the nodes until open resolves: the steps may be spread.
    let n = 0;
    for (const path of this.nodes.keys()) {
      if (++n % registryLoadNodesPerStep === 0) yield;
      if (path === "/") continue;
      const parent = this.nodes.get(parentPath(path));
      if (parent === undefined) fail(`node ${path} has no parent`);
      parent!.children.add(baseName(path));
    }
    let maxZxid = zxid;
    for (const node of this.nodes.values()) {
      for (const z of [node.czxid, node.mzxid, node.pzxid]) if (z > maxZxid) maxZxid = z;
      if (++n % registryLoadNodesPerStep === 0) yield;
    }
    this.lastZxid = ((maxZxid >> 32n) + 1n) << 32n;
  }

  /** Applies the journal's records newer than the snapshot and than lastZxid; returns the last zxid. */
  private *replay(file: string, records: Uint8Array[], snapshotZxid: bigint, lastZxid: bigint): Generator<void, bigint> {
    let zxid = lastZxid;
    for (const [i, payload] of records.entries()) {
      const fail = (why: string): never => {
        throw new Error(
          `registry journal ${file} is corrupt (record #${i}: ${why}); restore the registry dir from a ` +
            "backup, or move the journal aside to start from the last snapshot (changes since it are then forgotten)",
        );
      };
      const { zxid: recordZxid, put, del } = parseJournalRecord(payload, fail);
      if (recordZxid <= snapshotZxid) continue; // the snapshot was rewritten after this record
      if (recordZxid <= zxid) fail(`zxid ${recordZxid} does not follow ${zxid}`);
      zxid = recordZxid;
      // Map.set keeps an existing key's place, so parents stay before their children.
      for (const { path, node } of put) this.nodes.set(path, node);
      for (const path of del) {
        if (path === "/") fail("deletes the root");
        this.nodes.delete(path);
      }
      yield; // between records: a group commit's record may hold thousands of nodes
    }
    return zxid;
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

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

/** The errno a failed file operation carries (node:fs and Deno set `code`), or null. */
function errnoOf(e: unknown): string | null {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^E[A-Z0-9]+$/.test(code) ? code : null;
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
