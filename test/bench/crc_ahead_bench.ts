// npm run bench:validate (also runs this): the produce path's work after a large Produce request's
// last bytes arrive, with the first batch's CRC32C computed while the bytes arrived
// (src/protocol/produce_crc_ahead.ts) and, as the baseline in the same run on the same bytes,
// without it: the same frame with its api key changed (so the reader does not follow it) and the
// validation computing the CRC, as before. One Produce v9 request of
// about 1 MB of 100-byte records (kcat's bench load) fed to a FrameReader in 64 KiB reads as the
// Deno platform hands them over; timed: the last read's push, next() and the batch's validation.
// Also printed: the whole frame's cost (every read), to show the CRC moved rather than vanished.
import { FrameBufferCache } from "../../src/broker/frame_buffers.ts";
import { FrameReader } from "../../src/broker/frame_reader.ts";
import { ProduceApi } from "../../src/protocol/api/mod.ts";
import { encode } from "../../src/protocol/codec.ts";
import { writeRequestHeader } from "../../src/protocol/headers.ts";
import { Compression } from "../../src/protocol/record_batch.ts";
import { defaultRecordRules, validateBatches } from "../../src/protocol/record_validator.ts";
import { Writer } from "../../src/util/bytes.ts";
import { hundredByteBatch } from "./bench_batches.ts";

const batch = hundredByteBatch(Compression.none);
const w = new Writer(batch.length + 256);
w.int32(0);
writeRequestHeader(w, { apiKey: 0, apiVersion: 9, correlationId: 1, clientId: "bench" }, true);
encode(ProduceApi.request, 9, { transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: "bench", partitionData: [{ index: 0, records: batch }] }] }, w);
w.view.setInt32(0, w.pos - 4);
const wire = w.finish().slice();
const unfollowed = wire.slice();
unfollowed[4] = 0x7f; // api key 0x7f00: not a Produce to the reader; the validation is the same
const cut = (bytes: Uint8Array) => Array.from({ length: Math.ceil(bytes.length / 65_536) }, (_, i) => bytes.slice(i * 65_536, (i + 1) * 65_536));
const readsOf = { ahead: cut(wire), base: cut(unfollowed) };
const rules = { ...defaultRecordRules, topicPartition: "bench-0", nowMs: Date.now() };
const cache = new FrameBufferCache();

/** One request: [ms for every read, ms from the last read to validated]. */
function once(ahead: boolean): [number, number] {
  const r = new FrameReader(1 << 24, cache);
  const reads = ahead ? readsOf.ahead : readsOf.base;
  const t0 = performance.now();
  for (let i = 0; i < reads.length - 1; i++) {
    r.push(reads[i]);
    if (r.next() !== null) throw new Error("frame too early");
  }
  const t1 = performance.now();
  r.push(reads[reads.length - 1]);
  const frame = r.next();
  if (!(frame instanceof Uint8Array)) throw new Error("no frame");
  // The batch, without the three tagged-field sections that end a v9 request.
  const records = frame.subarray(frame.length - batch.length - 3, frame.length - 3);
  const s = validateBatches(records, 1 << 24, rules);
  const t2 = performance.now();
  if (s.errorCode !== 0) throw new Error(`validation failed: ${s.message}`);
  r.handled(true);
  return [t2 - t0, t2 - t1];
}

const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
const runtime = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined" ? "deno" : "bun";
for (let i = 0; i < 50; i++) once(i % 2 === 0); // warm up both paths
const rows = { ahead: { whole: [] as number[], tail: [] as number[] }, base: { whole: [] as number[], tail: [] as number[] } };
for (let i = 0; i < 400; i++) {
  const ahead = i % 2 === 0;
  const [whole, tail] = once(ahead);
  rows[ahead ? "ahead" : "base"].whole.push(whole);
  rows[ahead ? "ahead" : "base"].tail.push(tail);
}
const f = (x: number) => x.toFixed(3);
console.log(`produce CRC ahead on ${runtime}: one Produce v9 of ${wire.length} bytes in ${readsOf.ahead.length} reads, median of 200 each, alternating`);
console.log(`  last read to validated: CRC at validation ${f(median(rows.base.tail))} ms, CRC ahead ${f(median(rows.ahead.tail))} ms, ratio ${f(median(rows.ahead.tail) / median(rows.base.tail))}`);
console.log(`  every read to validated: CRC at validation ${f(median(rows.base.whole))} ms, CRC ahead ${f(median(rows.ahead.whole))} ms, ratio ${f(median(rows.ahead.whole) / median(rows.base.whole))}`);
