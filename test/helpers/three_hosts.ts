// Three hosts as the seeds lay them out, for test/cluster/three_hosts.test.ts: each a network
// namespace (test/helpers/netns.ts) with /data1 under its own root, laid out by
// `systemd/install.sh --root <host root> --zookeeper-ensemble h1,h2,h3 --zookeeper-id i`, running
// one server of the ZooKeeper ensemble and one strand broker (broker.id i) from that layout:
//
// - ZooKeeper runs the installed zoo.cfg and myid, with two test-only changes in a copy beside it
//   (zoo-test.cfg): dataDir under the host's root, and a 500 ms tick so sessions and limits are
//   seconds, not tens of seconds.
// - The broker runs the installed binary (a stand-in script that execs this runtime on
//   src/cli/main.ts) with the installed server.properties; --override puts log.dirs under the
//   host's root and shortens the timeouts.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cluster, currentRuntime, defaultOverrides } from "./cluster.ts";
import { NetHosts } from "./netns.ts";
import { sleep, ZkServer } from "./zookeeper.ts";
import { run } from "./tools.ts";

const repo = new URL("../../", import.meta.url).pathname;
export const zkTickMs = 500;

export interface ThreeHosts {
  dir: string;
  net: NetHosts;
  zk: ZkServer[];
  cluster: Cluster;
  /** Host i's root (what install.sh --root got). */
  hostRoot(i: number): string;
  /** Everything stopped and removed (the dir kept when keep). */
  destroy(keep?: boolean): Promise<void>;
}

function props(text: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (t === "" || t.startsWith("#")) continue;
    const i = t.indexOf("=");
    m.set(t.slice(0, i), t.slice(i + 1));
  }
  return m;
}

export async function startThreeHosts(opts: { sessionTimeoutMs: number; overrides: Record<string, string> }): Promise<ThreeHosts> {
  const dir = mkdtempSync(join(tmpdir(), "strand-3hosts-"));
  const net = NetHosts.create(3);
  const zk: ZkServer[] = [];
  let cluster: Cluster | null = null;
  const hostRoot = (i: number) => join(dir, `host${i}`);
  const destroy = async (keep = false) => {
    await cluster?.stop({ keep: true });
    if (keep) for (const [i, z] of zk.entries()) writeFileSync(join(dir, `zookeeper-${i + 1}.log`), z.logTail(3000));
    await Promise.all(zk.map((z) => z.kill()));
    net.destroySync();
    if (!keep) rmSync(dir, { recursive: true, force: true });
  };
  try {
    const binary = join(dir, "strand-stand-in");
    const bin = join(repo, "node_modules/.bin", currentRuntime);
    const main = join(repo, "src/cli/main.ts");
    writeFileSync(binary, currentRuntime === "bun" ? `#!/bin/sh\nexec '${bin}' '${main}' "$@"\n` : `#!/bin/sh\nexec '${bin}' run -A --no-check '${main}' "$@"\n`);
    chmodSync(binary, 0o755);
    const ensemble = [1, 2, 3].map((i) => net.addr(i)).join(",");
    const specs = [];
    for (let i = 1; i <= 3; i++) {
      const root = hostRoot(i);
      mkdirSync(join(root, "data1"), { recursive: true });
      const r = await run("bash", [join(repo, "systemd/install.sh"), "--root", root, "--binary", binary, "--broker-id", String(i), "--disks", "/data1",
        "--listeners", `PLAINTEXT://${net.addr(i)}:9092`, "--admin-listeners", `http://${net.addr(i)}:9644`,
        "--zookeeper-ensemble", ensemble, "--zookeeper-id", String(i)], { timeoutMs: 30_000 });
      if (r.code !== 0) throw new Error(`install.sh on host ${i} exited ${r.code}: ${r.stdout}${r.stderr}`);
      const cfgDir = join(root, "etc/strand/zookeeper");
      const zoo = readFileSync(join(cfgDir, "zoo.cfg"), "utf8");
      const dataDir = root + props(zoo).get("dataDir")!;
      writeFileSync(join(cfgDir, "zoo-test.cfg"), zoo.replace(/^dataDir=.*$/m, `dataDir=${dataDir}`).replace(/^tickTime=.*$/m, `tickTime=${zkTickMs}`));
      zk.push(await ZkServer.create(Number(props(zoo).get("clientPort")), {
        installed: { cfgPath: join(cfgDir, "zoo-test.cfg"), dataDir },
        host: net.addr(i),
        prefix: net.exec(i),
      }));
      const server = props(readFileSync(join(root, "etc/strand/server.properties"), "utf8"));
      const logDir = root + server.get("log.dirs")!;
      const overrides: Record<string, string> = { ...defaultOverrides(opts.sessionTimeoutMs), ...opts.overrides, "log.dirs": logDir };
      specs.push({
        id: Number(server.get("broker.id")),
        host: net.addr(i),
        port: 9092,
        adminPort: 9644,
        logDir,
        command: [...net.exec(i), join(root, "usr/local/bin/strand"), "serve", "--config", join(root, "etc/strand/server.properties"), "--log-level", "info",
          ...Object.entries(overrides).flatMap(([k, v]) => ["--override", `${k}=${v}`])],
      });
    }
    await Promise.all(zk.map((z) => z.launch()));
    await Promise.all(zk.map((z) => z.waitServing(60_000)));
    const connect = props(readFileSync(join(hostRoot(1), "etc/strand/server.properties"), "utf8")).get("zookeeper.connect")!;
    const chroot = connect.slice(connect.indexOf("/"));
    cluster = await Cluster.attach(dir, connect.slice(0, connect.indexOf("/")), chroot, opts.sessionTimeoutMs, specs);
    return { dir, net, zk, cluster, hostRoot, destroy };
  } catch (e) {
    await destroy(true);
    throw new Error(`three hosts did not start (files kept in ${dir}): ${(e as Error).message}`);
  }
}

/** Host i's ZooKeeper server started again on its data (after a kill). */
export async function relaunchZk(h: ThreeHosts, i: number): Promise<void> {
  const z = h.zk[i - 1];
  await z.kill();
  await z.launch();
}

/** Waits until every ZooKeeper server is leader or follower again. */
export async function waitQuorum(h: ThreeHosts, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const modes = await Promise.all(h.zk.map((z) => z.mode()));
    if (modes.every((m) => m === "leader" || m === "follower")) return;
    if (Date.now() > deadline) throw new Error(`ZooKeeper ensemble not whole within ${timeoutMs} ms: modes ${modes.join(",")}`);
    await sleep(200);
  }
}
