// RequestDispatcher: parses a frame's header, finds the handler registered for its API key,
// decodes the body with the API's schema for that version, runs the handler and encodes the
// answer. The ApiVersions answer is built from the same registry, so it cannot claim an API or a
// version that has no handler.
//
// Malformed input never throws out of here: an unknown API key, an unsupported version (except
// for ApiVersions, which answers UNSUPPORTED_VERSION in its v0 layout as Kafka does), or a body
// that does not decode closes the connection with a log line, as Kafka does.
//
// An optional RequestObserver is told of each decoded request once it is answered (or its
// connection closed), with the time from decode to encoded answer: what /metrics counts. It costs
// two clock reads per request, and nothing when no observer is set.
//
// An optional RequestInterceptor (a test seam, as franz-go's kfake control functions) sees each
// decoded request before its handler: it may answer it itself, close the connection, or wait
// (a slow broker) and let the handler run. Nothing is set in production: one null check.

import {
  decode,
  encode,
  type Struct,
  API_VERSIONS_KEY,
  readRequestHeaderPrefix,
  readRequestHeaderRest,
  type RequestHeader,
  responseHeaderFlexible,
  writeResponseHeader,
  inRange,
  type ApiSchema,
  clientThrottles,
} from "../protocol/mod.ts";
import { isRegistryUnavailable } from "../registry/mod.ts";
import { ErrorCode, Reader, registryUnavailableLogIntervalMs, schedulerIntervalMsMax, Writer, type WriterBuffers } from "../util/mod.ts";
import { FrameBufferCache } from "./frame_buffers.ts";
import type { Logger } from "../util/mod.ts";
import type { ConnectionInfo, RequestHandler } from "./server.ts";
import { CloseConnection } from "./services.ts";

export interface RequestContext {
  header: RequestHeader;
  version: number;
  conn: ConnectionInfo;
  /** The API's name as Kafka spells it ("Produce"), for the authorizer's audit log. */
  requestName?: string;
  /**
   * Milliseconds the handler waited for others (acks=all replication, a fetch's long poll): added
   * by those handlers, left out of the handler time the request quota charges (Kafka counts only
   * the time its request threads work on a request).
   */
  parkedMs: number;
  /**
   * When the throttle a handler's own quota gave ends (the controller mutation quota, KIP-599),
   * on the throttler's monotonic clock; 0: none. The answer carries the larger of what is left
   * of it and the client quotas' throttle, and the channel is muted as for them.
   */
  quotaThrottleUntilMs: number;
  /** The APIs and version ranges this broker answers (for ApiVersions). */
  supportedApis(): { apiKey: number; minVersion: number; maxVersion: number }[];
}

export interface ApiHandler<S> {
  api: ApiSchema;
  /** Returns the response body, or null for no response (produce with acks=0). */
  handle(services: S, ctx: RequestContext, request: Struct): Struct | null | Promise<Struct | null>;
  /**
   * The whole request failed with `errorCode` (Kafka's AbstractRequest.getErrorResponse): every
   * element it names answered with it. Handlers that wait on the registry have one, so a registry
   * out of reach is answered REQUEST_TIMED_OUT instead of a closed connection.
   */
  errorResponse?(request: Struct, version: number, errorCode: number, errorMessage: string): Struct;
}

/**
 * Client quotas (client_quota_manager.ts): told of each answered request's costs, answers the
 * throttle time its answer carries (0: within quota). May change the answer (a throttled fetch
 * answers no data). Must not throw.
 */
export interface RequestThrottler {
  monotonicMs(): number;
  throttle(ctx: RequestContext, request: Struct, answer: Struct | null, requestBytes: number, responseBytes: number, handlerMs: number): number;
}

/**
 * Sees each decoded request before its handler (tests only): an answer Struct replaces the
 * handler's, "close" closes the connection, undefined lets the handler run.
 */
export type RequestInterceptor = (
  request: { apiKey: number; apiVersion: number; body: Struct; conn: ConnectionInfo },
) => Promise<Struct | "close" | undefined> | Struct | "close" | undefined;

/** Told of every request a handler ran for (Kafka's RequestMetrics). Must be cheap and not throw. */
export interface RequestObserver {
  monotonicMs(): number;
  requestDone(apiName: string, apiVersion: number, elapsedMs: number): void;
}

/**
 * Answers growing past this take their buffers from a FrameBufferCache (powers of two up to
 * frameBufferReuseBytesMax, idle ones bounded by frameBuffersIdleBytesMax), and the buffers come
 * back once the server has written them (responseWritten): a fetch answer of a megabyte otherwise
 * allocated, and faulted in, two fresh megabytes per fetch, the largest cost of a leader serving
 * its followers (profiled under Bun: half its CPU).
 */
const answerBytesPooledMin = 64 * 1024;

export class RequestDispatcher<S> implements RequestHandler {
  private handlers = new Map<number, ApiHandler<S>>();
  observer: RequestObserver | null = null;
  interceptor: RequestInterceptor | null = null;
  throttler: RequestThrottler | null = null;
  private readonly answerBuffers = new FrameBufferCache();
  /** Buffers of encoded answers handed to the server, until responseWritten brings them back. */
  private readonly answersOut = new WeakSet<ArrayBufferLike>();
  private readonly writerBuffers: WriterBuffers = {
    take: (size) => (size < answerBytesPooledMin ? new Uint8Array(size) : this.answerBuffers.take(size)),
    give: (buf) => this.answerBuffers.give(buf),
  };
  /** Requests answered "registry unavailable" since the last line said so. */
  private unavailable = { count: 0, lastLogMs: -Infinity };

  constructor(private readonly services: S, handlers: ApiHandler<S>[], private readonly logger: Logger) {
    for (const h of handlers) this.handlers.set(h.api.apiKey, h);
  }

  supportedApis(): { apiKey: number; minVersion: number; maxVersion: number }[] {
    return [...this.handlers.values()]
      .map((h) => ({ apiKey: h.api.apiKey, minVersion: h.api.request.versions.min, maxVersion: h.api.request.versions.max }))
      .sort((a, b) => a.apiKey - b.apiKey);
  }

  async handle(frame: Uint8Array, conn: ConnectionInfo): Promise<Uint8Array | null | "close"> {
    const r = new Reader(frame);
    const header = readRequestHeaderPrefix(r);
    const handler = this.handlers.get(header.apiKey);
    const fields = { conn: conn.id, remote: conn.remote, apiKey: header.apiKey, apiVersion: header.apiVersion };
    if (handler === undefined) {
      this.logger.warn(fields, "closing connection: unknown API key");
      return "close";
    }
    const { request } = handler.api;
    if (!inRange(request.versions, header.apiVersion)) {
      if (header.apiKey === API_VERSIONS_KEY) return this.unsupportedApiVersions(header.correlationId);
      this.logger.warn(fields, `closing connection: ${handler.api.name} v${header.apiVersion} is not supported`);
      return "close";
    }
    const flexible = header.apiVersion >= request.flexibleFrom;
    readRequestHeaderRest(r, header, flexible);
    const body = r.ok ? decode(request, header.apiVersion, r) : null;
    if (!r.ok || body === null) {
      this.logger.warn({ ...fields, error: r.error }, `closing connection: malformed ${handler.api.name} request`);
      return "close";
    }
    const ctx: RequestContext = { header, version: header.apiVersion, conn, requestName: handler.api.name, parkedMs: 0, quotaThrottleUntilMs: 0, supportedApis: () => this.supportedApis() };
    if (this.interceptor !== null) {
      const own = await this.interceptor({ apiKey: header.apiKey, apiVersion: header.apiVersion, body, conn });
      if (own === "close") return "close";
      if (own !== undefined) return this.encodeAnswer(handler, ctx, own, fields);
    }
    const observer = this.observer;
    const throttle = this.throttler === null ? null : { throttler: this.throttler, requestBytes: frame.length + 4 };
    if (observer === null) return await this.answer(handler, ctx, body, fields, throttle);
    const startMs = observer.monotonicMs();
    const out = await this.answer(handler, ctx, body, fields, throttle);
    observer.requestDone(handler.api.name, header.apiVersion, observer.monotonicMs() - startMs);
    return out;
  }

  /** Runs the handler and encodes its answer; a failure closes the connection. */
  private async answer(
    handler: ApiHandler<S>,
    ctx: RequestContext,
    body: Struct,
    fields: Record<string, unknown>,
    throttle: { throttler: RequestThrottler; requestBytes: number } | null,
  ): Promise<Uint8Array | null | "close"> {
    const { header } = ctx;
    let answer: Struct | null;
    const startMs = throttle?.throttler.monotonicMs() ?? 0;
    try {
      answer = await handler.handle(this.services, ctx, body);
    } catch (e) {
      if (e instanceof CloseConnection) {
        this.logger.warn({ ...fields, reason: e.message }, "closing connection");
        return "close";
      }
      if (isRegistryUnavailable(e) && handler.errorResponse !== undefined) {
        const message = `the registry (ZooKeeper) did not answer: ${e.message}; try again`;
        this.registryUnavailable(fields, message);
        return this.encodeAnswer(handler, ctx, handler.errorResponse(body, header.apiVersion, ErrorCode.REQUEST_TIMED_OUT, message), fields);
      }
      this.logger.error({ ...fields, err: e instanceof Error ? e.stack : String(e) }, `${handler.api.name} handler failed; closing connection`);
      return "close";
    }
    if (throttle === null) return answer === null ? null : this.encodeAnswer(handler, ctx, answer, fields);
    // Client quotas: the costs are known once the answer is encoded (a fetch is charged its
    // answer's bytes); a throttled answer is encoded again to carry its throttle_time_ms.
    const handlerMs = Math.max(0, throttle.throttler.monotonicMs() - startMs - ctx.parkedMs);
    let out = answer === null ? null : this.encodeAnswer(handler, ctx, answer, fields);
    if (out === "close") return out;
    // Byte-rate throttles are unbounded in Kafka; a timer cannot wait longer than this.
    const clientMs = throttle.throttler.throttle(ctx, body, answer, throttle.requestBytes, out?.length ?? 0, handlerMs);
    const ownMs = ctx.quotaThrottleUntilMs > 0 ? Math.round(ctx.quotaThrottleUntilMs - throttle.throttler.monotonicMs()) : 0;
    const throttleMs = Math.min(Math.max(clientMs, ownMs), schedulerIntervalMsMax);
    if (throttleMs <= 0) return out;
    if (answer !== null) {
      answer.throttleTimeMs = throttleMs;
      out = this.encodeAnswer(handler, ctx, answer, fields);
    }
    // The server mutes the connection for the throttle time once the answer is written (KIP-219),
    // or, for a client too old to throttle itself, holds the answer back that long first.
    // An answer without throttle_time_ms (SaslHandshake) cannot tell the client either.
    // Kafka's AbstractResponse.shouldClientThrottle (protocol/throttle.ts).
    const told = answer !== null && "throttleTimeMs" in answer && clientThrottles(header.apiKey, header.apiVersion);
    ctx.conn.throttle = { ms: throttleMs, delayResponse: !told };
    return out;
  }

  /** The server wrote an answer: its buffer, when it is one of answerBuffers', takes a later answer. */
  responseWritten(frame: Uint8Array): void {
    if (this.answersOut.delete(frame.buffer)) this.answerBuffers.give(frame);
  }

  /** One warn line per interval at most, with the count: clients retry such requests in a loop. */
  private registryUnavailable(fields: Record<string, unknown>, message: string): void {
    const u = this.unavailable;
    u.count++;
    const now = this.observer?.monotonicMs() ?? Date.now();
    if (now - u.lastLogMs < registryUnavailableLogIntervalMs) return;
    this.logger.warn({ ...fields, answered: u.count, reason: message }, "request answered REQUEST_TIMED_OUT: the registry is unavailable");
    u.count = 0;
    u.lastLogMs = now;
  }

  private encodeAnswer(handler: ApiHandler<S>, ctx: RequestContext, answer: Struct, fields: Record<string, unknown>): Uint8Array | "close" {
    const { header } = ctx;
    const { request, response } = handler.api;
    const flexible = header.apiVersion >= request.flexibleFrom;
    const w = new Writer(1024);
    w.buffers = this.writerBuffers;
    w.int32(0); // size, patched below
    writeResponseHeader(w, header.correlationId, responseHeaderFlexible(header.apiKey, flexible));
    try {
      encode(response, header.apiVersion, answer, w);
    } catch (e) {
      // An answer its own schema cannot carry is a handler bug: said once, at error, and only
      // this connection pays for it.
      this.logger.error({ ...fields, err: e instanceof Error ? e.stack : String(e) }, `${handler.api.name} answer does not encode; closing connection`);
      return "close";
    }
    w.view.setInt32(0, w.pos - 4);
    const frame = w.finish();
    if (frame.buffer.byteLength >= answerBytesPooledMin) this.answersOut.add(frame.buffer);
    return frame;
  }

  /** ApiVersions answer for a version we do not know: v0 layout, so any client can read it. */
  private unsupportedApiVersions(correlationId: number): Uint8Array {
    const apis = this.supportedApis();
    const w = new Writer(16 + apis.length * 6);
    w.int32(0);
    writeResponseHeader(w, correlationId, false);
    w.int16(ErrorCode.UNSUPPORTED_VERSION).int32(apis.length);
    for (const a of apis) w.int16(a.apiKey).int16(a.minVersion).int16(a.maxVersion);
    w.view.setInt32(0, w.pos - 4);
    return w.finish();
  }
}
