// AsyncDelete: the deletion of partition logs off the event loop (Kafka's LogManager.asyncDelete
// and deleteLogs). LogManager.deleteLog stops serving a log at once; then its dir is renamed
// `<topic>-<partition>.<uuid>-delete` (logDeleteDirName) and removed, both on the I/O pool: each
// waits on the filesystem's journal (one rename took 230 ms on a busy disk, and unlinking a
// topic of 10,000 partitions held the loop for a third of a second).
//
// Invariants: the rename is atomic and makes the delete durable (a crash mid-delete never leaves
// a half log that looks live; start-up removes `-delete` dirs, log_dir_startup.ts); until it is
// done the partition's path is not free (isRenaming; renamesSettled). At most
// logDeletionsInFlightMax renames and removals run at a time, the others waiting in order. A
// transient failure of the rename is tried again every logDirLoadRetryMs until the LogManager
// stops; any other I/O error goes to onIoError (which takes the dir offline); anything else is
// logged and the deletion given up.

import type { Platform } from "../platform/mod.ts";
import { fileNameBytesMax, logDeletionsInFlightMax, logDirLoadRetryMs } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";
import { InFlightLimit } from "./in_flight_limit.ts";
import { isIoError, isTransientIoError } from "./log_dir_failure.ts";

/**
 * Kafka's LocalLog.logDeleteDirName: `<topic>-<partition>.<uniqueId>-delete`, the topic cut short
 * so the name fits NAME_MAX. A topic name is ASCII (Kafka's legal characters), so characters are
 * bytes.
 */
export function logDeleteDirName(topic: string, partition: number, uniqueId: string): string {
  const suffix = `-${partition}.${uniqueId}-delete`;
  return topic.slice(0, Math.max(0, Math.min(topic.length, fileNameBytesMax - suffix.length))) + suffix;
}

export class AsyncDelete {
  /** Deleted logs whose dirs are being renamed to their `-delete` names, by key. */
  private renaming = new Map<string, Promise<void>>();
  /** The renames and removals of deleted logs, logDeletionsInFlightMax at a time. */
  private deletionIo = new InFlightLimit(logDeletionsInFlightMax);
  /** Removals of deleted logs' dirs under way. */
  private removals = new Set<Promise<void>>();

  constructor(
    private readonly platform: Platform,
    private readonly logger: Logger,
    /** Told of an I/O error under dir (the LogManager's markDirOffline). */
    private readonly onIoError: (dir: string, e: unknown) => void,
    /** True once the LogManager stops: no retry of a rename starts. */
    private readonly stopping: () => boolean,
  ) {}

  /** Renames the log dir `from` (in log dir `dir`) to `doomed`, then removes it; key is its partition's. */
  start(key: string, dir: string, from: string, doomed: string): void {
    const renamed = this.renameForDelete(dir, from, doomed).finally(() => {
      if (this.renaming.get(key) === renamed) this.renaming.delete(key);
    });
    this.renaming.set(key, renamed);
  }

  /** Whether the partition's deleted log dir still has its name. */
  isRenaming(key: string): boolean {
    return this.renaming.has(key);
  }

  /** Resolves once every deleted log's dir has its `-delete` name (or its rename was given up). */
  async renamesSettled(): Promise<void> {
    while (this.renaming.size > 0) await Promise.all([...this.renaming.values()]);
  }

  private async renameForDelete(dir: string, from: string, doomed: string): Promise<void> {
    for (;;) {
      try {
        await this.deletionIo.run(() => this.platform.fs.renameAsync(from, doomed));
        break;
      } catch (e) {
        if (!isIoError(e)) {
          this.logger.error({ dir: from, err: String(e) }, "renaming a deleted log failed");
          return;
        }
        this.onIoError(dir, e);
        if (!isTransientIoError(e) || this.stopping()) return;
        await new Promise<void>((resolve) => this.platform.clock.setTimeout(resolve, logDirLoadRetryMs));
      }
    }
    const removal = this.deletionIo.run(() => this.platform.fs.removeAsync(doomed)).catch((e) => {
      if (!isIoError(e)) {
        this.logger.error({ dir: doomed, err: String(e) }, "removing a deleted log failed");
        return;
      }
      this.onIoError(dir, e);
    }).finally(() => this.removals.delete(removal));
    this.removals.add(removal);
  }

  /** Resolves once the deleted logs' files are renamed and removed. */
  async removalsSettled(): Promise<void> {
    await this.renamesSettled();
    while (this.removals.size > 0) await Promise.all([...this.removals]);
  }
}
