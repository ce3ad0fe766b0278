// Every API, request and response, every supported version: a value generated from the schema
// (every field present set to a non-default value, or a variant with nulls and defaults) encodes,
// decodes to the same value, and re-encodes to the same bytes. Truncated and random input never
// makes the decoder throw, and a truncated message always leaves the reader bad.
import assert from "node:assert/strict";
import { test } from "node:test";
import { apiSchemas } from "../../src/protocol/api/mod.ts";
import { decode, encode, type Struct } from "../../src/protocol/codec.ts";
import { defaultOf, type Field, inRange, type MessageSchema } from "../../src/protocol/schema.ts";
import { Reader, Writer } from "../../src/util/bytes.ts";

type Mode = "full" | "sparse";

/** Deterministic values: each call of next() gives a new small positive integer. */
class Gen {
  n = 0;
  constructor(readonly mode: Mode) {}
  next(): number {
    return ++this.n;
  }
}

function primitive(f: Field, g: Gen): unknown {
  const n = g.next();
  const sign = n % 2 === 0 ? -1 : 1;
  let v: unknown;
  switch (f.type) {
    case "int8":
      v = sign * (n % 120 + 1);
      break;
    case "int16":
      v = sign * (n * 257 % 32000 + 1);
      break;
    case "uint16":
      v = 40000 + n;
      break;
    case "int32":
      v = sign * (n * 100_003 % 2_000_000_000 + 1);
      break;
    case "int64":
      v = BigInt(sign) * (BigInt(n) * 1_000_000_007n + (1n << 40n));
      break;
    case "float64":
      v = n + 0.25;
      break;
    case "bool":
      return f.array ? n % 2 === 0 : f.defaultValue !== true;
    case "string":
      return `s${n}-é`; // not ASCII, so byte lengths differ from string lengths
    case "bytes":
    case "records":
      return Uint8Array.from({ length: n % 7 + 1 }, (_, i) => (n + i * 31) & 0xff);
    case "uuid":
      return Uint8Array.from({ length: 16 }, (_, i) => (n * 16 + i + 1) & 0xff);
    default:
      assert.fail(`generator for ${f.type}`);
  }
  return v === f.defaultValue || (typeof v === "number" && v === 0) ? (v as number) + 1 : v;
}

function value(f: Field, version: number, flexible: boolean, g: Gen): unknown {
  if (g.mode === "sparse") {
    if (inRange(f.nullable, version)) return null;
    if (f.tag !== null) return defaultOf(f);
  }
  if (f.type === "struct" && !f.array) return struct(f.fields, version, flexible, g);
  if (!f.array) return primitive(f, g);
  const length = g.mode === "full" ? 2 : 1;
  return Array.from({ length }, () => f.type === "struct" ? struct(f.fields, version, flexible, g) : primitive(f, g));
}

/** A value for every field: generated where the field exists in this version, else its default. */
function struct(fields: Field[], version: number, flexible: boolean, g: Gen): Struct {
  const out: Struct = {};
  for (const f of fields) {
    const present = inRange(f.versions, version) && (f.tag === null || flexible);
    out[f.name] = present ? value(f, version, flexible, g) : defaultOf(f);
  }
  return out;
}

function generate(schema: MessageSchema, version: number, mode: Mode): Struct {
  return struct(schema.fields, version, version >= schema.flexibleFrom, new Gen(mode));
}

function encoded(schema: MessageSchema, version: number, s: Struct): Uint8Array {
  // Room for every message here, so these tests exercise the codec; Writer growth is tested in
  // codec.test.ts.
  const w = new Writer(1 << 16);
  encode(schema, version, s, w);
  return w.finish().slice();
}

function decoded(schema: MessageSchema, version: number, bytes: Uint8Array): { value: Struct; r: Reader } {
  const r = new Reader(bytes);
  return { value: decode(schema, version, r), r };
}

/** A small deterministic PRNG (mulberry32), so failures reproduce. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

function versions(schema: MessageSchema): number[] {
  const out: number[] = [];
  for (let v = schema.versions.min; v <= schema.versions.max; v++) out.push(v);
  return out;
}

const messages = apiSchemas.flatMap((a) => [a.request, a.response]);

for (const schema of messages) {
  test(`${schema.name}: every version round-trips`, () => {
    for (const v of versions(schema)) {
      for (const mode of ["full", "sparse"] as const) {
        const value = generate(schema, v, mode);
        const bytes = encoded(schema, v, value);
        const { value: back, r } = decoded(schema, v, bytes);
        assert.ok(r.ok, `${schema.name} v${v} ${mode}: ${r.error}`);
        assert.equal(r.remaining, 0, `${schema.name} v${v} ${mode}: every byte read`);
        assert.deepEqual(back, value, `${schema.name} v${v} ${mode}: decoded value`);
        assert.deepEqual(encoded(schema, v, back), bytes, `${schema.name} v${v} ${mode}: re-encoded bytes`);
      }
    }
  });

  test(`${schema.name}: the generated values exercise the schema`, () => {
    // Guards the round-trip test against passing vacuously: in the full variant, every field
    // present in the newest version differs from its default, so its bytes must appear.
    const v = schema.versions.max;
    const full = encoded(schema, v, generate(schema, v, "full"));
    const empty = encoded(schema, v, {});
    // Bytes, not lengths: a message of fixed-width fields only (HeartbeatResponse) keeps its length.
    assert.notDeepEqual(full, empty, `${schema.name} v${v}: values beyond defaults`);
    const { value } = decoded(schema, v, empty);
    const again = generate(schema, v, "full");
    for (const f of schema.fields) {
      if (!inRange(f.versions, v)) continue;
      assert.notDeepEqual(again[f.name], value[f.name], `${schema.name}.${f.name} v${v} is not its default`);
    }
  });

  test(`${schema.name}: truncated input leaves the reader bad, never throws`, () => {
    for (const v of versions(schema)) {
      const bytes = encoded(schema, v, generate(schema, v, "full"));
      for (let len = 0; len < bytes.length; len++) {
        const r = new Reader(bytes.subarray(0, len));
        decode(schema, v, r);
        assert.equal(r.ok, false, `${schema.name} v${v}: ${len} of ${bytes.length} bytes decoded as whole`);
      }
    }
  });

  test(`${schema.name}: random and corrupted input never throws`, () => {
    const random = prng(schema.apiKey * 1000 + schema.name.length);
    for (const v of versions(schema)) {
      const good = encoded(schema, v, generate(schema, v, "full"));
      for (let i = 0; i < 300; i++) {
        let bytes: Uint8Array;
        if (i % 2 === 0) {
          bytes = Uint8Array.from({ length: Math.floor(random() * 80) }, () => Math.floor(random() * 256));
        } else {
          bytes = good.slice();
          for (let k = 0; k < 1 + (i % 4); k++) bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
        }
        const r = new Reader(bytes);
        const value = decode(schema, v, r);
        // A value the decoder accepted is one the encoder can write again.
        if (r.ok) encoded(schema, v, value);
      }
    }
  });
}

test("huge declared lengths fail without allocating", () => {
  // Fetch v12 response, flexible: throttleTimeMs, errorCode, sessionId, then a responses array
  // claiming 2^32-2 elements in five bytes.
  const schema = apiSchemas.find((a) => a.apiKey === 1)!.response;
  const bytes = Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f);
  const r = new Reader(bytes);
  decode(schema, 12, r);
  assert.equal(r.ok, false);
  assert.match(r.error ?? "", /array length/);
  // The same in a non-flexible version: an int32 count of 2^31-1.
  const r4 = new Reader(Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff));
  decode(schema, 7, r4);
  assert.equal(r4.ok, false);
});
