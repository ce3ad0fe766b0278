// EmbeddedSession: one client's session on the embedded store (embedded.ts), the Registry the
// broker holds. It carries the session's watches and hands every request to the store, which
// applies it as one transaction.
//
// Invariants:
// - A watch is one-shot and belongs to its session: the store's commit takes the watchers an
//   event triggers (takeWatchers), each once, and delivers them after the group commit, so a
//   watcher never sees a change that is not on disk.
// - A closed session answers every call with SessionExpired; closing drops its watches first,
//   then its ephemerals go in one transaction (a closing client hears none of it).
// - Bodies run synchronously up to their first await, the group commit: the change is made
//   when the call is made.

import type { EmbeddedRegistryStore } from "./embedded.ts";
import { validatePath } from "./paths.ts";
import { type CreateMode, type Op, type OpResult, type Registry, RegistryError, type Stat, type Watcher, type WatchEvent } from "./types.ts";

export class EmbeddedSession implements Registry {
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

function addWatch(watches: Map<string, Set<Watcher>>, path: string, watcher: Watcher): void {
  let set = watches.get(path);
  if (set === undefined) {
    set = new Set();
    watches.set(path, set);
  }
  set.add(watcher);
}
