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

// One slice for all tasks: several long tasks run at once (the registry's load beside the logs',
// the controller's events beside LeaderAndIsr), and each timing only itself, two of them resumed
// back to back held the loop for two slices. So the slice is measured from the last time any task
// was resumed, and the tasks waiting are resumed one per macrotask, in turn.
let sharedStartMs = performance.now();
const waiting: (() => void)[] = [];
let resumeScheduled = false;

function resumeNext(): void {
  resumeScheduled = false;
  const next = waiting.shift();
  sharedStartMs = performance.now();
  if (waiting.length > 0) {
    resumeScheduled = true;
    setTimeout(resumeNext, 0);
  }
  next?.();
}

function waitTurn(): Promise<void> {
  return new Promise<void>((resolve) => {
    waiting.push(resolve);
    if (!resumeScheduled) {
      resumeScheduled = true;
      setTimeout(resumeNext, 0);
    }
  });
}

export class TimeSlice {
  private readonly startMs = performance.now();
  /** How many times the task gave the loop back. */
  yields = 0;
  /** The next group's size for settle(). */
  private group = 16;

  constructor(private readonly sliceMs = eventLoopSliceMs) {}

  /**
   * True when the slice is used up (the next yield() would give the loop back): sliceMs since
   * any task last resumed, or since this one began if that is later (a task started mid-slice
   * gets a slice of its own, so a small one does not wait a macrotask for nothing: at worst two
   * slices run back to back).
   */
  get due(): boolean {
    return performance.now() - Math.max(sharedStartMs, this.startMs) >= this.sliceMs;
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
    return waitTurn().then(() => {
      this.yields++;
    });
  }
}
