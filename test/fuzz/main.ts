// `npm run fuzz -- [--frames N] [--seed S] [--runtime bun|deno] [--connections C] [--session K]
// [--control-frames N]`: the wire fuzzer outside the test suite, for long runs on a developer's
// machine (`--frames 5000000`) and for replaying a failure the test printed (`--seed S --session K`
// sends session K's frames again; `--seed S --frames N` the whole run). Started by run.mjs under
// the chosen runtime; the broker process runs under the same one. Exits 1 when a check failed.
import process from "node:process";
import { parseArgs } from "node:util";
import { currentRuntime, runFuzz, summarize } from "./driver.ts";
import { failures } from "./checks.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    frames: { type: "string", default: "100000" },
    seed: { type: "string" },
    runtime: { type: "string" },
    connections: { type: "string" },
    session: { type: "string" },
    "control-frames": { type: "string" },
  },
});
const seed = values.seed !== undefined ? Number(values.seed) >>> 0 : crypto.getRandomValues(new Uint32Array(1))[0];
const frames = Number(values.frames);
console.log(`fuzz: seed ${seed}, ${frames} frames, runtime ${currentRuntime} (replay: npm run fuzz -- --runtime ${currentRuntime} --seed ${seed} --frames ${frames})`);
const r = await runFuzz({
  frames,
  seed,
  runtime: currentRuntime,
  connections: values.connections !== undefined ? Number(values.connections) : undefined,
  onlySession: values.session !== undefined ? Number(values.session) : undefined,
  controlFrames: values["control-frames"] !== undefined ? Number(values["control-frames"]) : undefined,
  log: (l) => console.log(l),
});
console.log(summarize(r));
const failed = failures(r, values.session !== undefined ? 0 : frames);
for (const f of failed) console.log(`FAILED: ${f}`);
console.log(failed.length === 0 ? "fuzz: all checks passed" : `fuzz: ${failed.length} checks failed (seed ${seed})`);
process.exit(failed.length === 0 ? 0 : 1);
