// Requests captured from real clients, decoded with our headers and schemas, and re-encoded to the
// same bytes.
//
// How they were captured: a throwaway Bun script listened on 127.0.0.1, logged each request frame
// (the bytes after the 4-byte size) as hex, answered ApiVersions with strand's version ranges and
// Metadata with one broker and no topics (encoded with this codec), and the clients ran against it:
//   kcat 1.7.1 / librdkafka 2.0.2:  kcat -b 127.0.0.1:PORT -L
//   kafkajs 2.2.4:                 admin.connect(); admin.fetchTopicMetadata({ topics: [] })
//   @platformatic/kafka 1.35.0:    new Admin({ clientId: "strand-golden", ... }).metadata({ topics: ["golden"] })
import assert from "node:assert/strict";
import { test } from "node:test";
import { apiSchemaByKey } from "../../src/protocol/api/mod.ts";
import { decode, encode, type Struct } from "../../src/protocol/codec.ts";
import { readRequestHeaderPrefix, readRequestHeaderRest, type RequestHeader, writeRequestHeader } from "../../src/protocol/headers.ts";
import { Reader, Writer } from "../../src/util/bytes.ts";

function hex(s: string): Uint8Array {
  return Uint8Array.from(s.match(/../g) ?? [], (b) => parseInt(b, 16));
}

/** Decodes a request frame as the broker will, then re-encodes it and checks the bytes match. */
function decodeRequest(frame: Uint8Array): { header: RequestHeader; body: Struct } {
  const r = new Reader(frame);
  const header = readRequestHeaderPrefix(r);
  const api = apiSchemaByKey(header.apiKey);
  assert.ok(api, `API ${header.apiKey} is one strand speaks`);
  const flexible = header.apiVersion >= api.request.flexibleFrom;
  readRequestHeaderRest(r, header, flexible);
  const body = decode(api.request, header.apiVersion, r);
  assert.ok(r.ok, r.error ?? "");
  assert.equal(r.remaining, 0, "every byte of the frame read");
  const w = new Writer(1024);
  writeRequestHeader(w, header, flexible);
  encode(api.request, header.apiVersion, body, w);
  assert.deepEqual(Array.from(w.finish()), Array.from(frame), "re-encoded to the same bytes");
  return { header, body };
}

test("kcat (librdkafka 2.0.2) ApiVersions v3: flexible body, header v2 with a non-compact client id", () => {
  const { header, body } = decodeRequest(hex(
    "0012000300000001000772646b61666b61000b6c696272646b61666b6106322e302e3200",
  ));
  assert.deepEqual(header, { apiKey: 18, apiVersion: 3, correlationId: 1, clientId: "rdkafka" });
  assert.deepEqual(body, { clientSoftwareName: "librdkafka", clientSoftwareVersion: "2.0.2" });
});

test("kcat Metadata v4: the brokers-only probe (no topics) and the all-topics request (null)", () => {
  const probe = decodeRequest(hex("0003000400000002000772646b61666b610000000000"));
  assert.deepEqual(probe.header, { apiKey: 3, apiVersion: 4, correlationId: 2, clientId: "rdkafka" });
  assert.deepEqual(probe.body.topics, []);
  assert.equal(probe.body.allowAutoTopicCreation, false);
  const everything = decodeRequest(hex("0003000400000003000772646b61666b61ffffffff01"));
  assert.equal(everything.body.topics, null);
  assert.equal(everything.body.allowAutoTopicCreation, true);
});

test("kafkajs 2.2.4 ApiVersions v2 and Metadata v6", () => {
  const versions = decodeRequest(hex("0012000200000000000d737472616e642d676f6c64656e"));
  assert.deepEqual(versions.header, { apiKey: 18, apiVersion: 2, correlationId: 0, clientId: "strand-golden" });
  assert.deepEqual(versions.body, { clientSoftwareName: "", clientSoftwareVersion: "" });
  const metadata = decodeRequest(hex("0003000600000001000d737472616e642d676f6c64656effffffff00"));
  assert.deepEqual(metadata.header, { apiKey: 3, apiVersion: 6, correlationId: 1, clientId: "strand-golden" });
  assert.equal(metadata.body.topics, null);
  assert.equal(metadata.body.allowAutoTopicCreation, false);
});

test("@platformatic/kafka 1.35.0 ApiVersions v3 and flexible Metadata v12 with a topic id", () => {
  const versions = decodeRequest(hex(
    "0012000300000001000d737472616e642d676f6c64656e0013706c6174666f726d617469632d6b61666b6107312e33352e3000",
  ));
  assert.deepEqual(versions.body, { clientSoftwareName: "platformatic-kafka", clientSoftwareVersion: "1.35.0" });
  const metadata = decodeRequest(hex(
    "0003000c00000002000d737472616e642d676f6c64656e00020000000000000000000000000000000007676f6c64656e00000100",
  ));
  assert.deepEqual(metadata.header, { apiKey: 3, apiVersion: 12, correlationId: 2, clientId: "strand-golden" });
  assert.deepEqual(metadata.body, {
    topics: [{ topicId: new Uint8Array(16), name: "golden" }],
    allowAutoTopicCreation: false,
    includeClusterAuthorizedOperations: false,
    includeTopicAuthorizedOperations: true,
  });
});
