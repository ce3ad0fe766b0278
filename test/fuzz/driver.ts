// The wire fuzzer's driver: starts a broker PROCESS (`strand serve`, embedded registry, one broker,
// under bun or deno), opens several connections and pipelines generated frames (generate.ts) at
// it, reconnecting whenever the broker closes one, and watches the process: its exit, its RSS
// (/proc/<pid>/status VmRSS), every stdout line at pino level >= 50 (error), and whether a normal
// produce/fetch round trip through a fresh connection still works. Used by wire.test.ts (100,000
// frames per runtime) and by main.ts (`npm run fuzz -- --frames N --seed S --runtime bun|deno`).
//
// A session is one connection's life: windows of frames written at once (or split into many
// writes), each window ending with its hostile frames and an ApiVersions sentinel whose answer
// proves the broker read everything before it. A frame counts as delivered once the broker read
// it: answered, passed by a later answer, or the one that made it close the connection. Session k's
// frames depend only on (seed, k), so `--seed S --session k` sends them again.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import process from "node:process";
import { join } from "node:path";
import { ApiVersionsApi, MetadataApi } from "../../src/protocol/api/mod.ts";
import { buildBatch, parseBatches } from "../helpers/record_batch.ts";
import { createTopic, fetchOnce, produce, WireClient } from "../helpers/wire.ts";
import { type Advertised, batchKindCounts, concat, defaultPools, type PlannedFrame, type Pools, Rng, SessionPlanner, streamSeed, toHex } from "./generate.ts";

export type Runtime = "bun" | "deno";
export const currentRuntime: Runtime = (globalThis as { Deno?: unknown }).Deno !== undefined ? "deno" : "bun";

export interface FuzzOptions {
  frames: number;
  seed: number;
  runtime: Runtime;
  /** Concurrent connections (default 8). */
  connections?: number;
  /** Frames of unconstrained controller requests (4-7) after the main phase (default frames / 50). */
  controlFrames?: number;
  /** Run only this session (a replay), with no frame target. */
  onlySession?: number;
  /** Progress lines. */
  log?: (line: string) => void;
}

export interface ErrorLineReport {
  line: string;
  count: number;
  /** Frames delivered when it first appeared. */
  atDelivered: number;
  session: number | null;
  lastFrames: string[];
}

export interface FuzzResult {
  seed: number;
  runtime: Runtime;
  framesSent: number;
  framesDelivered: number;
  controlFramesDelivered: number;
  sessions: number;
  closedByBroker: number;
  windowsAbandoned: { session: number; what: string }[];
  durationMs: number;
  mainPhaseMs: number;
  /** CPU seconds the broker used in the main phase. */
  mainPhaseBrokerCpuS: number;
  rssStartMb: number;
  rssPeakMb: number;
  rssEndMb: number;
  errorLines: ErrorLineReport[];
  stderr: string;
  unexpectedExit: string | null;
  roundTrips: { at: string; ok: boolean; detail: string }[];
  /** Why a fresh connection was not answered after the control phase (null: it was). */
  probeAfterControl: string | null;
  stopStatus: number | null;
  restartOk: boolean | null;
  warnCounts: Record<string, number>;
  kindCounts: Record<string, number>;
  apiCounts: Record<string, number>;
}

const root = new URL("../../", import.meta.url).pathname;
const dec = new TextDecoder();
/** A window whose sentinel is not answered in this time is abandoned (the connection closed). */
const windowWaitMs = 15_000;
const roundTripTimeoutMs = 30_000;
const controlSessionBase = 1_000_000_000;

function runtimeCommand(runtime: Runtime): [string, string[]] {
  const main = join(root, "src/cli/main.ts");
  return runtime === "bun"
    ? [join(root, "node_modules/.bin/bun"), [main]]
    : [join(root, "node_modules/.bin/deno"), ["run", "-A", main]];
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms))),
  ]);
}

// ---- the broker process -------------------------------------------------------------------------

class BrokerProcess {
  pid = 0;
  port = 0;
  exited: Promise<number> = Promise.resolve(-1);
  exitStatus: number | null = null;
  stderr = "";
  private wrapper: ChildProcess | null = null;
  private partial = "";
  private started = false;
  private startWaiters: Array<() => void> = [];

  constructor(
    private readonly runtime: Runtime,
    private readonly logDir: string,
    private readonly onLine: (line: string, parsed: Record<string, unknown> | null) => void,
  ) {}

  async start(): Promise<void> {
    this.started = false;
    this.port = 0;
    const [cmd, pre] = runtimeCommand(this.runtime);
    const overrides = {
      "broker.id": "0",
      "log.dirs": this.logDir,
      "listeners": "PLAINTEXT://127.0.0.1:0",
      "admin.listeners": "",
      // Valid topics are created only from a bounded set of names (generate.ts), not by any Metadata.
      "auto.create.topics.enable": "false",
      // A JoinGroup of a new group completes at once instead of holding its connection 3 s.
      "group.initial.rebalance.delay.ms": "0",
      "offsets.topic.num.partitions": "4",
      "log.cleaner.backoff.ms": "1000",
      "log.retention.check.interval.ms": "2000",
    };
    const args = [...pre, "serve", ...Object.entries(overrides).flatMap(([k, v]) => ["--override", `${k}=${v}`])];
    // The wrapper holds a pipe from this process: if the test dies, the broker is SIGKILLed.
    const script = `exec 3<&0; "$@" </dev/null & pid=$!; echo "fuzz-wrapper pid $pid" >&2; ` +
      `(read -r _ <&3; kill -9 $pid 2>/dev/null) & w=$!; wait $pid; code=$?; echo "fuzz-wrapper exit $code" >&2; kill $w 2>/dev/null; exit 0`;
    const wrapper = spawn("sh", ["-c", script, "strand-fuzz-broker", cmd, ...args], { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
    this.wrapper = wrapper;
    this.exitStatus = null;
    let pidResolve: (n: number) => void;
    const pidKnown = new Promise<number>((r) => (pidResolve = r));
    let errText = "";
    this.exited = new Promise<number>((resolve) => {
      wrapper.stderr!.on("data", (d: Uint8Array) => {
        errText += dec.decode(d);
        let m = /^fuzz-wrapper pid (\d+)$/m.exec(errText);
        if (m) pidResolve(Number(m[1]));
        m = /^fuzz-wrapper exit (\d+)$/m.exec(errText);
        if (this.wrapper !== wrapper) return; // a previous start's process
        if (m && this.exitStatus === null) {
          this.exitStatus = Number(m[1]);
          resolve(this.exitStatus);
        }
        this.stderr = errText.replace(/^fuzz-wrapper .*\n?/gm, "");
      });
      wrapper.on("close", () => {
        if (this.wrapper === wrapper && this.exitStatus === null) {
          this.exitStatus = -1;
          resolve(-1);
        }
      });
    });
    wrapper.stdout!.on("data", (d: Uint8Array) => this.onStdout(dec.decode(d)));
    this.pid = await withTimeout(pidKnown, 10_000, "broker wrapper pid");
    const deadline = Date.now() + 60_000;
    while (!this.started) {
      if (this.exitStatus !== null) throw new Error(`broker exited with ${this.exitStatus} before starting: ${this.stderr.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error("broker did not start within 60 s");
      await new Promise<void>((r) => {
        this.startWaiters.push(r);
        setTimeout(r, 200);
      });
    }
  }

  private onStdout(text: string): void {
    const lines = (this.partial + text).split("\n");
    this.partial = lines.pop()!;
    for (const line of lines) {
      if (line === "") continue;
      let parsed: Record<string, unknown> | null = null;
      try {
        parsed = JSON.parse(line);
      } catch {
        parsed = null;
      }
      if (parsed?.msg === "listening" && typeof parsed.port === "number" && this.port === 0) this.port = parsed.port;
      if (parsed?.msg === "broker started") {
        this.started = true;
        for (const w of this.startWaiters.splice(0)) w();
      }
      this.onLine(line, parsed);
    }
  }

  get alive(): boolean {
    return this.exitStatus === null;
  }

  rssKb(): number {
    try {
      const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${this.pid}/status`, "utf8"));
      return m ? Number(m[1]) : 0;
    } catch {
      return 0;
    }
  }

  /** CPU seconds (user + system) the broker has used so far. */
  cpuSeconds(): number {
    try {
      const f = readFileSync(`/proc/${this.pid}/stat`, "utf8").split(") ")[1].split(" ");
      return (Number(f[11]) + Number(f[12])) / 100;
    } catch {
      return 0;
    }
  }

  /** SIGTERM and wait; the exit status (128+n for a signal), or null when it did not stop. */
  async stop(timeoutMs = 60_000): Promise<number | null> {
    if (this.exitStatus === null) {
      try {
        process.kill(this.pid, "SIGTERM");
      } catch {
        // already gone
      }
    }
    const s = await Promise.race([this.exited, sleep(timeoutMs).then(() => null)]);
    this.kill();
    return s;
  }

  /** Closes the wrapper's pipe: the broker is SIGKILLed if still running. */
  kill(): void {
    this.wrapper?.stdin?.end();
  }
}

// ---- one fuzzing connection ---------------------------------------------------------------------

interface Pending {
  cid: number;
}

class FuzzConnection {
  private sock: net.Socket;
  private buf: Uint8Array = new Uint8Array(0);
  private pending: Pending[] = [];
  closed = false;
  closedByPeer = false;
  delivered = 0;
  localPort = 0;
  private waiters: Array<() => void> = [];
  /** The last frames sent (hex made only when a report needs them). */
  lastFrames: PlannedFrame[] = [];

  private constructor(sock: net.Socket) {
    this.sock = sock;
    this.localPort = sock.localPort ?? 0;
    sock.on("data", (d: Uint8Array) => this.onData(d));
    const done = (byPeer: boolean) => {
      if (this.closed) return;
      this.closed = true;
      this.closedByPeer = byPeer;
      // The frame the broker stopped at was read; nothing behind it was.
      if (byPeer && this.pending.length > 0) this.delivered++;
      this.pending = [];
      this.wake();
    };
    sock.on("end", () => done(true));
    sock.on("close", () => done(true));
    sock.on("error", () => done(true));
  }

  static open(port: number): Promise<FuzzConnection> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ host: "127.0.0.1", port });
      s.once("connect", () => {
        s.removeListener("error", reject);
        s.setNoDelay(true);
        resolve(new FuzzConnection(s));
      });
      s.once("error", reject);
    });
  }

  private onData(d: Uint8Array): void {
    const next = new Uint8Array(this.buf.length + d.length);
    next.set(this.buf);
    next.set(d, this.buf.length);
    this.buf = next;
    let off = 0;
    while (this.buf.length - off >= 8) {
      const dv = new DataView(this.buf.buffer, this.buf.byteOffset + off);
      const size = dv.getInt32(0);
      if (this.buf.length - off < 4 + size) break;
      this.settle(dv.getInt32(4));
      off += 4 + size;
    }
    if (off > 0) this.buf = this.buf.slice(off);
    this.wake();
  }

  /** An answer to `cid`: it and every frame before it were read. */
  private settle(cid: number): void {
    let i = this.pending.findIndex((p) => p.cid === cid);
    if (i < 0) i = 0; // a mutated correlation id: the oldest outstanding frame
    this.delivered += Math.min(i + 1, this.pending.length);
    this.pending.splice(0, i + 1);
  }

  answered(cid: number): boolean {
    return !this.pending.some((p) => p.cid === cid);
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  async waitFor(cond: () => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!cond()) {
      if (this.closed) return cond();
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
    return true;
  }

  private writeRaw(b: Uint8Array): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => this.sock.write(b, () => resolve()));
  }

  /** Sends frames: one write, a write per frame, or small random pieces (frames split across writes). */
  async send(frames: PlannedFrame[], rng: Rng): Promise<void> {
    for (const f of frames) {
      this.pending.push({ cid: f.correlationId });
      this.lastFrames.push(f);
    }
    if (this.lastFrames.length > 8) this.lastFrames.splice(0, this.lastFrames.length - 8);
    const how = rng.int(10);
    if (how < 6) return await this.writeRaw(concat(frames.map((f) => f.bytes)));
    if (how < 8) {
      for (const f of frames) await this.writeRaw(f.bytes);
      return;
    }
    const all = concat(frames.map((f) => f.bytes));
    for (let o = 0; o < all.length && !this.closed;) {
      const n = Math.min(all.length - o, rng.chance(0.5) ? rng.range(1, 7) : rng.range(8, 2048));
      await this.writeRaw(all.subarray(o, o + n));
      o += n;
      if (rng.chance(0.3)) await sleep(0);
    }
  }

  /** Sends bytes that are not frames of their own (what a poisoned frame swallows). */
  async sendRaw(b: Uint8Array): Promise<void> {
    await this.writeRaw(b);
  }

  close(): void {
    if (!this.closed) {
      this.closed = true;
      this.pending = [];
    }
    this.sock.destroy();
    this.wake();
  }
}

// ---- the run ------------------------------------------------------------------------------------

/** A sent frame for a report: its number in the session (= its correlation id), what it is, its hex. */
function describeFrame(f: PlannedFrame): string {
  return `frame #${f.correlationId} ${f.kind} apiKey=${f.apiKey} v${f.version}: ${toHex(f.bytes, 400)}`;
}

function bump(m: Record<string, number>, k: string, n = 1): void {
  m[k] = (m[k] ?? 0) + n;
}

export async function runFuzz(opts: FuzzOptions): Promise<FuzzResult> {
  const log = opts.log ?? (() => {});
  const started = Date.now();
  const logDir = mkdtempSync(join(tmpdir(), "strand-fuzz-"));
  const tag = (opts.seed >>> 0).toString(36);
  const pools: Pools = defaultPools(tag);
  const rtTopic = `fuzz-roundtrip-${tag}-${Date.now().toString(36)}`;
  const result: FuzzResult = {
    seed: opts.seed, runtime: opts.runtime, framesSent: 0, framesDelivered: 0, controlFramesDelivered: 0, sessions: 0,
    closedByBroker: 0, windowsAbandoned: [], durationMs: 0, mainPhaseMs: 0, mainPhaseBrokerCpuS: 0, rssStartMb: 0, rssPeakMb: 0, rssEndMb: 0,
    errorLines: [], stderr: "", unexpectedExit: null, roundTrips: [], probeAfterControl: null, stopStatus: null, restartOk: null,
    warnCounts: {}, kindCounts: {}, apiCounts: {},
  };
  // Sessions by the local port of their connection, to name the one an error line points at.
  const sessionsByPort = new Map<number, { session: number; conn: FuzzConnection }>();
  const recentPorts: { port: number; session: number }[] = [];
  const errorByKey = new Map<string, ErrorLineReport>();
  let delivered = 0;

  const onLine = (line: string, p: Record<string, unknown> | null) => {
    const level = typeof p?.level === "number" ? p.level : null;
    if (level !== null && level >= 50) {
      // One report per kind of failure: paths, quoted names and numbers in the message vary.
      const err = typeof p!.err === "string" ? (p!.err as string).split("\n")[0] : "";
      const key = `${p!.apiKey ?? ""} ${p!.msg} ${err.replace(/\/.*?(?= \(|$)/g, "/…").replace(/"[^"]*"/g, '"…"').replace(/\d+/g, "N")}`.slice(0, 300);
      const seen = errorByKey.get(key);
      if (seen !== undefined) return void seen.count++;
      const remote = typeof p!.remote === "string" ? Number((p!.remote as string).split(":").pop()) : NaN;
      const s = sessionsByPort.get(remote);
      const report: ErrorLineReport = { line: line.slice(0, 4000), count: 1, atDelivered: delivered, session: s?.session ?? null, lastFrames: s ? s.conn.lastFrames.map(describeFrame) : [] };
      errorByKey.set(key, report);
      result.errorLines.push(report);
      log(`ERROR-LEVEL LINE (session ${report.session}, ~${delivered} frames delivered): ${line.slice(0, 600)}`);
    } else if (level === 40) bump(result.warnCounts, `${p!.msg}${p!.reason ? ": " + String(p!.reason).slice(0, 60) : ""}`.slice(0, 120));
  };

  const broker = new BrokerProcess(opts.runtime, logDir, onLine);
  let rssTimer: ReturnType<typeof setInterval> | null = null;
  const sampleRss = () => {
    const kb = broker.rssKb();
    const mb = Math.round(kb / 1024);
    if (mb > result.rssPeakMb + 50 && result.rssPeakMb > 0) log(`broker RSS up from ${result.rssPeakMb} MB to ${mb} MB after ~${delivered} frames (${batchKindCounts["bomb"] ?? 0} gzip bombs generated)`);
    if (kb > 0) result.rssPeakMb = Math.max(result.rssPeakMb, mb);
  };
  try {
    await broker.start();
    rssTimer = setInterval(sampleRss, 200);
    log(`broker pid ${broker.pid} on 127.0.0.1:${broker.port} (${opts.runtime}), log dir ${logDir}`);

    // ---- setup: what the broker advertises, the pool topics, the round-trip topic ----
    const admin = await WireClient.connect(broker.port);
    const av = await admin.request(ApiVersionsApi, 3, { clientSoftwareName: "strand-fuzz", clientSoftwareVersion: "1" });
    const advertised = (av.apiKeys as { apiKey: number; minVersion: number; maxVersion: number }[]).map((a) => ({ apiKey: a.apiKey, min: a.minVersion, max: a.maxVersion } as Advertised));
    const topicSpecs: [string, number, Record<string, string>][] = [
      // Small segments: rolling, retention and (on the compacted topic) the cleaner run over
      // whatever the fuzzed produces got appended, as start-up recovery does after the restart.
      [pools.topics[0], 3, { "segment.bytes": "262144", "retention.bytes": "1048576", "file.delete.delay.ms": "1000" }],
      [pools.topics[1], 1, {}],
      [pools.topics[2], 2, { "cleanup.policy": "compact", "segment.bytes": "65536", "min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "1000", "file.delete.delay.ms": "1000" }],
      [pools.topics[3], 1, { "message.timestamp.type": "LogAppendTime" }],
      // Overrides pin what the fuzzer may change broker-wide, so the round trip tests the broker,
      // not a config a fuzzed AlterConfigs set (a broker-wide compression.type of gzip, say, is
      // applied: the round trip's batch would come back recompressed).
      [rtTopic, 1, { "min.insync.replicas": "1", "max.message.bytes": "1048588", "retention.ms": "-1", "cleanup.policy": "delete", "message.timestamp.type": "CreateTime", "compression.type": "producer" }],
    ];
    for (const [name, partitions, configs] of topicSpecs) {
      const r = await createTopic(admin, name, { numPartitions: partitions, configs });
      if (r.errorCode !== 0) throw new Error(`creating ${name}: error ${r.errorCode} ${r.errorMessage}`);
    }
    for (const [name, partitions] of topicSpecs) {
      for (let p = 0; p < partitions; p++) {
        const key = name === pools.topics[2] ? "k" : undefined;
        for (let tries = 0; ; tries++) {
          const r = await produce(admin, name, p, buildBatch([{ key, value: "seed" }]));
          if (r.errorCode === 0) break;
          if (tries > 100) throw new Error(`${name}-${p} has no leader: error ${r.errorCode}`);
          await sleep(100);
        }
      }
    }
    admin.close();
    result.rssStartMb = Math.round(broker.rssKb() / 1024);

    let rtCount = 0;
    const roundTrip = async (at: string) => {
      const value = `rt-${tag}-${rtCount++}-${Date.now()}`;
      let c: WireClient | null = null;
      try {
        c = await withTimeout(WireClient.connect(broker.port), 10_000, "connect");
        // A retriable error (a leader not yet elected after a restart) is retried for a while.
        let pr = await withTimeout(produce(c, rtTopic, 0, buildBatch([{ key: "k", value }])), roundTripTimeoutMs, "produce");
        for (let tries = 0; pr.errorCode !== 0 && tries < 100; tries++) {
          await sleep(100);
          pr = await withTimeout(produce(c, rtTopic, 0, buildBatch([{ key: "k", value }])), roundTripTimeoutMs, "produce");
        }
        if (pr.errorCode !== 0) throw new Error(`produce answered error ${pr.errorCode} ${pr.errorMessage ?? ""}`);
        const fr = await withTimeout(fetchOnce(c, rtTopic, 0, pr.baseOffset), roundTripTimeoutMs, "fetch");
        if (fr.errorCode !== 0) throw new Error(`fetch answered error ${fr.errorCode}`);
        const got = parseBatches(fr.records ?? new Uint8Array(0)).flatMap((b) => b.records).find((r) => r.offset === pr.baseOffset);
        const text = got?.value ? dec.decode(got.value) : null;
        if (text !== value) throw new Error(`fetched ${JSON.stringify(text)} at offset ${pr.baseOffset}, produced ${JSON.stringify(value)}`);
        result.roundTrips.push({ at, ok: true, detail: `offset ${pr.baseOffset}` });
      } catch (e) {
        result.roundTrips.push({ at, ok: false, detail: (e as Error).message });
        log(`ROUND TRIP FAILED at ${at}: ${(e as Error).message}`);
      } finally {
        c?.close();
      }
    };
    await roundTrip("before fuzzing");

    // ---- main phase ----
    const mainStart = Date.now();
    const cpuStart = broker.cpuSeconds();
    const ownCpuStart = process.cpuUsage();
    const target = opts.onlySession !== undefined ? Infinity : opts.frames;
    let nextSession = opts.onlySession ?? 0;
    let nextCheck = target / 5;
    const checks: Promise<void>[] = [];
    let lastProgress = Date.now();

    const runSession = async (session: number, staleControl: boolean, onlyKeys?: number[]): Promise<number> => {
      const planner = new SessionPlanner(streamSeed(opts.seed, session), { advertised, pools, staleControl, onlyKeys });
      const rng = planner.rng;
      let conn: FuzzConnection;
      try {
        conn = await FuzzConnection.open(broker.port);
      } catch (e) {
        if (!broker.alive) return 0;
        throw e;
      }
      result.sessions++;
      // Kept for the last 256 sessions (error lines come right after the frame); a port is reused.
      sessionsByPort.set(conn.localPort, { session, conn });
      recentPorts.push({ port: conn.localPort, session });
      if (recentPorts.length > 256) {
        const old = recentPorts.shift()!;
        if (sessionsByPort.get(old.port)?.session === old.session) sessionsByPort.delete(old.port);
      }
      const windows = rng.range(1, 8);
      try {
        for (let w = 0; w < windows && !conn.closed; w++) {
          const frames: PlannedFrame[] = [];
          // A first window is short: many connections end at their first hostile frame, and what
          // follows a closing frame is generated and sent for nothing.
          const n = w === 0 ? rng.range(2, 12) : rng.range(2, 40);
          for (let i = 0; i < n; i++) frames.push(planner.frame(false));
          const hostile = rng.weighted([[35, 0], [40, 1], [18, 2], [7, 3]] as const);
          let poison: PlannedFrame | null = null;
          for (let i = 0; i < hostile; i++) {
            const f = planner.frame(true);
            if (f.poisonsStream) {
              poison = f;
              break;
            }
            frames.push(f);
          }
          const sentinel = planner.sentinel();
          frames.push(sentinel);
          for (const f of frames) {
            bump(result.kindCounts, f.kind);
            bump(result.apiCounts, `${f.apiKey}`);
          }
          result.framesSent += frames.length;
          const t0 = Date.now();
          await conn.send(frames, rng);
          const ok = await conn.waitFor(() => conn.answered(sentinel.correlationId), windowWaitMs);
          if (process.env.FUZZ_DEBUG && Date.now() - t0 > 300) log(`slow window ${Date.now() - t0} ms session ${session}: ${frames.map((f) => `${f.kind === "valid" ? "" : f.kind + ":"}${f.apiKey}v${f.version}`).join(" ")}`);
          if (!ok && !conn.closed) {
            result.windowsAbandoned.push({ session, what: frames.slice(-hostile - 2).map((f) => `${f.kind}:${f.apiKey}v${f.version}`).join(",") });
            conn.close();
            break;
          }
          if (poison !== null && !conn.closed) {
            bump(result.kindCounts, poison.kind);
            bump(result.apiCounts, `${poison.apiKey}`);
            result.framesSent++;
            await conn.send([poison], rng);
            // The broker closes at once for a size outside its bounds; otherwise it waits for
            // bytes that will not come (or get a few more), and this side gives up.
            // Now and then a large part of a large frame (the broker holds it until the close).
            if (rng.chance(0.5)) await conn.sendRaw(rng.bytes(rng.chance(0.05) ? rng.range(64 << 10, 2 << 20) : rng.range(1, 3000)));
            await conn.waitFor(() => false, rng.range(1, 50));
            if (!conn.closed) conn.delivered++;
            break;
          }
        }
      } finally {
        if (conn.closedByPeer) result.closedByBroker++;
        conn.close();
      }
      return conn.delivered;
    };

    const worker = async () => {
      while (delivered < target && broker.alive) {
        const session = nextSession++;
        // Sessions from 1e9 up are the control phase's (a replay with --session names one).
        const d = session >= controlSessionBase ? await runSession(session, false, [4, 5, 6, 7]) : await runSession(session, true);
        delivered += d;
        result.framesDelivered = delivered;
        if (delivered >= nextCheck && nextCheck < target) {
          nextCheck += target / 5;
          checks.push(roundTrip(`${delivered} frames`));
        }
        if (Date.now() - lastProgress > 5_000) {
          lastProgress = Date.now();
          sampleRss();
          log(`${delivered} frames delivered in ${result.sessions} sessions, ${((Date.now() - mainStart) / 1000).toFixed(1)} s, RSS peak ${result.rssPeakMb} MB`);
        }
        if (opts.onlySession !== undefined) break;
      }
    };
    await Promise.all(Array.from({ length: opts.onlySession !== undefined ? 1 : (opts.connections ?? 8) }, worker));
    await Promise.all(checks);
    result.mainPhaseMs = Date.now() - mainStart;
    result.mainPhaseBrokerCpuS = broker.cpuSeconds() - cpuStart;
    const cpu = process.cpuUsage(ownCpuStart);
    log(`main phase: fuzzer CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s, broker CPU ${result.mainPhaseBrokerCpuS.toFixed(1)} s, wall ${(result.mainPhaseMs / 1000).toFixed(1)} s`);
    if (!broker.alive) throw new Error("broker died");
    await roundTrip("after fuzzing");

    // ---- control phase: controller requests with any values (see wire.test.ts) ----
    const controlTarget = opts.onlySession !== undefined ? 0 : (opts.controlFrames ?? Math.ceil(opts.frames / 50));
    let controlDelivered = 0;
    let controlSession = controlSessionBase;
    while (controlDelivered < controlTarget && broker.alive) {
      const batch = await Promise.all([0, 1, 2].map(() => runSession(controlSession++, false, [4, 5, 6, 7])));
      controlDelivered += batch.reduce((a, b) => a + b, 0);
    }
    result.controlFramesDelivered = controlDelivered;
    if (!broker.alive) throw new Error("broker died in the control phase");
    // Still serving: a fresh connection is answered.
    let probe: WireClient | null = null;
    try {
      probe = await withTimeout(WireClient.connect(broker.port), 10_000, "connect after the control phase");
      await withTimeout(probe.request(ApiVersionsApi, 3, { clientSoftwareName: "strand-fuzz", clientSoftwareVersion: "1" }), roundTripTimeoutMs, "ApiVersions after the control phase");
      await withTimeout(probe.request(MetadataApi, 1, { topics: null }), roundTripTimeoutMs, "Metadata after the control phase");
    } catch (e) {
      result.probeAfterControl = (e as Error).message;
      log(`PROBE AFTER THE CONTROL PHASE FAILED: ${(e as Error).message}`);
    } finally {
      probe?.close();
    }
    sampleRss();
    result.rssEndMb = Math.round(broker.rssKb() / 1024);

    // ---- a clean stop, and a start on the same dir with everything that was accepted ----
    log(`control phase done at ${((Date.now() - started) / 1000).toFixed(1)} s; stopping the broker`);
    result.stopStatus = await broker.stop();
    log(`broker stopped with status ${result.stopStatus}; starting it again on the same dir`);
    try {
      await broker.start();
      await roundTrip("after restart");
      result.restartOk = result.roundTrips[result.roundTrips.length - 1].ok;
    } catch (e) {
      result.restartOk = false;
      log(`RESTART FAILED: ${(e as Error).message}`);
    }
    log(`restart checked at ${((Date.now() - started) / 1000).toFixed(1)} s`);
    await broker.stop();
  } catch (e) {
    if (!broker.alive) result.unexpectedExit = `broker exited with status ${broker.exitStatus}: ${(e as Error).message}`;
    else throw e;
  } finally {
    if (rssTimer !== null) clearInterval(rssTimer);
    broker.kill();
    result.stderr = broker.stderr.slice(-4000);
    result.durationMs = Date.now() - started;
    rmSync(logDir, { recursive: true, force: true });
  }
  return result;
}

/** A short human summary of a run. */
export function summarize(r: FuzzResult): string {
  const lines = [
    `fuzz seed ${r.seed} (${r.runtime}): ${r.framesDelivered} frames delivered (${r.framesSent} sent) in ${r.sessions} sessions, ` +
    `${r.closedByBroker} closed by the broker; main phase ${(r.mainPhaseMs / 1000).toFixed(1)} s ` +
    `(${Math.round(r.framesDelivered / (r.mainPhaseMs / 1000))} frames/s, broker CPU ${r.mainPhaseBrokerCpuS.toFixed(1)} s); total ${(r.durationMs / 1000).toFixed(1)} s`,
    `control phase: ${r.controlFramesDelivered} frames; RSS start ${r.rssStartMb} MB, peak ${r.rssPeakMb} MB, end ${r.rssEndMb} MB; ` +
    `stop status ${r.stopStatus}; restart ${r.restartOk}`,
    `round trips: ${r.roundTrips.map((t) => `${t.at}: ${t.ok ? "ok" : "FAILED " + t.detail}`).join("; ")}`,
    `windows abandoned (no answer in ${windowWaitMs / 1000} s): ${r.windowsAbandoned.length}${r.windowsAbandoned.length ? " " + JSON.stringify(r.windowsAbandoned.slice(0, 5)) : ""}`,
    `frame kinds: ${JSON.stringify(r.kindCounts)}`,
    `record batch kinds (generated, this process): ${JSON.stringify(batchKindCounts)}`,
    `warn lines: ${JSON.stringify(Object.entries(r.warnCounts).sort((a, b) => b[1] - a[1]).slice(0, 12))}`,
  ];
  if (r.unexpectedExit) lines.push(`BROKER EXITED: ${r.unexpectedExit}`);
  if (r.stderr.trim()) lines.push(`broker stderr: ${r.stderr.slice(-1500)}`);
  for (const e of r.errorLines) {
    const where = e.session === null
      ? "no session named (not tied to a connection, or the restart)"
      : `session ${e.session}; replay: npm run fuzz -- --runtime ${r.runtime} --seed ${r.seed} --session ${e.session}`;
    lines.push(`ERROR-LEVEL LINE x${e.count} (first after ~${e.atDelivered} frames, ${where}):`);
    lines.push(`  ${e.line.slice(0, 1500)}`);
    for (const f of e.lastFrames) lines.push(`  last frame: ${f}`);
  }
  return lines.join("\n");
}
