// DelayedOperationPurgatory: operations that wait for an event or a deadline (fetch long-poll now;
// produce with acks=all when replication lands). Each operation watches keys (topic-partition);
// an event on a key re-checks the operations watching it. An operation completes exactly once:
// when its check passes, or when its deadline expires (then it completes anyway, with what it has).

import type { Clock, Timer } from "../platform/mod.ts";

export interface DelayedOperation {
  /** True when the operation can complete now. Must not mutate state. */
  tryComplete(): boolean;
}

interface Waiting {
  op: DelayedOperation;
  keys: string[];
  timer: Timer;
  resolve: (expired: boolean) => void;
  done: boolean;
}

export class DelayedOperationPurgatory {
  private watchers = new Map<string, Set<Waiting>>();

  constructor(private readonly clock: Clock) {}

  /**
   * Resolves false as soon as op.tryComplete() holds after an event on one of keys (or at once),
   * true when timeoutMs passes first.
   */
  waitFor(op: DelayedOperation, keys: string[], timeoutMs: number): Promise<boolean> {
    if (op.tryComplete() || timeoutMs <= 0 || keys.length === 0) return Promise.resolve(timeoutMs <= 0);
    return new Promise((resolve) => {
      const w: Waiting = { op, keys, resolve, done: false, timer: { cancel() {} } };
      w.timer = this.clock.setTimeout(() => this.finish(w, true), timeoutMs);
      for (const k of keys) {
        let set = this.watchers.get(k);
        if (set === undefined) this.watchers.set(k, (set = new Set()));
        set.add(w);
      }
    });
  }

  /** Re-checks every operation watching key (after an append, a high watermark move, ...). */
  checkAndComplete(key: string): void {
    const set = this.watchers.get(key);
    if (set === undefined) return;
    for (const w of [...set]) if (!w.done && w.op.tryComplete()) this.finish(w, false);
  }

  get watchedCount(): number {
    let n = 0;
    for (const s of this.watchers.values()) n += s.size;
    return n;
  }

  private finish(w: Waiting, expired: boolean): void {
    if (w.done) return;
    w.done = true;
    w.timer.cancel();
    for (const k of w.keys) {
      const set = this.watchers.get(k);
      set?.delete(w);
      if (set?.size === 0) this.watchers.delete(k);
    }
    w.resolve(expired);
  }

  /** Completes every waiting operation now (shutdown). */
  shutdown(): void {
    for (const set of [...this.watchers.values()]) for (const w of [...set]) this.finish(w, true);
  }
}
