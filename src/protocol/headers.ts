// Request and response headers, and which header version each API version uses.
//
// Request header v0: api_key int16, api_version int16, correlation_id int32.
//                v1: + client_id (nullable string, never compact, even in flexible versions).
//                v2: + tagged fields. Used by flexible request versions.
// Response header v0: correlation_id int32. v1: + tagged fields, for flexible response versions,
// except ApiVersions, whose response header is always v0 (a client that sent an unsupported
// version must still be able to read the answer).

import { Reader, Writer, wireTaggedFieldsMax } from "../util/mod.ts";

export interface RequestHeader {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
}

export const API_VERSIONS_KEY = 18;

/** Reads the fixed part (key, version, correlation id): enough to answer even an unknown API. */
export function readRequestHeaderPrefix(r: Reader): RequestHeader {
  const apiKey = r.int16();
  const apiVersion = r.int16();
  const correlationId = r.int32();
  return { apiKey, apiVersion, correlationId, clientId: null };
}

/** Reads client_id and, for header v2, the tagged fields, after the prefix. */
export function readRequestHeaderRest(r: Reader, h: RequestHeader, flexible: boolean): void {
  const n = r.int16();
  if (n >= 0) {
    if (n > r.remaining) return r.fail(`client id length ${n}`);
    h.clientId = r.utf8(n);
  } else if (n !== -1) return r.fail(`client id length ${n}`);
  if (!flexible) return;
  const count = r.uvarint();
  if (count > wireTaggedFieldsMax) return r.fail(`header tagged field count ${count}`);
  for (let i = 0; i < count && r.ok; i++) {
    r.uvarint();
    const size = r.uvarint();
    if (size > r.remaining) return r.fail("header tagged field past the end");
    r.bytes(size);
  }
}

export function writeRequestHeader(w: Writer, h: RequestHeader, flexible: boolean): void {
  w.int16(h.apiKey).int16(h.apiVersion).int32(h.correlationId);
  if (h.clientId === null) w.int16(-1);
  else {
    const b = new TextEncoder().encode(h.clientId);
    w.int16(b.length).bytes(b);
  }
  if (flexible) w.uvarint(0);
}

export function responseHeaderFlexible(apiKey: number, requestFlexible: boolean): boolean {
  return requestFlexible && apiKey !== API_VERSIONS_KEY;
}

export function writeResponseHeader(w: Writer, correlationId: number, flexible: boolean): void {
  w.int32(correlationId);
  if (flexible) w.uvarint(0);
}

export function readResponseHeader(r: Reader, flexible: boolean): number {
  const correlationId = r.int32();
  if (flexible) {
    const count = r.uvarint();
    for (let i = 0; i < count && r.ok; i++) {
      r.uvarint();
      r.bytes(r.uvarint());
    }
  }
  return correlationId;
}
