// Incremental fetch sessions (KIP-227) over a real socket against a real broker: a full fetch of
// 1,000 partitions makes a session; incremental fetches then name only partitions whose offsets
// moved and are answered with only the partitions that changed (the request and response sizes
// of both are printed); epoch errors (71), unknown sessions (70), names vs ids (106), forgotten
// partitions, a long-poll woken by a produce, sessions by topic id (v13+), and the cache's slots:
// full slots give later consumers no session, 0 slots none at all; with ACLs, READ is checked on
// every incremental fetch.
import assert from "node:assert/strict";
import { test } from "node:test";
import { AclOperation, ResourceType } from "../../src/authorizer/mod.ts";
import { FetchApi, MetadataApi } from "../../src/protocol/api/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { grant, revokeAll, saslAclBroker } from "../helpers/acls.ts";
import { startBroker } from "../helpers/broker.ts";
import { buildBatch, parseBatches, text } from "../helpers/record_batch.ts";
import { saslLogin } from "../helpers/sasl.ts";
import { createTopic, decodeResponse, encodeRequest, produce, WireClient } from "../helpers/wire.ts";

interface PartitionAnswer {
  partitionIndex: number;
  errorCode: number;
  highWatermark: bigint;
  records: Uint8Array | null;
}
interface TopicAnswer {
  topic: string;
  topicId: Uint8Array;
  partitions: PartitionAnswer[];
}

type Wanted = { partition: number; fetchOffset: bigint };

function fetchBody(o: {
  sessionId: number;
  epoch: number;
  topic?: string;
  topicId?: Uint8Array;
  wanted?: Wanted[];
  forgotten?: number[];
  maxWaitMs?: number;
  minBytes?: number;
}): Struct {
  const topicRef = { topic: o.topic ?? "", topicId: o.topicId ?? new Uint8Array(16) };
  return {
    replicaId: -1,
    maxWaitMs: o.maxWaitMs ?? 0,
    minBytes: o.minBytes ?? 0,
    maxBytes: 1 << 24,
    isolationLevel: 0,
    sessionId: o.sessionId,
    sessionEpoch: o.epoch,
    topics: (o.wanted ?? []).length === 0 ? [] : [{
      ...topicRef,
      partitions: o.wanted!.map((w) => ({ partition: w.partition, currentLeaderEpoch: -1, fetchOffset: w.fetchOffset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 })),
    }],
    forgottenTopicsData: (o.forgotten ?? []).length === 0 ? [] : [{ ...topicRef, partitions: o.forgotten }],
    rackId: "",
  };
}

/** One fetch, with the bytes each way (frames without the size prefix). */
async function fetch(c: WireClient, version: number, body: Struct, timeoutMs = 10_000) {
  const bytes = encodeRequest(FetchApi, version, 1, body);
  await c.write(bytes);
  const frame = await c.nextFrame(timeoutMs);
  assert.ok(frame !== null, "the broker answered");
  const res = decodeResponse(FetchApi, version, frame).body;
  return { res, requestBytes: bytes.length, responseBytes: frame.length, topics: res.responses as TopicAnswer[] };
}

const carried = (topics: TopicAnswer[]) => topics.flatMap((t) => t.partitions.map((p) => p.partitionIndex)).sort((a, b) => a - b);
const values = (p: PartitionAnswer) => parseBatches(p.records ?? new Uint8Array(0)).flatMap((b) => b.records.map((r) => text(r.value)));

async function awaitLed(c: WireClient, topic: string, count: number): Promise<Uint8Array> {
  for (let i = 0; i < 600; i++) {
    const md = await c.request(MetadataApi, 12, { topics: [{ topicId: new Uint8Array(16), name: topic }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    const t = (md.topics as { errorCode: number; topicId: Uint8Array; partitions: { errorCode: number; leaderId: number }[] }[])[0];
    if (t.errorCode === 0 && t.partitions.filter((p) => p.errorCode === 0 && p.leaderId >= 0).length === count) return t.topicId;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${topic} never had ${count} led partitions`);
}

const PARTITIONS = 1_000;

test("fetch session over 1,000 partitions: full, then incremental fetches carry only what changed; epochs, unknown ids, forgetting", async () => {
  const b = await startBroker({ "num.partitions": "1" });
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "wide", { numPartitions: PARTITIONS })).errorCode, 0);
    await awaitLed(c, "wide", PARTITIONS);
    const all = Array.from({ length: PARTITIONS }, (_, partition) => ({ partition, fetchOffset: 0n }));

    const full = await fetch(c, 12, fetchBody({ sessionId: 0, epoch: 0, topic: "wide", wanted: all }));
    assert.equal(full.res.errorCode, 0);
    const sessionId = full.res.sessionId as number;
    assert.ok(sessionId > 0, "a full fetch at epoch 0 makes a session");
    assert.equal(carried(full.topics).length, PARTITIONS);

    // Nothing changed: the incremental answer carries no partition at all.
    const idle = await fetch(c, 12, fetchBody({ sessionId, epoch: 1 }));
    assert.equal(idle.res.errorCode, 0);
    assert.equal(idle.res.sessionId, sessionId);
    assert.deepEqual(idle.topics, []);

    // Two partitions get records: only they come back, with their records and new HW.
    await produce(c, "wide", 3, buildBatch([{ value: "three" }]));
    await produce(c, "wide", 777, buildBatch([{ value: "seven" }]));
    const inc = await fetch(c, 12, fetchBody({ sessionId, epoch: 2 }));
    assert.deepEqual(carried(inc.topics), [3, 777]);
    const byIndex = new Map(inc.topics[0].partitions.map((p) => [p.partitionIndex, p]));
    assert.deepEqual(values(byIndex.get(3)!), ["three"]);
    assert.deepEqual(values(byIndex.get(777)!), ["seven"]);
    assert.equal(byIndex.get(3)!.highWatermark, 1n);
    console.log(
      `fetch of ${PARTITIONS} partitions: full request ${full.requestBytes} B, response ${full.responseBytes} B; ` +
        `incremental (nothing new) request ${idle.requestBytes} B, response ${idle.responseBytes} B; ` +
        `incremental (2 partitions with a record) request ${inc.requestBytes} B, response ${inc.responseBytes} B`,
    );
    assert.ok(idle.requestBytes * 50 < full.requestBytes && idle.responseBytes * 50 < full.responseBytes, "an idle incremental fetch is tiny");

    // The client moves the two offsets: named in the request, nothing new to answer.
    const moved = await fetch(c, 12, fetchBody({ sessionId, epoch: 3, topic: "wide", wanted: [{ partition: 3, fetchOffset: 1n }, { partition: 777, fetchOffset: 1n }] }));
    assert.deepEqual(moved.topics, []);

    // Epoch errors: the same epoch again, one ahead, an unknown session, a v13 fetch of a by-name session.
    for (const [body, version, code] of [
      [fetchBody({ sessionId, epoch: 3 }), 12, ErrorCode.INVALID_FETCH_SESSION_EPOCH],
      [fetchBody({ sessionId, epoch: 9 }), 12, ErrorCode.INVALID_FETCH_SESSION_EPOCH],
      [fetchBody({ sessionId: sessionId ^ 0x5a5a, epoch: 4 }), 12, ErrorCode.FETCH_SESSION_ID_NOT_FOUND],
      [fetchBody({ sessionId, epoch: 4 }), 13, ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR],
    ] as const) {
      const r = await fetch(c, version, body);
      assert.equal(r.res.errorCode, code, `epoch error ${code}`);
      assert.equal(r.res.sessionId, 0);
      assert.deepEqual(r.topics, []);
    }

    // A long poll on the session wakes when one of its partitions gets a record.
    const waiting = fetch(c, 12, fetchBody({ sessionId, epoch: 4, maxWaitMs: 5_000, minBytes: 1 }));
    await new Promise((r) => setTimeout(r, 100));
    const other = await WireClient.connect(b.port);
    await produce(other, "wide", 500, buildBatch([{ value: "five hundred" }]));
    other.close();
    const woken = await waiting;
    assert.deepEqual(carried(woken.topics), [500]);
    assert.deepEqual(values(woken.topics[0].partitions[0]), ["five hundred"]);

    // Forget partition 3, then give it a record: the session no longer carries it.
    await produce(c, "wide", 3, buildBatch([{ value: "unseen" }]));
    const forgot = await fetch(c, 12, fetchBody({ sessionId, epoch: 5, topic: "wide", wanted: [{ partition: 500, fetchOffset: 1n }], forgotten: [3] }));
    assert.deepEqual(carried(forgot.topics), []);
    // Adding it back at offset 1 brings the record it missed.
    const back = await fetch(c, 12, fetchBody({ sessionId, epoch: 6, topic: "wide", wanted: [{ partition: 3, fetchOffset: 1n }] }));
    assert.deepEqual(carried(back.topics), [3]);
    assert.deepEqual(values(back.topics[0].partitions[0]), ["unseen"]);

    // A full fetch at epoch -1 closes the session; its id is then unknown.
    const closing = await fetch(c, 12, fetchBody({ sessionId, epoch: -1, topic: "wide", wanted: [{ partition: 0, fetchOffset: 0n }] }));
    assert.equal(closing.res.sessionId, 0);
    assert.deepEqual(carried(closing.topics), [0]);
    assert.equal((await fetch(c, 12, fetchBody({ sessionId, epoch: 7 }))).res.errorCode, ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
  } finally {
    c.close();
    await b.stop();
  }
});

test("fetch session by topic id (v13+): incremental answers carry the id; the session's slot limit and 0 slots", async () => {
  const b = await startBroker({ "max.incremental.fetch.session.cache.slots": "1" });
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "ids", { numPartitions: 4 })).errorCode, 0);
    const topicId = await awaitLed(c, "ids", 4);
    const all = [0, 1, 2, 3].map((partition) => ({ partition, fetchOffset: 0n }));
    const first = await fetch(c, 16, fetchBody({ sessionId: 0, epoch: 0, topicId, wanted: all }));
    const sessionId = first.res.sessionId as number;
    assert.ok(sessionId > 0);
    await produce(c, "ids", 2, buildBatch([{ value: "two" }]));
    const inc = await fetch(c, 16, fetchBody({ sessionId, epoch: 1 }));
    assert.equal(inc.topics.length, 1);
    assert.deepEqual(inc.topics[0].topicId, topicId);
    assert.equal(inc.topics[0].topic, "");
    assert.deepEqual(carried(inc.topics), [2]);
    // A by-name fetch (v12) of an id session is refused.
    assert.equal((await fetch(c, 12, fetchBody({ sessionId, epoch: 2 }))).res.errorCode, ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR);

    // The one slot is taken by a young session: a second consumer's full fetch is answered, without a session.
    const c2 = await WireClient.connect(b.port);
    const second = await fetch(c2, 16, fetchBody({ sessionId: 0, epoch: 0, topicId, wanted: all }));
    assert.equal(second.res.errorCode, 0);
    assert.equal(second.res.sessionId, 0);
    assert.equal(carried(second.topics).length, 4);
    c2.close();
    // The first session still works.
    assert.equal((await fetch(c, 16, fetchBody({ sessionId, epoch: 2 }))).res.errorCode, 0);
  } finally {
    c.close();
    await b.stop();
  }

  const none = await startBroker({ "max.incremental.fetch.session.cache.slots": "0" });
  const d = await WireClient.connect(none.port);
  try {
    assert.equal((await createTopic(d, "s", { numPartitions: 1 })).errorCode, 0);
    await awaitLed(d, "s", 1);
    const r = await fetch(d, 12, fetchBody({ sessionId: 0, epoch: 0, topic: "s", wanted: [{ partition: 0, fetchOffset: 0n }] }));
    assert.equal(r.res.errorCode, 0);
    assert.equal(r.res.sessionId, 0, "no slots: no session");
  } finally {
    d.close();
    await none.stop();
  }
});

test("fetch session with ACLs: every incremental fetch is authorized again; a revoked READ answers TOPIC_AUTHORIZATION_FAILED, a restored one the records missed", async () => {
  const b = await startBroker(saslAclBroker);
  const admin = await WireClient.connect(b.port);
  const alice = await WireClient.connect(b.port);
  try {
    assert.equal((await saslLogin(admin, "PLAIN", "admin", "admin-secret")).errorCode, 0);
    assert.equal((await saslLogin(alice, "PLAIN", "alice", "alice-secret")).errorCode, 0);
    assert.equal((await createTopic(admin, "guarded", { numPartitions: 2 })).errorCode, 0);
    await awaitLed(admin, "guarded", 2);
    await grant(b, "User:alice", AclOperation.READ, ResourceType.TOPIC, "guarded");
    const wanted = [0, 1].map((partition) => ({ partition, fetchOffset: 0n }));
    const full = await fetch(alice, 12, fetchBody({ sessionId: 0, epoch: 0, topic: "guarded", wanted }));
    const sessionId = full.res.sessionId as number;
    assert.ok(sessionId > 0);
    assert.deepEqual(full.topics[0].partitions.map((p) => p.errorCode), [0, 0]);

    await revokeAll(b);
    await produce(admin, "guarded", 1, buildBatch([{ value: "secret" }]));
    const denied = await fetch(alice, 12, fetchBody({ sessionId, epoch: 1 }));
    assert.equal(denied.res.errorCode, 0);
    assert.deepEqual(denied.topics[0].partitions.map((p) => [p.partitionIndex, p.errorCode, p.records?.length ?? 0]), [
      [0, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 0],
      [1, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 0],
    ]);

    await grant(b, "User:alice", AclOperation.READ, ResourceType.TOPIC, "guarded");
    const again = await fetch(alice, 12, fetchBody({ sessionId, epoch: 2 }));
    // Both come back (an error makes the session send a partition again), 1 with its record.
    assert.deepEqual(carried(again.topics), [0, 1]);
    assert.deepEqual(values(again.topics[0].partitions.find((p) => p.partitionIndex === 1)!), ["secret"]);
  } finally {
    admin.close();
    alice.close();
    await b.stop();
  }
});
