// The schema DSL's parser, and the codec's exact bytes for a small hand-built schema: non-compact
// (int16/int32 lengths, -1 for null) and compact (unsigned varint length + 1, 0 for null) strings,
// bytes and arrays, inline structs, and the tagged-field section of flexible versions.
import assert from "node:assert/strict";
import { test } from "node:test";
import { apiSchemaByKey } from "../../src/protocol/api/mod.ts";
import { decode, encode, type Struct } from "../../src/protocol/codec.ts";
import { defaultOf, message, parseFields, parseRange } from "../../src/protocol/schema.ts";
import { Reader, Writer } from "../../src/util/bytes.ts";

const all = { min: 0, max: 5 };

function bytesOf(schema: ReturnType<typeof message>, version: number, s: Struct): number[] {
  const w = new Writer(1 << 17); // no growth here: see the Writer test at the end
  encode(schema, version, s, w);
  return Array.from(w.finish());
}

function decodeOf(schema: ReturnType<typeof message>, version: number, bytes: number[]): { value: Struct; r: Reader } {
  const r = new Reader(Uint8Array.from(bytes));
  return { value: decode(schema, version, r), r };
}

// ---- parser ---------------------------------------------------------------------------------

test("parseRange: single, open and closed ranges, with or without v", () => {
  assert.deepEqual(parseRange("v3"), { min: 3, max: 3 });
  assert.deepEqual(parseRange("3"), { min: 3, max: 3 });
  assert.deepEqual(parseRange("v3+"), { min: 3, max: Infinity });
  assert.deepEqual(parseRange("v1-12"), { min: 1, max: 12 });
  assert.deepEqual(parseRange("0-3"), { min: 0, max: 3 });
  for (const bad of ["", "v", "3-", "v-3", "v3++", "x3", "3+4", "v3 "]) {
    assert.throws(() => parseRange(bad), /version range/, bad);
  }
});

test("parseFields: types, arrays, nesting, and versions inherited from the parent", () => {
  const fields = parseFields(`
    a        int16
    list     []int32     v2+
    items    []          v1-4   // a comment
      name   string
      inner  []
        x    uuid        v3+
    one      struct
      y      float64
  `, all);
  assert.deepEqual(fields.map((f) => [f.name, f.type, f.array]), [
    ["a", "int16", false],
    ["list", "int32", true],
    ["items", "struct", true],
    ["one", "struct", false],
  ]);
  assert.deepEqual(fields[0].versions, all);
  assert.deepEqual(fields[1].versions, { min: 2, max: Infinity });
  const items = fields[2];
  assert.deepEqual(items.versions, { min: 1, max: 4 });
  assert.deepEqual(items.fields[0].versions, { min: 1, max: 4 }, "a nested field inherits its parent's range");
  assert.deepEqual(items.fields[1].fields[0].versions, { min: 3, max: Infinity });
  assert.equal(fields[3].fields[0].type, "float64");
});

test("parseFields: nullable, with and without its own range", () => {
  const [a, b, c, d] = parseFields(`
    a  string  nullable
    b  string  v2+  nullable
    c  []int8  v1+  nullable v3+
    d  bytes
  `, all);
  assert.deepEqual(a.nullable, all);
  assert.deepEqual(b.nullable, { min: 2, max: Infinity });
  assert.deepEqual(c.versions, { min: 1, max: Infinity });
  assert.deepEqual(c.nullable, { min: 3, max: Infinity });
  assert.equal(d.nullable, null);
});

test("parseFields: tags and defaults", () => {
  const f = parseFields(`
    a  int32   default=-1
    b  int64   default=-1
    c  string  nullable  default=null
    d  string  default=""
    e  bool    default=true
    g  int32   default=0x7fffffff
    h  int32   default=-2147483648
    i  float64 default=1.5
    j  int16   tag=3
    k  string  default=abc
  `, all);
  const d = Object.fromEntries(f.map((x) => [x.name, x.defaultValue]));
  assert.deepEqual(d, { a: -1, b: -1n, c: null, d: "", e: true, g: 2147483647, h: -2147483648, i: 1.5, j: 0, k: "abc" });
  assert.equal(f.find((x) => x.name === "j")?.tag, 3);
  assert.equal(f.find((x) => x.name === "a")?.tag, null);
});

test("parseFields: zero values, and struct defaults built from their fields", () => {
  const f = parseFields(`
    a  int64
    b  bool
    c  string
    d  bytes
    e  records  nullable
    u  uuid
    l  []int32
    s  struct
      x  int32  default=-1
      y  int64  default=-1
      z  []
        w  int8
  `, all);
  const d = Object.fromEntries(f.map((x) => [x.name, x.defaultValue]));
  assert.deepEqual(d, {
    a: 0n, b: false, c: "", d: new Uint8Array(0), e: null, u: new Uint8Array(16), l: [],
    s: { x: -1, y: -1n, z: [] },
  });
  // defaultOf hands out copies: changing one does not change the schema's default.
  const s = defaultOf(f[7]) as { x: number; z: unknown[] };
  s.x = 5;
  s.z.push(1);
  assert.deepEqual(defaultOf(f[7]), { x: -1, y: -1n, z: [] });
  const u = defaultOf(f[5]) as Uint8Array;
  u[0] = 1;
  assert.deepEqual(defaultOf(f[5]), new Uint8Array(16));
});

test("parseFields and message: bad input fails an assertion naming the problem", () => {
  const bad: [string, RegExp][] = [
    ["a  int33", /unknown type "int33"/],
    ["a", /has a type/],
    ["a  int32  sometimes", /unknown word "sometimes"/],
    ["a  int32\n  b  int32", /has children/],
    ["a  []", /"a" has fields/],
    ["a  struct", /"a" has fields/],
    ["a  []\n      b  int8\n    c  int8", /indentation/],
    ["a  int32\n  b  int8", /has children/],
    ["a  int32\na  int16", /declared once/],
    ["a  []\n  b  int8\n  b  int8", /declared once/],
    ["a  int32  tag=0\nb  int32  tag=0", /tag 0 used once/],
    ["a  int32  tag=x", /tag=N/],
    ["a  int32  tag=-1", /tag=N/],
    ["a  int32  tag=1  tag=2", /tag=N/],
    ["a  int32  nullable", /nullable/],
    ["a  struct  nullable\n  b  int8", /nullable/],
    ["a  string  default=null", /needs nullable/],
    ["a  int32  default=abc", /is a number/],
    ["a  int32  default=-0x10", /is a number/],
    ["a  int64  default=1.5", /is an integer/],
    ["a  int32  default=1  default=2", /one default/],
    ["a  bool  default=yes", /true or false/],
    ["a  []int32  default=-1", /only null/],
    ["a  int32  v3-1", /not empty/],
    ["a  int32  v7+", /versions meet/],
    ["a  int32  tag=0", /tagged only in flexible/],
    ["a  int32  v1-2  tag=0", /tagged only in flexible/],
    ["A  int32", /lowerCamelCase/],
    ["a_b  int32", /lowerCamelCase/],
  ];
  // The fields are parsed at their first use (start-up time), so that is where the assertion fires.
  for (const [text, why] of bad) {
    assert.throws(() => message(99, "BadRequest", "0-5", "3+", text).fields, why, text);
  }
  // A well-formed tagged field in flexible versions is accepted.
  assert.equal(message(99, "GoodRequest", "0-5", "3+", "a  int32  v3+  tag=0").fields.length, 1);
});

// ---- exact bytes ----------------------------------------------------------------------------

const T = message(99, "TestRequest", "0-1", "1+", `
  name    string  nullable
  ids     []int32
  items   []
    k     string
  maybe   []      nullable
    x     int8
  blob    bytes   nullable
  extra   int32   v1+  tag=0
  note    string  v1+  nullable  tag=1  default=null
`);

const value: Struct = {
  name: "ab",
  ids: [1],
  items: [{ k: "c" }],
  maybe: null,
  blob: Uint8Array.of(9),
  extra: 0,
  note: null,
};

test("non-compact encoding: int16 string lengths, int32 array and bytes lengths, -1 for null", () => {
  const bytes = [
    0x00, 0x02, 0x61, 0x62, // name "ab"
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, // ids [1]
    0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x63, // items [{k: "c"}]
    0xff, 0xff, 0xff, 0xff, // maybe null
    0x00, 0x00, 0x00, 0x01, 0x09, // blob [9]
  ];
  assert.deepEqual(bytesOf(T, 0, value), bytes);
  const { value: back, r } = decodeOf(T, 0, bytes);
  assert.ok(r.ok, r.error ?? "");
  assert.deepEqual(back, value);
  // Nulls and empties.
  assert.deepEqual(bytesOf(T, 0, { ...value, name: null, ids: [], items: [], blob: null }).slice(0, 10), [
    0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  ]);
  assert.deepEqual(bytesOf(T, 0, { ...value, name: "" }).slice(0, 2), [0x00, 0x00]);
});

test("compact encoding: varint length + 1, 0 for null, and a tagged section per struct", () => {
  const bytes = [
    0x03, 0x61, 0x62, // name "ab"
    0x02, 0x00, 0x00, 0x00, 0x01, // ids [1]
    0x02, 0x02, 0x63, 0x00, // items [{k: "c"}], the element's own (empty) tagged section
    0x00, // maybe null
    0x02, 0x09, // blob [9]
    0x00, // no tagged fields: extra and note are at their defaults
  ];
  assert.deepEqual(bytesOf(T, 1, value), bytes);
  const { value: back, r } = decodeOf(T, 1, bytes);
  assert.ok(r.ok, r.error ?? "");
  assert.deepEqual(back, value);
  assert.deepEqual(bytesOf(T, 1, { ...value, name: null }).slice(0, 1), [0x00]);
  assert.deepEqual(bytesOf(T, 1, { ...value, name: "" }).slice(0, 1), [0x01]);
  assert.deepEqual(bytesOf(T, 1, { ...value, name: "é" }).slice(0, 3), [0x03, 0xc3, 0xa9], "lengths count UTF-8 bytes");
});

test("compact lengths past 127 take two varint bytes", () => {
  const long = "x".repeat(200);
  // 201 = 0xc9 -> 0xc9 0x01 as an unsigned varint.
  assert.deepEqual(bytesOf(T, 1, { ...value, name: long }).slice(0, 3), [0xc9, 0x01, 0x78]);
  assert.equal(decodeOf(T, 1, bytesOf(T, 1, { ...value, name: long })).value.name, long);
});

test("tagged fields: written in tag order when not default, read back, unknown tags skipped", () => {
  const tail = [0x02, 0x00, 0x04, 0x00, 0x00, 0x00, 0x05, 0x01, 0x03, 0x03, 0x68, 0x69];
  const bytes = [0x03, 0x61, 0x62, 0x02, 0x00, 0x00, 0x00, 0x01, 0x02, 0x02, 0x63, 0x00, 0x00, 0x02, 0x09];
  const withTags = { ...value, extra: 5, note: "hi" };
  assert.deepEqual(bytesOf(T, 1, withTags), [...bytes, ...tail]);
  assert.deepEqual(decodeOf(T, 1, [...bytes, ...tail]).value, withTags);
  // Not flexible: tagged fields do not exist, whatever the value says.
  assert.deepEqual(bytesOf(T, 0, withTags), bytesOf(T, 0, value));
  // An unknown tag (7, two bytes) among known ones is skipped.
  const unknown = [0x03, 0x00, 0x04, 0x00, 0x00, 0x00, 0x05, 0x07, 0x02, 0xaa, 0xbb, 0x01, 0x03, 0x03, 0x68, 0x69];
  const { value: back, r } = decodeOf(T, 1, [...bytes, ...unknown]);
  assert.ok(r.ok, r.error ?? "");
  assert.deepEqual(back, withTags);
  // A tagged field whose size runs past the end fails the reader.
  const { r: short } = decodeOf(T, 1, [...bytes, 0x01, 0x00, 0x09, 0x00, 0x00, 0x00, 0x05]);
  assert.equal(short.ok, false);
  assert.match(short.error ?? "", /past the end/);
  // A tagged field whose content is bad (a 4-byte int32 in 2 bytes) fails the reader.
  const { r: bad } = decodeOf(T, 1, [...bytes, 0x01, 0x00, 0x02, 0x00, 0x05]);
  assert.equal(bad.ok, false);
});

test("null where the version does not allow it: the encoder asserts, the decoder fails", () => {
  assert.throws(() => bytesOf(T, 0, { ...value, ids: null }), /nullable/);
  const { r } = decodeOf(T, 0, [0x00, 0x02, 0x61, 0x62, 0xff, 0xff, 0xff, 0xff]);
  assert.equal(r.ok, false);
  assert.match(r.error ?? "", /ids is null/);
  const { r: s } = decodeOf(T, 0, [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xff, 0xff]);
  assert.equal(s.ok, false);
  assert.match(s.error ?? "", /k is null/);
});

test("lengths below -1, invalid UTF-8 and non-compact strings too long for int16", () => {
  assert.equal(decodeOf(T, 0, [0xff, 0xfe]).r.ok, false);
  assert.equal(decodeOf(T, 0, [0x00, 0x02, 0x61, 0x62, 0xff, 0xff, 0xff, 0xfe]).r.ok, false);
  const { r } = decodeOf(T, 0, [0x00, 0x02, 0xc3, 0x28]);
  assert.equal(r.ok, false);
  assert.match(r.error ?? "", /UTF-8/);
  assert.throws(() => bytesOf(T, 0, { ...value, name: "x".repeat(0x8000) }), /int16 length/);
  assert.equal(bytesOf(T, 1, { ...value, name: "x".repeat(0x8000) }).length > 0x8000, true);
});

const S = message(98, "StructRequest", "0-1", "1+", `
  pos     struct
    a     int16  default=-1
    b     int32
  leader  struct  v1+  tag=0
    id    int32  default=-1
`);

test("inline structs: fields in place, their own tagged section, tagged structs omitted at default", () => {
  assert.deepEqual(bytesOf(S, 0, { pos: { a: 1, b: 2 } }), [0x00, 0x01, 0x00, 0x00, 0x00, 0x02]);
  assert.deepEqual(decodeOf(S, 0, [0x00, 0x01, 0x00, 0x00, 0x00, 0x02]).value, {
    pos: { a: 1, b: 2 },
    leader: { id: -1 },
  });
  // Flexible: pos ends with its own tagged section; leader at its default is left out.
  assert.deepEqual(bytesOf(S, 1, { pos: { a: 1, b: 2 }, leader: { id: -1 } }), [
    0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00,
  ]);
  assert.deepEqual(bytesOf(S, 1, {}), [0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], "absent: defaults");
  const withLeader = [0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01, 0x00, 0x05, 0x00, 0x00, 0x00, 0x07, 0x00];
  assert.deepEqual(bytesOf(S, 1, { pos: { a: 1, b: 2 }, leader: { id: 7 } }), withLeader);
  assert.deepEqual(decodeOf(S, 1, withLeader).value, { pos: { a: 1, b: 2 }, leader: { id: 7 } });
  assert.throws(() => bytesOf(S, 1, { pos: null }), /nullable/);
});

test("decoded defaults are fresh objects, not the schema's own", () => {
  const a = decodeOf(S, 0, [0x00, 0x01, 0x00, 0x00, 0x00, 0x02]).value;
  (a.leader as Struct).id = 9;
  assert.deepEqual(decodeOf(S, 0, [0x00, 0x01, 0x00, 0x00, 0x00, 0x02]).value.leader, { id: -1 });
});

test("encode refuses a version outside the schema", () => {
  assert.throws(() => bytesOf(T, 2, value), /supported/);
});

test("a Writer that must grow gives the same bytes as one that need not", () => {
  // Every encode goes through Writer growth in real use (responses of any size, and the codec's
  // own small buffer for each tagged field). This is the ApiVersions v3 response with many keys
  // and a tagged feature list larger than that buffer.
  const schema = apiSchemaByKey(18)!.response;
  const features = Array.from({ length: 20 }, (_, i) => ({ name: `feature.${i}`, minVersion: 1, maxVersion: i }));
  const s: Struct = {
    errorCode: 0,
    apiKeys: Array.from({ length: 60 }, (_, i) => ({ apiKey: i, minVersion: 0, maxVersion: i % 13 })),
    throttleTimeMs: 0,
    supportedFeatures: features,
    finalizedFeaturesEpoch: 3n,
  };
  const big = new Writer(1 << 16);
  encode(schema, 3, s, big);
  const small = new Writer(1);
  encode(schema, 3, s, small);
  assert.deepEqual(Array.from(small.finish()), Array.from(big.finish()));
  const r = new Reader(big.finish());
  assert.deepEqual((decode(schema, 3, r).supportedFeatures as unknown[]).length, 20);
  assert.ok(r.ok, r.error ?? "");
});
