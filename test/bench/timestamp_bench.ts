// CPU cost of reading a batch's maxTimestamp field, per read: the old int64At (a number, wrong
// past 2^53), the old recovery path Number(getBigInt64) (allocates a bigint), and timestampAt (an
// exact int64 Timestamp, log/timestamp.ts), for clock-like values and for values past 2^53.
// Each variant has its own loop (a shared call site would turn polymorphic and skew the later
// ones); best of 9 rounds. Run: bun test/bench/timestamp_bench.ts | deno run -A test/bench/timestamp_bench.ts
import { timestampAt } from "../../src/log/timestamp.ts";

const N = 1 << 20;
function buffer(first: bigint): Uint8Array {
  const buf = new Uint8Array(N * 8);
  const dv = new DataView(buf.buffer);
  for (let i = 0; i < N; i++) dv.setBigInt64(i * 8, first + BigInt(i));
  return buf;
}
const clock = buffer(1_700_000_000_000n);
const huge = buffer(0x7fff_ffff_ffff_ffffn - BigInt(N));

function int32At(b: Uint8Array, i: number): number {
  return (b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3];
}
function int64At(b: Uint8Array, i: number): number {
  return int32At(b, i) * 0x1_0000_0000 + (int32At(b, i + 4) >>> 0);
}

function best(loop: () => unknown): number {
  let ms = Infinity;
  for (let r = 0; r < 9; r++) {
    const t = performance.now();
    loop();
    ms = Math.min(ms, performance.now() - t);
  }
  return (ms * 1e6) / N;
}

const oldNumber = best(() => {
  let max = -1;
  for (let i = 0; i < N; i++) {
    const v = int64At(clock, i * 8);
    if (v > max) max = v;
  }
  return max;
});
const oldRecovery = best(() => {
  const dv = new DataView(clock.buffer);
  let max = -1;
  for (let i = 0; i < N; i++) {
    const v = Number(dv.getBigInt64(i * 8));
    if (v > max) max = v;
  }
  return max;
});
const exact = best(() => {
  let max: number | bigint = -1;
  for (let i = 0; i < N; i++) {
    const v = timestampAt(clock, i * 8);
    if (v > max) max = v;
  }
  return max;
});
const exactHuge = best(() => {
  let max: number | bigint = -1;
  for (let i = 0; i < N; i++) {
    const v = timestampAt(huge, i * 8);
    if (v > max) max = v;
  }
  return max;
});
const f = (n: number) => n.toFixed(1);
console.log(`ns per read (best of 9 rounds of ${N}):`);
console.log(`  old int64At, clock values (number, inexact past 2^53): ${f(oldNumber)}`);
console.log(`  old Number(getBigInt64), clock values (recovery path):  ${f(oldRecovery)}`);
console.log(`  timestampAt, clock values:                              ${f(exact)}  (${(exact / oldNumber).toFixed(2)}x int64At)`);
console.log(`  timestampAt, values near 2^63-1 (bigint, rare):         ${f(exactHuge)}`);
