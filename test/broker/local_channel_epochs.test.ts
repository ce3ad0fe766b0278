// LocalControllerChannel's controller-epoch fence, as a broker sees it around a controller that
// was paused (SIGSTOP) past its session timeout: while it was stopped another broker won the
// election (a higher epoch) and told this broker the new state; when the old controller runs
// again, whatever it still sends (requests queued or in flight before the pause, or made before
// it notices it was deposed and resigns) carries its old epoch and must change nothing here:
// LeaderAndIsr, UpdateMetadata and StopReplica are all refused with STALE_CONTROLLER_EPOCH, the
// metadata cache and the replicas stay as the new controller left them. Requests of the current
// epoch keep being applied; before any newer controller spoke, the old epoch is still current.
import assert from "node:assert/strict";
import { test } from "node:test";
import { LocalControllerChannel } from "../../src/broker/local_channel.ts";
import { MetadataCache } from "../../src/broker/metadata_cache.ts";
import type { BrokerInfo, TopicInfo } from "../../src/controller/mod.ts";
import { logConfigDefaults } from "../../src/log/mod.ts";
import type { PartitionState, ReplicaManager } from "../../src/replication/mod.ts";
import { ErrorCode, KafkaError } from "../../src/util/errors.ts";

const brokers: BrokerInfo[] = [0, 1, 2].map((id) => ({ id, host: "127.0.0.1", port: 9000 + id, rack: null, epoch: BigInt(100 + id) }));

function topic(leader: number, leaderEpoch: number, isr: number[]): TopicInfo {
  const topicId = new Uint8Array(16).fill(7);
  const p: PartitionState = { topic: "t", partition: 0, topicId, controllerEpoch: 1, leader, leaderEpoch, isr, replicas: [0, 1, 2], partitionEpoch: leaderEpoch };
  return { name: "t", topicId, partitions: [p], configs: {}, configsZxid: 5n };
}

function setup() {
  const metadata = new MetadataCache(0);
  const applied: string[] = [];
  const replicaManager = {
    // Log files are created by becomeLeaderOrFollower here; nothing to prepare.
    prepareLogs: () => Promise.resolve(),
    becomeLeaderOrFollower: (s: PartitionState) => {
      applied.push(`leaderAndIsr ${s.topic}-${s.partition} leader ${s.leader} epoch ${s.leaderEpoch}`);
      return ErrorCode.NONE;
    },
    stopReplica: (t: string, p: number, del: boolean) => void applied.push(`stopReplica ${t}-${p} delete ${del}`),
    logDeletionsSettled: () => Promise.resolve(),
  } as unknown as ReplicaManager;
  const local = new LocalControllerChannel(0, metadata, replicaManager, { ...logConfigDefaults, maxMessageBytes: 1 << 20 }, null);
  const leader = () => metadata.getTopic("t")?.partitions[0];
  return { metadata, local, applied, leader };
}

/** The call is refused with STALE_CONTROLLER_EPOCH, thrown at once or as a rejection. */
async function refusedStale(call: () => Promise<void>): Promise<void> {
  await assert.rejects(Promise.resolve().then(call), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.STALE_CONTROLLER_EPOCH);
}

test("after a newer controller spoke, the deposed controller's LeaderAndIsr, UpdateMetadata and StopReplica change nothing", async () => {
  const { local, applied, leader, metadata } = setup();
  // Before the pause: this broker (0) was controller at epoch 1 and led t-0.
  await local.leaderAndIsr(0, 1, [topic(0, 0, [0, 1, 2])], brokers);
  await local.updateMetadata(0, 1, 0, brokers, [topic(0, 0, [0, 1, 2])], []);
  assert.equal(leader()?.leader, 0);
  // Paused past its session: broker 1 won epoch 2, moved t-0 to 2, and told this broker.
  await local.leaderAndIsr(0, 2, [topic(2, 1, [2, 1])], brokers);
  await local.updateMetadata(0, 2, 1, brokers, [topic(2, 1, [2, 1])], []);
  assert.deepEqual([leader()?.leader, leader()?.leaderEpoch, metadata.controllerId], [2, 1, 1]);
  applied.length = 0;

  // Resumed: its own controller still holds its epoch-1 view (it leads t-0 at epoch 0).
  await refusedStale(() => local.updateMetadata(0, 1, 0, brokers, [topic(0, 0, [0, 1, 2])], []));
  await refusedStale(() => local.leaderAndIsr(0, 1, [topic(0, 0, [0, 1, 2])], brokers));
  await refusedStale(() => local.stopReplica(0, 1, [{ topic: "t", partition: 0 }], true));
  assert.deepEqual(applied, [], "nothing reached the replicas");
  assert.deepEqual([leader()?.leader, leader()?.leaderEpoch, metadata.controllerId], [2, 1, 1], "the metadata is still the new controller's");

  // The current controller goes on being heard (same epoch), e.g. the ISR change that follows.
  await local.updateMetadata(0, 2, 1, brokers, [topic(2, 1, [2, 1, 0])], []);
  assert.deepEqual(leader()?.isr, [2, 1, 0]);
});

test("until a newer controller speaks, the old epoch is current: its requests apply, and the newer ones override them", async () => {
  const { local, applied, leader } = setup();
  await local.updateMetadata(0, 1, 0, brokers, [topic(0, 0, [0, 1, 2])], []);
  // The deposed controller's request arrives first (it ran before the new one reached this broker).
  await local.updateMetadata(0, 1, 0, brokers, [topic(0, 0, [0])], []);
  assert.deepEqual(leader()?.isr, [0]);
  // Then the new controller's: applied, and from now on epoch 1 is refused.
  await local.leaderAndIsr(0, 2, [topic(2, 1, [2, 1])], brokers);
  await local.updateMetadata(0, 2, 1, brokers, [topic(2, 1, [2, 1])], []);
  assert.deepEqual([leader()?.leader, leader()?.isr], [2, [2, 1]]);
  await refusedStale(() => local.updateMetadata(0, 1, 0, brokers, [topic(0, 0, [0])], []));
  assert.deepEqual([leader()?.leader, leader()?.isr], [2, [2, 1]]);
  assert.deepEqual(applied, ["leaderAndIsr t-0 leader 2 epoch 1"]);
});

test("a LeaderAndIsr of many partitions gives the event loop back between partitions, and later requests wait for it", async () => {
  const { local, applied } = setup();
  const busyReplicaManager = (local as unknown as { replicaManager: ReplicaManager }).replicaManager as unknown as {
    becomeLeaderOrFollower: (s: PartitionState) => number;
  };
  const plain = busyReplicaManager.becomeLeaderOrFollower;
  busyReplicaManager.becomeLeaderOrFollower = (s) => {
    // Each partition's files take a while: a slice is used up after a few of them.
    const until = performance.now() + 2;
    while (performance.now() < until) { /* busy, as synchronous file calls are */ }
    return plain(s);
  };
  const topicId = new Uint8Array(16).fill(9);
  const partitions: PartitionState[] = Array.from({ length: 100 }, (_, p) => (
    { topic: "big", partition: p, topicId, controllerEpoch: 1, leader: 0, leaderEpoch: 0, isr: [0], replicas: [0], partitionEpoch: 0 }
  ));
  const big: TopicInfo = { name: "big", topicId, partitions, configs: {}, configsZxid: 5n };
  // Another client's request, due as soon as the loop is free.
  const other = new Promise<void>((resolve) => setTimeout(() => {
    applied.push("another client's request");
    resolve();
  }, 0));
  const creating = local.leaderAndIsr(0, 1, [big], brokers);
  const deleting = local.stopReplica(0, 1, partitions.map((p) => ({ topic: p.topic, partition: p.partition })), true);
  await Promise.all([creating, deleting, other]);
  const at = applied.indexOf("another client's request");
  const firstStop = applied.findIndex((a) => a.startsWith("stopReplica"));
  const lastCreate = applied.findLastIndex((a) => a.startsWith("leaderAndIsr"));
  assert.ok(at > 0 && at < lastCreate, `another request ran while the partitions were being applied (at ${at} of ${lastCreate})`);
  assert.ok(firstStop > lastCreate, "the StopReplica made after the LeaderAndIsr ran after all of it");
  assert.equal(applied.filter((a) => a.startsWith("stopReplica")).length, 100);
});

test("a StopReplica that deletes logs holds the next request until their dirs are renamed", async () => {
  const { local, applied } = setup();
  let renamed = () => {};
  const replicaManager = (local as unknown as { replicaManager: { logDeletionsSettled: () => Promise<void> } }).replicaManager;
  replicaManager.logDeletionsSettled = () => new Promise<void>((resolve) => (renamed = resolve));
  const deleting = local.stopReplica(0, 1, [{ topic: "t", partition: 0 }], true);
  const creating = local.leaderAndIsr(0, 1, [topic(0, 0, [0, 1, 2])], brokers);
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 1));
  assert.deepEqual(applied, ["stopReplica t-0 delete true"], "the LeaderAndIsr waits for the renames");
  renamed();
  await Promise.all([deleting, creating]);
  assert.deepEqual(applied, ["stopReplica t-0 delete true", "leaderAndIsr t-0 leader 0 epoch 0"]);
});
