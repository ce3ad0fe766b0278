// A manual clock for tests: timers on a timeline the test advances (advance(ms) runs what falls
// due, in due order then creation order), and wall time a fixed origin plus the monotonic time.
import type { Clock, Timer } from "../../src/platform/types.ts";

/** Lets promise continuations (and anything they chain) run. */
export function settle(): Promise<void> {
  return new Promise((r) => setTimeout(r, 0));
}

interface ManualTimer {
  seq: number;
  dueMs: number;
  fn: () => void;
  everyMs: number | null;
  cancelled: boolean;
}

/** Timers run only when the test advances the clock; due timers run in due order, then creation order. */
export class ManualClock implements Clock {
  private mono = 0;
  private seq = 0;
  private timers: ManualTimer[] = [];
  constructor(private readonly wallOriginMs = 1_700_000_000_000) {}

  nowMs(): number {
    return this.wallOriginMs + this.mono;
  }

  monotonicMs(): number {
    return this.mono;
  }

  private add(fn: () => void, ms: number, every: boolean): Timer {
    const t: ManualTimer = { seq: this.seq++, dueMs: this.mono + Math.max(0, ms), fn, everyMs: every ? Math.max(1, ms) : null, cancelled: false };
    this.timers.push(t);
    return { cancel: () => void (t.cancelled = true) };
  }

  setTimeout(fn: () => void, ms: number): Timer {
    return this.add(fn, ms, false);
  }

  setInterval(fn: () => void, ms: number): Timer {
    return this.add(fn, ms, true);
  }

  /** Timers not cancelled and not yet run. */
  get pending(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }

  /** Moves time forward by ms, running every timer that falls due on the way (and what they chain). */
  async advance(ms: number): Promise<void> {
    const target = this.mono + ms;
    for (;;) {
      await settle();
      this.timers = this.timers.filter((t) => !t.cancelled);
      let next: ManualTimer | undefined;
      for (const t of this.timers) {
        if (t.dueMs <= target && (next === undefined || t.dueMs < next.dueMs || (t.dueMs === next.dueMs && t.seq < next.seq))) next = t;
      }
      if (next === undefined) break;
      this.mono = Math.max(this.mono, next.dueMs);
      if (next.everyMs === null) next.cancelled = true;
      else next.dueMs += next.everyMs;
      next.fn();
    }
    this.mono = target;
    await settle();
  }
}
