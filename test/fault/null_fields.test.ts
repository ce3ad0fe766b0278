// Issue 11, defect 7: a null where Kafka's definition allows none is a malformed request. The
// decoder refuses it, so no handler sees it; the connection closes (Kafka's InvalidRequestException
// while parsing) with a warn line, and the broker goes on serving everyone else. A null that Kafka
// allows but will not serve (Metadata v10-11: a null topic name) is answered INVALID_REQUEST.
// The broker runs as its own process, so every line it logs is seen: none may be error level.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiVersionsApi, MetadataApi } from "../../src/protocol/api/mod.ts";
import { Writer } from "../../src/util/bytes.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { spawnBrokerProcess } from "../helpers/broker_process.ts";
import { decodeResponse, WireClient } from "../helpers/wire.ts";

/** A request frame: header (v2 when flexible, else v1) then the body's bytes as given. */
function rawRequest(apiKey: number, version: number, flexible: boolean, body: (w: Writer) => void): Uint8Array {
  const w = new Writer(64);
  w.int32(0).int16(apiKey).int16(version).int32(7);
  w.int16(4).bytes(new TextEncoder().encode("null"));
  if (flexible) w.uvarint(0);
  body(w);
  w.view.setInt32(0, w.pos - 4);
  return w.finish().slice();
}

const closing: [string, Uint8Array][] = [
  // ListGroups v4: statesFilter is a []string, non-nullable.
  ["ListGroups v4, a null states filter", rawRequest(16, 4, true, (w) => w.uvarint(0).uvarint(0))],
  ["ListGroups v4, a null state inside the filter", rawRequest(16, 4, true, (w) => w.uvarint(2).uvarint(0).uvarint(0))],
  ["ListGroups v5, a null type inside the filter", rawRequest(16, 5, true, (w) => w.uvarint(1).uvarint(2).uvarint(0).uvarint(0))],
  ["DescribeGroups v0, a null group id", rawRequest(15, 0, false, (w) => w.int32(1).int16(-1))],
  ["DescribeGroups v5, a null group id", rawRequest(15, 5, true, (w) => w.uvarint(2).uvarint(0).bool(false).uvarint(0))],
  ["DescribeGroups v5, a null group list", rawRequest(15, 5, true, (w) => w.uvarint(0).bool(false).uvarint(0))],
  ["DeleteGroups v0, a null group id", rawRequest(42, 0, false, (w) => w.int32(1).int16(-1))],
  ["DeleteGroups v2, a null group id", rawRequest(42, 2, true, (w) => w.uvarint(2).uvarint(0).uvarint(0))],
  // Metadata v9: the topic name becomes nullable only in v10.
  ["Metadata v9, a null topic name", rawRequest(3, 9, true, (w) => w.uvarint(2).uvarint(0).uvarint(0).bool(true).bool(false).uvarint(0))],
  ["Metadata v1, a null topic name", rawRequest(3, 1, false, (w) => w.int32(1).int16(-1))],
  ["FindCoordinator v4, a null coordinator key", rawRequest(10, 4, true, (w) => w.int8(0).uvarint(2).uvarint(0).uvarint(0))],
  ["DeleteTopics v5, a null topic name", rawRequest(20, 5, true, (w) => w.uvarint(2).uvarint(0).int32(1000).uvarint(0))],
  ["CreateTopics v7, a null topic name", rawRequest(19, 7, true, (w) => w.uvarint(2).uvarint(0).int32(1).int16(1).uvarint(1).uvarint(1).uvarint(0).uvarint(0).int32(1000).bool(false).uvarint(0))],
  ["a string length of -2", rawRequest(15, 0, false, (w) => w.int32(1).int16(-2))],
  ["an array length of -2", rawRequest(15, 0, false, (w) => w.int32(-2))],
  ["an array length of 2^31-1", rawRequest(15, 0, false, (w) => w.int32(0x7fffffff))],
  ["invalid UTF-8 in a group id", rawRequest(15, 0, false, (w) => w.int32(1).int16(2).bytes(Uint8Array.of(0xc3, 0x28)))],
  ["a compact length past 2^32", rawRequest(15, 5, true, (w) => w.bytes(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0x7f)))],
];

test("nulls in non-nullable fields (and other malformed fields) close that connection with a warn line; no error is logged", { timeout: 120_000 }, async () => {
  const b = await spawnBrokerProcess();
  try {
    for (const [what, bytes] of closing) {
      const c = await WireClient.connect(b.port);
      try {
        await c.write(bytes);
        assert.equal(await c.waitClosed(10_000), true, `${what}: the connection is closed`);
        assert.equal(c.pendingBytes, 0, `${what}: nothing was answered`);
      } finally {
        c.close();
      }
      // Everyone else is still served.
      const other = await WireClient.connect(b.port);
      try {
        const av = await other.request(ApiVersionsApi, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" });
        assert.equal(av.errorCode, 0, `after ${what}`);
      } finally {
        other.close();
      }
    }
    const lines = b.logLines();
    const malformed = lines.filter((l) => l.level === 40 && /closing connection: malformed/.test(l.msg));
    assert.equal(malformed.length, closing.length, "one warn line per closed connection");
    assert.deepEqual(lines.filter((l) => l.level >= 50), [], "no error-level line");
    assert.equal(b.alive(), true);
  } finally {
    await b.stop();
  }
});

test("Metadata v10-11 with a null topic name or a topic id: INVALID_REQUEST for every topic, as Kafka answers; v12 looks the id up", { timeout: 120_000 }, async () => {
  const b = await spawnBrokerProcess();
  try {
    const c = await WireClient.connect(b.port);
    try {
      const zero = new Uint8Array(16);
      const id = Uint8Array.from({ length: 16 }, (_, i) => i + 1);
      for (const version of [10, 11]) {
        for (const topics of [[{ topicId: zero, name: null }], [{ topicId: zero, name: "t" }, { topicId: id, name: "t2" }]]) {
          const req = { topics, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false };
          const res = await c.request(MetadataApi, version, req);
          const got = (res.topics as { name: string; errorCode: number }[]).map((t) => [t.name, t.errorCode]);
          assert.deepEqual(got, topics.map((t) => [t.name ?? "", ErrorCode.INVALID_REQUEST]), `v${version}`);
        }
      }
      const res = await c.request(MetadataApi, 12, { topics: [{ topicId: id, name: null }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
      const t = (res.topics as { name: string | null; errorCode: number }[])[0];
      assert.deepEqual([t.name, t.errorCode], [null, ErrorCode.UNKNOWN_TOPIC_ID]);
      // And a raw v11 frame with a null name (what the issue sent), answered, not closed.
      const raw = rawRequest(3, 11, true, (w) => w.uvarint(2).bytes(zero).uvarint(0).uvarint(0).bool(true).bool(false).uvarint(0));
      await c.write(raw);
      const payload = await c.nextFrame();
      assert.ok(payload !== null, "answered");
      const { body } = decodeResponse(MetadataApi, 11, payload);
      assert.deepEqual((body.topics as { name: string; errorCode: number }[]).map((x) => [x.name, x.errorCode]), [["", ErrorCode.INVALID_REQUEST]]);
    } finally {
      c.close();
    }
    assert.deepEqual(b.logLines().filter((l) => l.level >= 50), [], "no error-level line");
  } finally {
    await b.stop();
  }
});
