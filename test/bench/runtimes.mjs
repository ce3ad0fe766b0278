// The runner the TypeScript benches share: a bench script (`*_bench.ts`) prints its figures and
// one `RESULT {json}` line; this runs it under Bun and/or Deno (`--runtime bun|deno|both`, the
// other arguments passed on) and returns each runtime's RESULT, for a summary table of both.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** Runs test/bench/<name> under each runtime asked for on the command line; the RESULTs in order. */
export async function runTsBench(name, argv = process.argv.slice(2)) {
  const at = argv.indexOf("--runtime");
  const which = at >= 0 ? argv[at + 1] : "both";
  const pass = at >= 0 ? [...argv.slice(0, at), ...argv.slice(at + 2)] : argv;
  const runtimes = which === "both" ? ["bun", "deno"] : [which];
  const results = [];
  for (const rt of runtimes) results.push(await runOne(rt, join(root, "test/bench", name), pass));
  return results;
}

function runOne(runtime, bench, pass) {
  const bin = join(root, "node_modules/.bin", runtime);
  const argv = runtime === "bun" ? [bench, ...pass] : ["run", "-A", bench, ...pass];
  return new Promise((resolve, reject) => {
    const child = spawn(bin, argv, { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
    let result = null;
    let buffered = "";
    child.stdout.on("data", (d) => {
      buffered += d.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop();
      for (const line of lines) {
        if (line.startsWith("RESULT ")) result = JSON.parse(line.slice(7));
        else console.log(line);
      }
    });
    child.on("error", reject);
    child.on("close", (code) => (code === 0 && result !== null ? resolve(result) : reject(new Error(`${runtime} bench exited ${code}`))));
  });
}
