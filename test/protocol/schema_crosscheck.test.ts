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
import { type Field, inRange, type MessageSchema } from "../../src/protocol/schema.ts";

const kafkaDir = fileURLToPath(new URL("../../../shared/reference/kafka-3.8-messages/", import.meta.url));
const haveKafka = existsSync(kafkaDir);
const skip = haveKafka ? false : `Kafka's message definitions are absent (${kafkaDir})`;

/** The versions strand declares, per API key (a handler may answer fewer: ApiVersions says which). */
const supported: Record<number, [string, number, number]> = {
  0: ["Produce", 0, 9],
  1: ["Fetch", 4, 16],
  2: ["ListOffsets", 1, 8],
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
  18: ["ApiVersions", 0, 3],
  19: ["CreateTopics", 2, 7],
  20: ["DeleteTopics", 1, 6],
  21: ["DeleteRecords", 0, 2],
  23: ["OffsetForLeaderEpoch", 0, 4],
  32: ["DescribeConfigs", 0, 4],
  33: ["AlterConfigs", 0, 2],
  35: ["DescribeLogDirs", 0, 4],
  37: ["CreatePartitions", 0, 3],
  42: ["DeleteGroups", 0, 2],
  43: ["ElectLeaders", 0, 2],
  44: ["IncrementalAlterConfigs", 0, 1],
  45: ["AlterPartitionReassignments", 0, 0],
  46: ["ListPartitionReassignments", 0, 0],
  47: ["OffsetDelete", 0, 0],
  56: ["AlterPartition", 0, 3],
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

for (const schema of [...offsetsRecordSchemas, ...consumerProtocolSchemas]) {
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
