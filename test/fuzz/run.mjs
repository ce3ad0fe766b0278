#!/usr/bin/env node
// `npm run fuzz -- [--runtime bun|deno] [options]`: runs test/fuzz/main.ts under the chosen runtime
// (bun by default); every other option is passed on (see main.ts).
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const args = process.argv.slice(2);
let runtime = "bun";
const i = args.findIndex((a) => a === "--runtime" || a.startsWith("--runtime="));
if (i >= 0) {
  runtime = args[i].includes("=") ? args[i].split("=")[1] : args[i + 1];
  args.splice(i, args[i].includes("=") ? 1 : 2);
}
if (runtime !== "bun" && runtime !== "deno") {
  console.error(`--runtime takes bun or deno, got "${runtime}"`);
  process.exit(2);
}
const main = join(root, "test/fuzz/main.ts");
const cmd = runtime === "bun"
  ? [join(root, "node_modules/.bin/bun"), [main, ...args]]
  : [join(root, "node_modules/.bin/deno"), ["run", "-A", "--no-check", main, ...args]];
const r = spawnSync(cmd[0], cmd[1], { cwd: root, stdio: "inherit" });
process.exit(r.status ?? 1);
