// A real cluster for the tests under test/cluster/ and the cluster benchmark: one dedicated
// ZooKeeper 3.8 (Debian package zookeeper; short tick so sessions expire in seconds) and N broker
// PROCESSES started through the CLI (`strand serve --override ...`) under the runtime running the
// test (bun under `bun test`, deno under `deno test`), on 127.0.0.1.
//
// - Ports (Kafka listener and admin HTTP) and log dirs are chosen once, at start: a restarted
//   broker comes back with the same broker.id, port and log dir, as a real host would.
// - Broker i has broker.id i. Its stdout and stderr (pino JSON lines) are appended to
//   <dir>/broker-<i>.out across restarts, with the harness's own lines ("=== harness: ...")
//   between runs; <dir>/harness.log records every kill, start and wait, with times.
// - Every broker runs under a small sh wrapper holding a pipe from this process: if the test
//   process dies, the pipe closes and the wrapper SIGKILLs its broker, so no broker outlives a
//   crashed test run. Signals go straight to the broker's pid (process.kill(pid, sig)); Deno's
//   ChildProcess.kill reports a handled SIGTERM oddly, and the wrapper must not be hit.
// - Everything is bounded in time; stop() kills every process and removes the dir (kept when a
//   test fails: withCluster prints its path and the tails of the broker logs).
//
// The harness reads the truth from ZooKeeper (partition state znodes, /controller, /brokers/ids)
// through strand's own ZooKeeper client, and each broker's local view through its admin HTTP API
// (GET /v1/topics/{t}/partitions: leader, ISR, local log end offset and high watermark).
import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { loadPlatform } from "../../src/platform/mod.ts";
import { type ZkStat, ZooKeeperClient } from "../../src/zk/mod.ts";
import { freePort, sleep, startZooKeeper, type ZkServer } from "./zookeeper.ts";

export { skipUnlessZooKeeper } from "./zookeeper.ts";

const root = new URL("../../", import.meta.url).pathname;
export type Runtime = "bun" | "deno";
export const currentRuntime: Runtime = (globalThis as { Deno?: unknown }).Deno !== undefined ? "deno" : "bun";

/** The broker's start-up bound: recovery of a small log, registration, controller election. */
const brokerStartMsMax = 60_000;
/** How long a SIGTERMed broker may take to stop (controlled shutdown included). */
const brokerStopMsMax = 60_000;
const dec = new TextDecoder();

export type Signal = "SIGKILL" | "SIGTERM" | "SIGSTOP" | "SIGCONT";

export interface ClusterOptions {
  /** Broker config for every broker (on top of the harness's defaults below). */
  overrides?: Record<string, string>;
  /** Extra config for one broker. */
  brokerOverrides?: (id: number) => Record<string, string>;
  /** zookeeper.session.timeout.ms of the brokers (default 6000). */
  sessionTimeoutMs?: number;
  /** Runtime the brokers run under (default: the one running this code). */
  runtime?: Runtime;
  /** --log-level of the brokers (default info). */
  logLevel?: string;
  /** Prefix of the temp dir's name. */
  label?: string;
  /** The security protocol of the brokers' one listener (default PLAINTEXT); its name is the same. */
  listenerProtocol?: "PLAINTEXT" | "SASL_PLAINTEXT" | "SSL" | "SASL_SSL";
  /**
   * A second PLAINTEXT listener, BROKER, on its own port, as inter.broker.listener.name: the
   * brokers talk to each other there, and clients (the broker's `port`) on the first one.
   */
  interBrokerListener?: boolean;
  /** Flags for the runtime before the script (a bench's profiler: Bun's --cpu-prof, Deno's --v8-flags). */
  runtimeArgs?: string[];
}

/** Defaults for test clusters: no auto-created topics, quick session expiry and ISR shrink. */
export function defaultOverrides(sessionTimeoutMs: number): Record<string, string> {
  return {
    "zookeeper.session.timeout.ms": String(sessionTimeoutMs),
    "auto.create.topics.enable": "false",
    "num.partitions": "1",
    "log.segment.bytes": "1048576",
    "replica.lag.time.max.ms": "10000",
    "controlled.shutdown.retry.backoff.ms": "1000",
    "replica.high.watermark.checkpoint.interval.ms": "1000",
  };
}

export interface PartitionStateZk {
  leader: number;
  leaderEpoch: number;
  isr: number[];
  controllerEpoch: number;
  /** The state znode's version (Kafka's partition epoch / zkVersion). */
  partitionEpoch: number;
  /** zxid of the state's last write. */
  mzxid: bigint;
}

/** One partition as a broker's admin API shows it (GET /v1/topics/{t}/partitions). */
export interface AdminPartitionView {
  partition: number;
  leader: number | null;
  leader_epoch: number;
  replicas: number[];
  isr: number[];
  under_replicated: boolean;
  offline: boolean;
  local_replica: "online" | "offline" | null;
  log_start_offset: number | null;
  log_end_offset: number | null;
  high_watermark: number | null;
  size_bytes: number | null;
}

export interface ExitInfo {
  /** The wrapper's `wait` status: the exit code, or 128 + the signal number. */
  status: number;
  atMs: number;
}

export class ClusterBroker {
  private wrapper: ChildProcess | null = null;
  private pidValue = 0;
  private exitedPromise: Promise<ExitInfo> = Promise.resolve({ status: -1, atMs: 0 });
  private starts = 0;
  /** Set while the process is stopped with SIGSTOP. */
  paused = false;
  lastExit: ExitInfo | null = null;

  constructor(
    private readonly cluster: Cluster,
    readonly id: number,
    readonly port: number,
    readonly adminPort: number,
    readonly logDir: string,
    readonly logFile: string,
    private readonly args: string[],
    /** The address its listener and admin API are on (another host's, in test/helpers/netns.ts). */
    readonly host = "127.0.0.1",
  ) {}

  get pid(): number {
    return this.pidValue;
  }

  get alive(): boolean {
    return this.wrapper !== null;
  }

  get bootstrap(): string {
    return `${this.host}:${this.port}`;
  }

  get adminUrl(): string {
    return `http://${this.host}:${this.adminPort}`;
  }

  /** Resolves when the current process exits (at once when none runs). */
  get exited(): Promise<ExitInfo> {
    return this.exitedPromise;
  }

  /** Starts the process and resolves once its "broker started" line is logged. */
  async start(): Promise<void> {
    if (this.wrapper !== null) throw new Error(`broker ${this.id} is already running (pid ${this.pidValue})`);
    this.starts++;
    this.cluster.note(`broker ${this.id}: start #${this.starts}`);
    appendFileSync(this.logFile, `=== harness: start #${this.starts} at ${new Date().toISOString()}\n`);
    const from = statSync(this.logFile).size;
    // fd 3 keeps the pipe from this process; EOF on it (we stop, or we died) kills the broker.
    // The broker's output goes straight to the log file, never through this process.
    const script = `exec 3<&0; "$@" </dev/null >>'${this.logFile}' 2>&1 & pid=$!; echo "pid $pid"; ` +
      `(read -r _ <&3; kill -9 $pid 2>/dev/null) & watcher=$!; wait $pid; code=$?; echo "exit $code"; ` +
      `kill $watcher 2>/dev/null; exit 0`;
    const wrapper = spawn("sh", ["-c", script, "strand-broker", ...this.args], { cwd: root, stdio: ["pipe", "pipe", "ignore"] });
    this.wrapper = wrapper;
    let out = "";
    let resolvePid: (pid: number) => void;
    const pidKnown = new Promise<number>((r) => (resolvePid = r));
    this.exitedPromise = new Promise<ExitInfo>((resolve) => {
      wrapper.stdout!.on("data", (d: Uint8Array) => {
        out += dec.decode(d);
        const p = /^pid (\d+)$/m.exec(out);
        if (p) resolvePid(Number(p[1]));
        const e = /^exit (\d+)$/m.exec(out);
        if (e) this.onExit(wrapper, Number(e[1]), resolve);
      });
      // "close", not "exit": under Deno "exit" can come before the wrapper's last stdout line
      // ("exit N") has been read, which made a clean exit 0 look like -1.
      wrapper.on("close", () => this.onExit(wrapper, /^exit (\d+)$/m.exec(out) ? Number(/^exit (\d+)$/m.exec(out)![1]) : -1, resolve));
    });
    this.pidValue = await Promise.race([pidKnown, sleep(10_000).then(() => 0)]);
    if (this.pidValue === 0) {
      wrapper.stdin!.end();
      throw new Error(`broker ${this.id}: its wrapper did not report a pid`);
    }
    const deadline = Date.now() + brokerStartMsMax;
    let exitInfo: ExitInfo | null = null;
    void this.exitedPromise.then((e) => (exitInfo = e));
    for (let polls = 0; ; polls++) {
      const text = readFrom(this.logFile, from);
      if (/"msg":"broker started"/.test(text)) break;
      // Below --log-level info the line is not written: ask the admin API.
      if (polls % 5 === 4 && await this.ready()) break;
      if (exitInfo !== null) {
        throw new Error(`broker ${this.id} exited (status ${(exitInfo as ExitInfo).status}) before starting; ${this.logFile}:\n${tail(text, 30)}`);
      }
      if (Date.now() > deadline) {
        await this.kill("SIGKILL");
        throw new Error(`broker ${this.id} did not start within ${brokerStartMsMax} ms; ${this.logFile}:\n${tail(text, 30)}`);
      }
      await sleep(50);
    }
    this.cluster.note(`broker ${this.id}: started, pid ${this.pidValue}`);
  }

  /** GET /v1/status/ready answers 200 (started and registered). */
  async ready(): Promise<boolean> {
    try {
      const res = await fetch(`${this.adminUrl}/v1/status/ready`, { signal: AbortSignal.timeout(1_000) });
      await res.body?.cancel();
      return res.status === 200;
    } catch {
      return false;
    }
  }

  private onExit(wrapper: ChildProcess, status: number, resolve: (e: ExitInfo) => void): void {
    if (this.wrapper !== wrapper) return;
    this.wrapper = null;
    this.paused = false;
    const info = { status, atMs: Date.now() };
    this.lastExit = info;
    this.cluster.note(`broker ${this.id}: exited with status ${status}`);
    try {
      appendFileSync(this.logFile, `=== harness: exited with status ${status} at ${new Date().toISOString()}\n`);
    } catch {
      // the dir is being removed
    }
    wrapper.stdin!.end();
    resolve(info);
  }

  /**
   * Sends a signal. SIGKILL waits for the exit; SIGTERM does not (await `exited`, or use stop());
   * SIGSTOP/SIGCONT pause and resume the process without closing its sockets.
   */
  async kill(sig: Signal): Promise<void> {
    if (this.wrapper === null) throw new Error(`broker ${this.id} is not running`);
    this.cluster.note(`broker ${this.id}: ${sig}`);
    appendFileSync(this.logFile, `=== harness: ${sig} at ${new Date().toISOString()}\n`);
    if (sig === "SIGKILL" && this.paused) process.kill(this.pidValue, "SIGCONT"); // SIGKILL works on a stopped process anyway
    process.kill(this.pidValue, sig);
    if (sig === "SIGSTOP") this.paused = true;
    if (sig === "SIGCONT") this.paused = false;
    if (sig === "SIGKILL") await this.waitExit(10_000);
  }

  /** SIGTERM (a controlled shutdown) and waits for the exit; returns the exit status. */
  async stop(): Promise<number> {
    await this.kill("SIGTERM");
    return (await this.waitExit(brokerStopMsMax)).status;
  }

  async waitExit(timeoutMs: number): Promise<ExitInfo> {
    const e = await Promise.race([this.exitedPromise, sleep(timeoutMs).then(() => null)]);
    if (e === null) throw new Error(`broker ${this.id} (pid ${this.pidValue}) did not exit within ${timeoutMs} ms`);
    return e;
  }

  /** Ends the process whatever its state (used by Cluster.stop). */
  async forceStop(): Promise<void> {
    if (this.wrapper === null) return;
    try {
      if (this.paused) process.kill(this.pidValue, "SIGCONT");
      process.kill(this.pidValue, "SIGKILL");
    } catch {
      // gone already
    }
    this.wrapper?.stdin!.end();
    await Promise.race([this.exitedPromise, sleep(10_000)]);
  }

  /** The broker's log lines so far (every run). */
  output(): string {
    return readFrom(this.logFile, 0);
  }

  /** This broker's view of a topic's partitions through its admin API; null when it does not answer. */
  async adminPartitions(topic: string, timeoutMs = 3_000): Promise<AdminPartitionView[] | null> {
    if (this.wrapper === null || this.paused) return null;
    try {
      const res = await fetch(`${this.adminUrl}/v1/topics/${encodeURIComponent(topic)}/partitions`, { signal: AbortSignal.timeout(timeoutMs) });
      if (!res.ok) {
        await res.body?.cancel();
        return null;
      }
      return (await res.json()) as AdminPartitionView[];
    } catch {
      return null;
    }
  }
}

/** A broker someone else laid out, for Cluster.attach: where it listens and how to run it. */
export interface AttachedBroker {
  id: number;
  host: string;
  port: number;
  adminPort: number;
  logDir: string;
  /** The whole command line (e.g. `ip netns exec <ns> <installed binary> serve --config ...`). */
  command: string[];
}

export class Cluster {
  readonly brokers: ClusterBroker[] = [];
  private zkClient: ZooKeeperClient | null = null;
  private stopped = false;

  private constructor(
    readonly dir: string,
    /** The harness's own ZooKeeper; null when the caller runs ZooKeeper (Cluster.attach). */
    private readonly ownZk: ZkServer | null,
    readonly chroot: string,
    readonly sessionTimeoutMs: number,
    /** ZooKeeper's connect string without the chroot. */
    readonly zkConnect: string = ownZk?.connectString ?? "",
  ) {}

  get zk(): ZkServer {
    if (this.ownZk === null) throw new Error("this cluster's ZooKeeper is run by its caller");
    return this.ownZk;
  }

  /**
   * A cluster over brokers and a ZooKeeper the caller runs (test/helpers/netns.ts: one network
   * namespace per host): the harness starts the brokers with their command lines, one at a time,
   * and reads ZooKeeper at zkConnect + chroot. stop() ends the brokers, not ZooKeeper.
   */
  static async attach(dir: string, zkConnect: string, chroot: string, sessionTimeoutMs: number, specs: AttachedBroker[]): Promise<Cluster> {
    const cluster = new Cluster(dir, null, chroot, sessionTimeoutMs, zkConnect);
    try {
      for (const b of specs) {
        const logFile = join(dir, `broker-${b.id}.out`);
        appendFileSync(logFile, "");
        cluster.brokers.push(new ClusterBroker(cluster, b.id, b.port, b.adminPort, b.logDir, logFile, b.command, b.host));
      }
      cluster.note(`cluster: ${specs.length} attached brokers, ZooKeeper ${zkConnect}${chroot}, session ${sessionTimeoutMs} ms, dir ${dir}`);
      for (const b of cluster.brokers) await b.start();
      // As the brokers' own: a quorum lost for longer than the session must not end the test's session.
      cluster.zkClient = await ZooKeeperClient.connect(await loadPlatform(), { connectString: `${zkConnect}${chroot}`, sessionTimeoutMs: 20_000, expireWhenUnreachable: false });
      await cluster.waitFor(async () => (await cluster.liveBrokerIds()).length === specs.length, 30_000, `${specs.length} brokers registered`);
      await cluster.waitFor(async () => (await cluster.controllerId()) >= 0, 30_000, "a controller");
    } catch (e) {
      await cluster.stop({ keep: true });
      throw new Error(`cluster start failed (files kept in ${dir}): ${(e as Error).message}`);
    }
    return cluster;
  }

  /** Starts ZooKeeper and n brokers (ids 0..n-1), all serving; cleans up if any fails to start. */
  static async start(n: number, options: ClusterOptions = {}): Promise<Cluster> {
    const dir = mkdtempSync(join(tmpdir(), options.label ?? "strand-cluster-"));
    const sessionTimeoutMs = options.sessionTimeoutMs ?? 6_000;
    let zk: ZkServer;
    try {
      // Tick 200 ms: sessions may be as short as 400 ms; the ceiling is raised so a broker gets
      // the session timeout it asks for.
      zk = await startZooKeeper({ tickTimeMs: 200, extraConfig: ["maxSessionTimeout=60000"] });
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
    const cluster = new Cluster(dir, zk, "/strand", sessionTimeoutMs);
    try {
      const runtime = options.runtime ?? currentRuntime;
      const command = runtime === "bun"
        ? [join(root, "node_modules/.bin/bun"), ...options.runtimeArgs ?? [], join(root, "src/cli/main.ts"), "serve"]
        : [join(root, "node_modules/.bin/deno"), "run", "-A", "--no-check", ...options.runtimeArgs ?? [], join(root, "src/cli/main.ts"), "serve"];
      for (let id = 0; id < n; id++) {
        const port = await freePort();
        const adminPort = await freePort();
        const logDir = join(dir, `broker-${id}`, "data");
        mkdirSync(logDir, { recursive: true });
        const logFile = join(dir, `broker-${id}.out`);
        appendFileSync(logFile, "");
        const config: Record<string, string> = {
          ...defaultOverrides(sessionTimeoutMs),
          ...options.overrides,
          ...options.brokerOverrides?.(id),
          "broker.id": String(id),
          "log.dirs": logDir,
          "listeners": `${options.listenerProtocol ?? "PLAINTEXT"}://127.0.0.1:${port}`,
          "admin.listeners": `http://127.0.0.1:${adminPort}`,
          "zookeeper.connect": `${zk.connectString}${cluster.chroot}`,
        };
        if (options.interBrokerListener === true) {
          const client = options.listenerProtocol ?? "PLAINTEXT";
          config["listeners"] += `,BROKER://127.0.0.1:${await freePort()}`;
          config["listener.security.protocol.map"] = `${client}:${client},BROKER:PLAINTEXT`;
          config["inter.broker.listener.name"] = "BROKER";
        }
        const args = [...command, "--log-level", options.logLevel ?? "info", ...Object.entries(config).flatMap(([k, v]) => ["--override", `${k}=${v}`])];
        cluster.brokers.push(new ClusterBroker(cluster, id, port, adminPort, logDir, logFile, args));
      }
      cluster.note(`cluster: ${n} brokers under ${runtime}, ZooKeeper ${zk.connectString}${cluster.chroot}, session ${sessionTimeoutMs} ms, dir ${dir}`);
      // One at a time: the first creates the chroot and the cluster id; starting together on two
      // cores only makes each slower.
      for (const b of cluster.brokers) await b.start();
      cluster.zkClient = await ZooKeeperClient.connect(await loadPlatform(), {
        connectString: `${zk.connectString}${cluster.chroot}`,
        sessionTimeoutMs: 20_000,
      });
      await cluster.waitFor(async () => (await cluster.liveBrokerIds()).length === n, 30_000, `${n} brokers registered`);
      await cluster.waitFor(async () => (await cluster.controllerId()) >= 0, 30_000, "a controller");
    } catch (e) {
      await cluster.stop({ keep: true });
      throw new Error(`cluster start failed (files kept in ${dir}): ${(e as Error).message}`);
    }
    return cluster;
  }

  get bootstrap(): string {
    return this.brokers.map((b) => b.bootstrap).join(",");
  }

  /** bootstrap of the brokers running now. */
  get liveBootstrap(): string {
    return this.brokers.filter((b) => b.alive && !b.paused).map((b) => b.bootstrap).join(",");
  }

  broker(i: number): ClusterBroker {
    // Broker i is brokers[i], except in an attached cluster (ids as the caller chose them).
    const b = this.brokers[i]?.id === i ? this.brokers[i] : this.brokers.find((x) => x.id === i);
    if (b === undefined) throw new Error(`no broker ${i}`);
    return b;
  }

  /** A line in <dir>/harness.log, with the time since the epoch and an ISO stamp. */
  note(line: string): void {
    if (this.stopped) return;
    try {
      appendFileSync(join(this.dir, "harness.log"), `${new Date().toISOString()} ${line}\n`);
    } catch {
      // dir gone
    }
  }

  get harnessLog(): string {
    return join(this.dir, "harness.log");
  }

  private get zkc(): ZooKeeperClient {
    if (this.zkClient === null) throw new Error("the harness's ZooKeeper session is not open");
    return this.zkClient;
  }

  /**
   * Starts broker i again on its port and log dir. A running broker is stopped first with SIGTERM.
   * Waits until its old registration (/brokers/ids/<i>) is gone, as a restarted Kafka broker
   * would otherwise refuse to start while its previous session lives.
   */
  async restart(i: number): Promise<void> {
    const b = this.broker(i);
    if (b.alive) await b.stop();
    await this.waitFor(async () => !(await this.liveBrokerIds()).includes(i), this.sessionTimeoutMs + 15_000, `broker ${i}'s old registration to expire`);
    await b.start();
    await this.waitFor(async () => (await this.liveBrokerIds()).includes(i), 20_000, `broker ${i} registered`);
  }

  /** Polls cond every 100 ms until true; throws naming `what` after timeoutMs. Errors count as false. */
  async waitFor(cond: () => boolean | Promise<boolean>, timeoutMs: number, what = "condition"): Promise<void> {
    const t0 = Date.now();
    let lastError: unknown = null;
    for (;;) {
      if (this.stopped) throw new Error(`cluster stopped while waiting for ${what}`);
      try {
        if (await cond()) {
          this.note(`waited ${Date.now() - t0} ms for ${what}`);
          return;
        }
      } catch (e) {
        lastError = e;
      }
      if (Date.now() - t0 > timeoutMs) {
        this.note(`TIMEOUT after ${timeoutMs} ms waiting for ${what}`);
        const why = lastError === null ? "" : ` (last error: ${(lastError as Error).message})`;
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
      }
      await sleep(100);
    }
  }

  // ---- what ZooKeeper says -------------------------------------------------------------------

  async liveBrokerIds(): Promise<number[]> {
    const { children } = await this.zkc.getChildren("/brokers/ids");
    return children.map(Number).sort((a, b) => a - b);
  }

  /** The active controller's broker id, -1 when none. */
  async controllerId(): Promise<number> {
    try {
      const { data } = await this.zkc.getData("/controller");
      return (JSON.parse(dec.decode(data)) as { brokerid: number }).brokerid;
    } catch (e) {
      if ((e as { code?: string }).code === "NoNode") return -1;
      throw e;
    }
  }

  async controllerEpoch(): Promise<number> {
    return Number(dec.decode((await this.zkc.getData("/controller_epoch")).data));
  }

  /** The partition's state znode; null when it does not exist (yet). */
  async partitionState(topic: string, partition: number): Promise<PartitionStateZk | null> {
    try {
      const { data, stat } = await this.zkc.getData(`/brokers/topics/${topic}/partitions/${partition}/state`);
      const s = JSON.parse(dec.decode(data)) as { leader: number; leader_epoch: number; isr: number[]; controller_epoch: number };
      return { leader: s.leader, leaderEpoch: s.leader_epoch, isr: s.isr, controllerEpoch: s.controller_epoch, partitionEpoch: stat.version, mzxid: stat.mzxid };
    } catch (e) {
      if ((e as { code?: string }).code === "NoNode") return null;
      throw e;
    }
  }

  /** The partition's leader per ZooKeeper (the controller's decision); -1 when none or no state. */
  async leaderOf(topic: string, partition: number): Promise<number> {
    return (await this.partitionState(topic, partition))?.leader ?? -1;
  }

  /** The topic's assignment (/brokers/topics/<t>): partition → replicas; null when no such topic. */
  async assignment(topic: string): Promise<Map<number, number[]> | null> {
    try {
      const { data } = await this.zkc.getData(`/brokers/topics/${topic}`);
      const js = JSON.parse(dec.decode(data)) as { partitions: Record<string, number[]> };
      return new Map(Object.entries(js.partitions).map(([p, r]) => [Number(p), r]));
    } catch (e) {
      if ((e as { code?: string }).code === "NoNode") return null;
      throw e;
    }
  }

  async replicasOf(topic: string, partition: number): Promise<number[]> {
    const r = (await this.assignment(topic))?.get(partition);
    if (r === undefined) throw new Error(`${topic}-${partition} has no assignment`);
    return r;
  }

  async exists(path: string): Promise<boolean> {
    return (await this.zkc.exists(path)) !== null;
  }

  /** A znode's stat (zxids, versions); null when it does not exist. */
  async stat(path: string): Promise<ZkStat | null> {
    return await this.zkc.exists(path);
  }

  /** Waits until the partition has a live leader (other than `not`, when given); returns it. */
  async waitLeader(topic: string, partition: number, timeoutMs: number, not?: number): Promise<number> {
    let leader = -1;
    await this.waitFor(async () => {
      leader = await this.leaderOf(topic, partition);
      const b = leader >= 0 ? this.brokers.find((x) => x.id === leader) : undefined;
      return leader !== not && b !== undefined && b.alive && !b.paused;
    }, timeoutMs, `a leader for ${topic}-${partition}${not === undefined ? "" : ` other than ${not}`}`);
    return leader;
  }

  /**
   * Waits until every replica of the partition is in the ISR (per ZooKeeper), every replica's
   * broker reports the same log end offset, and the leader's high watermark equals it: the
   * replicas hold the same records, ready for a byte comparison.
   */
  async waitFullyReplicated(topic: string, partition: number, timeoutMs: number): Promise<{ leader: number; replicas: number[]; highWatermark: number }> {
    let result = { leader: -1, replicas: [] as number[], highWatermark: -1 };
    await this.waitFor(async () => {
      const replicas = await this.replicasOf(topic, partition);
      const state = await this.partitionState(topic, partition);
      if (state === null || state.leader < 0) return false;
      if (!replicas.every((r) => state.isr.includes(r))) return false;
      const views = await Promise.all(replicas.map(async (r) => (await this.broker(r).adminPartitions(topic))?.find((p) => p.partition === partition)));
      const leaderView = views[replicas.indexOf(state.leader)];
      if (leaderView === undefined || leaderView.log_end_offset === null || leaderView.high_watermark !== leaderView.log_end_offset) return false;
      if (!views.every((v) => v !== undefined && v.log_end_offset === leaderView.log_end_offset)) return false;
      result = { leader: state.leader, replicas, highWatermark: leaderView.high_watermark };
      return true;
    }, timeoutMs, `${topic}-${partition} fully replicated (ISR = replicas, equal log end offsets, HW = LEO)`);
    return result;
  }

  // ---- end ------------------------------------------------------------------------------------

  /** Kills every process; removes the dir unless keep. Idempotent. */
  async stop(opts: { keep?: boolean } = {}): Promise<void> {
    if (this.stopped) return;
    this.note(`cluster: stop${opts.keep ? " (files kept)" : ""}`);
    this.stopped = true;
    await Promise.all(this.brokers.map((b) => b.forceStop()));
    await this.zkClient?.close().catch(() => {});
    this.zkClient = null;
    if (opts.keep && this.ownZk !== null) {
      // Keep ZooKeeper's log next to the brokers' for the post-mortem.
      try {
        appendFileSync(join(this.dir, "zookeeper.log"), this.ownZk.logTail(2000));
      } catch {
        // no log
      }
    }
    await this.ownZk?.destroy();
    if (!opts.keep) rmSync(this.dir, { recursive: true, force: true });
  }

  /** The last lines of every broker's log and of harness.log, for a failure report. */
  postMortem(lines = 25): string {
    const parts = [`cluster files kept in ${this.dir}`, `--- ${this.harnessLog} (tail)`, tail(readFrom(this.harnessLog, 0), 40)];
    for (const b of this.brokers) parts.push(`--- ${b.logFile} (tail)`, tail(b.output(), lines));
    return parts.join("\n");
  }
}

/**
 * Runs a scenario on a fresh cluster within budgetMs. Whatever happens, every process is stopped.
 * On failure (or when the budget runs out) the files are kept and their paths and tails printed.
 */
export async function withCluster<T>(
  n: number,
  options: ClusterOptions & { budgetMs: number },
  body: (c: Cluster) => Promise<T>,
): Promise<T> {
  const cluster = await Cluster.start(n, options);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const budget = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`scenario exceeded its budget of ${options.budgetMs} ms`)), options.budgetMs);
  });
  try {
    const out = await Promise.race([body(cluster), budget]);
    await cluster.stop();
    return out;
  } catch (e) {
    cluster.note(`FAILED: ${(e as Error).stack ?? e}`);
    const report = cluster.postMortem();
    await cluster.stop({ keep: true });
    console.error(`\n${report}\n`);
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

// ---- files -------------------------------------------------------------------------------------

function readFrom(path: string, from: number): string {
  try {
    const buf = readFileSync(path);
    return dec.decode(buf.subarray(Math.min(from, buf.length)));
  } catch {
    return "";
  }
}

function tail(text: string, lines: number): string {
  return text.split("\n").slice(-lines - 1).join("\n");
}

/** A batch header as stored in a segment file. */
export interface StoredBatchHeader {
  baseOffset: number;
  lastOffset: number;
  partitionLeaderEpoch: number;
  crc: number;
  /** Segment file and byte position, for messages. */
  file: string;
  position: number;
  sizeBytes: number;
}

/**
 * Every complete batch header in a partition's segment files (<logDir>/<topic>-<p>/*.log, by base
 * offset), in file order. A partial batch at the end of a segment (a torn write) is left out.
 */
export function segmentBatches(logDir: string, topic: string, partition: number): StoredBatchHeader[] {
  const dir = join(logDir, `${topic}-${partition}`);
  if (!existsSync(dir)) return [];
  const out: StoredBatchHeader[] = [];
  const logs = readdirSync(dir).filter((f) => /^\d{20}\.log$/.test(f)).sort();
  for (const f of logs) {
    const file = join(dir, f);
    const b = readFileSync(file);
    // baseOffset int64 · batchLength int32 · partitionLeaderEpoch int32 · magic int8 · crc uint32 ·
    // attributes int16 · lastOffsetDelta int32 · ...; 61 bytes of header.
    for (let pos = 0; pos + 61 <= b.length;) {
      const size = 12 + b.readInt32BE(pos + 8);
      if (size < 61 || pos + size > b.length) break;
      const baseOffset = Number(b.readBigInt64BE(pos));
      out.push({
        baseOffset,
        lastOffset: baseOffset + b.readInt32BE(pos + 23),
        partitionLeaderEpoch: b.readInt32BE(pos + 12),
        crc: b.readUInt32BE(pos + 17),
        file,
        position: pos,
        sizeBytes: size,
      });
      pos += size;
    }
  }
  return out;
}

/** A partition's offset in one of a log dir's checkpoint files (Kafka's format); null when absent. */
export function checkpointOffset(logDir: string, file: string, topic: string, partition: number): number | null {
  const path = join(logDir, file);
  if (!existsSync(path)) return null;
  for (const line of readFileSync(path, "utf8").split("\n").slice(2)) {
    const [t, p, o] = line.trim().split(" ");
    if (t === topic && Number(p) === partition) return Number(o);
  }
  return null;
}

/**
 * Simulates losing a stopped replica's unflushed tail (a power failure): the segment holding the
 * batch that starts at `offset` is cut at that batch, keeping `tornBytes` bytes of it (a torn
 * write), and later segments (with their indexes) are removed. Index files are left as they are (recovery rebuilds
 * them). Only for a broker that is not running.
 */
export function cutReplicaLog(logDir: string, topic: string, partition: number, offset: number, tornBytes = 0): void {
  const batches = segmentBatches(logDir, topic, partition);
  const at = batches.find((b) => b.baseOffset === offset);
  if (at === undefined) throw new Error(`${topic}-${partition} in ${logDir}: no batch starts at ${offset}`);
  truncateSync(at.file, at.position + Math.min(tornBytes, at.sizeBytes - 1));
  const dir = join(logDir, `${topic}-${partition}`);
  const base = at.file.slice(-24, -4);
  for (const f of readdirSync(dir)) {
    const m = /^(\d{20})\.(log|index|timeindex)$/.exec(f);
    if (m && m[1] > base) rmSync(join(dir, f));
  }
}
