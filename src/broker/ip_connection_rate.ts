// The ip quota (KIP-612): connection_creation_rate, new connections per second accepted from one
// address, as Kafka's ConnectionQuotas.recordIpConnectionMaybeThrottle measures it. Each accepted
// connection is recorded on the address's sampled rate (quota.window.num windows of
// quota.window.size.seconds, the rate client quotas use); a connection that takes the rate above
// the quota is taken back off the rate and refused, with a throttle time of
// (rate - quota) / quota x the measured window, at most one window: Kafka holds the refused
// socket, unread, for that time before closing it, so a client reconnecting at once is slowed.
import { ipConnectionRatesMax } from "../util/mod.ts";
import { SampledRate } from "./client_quota_manager.ts";

interface Entry {
  rate: SampledRate;
  lastMs: number;
}

export class IpConnectionRates {
  private readonly entries = new Map<string, Entry>();
  private readonly windowMs: number;
  private lastSweepMs = 0;

  /** `quotaOf`: the connection_creation_rate for an address, undefined when none applies. */
  constructor(private readonly quotaOf: (ip: string) => number | undefined, private readonly samples: number, windowSeconds: number) {
    this.windowMs = windowSeconds * 1000;
  }

  /** Addresses tracked now. */
  get size(): number {
    return this.entries.size;
  }

  /** Records a new connection from `ip`; 0 when it is accepted, else the throttle time (ms) of its refusal. */
  recordAndGetThrottleTimeMs(ip: string, monotonicMs: number): number {
    // Swept first, so the addresses of a quota since removed are forgotten too.
    if (this.entries.size > 0) this.sweep(monotonicMs);
    const bound = this.quotaOf(ip);
    if (bound === undefined) return 0;
    let e = this.entries.get(ip);
    if (e === undefined) {
      e = { rate: new SampledRate(this.samples, this.windowMs, monotonicMs), lastMs: monotonicMs };
      this.entries.set(ip, e);
    }
    e.lastMs = monotonicMs;
    e.rate.record(1, monotonicMs);
    const rate = e.rate.rate(monotonicMs);
    if (rate <= bound) return 0;
    // Kafka un-records the refused connection: only accepted ones count against the quota.
    e.rate.record(-1, monotonicMs);
    const throttleMs = Math.round(((rate - bound) / bound) * e.rate.windowSizeMs(monotonicMs));
    return Math.max(1, Math.min(throttleMs, this.windowMs));
  }

  /** Drops addresses idle for all the samples (their rate is zero again), and the idlest tenth when full. */
  private sweep(monotonicMs: number): void {
    if (monotonicMs - this.lastSweepMs < this.windowMs && this.entries.size < ipConnectionRatesMax) return;
    this.lastSweepMs = monotonicMs;
    const idleMs = this.samples * this.windowMs;
    for (const [ip, e] of this.entries) if (monotonicMs - e.lastMs >= idleMs) this.entries.delete(ip);
    if (this.entries.size < ipConnectionRatesMax) return;
    const idlest = [...this.entries].sort((a, b) => a[1].lastMs - b[1].lastMs);
    for (const [ip] of idlest.slice(0, this.entries.size - Math.floor(ipConnectionRatesMax * 0.9))) this.entries.delete(ip);
  }
}
