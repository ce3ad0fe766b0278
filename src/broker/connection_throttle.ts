// ConnectionThrottle: max.connection.creation.rate (broker-wide, and per listener as
// listener.name.<l>.max.connection.creation.rate, KIP-612) as a token bucket holding at most one
// second's worth of connections.
import type { Connection, Platform } from "../platform/mod.ts";
import { connectionsThrottledMax } from "../util/mod.ts";

/**
 * max.connection.creation.rate: a token bucket holding at most one second's worth of connections.
 * A connection over the rate waits, unread, for its turn (Kafka's acceptor sleeps for the same
 * throttle time); past limits.connectionsThrottledMax waiting, new ones are closed, as a full
 * listen backlog refuses them.
 */
export class ConnectionThrottle {
  private tokens: number;
  private lastMs: number;
  private readonly waiting: { conn: Connection; accept: () => void }[] = [];

  get waitingCount(): number {
    return this.waiting.length;
  }
  private timer: { cancel(): void } | null = null;
  private stopped = false;

  constructor(private readonly platform: Platform, private ratePerSec: number) {
    this.tokens = Math.max(1, ratePerSec);
    this.lastMs = platform.clock.monotonicMs();
  }

  /** A new rate (dynamic config): the bucket keeps what it earned at the old one, capped to the new. */
  setRate(ratePerSec: number): void {
    if (ratePerSec === this.ratePerSec) return;
    if (this.ratePerSec !== Infinity) this.refill();
    this.ratePerSec = ratePerSec;
    this.tokens = ratePerSec === Infinity ? 1 : Math.min(this.tokens, Math.max(1, ratePerSec));
    this.lastMs = this.platform.clock.monotonicMs();
    // The waiting connections' turn is computed again at the new rate.
    this.timer?.cancel();
    this.timer = null;
    if (ratePerSec === Infinity) {
      for (const w of this.waiting.splice(0)) w.accept();
      return;
    }
    this.schedule();
  }

  admit(conn: Connection, accept: () => void): void {
    if (this.ratePerSec === Infinity) return accept();
    if (this.stopped) return conn.close();
    this.refill();
    if (this.waiting.length === 0 && this.tokens >= 1) {
      this.tokens -= 1;
      return accept();
    }
    if (this.waiting.length >= connectionsThrottledMax) return conn.close();
    this.waiting.push({ conn, accept });
    this.schedule();
  }

  private refill(): void {
    const now = this.platform.clock.monotonicMs();
    this.tokens = Math.min(Math.max(1, this.ratePerSec), this.tokens + ((now - this.lastMs) * this.ratePerSec) / 1000);
    this.lastMs = now;
  }

  private schedule(): void {
    if (this.timer !== null || this.waiting.length === 0) return;
    const waitMs = Math.max(1, Math.ceil(((1 - this.tokens) * 1000) / this.ratePerSec));
    this.timer = this.platform.clock.setTimeout(() => {
      this.timer = null;
      this.refill();
      while (this.waiting.length > 0 && this.tokens >= 1) {
        this.tokens -= 1;
        this.waiting.shift()!.accept();
      }
      this.schedule();
    }, waitMs);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = null;
    for (const w of this.waiting.splice(0)) w.conn.close();
  }
}
