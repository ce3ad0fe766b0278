// PreparedLogs: new partition logs whose directory and first segment files (`.log`, `.index`,
// `.timeindex`, all empty, and leader-epoch-checkpoint when this broker leads the log) were
// created off the event loop, in groups, ahead of LogManager.getOrCreateLog (strand's; Kafka
// creates them synchronously in getOrCreateLog). Creating a directory or a file waits on the
// filesystem's journal (several ms per call on a busy disk): done synchronously for a topic of
// 10,000 partitions, it held the event loop for 70-300 ms at a time. getOrCreateLog then builds
// the log without I/O (Log.created).
//
// Invariants: a key is prepared at most once at a time; a prepared log holds its open `.log`
// until taken or discarded (a discarded one's empty files stay, as after a crash: start-up loads
// them); a preparing or prepared log counts as held by its dir when a dir is chosen for a new
// log. Files are opened create-new: a file already there (a leftover) makes the preparation fail,
// leaving the partition to getOrCreateLog's synchronous path, which loads what is there. A
// preparation never throws; whatever it opened is closed when it fails or is no longer needed.

import type { FileHandle, Platform } from "../platform/mod.ts";
import { logFileOpsInFlightMax } from "../util/mod.ts";
import { InFlightLimit } from "./in_flight_limit.ts";
import { formatLeaderEpochCheckpoint, LeaderEpochCheckpointFileName } from "./leader_epoch_cache.ts";
import { segmentFileName } from "./segment.ts";

/** A new log whose files are created, with its dir and open `.log`. */
export interface PreparedLog {
  dir: string;
  segmentLog: FileHandle;
  /** The leader epoch written in its leader-epoch-checkpoint, or null (none written). */
  writtenEpoch: number | null;
}

export class PreparedLogs {
  /** New logs whose files are created, by key, with their dir and open `.log`. */
  private prepared = new Map<string, PreparedLog>();
  /** Keys whose preparation is under way, with the dir chosen (counted as holding them). */
  private preparing = new Map<string, string>();

  /** The file operations of all preparations, logFileOpsInFlightMax at a time (see there). */
  private readonly io: InFlightLimit;

  constructor(private readonly fs: Platform["fs"], fileOpsInFlightMax = logFileOpsInFlightMax) {
    this.io = new InFlightLimit(fileOpsInFlightMax);
  }

  /** Whether the key is prepared or being prepared. */
  has(key: string): boolean {
    return this.prepared.has(key) || this.preparing.has(key);
  }

  /** The prepared log of key, which is no longer held here; undefined when none is. */
  take(key: string): PreparedLog | undefined {
    const prepared = this.prepared.get(key);
    if (prepared !== undefined) this.prepared.delete(key);
    return prepared;
  }

  /** Forgets a prepared log (its empty files stay, as after a crash; start-up loads them). */
  discard(key: string): void {
    this.prepared.get(key)?.segmentLog.close();
    this.prepared.delete(key);
  }

  discardAll(): void {
    for (const key of [...this.prepared.keys()]) this.discard(key);
  }

  /** The dir of each prepared log and of each preparation under way. */
  *dirs(): Generator<string> {
    for (const { dir } of this.prepared.values()) yield dir;
    for (const dir of this.preparing.values()) yield dir;
  }

  /**
   * Creates key's directory in dir and its first segment's files, and the leader epoch checkpoint
   * when leaderEpoch is not null; the log is prepared if stillNeeded() says so once they are.
   */
  async prepare(key: string, dir: string, leaderEpoch: number | null, stillNeeded: () => boolean): Promise<void> {
    const path = `${dir}/${key}`;
    this.preparing.set(key, dir);
    const opened: FileHandle[] = [];
    try {
      await this.io.run(() => this.fs.mkdirpAsync(path));
      // create-new: a file already there (a leftover) is for the synchronous path to load.
      const files = await Promise.allSettled(
        [".log", ".index", ".timeindex"].map((ext) => this.io.run(() => this.fs.openAsync(`${path}/${segmentFileName(0, ext)}`, "create-new"))),
      );
      for (const f of files) if (f.status === "fulfilled") opened.push(f.value);
      const failed = files.find((f) => f.status === "rejected");
      if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
      opened[1].close();
      opened[2].close();
      if (leaderEpoch !== null) {
        // Written in place, not renamed over: there is no older file to keep whole, and a torn
        // one (a crash now) is rebuilt from the (empty) log at the next start-up.
        const checkpoint = await this.io.run(() => this.fs.openAsync(`${path}/${LeaderEpochCheckpointFileName}`, "create-new"));
        try {
          checkpoint.writeAt(new TextEncoder().encode(formatLeaderEpochCheckpoint([{ epoch: leaderEpoch, startOffset: 0 }])), 0);
        } finally {
          checkpoint.close();
        }
      }
      if (!stillNeeded()) throw new Error("not needed any more");
      this.prepared.set(key, { dir, segmentLog: opened[0], writtenEpoch: leaderEpoch });
    } catch {
      for (const f of opened) f.close();
    } finally {
      this.preparing.delete(key);
    }
  }
}
