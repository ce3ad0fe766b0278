// KIP-392 in the ReplicaManager, over real logs: a follower serves a consumer whose fetch may
// read followers (Fetch v11+: fetchOnlyLeader false) up to its own high watermark, answers
// OFFSET_OUT_OF_RANGE past its log end and FENCED_LEADER_EPOCH for an old epoch, refuses
// leader-only fetches and other followers' fetches with NOT_LEADER_OR_FOLLOWER, and wakes a
// consumer's long poll when the leader's high watermark reaches it. On the leader, a preferred
// read replica skips the read and ends the long poll at once; the replica selector picks the
// most caught-up follower in the client's rack (RackAwareReplicaSelector).
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { test } from "node:test";
import { selectRackAware } from "../../src/broker/replica_selector.ts";
import { type LogConfig, logConfigDefaults, LogManager, type TopicLogConfig } from "../../src/log/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import { ReplicaManager } from "../../src/replication/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { tempDir } from "../helpers/broker.ts";
import { buildBatch, parseBatches, text, valueRecords } from "../helpers/record_batch.ts";

const platform = await loadPlatform();
const cfg: LogConfig = { ...logConfigDefaults };
const topicCfg: TopicLogConfig = { ...cfg, maxMessageBytes: 1 << 20, minInsyncReplicas: 1 };

function state(leader: number, leaderEpoch: number) {
  return { topic: "t", partition: 0, topicId: new Uint8Array(16), controllerEpoch: 1, leader, leaderEpoch, isr: [0, 1], replicas: [0, 1], partitionEpoch: leaderEpoch, isNew: false };
}

const values = (r: { records: Uint8Array | null }) => parseBatches(r.records ?? new Uint8Array(0)).flatMap((b) => b.records.map((x) => text(x.value)));

test("follower read: consumers (fetchOnlyLeader false) up to the follower's high watermark; errors as Kafka's", async () => {
  const root = tempDir("strand-follower-read-");
  const lm = new LogManager(platform, [`${root}/data`], cfg, silentLogger);
  await lm.startup(0, "cluster");
  const rm = new ReplicaManager(0, lm, platform.clock, silentLogger);
  try {
    assert.equal(rm.becomeLeaderOrFollower(state(1, 3), topicCfg), ErrorCode.NONE);
    rm.appendAsFollower("t", 0, buildBatch(valueRecords(2, "a"), { baseOffset: 0n }), 2, 0);
    rm.appendAsFollower("t", 0, buildBatch(valueRecords(2, "b"), { baseOffset: 2n }), 2, 0);
    const read = (fetchOffset: number, more: { fetchOnlyLeader?: boolean; replicaId?: number; currentLeaderEpoch?: number; maxWaitMs?: number } = {}) =>
      rm.fetchMessages({
        replicaId: more.replicaId ?? -1,
        maxWaitMs: more.maxWaitMs ?? 0,
        minBytes: 1,
        maxBytes: 1 << 20,
        fetchOnlyLeader: more.fetchOnlyLeader ?? false,
        partitions: [{ topic: "t", partition: 0, fetchOffset, maxBytes: 1 << 20, currentLeaderEpoch: more.currentLeaderEpoch ?? -1 }],
      }).then((r) => r[0]);

    const first = await read(0);
    assert.equal(first.errorCode, ErrorCode.NONE);
    assert.equal(first.highWatermark, 2);
    assert.deepEqual(values(first), ["a0", "a1"], "up to the high watermark (2), not the log end (4)");
    const atHw = await read(2);
    assert.equal(atHw.errorCode, ErrorCode.NONE);
    assert.deepEqual(values(atHw), []);
    assert.equal((await read(3)).errorCode, ErrorCode.NONE, "between HW and log end: empty");
    assert.equal((await read(9)).errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
    assert.equal((await read(0, { currentLeaderEpoch: 2 })).errorCode, ErrorCode.FENCED_LEADER_EPOCH);
    assert.equal((await read(0, { currentLeaderEpoch: 3 })).errorCode, ErrorCode.NONE);
    assert.equal((await read(0, { fetchOnlyLeader: true })).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal((await read(0, { replicaId: 1 })).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);

    // A long poll at the high watermark ends when the leader's next answer moves it.
    const waiting = read(2, { maxWaitMs: 10_000 });
    setTimeout(() => rm.appendAsFollower("t", 0, new Uint8Array(0), 4, 0), 50);
    const woken = await waiting;
    assert.equal(woken.highWatermark, 4);
    assert.deepEqual(values(woken), ["b0", "b1"]);
  } finally {
    rm.shutdown();
    lm.shutdown();
    nodeFs.rmSync(root, { recursive: true, force: true });
  }
});

test("leader: a preferred read replica skips the read and answers at once, with the partition's offsets", async () => {
  const root = tempDir("strand-preferred-replica-");
  const lm = new LogManager(platform, [`${root}/data`], cfg, silentLogger);
  await lm.startup(0, "cluster");
  const rm = new ReplicaManager(0, lm, platform.clock, silentLogger);
  try {
    assert.equal(rm.becomeLeaderOrFollower(state(0, 1), topicCfg), ErrorCode.NONE);
    assert.equal(rm.appendToPartition("t", 0, buildBatch(valueRecords(3, "x")), 1 << 20).errorCode, ErrorCode.NONE);
    // The follower fetches to offset 3: in the ISR and caught up.
    await rm.fetchMessages({ replicaId: 1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, partitions: [{ topic: "t", partition: 0, fetchOffset: 3, maxBytes: 1 << 20 }] });
    const p = rm.getPartition("t", 0)!;
    assert.deepEqual(p.readReplicaCandidates(3, Date.now()).map((c) => [c.brokerId, c.logEndOffset]), [[1, 3]]);
    assert.deepEqual(p.readReplicaCandidates(4, Date.now()), [], "a follower without the offset is no candidate");
    const [r] = await rm.fetchMessages({
      replicaId: -1,
      maxWaitMs: 30_000,
      minBytes: 1 << 20,
      maxBytes: 1 << 20,
      fetchOnlyLeader: false,
      partitions: [{ topic: "t", partition: 0, fetchOffset: 0, maxBytes: 1 << 20, preferredReadReplica: () => 1 }],
    });
    assert.equal(r.preferredReadReplica, 1);
    assert.equal(r.records?.length, 0);
    assert.equal(r.highWatermark, 3);
  } finally {
    rm.shutdown();
    lm.shutdown();
    nodeFs.rmSync(root, { recursive: true, force: true });
  }
});

test("RackAwareReplicaSelector: the leader without a rack, in the rack, or with no replica there; else the most caught-up follower", () => {
  const leader = { brokerId: 0, rack: "r0", logEndOffset: 100, timeSinceLastCaughtUpMs: 0 };
  const f1 = { brokerId: 1, rack: "r1", logEndOffset: 90, timeSinceLastCaughtUpMs: 10 };
  const f2 = { brokerId: 2, rack: "r1", logEndOffset: 95, timeSinceLastCaughtUpMs: 50 };
  const f3 = { brokerId: 3, rack: "r1", logEndOffset: 95, timeSinceLastCaughtUpMs: 20 };
  const all = [leader, f1, f2, f3];
  assert.equal(selectRackAware("", leader, all), 0);
  assert.equal(selectRackAware("r0", leader, all), 0);
  assert.equal(selectRackAware("r9", leader, all), 0);
  assert.equal(selectRackAware("r1", leader, all), 3, "highest log end, then most recently caught up");
  assert.equal(selectRackAware("r1", leader, [leader, f1]), 1);
  assert.equal(selectRackAware("r1", { ...leader, rack: "r1" }, [{ ...leader, rack: "r1" }, f1, f2]), 0, "the leader when it is in the rack");
});
