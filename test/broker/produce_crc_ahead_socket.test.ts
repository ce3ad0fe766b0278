// Over a real socket, large Produce requests whose first batch is checksummed while it arrives
// (protocol/produce_crc_ahead.ts): of every version that carries batches, written in pieces with
// pauses so the broker sees partial frames, a batch with one bit changed is CORRUPT_MESSAGE and
// nothing of it is stored; the intact batches on the same connection before and after it are
// stored and read back byte for byte, and the partition keeps taking writes.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ProduceApi } from "../../src/protocol/api/mod.ts";
import { ErrorCode } from "../../src/util/mod.ts";
import { startBroker } from "../helpers/broker.ts";
import { buildBatch, type ParsedBatch, parseBatches, valueRecords } from "../helpers/record_batch.ts";
import { createTopic, decodeResponse, encodeRequest, fetchOnce, WireClient } from "../helpers/wire.ts";

/** Sends one Produce in pieces of `piece` bytes, waiting for each to be written, and decodes the answer. */
async function producePieces(c: WireClient, version: number, topic: string, records: Uint8Array, piece: number, correlationId: number): Promise<{ errorCode: number; baseOffset: bigint }> {
  const wire = encodeRequest(ProduceApi, version, correlationId, { transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
  for (let at = 0; at < wire.length; at += piece) {
    await c.write(wire.subarray(at, at + piece));
    // A pause, so the broker reads (and checksums) the frame a part at a time.
    await new Promise((r) => setTimeout(r, 1));
  }
  const payload = await c.nextFrame();
  assert.ok(payload !== null, "answered");
  const res = decodeResponse(ProduceApi, version, payload);
  assert.equal(res.correlationId, correlationId);
  const p = (res.body.responses as { partitionResponses: { errorCode: number; baseOffset: bigint }[] }[])[0].partitionResponses[0];
  return p;
}

test("produce CRC ahead over a socket: large intact batches stored, a changed one refused, the partition still writable", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    const topic = "crc-ahead";
    assert.equal((await createTopic(c, topic)).errorCode, ErrorCode.NONE);
    const stored: Uint8Array[] = [];
    let id = 100;
    for (const version of [3, 7, 8, 9]) {
      const good = buildBatch(valueRecords(3_000, `v${version}-`, 200)); // ~650 KB: spans many reads
      const bad = buildBatch(valueRecords(3_000, `x${version}-`, 200));
      bad[Math.floor(bad.length / 2)] ^= 0x10;
      const first = await producePieces(c, version, topic, good, 50_000, id++);
      assert.equal(first.errorCode, ErrorCode.NONE, `v${version} intact batch`);
      stored.push(good);
      const refused = await producePieces(c, version, topic, bad, 40_000, id++);
      assert.equal(refused.errorCode, ErrorCode.CORRUPT_MESSAGE, `v${version} changed batch`);
      const after = await producePieces(c, version, topic, buildBatch(valueRecords(10, `small${version}-`)), 16, id++);
      assert.equal(after.errorCode, ErrorCode.NONE, `v${version} small batch after the refusal`);
      stored.push(buildBatch(valueRecords(10, `small${version}-`)));
    }
    // Everything stored is what was sent (offsets aside), in order, and nothing of the refused ones.
    const got: ParsedBatch[] = [];
    let offset = 0n;
    while (got.length < stored.length) {
      const f = await fetchOnce(c, topic, 0, offset);
      assert.equal(f.errorCode, ErrorCode.NONE);
      const batches = parseBatches(f.records ?? new Uint8Array(0));
      assert.ok(batches.length > 0, `more batches from offset ${offset}`);
      for (const x of batches) {
        got.push(x);
        offset = x.baseOffset + BigInt(x.recordCount);
      }
    }
    assert.equal(got.length, stored.length);
    got.forEach((g, i) => {
      // The CRC covers everything past the fields the broker sets (base offset, leader epoch):
      // the same valid CRC is the same bytes.
      assert.ok(g.crcValid, `batch ${i} reads back valid`);
      assert.equal(g.crc, new DataView(stored[i].buffer).getUint32(17), `batch ${i} is the one sent`);
      assert.equal(g.sizeBytes, stored[i].length);
    });
    assert.equal(offset, BigInt(stored.reduce((n, s) => n + new DataView(s.buffer).getInt32(57), 0)));
  } finally {
    c.close();
    await b.stop();
  }
});
