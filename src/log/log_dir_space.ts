// LogDirSpace: the free space of each online log dir's volume, and whether appends are refused
// there for the lack of it (see log_manager.ts's header, "Disk full"). The LogManager asks it
// before every append (Log.appendRefusal) and runs its check every logDirSpaceCheckMs.
//
// Invariants: the statfs runs only in check(), never per append: between checks the bytes
// appended are subtracted from the last figure. A dir with an ENOSPC refuses every append until a
// check finds room past a margin; a dir below log.dir.min.free.bytes refuses the appends of all
// but the reserve-exempt topics. Each change of refusal is logged once. A dir missing here is not
// known to be short.

import type { FileSystemSpace, Platform } from "../platform/mod.ts";
import { logDirNoSpaceResumeBytes } from "../util/mod.ts";
import type { Logger } from "../util/mod.ts";

/** One online dir's volume, as the last statfs saw it, and whether appends are refused there. */
export interface LogDirSpaceState {
  /** Usable bytes at the last check, minus what was appended since (an estimate between checks). */
  usableBytes: number;
  totalBytes: number;
  /** An ENOSPC was met since the last check that found room: every append is refused. */
  full: boolean;
  /** usableBytes fell below log.dir.min.free.bytes: appends to non-internal topics are refused. */
  low: boolean;
  /** Why appends are refused (the produce error message), or null while they are not. */
  refusal: string | null;
}

export class LogDirSpace {
  /** Per online dir, its space (check); a dir missing here is not known to be short. */
  private space = new Map<string, LogDirSpaceState>();

  constructor(
    private readonly fs: Platform["fs"],
    /** log.dir.min.free.bytes; 0: never refuse for it. */
    private readonly minFreeBytes: number,
    private readonly logger: Logger,
  ) {}

  /** An ENOSPC in an online dir: every append there is refused until a check finds room. */
  noSpace(dir: string, code: string): void {
    const s = this.spaceOf(dir);
    if (s.full) return;
    s.full = true;
    s.usableBytes = 0;
    this.updateRefusal(dir, s, `log dir ${dir} is full (${code})`);
  }

  private spaceOf(dir: string): LogDirSpaceState {
    let s = this.space.get(dir);
    if (s === undefined) {
      s = { usableBytes: Number.MAX_SAFE_INTEGER, totalBytes: -1, full: false, low: false, refusal: null };
      this.space.set(dir, s);
    }
    return s;
  }

  /**
   * Log.appendRefusal for a log in dir, before an append of `bytes`: the reason to refuse it, or
   * null. One map lookup and a subtraction: the statfs runs in check, not here.
   */
  appendRefusal(dir: string, reserveExempt: boolean, bytes: number): string | null {
    const s = this.space.get(dir);
    if (s === undefined) return null;
    if (s.full) return s.refusal;
    s.usableBytes -= bytes;
    const min = this.minFreeBytes;
    if (!s.low && min > 0 && s.usableBytes < min) {
      s.low = true;
      this.updateRefusal(dir, s, `log dir ${dir} has ${Math.max(0, s.usableBytes)} bytes usable, below log.dir.min.free.bytes=${min}`);
    }
    return s.low && !reserveExempt ? s.refusal : null;
  }

  /** Why appends are refused in dir now, or null. */
  refusalOf(dir: string): string | null {
    return this.space.get(dir)?.refusal ?? null;
  }

  /** Sets why appends are refused in dir (null: they are not), logging each change once. */
  private updateRefusal(dir: string, s: LogDirSpaceState, why: string | null): void {
    const refusal = why === null ? null : `${why}: appends are refused until space is freed`;
    if ((refusal === null) === (s.refusal === null)) {
      s.refusal = refusal;
      return;
    }
    s.refusal = refusal;
    if (refusal !== null) this.logger.warn({ dir, usableBytes: Math.max(0, s.usableBytes), minFreeBytes: this.minFreeBytes }, refusal);
    else this.logger.info({ dir, usableBytes: s.usableBytes, minFreeBytes: this.minFreeBytes }, "log dir has room again: appends resume");
  }

  /**
   * The free-space check: statfs of each online dir, which sets or clears its refusal of
   * appends; dirs no longer online are forgotten. An error here changes nothing (the dir's own
   * operations report theirs).
   */
  check(onlineDirs: string[], isOnline: (dir: string) => boolean): void {
    const min = this.minFreeBytes;
    for (const dir of onlineDirs) {
      let fs: FileSystemSpace | null;
      try {
        fs = this.fs.statfs(dir);
      } catch {
        continue;
      }
      if (fs === null) continue;
      const s = this.spaceOf(dir);
      s.usableBytes = fs.usableBytes;
      s.totalBytes = fs.totalBytes;
      // Resume with some room past the threshold (a 1% of a small volume), not at the first free block.
      const margin = Math.min(logDirNoSpaceResumeBytes, Math.floor(fs.totalBytes / 100));
      if (s.full && fs.usableBytes > Math.max(min, margin)) s.full = false;
      s.low = min > 0 && fs.usableBytes < min;
      const why = s.full
        ? `log dir ${dir} is full (ENOSPC; ${fs.usableBytes} bytes usable)`
        : s.low
        ? `log dir ${dir} has ${fs.usableBytes} bytes usable, below log.dir.min.free.bytes=${min}`
        : null;
      this.updateRefusal(dir, s, why);
    }
    for (const dir of [...this.space.keys()]) if (!isOnline(dir)) this.space.delete(dir);
  }

  /** Each online dir's space as the last check left it (dashboard, /metrics). */
  states(): { dir: string; state: LogDirSpaceState }[] {
    return [...this.space].map(([dir, state]) => ({ dir, state: { ...state } }));
  }
}
