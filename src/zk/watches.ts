// The client's one-shot watches, kept as ZooKeeper's Java client keeps them (ZKWatchManager):
// three tables from path to watchers (data, exist, child), filled when a read that asked for a
// watch succeeds, emptied for a path when an event for it arrives. A watcher registered several
// ways on one path is called once per event (the tables are collected into one set).
//
// Which reads fill which table:
//   getData ok → data        exists ok → data        exists NoNode → exist
//   getChildren ok → child   (a failed getData/getChildren sets nothing)
// Which events empty which tables:
//   created, dataChanged → data + exist      childrenChanged → child
//   deleted → data + exist + child
// After a reconnect the paths are registered again with SetWatches, in packets of at most
// zkSetWatchesBytesMax of paths.

import { utf8Bytes, zkSetWatchesBytesMax } from "../util/mod.ts";
import { EventType } from "./records.ts";

export type ZkWatchEventType = "created" | "deleted" | "dataChanged" | "childrenChanged";

export interface ZkWatchEvent {
  type: ZkWatchEventType;
  /** The client's path (chroot taken off). */
  path: string;
}

export type ZkWatcher = (event: ZkWatchEvent) => void;

export type WatchKind = "data" | "exist" | "child";

/** Paths with at least one watch, per table: what SetWatches re-registers after a reconnect. */
export interface WatchedPaths {
  data: string[];
  exist: string[];
  child: string[];
}

export class WatchTable {
  private readonly tables: Record<WatchKind, Map<string, Set<ZkWatcher>>> = {
    data: new Map(),
    exist: new Map(),
    child: new Map(),
  };

  add(kind: WatchKind, path: string, watcher: ZkWatcher): void {
    let set = this.tables[kind].get(path);
    if (set === undefined) {
      set = new Set();
      this.tables[kind].set(path, set);
    }
    set.add(watcher);
  }

  /** Removes and returns the watchers an event triggers, each once. */
  take(type: ZkWatchEventType, path: string): Set<ZkWatcher> {
    const taken = new Set<ZkWatcher>();
    const kinds: WatchKind[] = type === "childrenChanged"
      ? ["child"]
      : type === "deleted"
      ? ["data", "exist", "child"]
      : ["data", "exist"];
    for (const kind of kinds) {
      for (const w of this.tables[kind].get(path) ?? []) taken.add(w);
      this.tables[kind].delete(path);
    }
    return taken;
  }

  paths(): WatchedPaths {
    return {
      data: [...this.tables.data.keys()],
      exist: [...this.tables.exist.keys()],
      child: [...this.tables.child.keys()],
    };
  }

  get size(): number {
    return this.tables.data.size + this.tables.exist.size + this.tables.child.size;
  }

  clear(): void {
    for (const t of Object.values(this.tables)) t.clear();
  }
}

/** The watch event a WatcherEvent notification carries, or null for state-only ones. */
export function eventTypeName(type: number): ZkWatchEventType | null {
  switch (type) {
    case EventType.NodeCreated:
      return "created";
    case EventType.NodeDeleted:
      return "deleted";
    case EventType.NodeDataChanged:
      return "dataChanged";
    case EventType.NodeChildrenChanged:
      return "childrenChanged";
    default:
      return null;
  }
}

/** Splits watch paths into SetWatches packets of bounded size (as the Java client does). */
export function setWatchesChunks(data: string[], exist: string[], child: string[]) {
  const chunks: Array<{ dataWatches: string[]; existWatches: string[]; childWatches: string[] }> = [];
  let current = { dataWatches: [] as string[], existWatches: [] as string[], childWatches: [] as string[] };
  let bytes = 0;
  const lists: Array<[string[], keyof typeof current]> = [[data, "dataWatches"], [exist, "existWatches"], [child, "childWatches"]];
  for (const [paths, key] of lists) {
    for (const p of paths) {
      const size = utf8Bytes(p).length + 4;
      if (bytes + size > zkSetWatchesBytesMax && bytes > 0) {
        chunks.push(current);
        current = { dataWatches: [], existWatches: [], childWatches: [] };
        bytes = 0;
      }
      current[key].push(p);
      bytes += size;
    }
  }
  if (bytes > 0) chunks.push(current);
  return chunks;
}
