#!/usr/bin/env node
// npm run bench:cluster [-- --records N --runtime bun|deno|both --session-timeout-ms MS]
//
// In one run, on this machine, with the brokers as processes on one real ZooKeeper
// (test/helpers/cluster.ts; Debian packages zookeeper and kcat):
//   1. produce throughput, N records of 100 bytes (default 1,000,000) into one partition with kcat
//      (librdkafka, so the client is not the bottleneck): acks=1 on a one-broker cluster (RF 1),
//      then acks=all on a three-broker cluster (RF 3, min.insync.replicas 2), and their ratio;
//   2. failover: a kafkajs producer (acks=all, one record per request, no retries, 20 ms back-off)
//      writes to an RF 3 partition; the leader is killed with SIGKILL, and the time from the kill
//      to the new leader in ZooKeeper and to the first acknowledged write (sent after the kill) is
//      printed; the same for SIGTERM (controlled shutdown). After SIGKILL the controller only
//      learns of the death when the broker's ZooKeeper session expires, so that figure is about
//      zookeeper.session.timeout.ms (printed with it; Kafka's default is 18000, the harness's 6000).
//
// Run by node, this file starts itself again under Bun and/or Deno (the brokers run under the
// same runtime), since it uses the TypeScript harness.
import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const g = globalThis;
const underNode = g.Bun === undefined && g.Deno === undefined;
const root = fileURLToPath(new URL("../../", import.meta.url));
const self = fileURLToPath(import.meta.url);

function arg(args, name, fallback) {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
}

if (underNode) {
  const args = process.argv.slice(2);
  const which = arg(args, "runtime", "both");
  const runtimes = which === "both" ? ["bun", "deno"] : [which];
  if (spawnSync("kcat", ["-V"]).status !== 0) {
    console.error("bench:cluster needs kcat (Debian package kcat)");
    process.exit(1);
  }
  const results = [];
  for (const rt of runtimes) {
    const bin = `${root}node_modules/.bin/${rt}`;
    const argv = rt === "bun" ? [self, ...args] : ["run", "-A", "--no-check", self, ...args];
    const result = await new Promise((resolve, reject) => {
      const child = spawn(bin, argv, { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
      let buffered = "";
      let r = null;
      child.stdout.on("data", (d) => {
        buffered += d.toString();
        const lines = buffered.split("\n");
        buffered = lines.pop();
        for (const line of lines) {
          if (line.startsWith("RESULT ")) r = JSON.parse(line.slice(7));
          else console.log(line);
        }
      });
      child.on("error", reject);
      child.on("close", (code) => (code === 0 && r !== null ? resolve(r) : reject(new Error(`${rt} bench exited ${code}`))));
    });
    results.push(result);
  }
  if (results.length > 1) {
    const col = (s) => String(s).padStart(16);
    const fmt = (n) => (n === null ? "-" : Math.round(n).toLocaleString("en-US"));
    console.log(`\nsummary (${results[0].records.toLocaleString("en-US")} records of 100 bytes; session timeout ${results[0].sessionTimeoutMs} ms):`);
    console.log("".padEnd(44) + results.map((r) => col(r.runtime)).join(""));
    const row = (label, f) => console.log(label.padEnd(44) + results.map((r) => col(f(r))).join(""));
    row("acks=1, RF 1, 1 broker (records/s)", (r) => fmt(r.acks1));
    row("acks=all, RF 3, 3 brokers (records/s)", (r) => fmt(r.acksAll));
    row("  ratio acks=all / acks=1", (r) => (r.acksAll / r.acks1).toFixed(3));
    row("SIGKILL: new leader in ZooKeeper (ms)", (r) => fmt(r.kill.leaderMs));
    row("SIGKILL: first ack on the new leader (ms)", (r) => fmt(r.kill.ackMs));
    row("SIGTERM: new leader in ZooKeeper (ms)", (r) => fmt(r.term.leaderMs));
    row("SIGTERM: first ack on the new leader (ms)", (r) => fmt(r.term.ackMs));
  }
  process.exit(0);
}

// ---- under Bun or Deno ----------------------------------------------------------------------------
const { Cluster, currentRuntime } = await import("../helpers/cluster.ts");
const { createTopic, NumberedProducer, readPartition, sleep } = await import("../cluster/workload.ts");
const { mkdtempSync, rmSync, writeFileSync, statSync } = await import("node:fs");
const { tmpdir } = await import("node:os");
const { join } = await import("node:path");

const args = process.argv.slice(2);
const records = Number(arg(args, "records", "1000000"));
const sessionTimeoutMs = Number(arg(args, "session-timeout-ms", "6000"));
const recordBytes = 100;
const work = mkdtempSync(join(tmpdir(), "strand-bench-cluster-"));
const benchOverrides = { "log.segment.bytes": "1073741824", "replica.high.watermark.checkpoint.interval.ms": "5000" };

const input = join(work, "input.txt");
{
  const lines = [];
  for (let i = 0; i < records; i++) lines.push(`record-${i}-`.padEnd(recordBytes - 1, "x"));
  writeFileSync(input, lines.join("\n") + "\n");
}
const inputBytes = statSync(input).size;
const fmt = (n, d = 0) => n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });

function kcatProduce(bootstrap, topic, acks) {
  const t0 = performance.now();
  const r = spawnSync("kcat", ["-b", bootstrap, "-P", "-t", topic, "-p", "0", "-X", `acks=${acks}`, "-X", "linger.ms=5",
    "-X", "batch.size=1000000", "-X", "queue.buffering.max.kbytes=1048576", "-X", "message.timeout.ms=120000", "-l", input], { maxBuffer: 1 << 26 });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`kcat exited ${r.status}: ${r.stderr}`);
  if (/fail/i.test(r.stderr.toString())) throw new Error(`kcat reported failures: ${r.stderr.toString().slice(0, 2000)}`);
  return ms;
}

/** The partition's high watermark per its leader's admin API, once it stops moving. */
async function highWatermark(c, topic) {
  const leader = await c.waitLeader(topic, 0, 30_000);
  const view = await c.broker(leader).adminPartitions(topic);
  return view?.[0]?.high_watermark ?? -1;
}

function row(label, ms) {
  const s = ms / 1000;
  console.log(`  ${label.padEnd(40)} ${fmt(ms).padStart(8)} ms ${fmt(inputBytes / 1e6 / s, 1).padStart(7)} MB/s ${fmt(records / s).padStart(9)} records/s`);
  return records / s;
}

async function throughput(n, topicSpec, acks) {
  const c = await Cluster.start(n, { overrides: benchOverrides, sessionTimeoutMs, logLevel: "warn", label: "strand-bench-cluster-" });
  try {
    await createTopic(c, "bench", topicSpec);
    if (n > 1) await c.waitFullyReplicated("bench", 0, 30_000);
    const ms = kcatProduce(c.bootstrap, "bench", acks);
    const hw = await highWatermark(c, "bench");
    if (hw !== records) throw new Error(`high watermark ${hw} after producing ${records}`);
    await c.stop();
    return ms;
  } catch (e) {
    console.error(c.postMortem());
    await c.stop({ keep: true });
    throw e;
  }
}

async function failover(c, topic, signal) {
  const producer = new NumberedProducer(() => c.liveBootstrap, topic, [0], { backoffMs: 20, timeoutMs: 5_000 });
  try {
    await producer.waitAcks(c, 200, 30_000);
    const victim = await c.waitLeader(topic, 0, 10_000);
    const t0 = Date.now();
    if (signal === "SIGKILL") await c.broker(victim).kill("SIGKILL");
    else await c.broker(victim).kill("SIGTERM");
    let leaderAt = null;
    while (Date.now() - t0 < sessionTimeoutMs + 30_000) {
      const l = await c.leaderOf(topic, 0);
      if (l >= 0 && l !== victim) {
        leaderAt = Date.now();
        break;
      }
      await sleep(10);
    }
    // The first write acknowledged by the new leader: the first record of its leader epoch
    // (with SIGTERM the old leader still acknowledges writes until leadership has moved).
    const epoch = (await c.partitionState(topic, 0)).leaderEpoch;
    await producer.waitAcks(c, 20, sessionTimeoutMs + 30_000, "on the new leader");
    if (signal === "SIGTERM") await c.broker(victim).waitExit(60_000);
    const first = (await readPartition(c, topic, 0)).records.find((r) => r.leaderEpoch >= epoch);
    const outcome = first === undefined ? undefined : producer.outcomes.find((o) => o.ok && `${o.n}` === first.value);
    if (outcome === undefined) throw new Error(`no acknowledged record of leader epoch ${epoch}`);
    await c.restart(victim);
    return { leaderMs: leaderAt === null ? null : leaderAt - t0, ackMs: outcome.atMs - t0 };
  } finally {
    await producer.stop();
  }
}

try {
  console.log(`strand cluster bench on ${currentRuntime}: ${fmt(records)} records of ${recordBytes} bytes (${fmt(inputBytes / 1e6, 1)} MB), one partition, kcat`);
  const ms1 = await throughput(1, { partitions: 1, replicationFactor: 1 }, "1");
  const acks1 = row("acks=1, RF 1, 1 broker", ms1);
  const msAll = await throughput(3, { partitions: 1, replicationFactor: 3, configs: { "min.insync.replicas": "2" } }, "all");
  const acksAll = row("acks=all, RF 3, 3 brokers", msAll);
  console.log(`  ratio acks=all / acks=1: ${(acksAll / acks1).toFixed(3)}`);

  const c = await Cluster.start(3, { overrides: benchOverrides, sessionTimeoutMs, logLevel: "warn", label: "strand-bench-cluster-" });
  let kill, term;
  try {
    await createTopic(c, "failover", { partitions: 1, replicationFactor: 3, configs: { "min.insync.replicas": "2" } });
    kill = await failover(c, "failover", "SIGKILL");
    await c.waitFullyReplicated("failover", 0, 60_000);
    term = await failover(c, "failover", "SIGTERM");
    await c.stop();
  } catch (e) {
    console.error(c.postMortem());
    await c.stop({ keep: true });
    throw e;
  }
  console.log(`failover (kafkajs, acks=all, zookeeper.session.timeout.ms=${sessionTimeoutMs}):`);
  console.log(`  SIGKILL of the leader: new leader in ZooKeeper after ${kill.leaderMs ?? "?"} ms, first acknowledged write after ${kill.ackMs} ms`);
  console.log(`  SIGTERM of the leader: new leader in ZooKeeper after ${term.leaderMs ?? "?"} ms, first acknowledged write after ${term.ackMs} ms`);
  console.log("RESULT " + JSON.stringify({ runtime: currentRuntime, records, sessionTimeoutMs, acks1, acksAll, kill, term }));
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exit(0);
