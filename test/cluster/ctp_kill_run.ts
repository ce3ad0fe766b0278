// The scenario of txn_ctp_kill.test.ts, shared with `npm run bench:eos` (which runs it at the
// issue's 100,000 records): on a three-broker cluster (RF 3, min.insync.replicas=2), COUNT numbered
// records are written to ctp-in, then copied to ctp-out by a confluent-kafka transactional copier
// (rdkafka_ctp.py: send_offsets_to_transaction, every abortEvery-th transaction aborted on purpose,
// abort and rewind on abortable errors, a new producer when fenced) while the leader of ctp-in, the
// leader of ctp-out and the transaction coordinator (the leader of the transactional id's
// __transaction_state partition) are SIGKILLed in turn, each restarted once its partitions have new
// leaders and the copier has committed and aborted again. Returns the copier's summary (what a
// read_committed and a read_uncommitted reader of ctp-out saw) and the timings.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { partitionForGroup } from "../../src/coordinator/group_partition.ts";
import type { Cluster } from "../helpers/cluster.ts";
import { createTopic, waitIsrFull } from "./workload.ts";

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "rdkafka_ctp.py");
export const CTP_GROUP = "ctp-kill";
const TXN_ID = `ctp-${CTP_GROUP}`;
/** The cluster's __transaction_state and __consumer_offsets partitions (the overrides to start it with). */
export const ctpClusterOverrides = { "transaction.state.log.num.partitions": "5", "offsets.topic.num.partitions": "5" };

export interface CtpOptions {
  count: number;
  /** Records per transaction. */
  txnRecords: number;
  /** Every abortEvery-th transaction is aborted on purpose. */
  abortEvery: number;
  /** The copier's own deadline. */
  deadlineS: number;
}

export interface CtpRun {
  summary: Record<string, unknown>;
  /** One line per kill. */
  lines: string[];
  /** What the copier itself printed besides its progress (the first 100 lines; not librdkafka's stderr). */
  copierLog: string[];
  /** From the copier's start (after the input was written) to its last commit. */
  copyMs: number;
  inputMs: number;
}

class Copier {
  copied = 0;
  deliberateAborts = 0;
  inputWrittenAt = 0;
  lastCommitAt = 0;
  summary: Record<string, unknown> | null = null;
  readonly log: string[] = [];
  readonly said: string[] = [];
  private readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  private pending = "";

  constructor(bootstrap: string, o: CtpOptions) {
    const args = [SCRIPT, bootstrap, "ctp-in", "ctp-out", CTP_GROUP, String(o.count), String(o.txnRecords), String(o.deadlineS), String(o.abortEvery)];
    this.child = spawn("/usr/bin/python3", args, { stdio: ["ignore", "pipe", "pipe"] });
    this.child.stdout!.on("data", (d: Buffer) => this.read(d.toString()));
    this.child.stderr!.on("data", (d: Buffer) => this.note(`stderr: ${d.toString().trim().slice(0, 300)}`));
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
  }

  private note(line: string): void {
    if (this.log.length < 100) this.log.push(line);
    // The copier's own lines (rewinds tried again, failed aborts), apart from librdkafka's chatter.
    if (!line.startsWith("stderr:") && this.said.length < 100) this.said.push(line);
  }

  private read(text: string): void {
    const lines = (this.pending + text).split("\n");
    this.pending = lines.pop() ?? "";
    for (const line of lines) {
      if (line.startsWith("P ")) {
        this.copied = Number(line.slice(2));
        this.lastCommitAt = Date.now();
      } else if (line.startsWith("A ")) this.deliberateAborts = Number(line.slice(2));
      else if (line === "INPUT written") this.inputWrittenAt = Date.now();
      else if (line.startsWith("{")) this.summary = JSON.parse(line);
      else this.note(line);
    }
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }
}

async function killAndRestart(c: Cluster, copier: Copier, count: number, what: string, topic: string, partition: number, lines: string[]): Promise<void> {
  await waitIsrFull(c, topic, partition, 60_000);
  const victim = await c.waitLeader(topic, partition, 30_000);
  const before = copier.copied;
  const abortsBefore = copier.deliberateAborts;
  assert.ok(before < count, `${what} is killed while the copier still copies (${before} of ${count} copied)`);
  const t0 = Date.now();
  await c.broker(victim).kill("SIGKILL");
  await c.waitLeader(topic, partition, c.sessionTimeoutMs + 30_000, victim);
  const tLeader = Date.now();
  // The copier commits, and aborts, again while the victim is down.
  await c.waitFor(() => copier.copied > before, 90_000, `a commit after killing ${what} (broker ${victim})`);
  await c.waitFor(() => copier.deliberateAborts > abortsBefore, 90_000, `an abort after killing ${what} (broker ${victim})`);
  const tCommit = Date.now();
  await c.restart(victim);
  // (The copier's times count from its "INPUT written", too.)
  const at = ((t0 - copier.inputWrittenAt) / 1000).toFixed(1);
  const line = `SIGKILL ${what} = broker ${victim} at ${at} s: new leader after ${tLeader - t0} ms, a commit and an abort after ${tCommit - t0} ms (copied ${before} -> ${copier.copied}, aborts ${abortsBefore} -> ${copier.deliberateAborts})`;
  c.note(line);
  lines.push(line);
}

export async function runCtpKill(c: Cluster, o: CtpOptions): Promise<CtpRun> {
  const spec = { partitions: 1, replicationFactor: 3, configs: { "min.insync.replicas": "2" } };
  await createTopic(c, "ctp-in", spec);
  await createTopic(c, "ctp-out", spec);
  const all = [0, 1, 2].map((i) => c.broker(i).bootstrap).join(",");
  const t0 = Date.now();
  const copier = new Copier(all, o);
  const lines: string[] = [];
  try {
    await c.waitFor(() => copier.copied > 0, 180_000, "the copier's first commit");
    await killAndRestart(c, copier, o.count, "the input leader", "ctp-in", 0, lines);
    await killAndRestart(c, copier, o.count, "the output leader", "ctp-out", 0, lines);
    await c.waitFor(async () => (await c.leaderOf("__transaction_state", partitionForGroup(TXN_ID, 5))) >= 0, 30_000, "a coordinator");
    await killAndRestart(c, copier, o.count, "the transaction coordinator", "__transaction_state", partitionForGroup(TXN_ID, 5), lines);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), o.deadlineS * 1000 + 60_000)));
    const code = await Promise.race([copier.exited, late]);
    clearTimeout(timer); // a pending timer would keep a bench process alive
    assert.notEqual(code, "timeout", `the copier finished (copied ${copier.copied}); log: ${copier.log.join(" | ")}`);
  } finally {
    copier.kill();
  }
  assert.ok(copier.summary !== null, `the copier printed its summary; log: ${copier.log.join(" | ")}`);
  return { summary: copier.summary, lines, copierLog: copier.said, copyMs: copier.lastCommitAt - copier.inputWrittenAt, inputMs: copier.inputWrittenAt - t0 };
}
