#!/usr/bin/env node
// Runs the whole suite under Bun and under Deno, and ends with one line: `N passed, N failed`
// (with `, N skipped` when any test skipped). Usage: node test/run.mjs [bun|deno] [file filter...]
// Each test file uses node:test's top-level test() (no describe), which both runtimes run natively.
import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const bin = (name) => join(root, "node_modules", ".bin", name);

function findTests(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findTests(p));
    else if (name.endsWith(".test.ts")) out.push(relative(root, p));
  }
  return out;
}

const args = process.argv.slice(2);
const chosen = args.filter((a) => a === "bun" || a === "deno");
const runtimes = chosen.length > 0 ? chosen : ["bun", "deno"];
const filters = args.filter((a) => a !== "bun" && a !== "deno");
const files = findTests(join(root, "test")).filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));

const totals = { passed: 0, failed: 0, skipped: 0 };
const env = { ...process.env, NO_COLOR: "1" };
delete env.FORCE_COLOR;

// Output is streamed as each runtime prints it (a CI log silent for minutes looks hung) and kept
// for the summary parse.
function spawnTee(cmd, args) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
    const chunks = [];
    const keep = (stream, out) => stream.on("data", (d) => {
      chunks.push(d);
      out.write(d);
    });
    keep(child.stdout, process.stdout);
    keep(child.stderr, process.stderr);
    child.on("error", (e) => resolve({ status: null, signal: String(e), out: "" }));
    child.on("close", (status, signal) => resolve({ status, signal, out: Buffer.concat(chunks).toString() }));
  });
}

async function run(runtime) {
  const cmd = runtime === "bun"
    ? [bin("bun"), ["test", "--timeout", "300000", ...files.map((f) => "./" + f)]]
    : [bin("deno"), ["test", "-A", "--no-check", ...files]];
  console.log(`\n=== ${runtime}: ${files.length} test files`);
  const r = await spawnTee(cmd[0], cmd[1]);
  const out = r.out;
  const counts = runtime === "bun" ? parseBun(out) : parseDeno(out);
  if (counts === null || (r.status !== 0 && counts.failed === 0)) {
    console.log(`${runtime}: runner exited ${r.status} ${r.signal ?? ""} without a readable summary`);
    totals.failed += 1;
    return;
  }
  console.log(`${runtime}: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  totals.passed += counts.passed;
  totals.failed += counts.failed;
  totals.skipped += counts.skipped;
}

function parseBun(out) {
  const pass = out.match(/^\s*(\d+) pass$/m);
  const fail = out.match(/^\s*(\d+) fail$/m);
  const skip = out.match(/^\s*(\d+) skip$/m);
  if (!pass && !fail) return null;
  return { passed: +(pass?.[1] ?? 0), failed: +(fail?.[1] ?? 0), skipped: +(skip?.[1] ?? 0) };
}

function parseDeno(out) {
  const m = out.match(/^(?:ok|FAILED) \| (\d+) passed(?: \(\d+ steps?\))? \| (\d+) failed(?: \(\d+ steps?\))?(?: \| (\d+) ignored)?/m);
  if (!m) return null;
  return { passed: +m[1], failed: +m[2], skipped: +(m[3] ?? 0) };
}

for (const r of runtimes) await run(r);
const skipped = totals.skipped ? `, ${totals.skipped} skipped` : "";
console.log(`\n${totals.passed} passed, ${totals.failed} failed${skipped}`);
process.exit(totals.failed === 0 && totals.passed > 0 ? 0 : 1);
