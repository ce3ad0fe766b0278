// Issue 15's "a producer that begins a transaction and dies", with a real client process: a
// confluent-kafka-python (librdkafka) transactional producer begins a transaction, has 5 records
// acknowledged, and is SIGKILLed. Its transaction holds the last stable offset, so a
// read_committed consumer cannot get past it, not even to another producer's committed records,
// until the coordinator aborts it after its transaction.timeout.ms; then read_committed reads
// only the committed records and read_uncommitted reads all of them. The coordinator's abort bumps
// the epoch, as Kafka's does.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startBroker } from "../helpers/broker.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";

const PYTHON = "/usr/bin/python3";
const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "py", "confluent_txn_dies.py");
const timeoutMs = 3000;

/** Starts the dying producer and resolves once it printed that its records were acknowledged. */
function beginAndWait(bootstrap: string): Promise<{ kill: () => void; exited: Promise<void> }> {
  const child = spawn(PYTHON, [SCRIPT, "begin", bootstrap, "t", "dies", "5", String(timeoutMs)], { stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let out = "", err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the producer did not report its records in 60 s: ${out} ${err.slice(-2000)}`));
    }, 60_000);
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("produced 5")) {
        clearTimeout(timer);
        resolve({ kill: () => child.kill("SIGKILL"), exited });
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the producer exited (${code}) before its records were acknowledged: ${out} ${err.slice(-2000)}`));
    });
  });
}

async function py(args: string[]): Promise<{ values?: string[]; committed?: number }> {
  const r = await run(PYTHON, [SCRIPT, ...args], { timeoutMs: 120_000 });
  const last = r.stdout.toString().trim().split("\n").pop() ?? "";
  assert.equal(r.code, 0, `${args[0]}: ${last} ${r.stderr.slice(-2000)}`);
  return JSON.parse(last);
}

test("confluent-kafka-python: a transactional producer SIGKILLed mid-transaction is aborted after transaction.timeout.ms; read_committed then moves past it to the next committed transaction", { skip: skipUnless("confluent_kafka"), timeout: 240_000 }, async () => {
  const b = await startBroker({ "transaction.abort.timed.out.transaction.cleanup.interval.ms": "500" });
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "t")).errorCode, 0);
    const dying = await beginAndWait(b.bootstrap);
    const acknowledgedAt = performance.now();
    dying.kill();
    await dying.exited;
    const txn = () => b.broker.services.txnCoordinator!.describe("dies").txn!;
    const log = () => b.broker.services.replicaManager.getPartition("t", 0)!.log;
    // Checked only while the transaction cannot have timed out yet (it began before the records
    // were acknowledged): its 5 acknowledged records hold the last stable offset at 0.
    if (performance.now() - acknowledgedAt < timeoutMs / 2) {
      assert.equal(txn().state, "Ongoing", "killed before it could end its transaction");
      assert.deepEqual([log().logEndOffset, log().lastStableOffset], [5, 0], "the open transaction holds the last stable offset");
    }
    assert.deepEqual(await py(["commit", b.bootstrap, "t", "lives", "3"]), { committed: 3 });
    const committed = await py(["read", b.bootstrap, "t", "read_committed", "3"]);
    assert.deepEqual(committed.values, ["kept-0", "kept-1", "kept-2"], "read_committed: the dead producer's records never appear");
    const d = txn();
    assert.deepEqual([d.state, d.producerEpoch], ["CompleteAbort", 1], "aborted by the coordinator, which bumped the epoch (a new transactional id starts at 0)");
    const all = await py(["read", b.bootstrap, "t", "read_uncommitted", "8"]);
    assert.deepEqual(all.values, ["lost-0", "lost-1", "lost-2", "lost-3", "lost-4", "kept-0", "kept-1", "kept-2"], "read_uncommitted sees the aborted records too");
  } finally {
    c.close();
    await b.stop();
  }
});
