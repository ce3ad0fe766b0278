// LeaderEpochFileCache: which leader epoch wrote which offsets of one partition's log (KIP-101,
// KIP-279; Kafka's LeaderEpochFileCache), kept in `<log.dir>/<topic>-<partition>/leader-epoch-checkpoint`
// in Kafka's text format (LeaderEpochCheckpointFile), byte for byte:
//
//   0            version (always 0)
//   2            number of entries that follow
//   0 0          epoch, then the offset of its first batch: epoch 0 wrote [0, 120)
//   3 120        epoch 3 wrote [120, log end offset)
//
// Followers use it to find where their log diverges from the leader's (OffsetForLeaderEpoch):
// endOffsetFor answers, for an epoch, where the next higher epoch starts.
//
// Invariants:
// - Epochs and start offsets both strictly increase down the list; the epoch of an entry wrote the
//   offsets from its start offset to the next entry's (the last entry: to the log end offset).
// - assign() keeps that order the way Kafka 3.x does: an entry that would break it (a lower epoch,
//   or a start offset below the latest entry's) first removes the entries it conflicts with, from
//   the end, with a warning when that drops more than a just-assigned, still empty epoch.
// - Every change is written at once, whole (temp file, rename), so the file is always the list
//   after some completed change (except a new leader's entry, written at the next flush or
//   close: see assignDeferred); but not fsynced then (as Kafka does since 3.7, KAFKA-15046): a
//   new partition's first epoch took two fsyncs on the request path, which made creating 10,000
//   partitions take minutes and stall the event loop on a busy disk. flush() makes it durable,
//   and the Log calls it before its recovery point moves past offsets written since. What a
//   power loss can cost is safe to lose: an entry whose batches were never flushed is re-added
//   by recovery from the batch headers; an epoch with no batches is not needed to find where
//   logs diverge; a truncation not on disk is redone at load (truncateFromEnd/FromStart); a
//   torn or empty file does not parse and is rebuilt from the batch headers.
// - The Log keeps it consistent with its batches (log_loader.ts, log.ts): no entry starts past
//   the log end offset (one may start at it: a new leader's epoch before its first append), and
//   once the log start offset moves the first entry starts at or after it.
// - A file that does not parse is an error for the caller: the Log rebuilds the list from its
//   batch headers (each batch carries its partitionLeaderEpoch).

import type { Platform } from "../platform/mod.ts";
import { assert } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";
import { CheckpointFormatError, formatCheckpointLines, parseCheckpointLines } from "./checkpoint.ts";

export const LeaderEpochCheckpointFileName = "leader-epoch-checkpoint";

/** Kafka's OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH: no epoch known. */
export const UNDEFINED_EPOCH = -1;
/** Kafka's OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH_OFFSET: no end offset known. */
export const UNDEFINED_EPOCH_OFFSET = -1;

/** One epoch and the offset of its first batch. */
export interface EpochEntry {
  readonly epoch: number;
  readonly startOffset: number;
}

const EPOCH_MAX = 0x7fffffff; // epochs are int32 on the wire and in batch headers

/** The file's text for these entries, in Kafka's format. */
export function formatLeaderEpochCheckpoint(entries: readonly EpochEntry[]): string {
  return formatCheckpointLines(entries.map((e) => `${e.epoch} ${e.startOffset}`));
}

/**
 * Parses a leader-epoch-checkpoint's text: whole entries, each a non-negative int32 epoch and a
 * non-negative offset. Throws CheckpointFormatError naming what is wrong. Order is not checked
 * here: the cache orders entries as it loads them (see LeaderEpochFileCache's constructor).
 */
export function parseLeaderEpochCheckpoint(text: string): EpochEntry[] {
  return parseCheckpointLines(text).map((line) => {
    const parts = line.trim().split(/\s+/);
    const epoch = Number(parts[0]);
    const startOffset = Number(parts[1]);
    const numeric = parts.length === 2 && /^\d+$/.test(parts[0]) && /^\d+$/.test(parts[1]);
    if (!numeric || epoch > EPOCH_MAX || !Number.isSafeInteger(startOffset)) {
      throw new CheckpointFormatError(`malformed leader epoch line "${line}"`);
    }
    return { epoch, startOffset };
  });
}

/** The `leader-epoch-checkpoint` file of one partition dir. */
export class LeaderEpochCheckpointFile {
  constructor(private readonly platform: Platform, readonly path: string) {}

  /** Replaces the file atomically; durably (fsync of file and dir) only when `sync`. */
  write(entries: readonly EpochEntry[], sync = true): void {
    const data = new TextEncoder().encode(formatLeaderEpochCheckpoint(entries));
    if (sync) {
      this.platform.fs.writeFileAtomic(this.path, data);
      return;
    }
    const tmp = `${this.path}.tmp`; // Kafka's name for it, as writeFileAtomic uses
    const file = this.platform.fs.open(tmp, "readwrite");
    try {
      file.truncate(0);
      file.writeAt(data, 0);
    } finally {
      file.close();
    }
    this.platform.fs.rename(tmp, this.path);
  }

  /** write(entries, false) with each file operation on the I/O pool (see the cache's writeInBackground). */
  async writeInBackground(entries: readonly EpochEntry[]): Promise<void> {
    const data = new TextEncoder().encode(formatLeaderEpochCheckpoint(entries));
    const tmp = `${this.path}.tmp`;
    const file = await this.platform.fs.openAsync(tmp, "readwrite");
    try {
      file.truncate(0);
      file.writeAt(data, 0);
    } finally {
      file.close();
    }
    await this.platform.fs.renameAsync(tmp, this.path);
  }

  /** The entries; null when the file does not exist; throws CheckpointFormatError when damaged. */
  read(): EpochEntry[] | null {
    const bytes = this.platform.fs.readFile(this.path);
    if (bytes === null) return null;
    return parseLeaderEpochCheckpoint(new TextDecoder().decode(bytes));
  }
}

export class LeaderEpochFileCache {
  private epochs: EpochEntry[] = [];
  /** The file was written since its last fsync. */
  private unsynced = false;

  /**
   * A cache over `file` holding `entries` (as read from it, or rebuilt), put in order the way
   * assign() does. Nothing is written until the first change.
   */
  constructor(private readonly file: LeaderEpochCheckpointFile, private readonly logger: Logger, entries: Iterable<EpochEntry> = []) {
    for (const e of entries) this.put(e);
  }

  /** The entries, oldest epoch first (a copy). */
  get entries(): EpochEntry[] {
    return this.epochs.slice();
  }
  get isEmpty(): boolean {
    return this.epochs.length === 0;
  }
  get latestEntry(): EpochEntry | null {
    return this.epochs[this.epochs.length - 1] ?? null;
  }
  get earliestEntry(): EpochEntry | null {
    return this.epochs[0] ?? null;
  }
  /** The latest epoch that has an entry (the one being written to), or null when there is none. */
  get latestEpoch(): number | null {
    return this.latestEntry?.epoch ?? null;
  }

  /**
   * Records that `epoch` starts at `startOffset` (Kafka's assign), and writes the file when that
   * changed anything. The latest epoch again at the same or a later offset changes nothing; a
   * newer epoch at or after the latest entry's start is appended; anything else first removes the
   * entries it conflicts with (see the file comment). Returns whether the list changed.
   */
  assign(epoch: number, startOffset: number): boolean {
    if (!this.put({ epoch, startOffset })) return false;
    this.write();
    return true;
  }

  /**
   * assign(), leaving the file to the next flush or close (writeIfStale): what a new leader
   * records at its log end offset before its first append. Such an entry is safe to lose until
   * then (an epoch with no batches is not needed to find where logs diverge, and the batches it
   * writes carry it, for recovery above the recovery point to add it back), and a broker
   * becoming leader of 10,000 partitions at once wrote 10,000 files on the event loop, some
   * renames taking 100-200 ms on a busy disk. Returns whether the list changed.
   */
  assignDeferred(epoch: number, startOffset: number): boolean {
    if (!this.put({ epoch, startOffset })) return false;
    this.stale = true;
    return true;
  }

  /** Assigns each entry in turn (Kafka's assign(List)), writing the file once. */
  assignAll(entries: readonly EpochEntry[]): boolean {
    let changed = false;
    for (const e of entries) changed = this.put(e) || changed;
    if (changed) this.write();
    return changed;
  }

  private put(entry: EpochEntry): boolean {
    assert(Number.isInteger(entry.epoch) && entry.epoch >= 0 && entry.epoch <= EPOCH_MAX, "a leader epoch is a non-negative int32");
    assert(Number.isSafeInteger(entry.startOffset) && entry.startOffset >= 0, "an epoch starts at a non-negative offset");
    const latest = this.latestEntry;
    if (latest !== null && entry.epoch === latest.epoch && entry.startOffset >= latest.startOffset) return false;
    const removed: EpochEntry[] = [];
    while (this.epochs.length > 0) {
      const last = this.epochs[this.epochs.length - 1];
      if (last.epoch < entry.epoch && last.startOffset < entry.startOffset) break;
      removed.unshift(this.epochs.pop()!);
    }
    this.epochs.push({ epoch: entry.epoch, startOffset: entry.startOffset });
    // One removed entry starting at the same offset is an epoch that never got a batch: expected.
    if (removed.length > 1 || (removed.length === 1 && removed[0].startOffset !== entry.startOffset)) {
      this.logger.warn({ epoch: entry.epoch, startOffset: entry.startOffset, removed }, "new leader epoch entry truncated conflicting entries");
    }
    return true;
  }

  /**
   * Kafka's endOffsetFor: the largest epoch <= requestedEpoch and where it ends, which is the start
   * offset of the next higher epoch, or logEndOffset when requestedEpoch is the latest epoch.
   *   requestedEpoch -1, or above the latest, or no entries  → (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
   *   requestedEpoch = latest epoch                          → (latest, logEndOffset)
   *   requestedEpoch below the first epoch                   → (requestedEpoch, first entry's start):
   *     the data before it is gone, and the follower can go on from the leader's earliest epoch
   *   otherwise                                             → (floor epoch, next higher epoch's start)
   */
  endOffsetFor(requestedEpoch: number, logEndOffset: number): { epoch: number; endOffset: number } {
    const undefinedAnswer = { epoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };
    if (requestedEpoch === UNDEFINED_EPOCH) return undefinedAnswer;
    const latest = this.latestEpoch;
    if (latest !== null && requestedEpoch === latest) return { epoch: requestedEpoch, endOffset: logEndOffset };
    const higher = this.epochs.findIndex((e) => e.epoch > requestedEpoch);
    if (higher < 0) return undefinedAnswer;
    if (higher === 0) return { epoch: requestedEpoch, endOffset: this.epochs[0].startOffset };
    return { epoch: this.epochs[higher - 1].epoch, endOffset: this.epochs[higher].startOffset };
  }

  /** The epoch that wrote `offset` (the last entry starting at or before it), or null. */
  epochForOffset(offset: number): number | null {
    let found: number | null = null;
    for (const e of this.epochs) {
      if (e.startOffset > offset) break;
      found = e.epoch;
    }
    return found;
  }

  /** The largest epoch with an entry below `epoch`, or null (Kafka's previousEpoch(epoch)). */
  previousEpoch(epoch: number): number | null {
    let found: number | null = null;
    for (const e of this.epochs) {
      if (e.epoch >= epoch) break;
      found = e.epoch;
    }
    return found;
  }

  /**
   * Removes the entries starting at or after endOffset (the log was truncated to end there), and
   * writes the file if any went. A negative endOffset changes nothing (Kafka's rule).
   */
  truncateFromEnd(endOffset: number): void {
    if (endOffset < 0) return;
    const keep = this.epochs.findIndex((e) => e.startOffset >= endOffset);
    if (keep < 0) return;
    this.epochs.length = keep;
    this.write();
  }

  /**
   * The log start offset moved to startOffset: the entries wholly before it go, and the last one
   * starting at or before it now starts there (Kafka's truncateFromStart; an entry starting at
   * startOffset stays). Writes the file when that changed anything.
   */
  truncateFromStart(startOffset: number): void {
    let last = -1;
    while (last + 1 < this.epochs.length && this.epochs[last + 1].startOffset <= startOffset) last++;
    if (last < 0 || (last === 0 && this.epochs[0].startOffset === startOffset)) return;
    const first = { epoch: this.epochs[last].epoch, startOffset };
    this.epochs.splice(0, last + 1, first);
    this.write();
  }

  /** Removes every entry and writes the (empty) file (Kafka's clearAndFlush). */
  clear(): void {
    this.epochs = [];
    this.write();
  }

  /**
   * While set, a change leaves the file to the next flush or close (stale), as assignDeferred
   * does: the loader sets it for what it changes while opening a log (truncations to the log's
   * ends, epochs found by recovery), all redone by the next load if the process dies first (the
   * recovery point does not move past recovered batches until a flush has written the file).
   * Opening 10,000 empty logs otherwise rewrote 10,000 files on the event loop at start-up.
   */
  deferWrites = false;

  /** Writes the entries as they are (after a load that changed them, or a rebuild); see flush. */
  write(): void {
    this.stale = true;
    if (this.deferWrites) return;
    this.file.write(this.epochs, false);
    this.stale = false;
    this.unsynced = true;
  }

  /**
   * Told that the file already holds these entries, written unsynced by the log's creator
   * (LogManager.prepareNewLogs, off the event loop): the next flush makes it durable, as after
   * write().
   */
  writtenUnsynced(): void {
    this.unsynced = true;
  }

  /**
   * Set while the file lags the list: its last write failed (a full disk, no descriptor), or an
   * entry was assigned deferred.
   */
  private stale = false;

  /**
   * Writes the file when it lags the list, as writeIfStale does, but with every file operation
   * on the I/O pool. Only while nothing else writes the file (LogManager.shutdownGradually, once
   * nothing appends): a write at once meanwhile could be overtaken by this one's rename. Throws
   * the I/O error; the file then stays stale, for writeIfStale.
   */
  async writeInBackground(): Promise<void> {
    if (!this.stale || this.deferWrites) return;
    const entries = this.epochs.slice();
    await this.file.writeInBackground(entries);
    // Unless the list changed meanwhile (then the next writeIfStale writes it).
    if (this.epochs.length === entries.length && this.epochs.every((e, i) => e === entries[i])) {
      this.stale = false;
      this.unsynced = true;
    }
  }

  /** Writes the file when it lags the list (Log.flush and Log.close call it). */
  writeIfStale(): void {
    if (this.stale) this.write();
  }

  /** Makes the file durable if it changed since it last was (the Log's flush calls it). */
  flush(): void {
    if (!this.unsynced && !this.stale) return;
    this.file.write(this.epochs, true);
    this.stale = false;
    this.unsynced = false;
  }
}
