// The usage example in src/client/mod.ts's header, run as an application would run it: its text is
// cut from the header (so the documentation cannot drift from what works), written to app.ts in a
// temp dir with its imports of ./strand/ pointed at this checkout, and run by the runtime running
// the test against a real broker: bun app.ts, or deno run -A --check app.ts (which type-checks it
// first; Bun does not). The dir's package.json names the library's npm dependencies, as an
// application's must (Deno resolves a bare import only for a declared one), and its node_modules
// links to the checkout's (which has them, and @types/node for the type check).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ClusterClient, fetchCommittedOffsets, parseBootstrapServers } from "../../src/client/mod.ts";
import { startBroker, tempDir } from "../helpers/broker.ts";
import { run } from "../helpers/tools.ts";

const root = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const g = globalThis as { Bun?: unknown; Deno?: unknown };
const runtime: [string, string[]] = g.Bun !== undefined
  ? [join(root, "node_modules/.bin/bun"), []]
  : [join(root, "node_modules/.bin/deno"), ["run", "-A", "--check"]];

/** The indented lines after "// Example" in src/client/mod.ts, without their comment marks. */
function exampleText(): string {
  const lines = readFileSync(join(root, "src/client/mod.ts"), "utf8").split("\n");
  const start = lines.findIndex((l) => l.startsWith("// Example"));
  assert.ok(start >= 0, "src/client/mod.ts has an example");
  const code: string[] = [];
  for (const l of lines.slice(start + 1)) {
    if (l.startsWith("//   ")) code.push(l.slice(5));
    else if (l === "//" && code.length > 0) code.push("");
    else if (code.length > 0) break;
  }
  return code.join("\n");
}

test("client library: the example in src/client/mod.ts runs as an application, and does what it says", async () => {
  const b = await startBroker({ "num.partitions": "1" });
  const dir = tempDir("strand-test-app-");
  const cluster = new ClusterClient(b.platform, { bootstrap: parseBootstrapServers(b.bootstrap) });
  try {
    const text = exampleText();
    assert.equal(text.split('"localhost:9092"').length, 2, "the example names its bootstrap server once");
    assert.ok(text.split('"./strand/src/').length > 2, "the example imports the library from a checkout in ./strand");
    const app = text.replace('"localhost:9092"', JSON.stringify(b.bootstrap)).replaceAll('"./strand/src/', `"${root}/src/`);
    writeFileSync(join(dir, "app.ts"), app);
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module", dependencies: { lz4js: "^0.2.0", snappyjs: "^0.7.0" } }));
    symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));

    const r = await run(runtime[0], [...runtime[1], join(dir, "app.ts")], { timeoutMs: 120_000 });
    const out = r.stdout.toString();
    assert.equal(r.code, 0, `the example exited ${r.code}: ${r.stderr}\n${out}`);

    const sent = new Map([...out.matchAll(/^sent (\w+) to greetings-(\d+) at offset (\d+)$/gm)].map((m) => [m[1], `${m[2]}@${m[3]}`]));
    const read = new Map([...out.matchAll(/^read hello (\w+) at greetings-(\d+)@(\d+)$/gm)].map((m) => [m[1], `${m[2]}@${m[3]}`]));
    assert.deepEqual([...sent.keys()].sort(), ["ada", "edsger", "grace"], out);
    assert.deepEqual(read, sent, "each record is read where its callback said it was written");

    // The group committed, per partition, the offset after the last record it read there.
    const records = new Map<number, number>();
    for (const at of sent.values()) {
      const [p, o] = at.split("@").map(Number);
      records.set(p, Math.max(records.get(p) ?? 0, o + 1));
    }
    const committed = await fetchCommittedOffsets(cluster, "readers", null);
    assert.deepEqual(
      committed.filter((c) => c.offset > 0).map((c) => [c.partition, c.offset]),
      [...records].sort((x, y) => x[0] - y[0]),
    );
    assert.equal((await cluster.topicMetadata("greetings")).partitions.length, 3, "the example's topic has its 3 partitions");
  } finally {
    cluster.close();
    // The link first, on its own: removing the dir must never walk into the checkout's node_modules.
    try {
      unlinkSync(join(dir, "node_modules"));
    } catch {
      // not made
    }
    rmSync(dir, { recursive: true, force: true });
    await b.stop();
  }
});
