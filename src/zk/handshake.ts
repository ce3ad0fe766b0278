// The session handshake on a new connection, as the Java client's ClientCnxnSocket makes it:
// TCP connect, ConnectRequest (the session to resume, or id 0 for a new one, with the last zxid
// the client saw), ConnectResponse; all within one attempt's time. ClientCnxn (cnxn.ts) decides
// which server, which session and what a refusal means.
//
// Invariants: a failed handshake leaves no connection open; a server that has seen less than the
// client (a smaller zxid) closes the connection without a reply, which fails the attempt; a
// timeOut of 0 or less in the reply means the server refused the session (it expired).

import type { Clock, Connection, Platform } from "../platform/mod.ts";
import { zkReplyBytesMax } from "../util/mod.ts";
import { FrameReader } from "./frames.ts";
import type { ServerAddress } from "./paths.ts";
import { connectFrame, decodeConnectResponse, protocolVersion } from "./records.ts";

/** A connection with its handshake done. */
export interface Opened {
  conn: Connection;
  frames: FrameReader;
  res: { timeOut: number; sessionId: bigint; passwd: Uint8Array };
}

/** What the client offers: the session to resume (id 0n: a new one), as of the last zxid it saw. */
export interface SessionOffer {
  lastZxidSeen: bigint;
  timeOut: number;
  sessionId: bigint;
  passwd: Uint8Array;
}

/** The client's side: whether it closed meanwhile, and where it keeps the connection being opened (so close() can abort it). */
export interface HandshakeHost {
  isClosed(): boolean;
  opening(conn: Connection | null): void;
}

/** TCP connect and ConnectRequest/ConnectResponse, bounded by attemptMs. Throws on any failure. */
export async function handshake(
  platform: { net: Platform["net"]; clock: Clock },
  server: ServerAddress,
  offer: SessionOffer,
  attemptMs: number,
  host: HandshakeHost,
): Promise<Opened> {
  const conn = await platform.net.connect({ host: server.host, port: server.port, timeoutMs: attemptMs });
  if (host.isClosed()) {
    conn.close();
    throw new Error("client closed");
  }
  host.opening(conn);
  let timedOut = false;
  const timer = platform.clock.setTimeout(() => {
    timedOut = true;
    conn.close();
  }, attemptMs);
  try {
    await conn.write(connectFrame({ protocolVersion, ...offer }));
    const frames = new FrameReader(conn, zkReplyBytesMax);
    const body = await frames.next();
    if (body === null) {
      // A server that has seen less than we have (lastZxidSeen) refuses us this way.
      throw new Error(timedOut ? `no handshake reply within ${attemptMs} ms` : "closed during the handshake");
    }
    const res = decodeConnectResponse(body);
    if (res === null) throw new Error("malformed ConnectResponse: not a ZooKeeper server?");
    return { conn, frames, res };
  } catch (e) {
    conn.close();
    throw e;
  } finally {
    timer.cancel();
    host.opening(null);
  }
}
