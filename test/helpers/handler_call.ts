// Calling a request handler as the dispatcher would, without a server: the request and the answer
// both go through the codec (so a field the schema cannot carry fails here), with a connection of
// the given principal and listener (or none, for handlers that never look at it).
import assert from "node:assert/strict";
import type { ApiHandler, RequestContext } from "../../src/broker/dispatch.ts";
import type { BrokerServices } from "../../src/broker/services.ts";
import { decode, encode, type Struct } from "../../src/protocol/codec.ts";
import type { MessageSchema } from "../../src/protocol/schema.ts";
import { Reader, Writer } from "../../src/util/bytes.ts";

/** The struct, encoded and decoded again at the version: what the other side would read. */
export function through(schema: MessageSchema, version: number, s: Struct): Struct {
  const w = new Writer(256);
  encode(schema, version, s, w);
  const r = new Reader(w.finish().slice());
  const out = decode(schema, version, r);
  assert.ok(r.ok && r.remaining === 0, `${schema.name} v${version}: ${r.error}`);
  return out;
}

export interface CallOptions {
  listener?: string;
  principal?: string;
  /** false: the context has no connection at all. */
  conn?: false;
}

export async function callHandler(h: ApiHandler<BrokerServices>, s: BrokerServices, version: number, body: Struct, o: CallOptions = {}): Promise<Struct> {
  const conn = o.conn === false
    ? undefined
    : { id: 1, listener: o.listener ?? "PLAINTEXT", remote: "127.0.0.1:5555", host: "127.0.0.1", principal: o.principal ?? "User:ANONYMOUS" };
  const ctx = { version, conn, header: { apiKey: h.api.apiKey, apiVersion: version, correlationId: 1, clientId: null } } as unknown as RequestContext;
  const answer = await h.handle(s, ctx, through(h.api.request, version, body));
  assert.ok(answer !== null);
  return through(h.api.response, version, answer);
}
