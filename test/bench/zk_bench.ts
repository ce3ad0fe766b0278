// ZooKeeper client benchmark, run by Bun and by Deno (`npm run bench:zk` runs it under both):
//   bun test/bench/zk_bench.ts [--get-ops 100000] [--set-ops 20000] [--window 500] [--bytes 100]
//                              [--rounds 3] [--force-sync yes|no]
//
// One standalone ZooKeeper 3.8 (Debian package zookeeper) on a free port, started here and
// stopped at the end. Against it, one client each, pipelined (--window requests outstanding):
//   getData  of one --bytes node, --get-ops per round
//   setData  of that node, --set-ops per round (each a transaction: ZooKeeper logs it, and with
//            --force-sync yes, its default, fsyncs the log per group commit, so this measures the
//            server's disk as much as the client)
// for strand's client (src/zk) in this runtime, and for the reference: ZooKeeper's own Java client
// through its async API, same window (test/bench/java/ZkBench.java, after a JIT warm-up). zkCli.sh
// is no reference here: it runs one command per JVM. Median of --rounds rounds; the two clients
// alternate within each round, so both see the same machine and server.
// The last line of output is `RESULT <json>` for the driver.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { loadPlatform } from "../../src/platform/mod.ts";
import { ZooKeeperClient } from "../../src/zk/mod.ts";
import { startZooKeeper } from "../helpers/zookeeper.ts";

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

const getOps = Number(arg("get-ops", "100000"));
const setOps = Number(arg("set-ops", "20000"));
const window = Number(arg("window", "500"));
const bytes = Number(arg("bytes", "100"));
const rounds = Number(arg("rounds", "3"));
const forceSync = arg("force-sync", "yes");
const runtime = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined" ? "deno" : "bun";
const javaBench = join(new URL(".", import.meta.url).pathname, "java", "ZkBench.java");

/** ops requests of op, window at a time; returns operations per second. */
async function pipelined(ops: number, op: () => Promise<unknown>): Promise<number> {
  let issued = 0;
  const worker = async () => {
    while (issued < ops) {
      issued++;
      await op();
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: Math.min(window, ops) }, worker));
  return ops / ((performance.now() - start) / 1000);
}

function java(connect: string, op: "get" | "set", ops: number): number {
  const r = spawnSync("java", ["-cp", "/usr/share/java/zookeeper.jar", javaBench, connect, op, String(ops), String(window), "/bench", String(bytes)], {
    encoding: "utf8",
    timeout: 600_000,
  });
  const m = /^OPS ([\d.E]+)$/m.exec(r.stdout ?? "");
  if (m === null) throw new Error(`java bench failed: ${r.stdout}${r.stderr}`);
  return Number(m[1]);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

const server = await startZooKeeper({ tickTimeMs: 2000, extraConfig: [`forceSync=${forceSync}`], quickStart: false });
const platform = await loadPlatform();
try {
  const client = await ZooKeeperClient.connect(platform, { connectString: server.connectString, sessionTimeoutMs: 30_000 });
  const data = new Uint8Array(bytes).fill(7);
  await client.create("/bench", data);
  // Warm-up, as the Java side gets: a tenth of each.
  await pipelined(getOps / 10, () => client.getData("/bench"));
  await pipelined(setOps / 10, () => client.setData("/bench", data));
  const results = { get: [] as number[], set: [] as number[], javaGet: [] as number[], javaSet: [] as number[] };
  for (let round = 1; round <= rounds; round++) {
    results.get.push(await pipelined(getOps, () => client.getData("/bench")));
    results.javaGet.push(java(server.connectString, "get", getOps));
    results.set.push(await pipelined(setOps, () => client.setData("/bench", data)));
    results.javaSet.push(java(server.connectString, "set", setOps));
    console.log(
      `${runtime} round ${round}: getData ${fmt(results.get.at(-1)!)}/s (java ${fmt(results.javaGet.at(-1)!)}/s), ` +
        `setData ${fmt(results.set.at(-1)!)}/s (java ${fmt(results.javaSet.at(-1)!)}/s)`,
    );
  }
  await client.close();
  const summary = {
    runtime,
    window,
    bytes,
    forceSync,
    getOps,
    setOps,
    get: median(results.get),
    javaGet: median(results.javaGet),
    set: median(results.set),
    javaSet: median(results.javaSet),
  };
  console.log(`RESULT ${JSON.stringify(summary)}`);
} finally {
  await server.destroy();
}
