// A broker as a separate process (`strand serve` under the runtime running the test), for tests
// that look at what only a process shows: its stdout (pino JSON lines, every level), its resident
// memory (/proc/<pid>/status VmRSS), its survival. Always stop() it; stop() removes its log dir.
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

export interface BrokerProcess {
  proc: ChildProcess;
  port: number;
  /** Everything the broker wrote to stdout and stderr so far. */
  output(): string;
  /** The parsed pino lines of stdout so far (lines that are not JSON are skipped). */
  logLines(): { level: number; msg: string; [k: string]: unknown }[];
  /** Resident set size of the broker process, in bytes (VmRSS). */
  rssBytes(): number;
  /** Peak resident set size so far, in bytes (VmHWM). */
  peakRssBytes(): number;
  alive(): boolean;
  /** SIGTERM, wait for the exit (SIGKILL after 30 s), remove the log dir. */
  stop(): Promise<void>;
}

function statusKb(pid: number, key: string): number {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (m === null) throw new Error(`no ${key} in /proc/${pid}/status`);
  return Number(m[1]) * 1024;
}

/** Starts `strand serve` with these overrides on a fresh dir; resolves once "broker started". */
export function spawnBrokerProcess(overrides: Record<string, string> = {}): Promise<BrokerProcess> {
  const dir = tempDir("strand-proc-");
  const all: Record<string, string> = {
    "broker.id": "0",
    "log.dirs": dir,
    "listeners": "PLAINTEXT://127.0.0.1:0",
    "admin.listeners": "", // not the default 9644: tests run side by side
    ...overrides,
  };
  const args = [...command[1], ...Object.entries(all).flatMap(([k, v]) => ["--override", `${k}=${v}`])];
  const proc = spawn(command[0], args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let exited = false;
  const exit = new Promise<void>((resolve) => proc.on("exit", () => ((exited = true), resolve())));
  const stop = async () => {
    if (!exited) {
      process.kill(proc.pid!, "SIGTERM");
      const timer = setTimeout(() => !exited && process.kill(proc.pid!, "SIGKILL"), 30_000);
      await exit;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
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
          logLines: () =>
            out.split("\n").flatMap((l) => {
              try {
                const j = JSON.parse(l);
                return typeof j === "object" && j !== null && typeof j.level === "number" ? [j] : [];
              } catch {
                return [];
              }
            }),
          rssBytes: () => statusKb(proc.pid!, "VmRSS"),
          peakRssBytes: () => statusKb(proc.pid!, "VmHWM"),
          alive: () => !exited,
          stop,
        });
      }
    };
    proc.stdout!.on("data", onData);
    proc.stderr!.on("data", onData);
    proc.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`broker exited with ${code} before starting:\n${out.slice(-4000)}`));
    });
  });
}
