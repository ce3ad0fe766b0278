// LogDirCheckpoints: the files the LogManager writes in each log dir about its logs (Kafka's
// LogManager.checkpointLogRecoveryOffsets, checkpointLogStartOffsets, and ReplicaManager's
// checkpointHighWatermarks): recovery-point-offset-checkpoint, log-start-offset-checkpoint,
// replication-offset-checkpoint, and at shutdown the clean-shutdown marker. Each is written at
// once (truncation, shutdown()) or in the background, its file operations on the I/O pool (the
// scheduled writes and shutdownGradually: the fsync of a file of 10,000 lines held the event loop
// for 80-120 ms on a busy disk).
//
// Invariants: one OffsetCheckpointFile per path, so the writes of a file are ordered
// (checkpoint.ts); files are replaced atomically, never edited in place; a file lists the logs of
// its own dir only, as they are when the write starts; log-start-offset-checkpoint lists only logs
// whose start is past their first segment's base (Kafka's rule). An I/O error goes to onIoError
// (which takes the dir offline); anything else passes unchanged.

import type { Platform } from "../platform/mod.ts";
import {
  CleanShutdownFile,
  LogStartOffsetCheckpointFile,
  OffsetCheckpointFile,
  RecoveryPointCheckpointFile,
  ReplicationOffsetCheckpointFile,
  syncDirAsync,
  writeSyncedAsync,
} from "./checkpoint.ts";
import type { Log } from "./log.ts";
import { isIoError } from "./log_dir_failure.ts";

/** The clean-shutdown marker's content (Kafka's). */
const cleanShutdownMarker = new TextEncoder().encode(`{"version":0,"brokerEpoch":-1}`);

export class LogDirCheckpoints {
  /** The dirs' checkpoint files by path, each ordering its own writes. */
  private checkpointFiles = new Map<string, OffsetCheckpointFile>();

  constructor(
    private readonly platform: Platform,
    /** The online logs in a dir, in the LogManager's order. */
    private readonly logsIn: (dir: string) => Iterable<Log>,
    /** Told of an I/O error under dir (the LogManager's markDirOffline). */
    private readonly onIoError: (dir: string, e: unknown) => void,
  ) {}

  /** Writes one of the three checkpoint files in each of dirs at once. */
  write(file: string, dirs: string[]): void {
    for (const dir of dirs) {
      const entries = this.checkpointEntries(file, dir);
      // A removed disk shows here first: its open segments still take appends (unlinked files),
      // but no new file can be made in it.
      this.offlineOnIoError(dir, () => this.checkpointFile(`${dir}/${file}`).write(entries));
    }
  }

  /** Writes one of the three checkpoint files in each of dirs off the event loop; resolves once written. */
  async writeInBackground(file: string, dirs: string[]): Promise<void> {
    await Promise.all(dirs.map((dir) =>
      this.checkpointFile(`${dir}/${file}`).writeAsync(this.checkpointEntries(file, dir)).catch((e) => {
        if (!isIoError(e)) throw e;
        this.onIoError(dir, e);
      })
    ));
  }

  /** Resolves once the writes under way (writeInBackground) have ended. */
  async settled(): Promise<void> {
    await Promise.all([...this.checkpointFiles.values()].map((f) => f.settled()));
  }

  /** Writes dir's clean-shutdown marker at once. */
  writeCleanShutdownMarker(dir: string): void {
    this.offlineOnIoError(dir, () => this.platform.fs.writeFileAtomic(`${dir}/${CleanShutdownFile}`, cleanShutdownMarker));
  }

  /** Writes dir's clean-shutdown marker off the event loop; nothing else may write it meanwhile. */
  writeCleanShutdownMarkerInBackground(dir: string): Promise<void> {
    return this.writeAtomicInBackground(dir, `${dir}/${CleanShutdownFile}`, cleanShutdownMarker);
  }

  /** One checkpoint file's entries for dir, as its logs are now. */
  private checkpointEntries(file: string, dir: string): { topic: string; partition: number; offset: number }[] {
    const entries: { topic: string; partition: number; offset: number }[] = [];
    for (const log of this.logsIn(dir)) {
      if (file === RecoveryPointCheckpointFile) entries.push({ topic: log.topic, partition: log.partition, offset: log.recoveryPoint });
      else if (file === ReplicationOffsetCheckpointFile) entries.push({ topic: log.topic, partition: log.partition, offset: log.highWatermark });
      else if (log.logStartOffset > log.segmentBaseOffsets[0]) {
        entries.push({ topic: log.topic, partition: log.partition, offset: log.logStartOffset });
      }
    }
    return entries;
  }

  /** The writer of one checkpoint file, one per path, so its writes are ordered (checkpoint.ts). */
  private checkpointFile(path: string): OffsetCheckpointFile {
    let file = this.checkpointFiles.get(path);
    if (file === undefined) {
      // A lagging high watermark is safe after a crash: that file's rename may leave the loop too.
      file = new OffsetCheckpointFile(this.platform, path, path.endsWith(`/${ReplicationOffsetCheckpointFile}`));
      this.checkpointFiles.set(path, file);
    }
    return file;
  }

  private offlineOnIoError(dir: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      if (!isIoError(e)) throw e;
      this.onIoError(dir, e);
    }
  }

  /**
   * writeFileAtomic's steps (temp file, fsync, rename, fsync of the dir), each on the I/O pool;
   * for a file nothing else writes meanwhile. An I/O error goes to onIoError.
   */
  private async writeAtomicInBackground(dir: string, path: string, data: Uint8Array): Promise<void> {
    const fs = this.platform.fs;
    try {
      const tmp = `${path}.tmp`;
      await writeSyncedAsync(fs, tmp, data);
      await fs.renameAsync(tmp, path);
      await syncDirAsync(fs, dir);
    } catch (e) {
      if (!isIoError(e)) throw e;
      this.onIoError(dir, e);
    }
  }
}
