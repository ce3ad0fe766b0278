// Builds the single executable `dist/strand` with `bun build --compile` (the Bun runtime and all of
// strand in one file). Run with `npm run build` (bun build/build.ts). Options:
//   --target bun-linux-x64 | bun-linux-arm64 | ...   cross-compile (Bun's target names)
//   --outfile PATH                                   default dist/strand
// The Deno path (`deno task build`, i.e. `deno compile`) needs Deno's runtime archive (denort);
// where it cannot be downloaded, point DENORT_BIN at a local denort binary. See README.
import { parseArgs } from "node:util";
import { readFileSync } from "node:fs";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { target: { type: "string" }, outfile: { type: "string", default: "dist/strand" } },
});

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const versionTs = readFileSync(new URL("../src/cli/version.ts", import.meta.url), "utf8");
if (!versionTs.includes(`"${pkg.version}"`)) {
  console.error(`src/cli/version.ts does not say version ${pkg.version} (package.json); update it`);
  process.exit(1);
}

const args = ["build", "--compile", "--minify-syntax", "src/cli/main.ts", "--outfile", values.outfile!];
if (values.target) args.push("--target", values.target);
const proc = Bun.spawnSync([process.execPath, ...args], { stdout: "inherit", stderr: "inherit" });
if (proc.exitCode !== 0) process.exit(proc.exitCode ?? 1);
const check = Bun.spawnSync([values.outfile!, "--version"]);
console.log(`built ${values.outfile}: ${check.stdout.toString().trim()}`);
