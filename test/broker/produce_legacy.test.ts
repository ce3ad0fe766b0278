// Produce v0-2 against a real broker over raw TCP: legacy message sets (magic 0 and 1, plain and
// compressed) are stored as ONE record batch v2 each, with the producer's codec, and fetched
// back; the v0, v1 and v2 responses have their versions' fields; magic 2 batches pass in v0-2 as
// Kafka lets them; legacy sets stay refused in v3+; a corrupt legacy set appends nothing.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiVersionsApi, ProduceApi } from "../../src/protocol/api/mod.ts";
import { Compression } from "../../src/protocol/record_batch.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker } from "../helpers/broker.ts";
import { concat, legacyMessage, readV2Batch, wrapper } from "../helpers/legacy_messages.ts";
import { buildBatch } from "../helpers/record_batch.ts";
import { createTopic, decodeResponse, encodeRequest, fetchOnce, produce, WireClient } from "../helpers/wire.ts";

const T0 = 1_700_000_000_000n;

/** Produce at `version`; returns the raw decoded body (to see which fields the version has). */
async function produceAt(c: WireClient, version: number, topic: string, records: Uint8Array) {
  const id = 100 + version;
  await c.write(encodeRequest(ProduceApi, version, id, {
    transactionalId: null,
    acks: 1,
    timeoutMs: 5_000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
  }));
  const payload = await c.nextFrame();
  assert.ok(payload !== null, `produce v${version} answered`);
  const { body } = decodeResponse(ProduceApi, version, payload);
  const p = (body.responses as { partitionResponses: Record<string, unknown>[] }[])[0].partitionResponses[0];
  return { body, p };
}

function splitBatches(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let pos = 0; pos < bytes.length; pos += 12 + dv.getInt32(pos + 8)) out.push(bytes.subarray(pos, pos + 12 + dv.getInt32(pos + 8)));
  return out;
}

test("produce v0-2: legacy message sets are stored as one v2 batch each and read back", async () => {
  const b = await startBroker();
  try {
    const c = await WireClient.connect(b.port);
    try {
      assert.equal((await createTopic(c, "legacy")).errorCode, ErrorCode.NONE);
      const versions = await c.request(ApiVersionsApi, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" });
      const produceRange = (versions.apiKeys as { apiKey: number; minVersion: number; maxVersion: number }[]).find((k) => k.apiKey === 0);
      assert.deepEqual([produceRange?.minVersion, produceRange?.maxVersion], [0, 9], "ApiVersions lists Produce v0-9");

      const v0 = await produceAt(c, 0, "legacy", concat(legacyMessage({ magic: 0, key: "a", value: "0" }), legacyMessage({ magic: 0, value: "1" })));
      assert.equal(v0.p.errorCode, ErrorCode.NONE, String(v0.p.errorMessage));
      assert.equal(v0.p.baseOffset, 0n);
      const v1 = await produceAt(c, 1, "legacy", wrapper(0, Compression.gzip, [{ magic: 0, value: "2" }, { magic: 0, value: "3" }]));
      assert.equal(v1.p.errorCode, ErrorCode.NONE, String(v1.p.errorMessage));
      assert.equal(v1.p.baseOffset, 2n);
      const msgs = [4, 5, 6].map((i) => ({ magic: 1 as const, timestamp: T0 + BigInt(i), key: `k${i}`, value: String(i) }));
      const v2 = await produceAt(c, 2, "legacy", wrapper(1, Compression.snappy, msgs));
      assert.equal(v2.p.errorCode, ErrorCode.NONE, String(v2.p.errorMessage));
      assert.equal(v2.p.baseOffset, 4n);
      assert.equal(v2.p.logAppendTimeMs, -1n, "v2 has logAppendTimeMs (CreateTime: -1)");
      // Magic 2 in v2: Kafka does not check the magic of v0-2 requests, so neither does strand.
      const v2b = await produceAt(c, 2, "legacy", buildBatch([{ value: "7" }]));
      assert.equal(v2b.p.errorCode, ErrorCode.NONE, String(v2b.p.errorMessage));
      assert.equal(v2b.p.baseOffset, 7n);

      const f = await fetchOnce(c, "legacy", 0, 0n);
      assert.equal(f.highWatermark, 8n);
      const batches = splitBatches(f.records!).map(readV2Batch);
      assert.deepEqual(batches.map((x) => [x.magic, x.codec, x.recordCount]), [[2, 0, 2], [2, 1, 2], [2, 2, 3], [2, 0, 1]]);
      assert.deepEqual(batches.flatMap((x) => x.records.map((r) => r.value)), ["0", "1", "2", "3", "4", "5", "6", "7"]);
      assert.deepEqual(batches[0].records.map((r) => r.key), ["a", null]);
      assert.deepEqual(batches[2].records.map((r) => [r.key, r.timestamp]), msgs.map((m) => [m.key, m.timestamp]));
    } finally {
      c.close();
    }
  } finally {
    await b.stop();
  }
});

test("produce v0-2: the response layouts of v0 (no throttle time), v1 (throttle) and v2 (append time)", async () => {
  const b = await startBroker();
  try {
    const c = await WireClient.connect(b.port);
    try {
      await createTopic(c, "shapes");
      for (const version of [0, 1, 2]) {
        const { body, p } = await produceAt(c, version, "shapes", legacyMessage({ magic: version === 2 ? 1 : 0, timestamp: T0, value: "x" }));
        assert.equal(p.errorCode, ErrorCode.NONE);
        assert.equal(body.throttleTimeMs, 0);
        // decodeResponse insists on every byte being used, so the layout is exactly the version's.
        assert.equal(p.logAppendTimeMs, -1n);
      }
      // The v0 answer is 4 bytes (throttle) shorter than v1's, and v1's 8 (append time) than v2's.
      const sizes: number[] = [];
      for (const version of [0, 1, 2]) {
        await c.write(encodeRequest(ProduceApi, version, 7, {
          transactionalId: null,
          acks: 1,
          timeoutMs: 5_000,
          topicData: [{ name: "shapes", partitionData: [{ index: 0, records: legacyMessage({ magic: 1, timestamp: T0, value: "y" }) }] }],
        }));
        sizes.push((await c.nextFrame())!.length);
      }
      assert.deepEqual([sizes[1] - sizes[0], sizes[2] - sizes[1]], [4, 8]);
    } finally {
      c.close();
    }
  } finally {
    await b.stop();
  }
});

test("produce: a corrupt legacy set in v2 and any legacy set in v3+ append nothing", async () => {
  const b = await startBroker();
  try {
    const c = await WireClient.connect(b.port);
    try {
      await createTopic(c, "strict");
      const good = legacyMessage({ magic: 1, timestamp: T0, value: "ok" });
      const badCrc = good.slice();
      badCrc[badCrc.length - 1] ^= 1;
      assert.equal((await produceAt(c, 2, "strict", badCrc)).p.errorCode, ErrorCode.CORRUPT_MESSAGE);
      const nested = wrapper(1, Compression.gzip, [], { payload: new Uint8Array([0x1f, 0x8b, 1, 2, 3]) });
      assert.equal((await produceAt(c, 2, "strict", nested)).p.errorCode, ErrorCode.CORRUPT_MESSAGE);
      const r = await produce(c, "strict", 0, good);
      assert.notEqual(r.errorCode, ErrorCode.NONE, "a legacy set in Produce v8 stays refused");
      assert.equal((await fetchOnce(c, "strict", 0, 0n)).highWatermark, 0n);
      assert.equal((await produceAt(c, 2, "strict", good)).p.errorCode, ErrorCode.NONE);
      assert.equal((await fetchOnce(c, "strict", 0, 0n)).highWatermark, 1n);
    } finally {
      c.close();
    }
  } finally {
    await b.stop();
  }
});
