// Client quota enforcement as Kafka's ClientQuotaManager and ClientRequestQuotaManager do it
// (KIP-13, KIP-55, KIP-124, KIP-219): each request's cost is recorded on a sampled rate kept per
// quota entity (the tags QuotaStore.resolve gives), and a rate above the quota gives a throttle
// time: (rate - quota) / quota x the window the rate was measured over, the time after which the
// rate is back at the quota if nothing more is recorded. The answer carries that time in
// throttle_time_ms and the server mutes the connection for it once the answer is sent.
//
//   produce: the bytes of each Produce request, against producer_byte_rate (bytes/s)
//   fetch:   the bytes of each consumer Fetch answer, against consumer_byte_rate (bytes/s); a
//            throttled fetch answers no data and its bytes are taken back, as Kafka does
//   request: handler time (less the time parked waiting for replication or a fetch's long poll)
//            as a percentage of one second, against request_percentage; its throttle time is
//            bounded by one window (Kafka's ClientRequestQuotaManager)
//
// SampledRate is Kafka's Rate over a SampledStat: quota.window.num samples of
// quota.window.size.seconds; a sample older than all of them together is reset; the rate divides
// the samples' total by the time since the oldest sample began, but never by less than
// (num - 1) windows, so a new client's first burst is measured against a whole window.
//
// Inter-broker requests (LeaderAndIsr, StopReplica, UpdateMetadata, ControlledShutdown, follower
// fetches) are exempt. Sensors of entities idle for an hour are dropped (Kafka's inactive sensor
// expiration); at most limits.quotaSensorsMax are kept, the idlest tenth dropped when full.
import type { Struct } from "../protocol/mod.ts";
import { quotaSensorsMax } from "../util/mod.ts";
import type { RequestContext, RequestThrottler } from "./dispatch.ts";
import type { QuotaStore, QuotaType } from "./quota_config.ts";

/** Kafka's inactive sensor expiration: one hour. */
const sensorIdleMs = 3_600_000;

export class SampledRate {
  private readonly values: Float64Array;
  private readonly starts: Float64Array;
  private current = 0;

  constructor(private readonly samples: number, private readonly windowMs: number, nowMs: number) {
    this.values = new Float64Array(samples);
    this.starts = new Float64Array(samples).fill(nowMs);
  }

  record(value: number, nowMs: number): void {
    this.purge(nowMs);
    if (nowMs - this.starts[this.current] >= this.windowMs) {
      this.current = (this.current + 1) % this.samples;
      this.starts[this.current] = nowMs;
      this.values[this.current] = 0;
    }
    this.values[this.current] += value;
  }

  /** The rate per second at nowMs. */
  rate(nowMs: number): number {
    this.purge(nowMs);
    let total = 0;
    for (const v of this.values) total += v;
    return (total * 1000) / this.windowSizeMs(nowMs);
  }

  /** The time the rate is measured over (Kafka's Rate.windowSize). */
  windowSizeMs(nowMs: number): number {
    this.purge(nowMs);
    let oldest = Infinity;
    for (const s of this.starts) oldest = Math.min(oldest, s);
    let elapsed = nowMs - oldest;
    const full = Math.floor(elapsed / this.windowMs);
    if (full < this.samples - 1) elapsed += (this.samples - 1 - full) * this.windowMs;
    return Math.max(elapsed, 1);
  }

  private purge(nowMs: number): void {
    const expireAge = this.samples * this.windowMs;
    for (let i = 0; i < this.samples; i++) {
      if (nowMs - this.starts[i] >= expireAge) {
        this.starts[i] = nowMs;
        this.values[i] = 0;
      }
    }
  }
}

/** What /metrics and the dashboard show of one throttled entity. */
export interface ThrottleStat {
  type: QuotaType;
  user: string;
  clientId: string;
  /** The quota in force when last recorded. */
  bound: number;
  /** The rate measured at the last request. */
  rate: number;
  throttledTotal: number;
  throttleTimeMsTotal: number;
  lastThrottleTimeMs: number;
  lastRecordMs: number;
}

interface Sensor {
  rate: SampledRate;
  stat: ThrottleStat;
}

export class ClientQuotaManager {
  private readonly sensors = new Map<string, Sensor>();
  private lastSweepMs = 0;
  /** Throttle time given, summed over every entity (kafka_server_*_throttle_time). */
  throttleTimeMsTotal = 0;
  throttledTotal = 0;
  requestsTotal = 0;

  constructor(
    readonly type: QuotaType,
    private readonly store: QuotaStore,
    private readonly samples: number,
    private readonly windowMs: number,
    /** The largest throttle time given (Infinity: unbounded, as for byte rates). */
    private readonly throttleTimeMsMax: number,
  ) {}

  get active(): boolean {
    return this.store.hasAny(this.type);
  }

  /** Records value for the client; the throttle time (ms) its answer must carry, 0 within quota. */
  recordAndGetThrottleTimeMs(user: string, clientId: string, value: number, nowMs: number): number {
    const q = this.store.resolve(this.type, user, clientId);
    if (q === null) return 0;
    const key = `${q.user}\u0000${q.clientId}`;
    let s = this.sensors.get(key);
    if (s === undefined) {
      this.sweep(nowMs);
      s = {
        rate: new SampledRate(this.samples, this.windowMs, nowMs),
        stat: { type: this.type, user: q.user, clientId: q.clientId, bound: q.bound, rate: 0, throttledTotal: 0, throttleTimeMsTotal: 0, lastThrottleTimeMs: 0, lastRecordMs: nowMs },
      };
      this.sensors.set(key, s);
    }
    s.rate.record(value, nowMs);
    const rate = s.rate.rate(nowMs);
    s.stat.bound = q.bound;
    s.stat.rate = rate;
    s.stat.lastRecordMs = nowMs;
    this.requestsTotal++;
    if (rate <= q.bound) {
      s.stat.lastThrottleTimeMs = 0;
      return 0;
    }
    const throttleMs = Math.min(Math.round(((rate - q.bound) / q.bound) * s.rate.windowSizeMs(nowMs)), this.throttleTimeMsMax);
    s.stat.lastThrottleTimeMs = throttleMs;
    if (throttleMs > 0) {
      s.stat.throttledTotal++;
      s.stat.throttleTimeMsTotal += throttleMs;
      this.throttledTotal++;
      this.throttleTimeMsTotal += throttleMs;
    }
    return throttleMs;
  }

  /** Takes back a recorded value (a throttled fetch answers no data, so its bytes are not counted). */
  unrecord(user: string, clientId: string, value: number, nowMs: number): void {
    const q = this.store.resolve(this.type, user, clientId);
    if (q === null) return;
    const s = this.sensors.get(`${q.user}\u0000${q.clientId}`);
    if (s === undefined) return;
    s.rate.record(-value, nowMs);
    s.stat.rate = s.rate.rate(nowMs);
  }

  /** The entities recorded recently (for the dashboard and /metrics). */
  stats(): ThrottleStat[] {
    return [...this.sensors.values()].map((s) => ({ ...s.stat }));
  }

  private sweep(nowMs: number): void {
    if (nowMs - this.lastSweepMs < 60_000 && this.sensors.size < quotaSensorsMax) return;
    this.lastSweepMs = nowMs;
    for (const [k, s] of this.sensors) if (nowMs - s.stat.lastRecordMs >= sensorIdleMs) this.sensors.delete(k);
    if (this.sensors.size < quotaSensorsMax) return;
    // A tenth at once, so a flood of new client ids pays for the sort once per 10% of the cap.
    const idlest = [...this.sensors].sort((a, b) => a[1].stat.lastRecordMs - b[1].stat.lastRecordMs);
    for (const [k] of idlest.slice(0, this.sensors.size - Math.floor(quotaSensorsMax * 0.9))) this.sensors.delete(k);
  }
}

const PRODUCE = 0, FETCH = 1;
/** Inter-broker APIs: never throttled (Kafka exempts cluster actions). */
const exemptApis = new Set([4, 5, 6, 7]);

/** The user name of a principal ("User:alice" → "alice"), as Kafka's quotas key users. */
function userOf(principal: string): string {
  return principal.startsWith("User:") ? principal.slice(5) : principal;
}

function fetchReplicaId(ctx: RequestContext, request: Struct): number {
  if (ctx.version >= 15) return (request.replicaState as { replicaId: number } | undefined)?.replicaId ?? -1;
  return (request.replicaId as number | undefined) ?? -1;
}

/**
 * The three quota managers as the dispatcher's RequestThrottler: records each request and
 * answers the largest throttle time of the quotas it broke (Kafka throttles the channel for the
 * larger of the bandwidth and the request throttle).
 */
export class ClientQuotas implements RequestThrottler {
  readonly produce: ClientQuotaManager;
  readonly fetch: ClientQuotaManager;
  readonly request: ClientQuotaManager;

  constructor(readonly store: QuotaStore, samples: number, windowSeconds: number, readonly monotonicMs: () => number) {
    const windowMs = windowSeconds * 1000;
    this.produce = new ClientQuotaManager("produce", store, samples, windowMs, Infinity);
    this.fetch = new ClientQuotaManager("fetch", store, samples, windowMs, Infinity);
    this.request = new ClientQuotaManager("request", store, samples, windowMs, windowMs);
  }

  get managers(): ClientQuotaManager[] {
    return [this.produce, this.fetch, this.request];
  }

  throttle(ctx: RequestContext, request: Struct, answer: Struct | null, requestBytes: number, responseBytes: number, handlerMs: number): number {
    const apiKey = ctx.header.apiKey;
    if (exemptApis.has(apiKey)) return 0;
    if (apiKey === FETCH && fetchReplicaId(ctx, request) >= 0) return 0;
    const p = this.produce, f = this.fetch, r = this.request;
    if (!p.active && !f.active && !r.active) return 0;
    const user = userOf(ctx.conn.principal);
    const clientId = ctx.header.clientId ?? "";
    const nowMs = this.monotonicMs();
    let bandwidthMs = 0;
    if (apiKey === PRODUCE && p.active) bandwidthMs = p.recordAndGetThrottleTimeMs(user, clientId, requestBytes, nowMs);
    if (apiKey === FETCH && f.active) bandwidthMs = f.recordAndGetThrottleTimeMs(user, clientId, responseBytes, nowMs);
    // handlerMs leaves out time parked in a purgatory (acks=all, a fetch's long poll).
    const requestMs = r.active ? r.recordAndGetThrottleTimeMs(user, clientId, (handlerMs * 100) / 1000, nowMs) : 0;
    const throttleMs = Math.max(bandwidthMs, requestMs);
    if (apiKey === FETCH && throttleMs > 0 && answer !== null) {
      // Kafka answers a throttled fetch without data (getThrottledResponse) and takes its bytes back.
      if (f.active) f.unrecord(user, clientId, responseBytes, nowMs);
      answer.responses = [];
      answer.nodeEndpoints = [];
    }
    return throttleMs;
  }
}
