// The compiler checks every source and test file (deno check, with the project's deno.json): a
// handler that reads a field its type lacks, a test whose code the runtime would run anyway in a
// form nobody meant (a statement cut in two still parses), fail here rather than in production.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { run } from "./helpers/tools.ts";

const root = fileURLToPath(new URL("..", import.meta.url).href);

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tsFiles(p) : n.endsWith(".ts") ? [relative(root, p)] : [];
  });
}

test("typecheck: deno check passes on every .ts file in src/ and test/", { timeout: 600_000 }, async () => {
  const files = [...tsFiles(join(root, "src")), ...tsFiles(join(root, "test"))];
  const started = Date.now();
  const r = await run(join(root, "node_modules/.bin/deno"), ["check", "--quiet", ...files.map((f) => join(root, f))], { timeoutMs: 540_000 });
  // deno colours its report; the errors are what a reader needs.
  const report = r.stderr.toString().replace(/\x1b\[[0-9;]*m/g, "");
  assert.equal(r.code, 0, `deno check failed:\n${report.slice(0, 20_000)}`);
  console.log(`typecheck: ${files.length} files in ${Date.now() - started} ms`);
});
