#!/usr/bin/env node
// npm run bench:startup [-- --runs 15 --exe dist/strand --base OTHER_EXE --only exe,bun,deno]
// Start-up time of `strand serve` on the embedded defaults (fresh log dir, embedded registry, admin
// API on): milliseconds from spawn to the Kafka port accepting a TCP connection, median of --runs,
// for the single executable (built into a temporary dir by build/build.ts unless --exe names one),
// `bun src/cli/main.ts` and `deno run -A src/cli/main.ts`; and from spawn to `--version` exiting.
// --base names a second executable (say, one built from main) measured alongside, as "base".
// Baselines in the same run: /bin/true, `bun -e 0`, `deno eval 0` (what exec and an empty runtime
// cost on this machine now). The variants take turns run by run, so load on the shared machine
// spreads over all of them. Issue 18's target: the executable listening in under 150 ms.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = fileURLToPath(new URL("../../", import.meta.url));
const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "15" },
    exe: { type: "string" },
    base: { type: "string" },
    only: { type: "string", default: "exe,bun,deno" },
  },
});
const runs = Number(values.runs);
const only = new Set(values.only.split(","));
const bunBin = join(root, "node_modules/.bin/bun");
const denoBin = join(root, "node_modules/.bin/deno");
const main = join(root, "src/cli/main.ts");

const scratch = mkdtempSync(join(tmpdir(), "strand-startup-"));
let exe = values.exe;
if (only.has("exe") && exe === undefined) {
  exe = join(scratch, "strand");
  const b = spawnSync(bunBin, [join(root, "build/build.ts"), "--outfile", exe], { cwd: root, encoding: "utf8" });
  if (b.status !== 0) throw new Error(`build failed:\n${b.stdout}${b.stderr}`);
  console.log(b.stdout.trim().split("\n")[0]);
}

/** The strand command line per variant. */
const strandCmd = {
  exe: () => [exe, []],
  base: () => [values.base, []],
  bun: () => [bunBin, [main]],
  deno: () => [denoBin, ["run", "-A", main]],
};
const variants = [...(values.base === undefined ? [] : ["base"]), ...[...only].filter((v) => v in strandCmd)];

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = srv.address().port;
      srv.close(() => resolve(port));
    });
  });
}

function tryConnect(port) {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: "127.0.0.1" });
    s.once("connect", () => (s.destroy(), resolve(true)));
    s.once("error", () => (s.destroy(), resolve(false)));
  });
}

/** ms from spawn until `cmd args` exits (must exit 0). */
function timeExit(cmd, args) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`${cmd} ${args.join(" ")} exited ${code}: ${err}`))));
  });
}

/**
 * CPU ms the process has used, all threads (/proc/PID/task/TID/schedstat, ns): on a loaded shared
 * machine this moves far less than wall time does.
 */
function cpuMs(pid) {
  let ns = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
  } catch {
    return NaN; // not Linux, or a thread ended while being read
  }
  return ns / 1e6;
}

/** ms from spawn until a fresh broker's Kafka port accepts a connection; then SIGTERM and wait. */
async function timeListen(variant) {
  const dir = mkdtempSync(join(scratch, "logs-"));
  const port = await freePort();
  const [cmd, pre] = strandCmd[variant]();
  const args = [...pre, "serve", "--override", `log.dirs=${dir}`, "--override", `listeners=PLAINTEXT://127.0.0.1:${port}`,
    "--override", "admin.listeners=http://127.0.0.1:0", "--log-level", "warn"];
  const t0 = performance.now();
  const child = spawn(cmd, args, { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  let exited = null;
  const exit = new Promise((res) => child.on("exit", (code) => res((exited = code))));
  let ms = null;
  while (exited === null && performance.now() - t0 < 20_000) {
    if (await tryConnect(port)) {
      ms = performance.now() - t0;
      add(`${variant}: serve, CPU ms at accept`, cpuMs(child.pid));
      break;
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  child.kill("SIGTERM");
  const code = await exit;
  rmSync(dir, { recursive: true, force: true });
  if (ms === null) throw new Error(`${variant}: never listened (exit ${code}): ${err}`);
  return ms;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const rows = new Map();
const add = (label, ms) => (rows.get(label) ?? rows.set(label, []).get(label)).push(ms);
try {
  for (let i = 0; i < runs; i++) {
    add("baseline: /bin/true", await timeExit("/bin/true", []));
    add("baseline: bun -e 0", await timeExit(bunBin, ["-e", "0"]));
    add("baseline: deno eval 0", await timeExit(denoBin, ["eval", "0"]));
    for (const v of variants) {
      const [cmd, pre] = strandCmd[v]();
      add(`${v}: --version exits`, await timeExit(cmd, [...pre, "--version"]));
      add(`${v}: serve, port accepts`, await timeListen(v));
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

console.log(`\nms from spawn, ${runs} runs each (load average ${(await import("node:os")).loadavg().map((l) => l.toFixed(2)).join(" ")})`);
console.log("".padEnd(34) + "median".padStart(9) + "min".padStart(9) + "max".padStart(9));
for (const [label, xs] of rows) {
  const f = (x) => x.toFixed(1).padStart(9);
  console.log(label.padEnd(34) + f(median(xs)) + f(Math.min(...xs)) + f(Math.max(...xs)));
}
console.log("RESULT " + JSON.stringify(Object.fromEntries([...rows].map(([k, xs]) => [k, Math.round(median(xs) * 10) / 10]))));
