// Replication throttling as Kafka's ReplicationQuotaManager does it (KIP-73): one quota on each
// side of replication, in bytes per second, measured as a SampledRate of
// replication.quota.window.num windows of replication.quota.window.size.seconds.
//
// - Leader side (leader.replication.throttled.rate, for the partitions a topic's
//   leader.replication.throttled.replicas names with this broker's id, or "*"): a follower that
//   is not in the ISR gets no records for a throttled partition while the rate is above the
//   quota (ReplicaManager.shouldLeaderThrottle), and a fetch long-poll does not complete on such
//   a partition's data; the bytes answered for throttled partitions are recorded, in-sync
//   followers' included.
// - Follower side (follower.replication.throttled.rate, follower.replication.throttled.replicas):
//   the fetcher leaves a throttled partition that has not caught up with the leader's high
//   watermark out of its fetch while the rate is above the quota
//   (AbstractFetcherThread.shouldFollowerThrottle), and records the bytes it appends for
//   throttled partitions.
// The rates default to Long.MAX_VALUE (never throttled); they change at run time through the
// broker's dynamic config (kafka-configs.sh --entity-type brokers), as in Kafka.

import type { Clock } from "../platform/mod.ts";
import { SampledRate } from "../util/mod.ts";

export class ReplicationQuotaManager {
  private quotaBytesPerSec = Infinity;
  private rate: SampledRate;

  constructor(private readonly clock: Pick<Clock, "monotonicMs">, private samples = 11, private windowMs = 1000) {
    this.rate = new SampledRate(samples, windowMs, clock.monotonicMs());
  }

  /** A new quota (bytes per second; Long.MAX_VALUE or more: unlimited); the samples are kept. */
  updateQuota(bytesPerSec: number): void {
    this.quotaBytesPerSec = bytesPerSec >= Number.MAX_SAFE_INTEGER ? Infinity : bytesPerSec;
  }

  /** New sample windows (replication.quota.window.*): the rate starts over, as a new sensor would. */
  updateWindows(samples: number, windowMs: number): void {
    if (samples === this.samples && windowMs === this.windowMs) return;
    this.samples = samples;
    this.windowMs = windowMs;
    this.rate = new SampledRate(samples, windowMs, this.clock.monotonicMs());
  }

  get quota(): number {
    return this.quotaBytesPerSec;
  }

  /** Kafka's isQuotaExceeded: the measured rate is above the quota. */
  isQuotaExceeded(): boolean {
    return this.quotaBytesPerSec !== Infinity && this.rate.rate(this.clock.monotonicMs()) > this.quotaBytesPerSec;
  }

  /** Bytes replicated for throttled partitions (never checked against the quota here, as Kafka's record). */
  record(bytes: number): void {
    if (bytes > 0) this.rate.record(bytes, this.clock.monotonicMs());
  }

  /** The measured rate, bytes per second (for /metrics and tests). */
  rateBytesPerSec(): number {
    return this.rate.rate(this.clock.monotonicMs());
  }
}
