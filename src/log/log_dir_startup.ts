// What the LogManager reads from a log dir at start-up, before it opens the logs (Kafka's
// LogManager.loadLogs, the parts outside a log): meta.properties (written when missing, checked
// against broker.id and cluster.id when present), the clean-shutdown marker and the three
// offset checkpoints, and which entries are partition logs (`-delete` leftovers are removed on
// the way). The layout is described in log_manager.ts's header.
//
// Invariants: a dir holding another broker's or cluster's meta.properties stops start-up; a
// damaged checkpoint counts as absent (more is recovered, nothing is lost); an entry whose name
// is not `<topic>-<partition>` is left alone, never stat'ed.

import type { Platform } from "../platform/mod.ts";
import type { Logger, TimeSlice } from "../util/mod.ts";
import {
  type CheckpointEntries,
  CleanShutdownFile,
  LogStartOffsetCheckpointFile,
  OffsetCheckpointFile,
  RecoveryPointCheckpointFile,
  ReplicationOffsetCheckpointFile,
} from "./checkpoint.ts";
import type { LogLoadState } from "./log_loader.ts";
import { isIoError } from "./log_dir_failure.ts";

/** What one log dir's files said at start-up. */
export interface DirLoadState {
  hadCleanShutdown: boolean;
  recoveryPoints: CheckpointEntries;
  logStartOffsets: CheckpointEntries;
  highWatermarks: CheckpointEntries;
}

/** Splits `<topic>-<partition>` (topics may contain '-'); null when the name is not one. */
export function parseTopicPartitionDir(name: string): { topic: string; partition: number } | null {
  const m = /^(.+)-(\d+)$/.exec(name);
  if (m === null) return null;
  const partition = Number(m[2]);
  if (!Number.isSafeInteger(partition)) return null;
  return { topic: m[1], partition };
}

/**
 * The dir's partition logs, in readdir order; `-delete` leftovers are removed on the way. The
 * event loop is given back when the slice is used up (10,000 stat calls take 20-40 ms).
 */
export async function partitionDirs(platform: Platform, logger: Logger, dir: string, slice: TimeSlice): Promise<{ topic: string; partition: number }[]> {
  const found: { topic: string; partition: number }[] = [];
  for (const name of platform.fs.readdir(dir)) {
    await slice.yield();
    if (name.endsWith("-delete")) {
      removeDeletedLogDir(platform, logger, dir, name);
      continue;
    }
    const tp = parseTopicPartitionDir(name);
    if (tp === null) {
      // Kafka's future (AlterReplicaLogDirs) and stray (KRaft) logs: strand makes neither.
      if (/-(future|stray)$/.test(name)) logger.info({ dir, name }, "ignoring a Kafka future or stray log directory");
      continue;
    }
    if (platform.fs.stat(`${dir}/${name}`)?.isDirectory) found.push(tp);
  }
  return found;
}

/**
 * Removes a `-delete` leftover (its name, possibly with a truncated topic, is never parsed). A
 * failure is logged and the leftover kept: it holds no live data, so it is no reason to take the
 * dir offline; the next start-up tries again.
 */
function removeDeletedLogDir(platform: Platform, logger: Logger, dir: string, name: string): void {
  try {
    platform.fs.remove(`${dir}/${name}`);
    logger.info({ dir, name }, "removed a deleted log's directory");
  } catch (e) {
    if (!isIoError(e)) throw e;
    logger.warn({ dir, name, err: e.message }, "cannot remove a deleted log's directory; leaving it");
  }
}

/** The dir's marker and checkpoints; a damaged checkpoint counts as absent (recover more). */
export async function readDirState(platform: Platform, logger: Logger, dir: string, slice: TimeSlice): Promise<DirLoadState> {
  const read = async (file: string): Promise<CheckpointEntries> => {
    try {
      return await new OffsetCheckpointFile(platform, `${dir}/${file}`).readGradually(slice);
    } catch (e) {
      logger.warn({ dir, file, err: (e as Error).message }, "cannot read checkpoint file; treating it as empty");
      return new Map();
    }
  };
  // Each has a line per log: 10,000 lines took 10-20 ms to parse, the parser still cold.
  const hadCleanShutdown = platform.fs.stat(`${dir}/${CleanShutdownFile}`) !== null;
  const recoveryPoints = await read(RecoveryPointCheckpointFile);
  const logStartOffsets = await read(LogStartOffsetCheckpointFile);
  const highWatermarks = await read(ReplicationOffsetCheckpointFile);
  await slice.yield();
  return { hadCleanShutdown, recoveryPoints, logStartOffsets, highWatermarks };
}

/** The load state of the log keyed `<topic>-<partition>`, from what its dir's files said. */
export function loadStateOf(dir: DirLoadState, key: string): LogLoadState {
  return {
    hadCleanShutdown: dir.hadCleanShutdown,
    recoveryPoint: dir.recoveryPoints.get(key)?.offset ?? 0,
    logStartOffset: Math.max(0, dir.logStartOffsets.get(key)?.offset ?? 0),
    highWatermark: dir.highWatermarks.get(key)?.offset ?? null,
  };
}

/** Writes meta.properties when missing; throws when it names another broker or cluster. */
export function checkMetaProperties(platform: Platform, dir: string, brokerId: number, clusterId: string): void {
  const path = `${dir}/meta.properties`;
  const existing = platform.fs.readFile(path);
  if (existing !== null) {
    const props = new Map<string, string>();
    for (const line of new TextDecoder().decode(existing).split("\n")) {
      const m = /^([^#=]+)=(.*)$/.exec(line.trim());
      if (m) props.set(m[1], m[2]);
    }
    const id = props.get("broker.id");
    if (id !== undefined && Number(id) !== brokerId) {
      throw new Error(
        `${path} says broker.id=${id} but this broker is configured with broker.id=${brokerId}; ` +
          `a log dir belongs to one broker`,
      );
    }
    const cid = props.get("cluster.id");
    if (cid !== undefined && cid !== clusterId) {
      throw new Error(`${path} says cluster.id=${cid} but the registry's cluster id is ${clusterId}`);
    }
    if (id !== undefined && cid !== undefined) return;
  }
  const text = `#\n#${javaDateUtc(platform.clock.nowMs())}\n` +
    `cluster.id=${clusterId}\nversion=0\nbroker.id=${brokerId}\n`;
  platform.fs.writeFileAtomic(path, new TextEncoder().encode(text));
}

const weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/**
 * The date line Java's Properties.store writes ("Wed Dec 02 16:04:24 UTC 2026"), in UTC, from the
 * UTC getters: the first Date.prototype.toString in a Bun process loads ICU's time zone data, 50-300
 * ms of a broker's start-up spent on a comment (issue 18).
 */
export function javaDateUtc(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${weekdays[d.getUTCDay()]} ${months[d.getUTCMonth()]} ${two(d.getUTCDate())} ` +
    `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} UTC ${d.getUTCFullYear()}`;
}
