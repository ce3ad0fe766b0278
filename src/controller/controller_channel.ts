// RemoteControllerChannel: the controller's ControllerChannel for every broker, itself included.
// Requests for the local broker go to the local channel (applied in process); requests for
// another broker are encoded (LeaderAndIsr v6, UpdateMetadata v7, StopReplica v3, as Kafka's
// ZooKeeper-mode controller sends them with IBP 2.8+) and sent over one connection per broker,
// as Kafka's ControllerChannelManager does with one RequestSendThread per broker.
//
// Invariants:
// - One queue per broker, sent in order, one request in flight at a time: a broker sees the
//   controller's requests in the order the controller made them.
// - A request is retried (reconnecting after backoffMs) until it is answered or its broker is
//   removed; it is never skipped, so a later request never overtakes an earlier one.
// - The controller never waits on a remote broker: the promise resolves once the request is
//   queued. Error answers are logged (the controller learns of broker changes from the registry,
//   not from these answers); `onResponse` lets a caller see them.
// - Every request carries the controller epoch it was made with, this broker's id as the
//   controller id, and the target's broker epoch (its registration's czxid) as known when queued.
//   A broker re-registered under a new epoch (or at a new address) gets a fresh queue: requests
//   made for the old registration would be refused as STALE_BROKER_EPOCH anyway.
// - A request for a broker that was never added (or was removed) is dropped with a warning, as
//   Kafka's controller drops requests to offline brokers.
// - removeBroker drops the queue and closes the connection; shutdown does so for every broker and
//   resolves once every send loop has stopped.
import { KafkaConnection, type SaslCredentials } from "../client/mod.ts";
import type { Platform, Timer, TlsClientOptions } from "../platform/mod.ts";
import { type ApiSchema, LeaderAndIsrApi, StopReplicaApi, type Struct, UpdateMetadataApi } from "../protocol/mod.ts";
import { ErrorCode, errorName, type Logger } from "../util/mod.ts";
import type { BrokerInfo, ControllerChannel, TopicInfo } from "./channel.ts";
import {
  decodeLeaderAndIsrResponse,
  decodeStopReplicaResponse,
  LEADER_AND_ISR_VERSION,
  leaderAndIsrRequest,
  STOP_REPLICA_VERSION,
  stopReplicaRequest,
  UPDATE_METADATA_VERSION,
  updateMetadataRequest,
} from "./control_requests.ts";

export interface RemoteControllerChannelOptions {
  /** How long one send waits for its answer before the connection is dropped and the send retried. */
  requestTimeoutMs: number;
  /** Pause before reconnecting after a failed connect or send. */
  backoffMs: number;
  /** Connect timeout; requestTimeoutMs when not given. */
  connectTimeoutMs?: number;
  /** The broker's own login when the inter-broker listener speaks SASL. */
  sasl?: SaslCredentials;
  /** The broker's TLS settings when the inter-broker listener speaks TLS. */
  tls?: TlsClientOptions;
  /** Called with every answer from a remote broker (after it is logged). */
  onResponse?: (r: ControlResponse) => void;
}

/** A remote broker's answer to one control request. */
export interface ControlResponse {
  brokerId: number;
  api: "LeaderAndIsr" | "UpdateMetadata" | "StopReplica";
  errorCode: number;
  /** Per-partition errors other than NONE (LeaderAndIsr and StopReplica). */
  partitionErrors: { topic: string; partition: number; errorCode: number }[];
}

interface QueuedRequest {
  api: ApiSchema;
  version: number;
  body: Struct;
  /** For logs: what the request carries. */
  what: string;
  /** Reads the answer into a ControlResponse. */
  read(body: Struct): ControlResponse;
}

/** One broker's send loop: its queue, its connection, and a way to wake it. */
class BrokerSender {
  readonly queue: QueuedRequest[] = [];
  conn: KafkaConnection | null = null;
  stopped = false;
  /** Set while the loop waits (for work or out a backoff); calling it wakes the loop. */
  private wakeUp: (() => void) | null = null;
  /** Consecutive failures, so a broker that stays down is logged once, not every backoff. */
  failures = 0;
  loop: Promise<void> = Promise.resolve();

  constructor(readonly info: BrokerInfo) {}

  wake(): void {
    const w = this.wakeUp;
    this.wakeUp = null;
    w?.();
  }

  /** Waits until woken, or until ms passes when ms is given. */
  wait(platform: Platform, ms?: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: Timer | null = null;
      this.wakeUp = () => {
        timer?.cancel();
        resolve();
      };
      if (ms !== undefined) timer = platform.clock.setTimeout(() => this.wake(), ms);
    });
  }

  stop(): void {
    this.stopped = true;
    this.queue.length = 0;
    this.conn?.close("broker removed from the controller's channel");
    this.conn = null;
    this.wake();
  }
}

export class RemoteControllerChannel implements ControllerChannel {
  private readonly senders = new Map<number, BrokerSender>();
  private shutDown = false;
  /** Called whenever a request leaves a queue (answered or dropped): drained() waiters. */
  private readonly drainWaiters = new Set<() => void>();

  constructor(
    private readonly platform: Platform,
    private readonly localBrokerId: number,
    private readonly local: ControllerChannel,
    private readonly logger: Logger,
    private readonly options: RemoteControllerChannelOptions,
  ) {}

  /** Starts a send loop for the broker (a no-op when it is known with the same epoch and address). */
  addBroker(info: BrokerInfo): void {
    if (this.shutDown || info.id === this.localBrokerId) return;
    const old = this.senders.get(info.id);
    if (old !== undefined) {
      if (old.info.epoch === info.epoch && old.info.host === info.host && old.info.port === info.port) return;
      this.logger.info({ broker: info.id, epoch: String(info.epoch), oldEpoch: String(old.info.epoch) }, "broker re-registered: new controller queue");
      this.removeBroker(info.id);
    }
    const s = new BrokerSender({ ...info });
    this.senders.set(info.id, s);
    s.loop = this.run(s);
  }

  /** Drops the broker's queue and closes its connection. */
  removeBroker(id: number): void {
    const s = this.senders.get(id);
    if (s === undefined) return;
    this.senders.delete(id);
    if (s.queue.length > 0) this.logger.info({ broker: id, dropped: s.queue.length }, "broker removed: dropping its queued controller requests");
    s.stop();
    this.notifyDrain();
  }

  /** Requests queued for every broker and not yet answered. */
  get pending(): number {
    let n = 0;
    for (const s of this.senders.values()) n += s.queue.length;
    return n;
  }

  /**
   * Resolves true once no request is left unanswered (a controller about to resign lets its last
   * LeaderAndIsr reach the brokers), false when timeoutMs passes first.
   */
  drained(timeoutMs: number): Promise<boolean> {
    if (this.pending === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const finish = (ok: boolean) => {
        this.drainWaiters.delete(check);
        timer.cancel();
        resolve(ok);
      };
      const check = () => {
        if (this.pending === 0) finish(true);
      };
      const timer = this.platform.clock.setTimeout(() => finish(false), timeoutMs);
      this.drainWaiters.add(check);
    });
  }

  private notifyDrain(): void {
    for (const w of [...this.drainWaiters]) w();
  }

  /** Brokers with a send loop. */
  get brokerIds(): number[] {
    return [...this.senders.keys()];
  }

  /** Requests queued for a broker and not yet answered (the one in flight included). */
  queuedFor(id: number): number {
    return this.senders.get(id)?.queue.length ?? 0;
  }

  async shutdown(): Promise<void> {
    this.shutDown = true;
    const loops = [...this.senders.values()].map((s) => s.loop);
    for (const id of [...this.senders.keys()]) this.removeBroker(id);
    await Promise.all(loops);
  }

  // --- ControllerChannel -------------------------------------------------------------------------

  leaderAndIsr(brokerId: number, controllerEpoch: number, topics: TopicInfo[], liveBrokers: BrokerInfo[]): Promise<void> {
    if (brokerId === this.localBrokerId) {
      if (this.local.leaderAndIsrPartitionErrors === undefined) return this.local.leaderAndIsr(brokerId, controllerEpoch, topics, liveBrokers);
      // The local broker's answer reaches onResponse as a remote one's does (offline replicas).
      return this.local.leaderAndIsrPartitionErrors(brokerId, controllerEpoch, topics, liveBrokers).then((partitionErrors) => {
        if (partitionErrors.length > 0) this.options.onResponse?.({ brokerId, api: "LeaderAndIsr", errorCode: ErrorCode.NONE, partitionErrors });
      });
    }
    const s = this.sender(brokerId, "LeaderAndIsr");
    if (s === null) return Promise.resolve();
    const version = LEADER_AND_ISR_VERSION;
    this.enqueue(s, {
      api: LeaderAndIsrApi,
      version,
      body: leaderAndIsrRequest(this.localBrokerId, controllerEpoch, s.info.epoch, topics, liveBrokers, version),
      what: `LeaderAndIsr (controller epoch ${controllerEpoch}, ${countPartitions(topics)} partitions)`,
      read: (body) => {
        const r = decodeLeaderAndIsrResponse(version, body, topics);
        return { brokerId, api: "LeaderAndIsr", errorCode: r.errorCode, partitionErrors: r.partitions.filter((p) => p.errorCode !== 0) };
      },
    });
    return Promise.resolve();
  }

  updateMetadata(
    brokerId: number,
    controllerEpoch: number,
    controllerId: number,
    brokers: BrokerInfo[],
    topics: TopicInfo[],
    deletedTopics: string[],
  ): Promise<void> {
    if (brokerId === this.localBrokerId) {
      return this.local.updateMetadata(brokerId, controllerEpoch, controllerId, brokers, topics, deletedTopics);
    }
    const s = this.sender(brokerId, "UpdateMetadata");
    if (s === null) return Promise.resolve();
    this.enqueue(s, {
      api: UpdateMetadataApi,
      version: UPDATE_METADATA_VERSION,
      body: updateMetadataRequest(controllerId, controllerEpoch, s.info.epoch, brokers, topics, deletedTopics, UPDATE_METADATA_VERSION),
      what: `UpdateMetadata (controller epoch ${controllerEpoch}, ${brokers.length} brokers, ${countPartitions(topics)} partitions, ${deletedTopics.length} deleted topics)`,
      read: (body) => ({ brokerId, api: "UpdateMetadata", errorCode: body.errorCode as number, partitionErrors: [] }),
    });
    return Promise.resolve();
  }

  stopReplica(
    brokerId: number,
    controllerEpoch: number,
    partitions: { topic: string; partition: number }[],
    deletePartitions: boolean,
  ): Promise<void> {
    if (brokerId === this.localBrokerId) return this.local.stopReplica(brokerId, controllerEpoch, partitions, deletePartitions);
    const s = this.sender(brokerId, "StopReplica");
    if (s === null) return Promise.resolve();
    // The channel carries no leader epochs: -1 (unknown) passes the receiver's epoch check, as
    // Kafka's controller's NoEpoch does.
    const parts = partitions.map((p) => ({ topic: p.topic, partition: p.partition, deletePartition: deletePartitions, leaderEpoch: -1 }));
    this.enqueue(s, {
      api: StopReplicaApi,
      version: STOP_REPLICA_VERSION,
      body: stopReplicaRequest(this.localBrokerId, controllerEpoch, s.info.epoch, parts, STOP_REPLICA_VERSION),
      what: `StopReplica (controller epoch ${controllerEpoch}, ${partitions.length} partitions, delete ${deletePartitions})`,
      read: (body) => {
        const r = decodeStopReplicaResponse(body);
        return { brokerId, api: "StopReplica", errorCode: r.errorCode, partitionErrors: r.partitions.filter((p) => p.errorCode !== 0) };
      },
    });
    return Promise.resolve();
  }

  // --- sending -----------------------------------------------------------------------------------

  private sender(brokerId: number, api: string): BrokerSender | null {
    const s = this.senders.get(brokerId);
    if (s === undefined) {
      this.logger.warn({ broker: brokerId, api }, "not sending a controller request to a broker that is not live");
      return null;
    }
    return s;
  }

  private enqueue(s: BrokerSender, r: QueuedRequest): void {
    s.queue.push(r);
    s.wake();
  }

  /** The broker's send loop: the head of the queue, sent until answered or the broker is removed. */
  private async run(s: BrokerSender): Promise<void> {
    const log = this.logger.child({ broker: s.info.id });
    while (!s.stopped) {
      const head = s.queue[0];
      if (head === undefined) {
        await s.wait(this.platform);
        continue;
      }
      let body: Struct;
      try {
        const conn = await this.connection(s);
        if (s.stopped) return;
        body = await conn.request(head.api, head.version, head.body, this.options.requestTimeoutMs);
      } catch (e) {
        if (s.stopped) return;
        s.conn?.close(`send failed: ${(e as Error).message}`);
        s.conn = null;
        const fields = { endpoint: `${s.info.host}:${s.info.port}`, request: head.what, failures: s.failures + 1, err: (e as Error).message };
        if (s.failures++ === 0) log.warn(fields, "controller request to broker failed; retrying");
        else log.debug(fields, "controller request to broker failed again; retrying");
        await s.wait(this.platform, this.options.backoffMs);
        continue;
      }
      if (s.stopped) return;
      if (s.failures > 0) log.info({ failures: s.failures }, "controller requests to broker flowing again");
      s.failures = 0;
      s.queue.shift();
      this.onAnswer(log, head, body);
      this.notifyDrain();
    }
  }

  private async connection(s: BrokerSender): Promise<KafkaConnection> {
    if (s.conn !== null && !s.conn.closed) return s.conn;
    const conn = await KafkaConnection.connect(this.platform, {
      host: s.info.host,
      port: s.info.port,
      clientId: `strand-controller-${this.localBrokerId}`,
      connectTimeoutMs: this.options.connectTimeoutMs ?? this.options.requestTimeoutMs,
      sasl: this.options.sasl,
      tls: this.options.tls,
    });
    if (s.stopped) {
      conn.close("broker removed from the controller's channel");
      return conn;
    }
    s.conn = conn;
    return conn;
  }

  private onAnswer(log: Logger, head: QueuedRequest, body: Struct): void {
    let r: ControlResponse;
    try {
      r = head.read(body);
    } catch (e) {
      log.error({ request: head.what, err: (e as Error).message }, "controller request's answer could not be read");
      return;
    }
    if (r.errorCode !== ErrorCode.NONE) {
      log.error({ request: head.what, error: errorName(r.errorCode) }, "broker refused a controller request");
    }
    if (r.partitionErrors.length > 0) {
      const sample = r.partitionErrors.slice(0, 10).map((p) => `${p.topic}-${p.partition}: ${errorName(p.errorCode)}`);
      log.error({ request: head.what, partitionErrors: r.partitionErrors.length, sample }, "broker answered a controller request with partition errors");
    }
    try {
      this.options.onResponse?.(r);
    } catch (e) {
      log.error({ request: head.what, err: (e as Error).message }, "controller response listener threw");
    }
  }
}

function countPartitions(topics: TopicInfo[]): number {
  let n = 0;
  for (const t of topics) n += t.partitions.length;
  return n;
}
