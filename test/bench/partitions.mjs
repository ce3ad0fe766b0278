#!/usr/bin/env node
// npm run bench:partitions [-- --runtime bun|deno|both --records N --partitions P --clients C
//                             --idle-partitions Q --idle-seconds S --commit-partitions K
//                             --seconds T --only throughput,idle,commit]
// Many partitions and groups on one fresh strand broker per runtime (issue 18 item 3), each figure
// next to a baseline measured in the same run:
//
//   throughput  N records of 100 bytes (default 1,000,000) with the native client
//               (test/bench/native.mjs, librdkafka) into one partition by one producer, then into
//               a topic of P partitions (default 1,000) by C producer processes (default 10, each
//               spreading its share round robin over its own P/C partitions), acks=1; consumed
//               back by one consumer from the one partition and by a C-member consumer group
//               (subscribe, auto commit) from the P partitions. Aggregate records/s is the total
//               over the common span (first record of any client to the last of any), and its
//               ratio to the one-partition figure (target: at least 0.7). A third row, C producers
//               into one partition, separates the cost of the partitions from that of the clients.
//   idle        the broker's CPU share (utime+stime from /proc/<pid>/stat over S seconds, default
//               20) with no partitions, then with Q partitions (default 10,000, in topics of 1,000)
//               and nothing produced (target: under 5%). Needs `ulimit -n` above ~Q+500: the
//               broker is started under `ulimit -n` raised to the hard limit.
//   commit      OffsetCommit v2 of K partitions (default 1,000) in one request, from a one-member
//               group, one request at a time for T seconds (default 5): the broker's CPU per
//               partition (utime+stime over the requests) and the wall time per partition; the
//               same for OffsetFetch v1 of the K partitions, next to ApiVersions v0 (broker CPU
//               per request: what framing and dispatch cost without the partitions).
//
// STRAND_BENCH_RUNTIME_ARGS adds flags to the runtime (e.g. "--cpu-prof" under Bun). Machines
// here are shared and noisy: the ratios and the broker's CPU matter more than wall figures.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildNative, runNative, startNative } from "./native.mjs";
import { API, apiVersions, checkCommit, commitBody, Conn, createTopic, findCoordinator, freePort, memberLoop, W, waitForBroker } from "./kafka_wire.mjs";

const { values } = parseArgs({
  options: {
    runtime: { type: "string", default: "both" },
    records: { type: "string", default: "1000000" },
    partitions: { type: "string", default: "1000" },
    clients: { type: "string", default: "10" },
    "idle-partitions": { type: "string", default: "10000" },
    "idle-seconds": { type: "string", default: "20" },
    "commit-partitions": { type: "string", default: "1000" },
    seconds: { type: "string", default: "5" },
    only: { type: "string", default: "throughput,idle,commit" },
  },
});
const RECORDS = Number(values.records);
const PARTITIONS = Number(values.partitions);
const CLIENTS = Number(values.clients);
const IDLE_PARTITIONS = Number(values["idle-partitions"]);
const IDLE_SECONDS = Number(values["idle-seconds"]);
const COMMIT_PARTITIONS = Number(values["commit-partitions"]);
const SECONDS = Number(values.seconds);
const ONLY = new Set(values.only.split(","));
const TOPIC_PARTITIONS_MAX = 1000; // CreateTopics per topic in the idle part
const RECORD_BYTES = 100;
const CLK_TCK = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;
const root = new URL("../../", import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), "strand-bench-partitions-"));

function fail(msg) {
  console.error(`bench:partitions: ${msg}`);
  rmSync(work, { recursive: true, force: true });
  process.exit(1);
}
if (PARTITIONS % CLIENTS !== 0) fail(`--partitions (${PARTITIONS}) must be a multiple of --clients (${CLIENTS})`);
if (COMMIT_PARTITIONS > PARTITIONS) fail("--commit-partitions must not exceed --partitions (the commits go to the partitions' topic)");
let native;
if (ONLY.has("throughput")) {
  try {
    native = buildNative(work);
  } catch (e) {
    fail(e.message);
  }
}

const fmt = (n, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The broker's CPU time so far in seconds (utime + stime). */
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // fields from 3 (state) on
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** Starts a broker under runtime with its file limit raised to the hard limit; resolves once it answers. */
async function startBroker(runtime, name) {
  const port = await freePort();
  const logDir = join(work, `logs-${runtime}-${name}`);
  const extra = (process.env.STRAND_BENCH_RUNTIME_ARGS ?? "").split(" ").filter((x) => x !== "");
  const argv = runtime === "bun"
    ? [join(root, "node_modules/.bin/bun"), ...extra, join(root, "src/cli/main.ts")]
    : [join(root, "node_modules/.bin/deno"), "run", "-A", ...extra, join(root, "src/cli/main.ts")];
  // The admin listener on, as in production (its per-request metrics count), on a free port.
  const overrides = [`log.dirs=${logDir}`, `listeners=PLAINTEXT://127.0.0.1:${port}`, "admin.listeners=http://127.0.0.1:0", "offsets.topic.num.partitions=10"];
  argv.push("serve", "--log-level", "warn", ...overrides.flatMap((o) => ["--override", o]));
  const quoted = argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const child = spawn("sh", ["-c", `ulimit -n "$(ulimit -Hn)" && exec ${quoted}`], { cwd: work, stdio: ["ignore", "ignore", "inherit"] });
  const exited = new Promise((r) => child.on("exit", r));
  await waitForBroker(port);
  return {
    port,
    pid: child.pid,
    bootstrap: `127.0.0.1:${port}`,
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Records/s over the clients' common span (first record of any to the last of any). */
function aggregate(results) {
  const records = results.reduce((a, r) => a + r.records, 0);
  const first = Math.min(...results.map((r) => r.first_ms));
  const last = Math.max(...results.map((r) => r.last_ms));
  return { records, ms: last - first, perS: records / ((last - first) / 1000) };
}

async function produceMany(b, topic, partitionsPerClient) {
  const share = Math.floor(RECORDS / CLIENTS);
  const runs = Array.from({ length: CLIENTS }, (_, k) =>
    startNative(native, "produce", {
      bootstrap: b.bootstrap,
      topic,
      records: share,
      size: RECORD_BYTES,
      partition: partitionsPerClient === 1 ? 0 : k * partitionsPerClient,
      spread: partitionsPerClient,
      config: { acks: "1" },
    })
  );
  const results = await Promise.all(runs);
  const failed = results.reduce((a, r) => a + r.failed, 0);
  if (failed !== 0) fail(`${failed} records failed delivery: ${results.find((r) => r.failed > 0).error}`);
  return aggregate(results);
}

async function throughput(b) {
  const c = await Conn.connect(b.port);
  try {
    await createTopic(c, "one", 1);
    await createTopic(c, "one-shared", 1);
    await createTopic(c, "bench", PARTITIONS);
  } finally {
    c.close();
  }
  const oneProduce = runNative(native, "produce", { bootstrap: b.bootstrap, topic: "one", records: RECORDS, size: RECORD_BYTES, config: { acks: "1" } });
  const oneConsume = runNative(native, "consume", { bootstrap: b.bootstrap, topic: "one", records: RECORDS });
  const sharedProduce = await produceMany(b, "one-shared", 1);
  const manyProduce = await produceMany(b, "bench", PARTITIONS / CLIENTS);
  const members = await Promise.all(Array.from({ length: CLIENTS }, () =>
    startNative(native, "consume", {
      bootstrap: b.bootstrap,
      topic: "bench",
      records: RECORDS,
      group: "bench-consumers",
      idleMs: 10_000, // a rebalance (a member joining late) pauses every member for a while
      config: { "auto.offset.reset": "earliest" },
    })
  ));
  const manyConsume = aggregate(members);
  if (manyConsume.records !== Math.floor(RECORDS / CLIENTS) * CLIENTS) {
    fail(`the ${CLIENTS}-member group consumed ${manyConsume.records} records, expected ${Math.floor(RECORDS / CLIENTS) * CLIENTS}`);
  }
  return { oneProduce: oneProduce.records_per_s, oneConsume: oneConsume.records_per_s, sharedProduce, manyProduce, manyConsume };
}

/** The broker's CPU share over seconds of wall time, in percent. */
async function cpuShare(pid, seconds) {
  const c0 = cpuSeconds(pid);
  const t0 = performance.now();
  await sleep(seconds * 1000);
  return (cpuSeconds(pid) - c0) / ((performance.now() - t0) / 1000) * 100;
}

async function idle(runtime) {
  const b = await startBroker(runtime, "idle");
  try {
    await sleep(2000); // start-up work done
    const empty = await cpuShare(b.pid, Math.min(IDLE_SECONDS, 10));
    const c = await Conn.connect(b.port);
    const t0 = performance.now();
    try {
      for (let made = 0, t = 0; made < IDLE_PARTITIONS; t++) {
        const n = Math.min(TOPIC_PARTITIONS_MAX, IDLE_PARTITIONS - made);
        await createTopic(c, `idle-${t}`, n);
        made += n;
      }
    } finally {
      c.close();
    }
    const createMs = performance.now() - t0;
    await sleep(5000); // the partitions' creation settled
    const fds = readdirSync(`/proc/${b.pid}/fd`).length;
    const loaded = await cpuShare(b.pid, IDLE_SECONDS);
    return { empty, loaded, createMs, fds };
  } finally {
    await b.stop();
  }
}

function fetchBody(group, count) {
  const partitions = Array.from({ length: count }, (_, p) => p);
  return new W().str(group).arr(["bench"], (w, t) => w.str(t).arr(partitions, (w2, p) => w2.i32(p))).done();
}

function checkFetch(r, expected) {
  const topics = r.i32();
  let n = 0;
  for (let t = 0; t < topics; t++) {
    r.str();
    const parts = r.i32();
    for (let i = 0; i < parts; i++, n++) {
      r.i32();
      r.i64();
      r.str();
      const err = r.i16();
      if (err !== 0) fail(`OffsetFetch error ${err}`);
    }
  }
  if (n !== expected) fail(`OffsetFetch answered ${n} partitions, expected ${expected}`);
}

/** Requests one at a time for SECONDS: requests/s and the broker's CPU µs per request. */
async function timed(pid, send) {
  for (let i = 0; i < 20; i++) await send(i); // warm-up
  const c0 = cpuSeconds(pid);
  const t0 = performance.now();
  const end = t0 + SECONDS * 1000;
  let n = 0;
  while (performance.now() < end) await send(n++);
  const s = (performance.now() - t0) / 1000;
  return { perS: n / s, cpuUs: (cpuSeconds(pid) - c0) * 1e6 / n, wallUs: s * 1e6 / n };
}

async function commits(b) {
  const c = await Conn.connect(b.port);
  try {
    await createTopic(c, "bench", PARTITIONS);
    await findCoordinator(c, "bench-commits");
    const member = { c, memberId: "" };
    const generation = await memberLoop(member, "bench-commits", 1, 1);
    const base = await timed(b.pid, () => apiVersions(c));
    const commit = await timed(b.pid, async (i) =>
      checkCommit(await c.request(API.offsetCommit, 2, commitBody("bench-commits", generation, member.memberId, i, COMMIT_PARTITIONS)))
    );
    const fetchReq = fetchBody("bench-commits", COMMIT_PARTITIONS);
    const fetch = await timed(b.pid, async () => checkFetch(await c.request(API.offsetFetch, 1, fetchReq), COMMIT_PARTITIONS));
    return { base, commit, fetch };
  } finally {
    c.close();
  }
}

console.log(`strand bench:partitions: ${fmt(RECORDS)} records of ${RECORD_BYTES} bytes, ${fmt(PARTITIONS)} partitions, ${CLIENTS} producers and a ` +
  `${CLIENTS}-member group; idle ${fmt(IDLE_PARTITIONS)} partitions over ${IDLE_SECONDS} s; OffsetCommit of ${fmt(COMMIT_PARTITIONS)} partitions for ${SECONDS} s`);
const runtimes = values.runtime === "both" ? ["bun", "deno"] : [values.runtime];
for (const rt of runtimes) {
  console.log(`strand on ${rt}:`);
  if (ONLY.has("throughput") || ONLY.has("commit")) {
    const b = await startBroker(rt, "main");
    try {
      if (ONLY.has("throughput")) {
        const t = await throughput(b);
        console.log(`  produce, 1 producer, 1 partition            ${fmt(t.oneProduce).padStart(10)} records/s  (baseline)`);
        console.log(`  produce, ${CLIENTS} producers, 1 partition          ${fmt(t.sharedProduce.perS).padStart(10)} records/s  ratio ${fmt(t.sharedProduce.perS / t.oneProduce, 3)}`);
        console.log(`  produce, ${CLIENTS} producers, ${PARTITIONS} partitions      ${fmt(t.manyProduce.perS).padStart(10)} records/s  ratio ${fmt(t.manyProduce.perS / t.oneProduce, 3)} (target >= 0.7)`);
        console.log(`  consume, 1 consumer, 1 partition            ${fmt(t.oneConsume).padStart(10)} records/s  (baseline)`);
        console.log(`  consume, ${CLIENTS}-member group, ${PARTITIONS} partitions   ${fmt(t.manyConsume.perS).padStart(10)} records/s  ratio ${fmt(t.manyConsume.perS / t.oneConsume, 3)} (target >= 0.7)`);
      }
      if (ONLY.has("commit")) {
        const x = await commits(b);
        const row = (label, r, per) =>
          console.log(`  ${label.padEnd(38)} ${fmt(r.perS).padStart(8)} req/s  broker CPU ${fmt(r.cpuUs / per, 2).padStart(8)} µs  wall ${fmt(r.wallUs / per, 2).padStart(8)} µs ${per > 1 ? "per partition" : "per request"}`);
        row("ApiVersions v0 (baseline)", x.base, 1);
        row(`OffsetCommit v2, ${COMMIT_PARTITIONS} partitions`, x.commit, COMMIT_PARTITIONS);
        row(`OffsetFetch v1, ${COMMIT_PARTITIONS} partitions`, x.fetch, COMMIT_PARTITIONS);
      }
    } finally {
      await b.stop();
    }
  }
  if (ONLY.has("idle")) {
    const x = await idle(rt);
    console.log(`  idle broker CPU, no partitions              ${fmt(x.empty, 2).padStart(8)} %  (baseline)`);
    console.log(`  idle broker CPU, ${fmt(IDLE_PARTITIONS)} partitions        ${fmt(x.loaded, 2).padStart(8)} %  (target < 5%; ${fmt(x.fds)} open files; created in ${fmt(x.createMs / 1000, 1)} s)`);
  }
}
rmSync(work, { recursive: true, force: true });
