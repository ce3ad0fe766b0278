// Issue 15 acceptance: three brokers, RF 3, min.insync.replicas=2; a librdkafka idempotent
// producer (python3-confluent-kafka, enable.idempotence=true, acks=all, librdkafka's unbounded
// retries) writes numbered records to two partitions while the partition leader is SIGKILLed and
// restarted, round after round. A retry that reaches the new leader after the old one appended
// (and replicated) the batch must be answered as a duplicate with the original offset, not
// written again: at the end every acknowledged record is read exactly once, at the offset its
// ack named, in order, and nothing is read twice (the duplicate count is printed). The same
// scenario with enable.idempotence=false (librdkafka retrying, max.in.flight 5) read 85
// duplicates out of 80,184 acked records here, so the retries do reach the new leaders with
// batches the old ones had written. The verifier is the acks=all failover test's (workload.ts:
// checkNumbered, assertReplicasIdentical).
import { test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Cluster, skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { skipUnless } from "../helpers/tools.ts";
import { bounceRounds, createTopic, finalCheck, type NumberedRecords, sleep } from "./workload.ts";

const skip = skipUnlessZooKeeper() || skipUnless("confluent_kafka");
const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "rdkafka_numbered.py");

/** The librdkafka producer in a child process, its delivery reports parsed as they arrive. */
class RdkafkaNumbered implements NumberedRecords {
  readonly prefix = "";
  readonly acked = new Map<number, { partition: number; offset: number }>();
  readonly refused = new Map<number, { partition: number; error: string }>();
  readonly indeterminate = new Map<number, { partition: number; error: string }>();
  readonly external = new Set<number>();
  readonly clientLog: string[] = [];
  readonly fatal: string[] = [];
  done: { sent: number; unflushed: number } | null = null;
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;
  private pending = "";

  constructor(bootstrap: string, readonly topic: string, readonly partitions: number[], ratePerSec: number, readonly config: string[]) {
    this.child = spawn("/usr/bin/python3", [SCRIPT, bootstrap, topic, String(partitions.length), String(ratePerSec), ...config], { stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout!.on("data", (d: Buffer) => this.read(d.toString()));
    this.child.stderr!.on("data", (d: Buffer) => this.note(`stderr: ${d.toString().trim()}`));
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
  }

  private note(line: string): void {
    if (this.clientLog.length < 200) this.clientLog.push(line);
  }

  private read(text: string): void {
    const lines = (this.pending + text).split("\n");
    this.pending = lines.pop() ?? "";
    for (const line of lines) {
      const [kind, a, b, c] = line.split(" ");
      if (kind === "A") this.acked.set(Number(a), { partition: Number(b), offset: Number(c) });
      else if (kind === "E") this.indeterminate.set(Number(a), { partition: Number(b), error: c });
      else if (kind === "F") this.fatal.push(line);
      else if (kind === "DONE") this.done = JSON.parse(line.slice(5));
      else this.note(line);
    }
  }

  async waitAcks(cluster: Cluster, count: number, timeoutMs: number, what = ""): Promise<void> {
    const from = this.acked.size;
    await cluster.waitFor(() => this.fatal.length > 0 || this.acked.size >= from + count, timeoutMs, `${count} acks on ${this.topic}${what ? ` ${what}` : ""}`);
    assert.deepEqual(this.fatal, [], "no fatal librdkafka error");
  }

  summary(): string {
    const sent = this.done?.sent ?? this.acked.size + this.indeterminate.size;
    return `${this.topic}: ${sent} sent (librdkafka, ${this.config.join(" ")}), ${this.acked.size} acked, ${this.indeterminate.size} failed deliveries`;
  }

  /** Asks the producer to stop and flush; kills it when it does not exit in time. */
  async stop(timeoutMs = 150_000): Promise<void> {
    if (this.child.exitCode !== null) return;
    this.child.stdin!.end("stop\n");
    const code = await Promise.race([this.exited, sleep(timeoutMs).then(() => "timeout" as const)]);
    if (code === "timeout") {
      this.child.kill("SIGKILL");
      await this.exited;
      assert.fail(`the librdkafka producer did not finish within ${timeoutMs} ms (${this.summary()})`);
    }
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }
}

test("cluster: an idempotent librdkafka producer with retries writes every acked record exactly once while the leader is SIGKILLed, round after round", { skip, timeout: 300_000 }, async () => {
  await withCluster(3, { budgetMs: 290_000, label: "strand-cluster-idem-" }, async (c) => {
    const topic = "idem-kills";
    await createTopic(c, topic, { partitions: 2, replicationFactor: 3, configs: { "min.insync.replicas": "2" } });
    const all = [0, 1, 2].map((i) => c.broker(i).bootstrap).join(",");
    const producer = new RdkafkaNumbered(all, topic, [0, 1], 2_000, ["enable.idempotence=true", "max.in.flight.requests.per.connection=5"]);
    try {
      await producer.waitAcks(c, 200, 30_000, "before the first kill");
      const rounds = await bounceRounds(c, { topic, partitions: [0, 1], rounds: 5, signal: "SIGKILL", victim: "leader", producer, acksWhileDown: 50 });
      console.log(rounds.join("\n"));
      await producer.waitAcks(c, 200, 30_000, "after the last round");
      await producer.stop();
    } finally {
      producer.kill();
    }
    assert.deepEqual(producer.fatal, [], `no fatal error; client log: ${producer.clientLog.join("\n")}`);
    assert.ok(producer.done !== null, "the producer flushed and said DONE");
    assert.equal(producer.done!.unflushed, 0, "every record delivered or failed before exit");
    assert.deepEqual([...producer.indeterminate.values()].slice(0, 5), [], "librdkafka's retries delivered every record (no failed delivery)");
    const line = await finalCheck(c, producer);
    console.log(line);
    console.log(`librdkafka client log (first lines): ${producer.clientLog.slice(0, 10).join(" | ")}`);
    assert.match(line, /duplicates 0 /);
  });
});
