// A raw Kafka-protocol client for tests: node:net sockets (which work under both Bun and Deno),
// requests encoded with the project's own codec (protocol/codec.ts, headers.ts, api/mod.ts), and
// frames cut from the stream by hand, so a test can send anything at all — including bytes no
// real client would — and see exactly what comes back, or that the connection closes.
import * as net from "node:net";
import { CreateTopicsApi, FetchApi, ListOffsetsApi, ProduceApi } from "../../src/protocol/api/mod.ts";
import { decode, encode, type Struct } from "../../src/protocol/codec.ts";
import { readResponseHeader, responseHeaderFlexible, writeRequestHeader } from "../../src/protocol/headers.ts";
import type { ApiSchema } from "../../src/protocol/schema.ts";
import { Reader, Writer } from "../../src/util/bytes.ts";

/** A whole request frame, size prefix included. */
export function encodeRequest(api: ApiSchema, version: number, correlationId: number, body: Struct, clientId: string | null = "wire-test"): Uint8Array {
  const flexible = version >= api.request.flexibleFrom;
  const w = new Writer(256);
  w.int32(0);
  writeRequestHeader(w, { apiKey: api.apiKey, apiVersion: version, correlationId, clientId }, flexible);
  encode(api.request, version, body, w);
  w.view.setInt32(0, w.pos - 4);
  return w.finish().slice();
}

/** A frame around arbitrary bytes: the size prefix, then the bytes. */
export function frame(body: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + body.length);
  new DataView(out.buffer).setInt32(0, body.length);
  out.set(body, 4);
  return out;
}

/** Decodes a response frame (without its size prefix); throws when it does not decode whole. */
export function decodeResponse(api: ApiSchema, version: number, payload: Uint8Array): { correlationId: number; body: Struct } {
  const flexible = version >= api.response.flexibleFrom;
  const r = new Reader(payload);
  const correlationId = readResponseHeader(r, responseHeaderFlexible(api.apiKey, flexible));
  const body = decode(api.response, version, r);
  if (!r.ok) throw new Error(`${api.name} v${version} response does not decode: ${r.error}`);
  if (r.remaining !== 0) throw new Error(`${api.name} v${version} response has ${r.remaining} trailing bytes`);
  return { correlationId, body };
}

export class WireClient {
  private buffered = new Uint8Array(0);
  private waiters: Array<() => void> = [];
  private nextCorrelationId = 1;
  /** True once the peer closed (or the socket failed). */
  ended = false;
  readonly closed: Promise<void>;

  private constructor(private readonly socket: net.Socket) {
    socket.on("data", (d: Uint8Array) => {
      const next = new Uint8Array(this.buffered.length + d.length);
      next.set(this.buffered);
      next.set(d, this.buffered.length);
      this.buffered = next;
      this.wake();
    });
    this.closed = new Promise((resolve) => {
      const done = () => {
        this.ended = true;
        this.wake();
        resolve();
      };
      socket.on("close", done);
      socket.on("end", done);
      socket.on("error", done);
    });
  }

  static connect(port: number, host = "127.0.0.1"): Promise<WireClient> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ host, port });
      s.once("connect", () => {
        s.removeListener("error", reject);
        resolve(new WireClient(s));
      });
      s.once("error", reject);
    });
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private waitForChange(deadline: number): Promise<boolean> {
    const left = deadline - Date.now();
    if (left <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), left);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  write(bytes: Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(bytes, (e) => (e ? reject(e) : resolve())));
  }

  /** Sends a request; returns its correlation id. */
  send(api: ApiSchema, version: number, body: Struct, correlationId = this.nextCorrelationId++): Promise<number> {
    return this.write(encodeRequest(api, version, correlationId, body)).then(() => correlationId);
  }

  /** The next response frame without its size prefix; null when the peer closed first. */
  async nextFrame(timeoutMs = 10_000): Promise<Uint8Array | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.buffered.length >= 4) {
        const size = new DataView(this.buffered.buffer, this.buffered.byteOffset, 4).getInt32(0);
        if (this.buffered.length >= 4 + size) {
          const payload = this.buffered.slice(4, 4 + size);
          this.buffered = this.buffered.slice(4 + size);
          return payload;
        }
      }
      if (this.ended) return null;
      if (!(await this.waitForChange(deadline))) throw new Error(`no response within ${timeoutMs} ms`);
    }
  }

  /** Sends a request and decodes its answer, checking the correlation id. */
  async request(api: ApiSchema, version: number, body: Struct, timeoutMs = 10_000): Promise<Struct> {
    const id = await this.send(api, version, body);
    const payload = await this.nextFrame(timeoutMs);
    if (payload === null) throw new Error(`connection closed instead of answering ${api.name} v${version}`);
    const { correlationId, body: out } = decodeResponse(api, version, payload);
    if (correlationId !== id) throw new Error(`correlation id ${correlationId}, expected ${id}`);
    return out;
  }

  /** Resolves true once the peer has closed the connection, false when timeoutMs passes first. */
  async waitClosed(timeoutMs = 5_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended) if (!(await this.waitForChange(deadline))) return this.ended;
    return true;
  }

  /** Bytes received and not yet taken as frames. */
  get pendingBytes(): number {
    return this.buffered.length;
  }

  /** Half-close: send FIN, keep reading. */
  end(): void {
    this.socket.end();
  }

  close(): void {
    this.socket.destroy();
  }
}

// ---- a few requests the tests send over and over ---------------------------------------------

export async function createTopic(
  c: WireClient,
  name: string,
  opts: { numPartitions?: number; replicationFactor?: number; configs?: Record<string, string> } = {},
): Promise<{ errorCode: number; errorMessage: string | null }> {
  const res = await c.request(CreateTopicsApi, 7, {
    topics: [{
      name,
      numPartitions: opts.numPartitions ?? 1,
      replicationFactor: opts.replicationFactor ?? 1,
      assignments: [],
      configs: Object.entries(opts.configs ?? {}).map(([n, value]) => ({ name: n, value })),
    }],
    timeoutMs: 10_000,
    validateOnly: false,
  });
  const t = (res.topics as { errorCode: number; errorMessage: string | null }[])[0];
  return { errorCode: t.errorCode, errorMessage: t.errorMessage };
}

export interface ProducePartitionResponse {
  index: number;
  errorCode: number;
  baseOffset: bigint;
  errorMessage: string | null;
}

export async function produce(c: WireClient, topic: string, partition: number, records: Uint8Array | null, acks = -1): Promise<ProducePartitionResponse> {
  const res = await c.request(ProduceApi, 8, {
    transactionalId: null,
    acks,
    timeoutMs: 10_000,
    topicData: [{ name: topic, partitionData: [{ index: partition, records }] }],
  });
  const t = (res.responses as { partitionResponses: ProducePartitionResponse[] }[])[0];
  return t.partitionResponses[0];
}

export interface FetchPartitionResponse {
  partitionIndex: number;
  errorCode: number;
  highWatermark: bigint;
  logStartOffset: bigint;
  records: Uint8Array | null;
}

export async function fetchOnce(
  c: WireClient,
  topic: string,
  partition: number,
  fetchOffset: bigint,
  opts: { maxWaitMs?: number; minBytes?: number; maxBytes?: number; partitionMaxBytes?: number; version?: number } = {},
): Promise<FetchPartitionResponse> {
  // From v11 a follower serves consumers too (KIP-392), up to its own high watermark, which lags
  // the leader's: a cluster test reading "from the leader" asks for v10, which only a leader serves.
  const res = await c.request(FetchApi, opts.version ?? 11, {
    replicaId: -1,
    maxWaitMs: opts.maxWaitMs ?? 0,
    minBytes: opts.minBytes ?? 0,
    maxBytes: opts.maxBytes ?? 1 << 24,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition, fetchOffset, partitionMaxBytes: opts.partitionMaxBytes ?? 1 << 24 }] }],
    forgottenTopicsData: [],
    rackId: "",
  }, 70_000);
  if ((res.errorCode as number) !== 0) throw new Error(`fetch error ${res.errorCode}`);
  return (res.responses as { partitions: FetchPartitionResponse[] }[])[0].partitions[0];
}

/** ListOffsets: -1 latest (log end offset for a single broker), -2 earliest. */
export async function listOffset(c: WireClient, topic: string, partition: number, timestamp: bigint): Promise<{ errorCode: number; offset: bigint }> {
  const res = await c.request(ListOffsetsApi, 5, {
    replicaId: -1,
    isolationLevel: 0,
    topics: [{ name: topic, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp }] }],
  });
  const p = (res.topics as { partitions: { errorCode: number; offset: bigint }[] }[])[0].partitions[0];
  return { errorCode: p.errorCode, offset: p.offset };
}
