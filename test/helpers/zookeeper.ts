// Real ZooKeeper 3.8 for tests (Debian package `zookeeper`): a standalone server or a 3-server
// ensemble on free local ports, each with its own temporary data dir, started with the machine's
// java and stopped (data dirs removed) afterwards. Start-up is bounded in time.
//
// Each server runs under a small sh wrapper that holds the java process's pid and kills it when
// its stdin closes: if the test process dies, its pipes close and no JVM (nor data dir) is left.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const zookeeperJar = "/usr/share/java/zookeeper.jar";
/** slf4j-simple, when present, so the server's log lands in <dataDir>/zookeeper.log for post-mortems. */
const slf4jSimpleJar = "/usr/share/java/slf4j-simple.jar";
const startMsMax = 30_000;

function hasZooKeeper(): boolean {
  return existsSync(zookeeperJar) && spawnSync("java", ["-version"], { stdio: "ignore" }).status === 0;
}

/** The `skip` option for a test needing ZooKeeper: false when present, else the reason. */
export function skipUnlessZooKeeper(): string | false {
  if (hasZooKeeper()) return false;
  const why = "needs ZooKeeper 3.8 and java (Debian package zookeeper)";
  if (process.env.CI === "true") throw new Error(`CI=true and ${why} is missing: .ci/run must install it`);
  return why;
}

/** A port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Sends a four-letter-word command; resolves with the answer ("" when nothing answers). */
export function fourLetterWord(port: number, word: string, timeoutMs = 2_000, host = "127.0.0.1"): Promise<string> {
  return new Promise((resolve) => {
    const s = new Socket();
    let out = "";
    const done = () => {
      clearTimeout(timer);
      s.destroy();
      resolve(out);
    };
    const timer = setTimeout(done, timeoutMs);
    s.on("data", (d) => (out += d.toString()));
    s.on("end", done);
    s.on("error", done);
    s.connect(port, host, () => s.write(word));
  });
}

export interface ZkServerOptions {
  tickTimeMs?: number;
  /** Extra zoo.cfg lines (server.N entries for an ensemble). */
  extraConfig?: string[];
  /** myid for an ensemble member. */
  myid?: number;
  /**
   * JVM tuned for a quick start (the default, for tests: C1 only, small heap); false gives the
   * server the JVM's full JIT, as benchmarks want.
   */
  quickStart?: boolean;
  /**
   * A server laid out by someone else (systemd/install.sh --zookeeper-ensemble): its zoo.cfg and
   * dataDir (with myid) are used as they are, nothing is written.
   */
  installed?: { cfgPath: string; dataDir: string };
  /** The address its client port is on (default 127.0.0.1). */
  host?: string;
  /** Words before `java` (e.g. ip netns exec <ns>): the JVM runs inside that. */
  prefix?: string[];
}

export class ZkServer {
  private wrapper: ChildProcess | null = null;
  private javaPid = 0;

  private constructor(
    readonly port: number,
    readonly dataDir: string,
    private readonly cfgPath: string,
    private readonly quickStart: boolean,
    readonly host = "127.0.0.1",
    private readonly prefix: string[] = [],
  ) {}

  static async create(port: number, options: ZkServerOptions = {}): Promise<ZkServer> {
    if (options.installed !== undefined) {
      const { cfgPath, dataDir } = options.installed;
      return new ZkServer(port, dataDir, cfgPath, options.quickStart ?? true, options.host, options.prefix);
    }
    const dataDir = mkdtempSync(join(tmpdir(), "strand-zk-"));
    const cfg = [
      `tickTime=${options.tickTimeMs ?? 200}`,
      `dataDir=${dataDir}`,
      `clientPort=${port}`,
      "clientPortAddress=127.0.0.1",
      "admin.enableServer=false",
      "4lw.commands.whitelist=*",
      "initLimit=20",
      "syncLimit=10",
      "maxClientCnxns=0",
      ...(options.extraConfig ?? []),
    ];
    if (options.myid !== undefined) writeFileSync(join(dataDir, "myid"), `${options.myid}\n`);
    const cfgPath = join(dataDir, "zoo.cfg");
    writeFileSync(cfgPath, cfg.join("\n") + "\n");
    return new ZkServer(port, dataDir, cfgPath, options.quickStart ?? true);
  }

  get connectString(): string {
    return `${this.host}:${this.port}`;
  }

  get running(): boolean {
    return this.wrapper !== null;
  }

  /** Launches the JVM (data dir kept as is) and returns once it has started or failed to. */
  launch(): Promise<void> {
    mkdirSync(this.dataDir, { recursive: true });
    const classpath = [zookeeperJar, ...(existsSync(slf4jSimpleJar) ? [slf4jSimpleJar] : [])].join(":");
    const log = join(this.dataDir, "zookeeper.log");
    const java = [
      ...this.prefix,
      "java",
      ...(this.quickStart ? ["-Xms16m", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"] : ["-Xmx512m"]),
      "-Dorg.slf4j.simpleLogger.logFile=" + log,
      "-Dzookeeper.admin.enableServer=false",
      "-cp",
      classpath,
      "org.apache.zookeeper.server.quorum.QuorumPeerMain",
      this.cfgPath,
    ].map((a) => `'${a}'`).join(" ");
    // stdin says "keep" when kill() stops the server for a restart; EOF alone (the test process
    // died) also removes the data dir.
    const script = `${java} </dev/null >>'${log}' 2>&1 & pid=$!; echo $pid; read -r word; ` +
      `kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null; [ "$word" = keep ] || rm -rf '${this.dataDir}'`;
    const wrapper = spawn("sh", ["-c", script], { stdio: ["pipe", "pipe", "ignore"] });
    this.wrapper = wrapper;
    return new Promise((resolve, reject) => {
      wrapper.stdout!.once("data", (d: Buffer) => {
        this.javaPid = Number(d.toString().trim());
        resolve();
      });
      wrapper.once("error", reject);
    });
  }

  /** Waits until the server answers as standalone, leader or follower. */
  async waitServing(timeoutMs = startMsMax): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const srvr = await fourLetterWord(this.port, "srvr", 1_000, this.host);
      if (/Mode: (standalone|leader|follower)/.test(srvr)) return;
      await sleep(50);
    }
    throw new Error(`ZooKeeper on port ${this.port} not serving within ${timeoutMs} ms; log:\n${this.logTail()}`);
  }

  /** "standalone", "leader", "follower", or "" when it does not answer. */
  async mode(): Promise<string> {
    return /Mode: (\w+)/.exec(await fourLetterWord(this.port, "srvr", 1_000, this.host))?.[1] ?? "";
  }

  /** SIGKILL: as a crash; the data dir stays for a restart. */
  async kill(): Promise<void> {
    const wrapper = this.wrapper;
    if (wrapper === null) return;
    this.wrapper = null;
    try {
      process.kill(this.javaPid, "SIGKILL");
    } catch {
      // already gone
    }
    const exited = new Promise<void>((resolve) => {
      if (wrapper.exitCode !== null || wrapper.signalCode !== null) resolve();
      else wrapper.once("exit", () => resolve());
    });
    wrapper.stdin!.end("keep\n"); // the wrapper reaps java and exits, leaving the data dir
    await exited;
    await this.waitPortFree();
  }

  async restart(): Promise<void> {
    await this.kill();
    await this.launch();
  }

  /** SIGSTOP / SIGCONT: a server that hangs without closing its sockets. */
  /** SIGSTOP, returning once the kernel shows the JVM stopped (a loaded machine delivers it late). */
  pause(): void {
    process.kill(this.javaPid, "SIGSTOP");
    const deadline = Date.now() + 2_000;
    while (Date.now() < deadline) {
      try {
        // /proc/<pid>/stat: "pid (comm) S ...", S being T once stopped.
        const stat = readFileSync(`/proc/${this.javaPid}/stat`, "utf8");
        if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("T")) return;
      } catch {
        return; // no /proc: as before
      }
    }
  }

  resume(): void {
    process.kill(this.javaPid, "SIGCONT");
  }

  /** Kills the server and removes its data dir. */
  async destroy(): Promise<void> {
    try {
      this.resume();
    } catch {
      // not running
    }
    await this.kill();
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  logTail(lines = 40): string {
    try {
      return readFileSync(join(this.dataDir, "zookeeper.log"), "utf8").split("\n").slice(-lines).join("\n");
    } catch {
      return "(no log)";
    }
  }

  private async waitPortFree(): Promise<void> {
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      if ((await fourLetterWord(this.port, "ruok", 200, this.host)) === "") return;
      await sleep(20);
    }
  }
}

/** A standalone ZooKeeper on a free port, serving. */
export async function startZooKeeper(options: ZkServerOptions = {}): Promise<ZkServer> {
  const server = await ZkServer.create(await freePort(), options);
  await server.launch();
  try {
    await server.waitServing();
  } catch (e) {
    await server.destroy();
    throw e;
  }
  return server;
}

export interface ZkEnsemble {
  servers: ZkServer[];
  connectString: string;
  destroy(): Promise<void>;
}

/** n servers on local ports forming one ensemble, serving (a leader elected). */
export async function startEnsemble(n = 3, options: ZkServerOptions = {}): Promise<ZkEnsemble> {
  const ports: number[][] = [];
  for (let i = 0; i < n; i++) ports.push([await freePort(), await freePort(), await freePort()]);
  const members = ports.map(([, quorum, election], i) => `server.${i + 1}=127.0.0.1:${quorum}:${election}`);
  const servers: ZkServer[] = [];
  for (let i = 0; i < n; i++) {
    servers.push(await ZkServer.create(ports[i][0], { ...options, myid: i + 1, extraConfig: members }));
  }
  const ensemble = {
    servers,
    connectString: servers.map((s) => s.connectString).join(","),
    async destroy() {
      await Promise.all(servers.map((s) => s.destroy()));
    },
  };
  try {
    await Promise.all(servers.map((s) => s.launch()));
    await Promise.all(servers.map((s) => s.waitServing()));
  } catch (e) {
    await ensemble.destroy();
    throw e;
  }
  return ensemble;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * One server per test file, started on first use: `const zk = sharedZooKeeper();` then
 * `await zk.get()` in tests and `await zk.stop()` in the file's last test.
 */
export function sharedZooKeeper(options: ZkServerOptions = {}) {
  let started: Promise<ZkServer> | null = null;
  return {
    get(): Promise<ZkServer> {
      started ??= startZooKeeper(options);
      return started;
    },
    async stop(): Promise<void> {
      if (started === null) return;
      const s = await started.catch(() => null);
      started = null;
      await s?.destroy();
    },
  };
}

/**
 * A TCP proxy in front of a server, to cut a client off without touching the server: `block()`
 * drops every connection and refuses new ones (accepted, then closed at once) until `unblock()`.
 */
export interface TcpProxy {
  port: number;
  connectString: string;
  block(): void;
  unblock(): void;
  close(): Promise<void>;
}

export async function startProxy(targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let blocked = false;
  const server = createServer((client) => {
    if (blocked) return void client.destroy();
    const upstream = new Socket();
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    upstream.connect(targetPort, "127.0.0.1", () => {
      client.pipe(upstream);
      upstream.pipe(client);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    connectString: `127.0.0.1:${port}`,
    block() {
      blocked = true;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    unblock() {
      blocked = false;
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A fake server on a free port: `onConnection` gets each accepted socket, to answer with
 * garbage, silence or a scripted conversation.
 */
export async function startFakeServer(onConnection: (socket: Socket) => void): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on("error", () => {});
    s.on("close", () => sockets.delete(s));
    onConnection(s);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    port: (server.address() as { port: number }).port,
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
