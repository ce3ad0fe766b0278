// RemoteControllerChannel against fake brokers: calls for the local broker go to the local
// channel; calls for others resolve at once and arrive in order, one at a time, as LeaderAndIsr v6,
// UpdateMetadata v7 and StopReplica v3 with this broker as controller, the controller epoch given
// and the target's broker epoch; a dropped or silent connection is retried until answered; a
// removed broker's queue is dropped; a re-registered broker gets a fresh queue under its new epoch;
// error answers reach onResponse; shutdown does not wait on a dead broker.
import assert from "node:assert/strict";
import { test } from "node:test";
import { decodeLeaderAndIsrRequest, decodeStopReplicaRequest, decodeUpdateMetadataRequest } from "../../src/controller/control_requests.ts";
import { type ControlResponse, RemoteControllerChannel } from "../../src/controller/controller_channel.ts";
import type { BrokerInfo, ControllerChannel, TopicInfo } from "../../src/controller/channel.ts";
import { loadPlatform } from "../../src/platform/mod.ts";
import type { Platform } from "../../src/platform/types.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { type FakeKafka, type FakeRequest, startFakeKafka } from "../helpers/fake_kafka.ts";

const LOCAL = 0;

function topic(name: string, partitions: number, leader: number): TopicInfo {
  const topicId = new Uint8Array(16).fill(name.length);
  return {
    name,
    topicId,
    configs: {},
    configsZxid: -1n,
    partitions: Array.from({ length: partitions }, (_, p) => ({
      topic: name,
      partition: p,
      topicId,
      controllerEpoch: 5,
      leader,
      leaderEpoch: 3,
      isr: [0, 1],
      replicas: [0, 1],
      partitionEpoch: 7,
    })),
  };
}

/** A local channel that records its calls. */
class RecordingChannel implements ControllerChannel {
  calls: [string, unknown[]][] = [];
  leaderAndIsr(...args: Parameters<ControllerChannel["leaderAndIsr"]>): Promise<void> {
    this.calls.push(["leaderAndIsr", args]);
    return Promise.resolve();
  }
  updateMetadata(...args: Parameters<ControllerChannel["updateMetadata"]>): Promise<void> {
    this.calls.push(["updateMetadata", args]);
    return Promise.reject(new Error("local refused"));
  }
  stopReplica(...args: Parameters<ControllerChannel["stopReplica"]>): Promise<void> {
    this.calls.push(["stopReplica", args]);
    return Promise.resolve();
  }
}

/** A fake broker that answers control requests with NONE unless `answer` says otherwise (null: stay silent). */
class FakeBroker {
  received: FakeRequest[] = [];
  server: FakeKafka | null = null;
  answer: (req: FakeRequest) => Struct | null | "drop" = okAnswer;
  /** Requests received but not yet answered, at most one at a time for an ordered channel. */
  unanswered = 0;
  maxUnanswered = 0;

  async start(platform: Platform): Promise<this> {
    this.server = await startFakeKafka(platform, (req, reply) => {
      this.received.push(req);
      this.unanswered++;
      this.maxUnanswered = Math.max(this.maxUnanswered, this.unanswered);
      const res = this.answer(req);
      if (res === "drop") {
        this.unanswered--;
        req.conn.close();
      } else if (res !== null) {
        this.unanswered--;
        reply(res);
      }
    });
    return this;
  }

  info(id: number, epoch: bigint): BrokerInfo {
    return { id, host: "127.0.0.1", port: this.server!.port, rack: null, epoch };
  }

  keys(): number[] {
    return this.received.map((r) => r.apiKey);
  }
}

function okAnswer(req: FakeRequest): Struct {
  if (req.apiKey === 4) return { errorCode: 0, topics: [] };
  if (req.apiKey === 5) return { errorCode: 0, partitionErrors: [] };
  return { errorCode: 0 };
}

async function waitFor(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function channel(platform: Platform, local: ControllerChannel, onResponse?: (r: ControlResponse) => void): RemoteControllerChannel {
  return new RemoteControllerChannel(platform, LOCAL, local, silentLogger, { requestTimeoutMs: 500, backoffMs: 50, onResponse });
}

test("controller channel: calls for the local broker go to the local channel, unchanged", async () => {
  const platform = await loadPlatform();
  const local = new RecordingChannel();
  const ch = channel(platform, local);
  const t = [topic("a", 1, 0)];
  const live: BrokerInfo[] = [{ id: 0, host: "h", port: 1, rack: null, epoch: 9n }];
  await ch.leaderAndIsr(LOCAL, 5, t, live);
  await assert.rejects(ch.updateMetadata(LOCAL, 5, LOCAL, live, t, []), /local refused/);
  await ch.stopReplica(LOCAL, 5, [{ topic: "a", partition: 0 }], true);
  assert.deepEqual(local.calls.map((c) => c[0]), ["leaderAndIsr", "updateMetadata", "stopReplica"]);
  assert.deepEqual(local.calls[0][1], [LOCAL, 5, t, live]);
  assert.deepEqual(local.calls[2][1], [LOCAL, 5, [{ topic: "a", partition: 0 }], true]);
  await ch.shutdown();
});

test("controller channel: remote requests go out in order with the epochs, as v6/v7/v3", async () => {
  const platform = await loadPlatform();
  const b = await new FakeBroker().start(platform);
  const local = new RecordingChannel();
  const ch = channel(platform, local);
  try {
    ch.addBroker(b.info(1, 77n));
    const t = [topic("a", 2, 1), topic("b", 1, 0)];
    const live = [b.info(1, 77n), { id: 0, host: "127.0.0.1", port: 9, rack: "r0", epoch: 5n }];
    await ch.leaderAndIsr(1, 5, t, live);
    await ch.updateMetadata(1, 5, LOCAL, live, t, ["gone"]);
    await ch.stopReplica(1, 5, [{ topic: "a", partition: 1 }], true);
    assert.equal(local.calls.length, 0);
    await waitFor("three requests", () => b.received.length === 3);
    assert.deepEqual(b.keys(), [4, 6, 5]);
    assert.deepEqual(b.received.map((r) => r.apiVersion), [6, 7, 3]);
    assert.equal(b.maxUnanswered, 1, "one request at a time");
    const lai = decodeLeaderAndIsrRequest(6, b.received[0].body);
    assert.equal(lai.controllerId, LOCAL);
    assert.equal(lai.controllerEpoch, 5);
    assert.equal(lai.brokerEpoch, 77n);
    assert.deepEqual(lai.topics.map((x) => [x.name, x.partitions.length]), [["a", 2], ["b", 1]]);
    assert.deepEqual(lai.liveLeaders.map((x) => x.id), [1, 0]);
    const um = decodeUpdateMetadataRequest(7, b.received[1].body);
    assert.equal(um.brokerEpoch, 77n);
    assert.deepEqual(um.deletedTopics, ["gone"]);
    const sr = decodeStopReplicaRequest(3, b.received[2].body);
    assert.equal(sr.brokerEpoch, 77n);
    assert.deepEqual(sr.partitions, [{ topic: "a", partition: 1, deletePartition: true, leaderEpoch: -1 }]);
    await waitFor("the queue to drain", () => ch.queuedFor(1) === 0);
  } finally {
    await ch.shutdown();
    await b.server!.stop();
  }
});

test("controller channel: a dropped or silent connection is retried, in order, until answered", async () => {
  const platform = await loadPlatform();
  const b = await new FakeBroker().start(platform);
  let drops = 1;
  let silences = 1;
  b.answer = (req) => {
    if (req.apiKey === 4 && drops-- > 0) return "drop";
    if (req.apiKey === 6 && silences-- > 0) return null; // the channel's 500 ms timeout fires
    return okAnswer(req);
  };
  const ch = channel(platform, new RecordingChannel());
  try {
    ch.addBroker(b.info(1, 1n));
    await ch.leaderAndIsr(1, 5, [topic("a", 1, 1)], []);
    await ch.updateMetadata(1, 5, LOCAL, [], [], []);
    await ch.stopReplica(1, 5, [{ topic: "a", partition: 0 }], false);
    await waitFor("every request answered", () => ch.queuedFor(1) === 0, 15_000);
    assert.deepEqual(b.keys(), [4, 4, 6, 6, 5], "each retried in place; none overtaken");
  } finally {
    await ch.shutdown();
    await b.server!.stop();
  }
});

test("controller channel: removeBroker drops the queue; requests for unknown brokers are dropped", async () => {
  const platform = await loadPlatform();
  const b = await new FakeBroker().start(platform);
  b.answer = () => null; // never answers
  const ch = channel(platform, new RecordingChannel());
  try {
    await ch.leaderAndIsr(1, 5, [topic("a", 1, 1)], []); // not added yet: dropped
    ch.addBroker(b.info(1, 1n));
    for (let i = 0; i < 3; i++) await ch.updateMetadata(1, 5, LOCAL, [], [], []);
    await waitFor("the first request", () => b.received.length === 1);
    assert.equal(ch.queuedFor(1), 3);
    ch.removeBroker(1);
    assert.equal(ch.queuedFor(1), 0);
    assert.deepEqual(ch.brokerIds, []);
    await ch.updateMetadata(1, 5, LOCAL, [], [], []);
    await new Promise((r) => setTimeout(r, 700));
    assert.deepEqual(b.keys(), [6], "nothing sent after removal, not even a retry");
  } finally {
    await ch.shutdown();
    await b.server!.stop();
  }
});

test("controller channel: a re-registered broker gets a fresh queue under its new epoch", async () => {
  const platform = await loadPlatform();
  const b = await new FakeBroker().start(platform);
  const ch = channel(platform, new RecordingChannel());
  try {
    ch.addBroker(b.info(1, 10n));
    ch.addBroker(b.info(1, 10n)); // the same registration again: no change
    await ch.updateMetadata(1, 5, LOCAL, [], [], []);
    await waitFor("the first request", () => b.received.length === 1);
    ch.addBroker(b.info(1, 11n));
    await ch.updateMetadata(1, 6, LOCAL, [], [], []);
    await waitFor("the second request", () => b.received.length === 2);
    assert.deepEqual(b.received.map((r) => decodeUpdateMetadataRequest(7, r.body).brokerEpoch), [10n, 11n]);
  } finally {
    await ch.shutdown();
    await b.server!.stop();
  }
});

test("controller channel: error answers reach onResponse", async () => {
  const platform = await loadPlatform();
  const b = await new FakeBroker().start(platform);
  const t = [topic("a", 2, 1)];
  b.answer = (req) => {
    if (req.apiKey === 4) {
      return { errorCode: 0, topics: [{ topicId: t[0].topicId, partitionErrors: [{ partitionIndex: 0, errorCode: 0 }, { partitionIndex: 1, errorCode: 56 }] }] };
    }
    if (req.apiKey === 6) return { errorCode: 11 };
    return { errorCode: 0, partitionErrors: [{ topicName: "a", partitionIndex: 0, errorCode: 6 }] };
  };
  const seen: ControlResponse[] = [];
  const ch = channel(platform, new RecordingChannel(), (r) => seen.push(r));
  try {
    ch.addBroker(b.info(1, 1n));
    await ch.leaderAndIsr(1, 5, t, []);
    await ch.updateMetadata(1, 5, LOCAL, [], [], []);
    await ch.stopReplica(1, 5, [{ topic: "a", partition: 0 }], false);
    await waitFor("three answers", () => seen.length === 3);
    assert.deepEqual(seen, [
      { brokerId: 1, api: "LeaderAndIsr", errorCode: 0, partitionErrors: [{ topic: "a", partition: 1, errorCode: 56 }] },
      { brokerId: 1, api: "UpdateMetadata", errorCode: 11, partitionErrors: [] },
      { brokerId: 1, api: "StopReplica", errorCode: 0, partitionErrors: [{ topic: "a", partition: 0, errorCode: 6 }] },
    ]);
  } finally {
    await ch.shutdown();
    await b.server!.stop();
  }
});

test("controller channel: shutdown does not wait on a broker that is down", async () => {
  const platform = await loadPlatform();
  const b = await new FakeBroker().start(platform);
  const info = b.info(1, 1n);
  await b.server!.stop();
  const ch = channel(platform, new RecordingChannel());
  ch.addBroker(info);
  await ch.updateMetadata(1, 5, LOCAL, [], [], []);
  await new Promise((r) => setTimeout(r, 200)); // a few failed connects and backoffs
  assert.equal(ch.queuedFor(1), 1);
  const started = Date.now();
  await ch.shutdown();
  assert.ok(Date.now() - started < 500, `shutdown took ${Date.now() - started} ms`);
  await ch.updateMetadata(1, 5, LOCAL, [], [], []); // after shutdown: dropped
  assert.equal(ch.queuedFor(1), 0);
});
