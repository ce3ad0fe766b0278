#!/usr/bin/env node
// npm run bench:perf [-- --records N --record-size B --tool-runtime bun|deno|both --repeat R]
// `strand perf produce` and `strand perf consume` against kcat (librdkafka) on the same load, in
// the same run, against one strand broker (`bun src/cli/main.ts serve`, fresh temp log dir, free
// port): N records (default 1,000,000) of B bytes (default 100) into one partition, acks=1,
// linger.ms=5, batches up to 1 MB, fetches of 1 MB per partition (both tools' defaults).
// kcat produces lines of B bytes from a file generated once; each consumer reads the topic kcat
// wrote (the same stored batches for both). Every figure is wall time of the whole process
// (start-up and metadata included, as a user sees it), best of R runs; MB is 2^20 bytes of
// record values, as Kafka's perf tools count. The broker's CPU seconds per phase are shown too.
// Machines here are shared and noisy: the ratios matter more than the absolute figures.
// The native client (test/bench/native.mjs: librdkafka, no per-record formatting) runs the same
// produce and consume as a second baseline. Then latency at a fixed rate (--rate, default 50,000
// records/s, for --latency-records, default 250,000): strand perf produce --throughput against
// the native client paced to the same rate, both with acks=1, linger.ms=5 and 16 KB batches
// (strand perf's defaults), send-to-acknowledgement percentiles side by side.
import { spawn, spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildNative, runNative } from "./native.mjs";

const { values } = parseArgs({
  options: {
    records: { type: "string", default: "1000000" },
    "record-size": { type: "string", default: "100" },
    "tool-runtime": { type: "string", default: "both" },
    repeat: { type: "string", default: "2" },
    rate: { type: "string", default: "50000" },
    "latency-records": { type: "string", default: "250000" },
  },
});
const records = Number(values.records);
const recordSize = Number(values["record-size"]);
const repeat = Math.max(1, Number(values.repeat));
const toolRuntimes = values["tool-runtime"] === "both" ? ["bun", "deno"] : [values["tool-runtime"]];
const root = new URL("../../", import.meta.url).pathname;
const bun = join(root, "node_modules/.bin/bun");
const deno = join(root, "node_modules/.bin/deno");
const main = join(root, "src/cli/main.ts");
const work = mkdtempSync(join(tmpdir(), "strand-perf-bench-"));
const MB = 1024 * 1024;

let broker = null;
function fail(msg) {
  console.error(`bench:perf: ${msg}`);
  broker?.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
  process.exit(1);
}
if (spawnSync("kcat", ["-V"]).status !== 0) fail("needs kcat (Debian package kcat)");
let native;
try {
  native = buildNative(work);
} catch (e) {
  fail(e.message);
}

const strandCmd = (rt, args) => (rt === "bun" ? [bun, [main, ...args]] : [deno, ["run", "-A", main, ...args]]);

function freePort() {
  return new Promise((res) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

function timed(cmd, args, opts = {}) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { maxBuffer: 1 << 30, ...opts });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) fail(`${cmd} ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return { ms, stdout: r.stdout?.toString() ?? "" };
}

function fmt(n, digits = 0) {
  return n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

// The input for kcat: one line of recordSize bytes per record (the newline is the delimiter, not
// part of the value), made once.
const input = join(work, "input.txt");
{
  const chunk = [];
  for (let i = 0; i < records; i++) chunk.push(`record-${i}-`.padEnd(recordSize, "x") + "\n");
  writeFileSync(input, chunk.join(""));
}

const port = await freePort();
const b = `127.0.0.1:${port}`;
broker = spawn(bun, [main, "serve", "--log-level", "warn", "--override", `log.dirs=${join(work, "logs")}`,
  "--override", `listeners=PLAINTEXT://${b}`, "--override", "admin.listeners="], { stdio: ["ignore", "ignore", "inherit"] });
const brokerExited = new Promise((r) => broker.on("exit", r));
try {
  let up = false;
  for (let i = 0; i < 100 && !up; i++) {
    up = spawnSync("kcat", ["-b", b, "-L", "-m", "2"]).status === 0;
    if (!up) await new Promise((r) => setTimeout(r, 100));
  }
  if (!up) fail(`broker on ${b} did not come up`);
  /** The broker's utime + stime in seconds (clock ticks of 1/100 s on Linux). */
  const cpu = () => {
    const f = readFileSync(`/proc/${broker.pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(f[11]) + Number(f[12])) / 100;
  };
  const measure = (fn) => {
    const c0 = cpu();
    const r = fn();
    return { ...r, cpu: cpu() - c0 };
  };
  const best = (runs) => runs.reduce((a, x) => (x.ms < a.ms ? x : a));
  const createTopic = (t) => timed(...strandCmd("bun", ["topics", "create", "--bootstrap-server", b, "--topic", t, "--partitions", "1"]));
  const countRecords = (t) => {
    const r = timed("kcat", ["-b", b, "-C", "-t", t, "-p", "0", "-o", "beginning", "-e", "-q", "-f", "\\n"]);
    return r.stdout.length;
  };

  // --- produce ---
  const produce = { kcat: [], native: [] };
  for (const rt of toolRuntimes) produce[rt] = [];
  const strandOut = {};
  for (let i = 0; i < repeat; i++) {
    const kt = `kcat-${i}`;
    createTopic(kt);
    produce.kcat.push(measure(() => timed("kcat", ["-b", b, "-P", "-t", kt, "-p", "0", "-X", "acks=1", "-X", "linger.ms=5",
      "-X", "batch.size=1000000", "-X", "queue.buffering.max.kbytes=1048576", "-l", input])));
    const n = countRecords(kt);
    if (n !== records) fail(`kcat produced ${n} records to ${kt}, expected ${records}`);
    const nt = `native-${i}`;
    createTopic(nt);
    produce.native.push(measure(() => timed(native, ["produce", "-b", b, "-t", nt, "-n", String(records), "-s", String(recordSize), "-X", "acks=1"])));
    for (const rt of toolRuntimes) {
      const st = `strand-${rt}-${i}`;
      createTopic(st);
      const r = measure(() => timed(...strandCmd(rt, ["perf", "produce", "--bootstrap-server", b, "--topic", st, "--num-records", String(records),
        "--record-size", String(recordSize), "--acks", "1", "--linger-ms", "5", "--batch-size", "1000000", "--partition", "0",
        "--reporting-interval-ms", "600000"])));
      produce[rt].push(r);
      strandOut[`produce-${rt}`] = r.stdout.trim();
      const m = countRecords(st);
      if (m !== records) fail(`strand perf produce (${rt}) wrote ${m} records to ${st}, expected ${records}`);
    }
  }

  // --- consume: every consumer reads the topic kcat wrote first ---
  const consume = { kcat: [], native: [] };
  for (const rt of toolRuntimes) consume[rt] = [];
  const devnull = openSync("/dev/null", "w");
  for (let i = 0; i < repeat; i++) {
    consume.kcat.push(measure(() => timed("kcat", ["-b", b, "-C", "-t", "kcat-0", "-p", "0", "-o", "beginning", "-e", "-q"],
      { stdio: ["ignore", devnull, "pipe"] })));
    consume.native.push(measure(() => timed(native, ["consume", "-b", b, "-t", "kcat-0", "-n", String(records)])));
    for (const rt of toolRuntimes) {
      const r = measure(() => timed(...strandCmd(rt, ["perf", "consume", "--bootstrap-server", b, "--topic", "kcat-0",
        "--num-records", String(records), "--reporting-interval-ms", "600000"])));
      consume[rt].push(r);
      strandOut[`consume-${rt}`] = r.stdout.trim();
    }
  }
  closeSync(devnull);

  const bytes = records * recordSize;
  const row = (label, r) => {
    const s = r.ms / 1000;
    console.log(`  ${label.padEnd(34)} ${fmt(r.ms).padStart(7)} ms ${fmt(records / s).padStart(11)} records/s ${fmt(bytes / MB / s, 1).padStart(7)} MB/s   broker CPU ${fmt(r.cpu, 2)} s`);
    return records / s;
  };
  console.log(`strand perf vs kcat: ${fmt(records)} records of ${recordSize} bytes, one partition, acks=1, linger.ms=5, ` +
    `batches up to 1 MB; broker: bun src/cli/main.ts serve; best of ${repeat}`);
  console.log("produce:");
  const kp = row("kcat -P", best(produce.kcat));
  const np = row("native rdkperf produce", best(produce.native));
  const sp = {};
  for (const rt of toolRuntimes) sp[rt] = row(`strand perf produce (${rt})`, best(produce[rt]));
  console.log("consume:");
  const kc = row("kcat -C -e -o beginning", best(consume.kcat));
  const nc = row("native rdkperf consume", best(consume.native));
  const sc = {};
  for (const rt of toolRuntimes) sc[rt] = row(`strand perf consume (${rt})`, best(consume[rt]));
  console.log("ratios (strand / kcat, records/s):");
  for (const rt of toolRuntimes) console.log(`  ${rt}: produce ${fmt(sp[rt] / kp, 2)}, consume ${fmt(sc[rt] / kc, 2)}`);
  console.log("ratios (strand / native rdkperf, records/s; whole processes both):");
  for (const rt of toolRuntimes) console.log(`  ${rt}: produce ${fmt(sp[rt] / np, 2)}, consume ${fmt(sc[rt] / nc, 2)}`);
  console.log("strand perf's own final lines (last run; its clock starts after start-up):");
  for (const [k, v] of Object.entries(strandOut)) console.log(`  ${k}: ${v.split("\n").pop()}`);

  // --- latency at a fixed rate, interleaved so a noisy neighbour hits both alike ---
  const rate = Number(values.rate);
  const latencyRecords = Number(values["latency-records"]);
  console.log(`latency at ${fmt(rate)} records/s, ${fmt(latencyRecords)} records, acks=1, linger.ms=5, batch 16 KB (send to acknowledgement, ms):`);
  const lat = (label, x) => console.log(`  ${label.padEnd(34)} p50 ${fmt(x.p50, 2).padStart(8)}  p95 ${fmt(x.p95, 2).padStart(8)}  p99 ${fmt(x.p99, 2).padStart(8)}  ` +
    `p99.9 ${fmt(x.p999, 2).padStart(8)}  max ${fmt(x.max, 2).padStart(8)}  (${fmt(x.rps)} records/s)`);
  for (let i = 0; i < repeat; i++) {
    const nt = `native-lat-${i}`;
    createTopic(nt);
    const n = runNative(native, "produce", { bootstrap: b, topic: nt, records: latencyRecords, size: recordSize, rate,
      config: { acks: "1", "linger.ms": "5", "batch.size": "16384" } });
    const nl = { p50: n.p50_ms, p95: n.p95_ms, p99: n.p99_ms, p999: n.p999_ms, max: n.max_ms, rps: n.records_per_s };
    lat(`native rdkperf (pass ${i + 1})`, nl);
    for (const rt of toolRuntimes) {
      const st = `strand-lat-${rt}-${i}`;
      createTopic(st);
      const out = timed(...strandCmd(rt, ["perf", "produce", "--bootstrap-server", b, "--topic", st, "--num-records", String(latencyRecords),
        "--record-size", String(recordSize), "--throughput", String(rate), "--acks", "1", "--partition", "0", "--reporting-interval-ms", "600000"])).stdout.trim().split("\n").pop();
      // Kafka's format: "N records sent, R records/sec (...), A ms avg latency, M ms max latency, P ms 50th, ..."
      const num = (re) => Number((re.exec(out) ?? [])[1] ?? NaN);
      const sl = { p50: num(/([\d.]+) ms 50th/), p95: num(/([\d.]+) ms 95th/), p99: num(/([\d.]+) ms 99th/), p999: num(/([\d.]+) ms 99\.9th/),
        max: num(/([\d.]+) ms max latency/), rps: num(/([\d.]+) records\/sec/) };
      lat(`strand perf produce (${rt}, pass ${i + 1})`, sl);
      console.log(`    strand / native: p50 ${fmt(sl.p50 / nl.p50, 2)}, p99 ${fmt(sl.p99 / nl.p99, 2)} (issue 18's target: strand p99 at most 5 ms)`);
    }
  }
} finally {
  broker.kill("SIGTERM");
  await brokerExited;
  rmSync(work, { recursive: true, force: true });
}
