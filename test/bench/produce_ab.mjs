#!/usr/bin/env node
// npm run bench:ab -- --ref <commit> [--runs 5] [--records 1000000] [--runtime bun|deno|both]
// The produce figures of `npm run bench` for this checkout next to those of another commit (e.g.
// the one before a change on the produce path), measured in the same run: the commit is checked
// out in a temporary git worktree (node_modules linked from here), and the two run alternately,
// each its own `npm run bench` (test/bench/produce_consume.mjs) with a fresh broker, in the order
// A B, B A, A B ... Machines here are shared and noisy, so it prints every run, the medians, and
// the median of the per-run ratios (this checkout / ref), with the broker's CPU seconds for each.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    ref: { type: "string" },
    runs: { type: "string", default: "5" },
    records: { type: "string", default: "1000000" },
    runtime: { type: "string", default: "both" },
  },
});
if (values.ref === undefined) {
  console.error("bench:ab: --ref <commit> is required (the commit to compare this checkout with)");
  process.exit(1);
}
const root = new URL("../../", import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), "strand-bench-ab-"));
const refDir = join(work, "ref");

function git(args) {
  const r = spawnSync("git", ["-C", root, ...args], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.trim();
}

/** Produce records/s and broker CPU seconds per runtime, from one `npm run bench` output. */
function parse(out) {
  const res = {};
  let rt = null;
  for (const line of out.split("\n")) {
    const on = /strand on (\w+)/.exec(line);
    if (on) rt = on[1];
    const p = /produce \(kcat.*?([\d,]+) records\/s/.exec(line);
    if (p && rt) res[rt] = { rps: Number(p[1].replaceAll(",", "")), cpu: NaN };
    const c = /broker CPU: produce ([\d.]+) s/.exec(line);
    if (c && rt && res[rt]) res[rt].cpu = Number(c[1]);
  }
  return res;
}

function bench(dir) {
  const r = spawnSync("node", [join(dir, "test/bench/produce_consume.mjs"), "--records", values.records, "--runtime", values.runtime], {
    cwd: dir,
    // Only plaintext is compared: an older commit has no TLS listener.
    env: { ...process.env, STRAND_BENCH_TLS: "0" },
    encoding: "utf8",
    maxBuffer: 1 << 26,
  });
  if (r.status !== 0) throw new Error(`bench in ${dir} exited ${r.status}: ${r.stderr}`);
  return parse(r.stdout);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (n, d = 3) => n.toFixed(d);

const head = git(["rev-parse", "--short", "HEAD"]);
const ref = git(["rev-parse", "--short", values.ref]);
git(["worktree", "add", "--detach", refDir, ref]);
try {
  symlinkSync(join(root, "node_modules"), join(refDir, "node_modules"));
  const runs = Number(values.runs);
  console.log(`strand bench:ab: produce of ${values.records} records, this checkout (${head}) against ${ref}, ${runs} alternating runs`);
  const results = { here: [], ref: [] };
  for (let i = 0; i < runs; i++) {
    const order = i % 2 === 0 ? ["ref", "here"] : ["here", "ref"];
    for (const which of order) {
      const r = bench(which === "here" ? root : refDir);
      results[which].push(r);
      const line = Object.entries(r).map(([rt, x]) => `${rt} ${fmt(x.rps / 1e6)} M records/s (broker CPU ${fmt(x.cpu, 2)} s)`).join(", ");
      console.log(`  run ${i + 1} ${which === "here" ? head : ref}: ${line}`);
    }
  }
  for (const rt of Object.keys(results.here[0])) {
    const here = results.here.map((r) => r[rt]);
    const base = results.ref.map((r) => r[rt]);
    const ratios = here.map((x, i) => x.rps / base[i].rps);
    console.log(
      `${rt}: ${ref} ${fmt(median(base.map((x) => x.rps)) / 1e6)} M records/s (CPU ${fmt(median(base.map((x) => x.cpu)), 2)} s), ` +
        `${head} ${fmt(median(here.map((x) => x.rps)) / 1e6)} M records/s (CPU ${fmt(median(here.map((x) => x.cpu)), 2)} s); ` +
        `ratio ${fmt(median(ratios), 2)} (median of per-run ratios: ${ratios.map((x) => fmt(x, 2)).join(" ")})`,
    );
  }
} finally {
  git(["worktree", "remove", "--force", refDir]);
  rmSync(work, { recursive: true, force: true });
}
