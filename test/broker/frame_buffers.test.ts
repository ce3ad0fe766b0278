// Frame buffers (broker/frame_buffers.ts): a frame that spans reads is assembled in a buffer that
// a later frame reuses, only once the first was handled and marked reusable (Produce), within the
// size bounds; and over a real socket, large Produce requests sent one after another on one
// connection all read back intact (nothing keeps a view of a reused buffer).
import assert from "node:assert/strict";
import { test } from "node:test";
import { FrameBufferCache } from "../../src/broker/frame_buffers.ts";
import { FrameReader } from "../../src/broker/frame_reader.ts";
import { startBroker } from "../helpers/broker.ts";
import { buildBatch, parseBatches, text, valueRecords } from "../helpers/record_batch.ts";
import { createTopic, fetchOnce, produce, WireClient } from "../helpers/wire.ts";

/** A Produce-looking frame (api key 0) of bodyBytes, its bytes derived from tag, cut in chunks of chunkBytes. */
function produceFrameChunks(bodyBytes: number, tag: number, chunkBytes: number): { chunks: Uint8Array[]; body: Uint8Array } {
  const wire = new Uint8Array(4 + bodyBytes);
  new DataView(wire.buffer).setInt32(0, bodyBytes);
  for (let i = 2; i < bodyBytes; i++) wire[4 + i] = (tag * 31 + i) & 0xff;
  const chunks = [];
  for (let at = 0; at < wire.length; at += chunkBytes) chunks.push(wire.slice(at, at + chunkBytes));
  return { chunks, body: wire.slice(4) };
}

function readOne(r: FrameReader, chunks: Uint8Array[]): Uint8Array {
  let frame: ReturnType<FrameReader["next"]> = null;
  for (const c of chunks) {
    r.push(c);
    frame = r.next();
  }
  assert.ok(frame instanceof Uint8Array, "a whole frame once its last chunk is in");
  return frame;
}

test("frame buffers: a handled, reusable frame's buffer takes the next frame that spans reads", () => {
  const r = new FrameReader(1 << 24, new FrameBufferCache());
  const a = produceFrameChunks(300_000, 1, 64 * 1024);
  const first = readOne(r, a.chunks);
  assert.deepEqual(first, a.body);
  r.handled(true);
  const b = produceFrameChunks(280_000, 2, 64 * 1024); // the same power-of-two size class
  const second = readOne(r, b.chunks);
  assert.ok(second.buffer === first.buffer, "the same buffer");
  assert.deepEqual(second, b.body, "holding the second frame's bytes");
});

test("frame buffers: a frame not marked reusable keeps its buffer, and its bytes stay as they were", () => {
  const r = new FrameReader(1 << 24, new FrameBufferCache());
  const a = produceFrameChunks(300_000, 3, 64 * 1024);
  const first = readOne(r, a.chunks);
  r.handled(false);
  const second = readOne(r, produceFrameChunks(300_000, 4, 64 * 1024).chunks);
  assert.ok(second.buffer !== first.buffer, "a buffer of its own");
  assert.deepEqual(first, a.body, "the first frame is untouched");
  // A frame within one chunk is a view of that chunk, never given to the cache.
  r.handled(true);
  const small = produceFrameChunks(1000, 5, 4096);
  const third = readOne(r, small.chunks);
  assert.ok(third.buffer === small.chunks[0].buffer, "a view into the chunk");
  const cache = new FrameBufferCache();
  const rc = new FrameReader(1 << 24, cache);
  readOne(rc, small.chunks);
  rc.handled(true);
  assert.equal(cache.idleByteCount, 0, "a view is not taken as a buffer");
});

test("frame buffers: buffers past the reuse bound are not kept, and idle bytes stay within their bound", () => {
  const cache = new FrameBufferCache(256 * 1024, 128 * 1024);
  const a = cache.take(100_000);
  assert.equal(a.length, 100_000);
  assert.equal(a.buffer.byteLength, 128 * 1024, "a power-of-two buffer");
  cache.give(a);
  assert.equal(cache.idleByteCount, 128 * 1024);
  assert.ok(cache.take(70_000).buffer === a.buffer, "taken again for a frame of its size class");
  assert.equal(cache.idleByteCount, 0);
  const big = cache.take(200_000);
  assert.equal(big.buffer.byteLength, 200_000, "past the reuse bound: a buffer of its own");
  cache.give(big);
  assert.equal(cache.idleByteCount, 0, "and not kept");
  const bufs = [cache.take(128 * 1024), cache.take(128 * 1024), cache.take(128 * 1024)];
  for (const b of bufs) cache.give(b);
  assert.equal(cache.idleByteCount, 256 * 1024, "the third is let go");
});

test("frame buffers: large Produce requests one after another on one connection all read back intact", async () => {
  const b = await startBroker({ "message.max.bytes": String(4 << 20) });
  try {
    const c = await WireClient.connect(b.port);
    try {
      assert.equal((await createTopic(c, "reuse")).errorCode, 0);
      // ~1 MB each, larger than one read on both runtimes, so each is assembled; different bytes.
      const batches = [0, 1, 2, 3].map((k) => buildBatch(valueRecords(1000, `batch${k}-`, 1000)));
      for (const batch of batches) {
        const r = await produce(c, "reuse", 0, batch, 1);
        assert.equal(r.errorCode, 0, r.errorMessage ?? "");
      }
      const seen: string[] = [];
      for (let offset = 0n; seen.length < 4000;) {
        const f = await fetchOnce(c, "reuse", 0, offset);
        assert.equal(f.errorCode, 0);
        const parsed = parseBatches(f.records ?? new Uint8Array(0));
        assert.ok(parsed.length > 0, `records at offset ${offset}`);
        for (const p of parsed) for (const rec of p.records) seen.push(text(rec.value) ?? "");
        offset = BigInt(seen.length);
      }
      for (let k = 0; k < 4; k++) {
        for (const i of [0, 500, 999]) assert.equal(seen[k * 1000 + i], `batch${k}-${i}`.padEnd(1000, "."), `record ${i} of batch ${k}`);
      }
    } finally {
      c.close();
    }
  } finally {
    await b.stop();
  }
});
