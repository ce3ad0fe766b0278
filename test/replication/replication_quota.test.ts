// Replication throttling (Kafka's ReplicationQuotaManager, KIP-73) on the leader side: a
// ReplicaManager over real logs answers an out-of-sync follower's fetch of a throttled partition
// with no records while leader.replication.throttled.rate is exceeded, records the bytes it
// serves for throttled partitions (in-sync followers' too), leaves consumers, in-sync followers
// and unthrottled partitions alone, and does not let a throttled partition's new data end a
// follower's long-poll. The quota's sampled rate runs on a test clock; the follower side is in
// replica_fetcher.test.ts.
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { test } from "node:test";
import { isThrottledReplica, type LogConfig, logConfigDefaults, LogManager, parseThrottledReplicas, type TopicLogConfig } from "../../src/log/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import { ReplicaManager, ReplicationQuotaManager } from "../../src/replication/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { tempDir } from "../helpers/broker.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";

const platform = await loadPlatform();

test("replication quota: exceeded only above the quota, measured over the sample windows; unlimited at Long.MAX_VALUE", () => {
  let now = 1_000_000;
  const q = new ReplicationQuotaManager({ monotonicMs: () => now }, 11, 1000);
  q.record(1_000_000);
  assert.equal(q.isQuotaExceeded(), false, "no quota set: Long.MAX_VALUE");
  q.updateQuota(9_223_372_036_854_775_807);
  assert.equal(q.isQuotaExceeded(), false);
  q.updateQuota(100_000);
  // 1,000,000 bytes over the 10 s a first burst is measured against: 100,000 B/s, not above.
  assert.equal(q.rateBytesPerSec(), 100_000);
  assert.equal(q.isQuotaExceeded(), false);
  q.record(1);
  assert.equal(q.isQuotaExceeded(), true);
  now += 11_000; // every sample has aged out
  assert.equal(q.isQuotaExceeded(), false);
  assert.equal(q.rateBytesPerSec(), 0);
});

test("throttled replicas: '*', partition:broker pairs for this broker only, empty", () => {
  const all = parseThrottledReplicas("*");
  assert.equal(isThrottledReplica(all, 7, 3), true);
  const pairs = parseThrottledReplicas(" 0:1 , 2:1,2:3");
  assert.deepEqual([isThrottledReplica(pairs, 0, 1), isThrottledReplica(pairs, 0, 3), isThrottledReplica(pairs, 2, 3), isThrottledReplica(pairs, 1, 1)], [true, false, true, false]);
  assert.equal(isThrottledReplica(parseThrottledReplicas(""), 0, 0), false);
  assert.equal(isThrottledReplica(parseThrottledReplicas(undefined), 0, 0), false);
  assert.equal(isThrottledReplica(undefined, 0, 0), false);
});

const cfg: LogConfig = { ...logConfigDefaults };

test("leader side: an out-of-sync follower gets nothing for a throttled partition past the quota; consumers, in-sync followers and other partitions are served", async () => {
  const root = tempDir("strand-replication-quota-");
  const lm = new LogManager(platform, [`${root}/data`], cfg, silentLogger);
  await lm.startup(0, "cluster");
  let now = 5_000_000;
  const quota = new ReplicationQuotaManager({ monotonicMs: () => now }, 11, 1000);
  quota.updateQuota(10); // bytes per second: the first fetch's bytes take it over
  const rm = new ReplicaManager(0, lm, platform.clock, silentLogger, { leaderQuota: quota });
  // Partition 0's leader replica (on broker 0) is throttled; partition 1's is not.
  const topicCfg: TopicLogConfig = { ...cfg, maxMessageBytes: 1 << 20, minInsyncReplicas: 1, leaderThrottledReplicas: parseThrottledReplicas("0:0,1:5") };
  const state = (partition: number, leaderEpoch: number, isr: number[]) => ({
    topic: "t",
    partition,
    topicId: new Uint8Array(16),
    controllerEpoch: 1,
    leader: 0,
    leaderEpoch,
    isr,
    replicas: [0, 1],
    partitionEpoch: leaderEpoch,
    isNew: leaderEpoch === 0,
  });
  const fetch = (replicaId: number, partition: number, fetchOffset: number, maxWaitMs = 0) =>
    rm.fetchMessages({ replicaId, maxWaitMs, minBytes: 1, maxBytes: 1 << 20, partitions: [{ topic: "t", partition, fetchOffset, maxBytes: 1 << 20 }] });
  const bytes = (r: { records: Uint8Array | null }[]) => r[0].records?.length ?? 0;
  try {
    for (const p of [0, 1]) {
      assert.equal(rm.becomeLeaderOrFollower(state(p, 0, [0]), topicCfg), ErrorCode.NONE);
      for (let i = 0; i < 3; i++) assert.equal(rm.appendToPartition("t", p, buildBatch(valueRecords(2, `p${p}-`, 50)), 1 << 20).errorCode, ErrorCode.NONE);
    }
    // Not exceeded yet: the follower is served, and its bytes go on the quota.
    const first = await fetch(1, 0, 0);
    assert.ok(bytes(first) > 100);
    assert.equal(quota.rateBytesPerSec(), bytes(first) / 10, "recorded over the 10 s a first burst is measured against");
    assert.equal(quota.isQuotaExceeded(), true);
    // Exceeded: an out-of-sync follower gets no records for partition 0, with the offsets as usual.
    const throttled = await fetch(1, 0, 0);
    assert.deepEqual([throttled[0].errorCode, bytes(throttled), throttled[0].logStartOffset], [ErrorCode.NONE, 0, 0]);
    // Partition 1 names broker 5, not this one: not throttled, and its bytes are not recorded.
    const before = quota.rateBytesPerSec();
    assert.ok(bytes(await fetch(1, 1, 0)) > 100);
    assert.equal(quota.rateBytesPerSec(), before);
    // Consumers are never throttled by replication quotas.
    assert.ok(bytes(await fetch(-1, 0, 0)) > 100);

    // A long-poll at the log end is not ended by a throttled partition's new data.
    let settled = false;
    const polling = fetch(1, 0, 6, 200).then((r) => ((settled = true), r));
    assert.equal(rm.appendToPartition("t", 0, buildBatch(valueRecords(1, "late-", 50)), 1 << 20).errorCode, ErrorCode.NONE);
    await new Promise((r) => setImmediate(r));
    assert.equal(settled, false, "the append did not complete the throttled follower's wait");
    assert.equal(bytes(await polling), 0, "answered at its max wait, empty");

    // Once the samples age out the follower is served again.
    now += 12_000;
    assert.ok(bytes(await fetch(1, 0, 0)) > 100);

    // An in-sync follower is served past the quota, and its bytes still count (Kafka's sizeOfThrottledPartitions).
    assert.equal(quota.isQuotaExceeded(), true);
    assert.equal(rm.becomeLeaderOrFollower(state(0, 1, [0, 1]), topicCfg), ErrorCode.NONE);
    const rateBefore = quota.rateBytesPerSec();
    const inSync = await fetch(1, 0, 0);
    assert.ok(bytes(inSync) > 100);
    assert.ok(quota.rateBytesPerSec() > rateBefore);
  } finally {
    rm.shutdown();
    lm.shutdown();
    nodeFs.rmSync(root, { recursive: true, force: true });
  }
});
