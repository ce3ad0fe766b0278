// SampledRate: Kafka's Rate over a SampledStat (org.apache.kafka.common.metrics.stats), as its
// quota managers measure: `samples` windows of windowMs each; a sample older than all of them
// together is reset; the rate divides the samples' total by the time since the oldest sample
// began, but never by less than (samples - 1) windows, so a first burst is measured against a
// whole window. Client quotas, connection rates and replication quotas use it.

export class SampledRate {
  private readonly values: Float64Array;
  private readonly starts: Float64Array;
  private current = 0;

  constructor(private readonly samples: number, private readonly windowMs: number, monotonicMs: number) {
    this.values = new Float64Array(samples);
    this.starts = new Float64Array(samples).fill(monotonicMs);
  }

  record(value: number, monotonicMs: number): void {
    this.purge(monotonicMs);
    if (monotonicMs - this.starts[this.current] >= this.windowMs) {
      this.current = (this.current + 1) % this.samples;
      this.starts[this.current] = monotonicMs;
      this.values[this.current] = 0;
    }
    this.values[this.current] += value;
  }

  /** The rate per second at monotonicMs. */
  rate(monotonicMs: number): number {
    this.purge(monotonicMs);
    let total = 0;
    for (const v of this.values) total += v;
    return (total * 1000) / this.windowSizeMs(monotonicMs);
  }

  /** The time the rate is measured over (Kafka's Rate.windowSize). */
  windowSizeMs(monotonicMs: number): number {
    this.purge(monotonicMs);
    let oldest = Infinity;
    for (const s of this.starts) oldest = Math.min(oldest, s);
    let elapsed = monotonicMs - oldest;
    const full = Math.floor(elapsed / this.windowMs);
    if (full < this.samples - 1) elapsed += (this.samples - 1 - full) * this.windowMs;
    return Math.max(elapsed, 1);
  }

  private purge(monotonicMs: number): void {
    const expireAge = this.samples * this.windowMs;
    for (let i = 0; i < this.samples; i++) {
      if (monotonicMs - this.starts[i] >= expireAge) {
        this.starts[i] = monotonicMs;
        this.values[i] = 0;
      }
    }
  }
}
