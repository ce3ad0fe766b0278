// Producer: records in, acknowledged offsets out, as Kafka's producer does it (idempotence optional,
// see below). Records accumulate per partition in ProducerBatches; a batch closes when it
// reaches batchSizeBytes or has waited lingerMs; closed batches go to each partition's leader,
// one batch per partition per Produce request, with up to maxInFlightPerBroker requests
// pipelined on the leader's connection, so throughput is not bound by round trips.
//
// Invariants:
// - Per partition, batches are sent in the order they closed, and on one connection, which a
//   broker answers in order: without failures, a partition's records are appended in send order.
//   A batch that fails with a retriable error (moved leader, timeout, broken connection) goes back
//   in front of its partition's queue by sequence, after a metadata refresh and a backoff; batches
//   that were in flight behind it may land first (as in Kafka with max.in.flight > 1 and no
//   idempotence).
// - Every record's callback is called exactly once: with its offset, or with the error that
//   ended its batch (non-retriable, or retries spent, or deliveryTimeoutMs passed).
// - Buffered bytes (records not yet acknowledged) are counted; `waitForSpace` lets a caller stop
//   at bufferMemoryBytes instead of growing without bound.
// - With `idempotence` (Kafka's enable.idempotence): an id from InitProducerId, and each batch
//   stamped with it and its partition's next sequence when first sent, so a broker answers a
//   retry of a batch it already has with the original offset instead of writing it twice. One
//   batch per partition is in flight (a retry is then always the next batch sent, so sequences
//   stay in order without Kafka's in-flight bookkeeping). A batch that fails for good leaves a
//   gap in its partition's sequences: the producer takes a new id, and sequences start again.
// - Keyed records without an explicit partition go where Kafka's Java client puts them (murmur2);
//   unkeyed ones stick to one partition until its batch closes (Kafka's sticky partitioner).
import { InitProducerIdApi, ProduceApi, type RecordHeader, type Struct } from "../protocol/mod.ts";
import { randomBelow, type Timer } from "../platform/mod.ts";
import { clientPooledFrameBytesMin, ErrorCode, errorName, producerSpareBuffersMax } from "../util/mod.ts";
import { ClientError, type ClusterClient, errorFor, isRetriableCode, needsMetadataRefresh, RetriableError, type TopicInfo } from "./cluster_client.ts";
import type { KafkaConnection } from "./connection.ts";
import { partitionForKey } from "./partitioner.ts";
import { type DeliveryCallback, ProducerBatch } from "./producer_batch.ts";

export type { DeliveryCallback };

export interface ProducerOptions {
  /** 0 (no answer), 1 (the leader), -1 (every in-sync replica). */
  acks: number;
  /** protocol Compression: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd. */
  compression: number;
  batchSizeBytes: number;
  lingerMs: number;
  maxInFlightPerBroker: number;
  /** Records buffered and not yet acknowledged, in bytes, before waitForSpace() waits. */
  bufferMemoryBytes: number;
  /** Longest a record may take from send() to its acknowledgement, retries included. */
  deliveryTimeoutMs: number;
  /** Kafka's enable.idempotence: retries never write a batch twice (needs acks -1). */
  idempotence: boolean;
}

export const producerDefaults: ProducerOptions = {
  acks: -1,
  compression: 0,
  batchSizeBytes: 16_384,
  lingerMs: 5,
  maxInFlightPerBroker: 5,
  bufferMemoryBytes: 32 * 1024 * 1024,
  deliveryTimeoutMs: 120_000,
  idempotence: false,
};

export interface ProducerRecord {
  topic: string;
  /** Absent or null: chosen by the partitioner. */
  partition?: number | null;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers?: RecordHeader[];
  /** Defaults to now. */
  timestampMs?: number;
}

/** Lowest Produce version that carries record batch v2, and the highest built here. */
const produceVersionMin = 3;
const produceVersionMax = 9;

interface PartitionQueue {
  topic: string;
  partition: number;
  open: ProducerBatch | null;
  lingerTimer: Timer | null;
  /** Closed batches waiting to be sent, by sequence. */
  ready: ProducerBatch[];
  nextSequence: number;
  /** Not sent to before this time (monotonic ms): a retry's backoff. */
  retryAtMs: number;
  /** Waits for a metadata refresh before sending again. */
  waitingMetadata: boolean;
  /** Idempotence: the next batch's first sequence, and whether one of its batches is in flight. */
  nextRecordSequence: number;
  inFlight: boolean;
}

interface BrokerSender {
  conn: KafkaConnection | null;
  connecting: boolean;
  version: number;
  inFlight: number;
}

export class Producer {
  readonly opts: ProducerOptions;
  private readonly topics = new Map<string, TopicInfo>();
  private readonly queues = new Map<string, PartitionQueue>();
  private readonly queuesByTopic = new Map<string, PartitionQueue[]>();
  /** Queues that may hold ready batches: drain() visits these, not every partition's queue. */
  private readonly readyQueues = new Set<PartitionQueue>();
  /** Buffers of large batches that are done, for the next ones (see done()). */
  private readonly spareBuffers: Uint8Array[] = [];
  private readonly senders = new Map<number, BrokerSender>();
  private readonly sticky = new Map<string, number>();
  private buffered = 0;
  private pendingRecords = 0;
  private spaceWaiters: (() => void)[] = [];
  private progressWaiters: (() => void)[] = [];
  private idleWaiters: (() => void)[] = [];
  private refreshing = false;
  private refreshFailures = 0;
  private drainTimer: Timer | null = null;
  private closed = false;
  /** Idempotence: the producer id and epoch (null while one is being taken), and its generation. */
  private producerId: { id: bigint; epoch: number } | null = null;
  private generation = 0;
  private initializing: Promise<void> | null = null;

  constructor(private readonly cluster: ClusterClient, opts: Partial<ProducerOptions> = {}) {
    this.opts = { ...producerDefaults, ...opts };
    if (this.opts.idempotence && this.opts.acks !== -1) throw new ClientError("idempotence needs acks -1 (all)");
  }

  /** Learns a topic's partitions (creating it when the broker auto-creates topics); needed before send(). */
  async prepareTopic(topic: string): Promise<TopicInfo> {
    if (this.opts.idempotence) await this.takeProducerId();
    const t = await this.cluster.topicMetadata(topic, true);
    this.topics.set(topic, t);
    return t;
  }

  /** Records sent and not yet acknowledged, in bytes. */
  get bufferedBytes(): number {
    return this.buffered;
  }

  /** Resolves once buffered bytes are below bufferMemoryBytes. */
  waitForSpace(): Promise<void> {
    if (this.buffered < this.opts.bufferMemoryBytes) return Promise.resolve();
    return new Promise((resolve) => this.spaceWaiters.push(resolve));
  }

  /**
   * True when closed batches wait because a leader has maxInFlightPerBroker requests in flight:
   * nothing more is sent until an answer is read, which needs the event loop. A loop sending
   * records without awaiting anything should then waitForProgress().
   */
  get sendBlocked(): boolean {
    for (const q of this.readyQueues) {
      if (q.ready.length === 0) continue;
      const s = this.senders.get(this.leaderOf(q));
      if (s !== undefined && s.inFlight >= this.opts.maxInFlightPerBroker) return true;
    }
    return false;
  }

  /**
   * Resolves when the next batch is done (acknowledged or failed), at once when nothing is
   * buffered: resumes a sending loop as soon as an answer was read, without a timer (Deno's
   * cost 1-4 ms each).
   */
  waitForProgress(): Promise<void> {
    if (this.buffered === 0) return Promise.resolve();
    return new Promise((resolve) => this.progressWaiters.push(resolve));
  }

  /**
   * Queues one record. Its callback (optional) is called once it is acknowledged or has failed.
   * Throws a ClientError only for a programmer-visible mistake: an unprepared topic or a
   * partition the topic does not have.
   */
  send(rec: ProducerRecord, cb?: DeliveryCallback): void {
    if (this.closed) throw new ClientError("producer closed");
    const t = this.topics.get(rec.topic);
    if (t === undefined) throw new ClientError(`topic ${rec.topic} was not prepared`);
    const count = t.partitions.length;
    let partition: number;
    if (rec.partition !== undefined && rec.partition !== null) {
      partition = rec.partition;
      if (!Number.isInteger(partition) || partition < 0 || partition >= count) {
        throw new ClientError(`topic "${rec.topic}" has ${count} partitions; there is no partition ${partition}`, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      }
    } else if (rec.key !== null) {
      partition = partitionForKey(rec.key, count);
    } else {
      partition = this.stickyPartition(t);
    }
    const q = this.queue(rec.topic, partition);
    const headers = rec.headers ?? [];
    const bytes = ProducerBatch.recordBytes(rec.key, rec.value, headers);
    if (q.open !== null && q.open.sizeBytes + bytes > this.opts.batchSizeBytes) {
      // A full batch goes now, as Kafka's accumulator wakes its sender: its linger timer is
      // cancelled with it, so nothing else would send it before the next batch's timer fires,
      // and a producer that fills each batch within lingerMs would never send until it stopped.
      this.closeBatch(q);
      this.drain();
    }
    if (q.open === null) this.open(q);
    const b = q.open as ProducerBatch;
    const before = b.sizeBytes;
    b.append(rec.timestampMs ?? this.cluster.platform.clock.nowMs(), rec.key, rec.value, headers, cb);
    this.adjust(b.sizeBytes - before);
    this.pendingRecords++;
    if (b.sizeBytes >= this.opts.batchSizeBytes) {
      this.closeBatch(q);
      this.drain();
    }
  }

  /** Sends everything buffered now (ignoring linger) and resolves once every record has its answer. */
  flush(): Promise<void> {
    for (const q of this.queues.values()) if (q.open !== null) this.closeBatch(q);
    this.drain();
    if (this.pendingRecords === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Flushes, then stops; the ClusterClient stays open for its owner to close. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    this.drainTimer?.cancel();
  }

  // --- accumulating ------------------------------------------------------------------------------

  private queue(topic: string, partition: number): PartitionQueue {
    // Per record: an array lookup rather than a string key.
    let byPartition = this.queuesByTopic.get(topic);
    if (byPartition === undefined) {
      byPartition = [];
      this.queuesByTopic.set(topic, byPartition);
    }
    let q = byPartition[partition];
    if (q === undefined) {
      q = {
        topic,
        partition,
        open: null,
        lingerTimer: null,
        ready: [],
        nextSequence: 0,
        retryAtMs: 0,
        waitingMetadata: false,
        nextRecordSequence: 0,
        inFlight: false,
      };
      byPartition[partition] = q;
      this.queues.set(`${topic}:${partition}`, q);
    }
    return q;
  }

  private stickyPartition(t: TopicInfo): number {
    const current = this.sticky.get(t.name);
    if (current !== undefined) return current;
    const live = t.partitions.filter((p) => p.leader >= 0).map((p) => p.partition);
    const choices = live.length > 0 ? live : t.partitions.map((p) => p.partition);
    const p = choices[randomBelow(this.cluster.platform, choices.length)];
    this.sticky.set(t.name, p);
    return p;
  }

  private open(q: PartitionQueue): void {
    const b = new ProducerBatch(q.topic, q.partition, this.batchBufferBytes(), this.spareBuffers.pop() ?? null);
    b.createdMs = this.cluster.platform.clock.monotonicMs();
    this.adjust(b.sizeBytes);
    q.open = b;
    q.lingerTimer = this.cluster.platform.clock.setTimeout(() => {
      q.lingerTimer = null;
      if (q.open === b) {
        this.closeBatch(q);
        this.drain();
      }
    }, this.opts.lingerMs);
  }

  private closeBatch(q: PartitionQueue): void {
    const b = q.open;
    if (b === null) return;
    q.open = null;
    q.lingerTimer?.cancel();
    q.lingerTimer = null;
    const before = b.sizeBytes;
    const built = b.build(this.opts.compression);
    b.sequence = q.nextSequence++;
    q.ready.push(b);
    this.readyQueues.add(q);
    // From now on the batch holds its built bytes (compression usually shrinks them).
    this.adjust(built.length - before);
    if (this.sticky.get(q.topic) === q.partition) this.sticky.delete(q.topic);
  }

  // --- sending -----------------------------------------------------------------------------------

  /** Sends what is ready to every leader with room for another request in flight. */
  private drain(): void {
    if (this.closed) return;
    if (this.opts.idempotence && this.producerId === null) return; // takeProducerId drains once it has one
    const now = this.cluster.platform.clock.monotonicMs();
    let wakeAt = Infinity;
    const byLeader = new Map<number, PartitionQueue[]>();
    for (const q of this.readyQueues) {
      this.expire(q, now);
      if (q.ready.length === 0) {
        this.readyQueues.delete(q);
        continue;
      }
      if (q.waitingMetadata) continue;
      if (q.retryAtMs > now) {
        wakeAt = Math.min(wakeAt, q.retryAtMs);
        continue;
      }
      const leader = this.leaderOf(q);
      if (leader < 0) {
        q.waitingMetadata = true;
        this.refresh();
        continue;
      }
      const list = byLeader.get(leader);
      if (list === undefined) byLeader.set(leader, [q]);
      else list.push(q);
    }
    for (const [leader, qs] of byLeader) this.sendTo(leader, qs);
    if (wakeAt !== Infinity && this.drainTimer === null) {
      this.drainTimer = this.cluster.platform.clock.setTimeout(() => {
        this.drainTimer = null;
        this.drain();
      }, Math.max(1, wakeAt - now));
    }
  }

  private leaderOf(q: PartitionQueue): number {
    const partitions = this.topics.get(q.topic)?.partitions;
    if (partitions === undefined) return -1;
    // Sorted by index and usually dense: a direct look first, then a search (O(P) per queue made
    // every drain O(P^2) with many partitions).
    const direct = partitions[q.partition];
    if (direct !== undefined && direct.partition === q.partition) return direct.leader;
    return partitions.find((p) => p.partition === q.partition)?.leader ?? -1;
  }

  private sendTo(leader: number, qs: PartitionQueue[]): void {
    let s = this.senders.get(leader);
    if (s === undefined) {
      s = { conn: null, connecting: false, version: -1, inFlight: 0 };
      this.senders.set(leader, s);
    }
    if (s.conn !== null && s.conn.closed) s.conn = null;
    if (s.conn === null) {
      if (!s.connecting) void this.connect(leader, s);
      return;
    }
    while (s.inFlight < this.opts.maxInFlightPerBroker) {
      const batches: ProducerBatch[] = [];
      for (const q of qs) {
        if (this.opts.idempotence && q.inFlight) continue;
        const b = q.ready.shift();
        if (b === undefined) continue;
        if (this.opts.idempotence) this.stampForSend(q, b);
        batches.push(b);
      }
      if (batches.length === 0) return;
      this.request(leader, s, s.conn, batches);
    }
  }

  private async connect(leader: number, s: BrokerSender): Promise<void> {
    s.connecting = true;
    try {
      const conn = await this.cluster.brokerConnection(leader);
      const v = await conn.negotiateVersion(ProduceApi, produceVersionMax, this.cluster.requestTimeoutMs);
      if (v < produceVersionMin) throw new ClientError(`${conn.endpoint} speaks Produce up to v${v}; record batch v2 needs v3`);
      s.conn = conn;
      s.version = v;
    } catch (e) {
      s.conn = null;
      const err = e instanceof ClientError && !(e instanceof RetriableError) ? e : new RetriableError((e as Error).message);
      // Every queue led by this broker takes the failure as one try.
      for (const q of this.queues.values()) {
        if (this.leaderOf(q) === leader) this.retryOrFail(q, q.ready.splice(0), err);
      }
      this.refresh();
    } finally {
      s.connecting = false;
    }
    this.drain();
  }

  private request(leader: number, s: BrokerSender, conn: KafkaConnection, batches: ProducerBatch[]): void {
    const byTopic = new Map<string, ProducerBatch[]>();
    for (const b of batches) {
      const list = byTopic.get(b.topic);
      if (list === undefined) byTopic.set(b.topic, [b]);
      else list.push(b);
    }
    const body: Struct = {
      transactionalId: null,
      acks: this.opts.acks,
      timeoutMs: this.cluster.requestTimeoutMs,
      topicData: [...byTopic].map(([name, list]) => ({
        name,
        partitionData: list.map((b) => ({ index: b.partition, records: b.built })),
      })),
    };
    s.inFlight++;
    const queues = this.opts.idempotence ? batches.map((b) => this.queue(b.topic, b.partition)) : [];
    for (const q of queues) q.inFlight = true;
    let sizeHint = 64;
    for (const b of batches) sizeHint += b.built!.length + b.topic.length + 16;
    conn.request(ProduceApi, s.version, body, this.cluster.requestTimeoutMs + 5_000, { sizeHint }).then(
      (res) => this.onResponse(batches, res),
      (e) => {
        if (s.conn === conn) s.conn = null;
        const err = new RetriableError(`produce to broker ${leader} failed: ${(e as Error).message}`);
        this.requeue(batches, err);
        this.refresh();
      },
    ).finally(() => {
      s.inFlight--;
      for (const q of queues) q.inFlight = false;
      this.drain();
    });
  }

  // --- idempotence -------------------------------------------------------------------------------

  /** Takes a producer id (InitProducerId, retried as any request), unless one is being taken. */
  private takeProducerId(): Promise<void> {
    if (this.producerId !== null) return Promise.resolve();
    this.initializing ??= this.cluster.retrying(async () => {
      const conn = await this.cluster.anyConnection();
      const { res } = await this.cluster.call(conn, InitProducerIdApi, 4, () => ({
        transactionalId: null,
        transactionTimeoutMs: 60_000,
        producerId: -1n,
        producerEpoch: -1,
      }));
      const code = res.errorCode as number;
      if (code !== ErrorCode.NONE) throw errorFor(code, "InitProducerId");
      return { id: res.producerId as bigint, epoch: res.producerEpoch as number };
    }).then((pid) => {
      this.producerId = pid;
      this.generation++;
      for (const q of this.queues.values()) q.nextRecordSequence = 0;
    }).finally(() => {
      this.initializing = null;
      this.drain();
    });
    return this.initializing;
  }

  /**
   * Stamps a batch about to be sent with the producer id and its partition's next sequence, unless
   * it carries this id already (a retry keeps its sequence: the broker then knows it).
   */
  private stampForSend(q: PartitionQueue, b: ProducerBatch): void {
    const pid = this.producerId!;
    if (b.stampedGeneration === this.generation) return;
    b.stamp(pid.id, pid.epoch, q.nextRecordSequence);
    b.stampedGeneration = this.generation;
    // int32 sequences wrap to 0, as Kafka's.
    q.nextRecordSequence = (q.nextRecordSequence + b.count) % 2147483648;
  }

  /** A stamped batch failed for good: its sequences are a gap the broker would refuse after. */
  private sequenceBroken(b: ProducerBatch): void {
    if (!this.opts.idempotence || b.stampedGeneration !== this.generation || this.producerId === null) return;
    this.producerId = null;
    this.takeProducerId().catch((e: unknown) => {
      // No id to be had: what waits fails now rather than at its delivery timeout.
      const err = e instanceof Error ? e : new Error(String(e));
      for (const q of this.queues.values()) for (const x of q.ready.splice(0)) this.fail(x, err);
    });
  }

  private onResponse(batches: ProducerBatch[], res: Struct): void {
    if (this.opts.acks === 0) {
      for (const b of batches) this.complete(b, -1);
      return;
    }
    const answers = new Map<string, Struct>();
    for (const t of res.responses as Struct[]) {
      for (const p of t.partitionResponses as Struct[]) answers.set(`${t.name}:${p.index}`, p);
    }
    let refresh = false;
    for (const b of batches) {
      const p = answers.get(`${b.topic}:${b.partition}`);
      const code = p === undefined ? ErrorCode.UNKNOWN_SERVER_ERROR : (p.errorCode as number);
      if (code === ErrorCode.NONE) {
        this.complete(b, Number(p!.baseOffset as bigint));
        continue;
      }
      const where = `produce to ${b.topic}-${b.partition}`;
      const message = (p?.errorMessage as string | null | undefined) ?? null;
      const text = `${where}: ${errorName(code)}${message ? ` (${message})` : ""}`;
      if (isRetriableCode(code)) {
        refresh ||= needsMetadataRefresh(code);
        this.requeue([b], new RetriableError(text, code));
      } else {
        this.fail(b, new ClientError(text, code));
      }
    }
    if (refresh) this.refresh();
  }

  private requeue(batches: ProducerBatch[], err: ClientError): void {
    for (const b of batches) {
      const q = this.queue(b.topic, b.partition);
      this.retryOrFail(q, [b], err);
    }
  }

  /** Each batch gets another try (in sequence order, after a backoff) or fails for good. */
  private retryOrFail(q: PartitionQueue, batches: ProducerBatch[], err: ClientError): void {
    const now = this.cluster.platform.clock.monotonicMs();
    for (const b of batches) {
      b.attempts++;
      const expired = now - b.createdMs > this.opts.deliveryTimeoutMs;
      // Retriable failures are retried until deliveryTimeoutMs (a leader's failover takes a
      // session timeout and an election); a cluster nobody can reach at all ends sooner, when
      // metadata refreshes keep failing (refresh()).
      if (!(err instanceof RetriableError) || expired) {
        this.fail(b, err);
        continue;
      }
      let i = 0;
      while (i < q.ready.length && q.ready[i].sequence < b.sequence) i++;
      q.ready.splice(i, 0, b);
      this.readyQueues.add(q);
      q.retryAtMs = now + this.cluster.retryBackoffMs * Math.min(b.attempts, 10);
    }
  }

  private expire(q: PartitionQueue, now: number): void {
    while (q.ready.length > 0 && now - q.ready[0].createdMs > this.opts.deliveryTimeoutMs) {
      const b = q.ready.shift() as ProducerBatch;
      this.fail(b, new ClientError(`produce to ${b.topic}-${b.partition}: not acknowledged within ${this.opts.deliveryTimeoutMs} ms`, ErrorCode.REQUEST_TIMED_OUT));
    }
  }

  /** Refreshes the metadata of every topic in use (one refresh at a time), then sends again. */
  private refresh(): void {
    if (this.refreshing || this.closed) return;
    this.refreshing = true;
    const topics = [...this.topics.keys()];
    void (async () => {
      try {
        await this.cluster.sleep(this.cluster.retryBackoffMs);
        const md = await this.cluster.refreshMetadata(topics, true);
        for (const name of topics) {
          const t = md.topics.get(name);
          if (t !== undefined && t.errorCode === ErrorCode.NONE && t.partitions.length > 0) this.topics.set(name, t);
        }
        this.refreshFailures = 0;
        for (const q of this.queues.values()) {
          if (this.leaderOf(q) >= 0) q.waitingMetadata = false;
        }
      } catch (e) {
        this.refreshFailures++;
        if (this.refreshFailures > this.cluster.retries) {
          const err = new ClientError((e as Error).message);
          for (const q of this.queues.values()) {
            for (const b of q.ready.splice(0)) this.fail(b, err);
          }
          this.refreshFailures = 0;
        }
      } finally {
        this.refreshing = false;
      }
      const stillWaiting = [...this.readyQueues].some((q) => q.waitingMetadata && q.ready.length > 0);
      if (stillWaiting) this.refresh();
      this.drain();
    })();
  }

  // --- outcomes ----------------------------------------------------------------------------------

  private complete(b: ProducerBatch, baseOffset: number): void {
    for (let i = 0; i < b.count; i++) b.callbacks[i]?.(null, b.partition, baseOffset < 0 ? -1 : baseOffset + i);
    this.done(b);
  }

  private fail(b: ProducerBatch, err: Error): void {
    for (let i = 0; i < b.count; i++) b.callbacks[i]?.(err, b.partition, -1);
    this.done(b);
    this.sequenceBroken(b);
  }

  private batchBufferBytes(): number {
    return Math.min(this.opts.batchSizeBytes + 512, 1 << 20);
  }

  private done(b: ProducerBatch): void {
    // A batch that is done is referenced by nobody else (a request copies its bytes into the
    // frame), so its buffer can take the next batch's records: megabyte batches otherwise cost a
    // fresh, page-faulted megabyte each.
    const buf = b.bufferBytes;
    if (buf.length === this.batchBufferBytes() && buf.length >= clientPooledFrameBytesMin && this.spareBuffers.length < producerSpareBuffersMax) {
      this.spareBuffers.push(buf);
    }
    this.pendingRecords -= b.count;
    this.adjust(-(b.built?.length ?? b.sizeBytes));
    if (this.progressWaiters.length > 0) for (const w of this.progressWaiters.splice(0)) w();
    if (this.pendingRecords === 0) {
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private adjust(delta: number): void {
    this.buffered += delta;
    if (delta < 0 && this.buffered < this.opts.bufferMemoryBytes && this.spaceWaiters.length > 0) {
      for (const w of this.spaceWaiters.splice(0)) w();
    }
  }
}
