// LogProducerState: a Log's ProducerStateManager with its `.snapshot` files (Kafka's
// UnifiedLog/LogLoader producer-state hooks), kept out of log.ts.
//
// Invariant that bounds every rebuild: at each segment roll, either a snapshot at the new
// segment's base offset is written (synchronously, before the segment exists), or the state then
// equals what the latest snapshot holds (or is empty when there is none): `dirty` says which. So
// the state at the active segment's base offset is always the latest snapshot at or below it, and
// a rebuild (after an unclean stop, or a truncation) loads that snapshot and replays only the
// batch headers of the active segment from max(snapshot offset, its base, log start offset):
// never more than one segment's headers, whatever the log's length. Retention deletes a deleted
// segment's snapshot except the latest one, which still carries the state.
// - Clean close: a snapshot at the log end offset when dirty; the next clean load reads the
//   latest snapshot and replays nothing (no snapshot and a clean shutdown: empty state at the log
//   end offset, as Kafka). A partition no producer id ever wrote to has no snapshot file at all.
// - A snapshot that does not decode is logged and deleted, and the next older one is tried; the
//   replay then starts from it, or from the active segment when none is left (strand's bound).
//   Batch contents never fail a load: the replay reads headers that the segment's load checked.
// - A truncation (follower) deletes snapshots past the new end and rebuilds as above; a full
//   truncation (truncateFullyAndStartAt) empties the state and deletes every snapshot.
// - Aborted transactions go to the `.txnindex` of the segment holding their marker, as the
//   marker is appended (leader, follower) or replayed: a replay first cuts the active segment's
//   index at the offset it starts from, so the index of a recovered segment is rebuilt with it.

import type { Platform } from "../platform/mod.ts";
import { type Logger, segmentReadChunkBytesMax } from "../util/mod.ts";
import { type CompletedTxn, type ProducerBatch, ProducerStateManager } from "./producer_state.ts";
import { CorruptSnapshotError, ProducerSnapshotFiles } from "./producer_snapshot.ts";
import type { LogSegment } from "./segment.ts";

export class LogProducerState {
  readonly manager: ProducerStateManager;
  private readonly snapshots: ProducerSnapshotFiles;

  constructor(private readonly platform: Platform, dir: string, private readonly logger: Logger, names: readonly string[]) {
    this.manager = new ProducerStateManager(dir.slice(dir.lastIndexOf("/") + 1), logger, 0);
    this.snapshots = new ProducerSnapshotFiles(platform, dir, names);
  }

  /** Snapshot offsets on disk, ascending (tests, DescribeProducers' neighbours). */
  get snapshotOffsets(): readonly number[] {
    return this.snapshots.all;
  }

  /**
   * Loads the state for a log just opened (Kafka's LogLoader producer-state step): snapshots past
   * the log end offset go; the latest remaining one is loaded; after an unclean stop the active
   * segment's batches past it are replayed.
   */
  load(segments: readonly LogSegment[], logStartOffset: number, hadCleanShutdown: boolean): void {
    const logEndOffset = segments[segments.length - 1].nextOffset;
    this.snapshots.deleteWhere((o) => o > logEndOffset);
    this.rebuild(segments, logStartOffset, logEndOffset, !hadCleanShutdown);
  }

  private rebuild(segments: readonly LogSegment[], logStartOffset: number, logEndOffset: number, replay: boolean): void {
    const nowMs = this.platform.clock.nowMs();
    let loadedAt: number | null = null;
    for (let o = this.snapshots.latestOffset; o !== null; o = this.snapshots.latestOffset) {
      try {
        this.manager.loadEntries(this.snapshots.read(o), o, nowMs);
        loadedAt = o;
        break;
      } catch (e) {
        if (!(e instanceof CorruptSnapshotError)) throw e;
        this.logger.warn({ file: this.snapshots.path(o), err: e.message }, "skipping a producer snapshot that does not decode");
        this.snapshots.delete(o);
      }
    }
    if (loadedAt === null) this.manager.loadEntries([], logEndOffset, nowMs);
    const active = segments[segments.length - 1];
    const from = Math.max(loadedAt ?? 0, active.baseOffset, logStartOffset);
    if (replay && from < logEndOffset) {
      active.txnIndex.truncateTo(from);
      // Whole batches in large reads (the headers alone would be one read per batch); only their
      // headers are looked at. The recovery that precedes an unclean load read the same bytes.
      let bytes = 0;
      for (let pos = from === active.baseOffset ? 0 : Math.max(0, active.positionOf(from)); ;) {
        const chunk = active.read(pos, segmentReadChunkBytesMax, true);
        if (chunk.length === 0) break;
        this.indexAborted(this.manager.updateFromLog(chunk, from), active);
        pos += chunk.length;
        bytes += chunk.length;
      }
      this.logger.info({ from, to: logEndOffset, bytes, producers: this.manager.activeProducers().size }, "rebuilt producer state from the log");
    }
    // loadEntries left dirty unset; a replayed batch set it (the next roll or close writes one).
    this.manager.updateMapEndOffset(logEndOffset);
  }

  /** Records a leader append's producer batches (checked before it) and indexes the transactions it aborted. */
  commit(batches: readonly ProducerBatch[] | null, seg: LogSegment): void {
    this.indexAborted(this.manager.commit(batches), seg);
  }

  /** Updates the state from batches appended to seg without checks (a follower's). */
  updateFromLog(records: Uint8Array, seg: LogSegment): void {
    this.indexAborted(this.manager.updateFromLog(records), seg);
  }

  private indexAborted(completed: CompletedTxn[] | null, seg: LogSegment): void {
    if (completed === null) return;
    for (const c of completed) {
      if (c.aborted) seg.txnIndex.append({ producerId: c.producerId, firstOffset: c.firstOffset, lastOffset: c.lastOffset, lastStableOffset: c.lastStableOffset });
    }
  }

  /** Before a roll to a segment at newBase: the snapshot the invariant needs (see the file comment). */
  beforeRoll(newBase: number): void {
    if (!this.manager.dirty) return;
    this.snapshots.write(newBase, this.manager.activeProducers().values());
    this.manager.dirty = false;
  }

  /** At a clean close: the state at the log end offset, when it differs from the latest snapshot. */
  onClose(logEndOffset: number): void {
    if (!this.manager.dirty) return;
    this.snapshots.write(logEndOffset, this.manager.activeProducers().values());
    this.manager.dirty = false;
  }

  /** After a truncation to logEndOffset that kept some segments (Kafka's truncateAndReload + rebuild). */
  onTruncation(segments: readonly LogSegment[], logStartOffset: number, logEndOffset: number): void {
    this.snapshots.deleteWhere((o) => o > logEndOffset);
    if (this.manager.mapEndOffset === logEndOffset) return;
    this.rebuild(segments, logStartOffset, logEndOffset, true);
  }

  /** After truncateFullyAndStartAt(offset): no producer, no snapshot. */
  onFullTruncation(offset: number): void {
    this.snapshots.deleteWhere(() => true);
    this.manager.clear(offset);
    this.manager.dirty = false;
  }

  /** Segments before firstBase were deleted (retention): their snapshots go, except the latest. */
  onSegmentsDeleted(firstBase: number): void {
    const latest = this.snapshots.latestOffset;
    this.snapshots.deleteWhere((o) => o !== latest && o < firstBase);
  }
}
