// Builds the single executable `dist/strand` with `bun build --compile` (the Bun runtime and all of
// strand in one file), and the release tarball `dist/strand-<version>-linux-<arch>.tar.gz` holding
// `strand-<version>/bin/strand`, `strand-<version>/systemd/*` and `strand-<version>/README.md`.
// Run with `npm run build` (bun build/build.ts). Options:
//   --target bun-linux-x64-baseline | bun-linux-x64 | bun-linux-arm64 | ...
//                                                    Bun's target names; default
//                                                    bun-linux-x64-baseline (no AVX2 needed)
//   --outfile PATH                                   default dist/strand; the tarball is written
//                                                    next to it
// `strand --version` prints `strand <version> (<commit>)`: the commit is `git rev-parse --short
// HEAD` (with `-dirty` when the tree has uncommitted changes, "unknown" without git), passed in
// with `bun build --define STRAND_BUILD_COMMIT=...` (see src/cli/version.ts).
// The Deno path (`deno task build`, i.e. `deno compile`) needs Deno's runtime archive (denort);
// where it cannot be downloaded, point DENORT_BIN at a local denort binary. See README.
import { parseArgs } from "node:util";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    target: { type: "string", default: "bun-linux-x64-baseline" },
    outfile: { type: "string", default: "dist/strand" },
  },
});
const root = new URL("..", import.meta.url).pathname;

const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const version: string = pkg.version;
const versionTs = readFileSync(join(root, "src/cli/version.ts"), "utf8");
if (!versionTs.includes(`"${version}"`)) {
  console.error(`src/cli/version.ts does not say version ${version} (package.json); update it`);
  process.exit(1);
}

/** Short commit of HEAD, `-dirty` with uncommitted changes, "unknown" without git or a repo. */
function gitCommit(): string {
  try {
    const head = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: root, stderr: "ignore" });
    if (head.exitCode !== 0) return "unknown";
    const status = Bun.spawnSync(["git", "status", "--porcelain"], { cwd: root, stderr: "ignore" });
    const dirty = status.exitCode === 0 && status.stdout.toString().trim() !== "";
    return head.stdout.toString().trim() + (dirty ? "-dirty" : "");
  } catch {
    return "unknown"; // git not installed
  }
}

const commit = gitCommit();
const outfile = values.outfile!;
const target = values.target!;
// Start-up (issue 18: listening in under 150 ms from exec; npm run bench:startup): --bytecode
// embeds JavaScriptCore bytecode, so nothing is parsed at run time (ESM bytecode needs --compile and
// --format=esm); --splitting makes each `await import()` of main.ts (serve, each client tool) its
// own chunk, so `--version` evaluates none of them and a chunk's node: builtins (node:zlib, node:tls
// cost 30-50 ms of CPU each) load only with the command that needs them.
const args = [
  "build", "--compile", "--bytecode", "--format=esm", "--splitting", "--minify-syntax", join(root, "src/cli/main.ts"),
  "--outfile", outfile, "--target", target, "--define", `STRAND_BUILD_COMMIT=${JSON.stringify(commit)}`,
];
const proc = Bun.spawnSync([process.execPath, ...args], { stdout: "inherit", stderr: "inherit" });
if (proc.exitCode !== 0) process.exit(proc.exitCode ?? 1);
const check = Bun.spawnSync([outfile, "--version"]);
console.log(`built ${outfile} (${target}): ${check.stdout.toString().trim()}`);

// The tarball: strand-<version>/{bin/strand, systemd/*, README.md}, next to the binary.
const arch = target.includes("arm64") ? "arm64" : "x64";
const os = target.includes("darwin") ? "darwin" : target.includes("windows") ? "windows" : "linux";
const top = `strand-${version}`;
const tarball = join(dirname(outfile), `${top}-${os}-${arch}.tar.gz`);
const stage = mkdtempSync(join(tmpdir(), "strand-release-"));
try {
  mkdirSync(join(stage, top, "bin"), { recursive: true });
  cpSync(outfile, join(stage, top, "bin", "strand"));
  cpSync(join(root, "systemd"), join(stage, top, "systemd"), { recursive: true });
  cpSync(join(root, "README.md"), join(stage, top, "README.md"));
  const tar = Bun.spawnSync(["tar", "-czf", tarball, "--owner=0", "--group=0", "-C", stage, top], {
    stdout: "inherit",
    stderr: "inherit",
  });
  if (tar.exitCode !== 0) process.exit(tar.exitCode ?? 1);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
console.log(`packed ${tarball}`);
