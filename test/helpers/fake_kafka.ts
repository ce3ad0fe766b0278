// A fake Kafka-protocol server for tests of what connects to a broker (replica fetcher, controller
// channel, controlled shutdown), on the platform's own listener: each request frame is decoded
// with the project's codec and handed to `onRequest`, which answers (or not, or later) through
// `reply`. Frames are cut from the stream by hand.
import assert from "node:assert/strict";
import type { Connection, Platform } from "../../src/platform/types.ts";
import { apiSchemaByKey } from "../../src/protocol/api/mod.ts";
import { decode, encode, type Struct } from "../../src/protocol/codec.ts";
import { readRequestHeaderPrefix, readRequestHeaderRest, responseHeaderFlexible, writeResponseHeader } from "../../src/protocol/headers.ts";
import { Reader, Writer } from "../../src/util/bytes.ts";

export interface FakeRequest {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
  body: Struct;
  conn: Connection;
}

export interface FakeKafka {
  port: number;
  /** Closes every connection accepted so far (the listener stays). */
  dropConnections(): void;
  stop(): Promise<void>;
}

export async function startFakeKafka(
  platform: Platform,
  onRequest: (req: FakeRequest, reply: (res: Struct) => void) => void,
  port = 0,
): Promise<FakeKafka> {
  const conns: Connection[] = [];
  const serve = (conn: Connection) => {
    conns.push(conn);
    void (async () => {
      let buf = new Uint8Array(0);
      for (;;) {
        const chunk = await conn.read();
        if (chunk === null) return;
        const next = new Uint8Array(buf.length + chunk.length);
        next.set(buf);
        next.set(chunk, buf.length);
        buf = next;
        while (buf.length >= 4) {
          const size = new DataView(buf.buffer, buf.byteOffset).getInt32(0);
          if (buf.length < 4 + size) break;
          onFrame(conn, buf.slice(4, 4 + size));
          buf = buf.slice(4 + size);
        }
      }
    })();
  };
  const onFrame = (conn: Connection, frame: Uint8Array) => {
    const r = new Reader(frame);
    const h = readRequestHeaderPrefix(r);
    const api = apiSchemaByKey(h.apiKey);
    assert.ok(api, `API ${h.apiKey} has a schema`);
    const flexible = h.apiVersion >= api.request.flexibleFrom;
    readRequestHeaderRest(r, h, flexible);
    const body = decode(api.request, h.apiVersion, r);
    assert.ok(r.ok && r.remaining === 0, `${api.name} v${h.apiVersion} request decodes whole: ${r.error}`);
    const reply = (res: Struct) => {
      const w = new Writer(256);
      w.int32(0);
      writeResponseHeader(w, h.correlationId, responseHeaderFlexible(h.apiKey, flexible));
      encode(api.response, h.apiVersion, res, w);
      w.view.setInt32(0, w.pos - 4);
      void conn.write(w.finish().slice()).catch(() => {});
    };
    onRequest({ apiKey: h.apiKey, apiVersion: h.apiVersion, correlationId: h.correlationId, clientId: h.clientId, body, conn }, reply);
  };
  const listener = await platform.net.listen({ host: "127.0.0.1", port }, serve);
  return {
    port: listener.port,
    dropConnections() {
      for (const c of conns.splice(0)) c.close();
    },
    async stop() {
      for (const c of conns.splice(0)) c.close();
      await listener.close();
    },
  };
}
