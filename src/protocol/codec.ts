// Encoder and decoder derived from a MessageSchema (schema.ts) for one version. Decoding never
// throws on bad input: the Reader marks itself bad and the caller checks `reader.ok` once.
// Every array or string length read from the wire is checked against the bytes left and against
// limits.wireArrayLengthMax before anything is allocated.
//
// Flexible versions: strings, bytes, records and arrays are "compact" (unsigned varint length + 1,
// 0 meaning null), and every struct ends with a tagged-field section (count, then tag, size, bytes).
// Unknown tags are skipped on decode.

import {
  assert,
  bytesEqual,
  Reader,
  utf8Bytes,
  Writer,
  wireArrayLengthMax,
  wireTaggedFieldsMax,
} from "../util/mod.ts";
import { defaultOf, type Field, inRange, type MessageSchema } from "./schema.ts";

export type Struct = Record<string, unknown>;

// ---- decoding ---------------------------------------------------------------------------------

function readLength(r: Reader, flexible: boolean, wide: boolean): number {
  if (flexible) return r.uvarint() - 1;
  return wide ? r.int32() : r.int16();
}

function readPrimitive(r: Reader, f: Field, flexible: boolean): unknown {
  switch (f.type) {
    case "int8":
      return r.int8();
    case "int16":
      return r.int16();
    case "int32":
      return r.int32();
    case "int64":
      return r.int64();
    case "uint16":
      return r.uint16();
    case "float64":
      return r.float64();
    case "bool":
      return r.bool();
    case "uuid":
      return r.uuid();
    case "string": {
      const n = readLength(r, flexible, false);
      if (n < 0) return n === -1 ? null : (r.fail(`string length ${n}`), "");
      if (n > r.remaining) return (r.fail(`string length ${n} past the end`), "");
      return r.utf8(n);
    }
    case "bytes":
    case "records": {
      const n = readLength(r, flexible, true);
      if (n < 0) return n === -1 ? null : (r.fail(`bytes length ${n}`), null);
      if (n > r.remaining) return (r.fail(`bytes length ${n} past the end`), null);
      return r.bytes(n);
    }
    default:
      assert(false, `primitive type ${f.type}`);
  }
}

type ReadFn = (r: Reader) => unknown;
type StructReader = (r: Reader) => Struct;

/**
 * Readers are compiled once per field list, version and flexibility: the version checks, the
 * type switch and the null rules are settled here, so a request's thousand partitions cost only
 * their reads (OffsetCommit, OffsetFetch, Produce and Fetch with many partitions).
 */
const structReaders = new WeakMap<Field[], Map<number, StructReader>>();

function primitiveReader(f: Field, flexible: boolean): ReadFn {
  switch (f.type) {
    case "int8":
      return (r) => r.int8();
    case "int16":
      return (r) => r.int16();
    case "int32":
      return (r) => r.int32();
    case "int64":
      return (r) => r.int64();
    default:
      return (r) => readPrimitive(r, f, flexible);
  }
}

function valueReader(f: Field, version: number, flexible: boolean): ReadFn {
  const nullable = inRange(f.nullable, version);
  if (!f.array && f.type === "struct") return structReader(f.fields, version, flexible);
  if (!f.array) {
    const read = primitiveReader(f, flexible);
    if (nullable || (f.type !== "string" && f.type !== "bytes" && f.type !== "records")) return read;
    return (r) => {
      const v = read(r);
      if (v === null) r.fail(`${f.name} is null but not nullable in v${version}`);
      return v;
    };
  }
  const element = f.type === "struct" ? structReader(f.fields, version, flexible) : primitiveReader(f, flexible);
  const elementMayBeNull = f.type === "string" || f.type === "bytes" || f.type === "records";
  return (r) => {
    const n = readLength(r, flexible, true);
    if (n === -1) {
      if (!nullable) r.fail(`${f.name} is null but not nullable in v${version}`);
      return null;
    }
    // Each element takes at least one byte, so a count beyond the bytes left is a lie.
    if (n < -1 || n > r.remaining || n > wireArrayLengthMax) {
      r.fail(`${f.name}: array length ${n}`);
      return [];
    }
    const out = new Array(n);
    for (let i = 0; i < n && r.ok; i++) {
      out[i] = element(r);
      // Kafka's elements are never nullable (its generator has no way to declare them so): a null
      // inside []string or []bytes is a malformed request, refused here before any handler sees it.
      if (elementMayBeNull && out[i] === null) r.fail(`${f.name}[${i}] is null; array elements are never nullable`);
    }
    return out;
  };
}

function readValue(r: Reader, f: Field, version: number, flexible: boolean): unknown {
  return valueReader(f, version, flexible)(r);
}

function readTaggedFields(r: Reader, fields: Field[], version: number, out: Struct): void {
  const count = r.uvarint();
  if (count > wireTaggedFieldsMax) return r.fail(`tagged field count ${count}`);
  for (let i = 0; i < count && r.ok; i++) {
    const tag = r.uvarint();
    const size = r.uvarint();
    if (size > r.remaining) return r.fail(`tagged field ${tag} size ${size} past the end`);
    const f = fields.find((x) => x.tag === tag && inRange(x.versions, version));
    if (f === undefined) {
      r.bytes(size); // unknown tags are skipped, as Kafka does
      continue;
    }
    const sub = new Reader(r.buf, r.pos, r.pos + size);
    out[f.name] = readValue(sub, f, version, true);
    if (!sub.ok) return r.fail(`tagged field ${f.name}: ${sub.error}`);
    r.pos += size;
  }
}

/** The cached compiled function of a field list for a version, made by make when first asked. */
function compiled<T>(cache: WeakMap<Field[], Map<number, T>>, fields: Field[], version: number, flexible: boolean, make: () => T): T {
  let byVersion = cache.get(fields);
  if (byVersion === undefined) cache.set(fields, byVersion = new Map());
  const key = version * 2 + (flexible ? 1 : 0);
  let fn = byVersion.get(key);
  if (fn === undefined) byVersion.set(key, fn = make());
  return fn;
}

function structReader(fields: Field[], version: number, flexible: boolean): StructReader {
  return compiled(structReaders, fields, version, flexible, () => {
    // Compiled lazily on first use, so a recursive schema would not loop (none is).
    let read: StructReader | null = null;
    return (r) => (read ??= compileStruct(fields, version, flexible))(r);
  });
}

function compileStruct(fields: Field[], version: number, flexible: boolean): StructReader {
  // Tagged fields are filled from the tagged section below; absent ones keep their default.
  const steps = fields.map((f): [string, ReadFn | null, Field] =>
    !inRange(f.versions, version) || f.tag !== null ? [f.name, null, f] : [f.name, valueReader(f, version, flexible), f]
  );
  return (r) => {
    const out: Struct = {};
    for (const [name, read, f] of steps) out[name] = read === null ? defaultOf(f) : read(r);
    if (flexible) readTaggedFields(r, fields, version, out);
    return out;
  };
}

export function readStruct(r: Reader, fields: Field[], version: number, flexible: boolean): Struct {
  return structReader(fields, version, flexible)(r);
}

/** Decodes the body of a message; check `r.ok` (and `r.remaining`) afterwards. */
export function decode(schema: MessageSchema, version: number, r: Reader): Struct {
  return readStruct(r, schema.fields, version, version >= schema.flexibleFrom);
}

// ---- encoding ---------------------------------------------------------------------------------

function writeLength(w: Writer, n: number, flexible: boolean, wide: boolean): void {
  if (flexible) w.uvarint(n + 1);
  else if (wide) w.int32(n);
  else w.int16(n);
}

function writePrimitive(w: Writer, f: Field, v: unknown, flexible: boolean): void {
  switch (f.type) {
    case "int8":
      w.int8(v as number);
      return;
    case "int16":
      w.int16(v as number);
      return;
    case "int32":
      w.int32(v as number);
      return;
    case "int64":
      w.int64(typeof v === "bigint" ? v : BigInt(v as number));
      return;
    case "uint16":
      w.uint16(v as number);
      return;
    case "float64":
      w.float64(v as number);
      return;
    case "bool":
      w.bool(v as boolean);
      return;
    case "uuid":
      assert(v instanceof Uint8Array && v.length === 16, `${f.name} is a 16-byte uuid`);
      w.bytes(v);
      return;
    case "string": {
      if (v === null) return writeLength(w, -1, flexible, false);
      const b = utf8Bytes(v as string);
      // A non-compact string's length is an int16; a longer one would wrap and corrupt the frame.
      assert(flexible || b.length <= 0x7fff, `${f.name}: string of ${b.length} bytes fits an int16 length`);
      writeLength(w, b.length, flexible, false);
      w.bytes(b);
      return;
    }
    case "bytes":
    case "records": {
      if (v === null) return writeLength(w, -1, flexible, true);
      const b = v as Uint8Array;
      writeLength(w, b.length, flexible, true);
      w.bytes(b);
      return;
    }
    default:
      assert(false, `primitive type ${f.type}`);
  }
}

type WriteFn = (w: Writer, v: unknown) => void;
type StructWriter = (w: Writer, s: Struct) => void;

/** Writers, compiled once per field list, version and flexibility as the readers are. */
const structWriters = new WeakMap<Field[], Map<number, StructWriter>>();

function primitiveWriter(f: Field, flexible: boolean): WriteFn {
  switch (f.type) {
    case "int16":
      return (w, v) => w.int16(v as number);
    case "int32":
      return (w, v) => w.int32(v as number);
    case "int64":
      return (w, v) => w.int64(typeof v === "bigint" ? v : BigInt(v as number));
    default:
      return (w, v) => writePrimitive(w, f, v, flexible);
  }
}

function valueWriter(f: Field, version: number, flexible: boolean): WriteFn {
  const nullable = inRange(f.nullable, version);
  const write = (): WriteFn => {
    if (!f.array && f.type === "struct") {
      const struct = structWriter(f.fields, version, flexible);
      return (w, v) => struct(w, v as Struct);
    }
    if (!f.array) return primitiveWriter(f, flexible);
    const struct = f.type === "struct" ? structWriter(f.fields, version, flexible) : null;
    const element = primitiveWriter(f, flexible);
    return (w, v) => {
      if (v === null) return writeLength(w, -1, flexible, true);
      const items = v as unknown[];
      writeLength(w, items.length, flexible, true);
      if (struct !== null) {
        for (const item of items) struct(w, item as Struct);
        return;
      }
      for (const item of items) {
        assert(item !== null && item !== undefined, `${f.name}: array elements are never null`);
        element(w, item);
      }
    };
  };
  const inner = write();
  return (w, v) => {
    if (v === null || v === undefined) {
      v = v === undefined ? defaultOf(f) : v;
      assert(v !== null || nullable, `${f.name} is nullable in v${version}`);
    }
    inner(w, v);
  };
}

function writeValue(w: Writer, f: Field, v: unknown, version: number, flexible: boolean): void {
  valueWriter(f, version, flexible)(w, v);
}

/** Whether a tagged field may be left out: its value equals its default, as Kafka compares. */
function isDefault(f: Field, v: unknown, version: number): boolean {
  const d = f.defaultValue;
  if (v === undefined || v === d) return true;
  if (Array.isArray(v)) return v.length === 0 && Array.isArray(d);
  if (v instanceof Uint8Array) return d instanceof Uint8Array && bytesEqual(v, d);
  if (f.type === "struct" && !f.array && v !== null && typeof v === "object") {
    const s = v as Struct;
    return f.fields.every((c) => !inRange(c.versions, version) || isDefault(c, s[c.name], version));
  }
  return false;
}

function structWriter(fields: Field[], version: number, flexible: boolean): StructWriter {
  return compiled(structWriters, fields, version, flexible, () => {
    let write: StructWriter | null = null;
    return (w, s) => (write ??= compileStructWriter(fields, version, flexible))(w, s);
  });
}

function compileStructWriter(fields: Field[], version: number, flexible: boolean): StructWriter {
  const active = fields.filter((f) => inRange(f.versions, version));
  const steps = active.filter((f) => f.tag === null).map((f): [string, WriteFn] => [f.name, valueWriter(f, version, flexible)]);
  const taggable = flexible ? active.filter((f) => f.tag !== null).sort((a, b) => (a.tag as number) - (b.tag as number)) : [];
  return (w, s) => {
    for (const [name, write] of steps) write(w, s[name]);
    if (!flexible) return;
    const tagged = taggable.length === 0 ? taggable : taggable.filter((f) => !isDefault(f, s[f.name], version));
    w.uvarint(tagged.length);
    for (const f of tagged) {
      const sub = new Writer(64);
      writeValue(sub, f, s[f.name], version, true);
      const bytes = sub.finish();
      w.uvarint(f.tag as number).uvarint(bytes.length).bytes(bytes);
    }
  };
}

export function writeStruct(w: Writer, fields: Field[], s: Struct, version: number, flexible: boolean): void {
  structWriter(fields, version, flexible)(w, s);
}

export function encode(schema: MessageSchema, version: number, s: Struct, w: Writer): void {
  assert(inRange(schema.versions, version), `${schema.name} v${version} is supported`);
  writeStruct(w, schema.fields, s, version, version >= schema.flexibleFrom);
}
