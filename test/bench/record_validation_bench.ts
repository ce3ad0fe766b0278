// npm run bench:validate (bun test/bench/record_validation_bench.ts; deno run -A test/bench/record_validation_bench.ts)
// What the produce path's full record validation (src/protocol/record_validator.ts) costs per
// batch, next to a baseline measured in the same run on the same bytes: the header-and-CRC32C
// check alone (what Produce did before every record was walked). Batches of about 1 MB of
// 100-byte records (kcat's bench load), uncompressed and in each codec (where decompression is
// most of the cost). Each figure is the best of many rounds, baseline and validation alternating,
// since machines here are shared and noisy: the ratio matters more than the absolute figures.
import { BatchField, batchSizeAt, Compression, view } from "../../src/protocol/record_batch.ts";
import { defaultRecordRules, validateBatches } from "../../src/protocol/record_validator.ts";
import { crc32c } from "../../src/util/crc32c.ts";
import { hundredByteBatch, recordsPerBatch } from "./bench_batches.ts";

/** The pre-validation check: header fields and CRC32C, records untouched. */
function headerAndCrc(b: Uint8Array): boolean {
  const dv = view(b);
  const size = batchSizeAt(dv, 0);
  return dv.getInt8(BatchField.magic) === 2 && crc32c(b, BatchField.attributes, size) === dv.getUint32(BatchField.crc);
}

function best(fn: () => void, reps: number, rounds: number, other: () => void): number {
  let min = Infinity;
  for (let r = 0; r < rounds; r++) {
    other();
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) fn();
    min = Math.min(min, (performance.now() - t0) / reps);
  }
  return min;
}

const runtime = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined" ? "deno" : "bun";
console.log(`record validation on ${runtime}: batches of ${recordsPerBatch} records of 100 bytes`);
const names = ["none", "gzip", "snappy", "lz4", "zstd"];
for (const codec of [Compression.none, Compression.gzip, Compression.snappy, Compression.lz4, Compression.zstd]) {
  const b = hundredByteBatch(codec);
  const rules = { ...defaultRecordRules, topicPartition: "bench-0", nowMs: Date.now() };
  const check = () => {
    if (!headerAndCrc(b)) throw new Error("header check failed");
  };
  const validate = () => {
    const s = validateBatches(b, 1 << 30, rules);
    if (s.errorCode !== 0) throw new Error(s.message);
  };
  const reps = codec === Compression.none ? 20 : 4;
  for (let i = 0; i < 10; i++) validate();
  const base = best(check, reps, 40, validate);
  const full = best(validate, reps, 40, check);
  const perRecord = (ms: number) => ((ms * 1e6) / recordsPerBatch).toFixed(1);
  console.log(
    `  ${names[codec].padEnd(6)} ${String(b.length).padStart(8)} bytes  header+CRC ${base.toFixed(3)} ms (${perRecord(base)} ns/record)` +
      `  full validation ${full.toFixed(3)} ms (${perRecord(full)} ns/record)  ratio ${(full / base).toFixed(2)}`,
  );
}
