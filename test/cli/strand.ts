// Runs the strand CLI as a user would, as a child process of the runtime running the test:
// `bun src/cli/main.ts ARGS` under Bun, `deno run -A src/cli/main.ts ARGS` under Deno.
import { join } from "node:path";
import { run } from "../helpers/tools.ts";

const root = new URL("../../", import.meta.url).pathname;
const g = globalThis as { Bun?: unknown; Deno?: unknown };
export const strandCommand: [string, string[]] = g.Bun !== undefined
  ? [join(root, "node_modules/.bin/bun"), [join(root, "src/cli/main.ts")]]
  : [join(root, "node_modules/.bin/deno"), ["run", "-A", join(root, "src/cli/main.ts")]];

export interface StrandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `strand ARGS` (stdin from `input`), bounded in time; never throws for a non-zero exit. */
export async function strand(args: string[], opts: { input?: string | Buffer; timeoutMs?: number } = {}): Promise<StrandResult> {
  const r = await run(strandCommand[0], [...strandCommand[1], ...args], { timeoutMs: opts.timeoutMs ?? 60_000, input: opts.input });
  return { code: r.code, stdout: r.stdout.toString(), stderr: r.stderr };
}

/** `strand ARGS` that must exit 0; its stdout. */
export async function strandOk(args: string[], opts: { input?: string | Buffer; timeoutMs?: number } = {}): Promise<string> {
  const r = await strand(args, opts);
  if (r.code !== 0) throw new Error(`strand ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

/** Lines "1".."n" with a prefix, each ending in \n. */
export function lines(n: number, prefix = ""): string {
  let s = "";
  for (let i = 1; i <= n; i++) s += `${prefix}${i}\n`;
  return s;
}
