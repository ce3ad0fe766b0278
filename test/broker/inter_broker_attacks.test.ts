// The attacks on the inter-broker APIs, replayed over a real socket against a single node (the
// embedded registry: no zookeeper.connect). Before, one unauthenticated StopReplica v0 with
// controller epoch 1 deleted a partition's log; LeaderAndIsr/UpdateMetadata/StopReplica with
// controller epoch 2^31-1 were accepted and the broker then refused its real controller (no topic
// could be created); a LeaderAndIsr made the broker follow a leader at an address the sender
// chose; a client could fetch as a follower. In single-node mode nobody may send them
// (src/broker/inter_broker.ts): each is answered as Kafka answers a sender without CLUSTER_ACTION
// and logged at warn with the API, the remote and the reason; the partition's log and records are
// intact, and the broker still obeys its own controller (a new topic is created, produced to and
// read). With an authorizer, CLUSTER_ACTION decides, and the epochs are still checked against the
// registry (control_fence.ts), so even a principal allowed CLUSTER_ACTION cannot forge a controller.
import assert from "node:assert/strict";
import { existsSync, readdirSync, statSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { test } from "node:test";
import type { Authorizer } from "../../src/authorizer/mod.ts";
import { leaderAndIsrRequest, stopReplicaRequest, type TopicInfo, updateMetadataRequest } from "../../src/controller/mod.ts";
import {
  ControlledShutdownApi,
  FetchApi,
  LeaderAndIsrApi,
  OffsetForLeaderEpochApi,
  StopReplicaApi,
  type Struct,
  UpdateMetadataApi,
} from "../../src/protocol/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { recordingLogger } from "../helpers/faulty_platform.ts";
import { buildBatch, parseBatches, text, valueRecords } from "../helpers/record_batch.ts";
import { createTopic, fetchOnce, produce, WireClient } from "../helpers/wire.ts";

const MAX_EPOCH = 2147483647;
const topicId = (b: TestBroker, topic: string) => b.broker.services.metadata.getTopic(topic)!.topicId;

/** A socket the test owns, standing for "an address the sender chose": it counts who connects. */
async function decoyListener(): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
  let n = 0;
  const server = net.createServer((s) => {
    n++;
    s.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return { port, connections: () => n, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

function followerFetchBody(replicaId: number, topic: string, partition: number, fetchOffset: bigint): Struct {
  return {
    replicaId,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition, fetchOffset, partitionMaxBytes: 1 << 20 }] }],
    forgottenTopicsData: [],
    rackId: "",
  };
}

function offsetForLeaderEpochBody(replicaId: number, topic: string): Struct {
  return { replicaId, topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] }] };
}

/** Values of the records at offsets >= 0 of topic-0, read as a consumer. */
async function values(c: WireClient, topic: string): Promise<string[]> {
  const p = await fetchOnce(c, topic, 0, 0n);
  assert.equal(p.errorCode, 0);
  return parseBatches(p.records ?? new Uint8Array(0)).flatMap((b) => b.records.map((r) => text(r.value) ?? ""));
}

/** The victim's log dir and its files (name → size). */
function logFiles(b: TestBroker, topic: string): Record<string, number> {
  const dir = join(b.logDir, `${topic}-0`);
  assert.ok(existsSync(dir), `${dir} exists`);
  return Object.fromEntries(readdirSync(dir).filter((f) => f.endsWith(".log")).map((f) => [f, statSync(join(dir, f)).size]));
}

/** Every attack of the issue, sent to `b`; returns each answer's error codes, by attack. */
async function attack(b: TestBroker, victim: string, decoyPort: number): Promise<Record<string, number[]>> {
  const out: Record<string, number[]> = {};
  const c = await WireClient.connect(b.port);
  try {
    const id = topicId(b, victim);
    const state = { topic: victim, partition: 0, topicId: id, controllerEpoch: MAX_EPOCH, leaderEpoch: 1000, isr: [7], replicas: [7, 0], partitionEpoch: 1000 };
    const fakeLeader: TopicInfo = { name: victim, topicId: id, partitions: [{ ...state, leader: 7 }], configs: {}, configsZxid: -1n };
    const brokerEpoch = b.broker.services.brokerEpoch();
    const codes = (r: Struct, list: string) => [r.errorCode as number, ...((r[list] ?? []) as { errorCode: number }[]).map((p) => p.errorCode)];
    // The first attack, byte for byte: StopReplica v0, controller epoch 1, delete.
    out.stopReplicaV0 = codes(
      await c.request(StopReplicaApi, 0, stopReplicaRequest(0, 1, -1n, [{ topic: victim, partition: 0, deletePartition: true, leaderEpoch: -1 }], 0)),
      "partitionErrors",
    );
    // Controller epoch 2^31-1 on each control request (with this broker's real broker epoch).
    out.stopReplicaMaxEpoch = codes(
      await c.request(StopReplicaApi, 3, stopReplicaRequest(9, MAX_EPOCH, brokerEpoch, [{ topic: victim, partition: 0, deletePartition: true, leaderEpoch: -2 }], 3)),
      "partitionErrors",
    );
    out.updateMetadataMaxEpoch = codes(
      await c.request(UpdateMetadataApi, 7, updateMetadataRequest(9, MAX_EPOCH, brokerEpoch, [], [], [victim], 7)),
      "partitionErrors",
    );
    // A made-up leader (broker 7) at the test's own socket.
    const lai = await c.request(LeaderAndIsrApi, 6, leaderAndIsrRequest(9, MAX_EPOCH, brokerEpoch, [fakeLeader], [{ id: 7, host: "127.0.0.1", port: decoyPort, rack: null, epoch: -1n }], 6));
    out.leaderAndIsrFakeLeader = [lai.errorCode as number, ...(lai.topics as { partitionErrors: { errorCode: number }[] }[]).flatMap((t) => t.partitionErrors.map((p) => p.errorCode))];
    // A client fetching as a follower with a broker's id (this broker's own: the only one there is).
    const fetched = await c.request(FetchApi, 11, followerFetchBody(0, victim, 0, 0n));
    out.followerFetch = [fetched.errorCode as number, ...(fetched.responses as { partitions: { errorCode: number }[] }[])[0].partitions.map((p) => p.errorCode)];
    const ofle = await c.request(OffsetForLeaderEpochApi, 3, offsetForLeaderEpochBody(0, victim));
    out.offsetForLeaderEpochAsFollower = (ofle.topics as { partitions: { errorCode: number }[] }[])[0].partitions.map((p) => p.errorCode);
    // ControlledShutdown for the broker itself, with its real epoch.
    out.controlledShutdown = [(await c.request(ControlledShutdownApi, 3, { brokerId: 0, brokerEpoch })).errorCode as number];
  } finally {
    c.close();
  }
  return out;
}

/** The broker still obeys its controller: a new topic is created, produced to and read. */
async function stillServes(b: TestBroker, topic: string): Promise<void> {
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, topic)).errorCode, 0, "a topic can be created after the attacks");
    await waitFor(() => b.broker.services.replicaManager.getPartition(topic, 0)?.isLeader === true, `${topic}-0 led here`);
    assert.equal((await produce(c, topic, 0, buildBatch(valueRecords(2, "after-")))).errorCode, 0);
    assert.deepEqual(await values(c, topic), ["after-0", "after-1"]);
  } finally {
    c.close();
  }
}

async function waitFor(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function withVictim(
  overrides: Record<string, string>,
  fn: (b: TestBroker, logger: ReturnType<typeof recordingLogger>) => Promise<void>,
): Promise<void> {
  const logger = recordingLogger();
  const b = await startBroker(overrides, undefined, logger);
  try {
    const c = await WireClient.connect(b.port);
    try {
      assert.equal((await createTopic(c, "victim")).errorCode, 0);
      await waitFor(() => b.broker.services.replicaManager.getPartition("victim", 0)?.isLeader === true, "victim-0 led here");
      assert.equal((await produce(c, "victim", 0, buildBatch(valueRecords(3, "kept-")))).errorCode, 0);
    } finally {
      c.close();
    }
    await fn(b, logger);
  } finally {
    await b.stop();
  }
}

test("single node, no authorizer: every inter-broker attack is refused, nothing is deleted, the controller is still obeyed", async () => {
  await withVictim({}, async (b, logger) => {
    const decoy = await decoyListener();
    try {
      const filesBefore = logFiles(b, "victim");
      const answers = await attack(b, "victim", decoy.port);
      const denied = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
      assert.deepEqual(answers, {
        stopReplicaV0: [denied, denied],
        stopReplicaMaxEpoch: [denied, denied],
        updateMetadataMaxEpoch: [denied],
        leaderAndIsrFakeLeader: [denied, denied],
        followerFetch: [0, ErrorCode.TOPIC_AUTHORIZATION_FAILED],
        offsetForLeaderEpochAsFollower: [ErrorCode.TOPIC_AUTHORIZATION_FAILED],
        controlledShutdown: [denied],
      });
      // A warn line naming the API, the remote and why; one per 10 s at most, so the other six
      // refusals of this burst are counted for the next line, not logged.
      const refusals = logger.lines.filter((l) => l.level === "warn" && /refused: not from a broker/.test(l.msg));
      assert.deepEqual(refusals.map((l) => [l.fields.api, l.fields.notSaidSinceLast]), [["StopReplica", 0]]);
      for (const l of refusals) {
        assert.match(String(l.fields.remote), /^127\.0\.0\.1:\d+$/);
        assert.match(String(l.fields.reason), /single-node mode/);
      }
      assert.ok(!logger.lines.some((l) => /deleted log/.test(l.msg)), "no log deleted");
      // Nothing deleted, nothing moved: the records are all there, the partition still led here.
      assert.deepEqual(logFiles(b, "victim"), filesBefore);
      const c = await WireClient.connect(b.port);
      try {
        assert.deepEqual(await values(c, "victim"), ["kept-0", "kept-1", "kept-2"]);
        assert.equal((await produce(c, "victim", 0, buildBatch(valueRecords(1, "more-")))).errorCode, 0);
      } finally {
        c.close();
      }
      assert.equal(b.broker.services.replicaManager.getPartition("victim", 0)?.state.leader, 0);
      assert.equal(b.broker.isActiveController, true, "the broker's own controller is still the controller");
      await stillServes(b, "created-after");
      assert.equal(decoy.connections(), 0, "nobody connected to the address the forged LeaderAndIsr named");
    } finally {
      await decoy.close();
    }
  });
});

test("single node, with an authorizer that allows CLUSTER_ACTION: still refused, as no inter-broker request is genuine there", async () => {
  await withVictim({}, async (b, logger) => {
    const decoy = await decoyListener();
    try {
      const asked: string[] = [];
      const authorizer: Authorizer = {
        authorize: (who, op, type, name) => {
          asked.push(`${who.principal} ${op} ${type} ${name}`);
          return true;
        },
        authorizedOperations: () => 0,
        authorizeByResourceType: () => true,
      };
      b.broker.services.authorizer = authorizer;
      const denied = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
      // ControlledShutdown with the node's real epoch among them: accepted, it would leave the
      // node's controller unable to give it any leadership.
      assert.deepEqual(await attack(b, "victim", decoy.port), {
        stopReplicaV0: [denied, denied],
        stopReplicaMaxEpoch: [denied, denied],
        updateMetadataMaxEpoch: [denied],
        leaderAndIsrFakeLeader: [denied, denied],
        followerFetch: [0, ErrorCode.TOPIC_AUTHORIZATION_FAILED],
        offsetForLeaderEpochAsFollower: [ErrorCode.TOPIC_AUTHORIZATION_FAILED],
        controlledShutdown: [denied],
      });
      assert.deepEqual(asked, [], "the authorizer is not asked: single-node mode refuses first");
      assert.equal(logger.lines.filter((l) => l.level === "warn" && /refused: not from a broker/.test(l.msg)).length, 1, "one line per 10 s");
      const c = await WireClient.connect(b.port);
      try {
        assert.deepEqual(await values(c, "victim"), ["kept-0", "kept-1", "kept-2"]);
      } finally {
        c.close();
      }
      await stillServes(b, "created-after");
      assert.equal(decoy.connections(), 0);
    } finally {
      await decoy.close();
    }
  });
});
