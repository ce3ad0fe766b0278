#!/usr/bin/env node
// npm run bench:zk [-- --runtime bun|deno|both --get-ops 100000 --set-ops 20000 --window 500 --bytes 100 --rounds 3 --force-sync yes]
// Runs test/bench/zk_bench.ts (strand's ZooKeeper client against a real ZooKeeper 3.8, next to
// ZooKeeper's own Java client on the same server in the same run) under Bun, then under Deno,
// and ends with one summary table. Needs the Debian package zookeeper (and java).
import { runTsBench } from "./runtimes.mjs";

const fmt = (n) => Math.round(n).toLocaleString("en-US");
const results = await runTsBench("zk_bench.ts");

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
