// Issue 17: three hosts as the seeds lay them out (test/helpers/three_hosts.ts: network
// namespaces, each with a ZooKeeper ensemble member and a broker installed by systemd/install.sh),
// and the faults only a real network shows. The test's own namespace is the clients' network: it
// has a link to every host, which no scenario cuts.
//
// Each scenario has its own topic (2 partitions, RF 3, min.insync.replicas=2), an acks=all
// numbered producer (kafkajs, no retries: every send ends acked, refused or indeterminate) and a
// kafkajs group consumer running throughout; at its end every replica is in the ISR, the replicas'
// files are identical below the high watermark, and every acknowledged record is read back once,
// in order, at the offset its ack named, and was consumed by the group. The figures (sent, acked,
// lost, duplicated, the longest gap between acks) are printed per scenario.
import { test } from "node:test";
import assert from "node:assert/strict";
import { currentRuntime } from "../helpers/cluster.ts";
import { Kafka, logLevel } from "kafkajs";
import type { Consumer } from "kafkajs";
import { skipUnlessZooKeeper } from "../helpers/cluster.ts";
import { skipUnlessNetns } from "../helpers/netns.ts";
import { relaunchZk, startThreeHosts, type ThreeHosts, waitQuorum } from "../helpers/three_hosts.ts";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { run, type RunResult } from "../helpers/tools.ts";
import { checkNumbered, createTopic, NumberedProducer, readReplicated, sleep, waitIsrFull } from "./workload.ts";

const skip = skipUnlessZooKeeper() || skipUnlessNetns();
const sessionTimeoutMs = 6_000;
const lagMs = 3_000;
let hosts: ThreeHosts | null = null;
const figures: string[] = [];
let failed = false;
const repo = new URL("../../", import.meta.url).pathname;
const runtimeBin = `${repo}node_modules/.bin/${currentRuntime}`;
const mainTs = `${repo}src/cli/main.ts`;

function h(): ThreeHosts {
  if (hosts === null) throw new Error("the three hosts did not start");
  return hosts;
}

/**
 * A kafkajs group consumer recording how often each value was delivered. kafkajs restarts a
 * consumer after a retriable error only; after any other it stops for good. An application then
 * starts a new one, and so does this reader (same group, same record of deliveries), noting each
 * crash for the scenario's line, so a broker answer that made kafkajs give up shows there.
 */
class GroupReader {
  readonly seen = new Map<string, number>();
  readonly crashes: string[] = [];
  private consumer: Consumer | null = null;
  private stopped = false;
  private constructor(private readonly bootstrap: string[], private readonly topic: string) {}

  static async start(bootstrap: string[], topic: string): Promise<GroupReader> {
    const r = new GroupReader(bootstrap, topic);
    await r.run();
    return r;
  }

  private async run(): Promise<void> {
    const kafka = new Kafka({ clientId: `reader-${this.topic}`, brokers: this.bootstrap, logLevel: logLevel.NOTHING, retry: { retries: 10 }, connectionTimeout: 3_000, requestTimeout: 10_000 });
    const consumer = kafka.consumer({ groupId: `g-${this.topic}`, sessionTimeout: 10_000, heartbeatInterval: 1_000, retry: { retries: 10 } });
    this.consumer = consumer;
    consumer.on(consumer.events.CRASH, (e) => {
      const { error, restart } = e.payload as { error: Error; restart: boolean };
      this.crashes.push(`${error.name}: ${error.message}${restart ? " (kafkajs restarts it)" : " (a new consumer)"}`);
      if (restart || this.stopped) return;
      void consumer.disconnect().catch(() => {}).then(() => this.stopped ? undefined : this.runUntilStarted());
    });
    await consumer.connect();
    await consumer.subscribe({ topic: this.topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const v = message.value?.toString() ?? "";
        this.seen.set(v, (this.seen.get(v) ?? 0) + 1);
      },
    });
  }

  /** A new consumer after a crash, tried again while the cluster is still failing over. */
  private async runUntilStarted(): Promise<void> {
    while (!this.stopped) {
      try {
        return await this.run();
      } catch (e) {
        this.crashes.push(`restart failed: ${(e as Error).message}`);
        await sleep(1_000);
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const c = this.consumer;
    if (c !== null) await Promise.race([c.disconnect().catch(() => {}), sleep(15_000)]);
  }
}

interface Running {
  topic: string;
  producer: NumberedProducer;
  reader: GroupReader;
  t0: number;
}

async function begin(topic: string): Promise<Running> {
  const c = h().cluster;
  // A scenario that failed may have left a link cut: each starts from a whole network.
  for (let i = 1; i <= 3; i++) h().net.rejoin(i);
  for (const [i, z] of h().zk.entries()) if (!z.running) await relaunchZk(h(), i + 1);
  for (const b of c.brokers) if (!b.alive) await c.restart(b.id);
  await waitQuorum(h());
  await createTopic(c, topic, { partitions: 2, replicationFactor: 3, configs: { "min.insync.replicas": "2" } });
  for (const p of [0, 1]) await waitIsrFull(c, topic, p, 60_000);
  const bootstrap = c.brokers.map((b) => b.bootstrap);
  const producer = new NumberedProducer(() => bootstrap.join(","), topic, [0, 1], { requestTimeoutMs: 8_000 });
  const reader = await GroupReader.start(bootstrap, topic);
  await producer.waitAcks(c, 30, 60_000, "before the fault");
  return { topic, producer, reader, t0: Date.now() };
}

/** The longest time between two acks of one partition while the scenario ran: ms, where, and how the sends in it ended. */
function longestGap(r: Running): string {
  let worst = { ms: 0, partition: 0, from: 0, to: 0 };
  for (const p of [0, 1]) {
    const times = r.producer.outcomes.filter((o) => o.ok && o.partition === p && o.atMs >= r.t0).map((o) => o.atMs);
    for (let i = 1; i < times.length; i++) {
      if (times[i] - times[i - 1] > worst.ms) worst = { ms: times[i] - times[i - 1], partition: p, from: times[i - 1], to: times[i] };
    }
  }
  return `${worst.ms} ms (partition ${worst.partition}, +${worst.from - r.t0} ms; sends in it: ${errorsOf(r, worst.from, worst.to, worst.partition)})`;
}

/** Stops the clients, checks everything, prints and returns the scenario's figures. */
async function end(name: string, r: Running, extra = ""): Promise<void> {
  const c = h().cluster;
  await r.producer.waitAcks(c, 20, 60_000, "after the fault healed");
  await r.producer.stop();
  const gap = longestGap(r);
  const contents = await readReplicated(c, r.producer);
  const count = new Map<string, number>();
  for (const pc of contents) for (const rec of pc.records) count.set(rec.value ?? "", (count.get(rec.value ?? "") ?? 0) + 1);
  let lost = 0;
  for (const n of r.producer.acked.keys()) if (!count.has(`${n}`)) lost++;
  const duplicated = [...count.values()].filter((k) => k > 1).length;
  // The group gets every acked record (at least once: a rebalance may deliver some again).
  const acked = [...r.producer.acked.keys()].map(String);
  await c.waitFor(() => acked.every((v) => r.reader.seen.has(v)), 60_000, `the group consumer of ${r.topic} to get every acked record`).catch(() => {});
  const unconsumed = acked.filter((v) => !r.reader.seen.has(v)).length;
  const redelivered = [...r.reader.seen.values()].filter((k) => k > 1).length;
  await r.reader.stop();
  const line = `${name}: sent ${r.producer.outcomes.length}, acked ${r.producer.acked.size}, lost ${lost}, duplicated ${duplicated}, ` +
    `longest gap between acks ${gap}; refused ${r.producer.refused.size}, indeterminate ${r.producer.indeterminate.size}; ` +
    `group consumer: ${unconsumed} acked not consumed, ${redelivered} delivered twice` +
    `${r.reader.crashes.length > 0 ? ` (crashes: ${r.reader.crashes.join(" | ")})` : ""}${extra ? `; ${extra}` : ""}`;
  figures.push(line);
  console.log(line);
  c.note(line);
  assert.equal(lost, 0, `${name}: acknowledged records lost`);
  checkNumbered(r.producer, contents);
  assert.equal(unconsumed, 0, `${name}: acked records the group consumer never got`);
}

/** Runs a scenario; on failure keeps the files and prints the logs' tails. */
async function scenario(name: string, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (e) {
    failed = true;
    if (hosts !== null) console.error(`\n${name} failed\n${hosts.cluster.postMortem()}\n`);
    throw e;
  }
}

function errorsOf(r: Running, from: number, to: number, partition: number): string {
  const m = new Map<string, number>();
  for (const o of r.producer.outcomes) {
    if (o.partition !== partition || o.startMs < from || o.startMs >= to) continue;
    const k = o.ok ? "acked" : o.error ?? "?";
    m.set(k, (m.get(k) ?? 0) + 1);
  }
  return [...m].map(([k, v]) => `${k} ${v}`).join(", ") || "nothing";
}

test("three hosts: install.sh lays out each host, the ZooKeeper ensemble and the brokers start", { skip, timeout: 240_000 }, async () => {
  hosts = await startThreeHosts({
    sessionTimeoutMs,
    overrides: { "replica.lag.time.max.ms": String(lagMs), "offsets.topic.replication.factor": "3", "offsets.topic.num.partitions": "3" },
  });
  const c = h().cluster;
  assert.deepEqual(await c.liveBrokerIds(), [1, 2, 3]);
  const modes = (await Promise.all(h().zk.map((z) => z.mode()))).sort();
  assert.deepEqual(modes, ["follower", "follower", "leader"]);
  console.log(`three hosts up: ${c.brokers.map((b) => b.bootstrap).join(", ")}; ZooKeeper ${h().zk.map((z) => z.connectString).join(",")}${c.chroot}`);
});

test("three hosts 1: a whole host dies (every process SIGKILLed) and comes back", { skip, timeout: 240_000 }, async () => {
  await scenario("host death", async () => {
    const c = h().cluster;
    const r = await begin("host-death");
    const victim = await c.waitLeader(r.topic, 0, 30_000);
    const t = Date.now();
    const killed = h().net.killAll(victim);
    await c.broker(victim).waitExit(10_000);
    const newLeader = await c.waitLeader(r.topic, 0, sessionTimeoutMs + 30_000, victim);
    const failover = Date.now() - t;
    await r.producer.waitAcks(c, 20, 60_000, `while host ${victim} is down`);
    await relaunchZk(h(), victim);
    await c.restart(victim);
    await waitQuorum(h());
    for (const p of [0, 1]) await waitIsrFull(c, r.topic, p, 60_000);
    await end("1 host death", r, `host ${victim} (${killed} processes) killed, broker ${newLeader} led after ${failover} ms`);
  });
});

test("three hosts 2: a follower cut off from the leader leaves the ISR; writes go on; the ISR heals", { skip, timeout: 240_000 }, async () => {
  await scenario("follower cut", async () => {
    const c = h().cluster;
    const r = await begin("follower-cut");
    const leader = await c.waitLeader(r.topic, 0, 30_000);
    // Not the controller: a leader proposes the ISR change to it (AlterPartition, KIP-497), so a
    // follower that is the controller, cut from the leader, cannot be dropped, in Kafka either.
    const controller = await c.controllerId();
    const follower = (await c.replicasOf(r.topic, 0)).find((b) => b !== leader && b !== controller)!;
    const t = Date.now();
    h().net.cut(leader, follower);
    await c.waitFor(async () => !(await c.partitionState(r.topic, 0))!.isr.includes(follower), lagMs + 30_000, `broker ${follower} out of ${r.topic}-0's ISR`);
    const shrunk = Date.now() - t;
    assert.equal(await c.leaderOf(r.topic, 0), leader, "the leader stays");
    const tAcks = Date.now();
    await r.producer.waitAcks(c, 30, 60_000, "with the follower cut off");
    const acksCut = r.producer.ackedSince(tAcks);
    h().net.heal(leader, follower);
    const tHeal = Date.now();
    for (const p of [0, 1]) await waitIsrFull(c, r.topic, p, 60_000);
    await end("2 follower cut", r, `broker ${follower} cut from leader ${leader}: out of the ISR after ${shrunk} ms (replica.lag.time.max.ms ${lagMs}), ` +
      `${acksCut}+ acks while cut, ISR whole ${Date.now() - tHeal} ms after the heal`);
  });
});

test("three hosts 3: the leader cut off from ZooKeeper and the other brokers, not from the producer: nothing it acknowledged is lost", { skip, timeout: 240_000 }, async () => {
  await scenario("leader isolated", async () => {
    const c = h().cluster;
    const r = await begin("leader-isolated");
    const old = await c.waitLeader(r.topic, 0, 30_000);
    const before = (await c.broker(old).adminPartitions(r.topic))?.find((p) => p.partition === 0);
    const epochBefore = (await c.partitionState(r.topic, 0))!.leaderEpoch;
    const t = Date.now();
    h().net.isolate(old);
    // The isolated broker still answers the clients; follow its log end offset meanwhile.
    let leoMax = before?.log_end_offset ?? 0;
    let leader = -1;
    await c.waitFor(async () => {
      const v = (await c.broker(old).adminPartitions(r.topic, 1_000))?.find((p) => p.partition === 0);
      if (v?.log_end_offset != null) leoMax = Math.max(leoMax, v.log_end_offset);
      leader = await c.leaderOf(r.topic, 0);
      return leader >= 0 && leader !== old;
    }, sessionTimeoutMs + 60_000, `a new leader for ${r.topic}-0 on the majority side`);
    const tNew = Date.now();
    await r.producer.waitAcks(c, 20, 60_000, `on the majority side while broker ${old} is isolated`);
    for (let i = 0; i < 10; i++) {
      const v = (await c.broker(old).adminPartitions(r.topic, 1_000))?.find((p) => p.partition === 0);
      if (v?.log_end_offset != null) leoMax = Math.max(leoMax, v.log_end_offset);
      await sleep(300);
    }
    const told = errorsOf(r, t, tNew, 0);
    h().net.rejoin(old);
    const tHeal = Date.now();
    await waitQuorum(h());
    for (const p of [0, 1]) await waitIsrFull(c, r.topic, p, 90_000);
    const accepted = leoMax - (before?.log_end_offset ?? 0);
    const ackedOld = r.producer.outcomes.filter((o) => o.ok && o.partition === 0 && o.startMs >= t && o.atMs < tNew).length;
    await end("3 leader isolated", r, `broker ${old} (epoch ${epochBefore}) isolated: it appended ${accepted} records to ${r.topic}-0 while cut off ` +
      `and acknowledged ${ackedOld} before broker ${leader} took over ${tNew - t} ms after the cut; sends to ${r.topic}-0 in that time ended: ${told}; ` +
      `ISR whole ${Date.now() - tHeal} ms after the heal`);
  });
});

test("three hosts 4: ZooKeeper loses quorum (2 of 3 stopped): leaders keep serving, no controller action, all resumes when it returns", { skip, timeout: 240_000 }, async () => {
  await scenario("zookeeper quorum", async () => {
    const c = h().cluster;
    const r = await begin("zk-quorum");
    const controller = await c.controllerId();
    const controllerEpoch = await c.controllerEpoch();
    const states = await Promise.all([0, 1].map((p) => c.partitionState(r.topic, p)));
    const stopped = [1, 2, 3].filter((i) => i !== controller).slice(0, 2);
    const t = Date.now();
    for (const i of stopped) await h().zk[i - 1].kill();
    const tAcks = Date.now();
    await r.producer.waitAcks(c, 40, 60_000, `without a ZooKeeper quorum (servers ${stopped} stopped)`);
    // Longer than the brokers' session timeout: no session may expire without a quorum.
    await sleep(Math.max(0, sessionTimeoutMs + 2_000 - (Date.now() - t)));
    const acksNoQuorum = r.producer.ackedSince(tAcks);
    const down = Date.now() - t;
    for (const i of stopped) await h().zk[i - 1].launch();
    await waitQuorum(h());
    const tBack = Date.now();
    await r.producer.waitAcks(c, 20, 60_000, "after the quorum returned");
    const after = await Promise.all([0, 1].map((p) => c.partitionState(r.topic, p)));
    const q = {
      controllerBefore: `${controller} (epoch ${controllerEpoch})`,
      controllerAfter: `${await c.controllerId()} (epoch ${await c.controllerEpoch()})`,
      leadersBefore: states.map((s) => `${s!.leader}@${s!.leaderEpoch}`).join(" "),
      leadersAfter: after.map((s) => `${s!.leader}@${s!.leaderEpoch}`).join(" "),
      sessionsExpired: c.brokers.filter((b) => /"msg":"zookeeper session expired"/.test(b.output().split("zk-quorum").slice(1).join(""))).map((b) => b.id),
    };
    await end("4 ZooKeeper quorum lost", r, `servers ${stopped} stopped for ${down} ms: ${acksNoQuorum} acks meanwhile; ` +
      `quorum back after ${tBack - t} ms; controller ${q.controllerBefore} -> ${q.controllerAfter}; leaders@epoch ${q.leadersBefore} -> ${q.leadersAfter}; ` +
      `brokers whose ZooKeeper session expired: ${q.sessionsExpired.join(",") || "none"}`);
    // As Kafka's brokers: they wait for the ensemble, which renews their sessions when its
    // quorum returns; nobody registers again, so the controller has nothing to do.
    assert.deepEqual(q.sessionsExpired, [], "no broker lost its ZooKeeper session");
    assert.equal(q.controllerAfter, q.controllerBefore, "no new controller");
    assert.equal(q.leadersAfter, q.leadersBefore, "the same leaders and leader epochs");
  });
});

// The roll is strand's own operator tool (strand cluster rolling-restart, run from the clients'
// namespace against host 1's admin API); its restart command asks this test, over HTTP on
// loopback, to restart one host: SIGTERM the broker (a controlled shutdown), restart the host's
// ZooKeeper server, start the broker again from the installed layout.
test("three hosts 5: rolling restart of all three hosts under load (strand cluster rolling-restart: /v1/status/ready, no under-replicated partitions)", { skip, timeout: 300_000 }, async () => {
  await scenario("rolling restart", async () => {
    const c = h().cluster;
    const r = await begin("rolling");
    const steps: string[] = [];
    const server = createServer((req, res) => {
      const id = Number(/^\/restart\/(\d+)$/.exec(req.url ?? "")?.[1] ?? -1);
      const t = Date.now();
      void (async () => {
        const b = c.broker(id);
        const status = await b.stop();
        assert.equal(status, 0, `broker ${id} exits 0 after SIGTERM`);
        await relaunchZk(h(), id);
        await c.restart(id);
        steps.push(`broker ${id} restarted in ${Date.now() - t} ms`);
      })().then(() => res.writeHead(200).end("restarted\n"), (e) => res.writeHead(500).end(`${(e as Error).message}\n`));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    const port = (server.address() as AddressInfo).port;
    const t = Date.now();
    let out: RunResult;
    try {
      const cli = currentRuntime === "bun" ? [runtimeBin, mainTs] : [runtimeBin, "run", "-A", "--no-check", mainTs];
      out = await run(cli[0], [...cli.slice(1), "cluster", "rolling-restart", "--admin-url", c.broker(1).adminUrl,
        "--restart-command", `curl -sfS -X POST http://127.0.0.1:${port}/restart/{id}`, "--poll-interval-ms", "500", "--broker-timeout-ms", "150000"], { timeoutMs: 280_000 });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    c.note(`rolling-restart exited ${out.code}:\n${out.stdout}${out.stderr}`);
    assert.equal(out.code, 0, `strand cluster rolling-restart exited ${out.code}:\n${out.stdout}${out.stderr}`);
    assert.equal(steps.length, 3, `every broker restarted once: ${steps.join("; ")}`);
    await waitQuorum(h());
    const failures = r.producer.outcomes.filter((o) => !o.ok && o.startMs >= r.t0).length;
    await end("5 rolling restart", r, `strand cluster rolling-restart took ${Date.now() - t} ms (${steps.join(", ")}); ${failures} sends failed (no retries)`);
  });
});

test("three hosts: figures, and everything torn down", { skip, timeout: 120_000 }, async () => {
  console.log(`\nthree hosts under ${currentRuntime}:\n${figures.join("\n")}\n`);
  await hosts?.destroy(failed);
  if (failed && hosts !== null) console.error(`files kept in ${hosts.dir}`);
  hosts = null;
});
