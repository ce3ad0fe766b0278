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
// The client is written here from the protocol's documented layouts (non-flexible versions:
// ApiVersions v0, CreateTopics v2, FindCoordinator v0, JoinGroup v1, SyncGroup v0, OffsetCommit
// v2), so the bench runs under plain node with nothing but the broker. Machines here are shared
// and noisy: the ratios matter more than the absolute figures.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Buffer } from "node:buffer";
import net from "node:net";

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

function fail(msg) {
  console.error(`bench:groups: ${msg}`);
  rmSync(work, { recursive: true, force: true });
  process.exit(1);
}

// ---- a minimal Kafka client -------------------------------------------------------------------

class W {
  constructor() {
    this.parts = [];
  }
  i8(v) { const b = Buffer.alloc(1); b.writeInt8(v); this.parts.push(b); return this; }
  i16(v) { const b = Buffer.alloc(2); b.writeInt16BE(v); this.parts.push(b); return this; }
  i32(v) { const b = Buffer.alloc(4); b.writeInt32BE(v); this.parts.push(b); return this; }
  i64(v) { const b = Buffer.alloc(8); b.writeBigInt64BE(BigInt(v)); this.parts.push(b); return this; }
  str(s) {
    if (s === null) return this.i16(-1);
    const b = Buffer.from(s, "utf8");
    this.i16(b.length);
    this.parts.push(b);
    return this;
  }
  bytes(b) { this.i32(b.length); this.parts.push(Buffer.from(b)); return this; }
  arr(items, fn) { this.i32(items.length); for (const x of items) fn(this, x); return this; }
  done() { return Buffer.concat(this.parts); }
}

class R {
  constructor(b) { this.b = b; this.pos = 0; }
  i16() { const v = this.b.readInt16BE(this.pos); this.pos += 2; return v; }
  i32() { const v = this.b.readInt32BE(this.pos); this.pos += 4; return v; }
  str() { const n = this.i16(); if (n < 0) return null; const s = this.b.toString("utf8", this.pos, this.pos + n); this.pos += n; return s; }
  bytes() { const n = this.i32(); if (n < 0) return null; const v = this.b.subarray(this.pos, this.pos + n); this.pos += n; return v; }
}

class Conn {
  constructor(socket) {
    this.socket = socket;
    this.buf = Buffer.alloc(0);
    this.pending = [];
    this.nextId = 1;
    socket.setNoDelay(true);
    socket.on("data", (d) => {
      this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
      while (this.buf.length >= 4) {
        const size = this.buf.readInt32BE(0);
        if (this.buf.length < 4 + size) break;
        const payload = this.buf.subarray(4, 4 + size);
        this.buf = this.buf.subarray(4 + size);
        const p = this.pending.shift();
        const corr = payload.readInt32BE(0);
        if (!p || p.id !== corr) fail(`correlation id ${corr}, expected ${p?.id}`);
        p.resolve(new R(payload.subarray(4)));
      }
    });
    socket.on("error", (e) => { for (const p of this.pending.splice(0)) p.reject(e); });
    socket.on("close", () => { for (const p of this.pending.splice(0)) p.reject(new Error("connection closed")); });
  }
  static connect(port) {
    return new Promise((resolve, reject) => {
      const s = net.connect({ host: "127.0.0.1", port }, () => { s.removeListener("error", reject); resolve(new Conn(s)); });
      s.once("error", reject);
    });
  }
  /** Sends one request (header v1); resolves to a reader over the response body. */
  request(apiKey, version, body) {
    const id = this.nextId++;
    const header = new W().i16(apiKey).i16(version).i32(id).str("bench").done();
    const size = Buffer.alloc(4);
    size.writeInt32BE(header.length + body.length);
    this.socket.write(Buffer.concat([size, header, body]));
    return new Promise((resolve, reject) => this.pending.push({ id, resolve, reject }));
  }
  close() { this.socket.destroy(); }
}

const API = { offsetCommit: 8, findCoordinator: 10, joinGroup: 11, syncGroup: 14, apiVersions: 18, createTopics: 19 };

/** CreateTopics v2: one topic (OffsetCommit refuses partitions the cluster does not have). */
async function createTopic(c, name, partitions) {
  const body = new W().arr([name], (w, t) => w.str(t).i32(partitions).i16(1).i32(0).i32(0)).i32(30_000).i8(0).done();
  const r = await c.request(API.createTopics, 2, body);
  r.i32(); // throttle time
  r.i32(); // one topic
  r.str();
  const err = r.i16();
  if (err !== 0 && err !== 36) fail(`CreateTopics error ${err}`);
}

async function apiVersions(c) {
  const r = await c.request(API.apiVersions, 0, Buffer.alloc(0));
  const err = r.i16();
  if (err !== 0) fail(`ApiVersions error ${err}`);
}

async function findCoordinator(c, group) {
  for (let i = 0; i < 200; i++) {
    const r = await c.request(API.findCoordinator, 0, new W().str(group).done());
    if (r.i16() === 0) return;
    await new Promise((res) => setTimeout(res, 50));
  }
  fail(`no coordinator for ${group}`);
}

/** ConsumerProtocolSubscription v0 for one topic. */
const subscription = new W().i16(0).arr(["bench"], (w, t) => w.str(t)).i32(-1).done();

async function joinGroup(c, group, memberId) {
  const body = new W().str(group).i32(30_000).i32(30_000).str(memberId).str("consumer")
    .arr([{ name: "range", metadata: subscription }], (w, p) => w.str(p.name).bytes(p.metadata)).done();
  const r = await c.request(API.joinGroup, 1, body);
  const errorCode = r.i16();
  const generationId = r.i32();
  r.str(); // protocol
  const leader = r.str();
  const id = r.str();
  const members = [];
  const n = r.i32();
  for (let i = 0; i < n; i++) members.push({ memberId: r.str(), metadata: r.bytes() });
  return { errorCode, generationId, leader, memberId: id, members };
}

async function sync(c, group, generationId, memberId, assignments) {
  const body = new W().str(group).i32(generationId).str(memberId)
    .arr(assignments, (w, a) => w.str(a.memberId).bytes(a.assignment)).done();
  const r = await c.request(API.syncGroup, 0, body);
  return r.i16();
}

function commitBody(group, generationId, memberId, offset) {
  const partitions = Array.from({ length: PARTITIONS_PER_COMMIT }, (_, p) => p);
  return new W().str(group).i32(generationId).str(memberId).i64(-1)
    .arr(["bench"], (w, t) => w.str(t).arr(partitions, (w2, p) => w2.i32(p).i64(offset).str(null))).done();
}

function checkCommit(r) {
  const topics = r.i32();
  for (let t = 0; t < topics; t++) {
    r.str();
    const n = r.i32();
    for (let i = 0; i < n; i++) {
      r.i32();
      const err = r.i16();
      if (err !== 0) fail(`OffsetCommit error ${err}`);
    }
  }
}

/** Requests/s for `send` over `seconds`, with up to `window` requests in flight. */
async function rate(seconds, window, send) {
  let done = 0;
  let i = 0;
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  const worker = async () => {
    while (performance.now() < end) {
      await send(i++);
      done++;
    }
  };
  await Promise.all(Array.from({ length: window }, worker));
  return done / ((performance.now() - t0) / 1000);
}

/**
 * One member's side of a rebalance: join, then sync (the leader assigns every member a part of
 * the topic); on REBALANCE_IN_PROGRESS it rejoins. Resolves once it holds an assignment for a
 * generation of at least minGeneration, in which the leader (only it can tell) saw n members.
 * A follower whose JoinGroup reaches a Stable group before the rebalance has begun is answered
 * at once with the current generation (no rebalance, as in Kafka): it tries again.
 */
async function memberLoop(m, group, n, minGeneration) {
  for (;;) {
    const j = await joinGroup(m.c, group, m.memberId);
    if (j.errorCode !== 0) fail(`JoinGroup error ${j.errorCode}`);
    m.memberId = j.memberId;
    const leader = j.leader === j.memberId;
    const assignments = leader
      ? j.members.map((x, i) => ({ memberId: x.memberId, assignment: new W().i16(0).arr(["bench"], (w, t) => w.str(t).arr([i], (w2, p) => w2.i32(p))).i32(-1).done() }))
      : [];
    const err = await sync(m.c, group, j.generationId, m.memberId, assignments);
    if (err === 27) continue; // REBALANCE_IN_PROGRESS: someone joined since; rejoin
    if (err !== 0) fail(`SyncGroup error ${err}`);
    if (j.generationId < minGeneration) continue;
    if (leader && j.members.length < n) continue; // the leader rejoins until all are in
    return j.generationId;
  }
}

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

function freePort() {
  return new Promise((res) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

async function waitForBroker(port) {
  for (let i = 0; i < 200; i++) {
    try {
      const c = await Conn.connect(port);
      await apiVersions(c);
      c.close();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  fail(`broker on ${port} did not come up`);
}

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
    const commit = async (i) => checkCommit(await c.request(API.offsetCommit, 2, commitBody("bench-commits", generation, member.memberId, i)));
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
