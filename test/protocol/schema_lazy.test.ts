// Message schemas are parsed at their first use (start-up cost, issue 18), not when declared: a
// declaration that breaks the DSL's rules still fails, when its fields are first read, and every
// declared schema parses and passes its checks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { apiSchemas } from "../../src/protocol/api/mod.ts";
import { consumerProtocolSchemas } from "../../src/protocol/internal/consumer_protocol.ts";
import { offsetsRecordSchemas } from "../../src/protocol/internal/offsets_records.ts";
import { txnLogRecordSchemas } from "../../src/protocol/internal/txn_log.ts";
import { type MessageSchema, message } from "../../src/protocol/schema.ts";

test("schema: a bad declaration fails when its fields are first read, and names the field", () => {
  const bad = message(99, "BadRequest", "0-3", null, "a int32\na int16");
  assert.equal(bad.name, "BadRequest");
  assert.throws(() => bad.fields, /a/);
  const tagged = message(99, "TaggedRequest", "0-3", "2+", "x int32 v0+ tag=0");
  assert.throws(() => tagged.fields, /tagged only in flexible versions/);
});

test("schema: fields are parsed once, then a plain property", () => {
  const m = message(99, "GoodRequest", "0-2", "1+", "topic string\npartitions []\n  index int32");
  const first = m.fields;
  assert.equal(m.fields, first);
  const d = Object.getOwnPropertyDescriptor(m, "fields")!;
  assert.equal(d.value, first);
  assert.deepEqual(first.map((f) => f.name), ["topic", "partitions"]);
  assert.deepEqual(first[1].fields.map((f) => f.name), ["index"]);
});

test("schema: every declared schema parses and passes its checks", () => {
  const all: MessageSchema[] = apiSchemas.flatMap((a) => [a.request, a.response]);
  for (const group of [consumerProtocolSchemas, offsetsRecordSchemas, txnLogRecordSchemas]) all.push(...group);
  assert.ok(all.length > 100, `${all.length} schemas`);
  for (const s of all) assert.ok(Array.isArray(s.fields), s.name); // reading .fields parses and checks
});
