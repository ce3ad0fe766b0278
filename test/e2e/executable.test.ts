// The single executable: `bun build/build.ts` writes it, and it serves like `npm start`: kcat
// round-trips through it, SIGTERM stops it cleanly (exit 0, data kept), bad configuration stops
// start-up with a message naming the key. The build also writes the release tarball next to the
// binary, and `--version` names the commit it was built from.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { tempDir } from "../helpers/broker.ts";
import { run, skipUnless } from "../helpers/tools.ts";

const root = new URL("../../", import.meta.url).pathname;
const bun = join(root, "node_modules/.bin/bun");
const skip = skipUnless("kcat");

async function build(outDir: string): Promise<string> {
  const exe = join(outDir, "strand");
  const r = await run(bun, [join(root, "build/build.ts"), "--outfile", exe], { timeoutMs: 120_000 });
  assert.equal(r.code, 0, `build failed: ${r.stdout}${r.stderr}`);
  assert.ok(existsSync(exe));
  return exe;
}

/** A port the kernel just handed out and released: free, and outside the ephemeral range races. */
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

async function waitForPort(port: number, timeoutMs: number, output: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const r = await run("kcat", ["-b", `127.0.0.1:${port}`, "-L", "-m", "2"], { timeoutMs: 5000 });
    if (r.code === 0) return;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`nothing listening on ${port}; broker output:\n${output()}`);
}

test("executable: --version, --help, and a bad config value naming the key", async () => {
  const dir = tempDir();
  try {
    const exe = await build(dir);
    const v = await run(exe, ["--version"]);
    assert.match(v.stdout.toString(), /^strand \d+\.\d+\.\d+ \(([0-9a-f]{4,}(-dirty)?|unknown)\)\n$/);
    const h = await run(exe, ["--help"]);
    assert.match(h.stdout.toString(), /strand serve/);
    const bad = await run(exe, ["serve", "--override", "num.partitions=zero", "--override", `log.dirs=${dir}/logs`]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /num\.partitions/);
    const badListener = await run(exe, ["serve", "--override", "listeners=nonsense", "--override", `log.dirs=${dir}/logs`]);
    assert.equal(badListener.code, 2);
    assert.match(badListener.stderr, /listeners/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("executable: serves kcat, stops cleanly on SIGTERM, keeps data across restarts", { skip }, async () => {
  const dir = tempDir();
  const port = await freePort();
  const args = ["serve", "--override", `log.dirs=${dir}/logs`, "--override", `listeners=PLAINTEXT://127.0.0.1:${port}`, "--override", "some.unknown.key=1", "--override", "admin.listeners=http://127.0.0.1:0"];
  try {
    const exe = await build(dir);
    const start = () => {
      const child = spawn(exe, args, { stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (out += d));
      const exited = new Promise<number | null>((res) => child.on("exit", (code) => res(code)));
      return { child, exited, output: () => out };
    };
    let s = start();
    await waitForPort(port, 15_000, s.output);
    let input = "";
    for (let i = 0; i < 50_000; i++) input += `line-${i}\n`;
    const p = await run("kcat", ["-b", `127.0.0.1:${port}`, "-P", "-t", "exe"], { input, timeoutMs: 60_000 });
    assert.equal(p.code, 0, p.stderr);
    // process.kill, not child.kill: Deno's child_process reports the signal it sent instead of
    // the exit status when it did the killing itself.
    process.kill(s.child.pid!, "SIGTERM");
    assert.equal(await s.exited, 0, s.output());
    const lines = s.output().trim().split("\n");
    for (const l of lines) assert.doesNotThrow(() => JSON.parse(l), `log line is JSON: ${l}`);
    assert.ok(lines.some((l) => l.includes("some.unknown.key")), "unknown key is logged");
    s = start();
    await waitForPort(port, 15_000, s.output);
    const c = await run("kcat", ["-b", `127.0.0.1:${port}`, "-C", "-t", "exe", "-e", "-q"], { timeoutMs: 60_000 });
    assert.equal(c.stdout.toString(), input);
    process.kill(s.child.pid!, "SIGTERM");
    assert.equal(await s.exited, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("executable: --version names the package version and the git commit; the tarball's layout", async () => {
  const dir = tempDir();
  try {
    const exe = await build(dir);
    const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
    const v = await run(exe, ["--version"]);
    const m = v.stdout.toString().match(/^strand (\S+) \((\S+)\)\n$/);
    assert.ok(m, `version line: ${v.stdout}`);
    assert.equal(m[1], version);
    const head = await run("git", ["-C", root, "rev-parse", "--short", "HEAD"]).catch(() => null);
    if (head?.code === 0) assert.match(m[2], new RegExp(`^${head.stdout.toString().trim()}(-dirty)?$`));
    else assert.equal(m[2], "unknown");
    // From source there is no build commit.
    const src = await run(bun, [join(root, "src/cli/main.ts"), "--version"]);
    assert.equal(src.stdout.toString(), `strand ${version} (source)\n`);

    const tarball = join(dir, `strand-${version}-linux-x64.tar.gz`);
    assert.ok(existsSync(tarball), `no ${tarball}`);
    const t = await run("tar", ["-tzf", tarball]);
    assert.equal(t.code, 0, t.stderr);
    const files = t.stdout.toString().trim().split("\n").filter((l) => !l.endsWith("/")).sort();
    const top = `strand-${version}`;
    assert.ok(files.includes(`${top}/bin/strand`), files.join("\n"));
    assert.ok(files.includes(`${top}/README.md`), files.join("\n"));
    assert.ok(files.includes(`${top}/systemd/strand.service`), files.join("\n"));
    for (const f of files) assert.match(f, new RegExp(`^${top}/(bin/strand|README\\.md|systemd/.+)$`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
