// `strand cluster rolling-restart` against a real cluster (ZooKeeper and three broker processes,
// test/helpers/cluster.ts), run as an operator runs it, with acks=all producers writing all along.
// The restart command the tool runs is a small script this test writes: it asks this process (a
// control server on loopback) to restart broker {id} as systemctl would (SIGTERM, so a controlled
// shutdown, then start again), and exits when that is done.
//
// Checked: --dry-run prints the plan (controller last, commands with {id} and {host} filled in)
// and runs nothing; a failing command stops the roll at the first broker; the real roll restarts
// every broker (each registers anew), the controller last, and through it the producers
// (kafkajs, idempotent, acks=all, retries) have no write fail and lose no acknowledged record:
// each is read back once, in order, and the replicas are identical below the high watermark.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Kafka, logLevel, type Producer } from "kafkajs";
import { type Cluster, skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { createTopic, finalCheck, type NumberedRecords, sleep } from "../cluster/workload.ts";
import { strand } from "./strand.ts";

const skip = skipUnlessZooKeeper();

/**
 * acks=all, idempotent, with kafkajs' retries (a leader moving away is retried, as any client
 * does): one record in flight per partition, numbered; a send that fails after its retries is
 * recorded as indeterminate, and the test wants none.
 */
class RetryingProducer implements NumberedRecords {
  readonly prefix = "";
  readonly acked = new Map<number, { partition: number; offset: number }>();
  readonly refused = new Map<number, { partition: number; error: string }>();
  readonly indeterminate = new Map<number, { partition: number; error: string }>();
  readonly external = new Set<number>();
  private next = 0;
  private stopped = false;
  private readonly loops: Promise<void>[] = [];
  private readonly ackTimes: number[] = [];

  constructor(bootstrap: string, readonly topic: string, readonly partitions: number[]) {
    for (const p of partitions) this.loops.push(this.loop(bootstrap, p));
  }

  private async loop(bootstrap: string, partition: number): Promise<void> {
    const kafka = new Kafka({
      clientId: `rolling-${partition}`,
      brokers: bootstrap.split(","),
      logLevel: logLevel.NOTHING,
      retry: { retries: 20, initialRetryTime: 200, maxRetryTime: 3_000 },
      connectionTimeout: 3_000,
      requestTimeout: 15_000,
    });
    const producer: Producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false, retry: { retries: 20, initialRetryTime: 200, maxRetryTime: 3_000 } });
    await producer.connect();
    while (!this.stopped) {
      const n = this.next++;
      try {
        const r = await producer.send({ topic: this.topic, acks: -1, timeout: 10_000, messages: [{ partition, value: String(n) }] });
        this.acked.set(n, { partition, offset: Number(r[0].baseOffset) });
        this.ackTimes.push(Date.now());
      } catch (e) {
        this.indeterminate.set(n, { partition, error: (e as Error).name + ": " + (e as Error).message });
        await sleep(200);
      }
    }
    await producer.disconnect().catch(() => {});
  }

  async waitAcks(cluster: Cluster, count: number, timeoutMs: number, what = ""): Promise<void> {
    const t = Date.now();
    await cluster.waitFor(() => this.ackTimes.filter((a) => a >= t).length >= count, timeoutMs, `${count} acks ${what}`);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.race([Promise.all(this.loops), sleep(60_000)]);
  }

  summary(): string {
    return `${this.topic}: ${this.next} sent, ${this.acked.size} acked, ${this.indeterminate.size} failed after retries`;
  }
}

test("cli cluster rolling-restart: every broker restarted in turn, the controller last, with no acks=all write failing or lost", { skip, timeout: 420_000 }, async () => {
  await withCluster(3, { budgetMs: 400_000, label: "strand-rolling-restart-" }, async (c) => {
    // The control server the restart script calls: POST-less GET /restart/<id>.
    const restarted: number[] = [];
    const control = createServer((req, res) => {
      const id = Number(/^\/restart\/(\d+)(\?|$)/.exec(req.url ?? "")?.[1] ?? NaN);
      if (!Number.isInteger(id) || id < 0 || id > 2) return void res.writeHead(404).end("no such broker\n");
      c.note(`restart script: broker ${id}`);
      c.restart(id).then(
        () => {
          restarted.push(id);
          res.writeHead(200).end(`broker ${id} restarted\n`);
        },
        (e) => res.writeHead(500).end(`${(e as Error).message}\n`),
      );
    });
    await new Promise<void>((r) => control.listen(0, "127.0.0.1", () => r()));
    const controlPort = (control.address() as { port: number }).port;
    const script = join(c.dir, "restart.mjs");
    writeFileSync(script, [
      `const r = await fetch("http://127.0.0.1:${controlPort}/restart/" + process.argv[2] + "?host=" + encodeURIComponent(process.argv[3]));`,
      `process.stdout.write(await r.text());`,
      `process.exit(r.ok ? 0 : 1);`,
    ].join("\n"));
    const producers: RetryingProducer[] = [];
    try {
      const topic = "rolled";
      await createTopic(c, topic, { partitions: 3, replicationFactor: 3, configs: { "min.insync.replicas": "2" } });
      for (let p = 0; p < 3; p++) await c.waitFullyReplicated(topic, p, 30_000);
      const controller = await c.controllerId();
      const admin = ["--admin-url", `http://127.0.0.1:1,${c.broker(1).adminUrl}`]; // the first does not answer: the next is used
      const epochs = async () => Promise.all([0, 1, 2].map(async (i) => (await c.stat(`/brokers/ids/${i}`))?.czxid));
      const before = await epochs();

      const dry = await strand(["cluster", "rolling-restart", ...admin, "--restart-command", `node ${script} {id} {host}`, "--dry-run"]);
      assert.equal(dry.code, 0, dry.stderr);
      const planned = [...dry.stdout.matchAll(/^\s+\d\. broker (\d) at 127\.0\.0\.1:(\d+), admin (\S+): node (\S+) (\d) 127\.0\.0\.1$/gm)];
      assert.equal(planned.length, 3, dry.stdout);
      assert.deepEqual(planned.map((m) => Number(m[1])), [...[0, 1, 2].filter((i) => i !== controller), controller], "the controller last");
      for (const m of planned) {
        const id = Number(m[1]);
        assert.deepEqual([m[2], m[3], m[4], m[5]], [String(c.broker(id).port), c.broker(id).adminUrl, script, String(id)]);
      }
      assert.deepEqual(await epochs(), before, "a dry run restarts nothing");

      const failing = await strand(["cluster", "rolling-restart", ...admin, "--restart-command", "false {id}", "--poll-interval-ms", "200"], { timeoutMs: 120_000 });
      assert.equal(failing.code, 1);
      assert.match(failing.stderr, /broker \d: the restart command exited 1; stopping the roll here/);
      assert.equal((failing.stdout.match(/: running /g) ?? []).length, 1, "nothing after the failing broker");

      const producer = new RetryingProducer(c.bootstrap, topic, [0, 1, 2]);
      producers.push(producer);
      await producer.waitAcks(c, 60, 30_000, "before the roll");
      const roll = await strand(["cluster", "rolling-restart", ...admin, "--restart-command", `node ${script} {id} {host}`,
        "--broker-timeout-ms", "120000", "--poll-interval-ms", "250"], { timeoutMs: 380_000 });
      console.log(roll.stdout);
      assert.equal(roll.code, 0, `${roll.stdout}\n${roll.stderr}`);
      assert.deepEqual(restarted, planned.map((m) => Number(m[1])), "each broker restarted once, in the planned order");
      const after = await epochs();
      for (let i = 0; i < 3; i++) assert.notEqual(after[i], before[i], `broker ${i} registered anew`);
      assert.match(roll.stdout, /Rolling restart done: 3 broker\(s\) restarted/);
      await producer.waitAcks(c, 60, 30_000, "after the roll");
      await producer.stop();
      assert.deepEqual([...producer.indeterminate.values()], [], "no write failed beyond its retries");
      console.log(await finalCheck(c, producer));
    } finally {
      for (const p of producers) await p.stop();
      await new Promise<void>((r) => control.close(() => r()));
    }
  });
});
