#!/usr/bin/env node
// npm run bench:stall [-- --runtime bun|deno|both --partitions 1000,10000 --cap-s 900 --only create]
// Runs test/bench/stall_bench.ts under Bun, then Deno: a real broker (embedded registry) creates
// a topic of 1,000 then 10,000 partitions, answers Metadata for it, restarts with it, makes the
// embedded registry rewrite its snapshot (compaction) with it, and deletes it, while a 5 ms
// interval timer in the broker's process records the longest event-loop stall
// and another connection sends ApiVersions every 10 ms. Prints, per phase and runtime, the total
// time, the longest stall and the slowest ApiVersions answer. Issue 11 asks for no stall over
// 50 ms; the machine is shared and noisy, so read the stall figures as orders of magnitude. The
// figure in parentheses subtracts the time the kernel kept the broker's thread waiting for a CPU
// (Linux's /proc/thread-self/schedstat) from each stall: what the broker itself held the loop for;
// the figure after the slash is the part of a stall the thread spent on a CPU (the rest of the
// parenthesized figure is time blocked in the kernel: synchronous file operations on a busy disk).
// Each new partition holds one descriptor (its segment's .log; index files are opened only to
// write): 10,000 partitions need `ulimit -n` above about 10,500.
// For a "before" figure, run this script from a checkout of the older commit.
import { runTsBench } from "./runtimes.mjs";

const results = await runTsBench("stall_bench.ts");
console.log("\nsummary: longest event-loop stall (less run-queue wait / on a CPU) / total time, ms");
const col = (s) => String(s).padStart(22);
console.log("".padEnd(24) + results.map((r) => col(r.runtime)).join(""));
for (const [i, { partitions }] of results[0].results.entries()) {
  for (const key of ["create", "meta", "restart", "compaction", "del"]) {
    if (results[0].results[i][key] === undefined) continue;
    const label = `${results[0].results[i][key].name}`;
    console.log(label.padEnd(24) + results.map((r) => {
      const p = r.results[i][key];
      return col(`${p.maxStallMs} (${p.maxOwnStallMs}/${p.maxCpuStallMs ?? "-"}) / ${p.totalMs}${p.ok ? "" : " FAILED"}`);
    }).join(""));
  }
}
