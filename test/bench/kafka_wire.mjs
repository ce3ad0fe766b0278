// The benches' minimal Kafka client over node:net, written from the protocol's documented layouts
// (non-flexible versions: ApiVersions v0, CreateTopics v2, FindCoordinator v0, JoinGroup v1,
// SyncGroup v0, OffsetCommit v2, OffsetFetch v1), so a bench runs under plain node with nothing but
// the broker. Errors throw (a bench stops on the first one).
import { Buffer } from "node:buffer";
import net from "node:net";

function fail(msg) {
  throw new Error(msg);
}

export class W {
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

export class R {
  constructor(b) { this.b = b; this.pos = 0; }
  i16() { const v = this.b.readInt16BE(this.pos); this.pos += 2; return v; }
  i32() { const v = this.b.readInt32BE(this.pos); this.pos += 4; return v; }
  i64() { const v = this.b.readBigInt64BE(this.pos); this.pos += 8; return v; }
  str() { const n = this.i16(); if (n < 0) return null; const s = this.b.toString("utf8", this.pos, this.pos + n); this.pos += n; return s; }
  bytes() { const n = this.i32(); if (n < 0) return null; const v = this.b.subarray(this.pos, this.pos + n); this.pos += n; return v; }
}

export class Conn {
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

export const API = { offsetCommit: 8, offsetFetch: 9, findCoordinator: 10, joinGroup: 11, syncGroup: 14, apiVersions: 18, createTopics: 19 };

/** CreateTopics v2: one topic (OffsetCommit refuses partitions the cluster does not have). */
export async function createTopic(c, name, partitions) {
  const body = new W().arr([name], (w, t) => w.str(t).i32(partitions).i16(1).i32(0).i32(0)).i32(30_000).i8(0).done();
  const r = await c.request(API.createTopics, 2, body);
  r.i32(); // throttle time
  r.i32(); // one topic
  r.str();
  const err = r.i16();
  if (err !== 0 && err !== 36) fail(`CreateTopics error ${err}`);
}

export async function apiVersions(c) {
  const r = await c.request(API.apiVersions, 0, Buffer.alloc(0));
  const err = r.i16();
  if (err !== 0) fail(`ApiVersions error ${err}`);
}

export async function findCoordinator(c, group) {
  for (let i = 0; i < 200; i++) {
    const r = await c.request(API.findCoordinator, 0, new W().str(group).done());
    if (r.i16() === 0) return;
    await new Promise((res) => setTimeout(res, 50));
  }
  fail(`no coordinator for ${group}`);
}

/** ConsumerProtocolSubscription v0 for one topic. */
export const subscription = new W().i16(0).arr(["bench"], (w, t) => w.str(t)).i32(-1).done();

export async function joinGroup(c, group, memberId) {
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

export async function sync(c, group, generationId, memberId, assignments) {
  const body = new W().str(group).i32(generationId).str(memberId)
    .arr(assignments, (w, a) => w.str(a.memberId).bytes(a.assignment)).done();
  const r = await c.request(API.syncGroup, 0, body);
  return r.i16();
}

/** OffsetCommit v2 of offset for partitions 0 .. count-1 of topic "bench". */
export function commitBody(group, generationId, memberId, offset, count) {
  const partitions = Array.from({ length: count }, (_, p) => p);
  return new W().str(group).i32(generationId).str(memberId).i64(-1)
    .arr(["bench"], (w, t) => w.str(t).arr(partitions, (w2, p) => w2.i32(p).i64(offset).str(null))).done();
}

export function checkCommit(r) {
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
export async function rate(seconds, window, send) {
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
export async function memberLoop(m, group, n, minGeneration) {
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

export function freePort() {
  return new Promise((res) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

export async function waitForBroker(port) {
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

