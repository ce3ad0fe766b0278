#!/usr/bin/env node
// npm run bench:groups [-- --seconds S --runtime bun|deno|both --members N --rounds R]
// Consumer-group figures for a fresh strand broker (started with the CLI, one per runtime), next
// to a baseline measured in the same run on the same connection: ApiVersions v0 requests/s (a
// request the broker answers from memory, so what is left is framing, dispatch and the socket).
//
//   commits   OffsetCommit v2 requests/s for one group, 100 partitions per request, from the
//             group's one member (generation-fenced, one 100-record batch appended to
//             __consumer_offsets each), over one connection: one request at a time, and
//             pipelined (up to 64 in flight).
//   rebalance a group of N members (default 10), each on its own connection: "form" is from the
//             first JoinGroup sent to every member holding its SyncGroup answer for a generation
//             with all N (group.initial.rebalance.delay.ms=0, so members that arrive after the
//             first join trigger further rounds, as they would); "rejoin" is the same for all N
//             rejoining a Stable group at once (the rebalance a new subscription or a member
//             change causes). Median and max over the rounds.
//
// The client (test/bench/kafka_wire.mjs) is written from the protocol's documented layouts, so
// the bench runs under plain node with nothing but the broker. Machines here are shared
// and noisy: the ratios matter more than the absolute figures.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { API, apiVersions, checkCommit, commitBody, Conn, createTopic, findCoordinator, freePort, memberLoop, rate, waitForBroker } from "./kafka_wire.mjs";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "3" },
    runtime: { type: "string", default: "both" },
    members: { type: "string", default: "10" },
    rounds: { type: "string", default: "20" },
  },
});
const SECONDS = Number(values.seconds);
const MEMBERS = Number(values.members);
const ROUNDS = Number(values.rounds);
const PARTITIONS_PER_COMMIT = 100;
const root = new URL("../../", import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), "strand-bench-groups-"));

/** Milliseconds from the first JoinGroup to every member holding its assignment of one generation >= minGeneration. */
async function rebalance(members, group, minGeneration) {
  const t0 = performance.now();
  let gens = await Promise.all(members.map((m) => memberLoop(m, group, members.length, minGeneration)));
  // Followers that synced a generation the leader then left behind catch up with the last one.
  while (new Set(gens).size !== 1) gens = await Promise.all(members.map((m) => memberLoop(m, group, members.length, Math.max(...gens))));
  return { ms: performance.now() - t0, generation: gens[0] };
}

function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], max: s[s.length - 1] };
}

// ---- the broker ---------------------------------------------------------------------------------

const fmt = (n, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function benchRuntime(runtime) {
  const port = await freePort();
  const logDir = join(work, `logs-${runtime}`);
  const cmd = runtime === "bun"
    ? [join(root, "node_modules/.bin/bun"), [join(root, "src/cli/main.ts")]]
    : [join(root, "node_modules/.bin/deno"), ["run", "-A", join(root, "src/cli/main.ts")]];
  const overrides = [
    `log.dirs=${logDir}`,
    `listeners=PLAINTEXT://127.0.0.1:${port}`,
    "admin.listeners=http://127.0.0.1:0", // on, as in production (its per-request metrics count), on a free port
    "group.initial.rebalance.delay.ms=0",
    "offsets.topic.num.partitions=10",
  ];
  const broker = spawn(cmd[0], [...cmd[1], "serve", "--log-level", "warn", ...overrides.flatMap((o) => ["--override", o])], { stdio: ["ignore", "ignore", "inherit"] });
  const conns = [];
  try {
    await waitForBroker(port);
    const c = await Conn.connect(port);
    conns.push(c);
    await createTopic(c, "bench", PARTITIONS_PER_COMMIT);
    await findCoordinator(c, "bench-commits");
    await findCoordinator(c, "bench-rebalance");

    // Baseline: ApiVersions on the same connection.
    await rate(0.3, 1, () => apiVersions(c)); // warm-up
    const baseSeq = await rate(SECONDS, 1, () => apiVersions(c));
    const basePipe = await rate(SECONDS, 64, () => apiVersions(c));

    // Commits: a one-member group, its member commits 100 partitions per request.
    const member = { c, memberId: "" };
    const generation = await memberLoop(member, "bench-commits", 1, 1);
    const commit = async (i) => checkCommit(await c.request(API.offsetCommit, 2, commitBody("bench-commits", generation, member.memberId, i, PARTITIONS_PER_COMMIT)));
    await rate(0.3, 1, commit); // warm-up
    const commitSeq = await rate(SECONDS, 1, commit);
    const commitPipe = await rate(SECONDS, 64, commit);

    // Rebalances of an N-member group, each member on its own connection.
    const members = [];
    for (let i = 0; i < MEMBERS; i++) {
      const mc = await Conn.connect(port);
      conns.push(mc);
      members.push({ c: mc, memberId: "" });
    }
    const form = await rebalance(members, "bench-rebalance", 1);
    let generation2 = form.generation;
    const rejoins = [];
    for (let r = 0; r < ROUNDS; r++) {
      const x = await rebalance(members, "bench-rebalance", generation2 + 1);
      generation2 = x.generation;
      rejoins.push(x.ms);
    }
    const rtt = 1000 / baseSeq;
    return { baseSeq, basePipe, commitSeq, commitPipe, formMs: form.ms, rejoin: stats(rejoins), rtt };
  } finally {
    for (const x of conns) x.close();
    broker.kill("SIGTERM");
    await new Promise((r) => broker.on("exit", r));
  }
}

console.log(`strand bench:groups: ${SECONDS} s per rate, OffsetCommit of ${PARTITIONS_PER_COMMIT} partitions, ${MEMBERS}-member group, ${ROUNDS} rejoin rounds`);
const runtimes = values.runtime === "both" ? ["bun", "deno"] : [values.runtime];
for (const rt of runtimes) {
  const r = await benchRuntime(rt);
  console.log(`strand on ${rt}:`);
  console.log(`  baseline ApiVersions v0        ${fmt(r.baseSeq).padStart(9)} req/s one at a time   ${fmt(r.basePipe).padStart(9)} req/s pipelined (64)`);
  console.log(`  OffsetCommit v2, 100 parts     ${fmt(r.commitSeq).padStart(9)} req/s one at a time   ${fmt(r.commitPipe).padStart(9)} req/s pipelined (64)`);
  console.log(`                                 ${fmt(r.commitSeq * PARTITIONS_PER_COMMIT).padStart(9)} offsets/s             ${fmt(r.commitPipe * PARTITIONS_PER_COMMIT).padStart(9)} offsets/s`);
  console.log(`  ratio to baseline              ${fmt(r.commitSeq / r.baseSeq, 3).padStart(9)} one at a time         ${fmt(r.commitPipe / r.basePipe, 3).padStart(9)} pipelined`);
  console.log(`  rebalance, ${MEMBERS} members: form ${fmt(r.formMs, 1)} ms; rejoin median ${fmt(r.rejoin.median, 1)} ms, max ${fmt(r.rejoin.max, 1)} ms` +
    ` (= ${fmt(r.rejoin.median / r.rtt, 1)} ApiVersions round trips of ${fmt(r.rtt, 3)} ms)`);
}
rmSync(work, { recursive: true, force: true });
