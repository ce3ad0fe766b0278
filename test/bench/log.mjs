#!/usr/bin/env node
// npm run bench:log [-- --runtime bun|deno|both --append-mib 256 --mib 1024 --rounds 7 --lookups 20000]
// Runs test/bench/log_bench.ts (the Log class directly: append, read, lookups, recovery, each
// next to a baseline measured in the same run) under Bun, then under Deno, and ends with one
// summary table of both. Machines here are shared and noisy: the ratios, measured back to back
// in the same run, matter more than the absolute figures.
import { runTsBench } from "./runtimes.mjs";

const fmt = (n, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const results = await runTsBench("log_bench.ts");
console.log("");

console.log("summary (MB/s; ratios against baselines measured in the same run):");
const col = (s) => String(s).padStart(24);
console.log("".padEnd(34) + results.map((r) => col(r.runtime)).join(""));
const row = (label, f) => console.log(label.padEnd(34) + results.map((r) => col(f(r))).join(""));
// `--only clean` runs the cleaning figures alone, `--only idempotent` the idempotent append.
if (results[0].idempotent !== undefined) {
  row("idempotent append / plain", (r) => `${fmt(r.idempotent.ratio, 3)} (${fmt(r.idempotent.idempotentMBps)} / ${fmt(r.idempotent.plainMBps)})`);
}
if (results[0].read !== undefined) {
  for (const key of ["appendSmall", "appendBig"]) {
    const a = results[0][key];
    row(`append ${a.recordBytes}-byte records`, (r) => `${fmt(r[key].logMBps)}`);
    row("  / dd bs=16k", (r) => `${fmt(r[key].ratio, 2)} (dd ${fmt(r[key].ddMBps)})`);
    row(`  / dd bs=${a.batchBytes} (same writes)`, (r) => `${fmt(r[key].ratioSameSize, 2)} (dd ${fmt(r[key].ddSameSizeMBps)})`);
  }
  row("read, 1 MiB fetches", (r) => `${fmt(r.read.logMBps)}`);
  row("  / dd bs=1M", (r) => `${fmt(r.read.ratio, 2)} (dd ${fmt(r.read.ddMBps)})`);
  row("read(random offset) p50/p99 µs", (r) => `${fmt(r.lookup.offset.p50Us, 1)} / ${fmt(r.lookup.offset.p99Us, 1)}`);
  row("offsetForTimestamp p50/p99 µs", (r) => `${fmt(r.lookup.timestamp.p50Us, 1)} / ${fmt(r.lookup.timestamp.p99Us, 1)}`);
  row("recovery scan", (r) => `${fmt(r.recovery.scanMBps)}`);
  row("  CRC32C alone, in memory", (r) => `${fmt(r.recovery.crcMBps)}`);
}
if (results[0].cleaning !== undefined) {
  row("cleaning, uncompressed", (r) => `${fmt(r.cleaning.plain.MBps)} (${fmt(r.cleaning.plain.recordsPerSec)} rec/s)`);
  row("cleaning, gzip", (r) => `${fmt(r.cleaning.gzip.MBps)} (${fmt(r.cleaning.gzip.recordsPerSec)} rec/s)`);
  row("  longest event-loop stall, ms", (r) => `${fmt(Math.max(r.cleaning.plain.maxStallMs, r.cleaning.gzip.maxStallMs))}`);
}
console.log("targets: append >= 0.70 of dd; recovery scan >= 500 MB/s; idempotent append >= 0.90 of plain");
