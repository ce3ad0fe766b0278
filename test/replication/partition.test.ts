// Partition's leader-side rules on a real Log: the high watermark is the minimum over the maximal
// ISR (a follower's unknown position holds it back; a pending ISR change counts its larger set),
// acks=all refused below min.insync.replicas, ISR expansion only once a follower reaches the high
// watermark and this leader's epoch, ISR shrink after replica.lag.time.max.ms, a lost conditional
// ISR write leaving the ISR as it was, an ISR write the registry cannot store retried after a pause
// (and its notification until written), stale LeaderAndIsr states refused, and KIP-320 epoch checks.
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import * as os from "node:os";
import * as nodePath from "node:path";
import { test } from "node:test";
import { Log, logConfigDefaults } from "../../src/log/mod.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import { validateBatches } from "../../src/protocol/mod.ts";
import { EmbeddedRegistryStore, IsrChangeNotificationSequenceZNode, TopicPartitionStateZNode, TopicPartitionZNode } from "../../src/registry/mod.ts";
import { type IsrWriter, Partition, type PartitionState, registryIsrWriter } from "../../src/replication/mod.ts";
import { ErrorCode, KafkaError } from "../../src/util/errors.ts";
import { isrChangeRetryBackoffMs } from "../../src/util/limits.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { faultyPlatform, recordingLogger } from "../helpers/faulty_platform.ts";
import { buildBatch } from "../helpers/record_batch.ts";

const platform = await loadPlatform();

function state(over: Partial<PartitionState> = {}): PartitionState {
  return {
    topic: "t",
    partition: 0,
    topicId: new Uint8Array(16),
    controllerEpoch: 1,
    leader: 1,
    leaderEpoch: 3,
    isr: [1, 2, 3],
    replicas: [1, 2, 3],
    partitionEpoch: 5,
    ...over,
  };
}

async function withPartition(minIsr: number, fn: (p: Partition) => Promise<void> | void): Promise<void> {
  const dir = nodeFs.mkdtempSync(nodePath.join(os.tmpdir(), "strand-partition-"));
  const log = Log.open(platform, `${dir}/t-0`, "t", 0, { ...logConfigDefaults, segmentBytes: 1 << 20, segmentMs: 1e12, minInsyncReplicas: minIsr } as never, silentLogger);
  try {
    await fn(new Partition(1, state(), log, 1000));
  } finally {
    log.close();
    nodeFs.rmSync(dir, { recursive: true, force: true });
  }
}

function append(p: Partition, n: number, acks = -1) {
  const batch = buildBatch(Array.from({ length: n }, (_, i) => ({ value: `v${i}` })));
  return p.appendRecordsToLeader(batch, validateBatches(batch, 1 << 20), acks, 1000);
}

test("partition: the high watermark waits for every ISR member, and an unknown follower holds it back", () =>
  withPartition(1, (p) => {
    append(p, 10);
    assert.equal(p.log.logEndOffset, 10);
    assert.equal(p.highWatermark, 0, "followers 2 and 3 have not fetched yet");
    assert.equal(p.updateFollowerFetchState(2, 10, 10, 1100), false, "3 is still unknown");
    assert.equal(p.highWatermark, 0);
    assert.equal(p.updateFollowerFetchState(3, 4, 10, 1100), true);
    assert.equal(p.highWatermark, 4);
    assert.equal(p.checkEnoughReplicasReachOffset(10), null, "acks=all for offset 9 still waits");
    p.updateFollowerFetchState(3, 10, 10, 1200);
    assert.equal(p.highWatermark, 10);
    assert.equal(p.checkEnoughReplicasReachOffset(10), ErrorCode.NONE);
    // A follower fetching from an older offset cannot move the high watermark back.
    p.updateFollowerFetchState(2, 3, 10, 1300);
    assert.equal(p.highWatermark, 10);
  }));

test("partition: acks=all is refused below min.insync.replicas; after the append it reports NOT_ENOUGH_REPLICAS_AFTER_APPEND", () =>
  withPartition(2, async (p) => {
    append(p, 1);
    const writes: number[][] = [];
    const ok: IsrWriter = (_s, isr) => {
      writes.push(isr);
      return Promise.resolve(9);
    };
    // Nobody has caught up for 40 s against a 30 s lag limit: both followers leave the ISR.
    const shrunk = p.isrToShrink(41_000, 30_000);
    assert.deepEqual(shrunk, [1]);
    assert.equal(await p.changeIsr(shrunk!, ok, () => 41_000), true);
    assert.deepEqual([p.state.isr, p.state.partitionEpoch, writes], [[1], 9, [[1]]]);
    assert.throws(() => append(p, 1), (e) => e instanceof KafkaError && e.code === ErrorCode.NOT_ENOUGH_REPLICAS);
    assert.equal(append(p, 1, 1).firstOffset, 1, "acks=1 still appends");
    assert.equal(p.checkEnoughReplicasReachOffset(2), ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, "HW reached on the leader alone");
  }));

test("partition: the ISR grows only once a follower reaches the high watermark and this leader's epoch start", () =>
  withPartition(1, async (p) => {
    await p.changeIsr([1, 2], (_s, _isr) => Promise.resolve(6), () => 1000);
    append(p, 5);
    p.updateFollowerFetchState(2, 5, 5, 1100);
    assert.equal(p.highWatermark, 5);
    p.updateFollowerFetchState(3, 4, 5, 1100);
    assert.equal(p.isrToExpand(3), null, "3 is below the high watermark");
    // While the write is in flight, the pending (larger) ISR already holds the high watermark.
    p.updateFollowerFetchState(3, 5, 5, 1200);
    assert.deepEqual(p.isrToExpand(3), [1, 2, 3]);
    let release: (v: number) => void = () => {};
    const pending = p.changeIsr([1, 2, 3], () => new Promise<number>((r) => (release = r)), () => 1200);
    assert.deepEqual(p.maximalIsr, [1, 2, 3]);
    append(p, 5);
    p.updateFollowerFetchState(2, 10, 10, 1300);
    assert.equal(p.highWatermark, 5, "3 (pending) has not fetched the new records");
    assert.equal(p.isrToExpand(3), null, "one change at a time");
    release(7);
    assert.equal(await pending, true);
    assert.deepEqual([p.state.isr, p.state.partitionEpoch], [[1, 2, 3], 7]);
  }));

test("partition: a lost conditional ISR write keeps the ISR; stale LeaderAndIsr states are refused; epochs are checked", () =>
  withPartition(1, async (p) => {
    assert.equal(await p.changeIsr([1, 2], () => Promise.resolve(null), () => 1000), false);
    assert.deepEqual([p.state.isr, p.state.partitionEpoch], [[1, 2, 3], 5]);
    assert.equal(p.isNewer(state({ leaderEpoch: 2, partitionEpoch: 9 })), false);
    assert.equal(p.isNewer(state({ partitionEpoch: 4 })), false);
    assert.equal(p.isNewer(state({ partitionEpoch: 6, isr: [1, 2] })), true);
    assert.throws(() => p.applyState(state({ leaderEpoch: 2 }), 1000), (e) => e instanceof KafkaError && e.code === ErrorCode.STALE_CONTROLLER_EPOCH);
    assert.equal(p.checkLeaderEpoch(-1), ErrorCode.NONE);
    assert.equal(p.checkLeaderEpoch(2), ErrorCode.FENCED_LEADER_EPOCH);
    assert.equal(p.checkLeaderEpoch(4), ErrorCode.UNKNOWN_LEADER_EPOCH);
    // Becoming follower at a newer epoch: no leader-side state remains.
    append(p, 3);
    assert.equal(p.applyState(state({ leader: 2, leaderEpoch: 4, partitionEpoch: 7 }), 2000), true);
    assert.equal(p.isLeader, false);
    assert.equal(p.isReplica(2), false);
    assert.throws(() => append(p, 1), (e) => e instanceof KafkaError && e.code === ErrorCode.NOT_LEADER_OR_FOLLOWER);
    // A new leader epoch records its start offset in the leader-epoch cache (KIP-101).
    p.applyState(state({ leader: 1, leaderEpoch: 5, partitionEpoch: 8 }), 3000);
    assert.deepEqual(p.log.endOffsetForEpoch(4), { leaderEpoch: 3, endOffset: 3 });
  }));

test("partition: an ISR change the registry cannot store (its disk full) is kept out, tried again after isrChangeRetryBackoffMs (not at once), and made once there is room; a notification refused after its state is written again until it is", () =>
  withPartition(1, async (p) => {
    const faulty = faultyPlatform(platform);
    const dir = nodeFs.mkdtempSync(nodePath.join(os.tmpdir(), "strand-isr-registry-"));
    const logger = recordingLogger();
    const store = EmbeddedRegistryStore.open(faulty, dir);
    try {
      const r = store.session();
      const path = TopicPartitionStateZNode.path("t", 0);
      await r.ensurePath(TopicPartitionZNode.path("t", 0));
      await r.create(path, TopicPartitionStateZNode.encode({ leaderAndIsr: { leader: 1, leaderEpoch: 3, isr: [1, 2, 3], leaderRecoveryState: 0 }, controllerEpoch: 1 }));
      for (let i = 0; i < 5; i++) await r.setData(path, (await r.getData(path)).data); // version 5, the partition epoch
      let now = 41_000;
      const writer = registryIsrWriter(r, logger, () => now);
      const lift = faulty.inject(dir, "ENOSPC", { ops: ["write"] });
      const shrunk = p.isrToShrink(now, 30_000);
      assert.deepEqual(shrunk, [1]);
      assert.equal(await p.changeIsr(shrunk!, writer, () => now), false);
      assert.deepEqual([p.state.isr, p.state.partitionEpoch], [[1, 2, 3], 5], "the ISR stays as it was");
      assert.equal(p.isrToShrink(now + 10, 30_000), null, "not tried again at once");
      assert.ok(logger.lines.some((l) => l.level === "warn" && /ISR change not written/.test(l.msg)));
      now += isrChangeRetryBackoffMs;
      assert.deepEqual(p.isrToShrink(now, 30_000), [1], "tried again after the pause");
      lift();
      // The state goes through, then its notification is refused: it is kept and written later.
      let liftNotice = () => {};
      const write: IsrWriter = Object.assign((s: PartitionState, isr: number[]) => {
        const v = writer(s, isr); // the state's journal append happens in this call
        liftNotice = faulty.inject(dir, "ENOSPC", { ops: ["write"] }); // the notification's, after it
        return v;
      }, { retryPending: writer.retryPending });
      assert.equal(await p.changeIsr([1, 2], write, () => now), true);
      assert.deepEqual([p.state.isr, p.state.partitionEpoch], [[1, 2], 6]);
      const notices = async () => (await r.getChildren("/isr_change_notification").catch(() => [] as string[])).length;
      assert.equal(await notices(), 0, "the notification was refused");
      writer.retryPending!();
      await new Promise((res) => setTimeout(res, 20));
      assert.equal(await notices(), 0, "still refused");
      liftNotice();
      writer.retryPending!();
      await new Promise((res) => setTimeout(res, 20));
      assert.equal(await notices(), 1, "written once there is room");
      const notice = await r.getChildren("/isr_change_notification");
      assert.deepEqual(IsrChangeNotificationSequenceZNode.decode((await r.getData(`/isr_change_notification/${notice[0]}`)).data), [{ topic: "t", partition: 0 }]);
      assert.deepEqual(logger.lines.filter((l) => l.level === "error"), []);
    } finally {
      await store.close().catch(() => {});
      nodeFs.rmSync(dir, { recursive: true, force: true });
    }
  }));
