// The transaction coordinator's TxnMarkerSender over the network: WriteTxnMarkers v1 (Kafka 3.8's
// version since IBP 2.8) to a partition leader, on the inter-broker listener with its TLS and SASL
// settings, one connection per broker kept open between requests. The channel
// (coordinator/txn_markers.ts) sends at most one request per broker at a time and retries; this
// only carries it: a broker with no known endpoint, a connection or request failure, or an answer
// that does not cover every partition sent rejects, and the channel sends those markers again.

import { KafkaConnection, type SaslCredentials } from "../client/mod.ts";
import type { ReplicaManager } from "../replication/mod.ts";
import type { TxnMarkerEntry, TxnMarkerSender } from "../coordinator/mod.ts";
import type { Platform, TlsClientOptions } from "../platform/mod.ts";
import { type ApiSchema, type Struct, WriteTxnMarkersApi } from "../protocol/mod.ts";
import { type Logger, txnMarkerReplicationTimeoutMs } from "../util/mod.ts";

/** Kafka 3.8 sends v1 (flexible) to brokers at IBP 2.8 or later. */
const WRITE_TXN_MARKERS_VERSION = 1;

export interface InterBrokerMarkerOptions {
  /** request.timeout.ms of the marker channel (Kafka's: the broker's request.timeout.ms, 30000). */
  requestTimeoutMs: number;
  sasl?: SaslCredentials;
  tls?: TlsClientOptions;
}

/**
 * One connection per broker on the inter-broker listener (its TLS and SASL settings), opened on
 * first use and kept between requests; a failed request closes it, the next one reconnects.
 */
export class InterBrokerConnections {
  private readonly conns = new Map<number, KafkaConnection>();
  private stopped = false;

  constructor(
    private readonly platform: Platform,
    private readonly clientId: string,
    /** The broker's inter-broker endpoint, or undefined when it is not live. */
    private readonly endpointOf: (brokerId: number) => { host: string; port: number } | undefined,
    private readonly options: InterBrokerMarkerOptions,
    private readonly logger: Logger,
  ) {}

  /** Sends one request to the broker; a failure closes its connection and rejects. */
  async request(brokerId: number, api: ApiSchema, version: number, body: Struct): Promise<Struct> {
    if (this.stopped) throw new Error(`${this.clientId} stopped`);
    const conn = await this.connection(brokerId);
    try {
      return await conn.request(api, version, body, this.options.requestTimeoutMs);
    } catch (e) {
      this.drop(brokerId, conn, `${api.name}: ${(e as Error).message}`);
      throw e;
    }
  }

  private async connection(brokerId: number): Promise<KafkaConnection> {
    const open = this.conns.get(brokerId);
    if (open !== undefined && !open.closed) return open;
    const ep = this.endpointOf(brokerId);
    if (ep === undefined) throw new Error(`broker ${brokerId} has no known endpoint`);
    const conn = await KafkaConnection.connect(this.platform, {
      host: ep.host,
      port: ep.port,
      clientId: this.clientId,
      connectTimeoutMs: this.options.requestTimeoutMs,
      sasl: this.options.sasl,
      tls: this.options.tls,
    });
    if (this.stopped) {
      conn.close(`${this.clientId} stopped`);
      throw new Error(`${this.clientId} stopped`);
    }
    this.conns.set(brokerId, conn);
    return conn;
  }

  private drop(brokerId: number, conn: KafkaConnection, why: string): void {
    conn.close(`request failed: ${why}`);
    if (this.conns.get(brokerId) === conn) this.conns.delete(brokerId);
    this.logger.debug({ broker: brokerId, err: why }, "inter-broker request failed; the connection is closed");
  }

  shutdown(): void {
    this.stopped = true;
    for (const c of this.conns.values()) c.close(`${this.clientId} stopped`);
    this.conns.clear();
  }
}

export class InterBrokerTxnMarkerSender implements TxnMarkerSender {
  private readonly conns: InterBrokerConnections;

  constructor(
    platform: Platform,
    localBrokerId: number,
    /** The broker's inter-broker endpoint, or undefined when it is not live. */
    endpointOf: (brokerId: number) => { host: string; port: number } | undefined,
    options: InterBrokerMarkerOptions,
    logger: Logger,
  ) {
    this.conns = new InterBrokerConnections(platform, `strand-txn-markers-${localBrokerId}`, endpointOf, options, logger);
  }

  async send(brokerId: number, markers: TxnMarkerEntry[]): Promise<number[][]> {
    const body = await this.conns.request(brokerId, WriteTxnMarkersApi, WRITE_TXN_MARKERS_VERSION, requestBody(markers));
    return errorsOf(markers, body);
  }

  shutdown(): void {
    this.conns.shutdown();
  }
}

export function requestBody(markers: TxnMarkerEntry[]): Struct {
  return {
    markers: markers.map((m) => {
      const topics = new Map<string, number[]>();
      for (const p of m.partitions) {
        let list = topics.get(p.topic);
        if (list === undefined) topics.set(p.topic, (list = []));
        list.push(p.partition);
      }
      return {
        producerId: m.producerId,
        producerEpoch: m.producerEpoch,
        transactionResult: m.committed,
        topics: [...topics].map(([name, partitionIndexes]) => ({ name, partitionIndexes })),
        coordinatorEpoch: m.coordinatorEpoch,
      };
    }),
  };
}

/**
 * Each marker's per-partition error codes, in the order sent. The answer is keyed by producer id
 * (as Kafka's errorsByProducerId reads it); a partition it does not answer for is an error.
 */
export function errorsOf(markers: TxnMarkerEntry[], body: Struct): number[][] {
  const answered = new Map<string, number>();
  for (const m of body.markers as { producerId: bigint; topics: { name: string; partitions: { partitionIndex: number; errorCode: number }[] }[] }[]) {
    for (const t of m.topics) for (const p of t.partitions) answered.set(`${m.producerId}:${p.partitionIndex}:${t.name}`, p.errorCode);
  }
  return markers.map((m) =>
    m.partitions.map((p) => {
      const code = answered.get(`${m.producerId}:${p.partition}:${p.topic}`);
      if (code === undefined) throw new Error(`WriteTxnMarkers answer has no result for producer ${m.producerId} on ${p.topic}-${p.partition}`);
      return code;
    })
  );
}

/**
 * Markers for partitions this broker leads are written straight through its ReplicaManager (as
 * the WriteTxnMarkers handler writes them, acks=all), the rest go over the network: a
 * single-node broker (no inter-broker principal exists) and the common local case need no
 * connection to itself.
 */
export class LocalFirstTxnMarkerSender implements TxnMarkerSender {
  constructor(
    private readonly localBrokerId: number,
    private readonly replicaManager: ReplicaManager,
    private readonly remote: InterBrokerTxnMarkerSender,
  ) {}

  send(brokerId: number, markers: TxnMarkerEntry[]): Promise<number[][]> {
    if (brokerId !== this.localBrokerId) return this.remote.send(brokerId, markers);
    // Appended in the order given (each append runs before its first await), then awaited together.
    return Promise.all(markers.map((m) => Promise.all(m.partitions.map((p) => this.replicaManager.appendTxnMarker(p.topic, p.partition, m, txnMarkerReplicationTimeoutMs)))));
  }

  shutdown(): void {
    this.remote.shutdown();
  }
}
