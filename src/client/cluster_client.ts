// ClusterClient: what a client tool needs to talk to a whole cluster rather than one broker. It
// starts from bootstrap servers, learns the cluster from Metadata (brokers, controller, topics,
// partition leaders), keeps one KafkaConnection per broker, and routes requests to the right
// one: partition leaders, the controller, a group's coordinator, or any broker.
//
// Invariants:
// - Connections are made lazily, one per endpoint, and replaced when found closed. A failed
//   connect is not cached: the next call tries again.
// - Every operation that can hit a moved leader or a broker that went away is retried a bounded
//   number of times (`retries`, `retryBackoffMs` apart), refreshing metadata in between; what
//   still fails reaches the caller as one ClientError with a one-line message that names the
//   broker or partition and Kafka's error name.
// - Versions are negotiated per connection (ApiVersions, cached by KafkaConnection), capped by
//   what each caller can build; bodies are built for the negotiated version.
// - Nothing here touches runtime APIs: sockets and timers come from the Platform.
import type { Platform, TlsClientOptions } from "../platform/mod.ts";
import { type ApiSchema, MetadataApi, type Struct } from "../protocol/mod.ts";
import { ErrorCode, errorName, uuidToBase64, zeroUuid } from "../util/mod.ts";
import { KafkaConnection, KafkaConnectionError, type SaslCredentials } from "./connection.ts";

/** An expected failure, told to the user in one line. `errorCode` is Kafka's when one caused it. */
export class ClientError extends Error {
  override name = "ClientError";
  constructor(message: string, readonly errorCode: number | null = null) {
    super(message);
  }
}

/** A failure worth another try after a metadata refresh (moved leader, broker restart, timeout). */
export class RetriableError extends ClientError {
  override name = "RetriableError";
}

/** Kafka's retriable error codes that a refresh of metadata (or a short wait) can cure. */
const retriableCodes = new Set<number>([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.REQUEST_TIMED_OUT,
  ErrorCode.NETWORK_EXCEPTION,
  ErrorCode.NOT_ENOUGH_REPLICAS,
  ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.NOT_CONTROLLER,
  ErrorCode.REPLICA_NOT_AVAILABLE,
  ErrorCode.OFFSET_NOT_AVAILABLE,
]);

export function isRetriableCode(code: number): boolean {
  return retriableCodes.has(code);
}

/** Codes after which the routing (leader, coordinator, controller) is stale. */
export function needsMetadataRefresh(code: number): boolean {
  return code === ErrorCode.NOT_LEADER_OR_FOLLOWER || code === ErrorCode.LEADER_NOT_AVAILABLE ||
    code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION || code === ErrorCode.FENCED_LEADER_EPOCH ||
    code === ErrorCode.UNKNOWN_LEADER_EPOCH || code === ErrorCode.NOT_COORDINATOR ||
    code === ErrorCode.NOT_CONTROLLER || code === ErrorCode.KAFKA_STORAGE_ERROR;
}

/** A ClientError for a Kafka error code: retriable or not, with the code's name in the message. */
export function errorFor(code: number, context: string, message: string | null = null): ClientError {
  const text = `${context}: ${errorName(code)}${message ? ` (${message})` : ""}`;
  return isRetriableCode(code) ? new RetriableError(text, code) : new ClientError(text, code);
}

export interface HostPort {
  host: string;
  port: number;
}

/** "host:port[,host:port...]" (IPv6 as [addr]:port), as Kafka's --bootstrap-server takes it. */
export function parseBootstrapServers(text: string): HostPort[] {
  const out: HostPort[] = [];
  for (const raw of text.split(",")) {
    const s = raw.trim();
    if (s === "") continue;
    const m = /^\[([^\]]+)\]:(\d+)$/.exec(s) ?? /^([^:\s]+):(\d+)$/.exec(s);
    const port = m === null ? NaN : Number(m[2]);
    if (m === null || !Number.isInteger(port) || port < 1 || port > 65535) {
      throw new ClientError(`bad bootstrap server "${s}": expected host:port`);
    }
    out.push({ host: m[1], port });
  }
  if (out.length === 0) throw new ClientError("no bootstrap server given");
  return out;
}

export interface BrokerNode {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
}

export interface PartitionInfo {
  partition: number;
  /** -1 when the partition has no leader now. */
  leader: number;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
  offline: number[];
  errorCode: number;
}

export interface TopicInfo {
  name: string;
  /** The topic id as Kafka prints it (URL-safe base64, as kafka-topics.sh shows it). */
  topicId: string;
  isInternal: boolean;
  errorCode: number;
  /** Sorted by partition index. */
  partitions: PartitionInfo[];
}

export interface ClusterMetadata {
  clusterId: string | null;
  controllerId: number;
  brokers: Map<number, BrokerNode>;
  topics: Map<string, TopicInfo>;
}

export interface ClusterClientOptions {
  bootstrap: HostPort[];
  clientId?: string;
  /** How long one request may wait for its answer (Kafka's request.timeout.ms). */
  requestTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** Tries after the first for a retriable failure. */
  retries?: number;
  retryBackoffMs?: number;
  /** Every connection logs in with these (a SASL_PLAINTEXT or SASL_SSL listener). */
  sasl?: SaslCredentials;
  /** Every connection speaks TLS with these (an SSL or SASL_SSL listener). */
  tls?: TlsClientOptions;
}

export const requestTimeoutMsDefault = 30_000;
/** Tries after the first for a retriable failure (a leader moving takes a few). */
export const retriesDefault = 8;
/** Pause before the first retry; later ones wait longer, up to ten times this. */
export const retryBackoffMsDefault = 100;

/** The highest Metadata version this client builds and reads. */
const metadataVersionMax = 12;

export class ClusterClient {
  readonly requestTimeoutMs: number;
  readonly retries: number;
  readonly retryBackoffMs: number;
  private readonly clientId: string;
  private readonly connectTimeoutMs: number | undefined;
  private readonly sasl: SaslCredentials | undefined;
  private readonly tls: TlsClientOptions | undefined;
  private readonly bootstrap: HostPort[];
  private readonly conns = new Map<string, Promise<KafkaConnection>>();
  private closed = false;
  /** The last metadata learned (for every topic asked so far; brokers and controller as of then). */
  metadata: ClusterMetadata = { clusterId: null, controllerId: -1, brokers: new Map(), topics: new Map() };

  constructor(readonly platform: Platform, opts: ClusterClientOptions) {
    this.bootstrap = opts.bootstrap;
    this.clientId = opts.clientId ?? "strand-cli";
    this.requestTimeoutMs = opts.requestTimeoutMs ?? requestTimeoutMsDefault;
    this.connectTimeoutMs = opts.connectTimeoutMs;
    this.sasl = opts.sasl;
    this.tls = opts.tls;
    this.retries = opts.retries ?? retriesDefault;
    this.retryBackoffMs = opts.retryBackoffMs ?? retryBackoffMsDefault;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.platform.clock.setTimeout(resolve, ms));
  }

  /** The connection to host:port, made now if there is none open. */
  connectTo(hp: HostPort): Promise<KafkaConnection> {
    if (this.closed) return Promise.reject(new ClientError("client closed"));
    const key = `${hp.host}:${hp.port}`;
    const existing = this.conns.get(key);
    if (existing !== undefined) {
      return existing.then((c) => (c.closed ? this.reconnect(key, hp) : c));
    }
    return this.reconnect(key, hp);
  }

  private reconnect(key: string, hp: HostPort): Promise<KafkaConnection> {
    const p = KafkaConnection.connect(this.platform, {
      host: hp.host,
      port: hp.port,
      clientId: this.clientId,
      connectTimeoutMs: this.connectTimeoutMs,
      sasl: this.sasl,
      tls: this.tls,
    });
    this.conns.set(key, p);
    p.catch(() => {
      if (this.conns.get(key) === p) this.conns.delete(key);
    });
    return p.then((c) => {
      if (this.closed) c.close("client closed");
      return c;
    }, (e) => {
      // KafkaConnection's message repeats the platform's "connect to X failed: " prefix.
      throw new RetriableError((e as Error).message.replace(/^(connect to \S+ failed: )\1/, "$1"));
    });
  }

  /** The connection to a broker known from metadata. */
  brokerConnection(nodeId: number): Promise<KafkaConnection> {
    const b = this.metadata.brokers.get(nodeId);
    if (b === undefined) return Promise.reject(new RetriableError(`broker ${nodeId} is not in the cluster's metadata`));
    return this.connectTo(b);
  }

  /**
   * A connection to some broker: one already open, else each known broker and then each
   * bootstrap server in turn. Fails, naming every endpoint tried, when none answers.
   */
  async anyConnection(): Promise<KafkaConnection> {
    for (const p of this.conns.values()) {
      const c = await p.catch(() => null);
      if (c !== null && !c.closed) return c;
    }
    const tried: string[] = [];
    const candidates = [...this.metadata.brokers.values(), ...this.bootstrap];
    for (const hp of candidates) {
      try {
        return await this.connectTo(hp);
      } catch (e) {
        tried.push((e as Error).message);
      }
    }
    throw new RetriableError(`cannot reach any broker: ${[...new Set(tried)].join("; ")}`);
  }

  /**
   * One request on `conn` at the highest version both sides speak (at most `maxVersion`), with
   * the body built for that version. Connection failures become RetriableErrors.
   */
  async call(
    conn: KafkaConnection,
    api: ApiSchema,
    maxVersion: number,
    body: (version: number) => Struct,
    timeoutMs = this.requestTimeoutMs,
  ): Promise<{ version: number; res: Struct }> {
    try {
      const version = await conn.negotiateVersion(api, maxVersion, timeoutMs);
      const res = await conn.request(api, version, body(version), timeoutMs);
      return { version, res };
    } catch (e) {
      if (e instanceof KafkaConnectionError) {
        // Our versions and theirs do not overlap: no retry will change that.
        if (/does not implement|speaks v/.test(e.message)) throw new ClientError(e.message);
        throw new RetriableError(e.message);
      }
      throw e;
    }
  }

  /**
   * Runs fn until it succeeds, retrying RetriableErrors up to `retries` times with a metadata
   * refresh (of `topics`, or only brokers when none) and a backoff in between.
   */
  async retrying<T>(fn: (attempt: number) => Promise<T>, topics: string[] = []): Promise<T> {
    for (let attempt = 0;; attempt++) {
      try {
        return await fn(attempt);
      } catch (e) {
        if (!(e instanceof RetriableError) || attempt >= this.retries || this.closed) throw e;
        await this.sleep(this.retryBackoffMs * Math.min(attempt + 1, 10));
        await this.refreshMetadata(topics).catch(() => {});
      }
    }
  }

  /**
   * Metadata for `topics` (null: every topic) from any broker, merged into `metadata`.
   * autoCreate asks the broker to create unknown topics (as a producer's Metadata does).
   */
  async refreshMetadata(topics: string[] | null, autoCreate = false): Promise<ClusterMetadata> {
    const conn = await this.anyConnection();
    const { version, res } = await this.call(conn, MetadataApi, metadataVersionMax, (v) => ({
      topics: topics === null ? (v === 0 ? [] : null) : topics.map((name) => ({ topicId: zeroUuid, name })),
      allowAutoTopicCreation: autoCreate,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    }));
    const brokers = new Map<number, BrokerNode>();
    for (const b of res.brokers as { nodeId: number; host: string; port: number; rack: string | null }[]) {
      brokers.set(b.nodeId, { nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack ?? null });
    }
    const md = this.metadata;
    md.brokers = brokers;
    md.clusterId = version >= 2 ? (res.clusterId as string | null) : null;
    md.controllerId = version >= 1 ? (res.controllerId as number) : -1;
    if (topics === null) md.topics = new Map();
    for (const t of res.topics as Struct[]) {
      const name = t.name as string | null;
      if (name === null) continue;
      const partitions = (t.partitions as Struct[]).map((p): PartitionInfo => ({
        partition: p.partitionIndex as number,
        leader: p.leaderId as number,
        leaderEpoch: (p.leaderEpoch as number | undefined) ?? -1,
        replicas: p.replicaNodes as number[],
        isr: p.isrNodes as number[],
        offline: (p.offlineReplicas as number[] | undefined) ?? [],
        errorCode: p.errorCode as number,
      })).sort((a, b) => a.partition - b.partition);
      md.topics.set(name, {
        name,
        topicId: t.topicId instanceof Uint8Array ? uuidToBase64(t.topicId) : "",
        isInternal: (t.isInternal as boolean | undefined) ?? false,
        errorCode: t.errorCode as number,
        partitions,
      });
    }
    return md;
  }

  /**
   * The topic's metadata, retried while the topic or its leaders are not ready yet; fails with
   * UNKNOWN_TOPIC_OR_PARTITION once retries are spent (or at once for a non-retriable error).
   */
  async topicMetadata(topic: string, autoCreate = false): Promise<TopicInfo> {
    try {
      return await this.topicMetadataRetrying(topic, autoCreate);
    } catch (e) {
      // Still unknown after every retry: the broker does not create topics on use.
      if (e instanceof ClientError && e.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
        throw new ClientError(`topic "${topic}" does not exist`, e.errorCode);
      }
      throw e;
    }
  }

  private async topicMetadataRetrying(topic: string, autoCreate: boolean): Promise<TopicInfo> {
    return await this.retrying(async () => {
      const md = await this.refreshMetadata([topic], autoCreate);
      const t = md.topics.get(topic);
      if (t === undefined) throw new RetriableError(`topic ${topic}: not in the metadata answer`);
      if (t.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION && !autoCreate) {
        throw new ClientError(`topic "${topic}" does not exist`, t.errorCode);
      }
      if (t.errorCode !== ErrorCode.NONE) throw errorFor(t.errorCode, `topic ${topic}`);
      return t;
    });
  }

  /** The controller's connection (Kafka sends topic creation and deletion there). */
  async controllerConnection(): Promise<KafkaConnection> {
    if (this.metadata.controllerId < 0 || !this.metadata.brokers.has(this.metadata.controllerId)) {
      await this.refreshMetadata([]);
    }
    const id = this.metadata.controllerId;
    if (id < 0) throw new RetriableError("the cluster has no controller now");
    return await this.brokerConnection(id);
  }

  /** Closes every connection; requests in flight fail. */
  close(): void {
    this.closed = true;
    for (const p of this.conns.values()) p.then((c) => c.close("client closed"), () => {});
    this.conns.clear();
  }
}
