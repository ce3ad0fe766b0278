// Where a follower reaches its leader (LocalControllerChannel.brokerEndpoint): the metadata's
// live brokers, the live brokers the in-process controller passes, else the leader's own
// registration read from the registry before the partitions are applied. A LeaderAndIsr from the
// wire passes no live brokers (its liveLeaders addresses are never used), so a leader the
// metadata does not know is looked up; one with no registration is not followed (no endpoint:
// its fetcher waits) and a warning names it, while the partition still becomes a follower.
import assert from "node:assert/strict";
import { test } from "node:test";
import { LocalControllerChannel } from "../../src/broker/local_channel.ts";
import type { BrokerEndpoint } from "../../src/broker/metadata_cache.ts";
import { MetadataCache } from "../../src/broker/metadata_cache.ts";
import type { TopicInfo } from "../../src/controller/mod.ts";
import { logConfigDefaults } from "../../src/log/mod.ts";
import type { PartitionState, ReplicaManager } from "../../src/replication/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { recordingLogger } from "../helpers/faulty_platform.ts";

function topic(name: string, leader: number, replicas: number[]): TopicInfo {
  const topicId = new Uint8Array(16).fill(3);
  const p: PartitionState = { topic: name, partition: 0, topicId, controllerEpoch: 1, leader, leaderEpoch: 4, isr: replicas, replicas, partitionEpoch: 4 };
  return { name, topicId, partitions: [p], configs: {}, configsZxid: 5n };
}

function setup(registered: Map<number, BrokerEndpoint>) {
  const applied: string[] = [];
  const lookups: number[] = [];
  const logger = recordingLogger();
  const replicaManager = {
    prepareLogs: () => Promise.resolve(),
    becomeLeaderOrFollower: (s: PartitionState) => {
      applied.push(`${s.topic} leader ${s.leader}`);
      return ErrorCode.NONE;
    },
  } as unknown as ReplicaManager;
  const local = new LocalControllerChannel(0, new MetadataCache(0), replicaManager, { ...logConfigDefaults, maxMessageBytes: 1 << 20 }, null, () => {}, {
    registeredBroker: (id) => {
      lookups.push(id);
      return Promise.resolve(registered.get(id) ?? null);
    },
    logger,
  });
  return { local, applied, lookups, logger };
}

test("a leader the metadata does not know is reached at its registration, never at an address the request named", async () => {
  const { local, applied, lookups } = setup(new Map([[5, { id: 5, host: "10.0.0.5", port: 9095, rack: null }]]));
  // As from the wire: no live brokers passed.
  await local.leaderAndIsr(0, 1, [topic("t", 5, [5, 0])], []);
  assert.deepEqual(applied, ["t leader 5"]);
  assert.deepEqual(lookups, [5]);
  assert.deepEqual(local.brokerEndpoint(5), { id: 5, host: "10.0.0.5", port: 9095, rack: null });
  // Known now: not read again. Partitions this broker leads or does not hold need no lookup.
  await local.leaderAndIsr(0, 1, [topic("t", 5, [5, 0]), topic("mine", 0, [0, 5]), topic("other", 6, [6, 7])], []);
  assert.deepEqual(lookups, [5]);
});

test("a leader with no registration is not followed: no endpoint, a warning, the partition still follows", async () => {
  const { local, applied, lookups, logger } = setup(new Map());
  await local.leaderAndIsr(0, 1, [topic("t", 7, [7, 0])], []);
  assert.deepEqual(lookups, [7]);
  assert.equal(local.brokerEndpoint(7), undefined, "no address to connect to");
  assert.deepEqual(applied, ["t leader 7"], "it stops leading, as the controller decided");
  assert.ok(logger.lines.some((l) => l.level === "warn" && l.fields.leader === 7 && /not a registered broker/.test(l.msg)));
});

test("the in-process controller's live brokers (read from the registry) are used without a lookup", async () => {
  const { local, lookups } = setup(new Map());
  await local.leaderAndIsr(0, 1, [topic("t", 5, [5, 0])], [{ id: 5, host: "10.0.0.5", port: 9095, rack: null, epoch: 9n }]);
  assert.deepEqual(lookups, []);
  assert.equal(local.brokerEndpoint(5)?.host, "10.0.0.5");
  assert.equal(local.controllerEpochSeen, 1);
});
