// The stored batch the record benchmarks measure on: about 1 MB of 100-byte values (kcat's bench
// load), 9,000 records, timestamps a few ms apart as a producer's linger spreads them.
import { RecordBatchBuilder } from "../../src/protocol/record_batch_builder.ts";

export const recordsPerBatch = 9_000;

export function hundredByteBatch(codec: number): Uint8Array {
  const b = new RecordBatchBuilder();
  const value = new TextEncoder().encode("x".repeat(99));
  const t0 = BigInt(Date.now());
  for (let i = 0; i < recordsPerBatch; i++) b.append(t0 + BigInt(i >> 8), null, value);
  return b.build(codec);
}
