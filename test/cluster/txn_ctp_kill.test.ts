// Issue 15 acceptance: exactly-once consume-transform-produce across failures. Three brokers, RF 3,
// min.insync.replicas=2 (ctp-in, ctp-out, __consumer_offsets, __transaction_state). A
// confluent-kafka transactional copier (rdkafka_ctp.py: send_offsets_to_transaction, abort and
// rewind on abortable errors, a new producer when fenced) copies COUNT numbered records from
// ctp-in to ctp-out while the test SIGKILLs, in turn, the leader of ctp-in, the leader of ctp-out
// and the transaction coordinator (the leader of the transactional id's __transaction_state
// partition), each restarted once its partitions have new leaders and the copier committed again.
// A read_committed reader of ctp-out must then see each input record exactly once, in order; the
// group's committed offset is the input's end. COUNT is scaled to run in a minute or two here
// (2 cores shared by several agents); the figure is 100,000.
import { test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { partitionForGroup } from "../../src/coordinator/group_partition.ts";
import { type Cluster, skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { skipUnless } from "../helpers/tools.ts";
import { createTopic, sleep, waitIsrFull } from "./workload.ts";

const skip = skipUnlessZooKeeper() || skipUnless("confluent_kafka");
const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "rdkafka_ctp.py");
const COUNT = 20_000;
/** Records per transaction: 100 transactions, so every kill falls while the copier copies. */
const TXN_RECORDS = 200;
const GROUP = "ctp-kill";
const TXN_ID = `ctp-${GROUP}`;

class Copier {
  copied = 0;
  inputWritten = false;
  summary: Record<string, unknown> | null = null;
  readonly log: string[] = [];
  private readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  private pending = "";

  constructor(bootstrap: string) {
    this.child = spawn("/usr/bin/python3", [SCRIPT, bootstrap, "ctp-in", "ctp-out", GROUP, String(COUNT), String(TXN_RECORDS), "240"], { stdio: ["ignore", "pipe", "pipe"] });
    this.child.stdout!.on("data", (d: Buffer) => this.read(d.toString()));
    this.child.stderr!.on("data", (d: Buffer) => this.note(`stderr: ${d.toString().trim().slice(0, 300)}`));
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
  }

  private note(line: string): void {
    if (this.log.length < 100) this.log.push(line);
  }

  private read(text: string): void {
    const lines = (this.pending + text).split("\n");
    this.pending = lines.pop() ?? "";
    for (const line of lines) {
      if (line.startsWith("P ")) this.copied = Number(line.slice(2));
      else if (line === "INPUT written") this.inputWritten = true;
      else if (line.startsWith("{")) this.summary = JSON.parse(line);
      else this.note(line);
    }
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }
}

async function killAndRestart(c: Cluster, copier: Copier, what: string, topic: string, partition: number, lines: string[]): Promise<void> {
  await waitIsrFull(c, topic, partition, 60_000);
  const victim = await c.waitLeader(topic, partition, 30_000);
  const before = copier.copied;
  assert.ok(before < COUNT, `${what} is killed while the copier still copies (${before} of ${COUNT} copied)`);
  const t0 = Date.now();
  await c.broker(victim).kill("SIGKILL");
  await c.waitLeader(topic, partition, c.sessionTimeoutMs + 30_000, victim);
  const tLeader = Date.now();
  // The copier commits again while the victim is down.
  await c.waitFor(() => copier.copied > before, 90_000, `a commit after killing ${what} (broker ${victim})`);
  const tCommit = Date.now();
  await c.restart(victim);
  const line = `SIGKILL ${what} = broker ${victim}: new leader after ${tLeader - t0} ms, a commit after ${tCommit - t0} ms (copied ${before} -> ${copier.copied})`;
  c.note(line);
  lines.push(line);
}

test(`cluster: consume-transform-produce of ${COUNT} records with confluent-kafka transactions; the input leader, the output leader and the transaction coordinator SIGKILLed in turn; read_committed sees each record exactly once, in order`, { skip, timeout: 420_000 }, async () => {
  await withCluster(3, { budgetMs: 400_000, label: "strand-cluster-txn-", overrides: { "transaction.state.log.num.partitions": "5", "offsets.topic.num.partitions": "5" } }, async (c) => {
    const spec = { partitions: 1, replicationFactor: 3, configs: { "min.insync.replicas": "2" } };
    await createTopic(c, "ctp-in", spec);
    await createTopic(c, "ctp-out", spec);
    const all = [0, 1, 2].map((i) => c.broker(i).bootstrap).join(",");
    const copier = new Copier(all);
    const lines: string[] = [];
    try {
      await c.waitFor(() => copier.copied > 0, 120_000, "the copier's first commit");
      await killAndRestart(c, copier, "the input leader", "ctp-in", 0, lines);
      await killAndRestart(c, copier, "the output leader", "ctp-out", 0, lines);
      await c.waitFor(async () => (await c.leaderOf("__transaction_state", partitionForGroup(TXN_ID, 5))) >= 0, 30_000, "a coordinator");
      await killAndRestart(c, copier, "the transaction coordinator", "__transaction_state", partitionForGroup(TXN_ID, 5), lines);
      const code = await Promise.race([copier.exited, sleep(300_000).then(() => "timeout" as const)]);
      assert.notEqual(code, "timeout", `the copier finished (copied ${copier.copied}); log: ${copier.log.join(" | ")}`);
    } finally {
      copier.kill();
    }
    console.log(lines.join("\n"));
    const s = copier.summary;
    console.log(JSON.stringify(s));
    assert.ok(s !== null, `the copier printed its summary; log: ${copier.log.join(" | ")}`);
    assert.deepEqual([s.committed_read, s.duplicates, s.committed_exact, s.group_offset], [COUNT, 0, true, COUNT], JSON.stringify(s));
    assert.ok((s.uncommitted_read as number) >= COUNT);
  });
});
