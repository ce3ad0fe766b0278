// The layout rules of ../shared/ARCHITECTURE.md, checked by reading imports:
// - runtime APIs (Bun.*, Deno.*, node: I/O modules) only under src/platform/ and src/cli/;
// - imports point one way: util → platform → protocol → client, log → registry, zk → replication,
//   coordinator, controller, authorizer → broker → admin → cli. A module may import the levels below its own;
//   modules of one level are independent, except registry → zk and controller → replication. So
//   client (the Kafka client library) imports only util, platform and protocol;
// - a module is entered through its mod.ts (files inside a module import each other freely);
// - nothing imports cli.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const root = new URL("../src/", import.meta.url).pathname;
const levels: Record<string, number> = {
  util: 0,
  platform: 1,
  protocol: 2,
  client: 3,
  log: 3,
  registry: 4,
  zk: 4,
  replication: 5,
  coordinator: 5,
  controller: 5,
  authorizer: 5,
  broker: 6,
  admin: 7,
  cli: 8,
};
// The imports allowed between two modules of the same level (importer → imported).
const sameLevel = new Set(["registry→zk", "controller→replication"]);
// node: modules that are computation, not I/O, and work the same in both runtimes.
const pureNodeModules = new Set(["node:zlib", "node:util", "node:buffer"]);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : n.endsWith(".ts") ? [p] : [];
  });
}

function imports(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)[^"'`;]*?from\s+["']([^"']+)["']/g)) out.push(m[1]);
  for (const m of text.matchAll(/import\(\s*["']([^"']+)["']\s*\)/g)) out.push(m[1]);
  return out;
}

const sources = files(root).map((p) => ({ path: relative(root, p), text: readFileSync(p, "utf8") }));
const moduleOf = (rel: string) => rel.split("/")[0];

test("architecture: runtime APIs (and Math.random) only in src/platform and src/cli", () => {
  const bad: string[] = [];
  for (const { path, text } of sources) {
    const mod = moduleOf(path);
    if (mod === "platform" || mod === "cli") continue;
    const code = text.replace(/\/\/.*$/gm, "");
    if (/(^|[^.\w])(Bun|Deno)\.\w/.test(code)) bad.push(`${path}: uses Bun.* or Deno.*`);
    // Randomness is the Platform's (randomBytes, randomBelow): predictable ids are an attack surface.
    if (/Math\.random\s*\(|=\s*Math\.random\b/.test(code)) bad.push(`${path}: uses Math.random`);
    for (const spec of imports(text)) {
      if (spec.startsWith("node:") && !pureNodeModules.has(spec)) bad.push(`${path}: imports ${spec}`);
    }
  }
  assert.deepEqual(bad, []);
});

test("architecture: imports point one way and enter modules through mod.ts", () => {
  const bad: string[] = [];
  for (const { path, text } of sources) {
    const from = moduleOf(path);
    for (const spec of imports(text)) {
      if (!spec.startsWith(".")) continue;
      const target = relative(root, join(root, path, "..", spec));
      const to = moduleOf(target);
      if (to === from) continue;
      if (!(to in levels)) bad.push(`${path}: imports ${spec}, outside the known modules`);
      else if (levels[to] > levels[from]) bad.push(`${path}: ${from} may not import ${to}`);
      else if (levels[to] === levels[from] && !sameLevel.has(`${from}→${to}`)) bad.push(`${path}: ${from} may not import ${to} (same level)`);
      if (to === "cli") bad.push(`${path}: nothing imports cli`);
      if (!target.endsWith("/mod.ts")) bad.push(`${path}: enter ${to} through ${to}/mod.ts, not ${spec}`);
    }
  }
  assert.deepEqual(bad, []);
});

// TLS and SASL go into the client's connection layer, so it must be the one place that opens a
// socket to a Kafka broker (the ZooKeeper client opens its own, to ZooKeeper).
test("architecture: only client/connection.ts opens connections to brokers", () => {
  const connectors = new Set(["client/connection.ts", "zk/handshake.ts"]);
  const bad: string[] = [];
  for (const { path, text } of sources) {
    if (moduleOf(path) === "platform" || connectors.has(path)) continue;
    if (/\bnet\s*\.\s*connect\s*\(/.test(text.replace(/\/\/.*$/gm, ""))) bad.push(`${path}: opens a socket (net.connect)`);
  }
  assert.deepEqual(bad, []);
});

// cli is the composition root, entered through main.ts.
test("architecture: every module has a mod.ts with a header comment", () => {
  const mods = new Set(sources.map((s) => moduleOf(s.path)).filter((m) => m in levels && m !== "cli"));
  for (const m of mods) {
    const mod = sources.find((s) => s.path === `${m}/mod.ts`);
    assert.ok(mod, `${m}/mod.ts exists`);
    assert.match(mod.text, /^\/\/ /, `${m}/mod.ts opens with a comment stating its invariants`);
  }
});

// Files short enough to read in one sitting: past this, split by concept (as log_segments.ts,
// prepared_logs.ts and znodes_acl.ts were split off).
test("architecture: no file in src/ is longer than 800 lines", () => {
  const long = sources.map(({ path, text }) => ({ path, lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0) })).filter((f) => f.lines > 800);
  assert.deepEqual(long.map((f) => `${f.path}: ${f.lines} lines`), []);
});
