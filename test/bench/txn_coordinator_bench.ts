// What the transaction coordinator costs per transaction, on a real LogManager / ReplicaManager (a
// temp dir, one broker, __transaction_state with one partition) with markers answered at once (a
// fake sender): transactions/s of AddPartitionsToTxn (3 partitions) + EndTxn(commit) + markers +
// CompleteCommit, one transaction at a time and 50 transactional ids at once; each transaction is
// three appends to __transaction_state. Baseline in the same run: the same single-record appends to
// the same partition through the same path (ReplicaTopicLog), with no coordinator, one at a time.
// The ratio is the coordinator's overhead; issue 15's target is 100 transactions/s end to end.
// Run: node_modules/.bin/bun test/bench/txn_coordinator_bench.ts && node_modules/.bin/deno run -A test/bench/txn_coordinator_bench.ts
import { rmSync } from "node:fs";
import { parseBrokerConfig } from "../../src/broker/config.ts";
import { ReplicaTopicLog } from "../../src/broker/group_wiring.ts";
import { createTxnCoordinator } from "../../src/broker/txn_wiring.ts";
import { TRANSACTION_STATE_TOPIC, type TransactionCoordinator, type TxnMarkerEntry } from "../../src/coordinator/mod.ts";
import { logConfigDefaults, LogManager } from "../../src/log/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import { RecordBatchBuilder } from "../../src/protocol/mod.ts";
import { ReplicaManager } from "../../src/replication/mod.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { tempDir } from "../helpers/broker.ts";

const SECONDS = 2;
const platform = await loadPlatform();
const { config } = parseBrokerConfig(new Map([["transaction.state.log.num.partitions", "1"]]));
const logCfg = { ...logConfigDefaults, segmentBytes: 64 << 20, maxMessageBytes: 1 << 20, minInsyncReplicas: 1 };
const root = tempDir("strand-txn-bench-");
const lm = new LogManager(platform, [`${root}/data`], logCfg, silentLogger);
await lm.startup(0, "cluster");
const rm = new ReplicaManager(0, lm, platform.clock, silentLogger);
let nextId = 1n;
const c = createTxnCoordinator(platform, config, rm, silentLogger, {
  generateProducerId: () => Promise.resolve(nextId++),
  markerSender: { send: (_b: number, markers: TxnMarkerEntry[]) => Promise.resolve(markers.map((m) => m.partitions.map(() => 0))) },
  leaderOf: () => 1,
});
for (const topic of [TRANSACTION_STATE_TOPIC, "baseline"]) {
  rm.becomeLeaderOrFollower({ topic, partition: 0, topicId: new Uint8Array(16), controllerEpoch: 1, leader: 0, leaderEpoch: 0, isr: [0], replicas: [0], partitionEpoch: 0 }, logCfg);
}
await new Promise((r) => setTimeout(r, 10));
c.startup();

/** Waits for pred on microtasks first (a timer's clamp would be most of what is measured), then timers. */
async function until(pred: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !pred(); i++) await Promise.resolve();
  while (!pred()) await new Promise((r) => setTimeout(r, 0));
}

/** One transaction of a producer, from AddPartitionsToTxn to CompleteCommit. */
async function oneTxn(c: TransactionCoordinator, id: string, pid: bigint, epoch: number): Promise<void> {
  const parts = [0, 1, 2].map((partition) => ({ topic: "out", partition }));
  if (await c.handleAddPartitions(id, pid, epoch, parts) !== 0) throw new Error("add failed");
  if (await c.handleEndTxn(id, pid, epoch, true) !== 0) throw new Error("end failed");
  const m = c.state.getTransactionState(id);
  await until(() => m.ok && m.metadata!.state === "CompleteCommit" && m.metadata!.pendingState === null);
}

async function txnsPerSecond(producers: number): Promise<number> {
  const ids = await Promise.all(Array.from({ length: producers }, async (_, i) => {
    const id = `bench-${producers}-${i}`;
    const r = await c.handleInitProducerId(id, 60_000, null);
    return { id, pid: r.producerId, epoch: r.producerEpoch };
  }));
  let done = 0;
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(ids.map(async (p) => {
    while (performance.now() < end) {
      await oneTxn(c, p.id, p.pid, p.epoch);
      done++;
    }
  }));
  return done / SECONDS;
}

async function appendsPerSecond(): Promise<number> {
  const log = new ReplicaTopicLog(rm, "baseline", 1 << 20, 30_000);
  const key = new Uint8Array(40);
  const value = new Uint8Array(80);
  let done = 0;
  const end = performance.now() + SECONDS * 1000;
  while (performance.now() < end) {
    const b = new RecordBatchBuilder();
    b.append(BigInt(Date.now()), key, value);
    if (await log.append(0, b.build(0)) !== 0) throw new Error("append failed");
    done++;
  }
  return done / SECONDS;
}

const baseline = await appendsPerSecond();
const serial = await txnsPerSecond(1);
const parallel = await txnsPerSecond(50);
const runtime = (globalThis as { Bun?: unknown }).Bun !== undefined ? "bun" : "deno";
console.log(`${runtime}: baseline: single-record appends to one partition, one at a time: ${baseline.toFixed(0)}/s (a transaction takes 3: ${(baseline / 3).toFixed(0)}/s)`);
console.log(`${runtime}: transactions (3 partitions, commit, markers, complete), 1 producer:   ${serial.toFixed(0)}/s (ratio to baseline/3: ${(serial / (baseline / 3)).toFixed(2)})`);
console.log(`${runtime}: transactions, 50 producers at once:                              ${parallel.toFixed(0)}/s`);
c.shutdown();
rm.shutdown();
lm.shutdown();
rmSync(root, { recursive: true, force: true });
