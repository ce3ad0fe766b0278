// The client's request bookkeeping, as the Java ClientCnxn keeps it: the outgoing queue
// (submitted, not yet written) and the pending queue (written, waiting for their reply), the xid
// counter, and each request's timeout. ClientCnxn (cnxn.ts) owns the connection and hands
// frames to and from here.
//
// Invariants:
// - xids are given when a request is moved to the wire, increasing (wrapping to 1 past
//   2^31 - 1); the server answers in order, so a reply must carry the oldest pending xid, and
//   one that does not is a ProtocolError (the connection is then dropped).
// - A request settles once: by its reply, its timeout, or a failure of its queue (connection
//   lost: pending ones; session expired: outgoing ones; close: all). A request that timed out
//   while pending keeps its place, so the reply that comes later is consumed and dropped.
// - At most zkRequestsInFlightMax requests are pending; the rest wait in the outgoing queue.

import type { Clock, Timer } from "../platform/mod.ts";
import { type Reader, zkRequestsInFlightMax } from "../util/mod.ts";
import { ZkError } from "./errors.ts";

/** The server broke the protocol: the connection cannot go on. */
export class ProtocolError extends Error {
  override name = "ProtocolError";
}

interface Request {
  readonly path: string;
  /** The whole frame; its xid (bytes 4..8) is written when it is sent. */
  readonly frame: Uint8Array;
  xid: number;
  /** Turns the reply into the result, registering watches; throws ZkError. */
  readonly onReply: (err: number, r: Reader) => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  timer: Timer | null;
  settled: boolean;
}

const xidMax = 0x7fffffff;

export class RequestQueue {
  private xid = 0;
  private readonly outgoing: Request[] = [];
  private readonly inflight: Request[] = [];

  constructor(private readonly clock: Clock) {}

  /** Requests submitted and not yet written. */
  get waiting(): number {
    return this.outgoing.length;
  }

  /**
   * Queues an encoded request (xid 0 until sent); onReply turns the reply into the result, or
   * throws. Fails with RequestTimeout after timeoutMs, queued time included.
   */
  add<T>(path: string, frame: Uint8Array, onReply: (err: number, r: Reader) => T, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const req: Request = {
        path,
        frame,
        xid: 0,
        onReply,
        resolve: resolve as (v: unknown) => void,
        reject,
        timer: null,
        settled: false,
      };
      req.timer = this.clock.setTimeout(() => {
        const i = this.outgoing.indexOf(req);
        if (i >= 0) this.outgoing.splice(i, 1);
        this.settle(req, new ZkError("RequestTimeout", path, `no reply within ${timeoutMs} ms`));
      }, timeoutMs);
      this.outgoing.push(req);
    });
  }

  /** Moves waiting requests to `write`, xids in order, up to the in-flight bound. */
  send(write: (frame: Uint8Array) => void): void {
    while (this.outgoing.length > 0 && this.inflight.length < zkRequestsInFlightMax) {
      const req = this.outgoing.shift()!;
      this.xid = this.xid >= xidMax ? 1 : this.xid + 1;
      req.xid = this.xid;
      new DataView(req.frame.buffer, req.frame.byteOffset, 8).setInt32(4, req.xid);
      this.inflight.push(req);
      write(req.frame);
    }
  }

  /** The reply (its header read) to the oldest pending request; ProtocolError when it is not. */
  onReply(xid: number, err: number, r: Reader): void {
    const req = this.inflight[0];
    if (req === undefined || req.xid !== xid) {
      throw new ProtocolError(`reply xid ${xid} where ${req?.xid ?? "no request"} was next`);
    }
    this.inflight.shift();
    this.complete(req, err, r);
  }

  private complete(req: Request, err: number, r: Reader): void {
    if (req.settled) return; // timed out: its reply is only consumed
    let value: unknown;
    try {
      value = req.onReply(err, r);
    } catch (e) {
      return this.settle(req, e);
    }
    if (!r.ok) {
      this.settle(req, new ZkError("MarshallingError", req.path, `malformed reply: ${r.error}`));
      throw new ProtocolError(`malformed reply to xid ${req.xid}: ${r.error}`);
    }
    this.settle(req, null, value);
  }

  /** The connection was lost: the pending requests fail (they may or may not have been applied). */
  failInflight(error: ZkError): void {
    for (const req of this.inflight.splice(0)) this.settle(req, withPath(error, req.path));
  }

  /** The session expired: the requests that waited for a connection fail. */
  failOutgoing(error: ZkError): void {
    for (const req of this.outgoing.splice(0)) this.settle(req, withPath(error, req.path));
  }

  /** The client closed: every request fails. */
  failAll(error: ZkError): void {
    for (const req of [...this.outgoing.splice(0), ...this.inflight.splice(0)]) {
      this.settle(req, withPath(error, req.path));
    }
  }

  private settle(req: Request, error: unknown, value?: unknown): void {
    if (req.settled) return;
    req.settled = true;
    req.timer?.cancel();
    if (error === null) req.resolve(value);
    else req.reject(error);
  }
}

/** The error, naming the request's path. */
export function withPath(e: ZkError, path: string): ZkError {
  return path === e.path ? e : new ZkError(e.code, path, e.detail);
}
