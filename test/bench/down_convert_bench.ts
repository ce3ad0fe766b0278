// bun test/bench/down_convert_bench.ts; deno run -A test/bench/down_convert_bench.ts
// What a Fetch v0-3 answer's down-conversion (src/protocol/down_convert.ts) costs per stored batch
// of about 1 MB of 100-byte records, next to a baseline measured in the same run on the same
// bytes: the up-conversion of the same records as a legacy message set (message_set.ts, what a
// Produce v0-2 costs), the other legacy path. Uncompressed and per codec (where compression of
// the wrapper is most of the cost). Best of several rounds, alternating: the ratio matters more
// than the absolute figures on a shared machine.
import { Compression } from "../../src/protocol/record_batch.ts";
import { downConvert } from "../../src/protocol/down_convert.ts";
import { upConvertMessageSet } from "../../src/protocol/message_set.ts";
import { hundredByteBatch, recordsPerBatch } from "./bench_batches.ts";

function best(fn: () => void, rounds: number, other: () => void): number {
  let min = Infinity;
  for (let r = 0; r < rounds; r++) {
    other();
    const t0 = performance.now();
    fn();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
}

const opts = { toMagic: 1 as const, fetchOffset: 0, budgetBytes: 1 << 30, minOneUnit: true };
for (const [name, codec] of [["none", Compression.none], ["gzip", Compression.gzip], ["snappy", Compression.snappy], ["lz4", Compression.lz4]] as const) {
  const stored = hundredByteBatch(codec);
  const legacy = downConvert(stored, opts).records;
  const down = () => void downConvert(stored, opts);
  const up = () => void upConvertMessageSet(legacy);
  const downMs = best(down, 15, up);
  const upMs = best(up, 15, down);
  const mb = (recordsPerBatch * 100) / 1e6;
  console.log(`${name.padEnd(6)} down-convert ${downMs.toFixed(2)} ms/batch (${(mb / downMs * 1000).toFixed(0)} MB/s of values), up-convert ${upMs.toFixed(2)} ms, ratio ${(downMs / upMs).toFixed(2)}; stored ${stored.length} B -> legacy ${legacy.length} B`);
}
