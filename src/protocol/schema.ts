// The protocol is data: each API message is declared once, as indented text, and the codec
// (codec.ts) walks the parsed declaration for a given version. The text form, one field a line:
//
//   name  type  [vA+ | vA-B]  [nullable [vA+ | vA-B]]  [tag=N]  [default=X]
//
// - type: int8 int16 int32 int64 uint16 float64 bool string bytes records uuid, an array of one
//   of those as `[]int32`, `[]` alone for an array of structs whose fields follow, indented, or
//   `struct` alone for one (non-array, never null) struct whose fields follow, indented.
// - versions default to every version of the message (of the parent, for nested fields); nested
//   fields inherit the parent's range. Write the field's range before `nullable`: a range right
//   after `nullable` is the nullable range. `nullable` without a range means nullable in every
//   version the field exists. Only string, bytes, records and arrays can be nullable.
//   A field outside its versions decodes to its default.
// - tag=N: a tagged field, carried in the tagged-field section; its versions must all be flexible.
// - default=X: -1, 0, true, false, null, "" or a number (0x.. too); otherwise the type's zero
//   value. A struct's default is the struct of its fields' defaults. int64 defaults are bigint.
// Field names are Kafka's JSON names with a lower-case first letter.

import { assert } from "../util/mod.ts";

export type Primitive =
  | "int8"
  | "int16"
  | "int32"
  | "int64"
  | "uint16"
  | "float64"
  | "bool"
  | "string"
  | "bytes"
  | "records"
  | "uuid";

export interface VersionRange {
  min: number;
  max: number; // inclusive; Infinity when open-ended
}

export interface Field {
  name: string;
  /** For arrays, the element type ("struct" when fields is set). */
  type: Primitive | "struct";
  array: boolean;
  versions: VersionRange;
  nullable: VersionRange | null;
  tag: number | null;
  defaultValue: unknown;
  /** Element fields of an array of structs. */
  fields: Field[];
}

export interface MessageSchema {
  name: string;
  apiKey: number;
  versions: VersionRange;
  /** First flexible version; Infinity when the message has none. */
  flexibleFrom: number;
  fields: Field[];
}

const primitives = new Set<string>([
  "int8", "int16", "int32", "int64", "uint16", "float64", "bool", "string", "bytes", "records", "uuid",
]);

export function parseRange(text: string): VersionRange {
  const m = /^v?(\d+)(\+|-(\d+))?$/.exec(text);
  assert(m !== null, `version range "${text}" is vN, vN+ or vN-M`);
  const min = Number(m[1]);
  if (m[2] === undefined) return { min, max: min };
  if (m[2] === "+") return { min, max: Infinity };
  return { min, max: Number(m[3]) };
}

export function inRange(r: VersionRange | null, v: number): boolean {
  return r !== null && v >= r.min && v <= r.max;
}

function parseDefault(text: string, type: Field["type"], array: boolean): unknown {
  if (text === "null") return null;
  assert(!array && type !== "struct", `default "${text}": only null is a default for arrays and structs`);
  if (type === "string") return text === '""' ? "" : text;
  if (type === "bool") {
    assert(text === "true" || text === "false", `default "${text}" is true or false`);
    return text === "true";
  }
  assert(/^(-?\d+(\.\d+)?|0x[0-9a-f]+)$/i.test(text), `default "${text}" is a number`);
  if (type === "int64") {
    assert(!text.includes("."), `default "${text}" is an integer`);
    return BigInt(text);
  }
  const n = Number(text);
  assert(Number.isFinite(n), `default "${text}" is a number`);
  return n;
}

/** A fresh copy of a field's default, safe for the caller to mutate. */
export function defaultOf(f: Field): unknown {
  const d = f.defaultValue;
  if (d === null || typeof d !== "object") return d;
  if (Array.isArray(d)) return [];
  if (d instanceof Uint8Array) return d.slice();
  const out: Record<string, unknown> = {};
  for (const c of f.fields) out[c.name] = defaultOf(c);
  return out;
}

function zeroValue(f: Field): unknown {
  if (f.array) return [];
  switch (f.type) {
    case "int64":
      return 0n;
    case "bool":
      return false;
    case "string":
      return "";
    case "bytes":
      return new Uint8Array(0);
    case "records":
      return null;
    case "uuid":
      return new Uint8Array(16);
    default:
      return 0;
  }
}

interface Line {
  indent: number;
  words: string[];
}

function parseField(line: Line, all: VersionRange): Field {
  const [name, typeWord, ...rest] = line.words;
  assert(typeWord !== undefined, `field "${name}" has a type`);
  assert(/^[a-z][A-Za-z0-9]*$/.test(name), `field name "${name}" is lowerCamelCase`);
  const array = typeWord.startsWith("[]");
  const elem = array ? typeWord.slice(2) : typeWord;
  const struct = array ? elem === "" : elem === "struct";
  assert(struct || primitives.has(elem), `field "${name}": unknown type "${typeWord}"`);
  const f: Field = {
    name,
    type: struct ? "struct" : (elem as Primitive),
    array,
    versions: all,
    nullable: null,
    tag: null,
    defaultValue: undefined,
    fields: [],
  };
  let nullableAll = false;
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i];
    if (w === "nullable") {
      assert(f.nullable === null && !nullableAll, `field "${name}": one "nullable"`);
      const next = rest[i + 1];
      if (next !== undefined && /^v\d/.test(next)) {
        f.nullable = parseRange(next);
        i++;
      } else nullableAll = true;
    } else if (w.startsWith("tag=")) {
      assert(f.tag === null && /^\d+$/.test(w.slice(4)), `field "${name}": one tag=N, N >= 0`);
      f.tag = Number(w.slice(4));
    } else if (w.startsWith("default=")) {
      assert(f.defaultValue === undefined, `field "${name}": one default`);
      f.defaultValue = parseDefault(w.slice(8), f.type, f.array);
    } else if (/^v\d/.test(w)) f.versions = parseRange(w);
    else assert(false, `field "${name}": unknown word "${w}"`);
  }
  if (nullableAll) f.nullable = f.versions;
  assert(f.versions.min <= f.versions.max, `field "${name}": version range is not empty`);
  assert(
    f.nullable === null || ((f.array || nullables.has(f.type)) && f.nullable.min <= f.nullable.max),
    `field "${name}": only strings, bytes, records and arrays are nullable`,
  );
  assert(f.defaultValue !== null || f.nullable !== null, `field "${name}": default=null needs nullable`);
  // A struct's default is filled in once its fields are parsed (see parseFields).
  if (f.defaultValue === undefined && !(f.type === "struct" && !f.array)) f.defaultValue = zeroValue(f);
  return f;
}

const nullables = new Set<string>(["string", "bytes", "records"]);

function checkSiblings(fields: Field[], what: string): void {
  const names = new Set<string>();
  const tags = new Set<number>();
  for (const f of fields) {
    assert(!names.has(f.name), `${what}: field "${f.name}" declared once`);
    names.add(f.name);
    if (f.tag === null) continue;
    assert(!tags.has(f.tag), `${what}: tag ${f.tag} used once`);
    tags.add(f.tag);
  }
}

/** Parses the indented field text of one message; nested fields belong to the `[]` above them. */
export function parseFields(text: string, all: VersionRange): Field[] {
  const lines: Line[] = [];
  for (const raw of text.split("\n")) {
    const body = raw.replace(/\/\/.*$/, "").trimEnd();
    if (body.trim() === "") continue;
    lines.push({ indent: body.length - body.trimStart().length, words: body.trim().split(/\s+/) });
  }
  let i = 0;
  function level(indent: number, range: VersionRange): Field[] {
    const out: Field[] = [];
    while (i < lines.length && lines[i].indent === indent) {
      const f = parseField(lines[i++], range);
      if (i < lines.length && lines[i].indent > indent) {
        assert(f.type === "struct", `field "${f.name}" has children, so its type is [] or struct`);
        f.fields = level(lines[i].indent, f.versions);
        checkSiblings(f.fields, `struct "${f.name}"`);
      }
      assert(f.type !== "struct" || f.fields.length > 0, `struct "${f.name}" has fields`);
      if (f.type === "struct" && !f.array) {
        const d: Record<string, unknown> = {};
        for (const c of f.fields) d[c.name] = defaultOf(c);
        f.defaultValue = Object.freeze(d);
      }
      out.push(f);
    }
    assert(i === lines.length || lines[i].indent < indent, `indentation of "${lines[i]?.words[0]}"`);
    return out;
  }
  const fields = level(lines[0]?.indent ?? 0, all);
  assert(i === lines.length, "every line parsed");
  return fields;
}

export function message(
  apiKey: number,
  name: string,
  versions: string,
  flexible: string | null,
  text: string,
): MessageSchema {
  const all = parseRange(versions);
  const flexibleFrom = flexible === null ? Infinity : parseRange(flexible).min;
  const schema = { name, apiKey, versions: all, flexibleFrom } as MessageSchema;
  // The fields are parsed (and checked) at their first use, then kept as a plain property: every
  // process used to parse all ~140 declarations at start-up, though a broker's first request needs
  // one of them and `strand --version` none.
  Object.defineProperty(schema, "fields", {
    configurable: true,
    enumerable: true,
    get(): Field[] {
      const fields = parseFields(text, all);
      checkSiblings(fields, name);
      checkVersions(name, fields, all, flexibleFrom);
      Object.defineProperty(schema, "fields", { value: fields, enumerable: true, writable: false, configurable: false });
      return fields;
    },
  });
  return schema;
}

/** Every field exists in some version of the message, and a tagged field only in flexible ones. */
function checkVersions(name: string, fields: Field[], all: VersionRange, flexibleFrom: number): void {
  for (const f of fields) {
    assert(f.versions.min <= all.max && f.versions.max >= all.min, `${name}.${f.name}: versions meet ${name}'s`);
    assert(f.tag === null || f.versions.min >= flexibleFrom, `${name}.${f.name}: tagged only in flexible versions`);
    checkVersions(name, f.fields, all, flexibleFrom);
  }
}

/** An API: its request and response schemas, which share version ranges. */
export interface ApiSchema {
  apiKey: number;
  name: string;
  request: MessageSchema;
  response: MessageSchema;
}

export function api(request: MessageSchema, response: MessageSchema): ApiSchema {
  assert(request.apiKey === response.apiKey, `${request.name}: request and response share the API key`);
  assert(
    request.versions.min === response.versions.min && request.versions.max === response.versions.max,
    `${request.name}: request and response share the version range`,
  );
  return { apiKey: request.apiKey, name: request.name.replace(/Request$/, ""), request, response };
}
