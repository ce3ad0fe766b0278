#!/usr/bin/env node
// npm run bench:zk [-- --runtime bun|deno|both --get-ops 100000 --set-ops 20000 --window 500 --bytes 100 --rounds 3 --force-sync yes]
// Runs test/bench/zk_bench.ts (strand's ZooKeeper client against a real ZooKeeper 3.8, next to
// ZooKeeper's own Java client on the same server in the same run) under Bun, then under Deno,
// and ends with one summary table. Needs the Debian package zookeeper (and java).
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const args = process.argv.slice(2);
const at = args.indexOf("--runtime");
const which = at >= 0 ? args[at + 1] : "both";
const pass = at >= 0 ? [...args.slice(0, at), ...args.slice(at + 2)] : args;
const runtimes = which === "both" ? ["bun", "deno"] : [which];
const bench = join(root, "test/bench/zk_bench.ts");

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

const fmt = (n) => Math.round(n).toLocaleString("en-US");
const results = [];
for (const rt of runtimes) results.push(await runOne(rt));

const r0 = results[0];
console.log(`\nsummary (ops/s, median of rounds; one client, ${r0.window} requests outstanding, ${r0.bytes}-byte node, forceSync=${r0.forceSync}):`);
const col = (s) => String(s).padStart(22);
console.log("".padEnd(28) + results.map((r) => col(r.runtime)).join(""));
const row = (label, f) => console.log(label.padEnd(28) + results.map((r) => col(f(r))).join(""));
row("getData, strand", (r) => fmt(r.get));
row("getData, Java client", (r) => fmt(r.javaGet));
row("  ratio strand/Java", (r) => (r.get / r.javaGet).toFixed(2));
row("setData, strand", (r) => fmt(r.set));
row("setData, Java client", (r) => fmt(r.javaSet));
row("  ratio strand/Java", (r) => (r.set / r.javaSet).toFixed(2));
