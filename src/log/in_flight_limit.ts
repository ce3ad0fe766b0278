// InFlightLimit: at most `max` async operations running at once, the others waiting in order.
// Used to bound the file operations a log manager hands to the runtime's I/O pool at a time
// (creations of new logs, renames and removals of deleted ones). Under Deno each such operation
// is a task of tokio's blocking pool: issuing many at once grows the pool to as many threads, and
// the event loop's thread then waits on the pool's shared lock while those threads (preempted on
// a busy host) hold it. An strace of the loop's thread while creating 10,000 partitions showed
// it parked on one futex for up to 160 ms at a time, after spinning on sched_yield.

export class InFlightLimit {
  private running = 0;
  private waiting: (() => void)[] = [];

  constructor(private readonly max: number) {}

  /** Operations running now (for tests). */
  get inFlight(): number {
    return this.running;
  }

  async run<T>(op: () => Promise<T>): Promise<T> {
    // A slot freed while others wait is handed to the first of them, never taken back meanwhile.
    if (this.running >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await op();
    } finally {
      const next = this.waiting.shift();
      if (next !== undefined) next();
      else this.running--;
    }
  }
}
