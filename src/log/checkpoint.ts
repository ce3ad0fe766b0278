// OffsetCheckpointFile: Kafka's per-log-dir checkpoint files, byte for byte as Kafka writes them,
// so an operator (or Kafka's own tools) reading `recovery-point-offset-checkpoint`,
// `replication-offset-checkpoint` or `log-start-offset-checkpoint` sees what they expect:
//
//   0                      version (always 0)
//   3                      number of entries that follow
//   orders 0 1234          one line per partition: topic, partition, offset, separated by a space
//   orders 1 987
//   payments-eu 0 42
//
// Invariants: a file is replaced whole (temp file, fsync, rename, fsync of the dir: see
// FileSystem.writeFileAtomic), so a reader sees the old content or the new, never a mix. A file
// that does not parse (wrong version, count not matching the lines, a bad line) is an error the
// caller handles; Kafka's LogManager then falls back to the safe value (recover everything, start
// at the first segment) and so does strand's.

import type { FileSystem, Platform } from "../platform/mod.ts";
import { checkpointEntriesMax, checkpointLinesPerStep, type TimeSlice } from "../util/mod.ts";

export const RecoveryPointCheckpointFile = "recovery-point-offset-checkpoint";
export const ReplicationOffsetCheckpointFile = "replication-offset-checkpoint";
export const LogStartOffsetCheckpointFile = "log-start-offset-checkpoint";
/** Present in a log dir only between a clean shutdown and the next start-up (Kafka's name). */
export const CleanShutdownFile = ".kafka_cleanshutdown";

const CHECKPOINT_VERSION = 0;

export class CheckpointFormatError extends Error {
  override name = "CheckpointFormatError";
}

/** Key `<topic>-<partition>`, as topicPartitionKey builds it, mapped to an offset. */
export type CheckpointEntries = Map<string, { topic: string; partition: number; offset: number }>;

/**
 * Kafka's checkpoint text around entry lines of any kind: the version, the count, then one line
 * per entry, each ending in a newline (leader_epoch_cache.ts writes its `epoch offset` lines so).
 */
export function formatCheckpointLines(lines: readonly string[]): string {
  return `${CHECKPOINT_VERSION}\n${lines.length}\n${lines.map((l) => l + "\n").join("")}`;
}

/**
 * The entry lines of a checkpoint file's text, after checking its version and that the count
 * matches them; throws CheckpointFormatError naming what is wrong.
 */
export function parseCheckpointLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop(); // the final newline
  if (lines[0]?.trim() !== String(CHECKPOINT_VERSION)) {
    throw new CheckpointFormatError(`unrecognized checkpoint version "${lines[0] ?? ""}"`);
  }
  const count = Number(lines[1]?.trim());
  if (!/^\s*\d+\s*$/.test(lines[1] ?? "") || !Number.isSafeInteger(count) || count > checkpointEntriesMax) {
    throw new CheckpointFormatError(`bad entry count "${lines[1] ?? ""}"`);
  }
  if (lines.length - 2 !== count) {
    throw new CheckpointFormatError(`expected ${count} entries, found ${lines.length - 2}`);
  }
  return lines.slice(2);
}

/** The file's text for these entries, in Kafka's format. */
export function formatCheckpoint(entries: Iterable<{ topic: string; partition: number; offset: number }>): string {
  const lines: string[] = [];
  for (const e of entries) lines.push(`${e.topic} ${e.partition} ${e.offset}`);
  return formatCheckpointLines(lines);
}

/** Parses a checkpoint file's text; throws CheckpointFormatError naming what is wrong. */
export function parseCheckpoint(text: string): CheckpointEntries {
  const steps = parseCheckpointSteps(text);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * parseCheckpoint's work with a `yield` every checkpointLinesPerStep lines (start-up parses three
 * files of 10,000 lines, before the parser is warmed up, on the event loop).
 */
function* parseCheckpointSteps(text: string): Generator<void, CheckpointEntries> {
  const out: CheckpointEntries = new Map();
  let n = 0;
  for (const line of parseCheckpointLines(text)) {
    if (++n % checkpointLinesPerStep === 0) yield;
    const parts = line.trim().split(/\s+/);
    const partition = Number(parts[1]);
    const offset = Number(parts[2]);
    if (parts.length !== 3 || !/^\d+$/.test(parts[1]) || !/^-?\d+$/.test(parts[2]) || !Number.isSafeInteger(partition) || !Number.isSafeInteger(offset)) {
      throw new CheckpointFormatError(`malformed line "${line}"`);
    }
    out.set(`${parts[0]}-${partition}`, { topic: parts[0], partition, offset });
  }
  return out;
}

/**
 * One checkpoint file of one log dir, written either at once (write: the truncation path and
 * shutdown, which must not go on until the file is on disk) or off the event loop (writeAsync:
 * the periodic writes, whose fsync of 10,000 lines held the loop for 80-120 ms on a busy disk).
 *
 * writeAsync still replaces the file whole: a temp file (`<name>.async.tmp`, so a write at once,
 * which uses Kafka's `<name>.tmp`, never shares it) is written and fsynced on the I/O pool, then
 * renamed over the file on the event loop (or on the pool: renameOffLoop), then the dir fsynced
 * on the pool. Two writes never
 * interleave: each takes a generation when its content is made, the rename happens on the loop
 * only if no newer content was renamed meanwhile (a write at once in between wins, and the older
 * temp file is left to be overwritten), and async writes run one at a time, a write asked for
 * while one runs replacing any still waiting. The caller awaits settled() before the instance
 * is dropped, so no write of it is left running.
 */
export class OffsetCheckpointFile {
  /** Generation of the last content made (sync or async). */
  private generation = 0;
  /** Generation of the content last renamed over the file. */
  private renamedGeneration = 0;
  private running: Promise<void> | null = null;
  private waiting: { data: Uint8Array; generation: number } | null = null;

  /**
   * `renameOffLoop`: writeAsync renames on the I/O pool too, for a file whose older content is
   * always safe to find after a crash (replication-offset-checkpoint: a high watermark may lag),
   * since a write at once made while that rename runs may be overtaken by it. Otherwise the
   * rename is on the loop (after a truncation, a recovery point above what is on disk must never
   * come back).
   */
  constructor(private readonly platform: Platform, readonly path: string, private readonly renameOffLoop = false) {}

  /** Replaces the file atomically, at once (temp file, fsync, rename, fsync of the dir). */
  write(entries: Iterable<{ topic: string; partition: number; offset: number }>): void {
    const generation = ++this.generation;
    this.platform.fs.writeFileAtomic(this.path, new TextEncoder().encode(formatCheckpoint(entries)));
    this.renamedGeneration = generation;
  }

  /**
   * Replaces the file atomically with the entries as they are now, the slow steps off the event
   * loop. Resolves once this content (or newer) is on disk; rejects with the I/O error.
   */
  writeAsync(entries: Iterable<{ topic: string; partition: number; offset: number }>): Promise<void> {
    this.waiting = { data: new TextEncoder().encode(formatCheckpoint(entries)), generation: ++this.generation };
    if (this.running !== null) return this.running;
    const run = this.drain().finally(() => {
      if (this.running === run) this.running = null;
    });
    this.running = run;
    return run;
  }

  /** Resolves once no async write of this file is running (whatever its outcome). */
  async settled(): Promise<void> {
    await this.running?.catch(() => {});
  }

  private async drain(): Promise<void> {
    for (let job = this.waiting; job !== null; job = this.waiting) {
      this.waiting = null;
      await this.writeOnce(job.data, job.generation);
    }
  }

  private async writeOnce(data: Uint8Array, generation: number): Promise<void> {
    const fs = this.platform.fs;
    const tmp = `${this.path}.async.tmp`;
    await writeSyncedAsync(fs, tmp, data);
    // On the loop, with no await between the check and the rename: a newer content renamed
    // meanwhile (a write at once) must not be replaced by this older one.
    if (this.renamedGeneration > generation) return;
    if (this.renameOffLoop) {
      this.renamedGeneration = generation;
      await fs.renameAsync(tmp, this.path);
    } else {
      fs.rename(tmp, this.path);
      this.renamedGeneration = generation;
    }
    await syncDirAsync(fs, this.path.slice(0, this.path.lastIndexOf("/")) || "/");
  }

  /** The entries; empty when the file does not exist; throws CheckpointFormatError when damaged. */
  read(): CheckpointEntries {
    const bytes = this.platform.fs.readFile(this.path);
    if (bytes === null) return new Map();
    return parseCheckpoint(new TextDecoder().decode(bytes));
  }

  /** read(), giving the event loop back (slice) while a long file is parsed. */
  async readGradually(slice: TimeSlice): Promise<CheckpointEntries> {
    const bytes = this.platform.fs.readFile(this.path);
    if (bytes === null) return new Map();
    const steps = parseCheckpointSteps(new TextDecoder().decode(bytes));
    for (;;) {
      const r = steps.next();
      if (r.done) return r.value;
      await slice.yield();
    }
  }
}

/** The steps of a background atomic write before its rename: `path` written whole and fsynced, on the I/O pool. */
export async function writeSyncedAsync(fs: FileSystem, path: string, data: Uint8Array): Promise<void> {
  const file = await fs.openAsync(path, "readwrite");
  try {
    file.truncate(0);
    file.writeAt(data, 0);
    await (file.syncAsync?.() ?? file.sync());
  } finally {
    file.close();
  }
}

/** fsync of a directory after a rename in it, on the I/O pool; as FileSystem.syncDir, a filesystem that refuses it is no failure. */
export async function syncDirAsync(fs: FileSystem, dir: string): Promise<void> {
  const handle = await fs.openAsync(dir, "read");
  try {
    await (handle.syncAsync?.() ?? handle.sync());
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code !== "EINVAL" && code !== "EISDIR" && code !== "ENOTSUP") throw e;
  } finally {
    handle.close();
  }
}
