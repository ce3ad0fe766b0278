// A real `strand serve` process (as test/fault/crash.test.ts starts one), for tests that need a
// crash (SIGKILL), a clean stop (SIGTERM) and a restart on the same log dir, or that must see
// whether the process survives. Runs under the runtime running the test: `bun src/cli/main.ts`
// under Bun, `deno run -A src/cli/main.ts` under Deno.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import process from "node:process";

const root = new URL("../../", import.meta.url).pathname;
const g = globalThis as { Bun?: unknown; Deno?: unknown };
const command: [string, string[]] = g.Bun !== undefined
  ? [join(root, "node_modules/.bin/bun"), ["src/cli/main.ts", "serve"]]
  : [join(root, "node_modules/.bin/deno"), ["run", "-A", "src/cli/main.ts", "serve"]];

export interface BrokerProcess {
  proc: ChildProcess;
  port: number;
  /** Everything the process wrote so far (stdout and stderr). */
  output: () => string;
  /** Its exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** Whether it has exited. */
  readonly hasExited: boolean;
  /** kill(2) by pid (see crash.test.ts: Deno's ChildProcess.kill() misreports a handled signal). */
  signal(sig: "SIGKILL" | "SIGTERM"): void;
}

/** Starts `strand serve` on dir and resolves once its "broker started" line names the port. */
export function spawnBrokerProcess(dir: string, overrides: Record<string, string> = {}): Promise<BrokerProcess> {
  const all = {
    "broker.id": "0",
    "log.dirs": dir,
    "listeners": "PLAINTEXT://127.0.0.1:0",
    "admin.listeners": "http://127.0.0.1:0",
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
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`broker did not start in 60 s:\n${out.slice(-4000)}`)), 60_000);
    const onData = (d: Uint8Array) => {
      out += new TextDecoder().decode(d);
      const m = /"ports":\[(\d+)\][^\n]*"msg":"broker started"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          proc,
          port: Number(m[1]),
          output: () => out,
          exited,
          get hasExited() {
            return hasExited;
          },
          signal: (sig) => process.kill(proc.pid!, sig),
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

/** Error-level (50+) pino lines in the output. */
export function errorLines(output: string): string[] {
  return output.split("\n").filter((l) => /"level":(5\d|6\d)/.test(l));
}
