// A broker as a separate process (`strand serve` under the runtime running the test), for tests
// that look at what only a process shows: its stdout (pino JSON lines, every level), its resident
// memory (/proc/<pid>/status VmRSS), its survival, a crash (SIGKILL), a clean stop (SIGTERM) and a
// restart on the same log dir. Runs `bun src/cli/main.ts` under Bun, `deno run -A src/cli/main.ts`
// under Deno. A broker started on a fresh temp dir removes it at stop(); a dir the test passes is
// the test's to keep (restarts) and remove.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { tempDir } from "./broker.ts";

const root = new URL("../../", import.meta.url).pathname;
const g = globalThis as { Bun?: unknown; Deno?: unknown };
const command: [string, string[]] = g.Bun !== undefined
  ? [join(root, "node_modules/.bin/bun"), ["src/cli/main.ts", "serve"]]
  : [join(root, "node_modules/.bin/deno"), ["run", "-A", "src/cli/main.ts", "serve"]];

export interface LogLine {
  level: number;
  msg: string;
  [k: string]: unknown;
}

export interface BrokerProcess {
  proc: ChildProcess;
  port: number;
  /** Everything the broker wrote to stdout and stderr so far. */
  output(): string;
  /** The parsed pino lines of stdout so far (lines that are not JSON are skipped). */
  logLines(): LogLine[];
  /** Resident set size of the broker process, in bytes (VmRSS). */
  rssBytes(): number;
  /** Peak resident set size so far, in bytes (VmHWM). */
  peakRssBytes(): number;
  /** Its exit code once it has exited (null when killed by a signal). */
  exited: Promise<number | null>;
  readonly hasExited: boolean;
  alive(): boolean;
  /** kill(2) by pid (see crash.test.ts: Deno's ChildProcess.kill() misreports a handled signal). */
  signal(sig: "SIGKILL" | "SIGTERM" | "SIGSTOP" | "SIGCONT"): void;
  /** SIGTERM, wait for the exit (SIGKILL after 30 s); removes the log dir when it made it. */
  stop(): Promise<void>;
}

function statusKb(pid: number, key: string): number {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (m === null) throw new Error(`no ${key} in /proc/${pid}/status`);
  return Number(m[1]) * 1024;
}

/** Error-level (50+) pino lines in a process's output. */
export function errorLines(output: string): string[] {
  return output.split("\n").filter((l) => /"level":(5\d|6\d)/.test(l));
}

function parseLogLines(out: string): LogLine[] {
  return out.split("\n").flatMap((l) => {
    try {
      const j = JSON.parse(l);
      return typeof j === "object" && j !== null && typeof j.level === "number" ? [j] : [];
    } catch {
      return [];
    }
  });
}

/** Starts `strand serve` with these overrides (on `dir`, or a fresh temp dir); resolves once "broker started". */
export function spawnBrokerProcess(overrides: Record<string, string> = {}, dir?: string): Promise<BrokerProcess> {
  const ownsDir = dir === undefined;
  const logDir = dir ?? tempDir("strand-proc-");
  const all: Record<string, string> = {
    "broker.id": "0",
    "log.dirs": logDir,
    "listeners": "PLAINTEXT://127.0.0.1:0",
    "admin.listeners": "", // not the default 9644: tests run side by side
    ...overrides,
  };
  const args = [...command[1], ...Object.entries(all).flatMap(([k, v]) => ["--override", `${k}=${v}`])];
  const proc = spawn(command[0], args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let hasExited = false;
  const exited = new Promise<number | null>((resolve) =>
    proc.on("exit", (code) => {
      hasExited = true;
      resolve(code);
    })
  );
  const signal = (sig: "SIGKILL" | "SIGTERM" | "SIGSTOP" | "SIGCONT") => process.kill(proc.pid!, sig);
  const stop = async () => {
    if (!hasExited) {
      signal("SIGTERM");
      const timer = setTimeout(() => !hasExited && signal("SIGKILL"), 30_000);
      await exited;
      clearTimeout(timer);
    }
    if (ownsDir) rmSync(logDir, { recursive: true, force: true });
  };
  let started = false;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`broker did not start in 60 s:\n${out.slice(-4000)}`));
    }, 60_000);
    const onData = (d: Uint8Array) => {
      out += new TextDecoder().decode(d);
      const m = /"ports":\[(\d+)\][^\n]*"msg":"broker started"/.exec(out);
      if (m && !started) {
        started = true;
        clearTimeout(timer);
        resolve({
          proc,
          port: Number(m[1]),
          output: () => out,
          logLines: () => parseLogLines(out),
          rssBytes: () => statusKb(proc.pid!, "VmRSS"),
          peakRssBytes: () => statusKb(proc.pid!, "VmHWM"),
          exited,
          get hasExited() {
            return hasExited;
          },
          alive: () => !hasExited,
          signal,
          stop,
        });
      }
    };
    proc.stdout!.on("data", onData);
    proc.stderr!.on("data", onData);
    proc.on("exit", (code) => {
      clearTimeout(timer);
      if (ownsDir) rmSync(logDir, { recursive: true, force: true });
      reject(new Error(`broker exited with ${code} before starting:\n${out.slice(-4000)}`));
    });
  });
}
