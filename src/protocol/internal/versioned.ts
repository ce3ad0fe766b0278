// Version-prefixed structs: an int16 version, then the struct encoded as that version of its
// schema (flexible versions as the schema says). Kafka frames the __consumer_offsets records and
// the consumer protocol's subscription and assignment bytes this way; their schemas are declared
// with `message(-1, ...)`, as they belong to no API.

import { Reader, Writer } from "../../util/mod.ts";
import { decode, encode, type Struct } from "../codec.ts";
import { inRange, type MessageSchema } from "../schema.ts";

/** A no-API schema's key in `message(...)`. */
export const noApiKey = -1;

/** The version, then the struct, as one array the caller owns. */
export function encodeVersioned(schema: MessageSchema, version: number, value: Struct): Uint8Array {
  // One scratch buffer for every call (encoding is synchronous and never nested here): a commit
  // of 1,000 partitions encodes 2,000 of these, and a fresh buffer and view each cost more than
  // the encoding.
  const w = scratch;
  w.pos = 0;
  w.int16(version);
  encode(schema, version, value, w);
  return w.finish().slice();
}

const scratch = new Writer(256);

/** Reads the leading version; null (with the reader marked bad) when the bytes are too short. */
export function readVersion(r: Reader): number | null {
  const version = r.int16();
  return r.ok ? version : null;
}

/**
 * Decodes the body after the version: the struct, or why not. `trailing` says whether bytes after
 * the struct are allowed (they are when a newer version is read as an older one).
 */
export function decodeBody(
  schema: MessageSchema,
  version: number,
  r: Reader,
  trailing: boolean,
): { value: Struct } | { error: string } {
  if (!inRange(schema.versions, version)) return { error: `${schema.name} version ${version} is unknown` };
  const value = decode(schema, version, r);
  if (!r.ok) return { error: `${schema.name} v${version}: ${r.error}` };
  if (!trailing && r.remaining > 0) return { error: `${schema.name} v${version}: ${r.remaining} bytes left over` };
  return { value };
}
