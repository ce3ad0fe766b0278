// Our API schemas against Kafka 3.8's own message definitions (JSON, read here only, never by
// src/): for every version strand supports, the same fields in the same order, with the same
// types, nullability, tags and defaults, and the same flexible versions.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { apiSchemaByKey, apiSchemas } from "../../src/protocol/api/mod.ts";
import { consumerProtocolSchemas } from "../../src/protocol/internal/consumer_protocol.ts";
import { offsetsRecordSchemas } from "../../src/protocol/internal/offsets_records.ts";
import { txnLogRecordSchemas } from "../../src/protocol/internal/txn_log.ts";
import { decode, encode, type Struct } from "../../src/protocol/codec.ts";
import { defaultOf, type Field, inRange, type MessageSchema } from "../../src/protocol/schema.ts";
import { Reader, Writer } from "../../src/util/bytes.ts";

const kafkaDir = fileURLToPath(new URL("../../../shared/reference/kafka-3.8-messages/", import.meta.url).href);
const haveKafka = existsSync(kafkaDir);
const skip = haveKafka ? false : `Kafka's message definitions are absent (${kafkaDir})`;

// As a missing tool fails under CI=true (test/helpers/tools.ts), so does a missing reference: CI
// lays shared/ beside the clone, and a cross-check that quietly skips there checks nothing.
test("Kafka's message definitions are present beside the repository (CI=true needs them)", { skip: process.env.CI === "true" ? false : skip }, () => {
  assert.ok(haveKafka, `CI=true and Kafka's message definitions are absent (${kafkaDir})`);
});

/** The versions strand declares, per API key (a handler may answer fewer: ApiVersions says which). */
const supported: Record<number, [string, number, number]> = {
  0: ["Produce", 0, 9],
  1: ["Fetch", 0, 16],
  2: ["ListOffsets", 0, 8],
  3: ["Metadata", 0, 12],
  4: ["LeaderAndIsr", 0, 7],
  5: ["StopReplica", 0, 4],
  6: ["UpdateMetadata", 0, 8],
  7: ["ControlledShutdown", 0, 3],
  8: ["OffsetCommit", 0, 9],
  9: ["OffsetFetch", 0, 9],
  10: ["FindCoordinator", 0, 4],
  11: ["JoinGroup", 0, 9],
  12: ["Heartbeat", 0, 4],
  13: ["LeaveGroup", 0, 5],
  14: ["SyncGroup", 0, 5],
  15: ["DescribeGroups", 0, 5],
  16: ["ListGroups", 0, 5],
  17: ["SaslHandshake", 0, 1],
  18: ["ApiVersions", 0, 3],
  19: ["CreateTopics", 2, 7],
  20: ["DeleteTopics", 1, 6],
  21: ["DeleteRecords", 0, 2],
  22: ["InitProducerId", 0, 4],
  23: ["OffsetForLeaderEpoch", 0, 4],
  24: ["AddPartitionsToTxn", 0, 5],
  25: ["AddOffsetsToTxn", 0, 4],
  26: ["EndTxn", 0, 4],
  27: ["WriteTxnMarkers", 0, 1],
  28: ["TxnOffsetCommit", 0, 4],
  29: ["DescribeAcls", 0, 3],
  30: ["CreateAcls", 0, 3],
  31: ["DeleteAcls", 0, 3],
  32: ["DescribeConfigs", 0, 4],
  33: ["AlterConfigs", 0, 2],
  35: ["DescribeLogDirs", 0, 4],
  36: ["SaslAuthenticate", 0, 2],
  37: ["CreatePartitions", 0, 3],
  42: ["DeleteGroups", 0, 2],
  43: ["ElectLeaders", 0, 2],
  44: ["IncrementalAlterConfigs", 0, 1],
  45: ["AlterPartitionReassignments", 0, 0],
  46: ["ListPartitionReassignments", 0, 0],
  47: ["OffsetDelete", 0, 0],
  48: ["DescribeClientQuotas", 0, 1],
  49: ["AlterClientQuotas", 0, 1],
  50: ["DescribeUserScramCredentials", 0, 0],
  51: ["AlterUserScramCredentials", 0, 0],
  56: ["AlterPartition", 0, 3],
  60: ["DescribeCluster", 0, 1],
  61: ["DescribeProducers", 0, 0],
  65: ["DescribeTransactions", 0, 0],
  66: ["ListTransactions", 0, 1],
};

interface KafkaField {
  name: string;
  type: string;
  versions: string;
  nullableVersions?: string;
  taggedVersions?: string;
  tag?: number;
  default?: string | number | boolean;
  fields?: KafkaField[];
}

interface KafkaMessage {
  apiKey?: number; // absent from "data" definitions (record formats), which belong to no API
  type: string;
  name: string;
  validVersions: string;
  flexibleVersions: string;
  fields: KafkaField[];
  commonStructs?: { name: string; fields: KafkaField[] }[];
}

function loadKafka(name: string): KafkaMessage {
  const text = readFileSync(`${kafkaDir}/${name}.json`, "utf8");
  // The files open with (and sprinkle) `//` comment lines, which JSON does not allow.
  const json = text.split("\n").filter((l) => !/^\s*\/\//.test(l)).join("\n");
  const message = JSON.parse(json) as KafkaMessage;
  // A field typed by a common struct ("[]MemberMetadata") takes that struct's fields.
  const common = new Map((message.commonStructs ?? []).map((c) => [c.name, c.fields]));
  const resolve = (fields: KafkaField[]): void => {
    for (const f of fields) {
      f.fields ??= common.get(f.type.replace(/^\[\]/, ""));
      if (f.fields) resolve(f.fields);
    }
  };
  resolve(message.fields);
  return message;
}

/** Kafka's version text: "3", "3+", "3-9" or "none". */
function kafkaRange(text: string | undefined): { min: number; max: number } | null {
  if (text === undefined || text === "none") return null;
  const m = /^(\d+)(\+|-(\d+))?$/.exec(text);
  assert.ok(m, `Kafka version text "${text}"`);
  const min = Number(m[1]);
  return { min, max: m[2] === undefined ? min : m[2] === "+" ? Infinity : Number(m[3]) };
}

const kafkaPrimitives = new Set([
  "bool", "int8", "int16", "uint16", "int32", "int64", "float64", "string", "bytes", "records", "uuid",
]);

function kafkaType(f: KafkaField): { array: boolean; type: string } {
  const array = f.type.startsWith("[]");
  const elem = array ? f.type.slice(2) : f.type;
  return { array, type: kafkaPrimitives.has(elem) ? elem : "struct" };
}

/** Kafka's default for a field: its "default" text, else the generator's zero value. */
function kafkaDefault(f: KafkaField, type: { array: boolean; type: string }): unknown {
  const d = f.default === undefined ? undefined : String(f.default);
  if (type.array) return d === "null" ? null : [];
  if (d === "null") return null;
  switch (type.type) {
    case "bool":
      return d === "true";
    case "int64":
      return BigInt(d ?? 0);
    case "string":
      return d ?? "";
    case "bytes":
      return new Uint8Array(0);
    case "records":
      return null;
    case "uuid":
      return new Uint8Array(16);
    case "struct":
      return undefined; // compared field by field
    default:
      return Number(d ?? 0);
  }
}

function compareFields(
  path: string,
  ours: Field[],
  theirs: KafkaField[],
  version: number,
  flexible: boolean,
): void {
  const kafkaHere = theirs.filter((f) => inRange(kafkaRange(f.versions), version));
  const oursHere = ours.filter((f) => inRange(f.versions, version));
  const lower = (n: string) => n[0].toLowerCase() + n.slice(1);
  assert.deepEqual(
    oursHere.map((f) => f.name),
    kafkaHere.map((f) => lower(f.name)),
    `${path} v${version}: field names and order`,
  );
  for (let i = 0; i < oursHere.length; i++) {
    const o = oursHere[i];
    const k = kafkaHere[i];
    const at = `${path}.${o.name} v${version}`;
    const kt = kafkaType(k);
    assert.equal(o.array, kt.array, `${at}: array or not`);
    assert.equal(o.type, kt.type, `${at}: type`);
    assert.equal(inRange(o.nullable, version), inRange(kafkaRange(k.nullableVersions), version), `${at}: nullable`);
    const kafkaTagged = k.tag !== undefined && inRange(kafkaRange(k.taggedVersions), version);
    const oursTagged = o.tag !== null && flexible;
    assert.equal(oursTagged, kafkaTagged, `${at}: tagged`);
    if (kafkaTagged) assert.equal(o.tag, k.tag, `${at}: tag number`);
    if (o.type === "struct") {
      compareFields(at, o.fields, k.fields ?? [], version, flexible);
    } else {
      assert.deepEqual(o.defaultValue, kafkaDefault(k, kt), `${at}: default`);
    }
  }
}

function compareMessage(ours: MessageSchema, kafka: KafkaMessage, kind: string): void {
  assert.equal(kafka.type, kind);
  assert.equal(ours.name, kafka.name, "message name");
  assert.equal(ours.apiKey, kafka.apiKey ?? -1, "api key");
  const valid = kafkaRange(kafka.validVersions);
  assert.ok(valid !== null && ours.versions.min >= valid.min && ours.versions.max <= valid.max, "versions valid in Kafka");
  assert.equal(ours.flexibleFrom, kafkaRange(kafka.flexibleVersions)?.min ?? Infinity, "first flexible version");
  for (let v = ours.versions.min; v <= ours.versions.max; v++) {
    compareFields(ours.name, ours.fields, kafka.fields, v, v >= ours.flexibleFrom);
  }
}

test("strand's APIs and version ranges are the supported ones", () => {
  const got = Object.fromEntries(apiSchemas.map((a) => [a.apiKey, [a.name, a.request.versions.min, a.request.versions.max]]));
  assert.deepEqual(got, supported);
  assert.deepEqual(apiSchemas.map((a) => a.apiKey), Object.keys(supported).map(Number).sort((a, b) => a - b));
  for (const a of apiSchemas) {
    assert.equal(apiSchemaByKey(a.apiKey), a);
    assert.deepEqual(a.response.versions, a.request.versions, `${a.name}: response versions`);
  }
  assert.equal(apiSchemaByKey(99), undefined);
});

for (const a of apiSchemas) {
  for (const kind of ["request", "response"] as const) {
    const schema = a[kind];
    test(`${schema.name} v${schema.versions.min}-${schema.versions.max} matches Kafka 3.8`, { skip }, () => {
      compareMessage(schema, loadKafka(schema.name), kind);
    });
  }
}

for (const schema of [...offsetsRecordSchemas, ...consumerProtocolSchemas, ...txnLogRecordSchemas]) {
  test(`${schema.name} v${schema.versions.min}-${schema.versions.max} matches Kafka 3.8`, { skip }, () => {
    compareMessage(schema, loadKafka(schema.name), "data");
  });
}

test("the cross-check notices a difference", { skip }, () => {
  // Guard against a comparison that passes vacuously: a renamed, retyped or untagged field fails.
  const kafka = loadKafka("ProduceResponse");
  const renamed = structuredClone(kafka);
  renamed.fields[1].name = "ThrottleTime";
  assert.throws(() => compareMessage(apiSchemaByKey(0)!.response, renamed, "response"), /names and order/);
  const retyped = structuredClone(kafka);
  retyped.fields[1].type = "int64";
  assert.throws(() => compareMessage(apiSchemaByKey(0)!.response, retyped, "response"), /type/);
  const fetch = loadKafka("FetchRequest");
  delete fetch.fields[0].tag;
  assert.throws(() => compareMessage(apiSchemaByKey(1)!.request, fetch, "request"), /tagged/);
  const defaults = loadKafka("MetadataResponse");
  defaults.fields[3].default = "-2";
  assert.throws(() => compareMessage(apiSchemaByKey(3)!.response, defaults, "response"), /default/);
});

// ---- the decoder's nullability, field by field, against Kafka's nullableVersions ----------------
// The comparison above checks what our schemas say; these check what the decoder does with it:
// for every field of every message at every version, a message whose only null is that field
// decodes exactly when Kafka's definition makes the field nullable in that version, and a null
// element inside an array of strings or bytes never decodes (Kafka cannot declare one nullable).

/** The schema with every field nullable everywhere, so the encoder writes a null wherever asked. */
function everythingNullable(fields: Field[]): Field[] {
  return fields.map((f) => ({
    ...f,
    nullable: f.type === "struct" && !f.array ? null : f.versions,
    fields: everythingNullable(f.fields),
  }));
}

/** A message of defaults whose fields along `path` hold one element each, ending in `leaf`. */
function messageWith(fields: Field[], path: string[], leaf: unknown): Struct {
  const out: Struct = {};
  for (const f of fields) out[f.name] = defaultOf(f);
  const [head, ...rest] = path;
  const f = fields.find((x) => x.name === head)!;
  if (rest.length === 0) out[head] = leaf;
  else if (f.array) out[head] = [messageWith(f.fields, rest, leaf)];
  else out[head] = messageWith(f.fields, rest, leaf);
  return out;
}

/** Encodes with the all-nullable schema, decodes with the real one; true when it decodes whole. */
function decodesWith(schema: MessageSchema, version: number, s: Struct, patch?: (b: Uint8Array) => Uint8Array): boolean {
  const w = new Writer(256);
  encode({ ...schema, fields: everythingNullable(schema.fields) }, version, s, w);
  const bytes = patch === undefined ? w.finish() : patch(w.finish());
  const r = new Reader(bytes);
  decode(schema, version, r);
  return r.ok && r.remaining === 0;
}

const MARK = "\u0001null-here\u0001";
const markBytes = new TextEncoder().encode(MARK);

/** Replaces the length-prefixed MARK element by a null length of the same encoding. */
function nullMark(bytes: Uint8Array, flexible: boolean, wide: boolean): Uint8Array {
  let at = -1;
  for (let i = 0; i + markBytes.length <= bytes.length && at < 0; i++) {
    if (markBytes.every((b, j) => bytes[i + j] === b)) at = i;
  }
  assert.ok(at > 0, "marker found");
  const prefix = flexible ? 1 : wide ? 4 : 2;
  const nul = flexible ? [0] : wide ? [0xff, 0xff, 0xff, 0xff] : [0xff, 0xff];
  return Uint8Array.from([...bytes.subarray(0, at - prefix), ...nul, ...bytes.subarray(at + markBytes.length)]);
}

function checkNulls(schema: MessageSchema, ours: Field[], theirs: KafkaField[], path: string[], version: number): number {
  let checked = 0;
  const flexible = version >= schema.flexibleFrom;
  const kafkaHere = theirs.filter((f) => inRange(kafkaRange(f.versions), version));
  for (const o of ours.filter((f) => inRange(f.versions, version))) {
    const k = kafkaHere.find((x) => x.name[0].toLowerCase() + x.name.slice(1) === o.name)!;
    const at = [...path, o.name];
    const where = `${schema.name} v${version} ${at.join(".")}`;
    const tagged = o.tag !== null && flexible;
    if (o.array || o.type === "string" || o.type === "bytes" || o.type === "records") {
      const nullable = inRange(kafkaRange(k.nullableVersions), version);
      assert.equal(decodesWith(schema, version, messageWith(schema.fields, at, null)), nullable, `${where}: null decodes iff Kafka says nullable`);
      checked++;
    }
    if (o.array && (o.type === "string" || o.type === "bytes") && !tagged) {
      const leaf = [o.type === "string" ? MARK : markBytes];
      const patched = decodesWith(schema, version, messageWith(schema.fields, at, leaf), (b) => nullMark(b, flexible, o.type === "bytes"));
      assert.equal(patched, false, `${where}[0]: a null element never decodes`);
      checked++;
    }
    if (o.type === "struct") checked += checkNulls(schema, o.fields, k.fields ?? [], at, version);
  }
  return checked;
}

for (const a of apiSchemas) {
  for (const kind of ["request", "response"] as const) {
    const schema = a[kind];
    test(`${schema.name}: the decoder refuses a null exactly where Kafka 3.8 does`, { skip }, () => {
      const kafka = loadKafka(schema.name);
      for (let v = schema.versions.min; v <= schema.versions.max; v++) checkNulls(schema, schema.fields, kafka.fields, [], v);
    });
  }
}

test("the null check notices a decoder that lets a null through", { skip }, () => {
  // DescribeGroups' group ids are a []string: a null element must not decode, and a null array
  // must not either; Metadata v11's topic name is nullable (v10+) and must decode.
  const dg = apiSchemaByKey(15)!.request;
  const withNullElement = (v: number) =>
    decodesWith(dg, v, messageWith(dg.fields, ["groups"], [MARK]), (b) => nullMark(b, v >= dg.flexibleFrom, false));
  assert.equal(withNullElement(4), false);
  assert.equal(withNullElement(5), false);
  assert.equal(decodesWith(dg, 5, messageWith(dg.fields, ["groups"], ["g"])), true);
  assert.equal(decodesWith(dg, 5, messageWith(dg.fields, ["groups"], null)), false);
  const md = apiSchemaByKey(3)!.request;
  assert.equal(decodesWith(md, 11, messageWith(md.fields, ["topics", "name"], null)), true);
  assert.equal(decodesWith(md, 9, messageWith(md.fields, ["topics", "name"], null)), false);
});
