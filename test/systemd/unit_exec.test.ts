// The release binary started the way systemd would start it from the units systemd/install.sh
// lays out: install.sh --root <tmp> installs the binary, the configuration and the units (once as
// strand.service across two disks, once as strand@1.service with --per-disk); the test reads the
// installed unit (drop-ins merged), expands its specifiers (%i), re-roots the absolute paths of its
// ExecStart under <tmp>, and runs exactly that command line in the unit's environment (Environment=,
// EnvironmentFile=, WorkingDirectory= (default /), UMask=, LimitNOFILE=; User= is not applied: the
// tests run as root). It then waits for /v1/status/ready, round-trips records with kcat, sends
// KillSignal= and expects exit status 0 within TimeoutStopSec=, and finds the records again after
// starting the same command line a second time.
//
// Ports and disks come from install.sh's own flags (--listeners, --admin-listeners, --disks), as a
// user would pass them; nothing installed is edited afterwards. install.sh writes log.dirs as the
// target host sees them (a --disks path, not prefixed by --root), so each disk here is a temporary
// directory D and the root holds <root>D as a symlink to D, the way a disk mounted at D would look
// from inside the installed tree: install.sh creates D/strand through it, and the broker, reading
// log.dirs=D/strand from the installed configuration, writes to that same directory.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { run, skipUnless } from "../helpers/tools.ts";

const repo = new URL("../../", import.meta.url).pathname;
const bun = join(repo, "node_modules/.bin/bun");
const install = join(repo, "systemd/install.sh");
const skip = skipUnless("kcat");
// Not test/helpers/broker.ts's tempDir: that module imports the broker's sources, and this test
// needs none of them (it drives the built binary).
const tempDir = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));

// ---------------------------------------------------------------------------------------------
// The release binary: dist/strand when it is newer than everything it is built from, else a fresh
// build (as test/e2e/executable.test.ts does), made once for this file.

/** Newest modification time (ms) of the files under path (a file or a directory). */
function newestMs(path: string): number {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs; // a deleted file shows as its directory's change
  for (const name of readdirSync(path)) newest = Math.max(newest, newestMs(join(path, name)));
  return newest;
}

function distIsFresh(exe: string): boolean {
  if (!existsSync(exe)) return false;
  const inputs = ["src", "build", "package.json", "node_modules/.package-lock.json"].map((p) => newestMs(join(repo, p)));
  return statSync(exe).mtimeMs > Math.max(...inputs);
}

let buildDir: string | null = null;
let binary: Promise<string> | null = null;
function releaseBinary(): Promise<string> {
  binary ??= (async () => {
    const dist = join(repo, "dist/strand");
    if (distIsFresh(dist)) return dist;
    buildDir = tempDir("strand-unit-exec-build-");
    const exe = join(buildDir, "strand");
    const r = await run(bun, [join(repo, "build/build.ts"), "--outfile", exe], { timeoutMs: 300_000 });
    assert.equal(r.code, 0, `build failed: ${r.stdout}${r.stderr}`);
    return exe;
  })();
  return binary;
}
after(() => {
  if (buildDir !== null) rmSync(buildDir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// Reading an installed unit as systemd would: the unit file (a template's for an instance), then
// its drop-ins in file-name order (an instance's drop-in replacing the template's of the same
// name); an empty assignment resets a list setting.

type Settings = Map<string, string[]>;

function parseUnitFile(text: string, into: Settings): void {
  let section = "";
  const lines = text.replace(/\\\n/g, " ").split("\n");
  for (const raw of lines) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const s = line.match(/^\[(.+)\]$/);
    if (s) {
      section = s[1];
      continue;
    }
    const eq = line.indexOf("=");
    assert.ok(eq > 0, `not a unit file line: ${line}`);
    const key = `${section}.${line.slice(0, eq).trim()}`;
    const value = line.slice(eq + 1).trim();
    if (value === "") into.set(key, []);
    else into.set(key, [...(into.get(key) ?? []), value]);
  }
}

interface UnitName {
  name: string; // strand@1.service
  prefix: string; // strand
  instance: string; // 1 ("" for a plain unit)
}

function unitName(name: string): UnitName {
  const m = name.match(/^([^@]+)@([^.]*)\.service$/);
  if (m) return { name, prefix: m[1], instance: m[2] };
  return { name, prefix: name.replace(/\.service$/, ""), instance: "" };
}

function readUnit(unitsDir: string, u: UnitName): Settings {
  const template = u.instance === "" ? u.name : `${u.prefix}@.service`;
  const main = existsSync(join(unitsDir, u.name)) ? u.name : template;
  const settings: Settings = new Map();
  parseUnitFile(readFileSync(join(unitsDir, main), "utf8"), settings);
  const dropIns = new Map<string, string>();
  for (const d of new Set([`${template}.d`, `${u.name}.d`])) {
    const dir = join(unitsDir, d);
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)) if (f.endsWith(".conf")) dropIns.set(f, join(dir, f));
  }
  for (const f of [...dropIns.keys()].sort()) parseUnitFile(readFileSync(dropIns.get(f)!, "utf8"), settings);
  return settings;
}

/** systemd's specifiers this test can stand for; any other one fails the test rather than guess. */
function specifiers(s: string, u: UnitName): string {
  return s.replace(/%(.)/g, (_, c: string) => {
    switch (c) {
      case "i":
      case "I":
        return u.instance;
      case "n":
        return u.name;
      case "N":
        return u.name.replace(/\.service$/, "");
      case "p":
      case "P":
        return u.prefix;
      case "%":
        return "%";
      default:
        throw new Error(`unit ${u.name}: specifier %${c} is not handled by this test`);
    }
  });
}

/** Splits a unit value into words: whitespace-separated, "double" and 'single' quotes, \ escapes. */
function words(value: string): string[] {
  const out: string[] = [];
  let cur = "";
  let inWord = false;
  let quote: string | null = null;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === "\\" && i + 1 < value.length) {
      cur += value[++i];
      inWord = true;
    } else if (quote !== null) {
      if (c === quote) quote = null;
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) out.push(cur);
      cur = "";
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  assert.equal(quote, null, `unbalanced quote in: ${value}`);
  if (inWord) out.push(cur);
  return out;
}

/** A time span as systemd writes it ("120", "90s", "2min", "1min 30s", "500ms"), in ms. */
function timeSpanMs(value: string): number {
  const units: Record<string, number> = { "": 1000, s: 1000, sec: 1000, ms: 1, m: 60_000, min: 60_000, h: 3_600_000 };
  let total = 0;
  for (const part of value.trim().split(/\s+/)) {
    const m = part.match(/^(\d+(?:\.\d+)?)([a-z]*)$/);
    assert.ok(m && m[2] in units, `time span not understood: ${value}`);
    total += Number(m[1]) * units[m[2]];
  }
  return total;
}

/** KEY=VALUE lines of an EnvironmentFile= (comments and blank lines skipped, quotes removed). */
function environmentFile(text: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const eq = line.indexOf("=");
    assert.ok(eq > 0, `not an environment line: ${line}`);
    const v = line.slice(eq + 1).trim();
    out.push([line.slice(0, eq).trim(), /^(["']).*\1$/.test(v) ? v.slice(1, -1) : v]);
  }
  return out;
}

/** How the unit would run its main process, with absolute paths moved under root. */
interface ExecPlan {
  execStart: string; // as installed, specifiers expanded
  argv: string[]; // re-rooted
  cwd: string;
  env: Record<string, string>;
  umask: string | null;
  nofile: string | null;
  killSignal: NodeJS.Signals;
  timeoutStopMs: number;
  readWritePaths: string[]; // host paths, as the unit names them
}

function last(s: Settings, key: string): string | null {
  const v = s.get(key);
  return v && v.length > 0 ? v[v.length - 1] : null;
}

function execPlan(root: string, unit: string): ExecPlan {
  const u = unitName(unit);
  const s = readUnit(join(root, "etc/systemd/system"), u);
  const exec = s.get("Service.ExecStart") ?? [];
  assert.equal(exec.length, 1, `${unit}: one ExecStart= expected, found ${JSON.stringify(exec)}`);
  assert.equal(last(s, "Service.Type") ?? "simple", "simple", `${unit}: this test runs Type=simple units`);
  const execStart = specifiers(exec[0], u);
  assert.match(execStart, /^\//, `${unit}: ExecStart= with a prefix (-@:+!) or a relative path: ${execStart}`);

  // The environment systemd gives a service whose User= is the strand user install.sh creates
  // (home /nonexistent, shell nologin), plus the unit's Environment= and EnvironmentFile=.
  const env: Record<string, string> = {
    PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    HOME: "/nonexistent",
    USER: "strand",
    LOGNAME: "strand",
    SHELL: "/usr/sbin/nologin",
    INVOCATION_ID: randomBytes(16).toString("hex"),
  };
  for (const e of s.get("Service.Environment") ?? []) {
    for (const w of words(specifiers(e, u))) {
      const eq = w.indexOf("=");
      assert.ok(eq > 0, `${unit}: Environment= word without '=': ${w}`);
      env[w.slice(0, eq)] = w.slice(eq + 1);
    }
  }
  for (const f of s.get("Service.EnvironmentFile") ?? []) {
    const path = specifiers(f, u);
    const optional = path.startsWith("-");
    const file = join(root, optional ? path.slice(1) : path);
    if (!existsSync(file)) {
      assert.ok(optional, `${unit}: EnvironmentFile=${path} is not installed`);
      continue;
    }
    for (const [k, v] of environmentFile(readFileSync(file, "utf8"))) env[k] = v;
  }

  // $VAR and ${VAR} in ExecStart= come from that environment; then absolute paths move under root.
  const expanded = words(execStart).flatMap((w) => {
    const whole = w.match(/^\$([A-Za-z_][A-Za-z0-9_]*)$/);
    if (whole) return (env[whole[1]] ?? "").split(/\s+/).filter((x) => x !== "");
    return [w.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, k: string) => env[k] ?? "").replace(/\$\$/g, "$")];
  });
  const reroot = (w: string) => {
    if (w.startsWith("/")) return join(root, w);
    const opt = w.match(/^(-[^=]*=)(\/.*)$/);
    return opt ? opt[1] + join(root, opt[2]) : w;
  };
  const argv = expanded.map(reroot);

  let wd = last(s, "Service.WorkingDirectory") ?? "/";
  wd = specifiers(wd.replace(/^-/, ""), u);
  assert.notEqual(wd, "~", `${unit}: WorkingDirectory=~ would be the strand user's home`);
  const signal = last(s, "Service.KillSignal") ?? "SIGTERM";
  const rw = (s.get("Service.ReadWritePaths") ?? []).flatMap((v) => words(specifiers(v, u))).map((p) => p.replace(/^[-+]+/, ""));
  return {
    execStart,
    argv,
    cwd: join(root, wd),
    env,
    umask: last(s, "Service.UMask"),
    nofile: last(s, "Service.LimitNOFILE"),
    killSignal: (signal.startsWith("SIG") ? signal : `SIG${signal}`) as NodeJS.Signals,
    timeoutStopMs: timeSpanMs(last(s, "Service.TimeoutStopSec") ?? "90"),
    readWritePaths: rw,
  };
}

// ---------------------------------------------------------------------------------------------
// Running the plan.

interface Running {
  child: ChildProcess;
  exited: Promise<number | null>;
  /** The exit status once the process has exited; undefined while it runs. */
  status: () => number | null | undefined;
  output: () => string;
}

/** After a failed check: the process goes (if it has not gone already), and the failure stands. */
function kill(r: Running): void {
  if (r.status() === undefined) process.kill(r.child.pid!, "SIGKILL");
}

/**
 * Starts the plan's command line. A /bin/sh applies UMask= and LimitNOFILE= (best effort: a
 * container may cap the open-files limit) and then execs the command line, so the process the
 * signals go to is the broker itself, as it is systemd's main PID.
 */
function start(plan: ExecPlan): Running {
  const script = 'if [ -n "$1" ]; then umask "$1"; fi; if [ -n "$2" ]; then ulimit -n "$2" 2>/dev/null || true; fi; shift 2; exec "$@"';
  const nofile = plan.nofile === "infinity" ? "unlimited" : (plan.nofile ?? "").split(":").pop()!;
  const child = spawn("/bin/sh", ["-c", script, "sh", plan.umask ?? "", nofile, ...plan.argv], {
    cwd: plan.cwd,
    env: plan.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  let status: number | null | undefined;
  const exited = new Promise<number | null>((res) => child.on("exit", (code) => res((status = code))));
  return { child, exited, status: () => status, output: () => out };
}

/** Polls GET /v1/status/ready until 200; fails early if the process exits. */
async function waitReady(r: Running, adminUrl: string, timeoutMs: number): Promise<{ broker_id: number }> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    if (r.status() !== undefined) throw new Error(`the broker exited (${r.status()}) before it was ready:\n${r.output()}`);
    try {
      const res = await fetch(`${adminUrl}/v1/status/ready`);
      const body = await res.text();
      if (res.status === 200) return JSON.parse(body);
      last = `${res.status} ${body}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`not ready after ${timeoutMs} ms (last answer: ${last}); broker output:\n${r.output()}`);
}

/** Sends the unit's KillSignal= and waits TimeoutStopSec= for the exit, as `systemctl stop` does. */
async function stop(r: Running, plan: ExecPlan): Promise<{ code: number | null; ms: number }> {
  const t0 = Date.now();
  // process.kill, not child.kill: Deno's child_process reports the signal it sent instead of the
  // exit status when it did the killing itself.
  process.kill(r.child.pid!, plan.killSignal);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((res) => (timer = setTimeout(() => res("timeout"), plan.timeoutStopMs)));
  const code = await Promise.race([r.exited, timedOut]);
  clearTimeout(timer);
  if (code === "timeout") {
    process.kill(r.child.pid!, "SIGKILL"); // systemd's FinalKillSignal
    await r.exited;
    assert.fail(`no exit within TimeoutStopSec (${plan.timeoutStopMs} ms) of ${plan.killSignal}; output:\n${r.output()}`);
  }
  return { code, ms: Date.now() - t0 };
}

/** A port the kernel just handed out and released. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

function props(file: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const t = line.trim();
    if (t === "" || t.startsWith("#")) continue;
    const i = t.indexOf("=");
    m.set(t.slice(0, i), t.slice(i + 1));
  }
  return m;
}

/** A temporary disk D, seen under root at the same path (see the file's opening comment). */
function disk(dir: string, root: string, name: string): string {
  const d = join(dir, "disks", name);
  mkdirSync(d, { recursive: true });
  mkdirSync(dirname(join(root, d)), { recursive: true });
  symlinkSync(d, join(root, d));
  return d;
}

async function installSh(args: string[]): Promise<string> {
  const r = await run("bash", [install, ...args], { timeoutMs: 60_000 });
  assert.equal(r.code, 0, `install.sh ${args.join(" ")} exited ${r.code}:\n${r.stdout}${r.stderr}`);
  return r.stdout.toString();
}

/**
 * The whole run for one unit: check the unit lets the broker write its log dirs, start, produce and
 * consume, stop, start again and find the records, stop. Returns the ExecStart= line exercised.
 */
async function exercise(root: string, unit: string, config: string, adminUrl: string, port: number, topic: string, brokerId: number | null): Promise<string> {
  const plan = execPlan(root, unit);
  assert.ok(existsSync(plan.argv[0]), `ExecStart's binary ${plan.argv[0]} is not installed`);
  assert.ok(plan.argv.includes(join(root, config)), `ExecStart (${plan.execStart}) does not name /${config}`);

  // ProtectSystem=strict leaves only ReadWritePaths= writable: every log dir must be under one.
  const logDirs = props(join(root, config)).get("log.dirs")!.split(",");
  for (const d of logDirs) {
    assert.ok(plan.readWritePaths.some((p) => d === p || d.startsWith(p.endsWith("/") ? p : `${p}/`)),
      `${unit}: log dir ${d} is not under ReadWritePaths= ${plan.readWritePaths.join(" ")}`);
  }
  const installed = readFileSync(join(root, config));

  let input = "";
  for (let i = 0; i < 20_000; i++) input += `${topic}-${i}\n`;
  const bootstrap = `127.0.0.1:${port}`;

  let r = start(plan);
  let ready;
  try {
    ready = await waitReady(r, adminUrl, 30_000);
    if (brokerId !== null) assert.equal(ready.broker_id, brokerId, `broker.id from ${config}`);
    const p = await run("kcat", ["-b", bootstrap, "-P", "-t", topic], { input, timeoutMs: 60_000 });
    assert.equal(p.code, 0, p.stderr);
    const c = await run("kcat", ["-b", bootstrap, "-C", "-t", topic, "-e", "-q"], { timeoutMs: 60_000 });
    assert.equal(c.code, 0, c.stderr);
    assert.equal(c.stdout.toString(), input, "consumed what was produced");
  } catch (e) {
    kill(r);
    throw e;
  }
  const first = await stop(r, plan);
  assert.equal(first.code, 0, `exit status after ${plan.killSignal}; output:\n${r.output()}`);
  console.log(`${unit}: ${plan.killSignal} -> exit 0 in ${first.ms} ms (TimeoutStopSec ${plan.timeoutStopMs} ms)`);
  const lines = r.output().trim().split("\n");
  for (const l of lines) assert.doesNotThrow(() => JSON.parse(l), `log line is JSON (journald keeps stdout): ${l}`);
  // Every key install.sh writes is one the binary knows.
  const unknown = lines.filter((l) => l.includes("unknown config key"));
  assert.deepEqual(unknown, [], `/${config} has keys the binary does not know`);
  // The records went where the installed configuration says.
  assert.ok(logDirs.some((d) => existsSync(join(d, `${topic}-0`, "00000000000000000000.log"))),
    `no ${topic}-0 segment in log.dirs ${logDirs.join(",")}`);

  r = start(plan);
  try {
    const again = await waitReady(r, adminUrl, 30_000);
    assert.equal(again.broker_id, ready.broker_id, "the same broker id after a restart");
    const c = await run("kcat", ["-b", bootstrap, "-C", "-t", topic, "-e", "-q"], { timeoutMs: 60_000 });
    assert.equal(c.code, 0, c.stderr);
    assert.equal(c.stdout.toString(), input, "the records are still there after a restart");
  } catch (e) {
    kill(r);
    throw e;
  }
  const second = await stop(r, plan);
  assert.equal(second.code, 0, `exit status after ${plan.killSignal}; output:\n${r.output()}`);
  assert.deepEqual(readFileSync(join(root, config)), installed, `the broker left /${config} as installed`);
  return plan.execStart;
}

test("unit exec: strand.service as installed (two disks) serves, stops on SIGTERM with 0, keeps data", { skip }, async () => {
  const dir = tempDir("strand-unit-exec-");
  try {
    const exe = await releaseBinary();
    const root = join(dir, "root");
    const disks = [disk(dir, root, "a"), disk(dir, root, "b")];
    const port = await freePort();
    const adminPort = await freePort();
    await installSh(["--root", root, "--binary", exe, "--disks", disks.join(" "),
      "--listeners", `PLAINTEXT://127.0.0.1:${port}`, "--admin-listeners", `http://127.0.0.1:${adminPort}`]);
    assert.equal(props(join(root, "etc/strand/server.properties")).get("log.dirs"), disks.map((d) => `${d}/strand`).join(","));
    const line = await exercise(root, "strand.service", "etc/strand/server.properties", `http://127.0.0.1:${adminPort}`, port, "unit-single", null);
    assert.equal(line, "/usr/local/bin/strand serve --config /etc/strand/server.properties");
    console.log(`strand.service ExecStart=${line}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("unit exec: strand@1.service as installed by --per-disk serves, stops on SIGTERM with 0, keeps data", { skip }, async () => {
  const dir = tempDir("strand-unit-exec-");
  try {
    const exe = await releaseBinary();
    const root = join(dir, "root");
    const d = disk(dir, root, "a");
    const port = await freePort();
    const adminPort = await freePort();
    // One disk, so the literal ports (no {port}) belong to its one instance.
    const out = await installSh(["--root", root, "--binary", exe, "--per-disk", "--disks", d, "--broker-id", "100",
      "--listeners", `PLAINTEXT://127.0.0.1:${port}`, "--admin-listeners", `http://127.0.0.1:${adminPort}`]);
    assert.match(out, /would run: systemctl enable strand@1\.service$/m);
    assert.equal(props(join(root, "etc/strand/server-1.properties")).get("log.dirs"), `${d}/strand`);
    const line = await exercise(root, "strand@1.service", "etc/strand/server-1.properties", `http://127.0.0.1:${adminPort}`, port, "unit-per-disk", 101);
    assert.equal(line, "/usr/local/bin/strand serve --config /etc/strand/server-1.properties");
    console.log(`strand@1.service ExecStart=${line}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
