// Segment swaps: how a segment rewritten by the cleaner replaces the segments it was made from,
// and how a start-up finishes a swap that a crash interrupted (Kafka's replaceSegments and
// LogLoader's handling of `.cleaned` and `.swap` files).
//
// File names, in a partition's directory (<base> is the 20-digit base offset of the first
// segment of the group the cleaner rewrote, which the new segment keeps):
//   <base>.log.cleaned  <base>.index.cleaned  <base>.timeindex.cleaned   being written
//   <base>.log.swap     <base>.index.swap     <base>.timeindex.swap      written whole and fsynced
//
// The swap, in this order (Log.replaceSegments):
//   1. the cleaner writes the `.cleaned` files and fsyncs them;
//   2. `.cleaned` → `.swap`, the log file first, then its indexes; the directory is fsynced;
//   3. every old segment is renamed `.deleted` (removed file.delete.delay.ms later);
//   4. `.swap` → final names, the log file first; the directory is fsynced.
//
// Start-up (completeInterruptedSwaps), whatever step a crash stopped at:
//   - `.cleaned` files are removed: the swap had not begun, the old segments are all there;
//   - each `<base>.log.swap` is complete (fsynced before its rename); the old segments it replaces
//     are those whose base offset lies in [base, its next offset): their files, not yet renamed
//     `.deleted`, are removed. An old segment at or past that end held only records the cleaner
//     dropped; if it is still there it stays, uncleaned, and the next clean removes its records;
//   - every `.swap` file is renamed to its final name. The indexes of a log that was still `.swap`
//     are removed too, so the log's load rebuilds them from the log (checking every CRC32C);
//   - `.deleted` files are removed by the log's load as always.
// So after any crash, each offset's records are there exactly once: in an old segment or in the
// new one, never in neither.

import type { Platform } from "../platform/mod.ts";
import type { Logger } from "../util/mod.ts";
import { BatchField, batchLogOverhead } from "../protocol/mod.ts";
import { recordBatchHeaderBytes } from "../util/mod.ts";

/** Suffix of a segment's files while the cleaner writes them (Kafka's). */
export const CleanedFileSuffix = ".cleaned";
/** Suffix of a written, fsynced segment's files between steps 2 and 4 of a swap (Kafka's). */
export const SwapFileSuffix = ".swap";

const segmentFile = /^(\d{20})\.(log|index|timeindex|txnindex)$/;

/**
 * Finishes or undoes the swaps a crash interrupted in the partition directory `dir` (see the
 * file comment), given the directory's entry names. Runs before the directory's segments are
 * listed. Returns whether it changed any file (then the caller lists the directory again).
 */
export function completeInterruptedSwaps(platform: Platform, dir: string, logger: Logger, names: string[]): boolean {
  let changed = false;
  for (const name of names) {
    if (!name.endsWith(CleanedFileSuffix)) continue;
    platform.fs.remove(`${dir}/${name}`);
    logger.info({ file: `${dir}/${name}` }, "removed the file of an interrupted clean");
    changed = true;
  }
  const swaps = names.filter((n) => n.endsWith(SwapFileSuffix));
  if (swaps.length === 0) return changed;
  for (const name of swaps) {
    const m = /^(\d{20})\.log\.swap$/.exec(name);
    if (m === null) continue;
    const base = Number(m[1]);
    const end = Math.max(base + 1, nextOffsetOf(platform, `${dir}/${name}`, base));
    for (const other of names) {
      const o = segmentFile.exec(other);
      if (o === null) continue;
      const otherBase = Number(o[1]);
      if (otherBase < base || otherBase >= end) continue;
      platform.fs.remove(`${dir}/${other}`);
      logger.info({ file: `${dir}/${other}`, swap: name }, "removed a segment file replaced by an interrupted swap");
    }
    // Rebuilt from the log by the load: an index that was still `.cleaned` is gone already.
    platform.fs.remove(`${dir}/${m[1]}.index${SwapFileSuffix}`);
    platform.fs.remove(`${dir}/${m[1]}.timeindex${SwapFileSuffix}`);
  }
  for (const name of platform.fs.readdir(dir)) {
    if (!name.endsWith(SwapFileSuffix)) continue;
    const final = name.slice(0, -SwapFileSuffix.length);
    platform.fs.rename(`${dir}/${name}`, `${dir}/${final}`);
    logger.info({ file: `${dir}/${final}` }, "completed an interrupted segment swap");
  }
  platform.fs.syncDir(dir);
  return true;
}

/**
 * One past the last offset of the batches in a log file whose base offset is `base` (base when it
 * holds none): a walk of batch headers, stopping at the first that does not look whole.
 */
function nextOffsetOf(platform: Platform, path: string, base: number): number {
  const file = platform.fs.open(path, "read");
  try {
    const size = file.size();
    const header = new Uint8Array(recordBatchHeaderBytes);
    const dv = new DataView(header.buffer);
    let next = base;
    for (let pos = 0; pos + recordBatchHeaderBytes <= size;) {
      if (file.readAt(header, pos) < recordBatchHeaderBytes) break;
      const batchBytes = batchLogOverhead + dv.getInt32(BatchField.batchLength);
      if (batchBytes < recordBatchHeaderBytes || pos + batchBytes > size) break;
      next = Number(dv.getBigInt64(BatchField.baseOffset)) + dv.getInt32(BatchField.lastOffsetDelta) + 1;
      pos += batchBytes;
    }
    return next;
  } finally {
    file.close();
  }
}
