#!/usr/bin/env node
// npm run bench:stall [-- --runtime bun|deno|both --partitions 1000,10000 --cap-s 900 --only create]
// Runs test/bench/stall_bench.ts under Bun, then Deno: a real broker (embedded registry) creates
// a topic of 1,000 then 10,000 partitions, answers Metadata for it, restarts with it and deletes
// it, while a 5 ms interval timer in the broker's process records the longest event-loop stall
// and another connection sends ApiVersions every 10 ms. Prints, per phase and runtime, the total
// time, the longest stall and the slowest ApiVersions answer. Issue 11 asks for no stall over
// 50 ms; the machine is shared and noisy, so read the stall figures as orders of magnitude.
// Each new partition holds one descriptor (its segment's .log; index files are opened only to
// write): 10,000 partitions need `ulimit -n` above about 10,500.
// For a "before" figure, run this script from a checkout of the older commit.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const args = process.argv.slice(2);
const at = args.indexOf("--runtime");
const which = at >= 0 ? args[at + 1] : "both";
const pass = at >= 0 ? [...args.slice(0, at), ...args.slice(at + 2)] : args;
const runtimes = which === "both" ? ["bun", "deno"] : [which];
const bench = join(root, "test/bench/stall_bench.ts");

function runOne(runtime) {
  const bin = join(root, "node_modules/.bin", runtime);
  const argv = runtime === "bun" ? [bench, ...pass] : ["run", "-A", bench, ...pass];
  return new Promise((resolve, reject) => {
    const child = spawn(bin, argv, { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
    let result = null;
    let buffered = "";
    child.stdout.on("data", (d) => {
      buffered += d.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop();
      for (const line of lines) {
        if (line.startsWith("RESULT ")) result = JSON.parse(line.slice(7));
        else console.log(line);
      }
    });
    child.on("error", reject);
    child.on("close", (code) => (code === 0 && result !== null ? resolve(result) : reject(new Error(`${runtime} bench exited ${code}`))));
  });
}

const results = [];
for (const rt of runtimes) results.push(await runOne(rt));
console.log("\nsummary: longest event-loop stall / total time, ms");
const col = (s) => String(s).padStart(22);
console.log("".padEnd(24) + results.map((r) => col(r.runtime)).join(""));
for (const [i, { partitions }] of results[0].results.entries()) {
  for (const key of ["create", "meta", "restart", "del"]) {
    if (results[0].results[i][key] === undefined) continue;
    const label = `${results[0].results[i][key].name}`;
    console.log(label.padEnd(24) + results.map((r) => {
      const p = r.results[i][key];
      return col(`${p.maxStallMs} / ${p.totalMs}${p.ok ? "" : " FAILED"}`);
    }).join(""));
  }
}
