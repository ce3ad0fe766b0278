// Event-loop stalls of a real broker (embedded registry, one node) while it creates, describes,
// restarts with and deletes a topic of many partitions, and while its registry rewrites its
// snapshot with that topic in it. Run by test/bench/stall.mjs under Bun and Deno; prints figures
// and one `RESULT {json}` line.
//
// A 5 ms interval timer runs in the broker's own process (this one: the broker is started in
// process, as the tests do) and records how late each tick fired: the longest lateness is the
// longest stretch during which no request of any client could have been answered. A second
// connection sends ApiVersions every 10 ms meanwhile and counts its answers (it runs in the
// same process, so its latency figure is bounded by the stall, not a separate measure).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { parseArgs } from "node:util";
import { ApiVersionsApi, CreateTopicsApi, DeleteTopicsApi, MetadataApi } from "../../src/protocol/api/mod.ts";
import { startBroker } from "../helpers/broker.ts";
import { WireClient } from "../helpers/wire.ts";

const { values } = parseArgs({
  args: typeof Deno !== "undefined" ? Deno.args : process.argv.slice(2),
  options: {
    partitions: { type: "string", default: "1000,10000" },
    // A phase that takes longer than this is abandoned (the broker before issue 11 took ~9 min
    // for 10,000 partitions); the figure is then reported as "> cap".
    "cap-s": { type: "string", default: "900" },
    // "create" runs the creation alone (to measure a slow build in reasonable time).
    only: { type: "string", default: "" },
    // Prints each stall over this many ms with its wall-clock window (epoch µs), to line it up
    // with a CPU profile (`bun --cpu-prof`, whose sample times are epoch µs).
    "trace-ms": { type: "string", default: "0" },
  },
});
const sizes = String(values.partitions).split(",").map(Number);
const capMs = Number(values["cap-s"]) * 1000;
declare const Deno: { args: string[] } | undefined;

const tickMs = 5;
let last = performance.now();
let maxLateMs = 0;
// The machine the figures come from may be shared: a stall can be the broker's own work, or time
// the kernel kept this thread waiting for a CPU (run-queue wait in /proc/thread-self/schedstat,
// second field, ns). Both are reported: the raw lateness, and the lateness less that wait (what
// the broker itself held the loop for). Where /proc is missing, the second equals the first.
// The first field, the thread's time on a CPU, gives a third figure: how much of a stall was the
// broker's own computing (the rest of the "own" figure is time blocked in the kernel: a synchronous
// file operation waiting on a disk other processes keep busy, page faults, locks).
function schedstat(): { cpuMs: number; waitMs: number } {
  try {
    const f = readFileSync("/proc/thread-self/schedstat", "utf8").split(" ");
    return { cpuMs: Number(f[0]) / 1e6, waitMs: Number(f[1]) / 1e6 };
  } catch {
    return { cpuMs: 0, waitMs: 0 };
  }
}
let lastStat = schedstat();
let maxOwnMs = 0;
let maxCpuMs = 0;
const traceMs = Number(values["trace-ms"]);
setInterval(() => {
  const now = performance.now();
  const stat = schedstat();
  const lateMs = now - last - tickMs;
  const ownMs = lateMs - (stat.waitMs - lastStat.waitMs);
  // On a CPU over the whole tick (the tick's own few µs included): only a stall's figure counts.
  const cpuMs = Math.min(ownMs, stat.cpuMs - lastStat.cpuMs);
  maxLateMs = Math.max(maxLateMs, lateMs);
  maxOwnMs = Math.max(maxOwnMs, ownMs);
  maxCpuMs = Math.max(maxCpuMs, cpuMs);
  if (traceMs > 0 && lateMs > traceMs) {
    const us = (t: number) => Math.round((performance.timeOrigin + t) * 1000);
    console.log(
      `  stall ${Math.round(lateMs)} ms (${Math.round(ownMs)} ms less run-queue wait, ${Math.round(cpuMs)} ms on a CPU)` +
        ` from ${us(last + tickMs)} to ${us(now)} (epoch us)`,
    );
  }
  last = now;
  lastStat = stat;
}, tickMs);

let maxPingMs = 0;
let pings = 0;
let pinging = false;
async function pingLoop(port: number): Promise<void> {
  let c: WireClient | null = null;
  while (pinging) {
    try {
      c ??= await WireClient.connect(port);
      const t = performance.now();
      await c.request(ApiVersionsApi, 3, { clientSoftwareName: "stall-bench", clientSoftwareVersion: "1" }, capMs);
      maxPingMs = Math.max(maxPingMs, performance.now() - t);
      pings++;
    } catch {
      c?.close(); // a restart closed it: connect again
      c = null;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  c?.close();
}

async function phase<T>(name: string, port: number, body: () => Promise<T>) {
  maxLateMs = 0;
  maxOwnMs = 0;
  maxCpuMs = 0;
  maxPingMs = 0;
  pings = 0;
  last = performance.now();
  pinging = true;
  const pinger = pingLoop(port);
  const t0 = performance.now();
  let ok = true;
  try {
    await body();
  } catch (e) {
    ok = false;
    console.log(`  ${name}: ${e}`);
  }
  const totalMs = performance.now() - t0;
  pinging = false;
  await pinger.catch(() => {});
  const r = {
    name,
    ok,
    totalMs: Math.round(totalMs),
    maxStallMs: Math.round(maxLateMs),
    maxOwnStallMs: Math.round(maxOwnMs),
    maxCpuStallMs: Math.round(maxCpuMs),
    maxPingMs: Math.round(maxPingMs),
    pings,
  };
  console.log(
    `  ${name.padEnd(28)} total ${String(r.totalMs).padStart(8)} ms   longest stall ${String(r.maxStallMs).padStart(7)} ms` +
      ` (${r.maxOwnStallMs} ms less run-queue wait, ${r.maxCpuStallMs} on a CPU)` +
      `   slowest ApiVersions ${String(r.maxPingMs).padStart(7)} ms (${pings} sent)${ok ? "" : "  FAILED"}`,
  );
  return r;
}

type Part = { errorCode: number; leaderId: number };
async function metadata(c: WireClient, topic: string): Promise<{ errorCode: number; partitions: Part[] }> {
  const res = await c.request(MetadataApi, 12, {
    topics: [{ topicId: new Uint8Array(16), name: topic }],
    allowAutoTopicCreation: false,
    includeTopicAuthorizedOperations: false,
  }, capMs);
  return (res.topics as { errorCode: number; partitions: Part[] }[])[0];
}

async function untilAllLed(c: WireClient, topic: string, n: number): Promise<void> {
  const deadline = performance.now() + capMs;
  for (;;) {
    const t = await metadata(c, topic);
    const led = t.partitions.filter((p) => p.errorCode === 0 && p.leaderId >= 0).length;
    if (t.errorCode === 0 && led === n) return;
    if (performance.now() > deadline) throw new Error(`only ${led} of ${n} partitions led after the cap`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const results: unknown[] = [];
const runtime = typeof Deno !== "undefined" ? "deno" : "bun";
console.log(`stall bench on ${runtime}: interval timer every ${tickMs} ms, ApiVersions every 10 ms`);
for (const n of sizes) {
  const b = await startBroker({ "auto.create.topics.enable": "false" });
  const c = await WireClient.connect(b.port);
  const topic = `stall-${n}`;
  console.log(`${n} partitions:`);
  const create = await phase(`create ${n}`, b.port, async () => {
    const res = await c.request(CreateTopicsApi, 7, {
      topics: [{ name: topic, numPartitions: n, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: capMs,
      validateOnly: false,
    }, capMs);
    const code = (res.topics as { errorCode: number }[])[0].errorCode;
    if (code !== 0) throw new Error(`CreateTopics error ${code}`);
    await untilAllLed(c, topic, n);
  });
  if (values.only === "create") {
    await b.stop();
    results.push({ partitions: n, create });
    continue;
  }
  const meta = await phase(`metadata of ${n}`, b.port, async () => {
    const t = await metadata(c, topic);
    if (t.partitions.length !== n) throw new Error(`${t.partitions.length} partitions`);
  });
  c.close();
  const restart = await phase(`restart with ${n}`, b.port, async () => {
    await b.restart();
    const c2 = await WireClient.connect(b.port);
    await untilAllLed(c2, topic, n);
    c2.close();
  });
  // The embedded registry rewrites its snapshot once its journal passes
  // registryJournalCompactBytes (and the last snapshot's size): with the topic's ~3n nodes in the
  // tree, writes of a bench znode push the journal past it, and the phase ends once the rewrite
  // is done (a new snapshot.json, no older journal left beside it). The znode is 100 KB, as large
  // as the topic znode of 10,000 partitions (the largest the broker writes): with 1 MB ones, each
  // write's own encoding (base64, CRC, copies) held the loop for tens of ms on a loaded host.
  const compaction = await phase(`compaction with ${n}`, b.port, async () => {
    const s = b.registrySession();
    const dir = `${b.logDir}/.strand-registry`;
    const snapshotIno = () => statSync(`${dir}/snapshot.json`, { throwIfNoEntry: false })?.ino ?? -1;
    const done = () => readdirSync(dir).every((f) => !f.startsWith("registry.journal.") && !f.endsWith(".tmp"));
    const before = snapshotIno();
    const data = new Uint8Array(100_000).fill(0x61);
    const deadline = performance.now() + capMs;
    try {
      await s.create("/strand-stall-bench", data);
      for (let i = 1; snapshotIno() === before || !done(); i++) {
        if (performance.now() > deadline) throw new Error("no snapshot rewrite after the cap");
        if (i < 2_000) await s.setData("/strand-stall-bench", data.fill(0x61 + (i % 26)));
        else await new Promise((r) => setTimeout(r, 20));
      }
      await s.delete("/strand-stall-bench");
    } finally {
      await s.close();
    }
  });
  const c3 = await WireClient.connect(b.port);
  const del = await phase(`delete ${n}`, b.port, async () => {
    const res = await c3.request(DeleteTopicsApi, 4, { topicNames: [topic], timeoutMs: capMs }, capMs);
    const code = (res.responses as { errorCode: number }[])[0].errorCode;
    if (code !== 0) throw new Error(`DeleteTopics error ${code}`);
    const deadline = performance.now() + capMs;
    while ((await metadata(c3, topic)).errorCode === 0) {
      if (performance.now() > deadline) throw new Error("topic still listed after the cap");
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  c3.close();
  await b.stop();
  results.push({ partitions: n, create, meta, restart, compaction, del });
}
console.log(`RESULT ${JSON.stringify({ runtime, results })}`);
// The interval timer keeps the loop alive.
if (typeof Deno !== "undefined") (globalThis as unknown as { Deno: { exit(c: number): never } }).Deno.exit(0);
else process.exit(0);
