// The transaction coordinator on a real LogManager and ReplicaManager (files in a temp dir), wired
// as the broker wires it (src/broker/txn_wiring.ts): state changes are appended to
// __transaction_state-<p> (read back from the segment files), the coordinator loads a partition
// when this broker becomes its leader, and after a restart (logs closed and reopened) every id comes
// back with its producer id, epoch and state: a prepared commit is completed by the new
// coordinator (markers sent again at the new coordinator epoch), and a transaction left Ongoing is
// aborted once its timeout passes, under a bumped epoch, which the next restart finds too.
// Time for the coordinator is a manual clock; the logs use the real one.
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { test } from "node:test";
import { createTxnCoordinator } from "../../src/broker/txn_wiring.ts";
import { parseBrokerConfig } from "../../src/broker/config.ts";
import { TRANSACTION_STATE_TOPIC, type TransactionCoordinator, txnStateFromId } from "../../src/coordinator/mod.ts";
import { logConfigDefaults, LogManager } from "../../src/log/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Platform } from "../../src/platform/types.ts";
import { decodeTransactionLogKey, decodeTransactionLogValue } from "../../src/protocol/mod.ts";
import { ReplicaManager } from "../../src/replication/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { tempDir } from "../helpers/broker.ts";
import { parseBatches } from "../helpers/record_batch.ts";
import { ManualClock } from "./harness.ts";
import { FakeMarkerSender } from "./txn_harness.ts";

const platform: Platform = await loadPlatform();
const PARTITIONS = 3;
const TIMEOUT_MS = 60_000;
const ABORT_INTERVAL_MS = 5_000;
const { config } = parseBrokerConfig(new Map([
  ["transaction.state.log.num.partitions", String(PARTITIONS)],
  ["transaction.abort.timed.out.transaction.cleanup.interval.ms", String(ABORT_INTERVAL_MS)],
]));
const logCfg = { ...logConfigDefaults, segmentBytes: 1 << 20, maxMessageBytes: 1 << 20, minInsyncReplicas: 1 };

interface Node {
  lm: LogManager;
  rm: ReplicaManager;
  c: TransactionCoordinator;
}

/** A broker's storage and coordinator over dir, leading every __transaction_state partition at leaderEpoch. */
async function start(dir: string, clock: ManualClock, sender: FakeMarkerSender, leaderEpoch: number, ids: { next: bigint }): Promise<Node> {
  const lm = new LogManager(platform, [dir], logCfg, silentLogger);
  await lm.startup(0, "cluster");
  const rm = new ReplicaManager(0, lm, platform.clock, silentLogger);
  const coordinatorPlatform: Platform = Object.assign(Object.create(platform), { clock });
  const c = createTxnCoordinator(coordinatorPlatform, config, rm, silentLogger, {
    generateProducerId: () => Promise.resolve(ids.next++),
    markerSender: sender,
    leaderOf: (topic) => (topic === "t" ? 1 : null),
  });
  for (let p = 0; p < PARTITIONS; p++) {
    const code = rm.becomeLeaderOrFollower({
      topic: TRANSACTION_STATE_TOPIC,
      partition: p,
      topicId: new Uint8Array(16).fill(7),
      controllerEpoch: 1,
      leader: 0,
      leaderEpoch,
      isr: [0],
      replicas: [0],
      partitionEpoch: leaderEpoch,
    }, logCfg);
    assert.equal(code, 0);
  }
  // Loading yields on the coordinator's clock between chunks.
  for (let i = 0; i < 20 && c.state.loadingPartitions > 0; i++) await clock.advance(0);
  assert.equal(c.state.loadingPartitions, 0, "every partition loaded");
  c.startup();
  return { lm, rm, c };
}

function stop(n: Node): void {
  n.c.shutdown();
  n.rm.shutdown();
  n.lm.shutdown();
}

/** Every __transaction_state record for id in the segment files, as "State pid/epoch [partitions]". */
function onDisk(dir: string, c: TransactionCoordinator, id: string): string[] {
  const pdir = `${dir}/${TRANSACTION_STATE_TOPIC}-${c.partitionFor(id)}`;
  const out: string[] = [];
  for (const f of nodeFs.readdirSync(pdir).filter((f) => f.endsWith(".log")).sort()) {
    for (const b of parseBatches(new Uint8Array(nodeFs.readFileSync(`${pdir}/${f}`)))) {
      assert.ok(b.crcValid);
      assert.equal(b.attributes & 7, 0, "__transaction_state is written uncompressed");
      for (const r of b.records) {
        const k = decodeTransactionLogKey(r.key!);
        if (k.kind !== "txn" || k.transactionalId !== id) continue;
        const v = decodeTransactionLogValue(r.value!);
        assert.equal(v.kind, "txn");
        if (v.kind !== "txn") continue;
        const parts = (v.transactionPartitions ?? []).flatMap((p) => p.partitionIds.map((i) => `${p.topic}-${i}`)).sort();
        out.push(`${txnStateFromId(v.transactionStatus)} ${v.producerId}/${v.producerEpoch}${parts.length > 0 ? ` [${parts.join(",")}]` : ""}`);
      }
    }
  }
  return out;
}

function described(c: TransactionCoordinator, id: string): string {
  const d = c.describe(id);
  assert.equal(d.errorCode, 0, `${id} described`);
  const t = d.txn!;
  const parts = t.partitions.map((p) => `${p.topic}-${p.partition}`).sort();
  return `${t.state} ${t.producerId}/${t.producerEpoch}${parts.length > 0 ? ` [${parts.join(",")}]` : ""}`;
}

test("transaction state is written to __transaction_state, survives a restart with the same producer ids, epochs and states, and an Ongoing transaction is aborted after its timeout once reloaded", async () => {
  const root = tempDir("strand-txn-restart-");
  const dir = `${root}/data`;
  const clock = new ManualClock();
  const sender = new FakeMarkerSender();
  const ids = { next: 5000n };
  try {
    let n = await start(dir, clock, sender, 0, ids);
    const init = (id: string) => n.c.handleInitProducerId(id, TIMEOUT_MS, null);
    // tx-done: committed. tx-open: left Ongoing. tx-prep: commit prepared, its markers unanswered.
    const done = await init("tx-done");
    assert.deepEqual(done, { errorCode: 0, producerId: 5000n, producerEpoch: 0 });
    assert.equal(await n.c.handleAddPartitions("tx-done", 5000n, 0, [{ topic: "t", partition: 0 }]), 0);
    assert.equal(await n.c.handleEndTxn("tx-done", 5000n, 0, true), 0);
    await clock.advance(0);
    const open = await init("tx-open");
    assert.equal((await init("tx-open")).producerEpoch, 1, "a second InitProducerId bumps");
    assert.equal(await n.c.handleAddPartitions("tx-open", open.producerId, 1, [{ topic: "t", partition: 1 }, { topic: "t", partition: 2 }]), 0);
    const prep = await init("tx-prep");
    assert.equal(await n.c.handleAddPartitions("tx-prep", prep.producerId, 0, [{ topic: "t", partition: 3 }]), 0);
    sender.plan("t", 3, "hold");
    assert.equal(await n.c.handleEndTxn("tx-prep", prep.producerId, 0, true), 0);
    await clock.advance(0);

    assert.deepEqual(onDisk(dir, n.c, "tx-done"), ["Empty 5000/0", "Ongoing 5000/0 [t-0]", "PrepareCommit 5000/0 [t-0]", "CompleteCommit 5000/0"]);
    assert.deepEqual(onDisk(dir, n.c, "tx-open"), ["Empty 5001/0", "Empty 5001/1", "Ongoing 5001/1 [t-1,t-2]"]);
    assert.deepEqual(onDisk(dir, n.c, "tx-prep"), ["Empty 5002/0", "Ongoing 5002/0 [t-3]", "PrepareCommit 5002/0 [t-3]"]);
    stop(n);

    // Restart: the coordinator epoch is the partitions' new leader epoch.
    n = await start(dir, clock, sender, 1, ids);
    assert.equal(described(n.c, "tx-done"), "CompleteCommit 5000/0");
    assert.equal(described(n.c, "tx-open"), "Ongoing 5001/1 [t-1,t-2]");
    await clock.advance(0);
    assert.equal(described(n.c, "tx-prep"), "CompleteCommit 5002/0", "the prepared commit was completed after the load");
    const resent = sender.sent.flatMap((s) => s.markers).filter((m) => m.coordinatorEpoch === 1);
    assert.deepEqual(resent.map((m) => [m.producerId, m.committed, m.partitions]), [[5002n, true, [{ topic: "t", partition: 3 }]]]);
    // The old producer of tx-open is still the current one: it may go on.
    assert.equal(n.c.handleVerifyPartitionsInTransaction("tx-open", 5001n, 1, [{ topic: "t", partition: 1 }])[0], 0);

    // tx-open was started at the first run's clock time; its timeout passes, the abort loop runs.
    await clock.advance(TIMEOUT_MS + ABORT_INTERVAL_MS);
    assert.equal(described(n.c, "tx-open"), "CompleteAbort 5001/2");
    const aborts = sender.sent.flatMap((s) => s.markers).filter((m) => !m.committed);
    assert.deepEqual(aborts.map((m) => [m.producerId, m.producerEpoch, m.coordinatorEpoch, m.partitions.map((p) => p.partition).sort()]), [[5001n, 2, 1, [1, 2]]]);
    assert.equal(await n.c.handleEndTxn("tx-open", 5001n, 1, true), ErrorCode.PRODUCER_FENCED, "the timed-out producer is fenced ");
    stop(n);

    n = await start(dir, clock, sender, 2, ids);
    assert.equal(described(n.c, "tx-open"), "CompleteAbort 5001/2");
    assert.equal(described(n.c, "tx-prep"), "CompleteCommit 5002/0");
    assert.deepEqual(onDisk(dir, n.c, "tx-open").slice(-2), ["PrepareAbort 5001/2 [t-1,t-2]", "CompleteAbort 5001/2"]);
    assert.deepEqual((await init("tx-open")), { errorCode: 0, producerId: 5001n, producerEpoch: 3 });
    stop(n);
  } finally {
    nodeFs.rmSync(root, { recursive: true, force: true });
  }
});
