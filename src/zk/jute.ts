// Jute, ZooKeeper's serialization, as data: a record is an ordered list of typed fields, as in
// ZooKeeper's own zookeeper.jute, and one generic codec encodes and decodes every record, so a
// record cannot be written one way and read another.
//
// Wire encoding (BinaryOutputArchive), big-endian throughout:
//   int      4 bytes, two's complement          long    8 bytes, two's complement
//   boolean  1 byte, 0 or 1                      ustring int32 byte length (-1 = null), UTF-8
//   buffer   int32 length (-1 = null), bytes     vector  int32 count (-1 = null), then elements
//   record   its fields in order, nothing around them
//
// Decoding never throws: the Reader marks itself bad on a short read, an impossible length or
// count, or invalid UTF-8; the caller checks `ok` once. A null string, buffer or vector decodes
// as an empty one (ZooKeeper sends null only where empty means the same).

import { Reader, utf8Bytes, Writer } from "../util/mod.ts";

export type Primitive = "int" | "long" | "boolean" | "ustring" | "buffer";

export interface VectorOf<E extends FieldType> {
  readonly vector: E;
}

// deno-lint-ignore no-explicit-any
export type FieldType = Primitive | JuteRecord<any> | VectorOf<any>;

export type Fields = Record<string, FieldType>;

/** The TypeScript value of a field type. */
export type ValueOf<F> = F extends "int" ? number
  : F extends "long" ? bigint
  : F extends "boolean" ? boolean
  : F extends "ustring" ? string
  : F extends "buffer" ? Uint8Array
  : F extends JuteRecord<infer S> ? RecordValue<S>
  : F extends VectorOf<infer E> ? ValueOf<E>[]
  : never;

export type RecordValue<S extends Fields> = { [K in keyof S]: ValueOf<S[K]> };

/** Smallest encoding of each type: bounds a vector's count by the bytes left before allocating. */
function minBytes(t: FieldType): number {
  if (t === "boolean") return 1;
  if (t === "long") return 8;
  if (typeof t === "string") return 4;
  if ("vector" in t) return 4;
  return t.minBytes;
}

export class JuteRecord<S extends Fields> {
  readonly minBytes: number;

  constructor(readonly name: string, readonly fields: S) {
    this.minBytes = Object.values(fields).reduce((n, t) => n + minBytes(t), 0);
  }

  encode(w: Writer, value: RecordValue<S>): void {
    for (const [name, type] of Object.entries(this.fields)) writeField(w, type, value[name]);
  }

  decode(r: Reader): RecordValue<S> {
    const out: Record<string, unknown> = {};
    for (const [name, type] of Object.entries(this.fields)) out[name] = readField(r, type);
    return out as RecordValue<S>;
  }

  /** The record alone, as bytes (tests and golden checks). */
  toBytes(value: RecordValue<S>): Uint8Array {
    const w = new Writer(64);
    this.encode(w, value);
    return w.finish().slice();
  }
}

export function record<S extends Fields>(name: string, fields: S): JuteRecord<S> {
  return new JuteRecord(name, fields);
}

export function vector<E extends FieldType>(element: E): VectorOf<E> {
  return { vector: element };
}

// ---------------------------------------------------------------------------------------------
// Field codecs

function writeField(w: Writer, type: FieldType, v: unknown): void {
  switch (type) {
    case "int":
      w.int32(v as number);
      return;
    case "long":
      w.int64(v as bigint);
      return;
    case "boolean":
      w.bool(v as boolean);
      return;
    case "ustring":
      writeBuffer(w, utf8Bytes(v as string));
      return;
    case "buffer":
      writeBuffer(w, v as Uint8Array);
      return;
  }
  if ("vector" in type) {
    const items = v as unknown[];
    w.int32(items.length);
    for (const item of items) writeField(w, type.vector, item);
    return;
  }
  type.encode(w, v as never);
}

function writeBuffer(w: Writer, b: Uint8Array): void {
  w.int32(b.length);
  w.bytes(b);
}

function readField(r: Reader, type: FieldType): unknown {
  switch (type) {
    case "int":
      return r.int32();
    case "long":
      return r.int64();
    case "boolean":
      return readBool(r);
    case "ustring":
      return r.utf8(readLength(r, 1));
    case "buffer":
      return r.bytes(readLength(r, 1)).slice();
  }
  if ("vector" in type) {
    const count = readLength(r, minBytes(type.vector));
    const out: unknown[] = [];
    for (let i = 0; i < count && r.ok; i++) out.push(readField(r, type.vector));
    return out;
  }
  return type.decode(r);
}

/** Jute writes booleans as one byte, 0 or 1; anything else means we are out of step. */
function readBool(r: Reader): boolean {
  const b = r.int8();
  if (b !== 0 && b !== 1) r.fail(`boolean byte ${b}`);
  return b === 1;
}

/**
 * A length or count: -1 (null) reads as 0; any other negative value, or one that cannot fit in
 * the bytes left at elementBytes each, marks the reader bad.
 */
function readLength(r: Reader, elementBytes: number): number {
  const n = r.int32();
  if (n === -1) return 0;
  if (n < 0 || n * elementBytes > r.remaining) {
    r.fail(`length ${n} does not fit the ${r.remaining} bytes left`);
    return 0;
  }
  return n;
}
