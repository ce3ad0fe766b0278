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
  /** The next group's size for settle(). */
  private group = 16;

  constructor(private readonly sliceMs = eventLoopSliceMs) {}

  /** True when the slice is used up (the next yield() would give the loop back). */
  get due(): boolean {
    return performance.now() - this.startMs >= this.sliceMs;
  }

  /**
   * How many operations to issue together next (at most max), for settle(). Starts small and
   * adapts to what settle() measures.
   */
  groupSize(max: number): number {
    return Math.max(1, Math.min(max, this.group));
  }

  /**
   * Awaits a group of operations issued together (one group commit of the embedded registry,
   * one pipelined round of ZooKeeper requests). Their completions run back to back, in one drain
   * of the microtask queue where no yield can come between them, so it is the group's size, not
   * the slice, that bounds that stretch: the span from the first completion to the last is
   * measured (the work, not a count of operations) and the next group is halved when the span
   * passed half a slice, doubled when it stayed under a quarter.
   */
  async settle<R>(group: Promise<R>[]): Promise<R[]> {
    let firstMs = -1;
    const first = () => {
      if (firstMs < 0) firstMs = performance.now();
    };
    for (const p of group) p.then(first, first);
    const results = await Promise.all(group);
    const spanMs = performance.now() - firstMs;
    if (spanMs > this.sliceMs / 2) this.group = Math.max(1, Math.floor(group.length / 2));
    else if (spanMs < this.sliceMs / 4 && group.length >= this.group) this.group = group.length * 2;
    return results;
  }

  yield(): Promise<void> | void {
    if (!this.due) return;
    return new Promise<void>((resolve) => setTimeout(resolve, 0)).then(() => {
      this.yields++;
      this.startMs = performance.now();
    });
  }
}
