// LogManager: every partition log on this broker, across the directories of `log.dirs`, and the
// background tasks over them (Kafka's LogManager): retention, flush, checkpoints.
//
// Layout (Kafka's), per log dir:
//   meta.properties                      version, broker.id, cluster.id
//   <topic>-<partition>/                 one Log
//   recovery-point-offset-checkpoint     per log: offsets below are fsynced (see checkpoint.ts)
//   log-start-offset-checkpoint          per log whose start is past its first segment's base
//   replication-offset-checkpoint        per log: its high watermark
//   .kafka_cleanshutdown                 exists only from a clean shutdown to the next start-up
// A deleted partition's directory is first renamed `<topic>-<partition>.<uuid>-delete`, so a
// crash mid-delete never leaves a half log that looks live; such directories are removed at
// start-up. The topic is cut short there when the name would pass 255 bytes (Kafka's
// logDeleteDirName: a legal topic has up to 249 characters). An entry whose name is not a
// `<topic>-<partition>` (lost+found, Kafka's `-future`/`-stray` dirs, files) is left alone, never
// stat'ed; a leftover `-delete` that cannot be removed is logged and left for next time. Neither
// stops the dir from loading.
//
// Start-up: a dir without the clean-shutdown marker was not shut down cleanly, and its logs are
// recovered from their recovery points. Logs load `num.recovery.threads.per.data.dir` at a time
// per dir, giving the event loop back between logs every eventLoopSliceMs (TimeSlice) so the
// process stays responsive (signals, timers, the registry session, the admin endpoint) while a
// large recovery runs; the marker is removed once the dir's logs are loaded.
// Shutdown: flush every log, write the three checkpoints, then the marker.
// Compaction: the LogCleaner (cleaner.ts) runs beside these tasks, with its own
// `cleaner-offset-checkpoint` per dir.
//
// Dir failure (Kafka's LogDirFailureChannel): an I/O error from a file operation under a dir (a
// log's append, read, flush, roll or retention, a checkpoint write, loading the dir at start-up)
// takes that dir offline, once: one error line naming it, its logs closed without writing
// (closeForFailure), and dirFailureListeners told which partitions went with it (the
// ReplicaManager answers KAFKA_STORAGE_ERROR for them, the Broker tells the controller). The other
// dirs keep serving. An offline dir gets no checkpoints, no clean-shutdown marker (its logs are
// recovered when it comes back) and no new partitions. start-up fails when no dir loads at all.
//
// Transient errors (log_dir_failure.ts) never take a dir offline. Out of descriptors (EMFILE,
// ENFILE, ENOMEM): the operation is refused with a retriable KAFKA_STORAGE_ERROR and a warn line
// (at most one per dir and kind every storageErrorLogIntervalMs, with the count suppressed); a log
// that cannot be opened then (at start-up, or when a partition is created) is remembered with its
// dir and load state (unloadedLogs) and opened again by the next getOrCreateLog, in that same dir.
// Disk full: each online dir's volume is checked by statfs every logDirSpaceCheckMs (not per
// produce; appended bytes are subtracted from the last figure in between). Appends are refused
// (KAFKA_STORAGE_ERROR, the message naming the dir and its free bytes) while the usable space is
// below log.dir.min.free.bytes, except to the internal topics, whose small writes (offset commits,
// group metadata) the reserve is kept for; and to every topic after an ENOSPC, until a check finds
// room again. Reads, metadata and groups go on; appends resume by themselves. A dir whose
// shutdown met such an error gets no clean-shutdown marker (its logs are recovered at start-up).
//
// What start-up reads from a dir before opening its logs (meta.properties, the marker, the
// checkpoints, the partition dirs) is in log_dir_startup.ts; the space check in log_dir_space.ts;
// the writes of the checkpoints and the marker in log_dir_checkpoints.ts; the rename and removal
// of deleted logs in async_delete.ts; new logs' files created ahead (prepareNewLogs) in
// prepared_logs.ts.
//
// Invariants: one Log per topic-partition; a new partition goes to the online dir holding the
// fewest; checkpoint files are replaced atomically, never edited in place; a partition whose log
// is in an offline dir is never created again elsewhere (its data would come back twice).

import type { FileSystemSpace, Platform, Timer } from "../platform/mod.ts";
import {
  logCreationsInFlightMax,
  logDirLoadAttemptsMax,
  logDirLoadRetryMs,
  logDirSpaceCheckMs,
  schedulerIntervalMsMax,
  storageErrorLogIntervalMs,
  TimeSlice,
  uuidToString,
} from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";
import { CleanShutdownFile, LogStartOffsetCheckpointFile, RecoveryPointCheckpointFile, ReplicationOffsetCheckpointFile } from "./checkpoint.ts";
import { AsyncDelete, logDeleteDirName } from "./async_delete.ts";
import { type CleanerConfig, LogCleaner } from "./cleaner.ts";
import { Log } from "./log.ts";
import type { LogConfig } from "./log_config.ts";
import type { LogLoadState } from "./log_loader.ts";
import { isIoError, isTransientIoError, KafkaStorageError, LogDirsFailedError, storageErrorKind } from "./log_dir_failure.ts";
import { LogDirCheckpoints } from "./log_dir_checkpoints.ts";
import { LogDirSpace, type LogDirSpaceState } from "./log_dir_space.ts";
import { checkMetaProperties, loadStateOf, partitionDirs, readDirState } from "./log_dir_startup.ts";
import { PreparedLogs } from "./prepared_logs.ts";

export type { LogDirSpaceState } from "./log_dir_space.ts";
export { parseTopicPartitionDir } from "./log_dir_startup.ts";
export { logDeleteDirName } from "./async_delete.ts";

/** A partition whose log LogManager.prepareNewLogs may create ahead of getOrCreateLog. */
export interface NewLogSpec {
  topic: string;
  partition: number;
  /** getOrCreateLog's isNew: the controller created the partition just now. */
  isNew: boolean;
  /** The epoch this broker will lead the new log in from offset 0, or null (not its leader). */
  leaderEpoch: number | null;
}

/** The broker-wide settings of the LogManager's tasks (Kafka's keys named beside each). */
export interface LogManagerConfig {
  /** num.recovery.threads.per.data.dir: logs of one dir loaded (recovered) at a time. */
  numRecoveryThreadsPerDataDir: number;
  /** log.retention.check.interval.ms */
  retentionCheckMs: number;
  /** log.flush.scheduler.interval.ms: how often logs are checked against their flush.ms. */
  flushCheckMs: number;
  /** log.flush.offset.checkpoint.interval.ms: recovery-point-offset-checkpoint. */
  flushRecoveryOffsetCheckpointMs: number;
  /** log.flush.start.offset.checkpoint.interval.ms: log-start-offset-checkpoint. */
  flushStartOffsetCheckpointMs: number;
  /** replica.high.watermark.checkpoint.interval.ms: replication-offset-checkpoint. */
  highWatermarkCheckpointMs: number;
  /** log.cleaner.*: compaction of logs with cleanup.policy=compact (cleaner.ts). */
  cleaner: Partial<CleanerConfig>;
  /** log.dir.min.free.bytes (strand's): appends stop while a dir's volume has less usable; 0: never. */
  minFreeBytes: number;
  /** producer.id.expiration.ms / producer.id.expiration.check.interval.ms (producer_state.ts). */
  producerIdExpirationMs: number;
  producerIdExpirationCheckMs: number;
}

/** Kafka's defaults. */
export const logManagerConfigDefaults: LogManagerConfig = {
  numRecoveryThreadsPerDataDir: 1,
  retentionCheckMs: 300_000,
  flushCheckMs: Number.MAX_SAFE_INTEGER,
  flushRecoveryOffsetCheckpointMs: 60_000,
  flushStartOffsetCheckpointMs: 60_000,
  highWatermarkCheckpointMs: 5_000,
  cleaner: {},
  minFreeBytes: 104_857_600,
  producerIdExpirationMs: 86_400_000,
  producerIdExpirationCheckMs: 600_000,
};

/**
 * Kafka's internal topics: their appends (offset commits, group metadata) are small and keep
 * groups working, so they may use the space log.dir.min.free.bytes holds back.
 */
const reserveExemptTopics = new Set(["__consumer_offsets", "__transaction_state"]);

export function topicPartitionKey(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

/** One log dir as DescribeLogDirs reports it. */
export interface LogDirDescription {
  dir: string;
  /** Why the dir went offline, or null while it is online. */
  offlineReason: string | null;
  /** Its logs (none when offline). */
  logs: Log[];
  /** Its volume's space, or null when unknown (offline, or statfs failed). */
  space: FileSystemSpace | null;
  /** Why appends are refused there now (short of space), or null. */
  appendRefusal: string | null;
}

export class LogManager {
  private logs = new Map<string, Log>();
  private dirOf = new Map<string, string>();
  /** Offline dirs, with the error that took each offline. */
  private offlineDirs = new Map<string, string>();
  /** topic-partition keys whose logs were in a dir that went offline. */
  private offlineLogKeys = new Set<string>();
  /** Told (synchronously) when a dir goes offline, with the partitions whose logs it held. */
  readonly dirFailureListeners: ((dir: string, partitions: { topic: string; partition: number }[]) => void)[] = [];
  private timers: Timer[] = [];
  private readonly config: LogManagerConfig;
  /** Compaction (Kafka's LogCleaner), started with the other tasks. */
  readonly cleaner: LogCleaner;
  /** Set by shutdown(); a second call must not overwrite the checkpoints with empty ones. */
  private shutDown = false;
  /** New logs whose files prepareNewLogs created off the event loop: getOrCreateLog builds them without I/O. */
  private readonly prepared: PreparedLogs;
  /** Logs not opened because of a transient error, by key: opened again by getOrCreateLog. */
  private unloadedLogs = new Map<string, { dir: string; state: LogLoadState; reason: string }>();
  /** Per online dir, its space (checkSpace); appends are refused in a dir short of it. */
  private readonly space: LogDirSpace;
  /** Transient errors met so far, by `<dir>\t<errno>` (for /metrics). */
  readonly transientErrorCounts = new Map<string, number>();
  /** Rate limit of the warn lines for transient errors, by `<dir>\t<kind>`. */
  private transientLogs = new Map<string, { lastMs: number; suppressed: number }>();
  /** Dirs whose shutdown met a transient error: no clean-shutdown marker for them. */
  private uncleanAtShutdown = new Set<string>();
  /** Set by shutdownGradually before it waits for the background writes: no retry starts. */
  private stopping = false;
  /** The renames and removals of deleted logs' dirs (deleteLog). */
  private readonly deletion: AsyncDelete;
  /** The dirs' checkpoint files and clean-shutdown markers. */
  private readonly checkpoints: LogDirCheckpoints;

  constructor(
    private readonly platform: Platform,
    readonly logDirs: string[],
    private readonly defaultConfig: LogConfig,
    private readonly logger: Logger,
    config: Partial<LogManagerConfig> = {},
  ) {
    this.config = { ...logManagerConfigDefaults, ...config };
    this.space = new LogDirSpace(platform.fs, this.config.minFreeBytes, logger);
    this.cleaner = new LogCleaner(platform, logDirs, () => this.logs.values(), this.config.cleaner, logger, (dir, e) => this.markDirOffline(dir, e));
    this.prepared = new PreparedLogs(platform.fs);
    this.deletion = new AsyncDelete(platform, logger, (dir, e) => this.markDirOffline(dir, e), () => this.shutDown || this.stopping);
    this.checkpoints = new LogDirCheckpoints(platform, (dir) => this.logsIn(dir), (dir, e) => this.markDirOffline(dir, e));
  }

  /**
   * Creates the dirs, writes meta.properties, removes leftovers of deletes, loads (recovering
   * where needed) every log, then schedules the background tasks. Resolves once every log is
   * loaded; the broker binds its listeners only then, as Kafka does.
   */
  async startup(brokerId: number, clusterId: string): Promise<void> {
    const started = this.platform.clock.monotonicMs();
    await Promise.all(this.logDirs.map((dir) => this.loadDirRetrying(dir, brokerId, clusterId)));
    if (this.onlineDirs.length === 0) {
      // Kafka's words: it stops when none of the dirs can be created or validated.
      throw new LogDirsFailedError(
        `none of the log dirs ${this.logDirs.join(",")} can be created or loaded: ` +
          [...this.offlineDirs].map(([d, why]) => `${d}: ${why}`).join("; "),
      );
    }
    this.logger.info({ logs: this.logs.size, dirs: this.onlineDirs, offlineDirs: this.offlineLogDirs, ms: Math.round(this.platform.clock.monotonicMs() - started) }, "loaded logs");
    this.schedule(this.config.retentionCheckMs, () => this.cleanupLogs());
    this.schedule(this.config.flushCheckMs, () => this.flushDirtyLogs());
    // Off the event loop: each file's fsync of 10,000 lines held it for 80-120 ms on a busy disk.
    this.schedule(this.config.flushRecoveryOffsetCheckpointMs, () => this.checkpointInBackground(RecoveryPointCheckpointFile));
    this.schedule(this.config.flushStartOffsetCheckpointMs, () => this.checkpointInBackground(LogStartOffsetCheckpointFile));
    this.schedule(this.config.highWatermarkCheckpointMs, () => this.checkpointInBackground(ReplicationOffsetCheckpointFile));
    this.checkSpace();
    this.schedule(logDirSpaceCheckMs, () => this.checkSpace());
    this.schedule(this.config.producerIdExpirationCheckMs, () => {
      const nowMs = this.platform.clock.nowMs();
      for (const log of this.logs.values()) if (!log.isClosed) log.producerState.removeExpiredProducers(nowMs);
    });
    this.cleaner.startup();
  }

  /**
   * Loads a dir; a transient error at the dir's level (EMFILE while reading it) is retried
   * logDirLoadAttemptsMax times, logDirLoadRetryMs apart, before the dir is given up as offline.
   */
  private async loadDirRetrying(dir: string, brokerId: number, clusterId: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.loadDir(dir, brokerId, clusterId);
      } catch (e) {
        if (!isTransientIoError(e) || attempt >= logDirLoadAttemptsMax) return this.onLoadFailure(dir, e);
        this.logger.warn({ dir, attempt, err: e.message }, "cannot load log dir for now; retrying");
        await new Promise<void>((resolve) => this.platform.clock.setTimeout(resolve, logDirLoadRetryMs));
      }
    }
  }

  /** A dir that cannot be loaded for an I/O reason goes offline; any other error stops start-up. */
  private onLoadFailure(dir: string, e: unknown): void {
    if (!isIoError(e) && !(e instanceof KafkaStorageError)) throw e;
    this.takeDirOffline(dir, e);
  }

  private async loadDir(dir: string, brokerId: number, clusterId: string): Promise<void> {
    this.platform.fs.mkdirp(dir);
    checkMetaProperties(this.platform, dir, brokerId, clusterId);
    // One slice for the dir's checkpoints, listing and workers: 10,000 stat calls alone took 20-40 ms.
    const slice = new TimeSlice();
    const state = await readDirState(this.platform, this.logger, dir, slice);
    const pending = await partitionDirs(this.platform, this.logger, dir, slice);
    // A new, empty dir has no marker either: nothing to recover, nothing to warn about.
    if (!state.hadCleanShutdown && pending.length > 0) {
      this.logger.warn({ dir, logs: pending.length }, "log dir was not shut down cleanly; recovering its logs");
    }
    // Kafka's recovery thread pool per dir; here workers taking turns on the one event loop,
    // giving it back between logs once the slice is used up.
    const workers = Math.max(1, Math.min(this.config.numRecoveryThreadsPerDataDir, pending.length));
    await Promise.all(Array.from({ length: workers }, async () => {
      for (let tp = pending.shift(); tp !== undefined; tp = pending.shift()) {
        await slice.yield();
        if (this.offlineDirs.has(dir)) return; // another worker's log failed: the dir is offline
        const key = topicPartitionKey(tp.topic, tp.partition);
        const other = this.dirOf.get(key) ?? this.unloadedLogs.get(key)?.dir;
        if (other === dir) continue; // loaded (or remembered) by an earlier attempt at this dir
        if (other !== undefined) {
          // Kafka's rule: two copies of a partition cannot both be live; an operator chooses.
          throw new Error(
            `duplicate log directories for ${key} are found in both ${other} and ${dir}; ` +
              `delete one of them (the one in the dir that failed most recently)`,
          );
        }
        const loadState = loadStateOf(state, key);
        try {
          this.openLog(dir, tp.topic, tp.partition, this.defaultConfig, loadState);
        } catch (e) {
          if (isTransientIoError(e)) {
            // Out of descriptors, or no room to rebuild an index: the dir is fine; the log is
            // opened when its partition is (getOrCreateLog), with the state read now.
            this.unloadedLogs.set(key, { dir, state: loadState, reason: e.message });
            this.onTransientError(dir, e);
            continue;
          }
          this.onLoadFailure(dir, e);
          return;
        }
      }
    }));
    if (this.offlineDirs.has(dir)) return;
    this.platform.fs.remove(`${dir}/${CleanShutdownFile}`);
  }

  /** Runs task every periodMs; a period at or past the timer limit (Kafka's "never") runs nothing. */
  private schedule(periodMs: number, task: () => unknown): void {
    if (periodMs >= schedulerIntervalMsMax) return;
    const failed = (e: unknown) => this.logger.error({ err: (e as Error).stack }, "log manager task failed");
    this.timers.push(this.platform.clock.setInterval(() => {
      try {
        const done = task();
        if (done instanceof Promise) done.catch(failed);
      } catch (e) {
        failed(e);
      }
    }, Math.max(1, periodMs)));
  }

  private openLog(dir: string, topic: string, partition: number, config = this.defaultConfig, state?: LogLoadState): Log {
    const key = topicPartitionKey(topic, partition);
    // A log created now is new: nothing to recover, no checkpointed offsets.
    const fresh: LogLoadState = { hadCleanShutdown: true, recoveryPoint: 0, logStartOffset: 0, highWatermark: null };
    return this.addLog(dir, key, Log.open(this.platform, `${dir}/${key}`, topic, partition, config, this.logger, state ?? fresh));
  }

  private addLog(dir: string, key: string, log: Log): Log {
    const topic = log.topic;
    log.ioErrorHandler = (_logDir, err) => this.markDirOffline(dir, err);
    const exempt = reserveExemptTopics.has(topic);
    log.appendRefusal = (bytes) => this.space.appendRefusal(dir, exempt, bytes);
    log.truncationHandler = (logEndOffset) => this.onTruncation(log, dir, logEndOffset);
    log.producerState.expirationMs = this.config.producerIdExpirationMs;
    this.logs.set(key, log);
    this.dirOf.set(key, dir);
    return log;
  }

  getLog(topic: string, partition: number): Log | undefined {
    return this.logs.get(topicPartitionKey(topic, partition));
  }

  /**
   * The partition's log with the given config, created in the least loaded online dir if
   * missing. Throws KafkaStorageError instead of creating it when its log was in a dir that went
   * offline, or (Kafka's rule) when it is not new (`isNew` false: the controller created it
   * earlier) while any dir is offline: the missing log may be in that dir, and an empty one made
   * elsewhere would hide it.
   */
  getOrCreateLog(topic: string, partition: number, config: LogConfig, isNew = true): Log {
    const existing = this.getLog(topic, partition);
    if (existing !== undefined) {
      existing.config = config;
      return existing;
    }
    const key = topicPartitionKey(topic, partition);
    if (this.deletion.isRenaming(key)) {
      // Its deleted log's dir still has the name (deleteLog): retried, as a lack of descriptors is.
      throw new KafkaStorageError("", `cannot create a log for ${key} yet: its deleted log is being renamed`, "resource");
    }
    const unloaded = this.unloadedLogs.get(key);
    if (unloaded !== undefined) return this.openUnloadedLog(key, unloaded, topic, partition, config);
    if (this.offlineLogKeys.has(key) || (!isNew && this.offlineDirs.size > 0)) {
      this.prepared.discard(key);
      throw new KafkaStorageError(
        "",
        `cannot create a log for ${key}: log dirs ${this.offlineLogDirs.join(",")} are offline and may hold it`,
      );
    }
    const prepared = this.prepared.take(key);
    if (prepared !== undefined) {
      if (this.isLogDirOnline(prepared.dir)) {
        const dirPath = `${prepared.dir}/${key}`;
        return this.addLog(prepared.dir, key, Log.created(this.platform, dirPath, topic, partition, config, this.logger, prepared.segmentLog, prepared.writtenEpoch));
      }
      prepared.segmentLog.close(); // its dir went offline since: the path below says so
    }
    const dir = this.leastLoadedDir();
    try {
      return this.openLog(dir, topic, partition, config);
    } catch (e) {
      if (!isIoError(e)) throw e;
      this.markDirOffline(dir, e);
      if (isTransientIoError(e)) {
        // Its directory may exist now: the next try must use the same dir, or a restart would
        // find the partition in two dirs.
        const fresh: LogLoadState = { hadCleanShutdown: true, recoveryPoint: 0, logStartOffset: 0, highWatermark: null };
        this.unloadedLogs.set(key, { dir, state: fresh, reason: e.message });
        throw new KafkaStorageError(dir, `cannot create a log for ${key} in ${dir} for now: ${e.message}`, storageErrorKind(e));
      }
      throw new KafkaStorageError(dir, `cannot create a log for ${key} in ${dir}: ${(e as Error).message}`);
    }
  }

  /**
   * Creates, off the event loop (the platform's async creation calls, on the runtime's I/O
   * pool), the directory and first segment files (`.log`, `.index`, `.timeindex`, all empty) of
   * each partition getOrCreateLog would create new, so that getOrCreateLog then builds those
   * logs without I/O. Creating a directory or a file waits on the filesystem's journal (several
   * ms per call on a busy disk): done synchronously for a topic of 10,000 partitions, it held the
   * event loop for 70-300 ms at a time. Never throws: a partition whose preparation fails (a
   * leftover file, no descriptor, a failing disk) is left to getOrCreateLog's synchronous path,
   * which loads what is there or reports the error as it always has. Callers call getOrCreateLog
   * for these partitions after it resolves, with no other creation of theirs in between.
   */
  async prepareNewLogs(partitions: readonly NewLogSpec[]): Promise<void> {
    await Promise.all(partitions.map((p) => this.prepareNewLog(p)));
  }

  private async prepareNewLog({ topic, partition, isNew, leaderEpoch }: NewLogSpec): Promise<void> {
    const key = topicPartitionKey(topic, partition);
    if (this.shutDown || this.logs.has(key) || this.prepared.has(key) || this.unloadedLogs.has(key)) return;
    if (this.deletion.isRenaming(key)) return;
    if (this.offlineLogKeys.has(key) || (!isNew && this.offlineDirs.size > 0) || this.onlineDirs.length === 0) return;
    const dir = this.leastLoadedDir();
    await this.prepared.prepare(key, dir, leaderEpoch, () => !(this.shutDown || this.logs.has(key) || !this.isLogDirOnline(dir)));
  }

  /** Opens a log a transient error kept closed, in its own dir, with the state read at start-up. */
  private openUnloadedLog(key: string, u: { dir: string; state: LogLoadState }, topic: string, partition: number, config: LogConfig): Log {
    if (!this.isLogDirOnline(u.dir)) {
      this.unloadedLogs.delete(key);
      this.offlineLogKeys.add(key);
      throw new KafkaStorageError(u.dir, `cannot open the log of ${key}: log dir ${u.dir} is offline`);
    }
    try {
      const log = this.openLog(u.dir, topic, partition, config, u.state);
      this.unloadedLogs.delete(key);
      this.logger.info({ topic, partition, dir: u.dir }, "opened log that a transient error had kept closed");
      return log;
    } catch (e) {
      if (!isIoError(e)) throw e;
      this.markDirOffline(u.dir, e);
      if (!isTransientIoError(e)) {
        this.unloadedLogs.delete(key);
        throw new KafkaStorageError(u.dir, `cannot open the log of ${key} in ${u.dir}: ${(e as Error).message}`);
      }
      throw new KafkaStorageError(u.dir, `cannot open the log of ${key} in ${u.dir} for now: ${e.message}`, storageErrorKind(e));
    }
  }

  /** Logs a transient error kept closed (their partitions cannot be served until opened). */
  get unloadedLogKeys(): string[] {
    return [...this.unloadedLogs.keys()];
  }

  private leastLoadedDir(): string {
    const online = this.onlineDirs;
    if (online.length === 0) throw new KafkaStorageError("", "every log dir is offline");
    // One dir is the common case: no count over every log (which made creating N partitions O(N²)).
    if (online.length === 1) return online[0];
    const counts = new Map(online.map((d) => [d, 0]));
    for (const dir of this.dirOf.values()) counts.set(dir, (counts.get(dir) ?? 0) + 1);
    for (const dir of this.prepared.dirs()) counts.set(dir, (counts.get(dir) ?? 0) + 1);
    let best = online[0];
    for (const d of online) if ((counts.get(d) ?? 0) < (counts.get(best) ?? 0)) best = d;
    return best;
  }

  /** The configured dirs that are online, in configuration order. */
  get onlineDirs(): string[] {
    return this.logDirs.filter((d) => !this.offlineDirs.has(d));
  }

  get offlineLogDirs(): string[] {
    return this.logDirs.filter((d) => this.offlineDirs.has(d));
  }

  isLogDirOnline(dir: string): boolean {
    return this.logDirs.includes(dir) && !this.offlineDirs.has(dir);
  }

  /** The dir holding the partition's log, or undefined when this broker has no online log for it. */
  logDirFor(topic: string, partition: number): string | undefined {
    return this.dirOf.get(topicPartitionKey(topic, partition));
  }

  /**
   * Takes a dir offline after an I/O error under it (Kafka's LogDirFailureChannel plus
   * ReplicaManager.handleLogDirFailure's log side): logged once, its logs closed without writing
   * and forgotten, the listeners told. Idempotent; a later error in the same dir is not logged.
   * The log cleaner and anything else running file operations on logs reports its I/O errors here.
   */
  markDirOffline(dir: string, err: unknown): void {
    if (isTransientIoError(err)) return this.onTransientError(dir, err);
    this.takeDirOffline(dir, err);
  }

  private takeDirOffline(dir: string, err: unknown): void {
    if (this.offlineDirs.has(dir) || !this.logDirs.includes(dir)) return;
    const reason = err instanceof Error ? err.message : String(err);
    this.offlineDirs.set(dir, reason);
    const partitions: { topic: string; partition: number }[] = [];
    for (const [key, log] of this.logs) {
      if (this.dirOf.get(key) !== dir) continue;
      log.closeForFailure();
      this.logs.delete(key);
      this.dirOf.delete(key);
      this.offlineLogKeys.add(key);
      partitions.push({ topic: log.topic, partition: log.partition });
    }
    this.logger.error(
      { dir, err: reason, partitions: partitions.length, onlineDirs: this.onlineDirs },
      "log dir failed; its partitions are offline",
    );
    for (const listener of this.dirFailureListeners) listener(dir, partitions);
  }

  /**
   * A transient error in dir (see the header): counted, logged at warn at most once per dir and
   * kind every storageErrorLogIntervalMs; an ENOSPC refuses every append in the dir until
   * checkSpace finds room. The dir stays online.
   */
  private onTransientError(dir: string, err: Error & { code: string }): void {
    const countKey = `${dir}\t${err.code}`;
    this.transientErrorCounts.set(countKey, (this.transientErrorCounts.get(countKey) ?? 0) + 1);
    if (this.shutDown) this.uncleanAtShutdown.add(dir);
    const kind = storageErrorKind(err);
    if (kind === "no-space") this.onNoSpace(dir, err.code);
    const logKey = `${dir}\t${kind}`;
    const now = this.platform.clock.monotonicMs();
    const last = this.transientLogs.get(logKey);
    if (last !== undefined && now - last.lastMs < storageErrorLogIntervalMs) {
      last.suppressed++;
      return;
    }
    this.transientLogs.set(logKey, { lastMs: now, suppressed: 0 });
    const what = kind === "resource"
      ? "out of file descriptors or memory; the operation was refused, the dir stays online (raise LimitNOFILE?)"
      : "log dir is full; the operation was refused, the dir stays online";
    this.logger.warn({ dir, code: err.code, err: err.message, suppressedSinceLast: last?.suppressed ?? 0 }, what);
  }

  private onNoSpace(dir: string, code: string): void {
    if (!this.isLogDirOnline(dir)) return;
    this.space.noSpace(dir, code);
  }

  /**
   * The free-space check (every logDirSpaceCheckMs): statfs of each online dir, which sets or
   * clears its refusal of appends (LogDirSpace).
   */
  checkSpace(): void {
    this.space.check(this.onlineDirs, (dir) => this.isLogDirOnline(dir));
  }

  /** Each online dir's space as the last check left it (dashboard, /metrics). */
  spaceStates(): { dir: string; state: LogDirSpaceState }[] {
    return this.space.states();
  }

  /** Every configured dir with its state, logs and volume space (DescribeLogDirs). */
  describeDirs(): LogDirDescription[] {
    return this.logDirs.map((dir) => {
      const offlineReason = this.offlineDirs.get(dir) ?? null;
      if (offlineReason !== null) return { dir, offlineReason, logs: [], space: null, appendRefusal: null };
      const logs = [...this.logs].filter(([key]) => this.dirOf.get(key) === dir).map(([, log]) => log);
      let space: FileSystemSpace | null = null;
      try {
        space = this.platform.fs.statfs(dir);
      } catch {
        // Unknown space is reported as -1, as Kafka does; the dir's own failures show elsewhere.
      }
      return { dir, offlineReason, logs, space, appendRefusal: this.space.refusalOf(dir) };
    });
  }

  allLogs(): Log[] {
    return [...this.logs.values()];
  }

  /**
   * Deletes a partition's log: it stops being served at once (out of the maps, closed without
   * writing), then, off the event loop, its dir is renamed to `.<uuid>-delete` (atomic: the
   * delete is durable from there, start-up removes the rest) and removed. Both wait on the
   * filesystem's journal: one rename took 230 ms on a busy disk, and a topic of 10,000 partitions
   * held the loop for a third of a second unlinking files. Until the rename is done the path is
   * not free: renamesSettled() tells when it is (a StopReplica awaits it before the next
   * controller request), and getOrCreateLog refuses the partition meanwhile, as retriable. A
   * transient failure of the rename is tried again every logDirLoadRetryMs (until shutdown); any
   * other takes the dir offline.
   */
  deleteLog(topic: string, partition: number): void {
    const key = topicPartitionKey(topic, partition);
    const log = this.logs.get(key);
    if (log === undefined) {
      this.prepared.discard(key);
      return;
    }
    const dir = this.dirOf.get(key) as string;
    const id = new Uint8Array(16);
    this.platform.randomBytes(id);
    const doomed = `${dir}/${logDeleteDirName(topic, partition, uuidToString(id).replaceAll("-", ""))}`;
    this.logs.delete(key);
    this.dirOf.delete(key);
    this.cleaner.forget(topic, partition);
    // Its files go next, so nothing buffered needs writing (and the index files' paths are about
    // to change: index files are opened by path for each write). Closed without writing.
    log.closeForFailure();
    this.deletion.start(key, dir, log.dir, doomed);
    this.logger.info({ topic, partition }, "deleted log");
  }

  /** Resolves once every deleted log's dir has its `-delete` name (or its rename was given up). */
  renamesSettled(): Promise<void> {
    return this.deletion.renamesSettled();
  }

  /** Resolves once the deleted logs' files (deleteLog) are renamed and removed. */
  removalsSettled(): Promise<void> {
    return this.deletion.removalsSettled();
  }

  flushAll(): void {
    for (const log of this.logs.values()) skipFailedDir(() => log.flush());
  }

  /** The retention task (Kafka's cleanupLogs): each log deletes its expired segments. */
  cleanupLogs(nowMs = this.platform.clock.nowMs()): number {
    let deleted = 0;
    for (const log of this.logs.values()) deleted += skipFailedDir(() => log.deleteOldSegments(nowMs)) ?? 0;
    return deleted;
  }

  /** The flush task (Kafka's flushDirtyLogs): fsyncs each log not flushed within its flush.ms. */
  flushDirtyLogs(nowMs = this.platform.clock.nowMs()): void {
    for (const log of this.logs.values()) {
      if (nowMs - log.lastFlushTimeMs >= log.config.flushMs) skipFailedDir(() => log.flush());
    }
  }

  checkpointRecoveryOffsets(dirs = this.onlineDirs): void {
    this.checkpoints.write(RecoveryPointCheckpointFile, dirs);
  }

  /** Kafka writes only logs whose start offset is past their first segment's base. */
  checkpointLogStartOffsets(dirs = this.onlineDirs): void {
    this.checkpoints.write(LogStartOffsetCheckpointFile, dirs);
  }

  checkpointHighWatermarks(): void {
    this.checkpoints.write(ReplicationOffsetCheckpointFile, this.onlineDirs);
  }

  /**
   * A scheduled write of one of the three checkpoints in every online dir, off the event loop (the
   * fsync of a file of 10,000 lines held it for 80-120 ms on a busy disk). Resolves once written;
   * an I/O error takes the dir offline, as a write at once does.
   */
  checkpointInBackground(file: string): Promise<void> {
    return this.checkpoints.writeInBackground(file, this.onlineDirs);
  }

  /** The logs in dir, in the order of the map. */
  private *logsIn(dir: string): Generator<Log> {
    for (const [key, log] of this.logs) if (this.dirOf.get(key) === dir) yield log;
  }

  /**
   * A log was truncated (Kafka's LogManager.truncateTo): the cleaner's checkpoint may not stay past
   * its end, and the dir's recovery points and log start offsets are written at once: a crash
   * before the next scheduled write must not trust a recovery point above what is on disk now
   * (the appends after the truncation would not be recovered), nor bring back an older start.
   */
  private onTruncation(log: Log, dir: string, logEndOffset: number): void {
    this.cleaner.maybeTruncateCheckpoint(log, logEndOffset);
    if (!this.isLogDirOnline(dir)) return;
    this.checkpointRecoveryOffsets([dir]);
    this.checkpointLogStartOffsets([dir]);
  }

  /** Runs a file operation of the LogManager's own in dir; an I/O error takes the dir offline. */
  private offlineOnIoError(dir: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      if (!isIoError(e)) throw e;
      this.markDirOffline(dir, e);
    }
  }

  /**
   * Clean shutdown (Kafka's order): stop the tasks, flush and close every log, write the
   * checkpoints, then the clean-shutdown marker, whose presence at the next start-up says no
   * recovery is needed.
   */
  shutdown(): void {
    for (const step of this.shutdownSteps()) {
      // All at once: tests, and a start-up that failed half way.
      if (step === undefined) continue;
      if ("checkpoint" in step) this.checkpoints.write(step.checkpoint, this.onlineDirs);
      else this.checkpoints.writeCleanShutdownMarker(step.dir);
    }
  }

  /**
   * shutdown() giving the event loop back between logs (TimeSlice), as the broker's stop runs
   * it: flushing and closing 10,000 logs held the loop for about half a second, while the
   * registry session and the admin endpoint are served by the same loop. The broker's server and
   * fetchers have stopped by then: nothing appends, so the files written here in the background
   * (new leaders' epoch checkpoints, the three checkpoints, the marker) have no other writer.
   */
  async shutdownGradually(): Promise<void> {
    // The scheduled checkpoint writes stop, and those under way end, before the final ones: an
    // instance started next in this process must find no write of this one still running.
    this.stopping = true;
    for (const t of this.timers.splice(0)) t.cancel();
    await this.checkpoints.settled();
    await this.removalsSettled();
    // New leaders' epoch entries (assignDeferred) written off the loop, a group at a time; the
    // flush below writes at once whatever is still stale (and reports its error).
    const logs = [...this.logs.values()];
    for (let i = 0; i < logs.length; i += logCreationsInFlightMax) {
      await Promise.all(logs.slice(i, i + logCreationsInFlightMax).map((log) => log.writeLeaderEpochsInBackground()));
    }
    const slice = new TimeSlice();
    for (const step of this.shutdownSteps()) {
      if (step === undefined) {
        await slice.yield();
      } else if ("checkpoint" in step) {
        await this.checkpointInBackground(step.checkpoint);
      } else {
        await this.checkpoints.writeCleanShutdownMarkerInBackground(step.dir);
      }
    }
  }

  /**
   * The steps of shutdown(); each `yield` is a point where the event loop may run others, and a
   * step it yields (a checkpoint file for every online dir, the marker of a dir) is written by
   * the caller, at once or in the background, before the next.
   */
  private *shutdownSteps(): Generator<undefined | { checkpoint: string } | { dir: string }> {
    if (this.shutDown) return;
    this.shutDown = true;
    for (const t of this.timers.splice(0)) t.cancel();
    this.prepared.discardAll();
    void this.cleaner.shutdown(); // a pass under way stops at its next yield
    for (const log of this.logs.values()) {
      skipFailedDir(() => log.flush());
      yield;
    }
    yield { checkpoint: RecoveryPointCheckpointFile };
    yield { checkpoint: LogStartOffsetCheckpointFile };
    yield { checkpoint: ReplicationOffsetCheckpointFile };
    // Each log leaves the map as it is closed: whatever runs at a yield sees it open or gone.
    for (const [key, log] of [...this.logs]) {
      if (this.logs.get(key) !== log) continue; // its dir went offline meanwhile: closed with it
      this.offlineOnIoError(this.dirOf.get(key) as string, () => log.close());
      this.logs.delete(key);
      this.dirOf.delete(key);
      yield;
    }
    this.logs.clear();
    this.dirOf.clear();
    // No marker in an offline dir: its logs were not closed cleanly and must be recovered. Nor
    // where a flush, checkpoint or close failed just now (a full disk): what is on disk is not
    // known to be whole.
    for (const dir of this.onlineDirs) {
      if (this.uncleanAtShutdown.has(dir)) {
        this.logger.warn({ dir }, "log dir not shut down cleanly (a write failed); its logs will be recovered at start-up");
        continue;
      }
      yield { dir };
    }
    this.logger.info({}, "log manager shut down");
  }
}

/**
 * Runs one log's operation for a LogManager task; a KafkaStorageError means its dir failed (the
 * log reported it, and the dir is now offline), so the task goes on with the other logs.
 */
function skipFailedDir<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch (e) {
    if (e instanceof KafkaStorageError) return undefined;
    throw e;
  }
}
