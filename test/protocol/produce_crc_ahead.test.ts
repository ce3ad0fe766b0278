// The CRC computed while a Produce request arrives (protocol/produce_crc_ahead.ts): it finds the
// first batch's CRC range in real encoded requests of every version that carries batches, at any
// split of the bytes; it gives up on what it does not expect (other APIs, legacy versions, garbage,
// overlong prefixes) without throwing; what it remembers is forgotten once the frame is handled, so
// a buffer reused for another frame never lends it a checksum; and a batch whose bytes were changed
// in flight is still refused, with or without the remembered CRC.
import assert from "node:assert/strict";
import { test } from "node:test";
import { FrameBufferCache } from "../../src/broker/frame_buffers.ts";
import { FrameReader } from "../../src/broker/frame_reader.ts";
import { ProduceApi } from "../../src/protocol/api/mod.ts";
import { findBatchCrcRange, forgetBatchCrc, knownBatchCrc, ProduceCrcAhead } from "../../src/protocol/produce_crc_ahead.ts";
import { BatchField } from "../../src/protocol/record_batch.ts";
import { validateBatches } from "../../src/protocol/record_validator.ts";
import { crc32c, ErrorCode } from "../../src/util/mod.ts";
import { pseudoRandomBytes } from "../helpers/random.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { encodeRequest } from "../helpers/wire.ts";

const batch = buildBatch(valueRecords(2_000, "v", 100));

/** A Produce request frame without its size prefix, the batch as the first partition's records. */
function produceFrame(version: number, records: Uint8Array | null = batch, opts: { clientId?: string | null; transactionalId?: string | null; partitions?: number } = {}): Uint8Array {
  const partitionData = Array.from({ length: opts.partitions ?? 1 }, (_, i) => ({ index: i, records }));
  const body = { transactionalId: opts.transactionalId ?? null, acks: -1, timeoutMs: 30_000, topicData: [{ name: "crc-ahead", partitionData }] };
  return encodeRequest(ProduceApi, version, 7, body, opts.clientId === undefined ? "crc-ahead-test" : opts.clientId).subarray(4);
}

/** Where the batch starts in the frame: its bytes are unique enough to search for. */
function batchAt(frame: Uint8Array): number {
  outer: for (let i = 0; i + batch.length <= frame.length; i++) {
    for (let j = 0; j < 64; j++) if (frame[i + j] !== batch[j]) continue outer;
    return i;
  }
  throw new Error("batch not in frame");
}

test("produce CRC ahead: finds the first batch's CRC range in Produce v3-v9, whatever has arrived", () => {
  for (let version = 3; version <= 9; version++) {
    const frame = produceFrame(version, batch, { transactionalId: version % 2 === 0 ? "txn-1" : null, partitions: 2 });
    const at = batchAt(frame);
    const want = { start: at + BatchField.attributes, end: at + batch.length };
    assert.deepEqual(findBatchCrcRange(frame, frame.length), want, `v${version}`);
    // Before the batch's header is in, it waits; from then on it answers the same range.
    for (let filled = 0; filled <= at + BatchField.attributes + 8; filled++) {
      const r = findBatchCrcRange(frame, filled);
      if (filled < at + BatchField.attributes) assert.equal(r, "wait", `v${version} at ${filled} bytes`);
      else assert.deepEqual(r, want, `v${version} at ${filled} bytes`);
    }
    const crcField = new DataView(frame.buffer, frame.byteOffset).getUint32(at + BatchField.crc);
    assert.equal(crc32c(frame, want.start, want.end), crcField);
  }
});

test("produce CRC ahead: chunk by chunk, the remembered CRC is the batch's, until forgotten", () => {
  for (const version of [3, 8, 9]) {
    for (const chunk of [1, 7, 4096, 65_536, 1 << 20]) {
      const frame = produceFrame(version).slice();
      const ahead = new ProduceCrcAhead();
      for (let filled = Math.min(chunk, frame.length); ; filled = Math.min(filled + chunk, frame.length)) {
        ahead.advance(frame, filled);
        if (filled === frame.length) break;
      }
      ahead.complete(frame);
      const at = batchAt(frame);
      const crcField = new DataView(frame.buffer).getUint32(at + BatchField.crc);
      assert.equal(knownBatchCrc(frame, at + BatchField.attributes, at + batch.length), crcField, `v${version}, chunks of ${chunk}`);
      // Only for that exact range, and of that buffer.
      assert.equal(knownBatchCrc(frame, at + BatchField.attributes + 1, at + batch.length), null);
      assert.equal(knownBatchCrc(frame.slice(), at + BatchField.attributes, at + batch.length), null);
      forgetBatchCrc(frame);
      assert.equal(knownBatchCrc(frame, at + BatchField.attributes, at + batch.length), null);
    }
  }
});

test("produce CRC ahead: gives up on other APIs, legacy versions, empty or null records and overlong prefixes", () => {
  const fetch = produceFrame(9).slice();
  fetch[1] = 1; // the same bytes under api key 1
  assert.equal(findBatchCrcRange(fetch, fetch.length), null, "Fetch");
  assert.equal(findBatchCrcRange(produceFrame(2, new Uint8Array(40)), 100), null, "Produce v2 carries message sets");
  assert.equal(findBatchCrcRange(produceFrame(9, null), 200), null, "null records");
  assert.equal(findBatchCrcRange(produceFrame(8, new Uint8Array(0)), 200), null, "empty records");
  const legacy = batch.slice();
  legacy[BatchField.magic] = 1;
  assert.equal(findBatchCrcRange(produceFrame(8, legacy), 4096), null, "magic 1 in the records");
  // A batch length past the records: the validator refuses it; nothing to follow.
  const long = batch.slice();
  new DataView(long.buffer).setInt32(BatchField.batchLength, long.length);
  assert.equal(findBatchCrcRange(produceFrame(9, long), 4096), null, "batch longer than its records");
  // Client id and transactional id of 32,767 bytes each: the prefix passes 64 KiB before the
  // records: given up, and the frame is validated the ordinary way.
  const big = "x".repeat(32_767);
  const frame = produceFrame(7, batch, { clientId: big, transactionalId: big });
  const ahead = new ProduceCrcAhead();
  for (let filled = 4096; filled < frame.length; filled += 4096) ahead.advance(frame, filled);
  ahead.advance(frame, frame.length);
  ahead.complete(frame);
  const at = batchAt(frame);
  assert.equal(knownBatchCrc(frame, at + BatchField.attributes, at + batch.length), null);
});

test("produce CRC ahead: garbage never throws and never names a range outside the frame", () => {
  for (let seed = 1; seed <= 3_000; seed++) {
    const frame = pseudoRandomBytes(seed, 16 + (seed % 300));
    frame[0] = 0;
    frame[1] = 0;
    frame[2] = 0;
    frame[3] = 3 + (seed % 7); // Produce v3-v9
    for (const filled of [seed % frame.length, frame.length]) {
      const r = findBatchCrcRange(frame, filled);
      if (r === null || r === "wait") continue;
      assert.ok(r.start >= 0 && r.start <= r.end && r.end <= frame.length, `seed ${seed}: ${JSON.stringify(r)} in ${frame.length} bytes`);
    }
  }
});

test("produce CRC ahead: a hostile prefix sent a byte at a time is parsed a bounded number of times", () => {
  // Produce v9, then a header whose tagged-field section claims 2^28 empty fields: every parse
  // walks all of it, so parsing at every byte would be quadratic.
  const frame = new Uint8Array(200_000);
  frame.set([0, 0, 0, 9, 0, 0, 0, 1, 0xff, 0xff, 0x80, 0x80, 0x80, 0x80, 0x01]);
  for (let i = 15; i < frame.length; i += 2) frame[i] = 1; // tag 1, size 0
  const ahead = new ProduceCrcAhead();
  for (let filled = 1; filled <= frame.length; filled++) ahead.advance(frame, filled);
  ahead.complete(frame);
  assert.ok(ahead.parses <= 64 * 1024 / 4096 + 1, `${ahead.parses} parses`);
  assert.equal(knownBatchCrc(frame, 0, frame.length), null);
  // A prefix that arrives in pieces is still found once enough has come.
  const good = produceFrame(9);
  const follow = new ProduceCrcAhead();
  for (let filled = 1; filled <= good.length; filled++) follow.advance(good, filled);
  follow.complete(good);
  const at = batchAt(good);
  assert.notEqual(knownBatchCrc(good, at + BatchField.attributes, at + batch.length), null);
  forgetBatchCrc(good);
});

/** Feeds wire bytes (size prefix included) to a reader in chunks; the frame once whole. */
function readFrame(reader: FrameReader, wire: Uint8Array, chunk: number): Uint8Array {
  let frame: ReturnType<FrameReader["next"]> = null;
  for (let at = 0; at < wire.length; at += chunk) {
    reader.push(wire.slice(at, at + chunk));
    frame = reader.next();
  }
  assert.ok(frame instanceof Uint8Array);
  return frame;
}

test("produce CRC ahead through the frame reader: a reused buffer never lends the last frame's CRC", () => {
  const cache = new FrameBufferCache();
  const wire = encodeRequest(ProduceApi, 9, 1, { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ name: "t", partitionData: [{ index: 0, records: batch }] }] });
  const first = new FrameReader(1 << 24, cache);
  const frame = readFrame(first, wire, 65_536);
  const at = batchAt(frame);
  const range = [at + BatchField.attributes, at + batch.length] as const;
  assert.notEqual(knownBatchCrc(frame, ...range), null, "an assembled Produce frame has its CRC");
  const summary = validateBatches(frame.subarray(at, at + batch.length), 1 << 24);
  assert.equal(summary.errorCode, ErrorCode.NONE);
  first.handled(true);
  assert.equal(knownBatchCrc(frame, ...range), null, "forgotten when handled");
  // Another connection's frame of about the same size lands in the same buffer: its bytes differ
  // (a Produce v2 with a message set), and it has no CRC of its own.
  const second = new FrameReader(1 << 24, cache);
  const again = readFrame(second, encodeRequest(ProduceApi, 2, 2, {
    transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ name: "t", partitionData: [{ index: 0, records: new Uint8Array(wire.length - 100) }] }],
  }), 65_536);
  assert.equal(again.buffer, frame.buffer, "the buffer was reused");
  assert.equal(knownBatchCrc(again, ...range), null);
});

test("produce CRC ahead: a batch changed in flight is refused, its CRC computed ahead or not", () => {
  const bad = batch.slice();
  bad[bad.length - 10] ^= 0x01; // a record's value
  const wire = encodeRequest(ProduceApi, 9, 1, { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ name: "t", partitionData: [{ index: 0, records: bad }] }] });
  const reader = new FrameReader(1 << 24, new FrameBufferCache());
  const frame = readFrame(reader, wire, 65_536);
  const at = batchAt(frame);
  assert.notEqual(knownBatchCrc(frame, at + BatchField.attributes, at + batch.length), null, "computed ahead");
  assert.equal(validateBatches(frame.subarray(at, at + bad.length), 1 << 24).errorCode, ErrorCode.CORRUPT_MESSAGE);
  forgetBatchCrc(frame);
  assert.equal(validateBatches(frame.subarray(at, at + bad.length), 1 << 24).errorCode, ErrorCode.CORRUPT_MESSAGE);
});
