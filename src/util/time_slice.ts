// TimeSlice: a cooperative scheduler for long tasks on the one event loop (creating, loading or
// deleting thousands of partitions). A task calls `await slice.yield()` between units of work; it
// returns at once while the current slice is younger than eventLoopSliceMs, and otherwise gives
// the loop back (a macrotask: every socket read, timer and request queued meanwhile runs first).
// So no stretch of such a task blocks other clients for much longer than one slice.
//
// The caller must keep each unit whole: state checked and changed with no yield in between, so
// what interleaves at a yield sees each unit either done or not started.
//
// It uses the web globals performance.now() and setTimeout (in both runtimes), not an injected
// Clock: a test's manual clock must not be able to park a task that only means to yield.

import { eventLoopSliceMs } from "./limits.ts";

export class TimeSlice {
  private startMs = performance.now();
  /** How many times the task gave the loop back. */
  yields = 0;

  constructor(private readonly sliceMs = eventLoopSliceMs) {}

  /** True when the slice is used up (the next yield() would give the loop back). */
  get due(): boolean {
    return performance.now() - this.startMs >= this.sliceMs;
  }

  yield(): Promise<void> | void {
    if (!this.due) return;
    return new Promise<void>((resolve) => setTimeout(resolve, 0)).then(() => {
      this.yields++;
      this.startMs = performance.now();
    });
  }
}
