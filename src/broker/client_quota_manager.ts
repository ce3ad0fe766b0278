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
// controller_mutation_rate (KIP-599, Kafka's ControllerMutationQuotaManager): partitions created
// (CreateTopics), added (CreatePartitions) or deleted (DeleteTopics) per second, on a token
// bucket of quota x controller.quota.window.num x controller.quota.window.size.seconds tokens,
// refilled at the quota. A mutation is let through while the bucket is not negative (so a burst
// may take it below zero) and costs its partitions; the throttle time is the time the bucket
// takes to be back at zero. Strict (CreateTopics v6+, DeleteTopics v5+, CreatePartitions v3+): a
// topic met with a negative bucket is refused with THROTTLING_QUOTA_EXCEEDED, nothing recorded,
// and the request throttled; a burst let through is not throttled (Kafka's
// StrictControllerMutationQuota). Permissive (older versions, which cannot handle that error):
// every mutation goes through and a bucket left negative throttles the request.
// validate_only mutates nothing and records nothing.
//
// Inter-broker requests (LeaderAndIsr, StopReplica, UpdateMetadata, ControlledShutdown, follower
// fetches) are exempt. Sensors of entities idle for an hour are dropped (Kafka's inactive sensor
// expiration); at most limits.quotaSensorsMax are kept, the idlest tenth dropped when full.
import type { MutationAdmit } from "../controller/mod.ts";
import type { Struct } from "../protocol/mod.ts";
import { ErrorCode, quotaSensorsMax, SampledRate } from "../util/mod.ts";
import type { RequestContext, RequestThrottler } from "./dispatch.ts";
import type { QuotaStore, QuotaType } from "./quota_config.ts";

export { SampledRate };

/** Kafka's inactive sensor expiration: one hour. */
const sensorIdleMs = 3_600_000;

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
  /** controller_mutation only: the tokens left in the bucket at the last request. */
  tokens?: number;
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
  recordAndGetThrottleTimeMs(user: string, clientId: string, value: number, monotonicMs: number): number {
    const q = this.store.resolve(this.type, user, clientId);
    if (q === null) return 0;
    const key = `${q.user}\u0000${q.clientId}`;
    let s = this.sensors.get(key);
    if (s === undefined) {
      this.sweep(monotonicMs);
      s = {
        rate: new SampledRate(this.samples, this.windowMs, monotonicMs),
        stat: { type: this.type, user: q.user, clientId: q.clientId, bound: q.bound, rate: 0, throttledTotal: 0, throttleTimeMsTotal: 0, lastThrottleTimeMs: 0, lastRecordMs: monotonicMs },
      };
      this.sensors.set(key, s);
    }
    s.rate.record(value, monotonicMs);
    const rate = s.rate.rate(monotonicMs);
    s.stat.bound = q.bound;
    s.stat.rate = rate;
    s.stat.lastRecordMs = monotonicMs;
    this.requestsTotal++;
    if (rate <= q.bound) {
      s.stat.lastThrottleTimeMs = 0;
      return 0;
    }
    const throttleMs = Math.min(Math.round(((rate - q.bound) / q.bound) * s.rate.windowSizeMs(monotonicMs)), this.throttleTimeMsMax);
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
  unrecord(user: string, clientId: string, value: number, monotonicMs: number): void {
    const q = this.store.resolve(this.type, user, clientId);
    if (q === null) return;
    const s = this.sensors.get(`${q.user}\u0000${q.clientId}`);
    if (s === undefined) return;
    s.rate.record(-value, monotonicMs);
    s.stat.rate = s.rate.rate(monotonicMs);
  }

  /** The entities recorded recently (for the dashboard and /metrics). */
  stats(): ThrottleStat[] {
    return [...this.sensors.values()].map((s) => ({ ...s.stat }));
  }

  private sweep(monotonicMs: number): void {
    if (monotonicMs - this.lastSweepMs < 60_000 && this.sensors.size < quotaSensorsMax) return;
    this.lastSweepMs = monotonicMs;
    for (const [k, s] of this.sensors) if (monotonicMs - s.stat.lastRecordMs >= sensorIdleMs) this.sensors.delete(k);
    if (this.sensors.size < quotaSensorsMax) return;
    // A tenth at once, so a flood of new client ids pays for the sort once per 10% of the cap.
    const idlest = [...this.sensors].sort((a, b) => a[1].stat.lastRecordMs - b[1].stat.lastRecordMs);
    for (const [k] of idlest.slice(0, this.sensors.size - Math.floor(quotaSensorsMax * 0.9))) this.sensors.delete(k);
  }
}

/** Kafka's TokenBucket: starts full (burst tokens), refills at the quota per second. */
export class TokenBucket {
  private tokens: number;

  constructor(private lastMs: number, burst: number) {
    this.tokens = burst;
  }

  /** The tokens at monotonicMs for this quota and burst (both may change between calls). */
  measure(quota: number, burst: number, monotonicMs: number): number {
    this.tokens = Math.min(burst, this.tokens + (quota * Math.max(0, monotonicMs - this.lastMs)) / 1000);
    this.lastMs = Math.max(this.lastMs, monotonicMs);
    return this.tokens;
  }

  record(value: number, quota: number, burst: number, monotonicMs: number): number {
    this.measure(quota, burst, monotonicMs);
    this.tokens = Math.min(burst, this.tokens - value);
    return this.tokens;
  }
}

interface MutationSensor {
  bucket: TokenBucket;
  stat: ThrottleStat;
}

/** One request's view of its client's controller mutation quota (Kafka's ControllerMutationQuota). */
export interface ControllerMutationQuota {
  /**
   * Records `partitions` mutations; false when a strict quota refuses them (the caller answers
   * THROTTLING_QUOTA_EXCEEDED and does not mutate). A permissive quota always answers true.
   */
  record(partitions: number): boolean;
}

/** The message Kafka's ThrottlingQuotaExceededException carries. */
export const throttlingQuotaExceededMessage = "The throttling quota has been exceeded.";

/** Kafka's ControllerMutationQuotaManager: a token bucket per quota entity (module comment). */
export class ControllerMutationQuotaManager {
  readonly type: QuotaType = "controller_mutation";
  private readonly sensors = new Map<string, MutationSensor>();
  private lastSweepMs = 0;
  throttleTimeMsTotal = 0;
  throttledTotal = 0;
  requestsTotal = 0;

  constructor(
    private readonly store: QuotaStore,
    private readonly samples: number,
    private readonly windowSeconds: number,
    readonly monotonicMs: () => number,
  ) {}

  get active(): boolean {
    return this.store.hasAny(this.type);
  }

  /**
   * The quota of this request's client; the end of the throttle any record gave is raised into
   * ctx.quotaThrottleUntilMs, and the dispatcher answers and mutes the channel for what is left
   * of it when the answer is ready (Kafka deducts the time elapsed since the recording too).
   * `strictFrom`: the first version of the API that can be refused (Kafka's strictSinceVersion).
   */
  quotaFor(ctx: RequestContext, strictFrom: number): ControllerMutationQuota {
    const user = userOf(ctx.conn.principal);
    const clientId = ctx.header.clientId ?? "";
    const strict = ctx.version >= strictFrom;
    return {
      record: (partitions) => {
        if (!this.active) return true;
        const q = this.store.resolve(this.type, user, clientId);
        if (q === null) return true;
        const monotonicMs = this.monotonicMs();
        const s = this.sensor(q.user, q.clientId, q.bound, monotonicMs);
        const burst = q.bound * this.samples * this.windowSeconds;
        s.stat.bound = q.bound;
        s.stat.lastRecordMs = monotonicMs;
        this.requestsTotal++;
        let tokens = s.bucket.measure(q.bound, burst, monotonicMs);
        const refused = strict && tokens < 0;
        if (!refused) tokens = s.bucket.record(partitions, q.bound, burst, monotonicMs);
        s.stat.tokens = tokens;
        // Kafka's throttleTimeMs for a TokenBucket: the time to refill what is owed. A strict
        // quota throttles only what it refuses (an accepted burst that overdraws is not), a
        // permissive one whatever leaves the bucket negative.
        const throttleMs = tokens < 0 && (refused || !strict) ? Math.round((-tokens / q.bound) * 1000) : 0;
        s.stat.lastThrottleTimeMs = throttleMs;
        if (throttleMs > 0) {
          s.stat.throttledTotal++;
          s.stat.throttleTimeMsTotal += throttleMs;
          this.throttledTotal++;
          this.throttleTimeMsTotal += throttleMs;
          ctx.quotaThrottleUntilMs = Math.max(ctx.quotaThrottleUntilMs, monotonicMs + throttleMs);
        }
        return !refused;
      },
    };
  }

  stats(): ThrottleStat[] {
    return [...this.sensors.values()].map((s) => ({ ...s.stat }));
  }

  private sensor(user: string, clientId: string, bound: number, monotonicMs: number): MutationSensor {
    const key = `${user}\u0000${clientId}`;
    let s = this.sensors.get(key);
    if (s !== undefined) return s;
    this.sweep(monotonicMs);
    s = {
      bucket: new TokenBucket(monotonicMs, bound * this.samples * this.windowSeconds),
      stat: { type: this.type, user, clientId, bound, rate: 0, throttledTotal: 0, throttleTimeMsTotal: 0, lastThrottleTimeMs: 0, lastRecordMs: monotonicMs },
    };
    this.sensors.set(key, s);
    return s;
  }

  private sweep(monotonicMs: number): void {
    if (monotonicMs - this.lastSweepMs < 60_000 && this.sensors.size < quotaSensorsMax) return;
    this.lastSweepMs = monotonicMs;
    for (const [k, s] of this.sensors) if (monotonicMs - s.stat.lastRecordMs >= sensorIdleMs) this.sensors.delete(k);
    if (this.sensors.size < quotaSensorsMax) return;
    const idlest = [...this.sensors].sort((a, b) => a[1].stat.lastRecordMs - b[1].stat.lastRecordMs);
    for (const [k] of idlest.slice(0, this.sensors.size - Math.floor(quotaSensorsMax * 0.9))) this.sensors.delete(k);
  }
}

/**
 * The TopicAdmin hook for one request (undefined when no quota manager runs): refuses with
 * THROTTLING_QUOTA_EXCEEDED what a strict quota does not let through.
 */
export function mutationAdmit(m: ControllerMutationQuotaManager | null | undefined, ctx: RequestContext, strictFrom: number): MutationAdmit | undefined {
  if (m === null || m === undefined) return undefined;
  const quota = m.quotaFor(ctx, strictFrom);
  return (partitions) => quota.record(partitions) ? null : { errorCode: ErrorCode.THROTTLING_QUOTA_EXCEEDED, errorMessage: throttlingQuotaExceededMessage };
}

const PRODUCE = 0, FETCH = 1, WRITE_TXN_MARKERS = 27;
/**
 * Kafka's ApiKeys with clusterAction that strand serves: LeaderAndIsr, StopReplica,
 * UpdateMetadata, ControlledShutdown, WriteTxnMarkers, AlterPartition. Kafka answers them with
 * sendResponseExemptThrottle once the principal has CLUSTER_ACTION; a refusal for want of it (a
 * ClusterAuthorizationException, RequestHandlerHelper.handleError's mayThrottle) is throttled as
 * any client request, so a client cannot dodge its request quota by sending them.
 */
const clusterActionApis = new Set([4, 5, 6, 7, WRITE_TXN_MARKERS, 56]);

/** Whether the answer refuses the request for want of CLUSTER_ACTION (each handler's refusal shape). */
function refusedClusterAction(apiKey: number, answer: Struct | null): boolean {
  if (answer === null) return false;
  if (apiKey !== WRITE_TXN_MARKERS) return answer.errorCode === ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
  const markers = (answer.markers ?? []) as { topics: { partitions: { errorCode: number }[] }[] }[];
  return markers.some((m) => m.topics.some((t) => t.partitions.some((p) => p.errorCode === ErrorCode.CLUSTER_AUTHORIZATION_FAILED)));
}

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
  readonly controllerMutation: ControllerMutationQuotaManager;

  constructor(
    readonly store: QuotaStore,
    samples: number,
    windowSeconds: number,
    readonly monotonicMs: () => number,
    /** controller.quota.window.num and controller.quota.window.size.seconds (the token bucket's burst). */
    controllerSamples = 11,
    controllerWindowSeconds = 1,
  ) {
    const windowMs = windowSeconds * 1000;
    this.produce = new ClientQuotaManager("produce", store, samples, windowMs, Infinity);
    this.fetch = new ClientQuotaManager("fetch", store, samples, windowMs, Infinity);
    this.request = new ClientQuotaManager("request", store, samples, windowMs, windowMs);
    this.controllerMutation = new ControllerMutationQuotaManager(store, controllerSamples, controllerWindowSeconds, monotonicMs);
  }

  /** Every quota's sensors (for /metrics and the dashboard). */
  get managers(): (ClientQuotaManager | ControllerMutationQuotaManager)[] {
    return [this.produce, this.fetch, this.request, this.controllerMutation];
  }

  throttle(ctx: RequestContext, request: Struct, answer: Struct | null, requestBytes: number, responseBytes: number, handlerMs: number): number {
    const apiKey = ctx.header.apiKey;
    if (clusterActionApis.has(apiKey) && !refusedClusterAction(apiKey, answer)) return 0;
    if (apiKey === FETCH && fetchReplicaId(ctx, request) >= 0) return 0;
    const p = this.produce, f = this.fetch, r = this.request;
    if (!p.active && !f.active && !r.active) return 0;
    const user = userOf(ctx.conn.principal);
    const clientId = ctx.header.clientId ?? "";
    const monotonicMs = this.monotonicMs();
    let bandwidthMs = 0;
    if (apiKey === PRODUCE && p.active) bandwidthMs = p.recordAndGetThrottleTimeMs(user, clientId, requestBytes, monotonicMs);
    if (apiKey === FETCH && f.active) bandwidthMs = f.recordAndGetThrottleTimeMs(user, clientId, responseBytes, monotonicMs);
    // handlerMs leaves out time parked in a purgatory (acks=all, a fetch's long poll).
    const requestMs = r.active ? r.recordAndGetThrottleTimeMs(user, clientId, (handlerMs * 100) / 1000, monotonicMs) : 0;
    const throttleMs = Math.max(bandwidthMs, requestMs);
    if (apiKey === FETCH && throttleMs > 0 && answer !== null) {
      // Kafka answers a throttled fetch without data (getThrottledResponse) and takes its bytes back.
      if (f.active) f.unrecord(user, clientId, responseBytes, monotonicMs);
      answer.responses = [];
      answer.nodeEndpoints = [];
    }
    return throttleMs;
  }
}
