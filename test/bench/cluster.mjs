#!/usr/bin/env node
// npm run bench:cluster [-- --records N --runtime bun|deno|both --session-timeout-ms MS]
// npm run bench:cluster -- --only native [--rounds R --profile DIR] (only the native client's
//   throughput on one three-broker cluster, RF 3, min.insync.replicas 2: acks=1 and acks=all
//   into fresh topics, alternating R times (default 3), and their ratio on the same cluster;
//   --profile writes the brokers' CPU profiles into DIR: Bun's --cpu-prof, Deno's V8 --prof log;
//   --acks 1|all runs only that one; --override key=value sets a broker config, e.g.
//   replica.fetch.max.bytes)
//
// In one run, on this machine, with the brokers as processes on one real ZooKeeper
// (test/helpers/cluster.ts; Debian packages zookeeper and kcat):
//   1. produce throughput, N records of 100 bytes (default 1,000,000) into one partition with kcat
//      (librdkafka, so the client is not the bottleneck): acks=1 on a one-broker cluster (RF 1),
//      then acks=all on a three-broker cluster (RF 3, min.insync.replicas 2), and their ratio;
//      The native client (test/bench/native.mjs: librdkafka without kcat's per-record work) does
//      the same into a second topic on the same cluster, the figure without kcat's ceiling; then
//      latency at a fixed rate (--rate, default 50,000 records/s, --latency-records, default
//      150,000): the native client paced to the rate and `strand perf produce --throughput`, both
//      acks=1 on the one-broker cluster and acks=all on the three, linger.ms=5, 16 KB batches;
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
  if (results.length > 1 && results[0].only === "native") {
    console.log(`\nsummary (native, ${results[0].records.toLocaleString("en-US")} records of 100 bytes, RF 3, min.insync.replicas 2, same cluster):`);
    for (const r of results) {
      console.log(`  ${r.runtime.padEnd(5)} acks=1 ${Math.round(r.acks1).toLocaleString("en-US").padStart(10)}  acks=all ${Math.round(r.acksAll).toLocaleString("en-US").padStart(10)} records/s  ratio ${(r.acksAll / r.acks1).toFixed(3)}`);
    }
  } else if (results.length > 1) {
    const col = (s) => String(s).padStart(16);
    const fmt = (n) => (n === null ? "-" : Math.round(n).toLocaleString("en-US"));
    console.log(`\nsummary (${results[0].records.toLocaleString("en-US")} records of 100 bytes; session timeout ${results[0].sessionTimeoutMs} ms):`);
    console.log("".padEnd(44) + results.map((r) => col(r.runtime)).join(""));
    const row = (label, f) => console.log(label.padEnd(44) + results.map((r) => col(f(r))).join(""));
    row("acks=1, RF 1, 1 broker (records/s)", (r) => fmt(r.acks1));
    row("acks=all, RF 3, 3 brokers (records/s)", (r) => fmt(r.acksAll));
    row("  ratio acks=all / acks=1", (r) => (r.acksAll / r.acks1).toFixed(3));
    row("native acks=1 (records/s)", (r) => fmt(r.native1.rps));
    row("native acks=all (records/s)", (r) => fmt(r.nativeAll.rps));
    row("  ratio native acks=all / acks=1", (r) => (r.nativeAll.rps / r.native1.rps).toFixed(3));
    row("p99 ms at rate, acks=1: native", (r) => r.native1.p99.toFixed(2));
    row("p99 ms at rate, acks=1: strand perf", (r) => r.strand1.p99.toFixed(2));
    row("p99 ms at rate, acks=all: native", (r) => r.nativeAll.p99.toFixed(2));
    row("p99 ms at rate, acks=all: strand perf", (r) => r.strandAll.p99.toFixed(2));
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
const { mkdtempSync, readFileSync, rmSync, writeFileSync, statSync } = await import("node:fs");
const { buildNative, runNative } = await import("./native.mjs");
const { tmpdir } = await import("node:os");
const { join } = await import("node:path");

const args = process.argv.slice(2);
const records = Number(arg(args, "records", "1000000"));
const sessionTimeoutMs = Number(arg(args, "session-timeout-ms", "6000"));
const rate = Number(arg(args, "rate", "50000"));
const latencyRecords = Number(arg(args, "latency-records", "150000"));
const only = arg(args, "only", null);
const rounds = Number(arg(args, "rounds", "3"));
const profileDir = arg(args, "profile", null);
const onlyAcks = arg(args, "acks", "both");
const recordBytes = 100;
const work = mkdtempSync(join(tmpdir(), "strand-bench-cluster-"));
const benchOverrides = { "log.segment.bytes": "1073741824", "replica.high.watermark.checkpoint.interval.ms": "5000" };
// --override key=value (repeatable): broker config for every broker of the run.
args.forEach((a, i) => {
  if (a === "--override" && args[i + 1]?.includes("=")) benchOverrides[args[i + 1].split("=")[0]] = args[i + 1].slice(args[i + 1].indexOf("=") + 1);
});

const input = join(work, "input.txt");
if (only === null) {
  const lines = [];
  for (let i = 0; i < records; i++) lines.push(`record-${i}-`.padEnd(recordBytes - 1, "x"));
  writeFileSync(input, lines.join("\n") + "\n");
}
const inputBytes = only === null ? statSync(input).size : 0;
const native = buildNative(work);
const runtimeBin = `${root}node_modules/.bin/${currentRuntime}`;
const strandCli = (a) => (currentRuntime === "bun" ? [runtimeBin, [`${root}src/cli/main.ts`, ...a]] : [runtimeBin, ["run", "-A", `${root}src/cli/main.ts`, ...a]]);
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

/** strand perf produce at a fixed rate: its final line's percentiles (Kafka's format). */
function strandPerfLatency(bootstrap, topic, acks) {
  const [cmd, a] = strandCli(["perf", "produce", "--bootstrap-server", bootstrap, "--topic", topic, "--num-records", String(latencyRecords),
    "--record-size", String(recordBytes), "--throughput", String(rate), "--acks", acks, "--partition", "0", "--reporting-interval-ms", "600000"]);
  const r = spawnSync(cmd, a, { encoding: "utf8", maxBuffer: 1 << 24, timeout: 600_000 });
  if (r.status !== 0) throw new Error(`strand perf produce exited ${r.status}: ${r.stderr}`);
  const out = r.stdout.trim().split("\n").pop();
  const num = (re) => Number((re.exec(out) ?? [])[1] ?? NaN);
  return { rps: num(/([\d.]+) records\/sec/), p50: num(/([\d.]+) ms 50th/), p99: num(/([\d.]+) ms 99th/), max: num(/([\d.]+) ms max latency/) };
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
    const extra = {};
    for (const t of ["bench-native", "lat-native", "lat-strand"]) {
      await createTopic(c, t, topicSpec);
      if (n > 1) await c.waitFullyReplicated(t, 0, 30_000);
    }
    const np = runNative(native, "produce", { bootstrap: c.bootstrap, topic: "bench-native", records, size: recordBytes - 1, config: { acks } });
    const nhw = await highWatermark(c, "bench-native");
    if (nhw !== records) throw new Error(`high watermark ${nhw} after the native client produced ${records}`);
    const nl = runNative(native, "produce", { bootstrap: c.bootstrap, topic: "lat-native", records: latencyRecords, size: recordBytes, rate,
      config: { acks, "linger.ms": "5", "batch.size": "16384" } });
    extra.native = { rps: np.records_per_s, p50: nl.p50_ms, p99: nl.p99_ms, max: nl.max_ms };
    extra.strand = strandPerfLatency(c.bootstrap, "lat-strand", acks);
    await c.stop();
    return { ms, ...extra };
  } catch (e) {
    console.error(c.postMortem());
    await c.stop({ keep: true });
    throw e;
  }
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); NaN elsewhere. */
function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return NaN;
  }
}

/**
 * --only native: one three-broker cluster; the native client into fresh RF 3 topics, acks=1 and
 * acks=all in turn (so both see the same machine load), each checked by its high watermark.
 */
async function nativeOnly() {
  const runtimeArgs = profileDir === null ? [] : currentRuntime === "bun"
    ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`]
    : [`--v8-flags=--prof,--logfile=${profileDir}/deno-%p.log`];
  const c = await Cluster.start(3, { overrides: benchOverrides, sessionTimeoutMs, logLevel: "warn", label: "strand-bench-cluster-", runtimeArgs });
  const spec = { partitions: 1, replicationFactor: 3, configs: { "min.insync.replicas": "2" } };
  const sums = { "1": { records: 0, ms: 0 }, all: { records: 0, ms: 0 } };
  const cpuLines = [];
  try {
    for (let i = 0; i < rounds; i++) {
      const line = [];
      for (const acks of (i % 2 === 0 ? ["1", "all"] : ["all", "1"]).filter((a) => onlyAcks === "both" || a === onlyAcks)) {
        const topic = `native-${acks}-${i}`;
        await createTopic(c, topic, spec);
        await c.waitFullyReplicated(topic, 0, 30_000);
        const leader = await c.waitLeader(topic, 0, 30_000);
        const cpu0 = c.brokers.map((b) => cpuSeconds(b.pid));
        const r = runNative(native, "produce", { bootstrap: c.bootstrap, topic, records, size: recordBytes - 1, config: { acks } });
        // With acks=1 the followers may still be copying: how long until they have it all.
        const doneAt = performance.now();
        let hw = -1;
        while ((hw = await highWatermark(c, topic)) < records && performance.now() - doneAt < 120_000) await sleep(20);
        if (hw !== records) throw new Error(`high watermark ${hw} after the native client produced ${records} with acks=${acks}`);
        const lagMs = performance.now() - doneAt;
        const cpu = c.brokers.map((b, j) => cpuSeconds(b.pid) - cpu0[j]);
        const us = (sec) => fmt((sec * 1e6) / records, 2);
        const followers = cpu.filter((_, j) => j !== leader);
        cpuLines.push(`    acks=${acks} round ${i + 1}: broker CPU per record, leader ${us(cpu[leader])} µs, followers ${followers.map(us).join(" and ")} µs`);
        sums[acks].records += records;
        sums[acks].ms += r.ms;
        line.push(`acks=${acks} ${fmt(r.records_per_s).padStart(10)}` + (acks === "1" ? ` (replicated ${fmt(lagMs)} ms later)` : ""));
      }
      console.log(`  round ${i + 1}: ${line.join("  ")} records/s`);
      for (const l of cpuLines.splice(0)) console.log(l);
    }
    // The profilers write on a clean exit (SIGTERM), not on the harness's SIGKILL.
    if (profileDir !== null) for (const b of c.brokers) await b.stop();
    await c.stop();
  } catch (e) {
    console.error(c.postMortem());
    await c.stop({ keep: true });
    throw e;
  }
  const acks1 = sums["1"].ms > 0 ? sums["1"].records / (sums["1"].ms / 1000) : NaN;
  const acksAll = sums.all.ms > 0 ? sums.all.records / (sums.all.ms / 1000) : NaN;
  console.log(`  overall: acks=1 ${fmt(acks1)}  acks=all ${fmt(acksAll)} records/s  ratio acks=all / acks=1 ${(acksAll / acks1).toFixed(3)}` +
    " (issue 18's target: at least 0.6, and 500k records/s)");
  if (profileDir !== null) console.log(`  profiles in ${profileDir}`);
  return { runtime: currentRuntime, only: "native", records, acks1, acksAll };
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

if (only === "native") {
  try {
    console.log(`strand cluster bench on ${currentRuntime}, native client only: ${fmt(records)} records of ${recordBytes} bytes, ` +
      `three brokers, one partition RF 3, min.insync.replicas 2, ${rounds} rounds`);
    console.log("RESULT " + JSON.stringify(await nativeOnly()));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  process.exit(0);
} else if (only !== null) {
  console.error(`--only ${only}: only "native" is known`);
  process.exit(2);
}

try {
  console.log(`strand cluster bench on ${currentRuntime}: ${fmt(records)} records of ${recordBytes} bytes (${fmt(inputBytes / 1e6, 1)} MB), one partition, kcat`);
  const t1 = await throughput(1, { partitions: 1, replicationFactor: 1 }, "1");
  const acks1 = row("acks=1, RF 1, 1 broker", t1.ms);
  const tAll = await throughput(3, { partitions: 1, replicationFactor: 3, configs: { "min.insync.replicas": "2" } }, "all");
  const acksAll = row("acks=all, RF 3, 3 brokers", tAll.ms);
  console.log(`  ratio acks=all / acks=1: ${(acksAll / acks1).toFixed(3)}`);
  console.log("native rdkperf (its clock starts after metadata), same clusters:");
  console.log(`  acks=1, RF 1, 1 broker ${fmt(t1.native.rps).padStart(27)} records/s (${(t1.native.rps / acks1).toFixed(3)} of kcat)`);
  console.log(`  acks=all, RF 3, 3 brokers ${fmt(tAll.native.rps).padStart(24)} records/s (${(tAll.native.rps / acksAll).toFixed(3)} of kcat)`);
  console.log(`  ratio acks=all / acks=1: ${(tAll.native.rps / t1.native.rps).toFixed(3)} (issue 18's target: at least 0.6, and 500k records/s)`);
  console.log(`latency at ${fmt(rate)} records/s, ${fmt(latencyRecords)} records, linger.ms=5, 16 KB batches (ms, send to acknowledgement):`);
  const lat = (label, x) => console.log(`  ${label.padEnd(40)} p50 ${x.p50.toFixed(2).padStart(8)}  p99 ${x.p99.toFixed(2).padStart(8)}  max ${x.max.toFixed(2).padStart(8)}`);
  lat("acks=1, 1 broker: native rdkperf", t1.native);
  lat("acks=1, 1 broker: strand perf produce", t1.strand);
  lat("acks=all, 3 brokers: native rdkperf", tAll.native);
  lat("acks=all, 3 brokers: strand perf produce", tAll.strand);
  console.log(`  strand / native p99: acks=1 ${(t1.strand.p99 / t1.native.p99).toFixed(2)}, acks=all ${(tAll.strand.p99 / tAll.native.p99).toFixed(2)} ` +
    "(issue 18's targets: strand p99 at most 5 ms acks=1, 10 ms acks=all)");

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
  console.log("RESULT " + JSON.stringify({ runtime: currentRuntime, records, sessionTimeoutMs, acks1, acksAll, kill, term,
    native1: t1.native, nativeAll: tAll.native, strand1: t1.strand, strandAll: tAll.strand }));
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exit(0);
