// Bad input to the group coordinator over raw TCP (test/helpers/wire.ts, groups.ts): each case
// gets Kafka's error code, the group it was aimed at carries on, and the broker logs no
// error-level line (an error line means a handler threw: a bug, never a fitting answer).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  DescribeGroupsApi,
  HeartbeatApi,
  JoinGroupApi,
  LeaveGroupApi,
  OffsetDeleteApi,
  SyncGroupApi,
} from "../../src/protocol/api/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import type { Logger } from "../../src/util/logger.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { buildBatch } from "../helpers/record_batch.ts";
import { commitOffsets, fetchOffsets, findCoordinator, RawMember, subscriptionV0 } from "../helpers/groups.ts";
import { createTopic, encodeRequest, produce, WireClient } from "../helpers/wire.ts";

const G = "bad-input-group";

async function withBroker(overrides: Record<string, string>, fn: (b: TestBroker, c: WireClient) => Promise<void>): Promise<void> {
  const errors: string[] = [];
  const logger: Logger = {
    debug() {},
    info() {},
    warn() {},
    error: (fields, msg) => void errors.push(`${msg} ${JSON.stringify(fields).slice(0, 2000)}`),
    child: () => logger,
  };
  const b = await startBroker({ "group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "5", ...overrides }, undefined, logger);
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "t", { numPartitions: 2 })).errorCode, 0);
    await findCoordinator(c, G);
    await fn(b, c);
    assert.deepEqual(errors, [], "no error-level log lines");
  } finally {
    c.close();
    await b.stop();
  }
}

/** A Stable one-member group the bad requests are aimed at. */
async function stableMember(b: TestBroker, opts: ConstructorParameters<typeof RawMember>[2] = {}): Promise<RawMember> {
  const m = await RawMember.connect(b.port, G, { protocols: [{ name: "range", metadata: subscriptionV0(["t"]) }], ...opts });
  await m.join();
  assert.equal(await m.sync([{ memberId: m.memberId, assignment: new Uint8Array([0, 0]) }]), 0);
  return m;
}

async function joinCode(c: WireClient, body: Record<string, unknown>, version = 5): Promise<number> {
  const r = await c.request(JoinGroupApi, version, {
    groupId: G,
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 30_000,
    memberId: "",
    groupInstanceId: null,
    protocolType: "consumer",
    protocols: [{ name: "range", metadata: subscriptionV0(["t"]) }],
    reason: null,
    ...body,
  });
  return r.errorCode as number;
}

test("JoinGroup with an empty protocol type or no protocols: INCONSISTENT_GROUP_PROTOCOL", async () => {
  await withBroker({}, async (_b, c) => {
    assert.equal(await joinCode(c, { protocolType: "" }), ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    assert.equal(await joinCode(c, { protocols: [] }), ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    assert.equal(await joinCode(c, { protocolType: "", protocols: [] }, 0), ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  });
});

test("a second member with another protocol type, or no protocol in common: INCONSISTENT_GROUP_PROTOCOL; the group stays Stable", async () => {
  await withBroker({}, async (b, c) => {
    const m = await stableMember(b);
    try {
      assert.equal(await joinCode(c, { protocolType: "connect" }), ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
      assert.equal(await joinCode(c, { protocols: [{ name: "roundrobin", metadata: subscriptionV0(["t"]) }] }), ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
      assert.equal(await m.heartbeat(), 0, "no rebalance");
    } finally {
      m.close();
    }
  });
});

test("SyncGroup with a stale generation: ILLEGAL_GENERATION; with an unknown member: UNKNOWN_MEMBER_ID", async () => {
  await withBroker({}, async (b, c) => {
    const m = await stableMember(b);
    try {
      assert.equal(await m.sync([], m.generationId - 1), ErrorCode.ILLEGAL_GENERATION);
      assert.equal(await m.sync([], m.generationId + 1), ErrorCode.ILLEGAL_GENERATION);
      const r = await c.request(SyncGroupApi, 5, { groupId: G, generationId: m.generationId, memberId: "stranger", groupInstanceId: null, protocolType: "consumer", protocolName: "range", assignments: [] });
      assert.equal(r.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
      const wrong = await c.request(SyncGroupApi, 5, { groupId: G, generationId: m.generationId, memberId: m.memberId, groupInstanceId: null, protocolType: "consumer", protocolName: "sticky", assignments: [] });
      assert.equal(wrong.errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
      assert.equal(await m.heartbeat(), 0);
    } finally {
      m.close();
    }
  });
});

test("OffsetCommit from an unknown member: UNKNOWN_MEMBER_ID; from a stale generation: ILLEGAL_GENERATION; nothing is stored", async () => {
  await withBroker({}, async (b, c) => {
    const m = await stableMember(b);
    try {
      assert.deepEqual(await commitOffsets(c, G, { t: { 0: 5n } }, { generationId: m.generationId, memberId: "stranger" }), [ErrorCode.UNKNOWN_MEMBER_ID]);
      assert.deepEqual(await commitOffsets(c, G, { t: { 0: 5n } }, { generationId: m.generationId + 3, memberId: m.memberId }), [ErrorCode.ILLEGAL_GENERATION]);
      assert.deepEqual(await commitOffsets(c, G, { t: { 0: 5n } }, { generationId: -1, memberId: "" }), [ErrorCode.UNKNOWN_MEMBER_ID], "a simple commit to a group with members");
      assert.deepEqual((await fetchOffsets(c, G, null)).offsets, {});
      assert.deepEqual(await m.commit({ t: { 0: 5n } }), [0]);
      assert.deepEqual((await fetchOffsets(c, G, null)).offsets, { "t-0": 5n });
      // OffsetCommit v1 and v5 say the same.
      assert.deepEqual(await commitOffsets(c, G, { t: { 1: 5n } }, { generationId: m.generationId, memberId: "stranger", version: 1 }), [ErrorCode.UNKNOWN_MEMBER_ID]);
      assert.deepEqual(await commitOffsets(c, G, { t: { 1: 5n } }, { generationId: m.generationId, memberId: "stranger", version: 5 }), [ErrorCode.UNKNOWN_MEMBER_ID]);
    } finally {
      m.close();
    }
  });
});

test("OffsetCommit metadata over offset.metadata.max.bytes: OFFSET_METADATA_TOO_LARGE for that partition", async () => {
  await withBroker({ "offset.metadata.max.bytes": "16" }, async (_b, c) => {
    assert.deepEqual(await commitOffsets(c, "simple", { t: { 0: 1n } }, { metadata: "x".repeat(16) }), [0]);
    assert.deepEqual(await commitOffsets(c, "simple", { t: { 1: 1n } }, { metadata: "x".repeat(17) }), [ErrorCode.OFFSET_METADATA_TOO_LARGE]);
    // Far past the limit (and past what an int16 string in the stored record could hold).
    assert.deepEqual(await commitOffsets(c, "simple", { t: { 1: 1n } }, { metadata: "y".repeat(32_767) }), [ErrorCode.OFFSET_METADATA_TOO_LARGE]);
    assert.deepEqual((await fetchOffsets(c, "simple", null)).offsets, { "t-0": 1n });
  });
});

test("session timeout outside group.min/max.session.timeout.ms: INVALID_SESSION_TIMEOUT", async () => {
  await withBroker({ "group.min.session.timeout.ms": "6000", "group.max.session.timeout.ms": "60000" }, async (_b, c) => {
    assert.equal(await joinCode(c, { sessionTimeoutMs: 5_999 }), ErrorCode.INVALID_SESSION_TIMEOUT);
    assert.equal(await joinCode(c, { sessionTimeoutMs: 60_001 }), ErrorCode.INVALID_SESSION_TIMEOUT);
    assert.equal(await joinCode(c, { sessionTimeoutMs: -1 }), ErrorCode.INVALID_SESSION_TIMEOUT);
    assert.equal(await joinCode(c, { sessionTimeoutMs: 2_147_483_647 }), ErrorCode.INVALID_SESSION_TIMEOUT);
    // v4+: the bounds are checked before an id is handed out.
    assert.equal(await joinCode(c, { sessionTimeoutMs: 1 }, 9), ErrorCode.INVALID_SESSION_TIMEOUT);
  });
});

test("empty group id: INVALID_GROUP_ID for JoinGroup, SyncGroup, Heartbeat and LeaveGroup", async () => {
  await withBroker({}, async (_b, c) => {
    const r = await c.request(JoinGroupApi, 5, { groupId: "", sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 30_000, memberId: "", groupInstanceId: null, protocolType: "consumer", protocols: [{ name: "range", metadata: new Uint8Array(0) }] });
    assert.equal(r.errorCode, ErrorCode.INVALID_GROUP_ID);
    const s = await c.request(SyncGroupApi, 3, { groupId: "", generationId: 1, memberId: "m", groupInstanceId: null, assignments: [] });
    assert.equal(s.errorCode, ErrorCode.INVALID_GROUP_ID);
    const h = await c.request(HeartbeatApi, 3, { groupId: "", generationId: 1, memberId: "m", groupInstanceId: null });
    assert.equal(h.errorCode, ErrorCode.INVALID_GROUP_ID);
    const l = await c.request(LeaveGroupApi, 3, { groupId: "", members: [{ memberId: "m", groupInstanceId: null }] });
    assert.equal(l.errorCode, ErrorCode.INVALID_GROUP_ID);
  });
});

test("large member metadata: 512 KiB works end to end; 2 MiB joins but its group record is over the offsets topic's max.message.bytes, so SyncGroup fails cleanly as in Kafka; past socket.request.max.bytes the connection closes", async () => {
  await withBroker({ "socket.request.max.bytes": String(4 * 1024 * 1024) }, async (b, c) => {
    const pattern = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31) & 0xff);
    const large = pattern(512 * 1024);
    const first = await RawMember.connect(b.port, G, { protocols: [{ name: "range", metadata: large }] });
    try {
      await first.join();
      assert.equal(first.members.length, 1);
      assert.deepEqual(first.members[0].metadata, large, "the leader gets the metadata back intact");
      assert.equal(await first.sync([{ memberId: first.memberId, assignment: large.subarray(0, 1000) }]), 0, "the group record (512 KiB of metadata) is stored");
      const d = await c.request(DescribeGroupsApi, 5, { groups: [G], includeAuthorizedOperations: false });
      const g = (d.groups as { groupState: string; members: { memberMetadata: Uint8Array }[] }[])[0];
      assert.equal(g.groupState, "Stable");
      assert.deepEqual(g.members[0].memberMetadata, large);
    } finally {
      first.close();
    }

    // 2 MiB: the JoinGroup is fine (the frame is under socket.request.max.bytes), but the group
    // record would be larger than the offsets topic accepts (max.message.bytes, 1 MiB by default):
    // Kafka answers the SyncGroup with UNKNOWN_SERVER_ERROR and rebalances; nothing is stored.
    const big = pattern(2 * 1024 * 1024);
    const other = "big-metadata-group";
    await findCoordinator(c, other);
    const m = await RawMember.connect(b.port, other, { protocols: [{ name: "range", metadata: big }] });
    try {
      await m.join();
      assert.deepEqual(m.members[0].metadata, big);
      assert.equal(await m.sync([{ memberId: m.memberId, assignment: new Uint8Array(10) }]), ErrorCode.UNKNOWN_SERVER_ERROR);
      assert.equal(await m.heartbeat(), ErrorCode.REBALANCE_IN_PROGRESS);
      // It comes back with a small subscription and the group forms.
      const rejoin = await m.joinOnce({ protocols: [{ name: "range", metadata: subscriptionV0(["t"]) }] });
      assert.equal(rejoin.errorCode, 0);
      assert.equal(await m.sync([{ memberId: m.memberId, assignment: new Uint8Array([0, 0]) }]), 0);
    } finally {
      m.close();
    }

    // 5 MiB of metadata: the frame is over socket.request.max.bytes: the connection closes.
    const huge = await WireClient.connect(b.port);
    const frameBytes = encodeRequest(JoinGroupApi, 5, 1, {
      groupId: G, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 30_000, memberId: "", groupInstanceId: null,
      protocolType: "consumer", protocols: [{ name: "range", metadata: new Uint8Array(5 * 1024 * 1024) }],
    });
    await huge.write(frameBytes).catch(() => {});
    assert.equal(await huge.waitClosed(10_000), true, "the oversized request's connection is closed");
    huge.close();
    // A frame whose metadata length says more than the frame holds: a malformed request, also closed.
    const liar = await WireClient.connect(b.port);
    const bytes = encodeRequest(JoinGroupApi, 5, 2, {
      groupId: G, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 30_000, memberId: "", groupInstanceId: null,
      protocolType: "consumer", protocols: [{ name: "range", metadata: new Uint8Array(8) }],
    });
    // JoinGroup v5 ends with the last protocol's metadata: int32 length, then the 8 bytes.
    new DataView(bytes.buffer).setInt32(bytes.length - 12, 1_000_000);
    await liar.write(bytes);
    assert.equal(await liar.nextFrame(5_000).catch(() => null), null, "no answer to a request that does not decode");
    liar.close();
    // Other connections are served, and the first group stands (closing a connection is not leaving).
    const d = await c.request(DescribeGroupsApi, 5, { groups: [G], includeAuthorizedOperations: false });
    assert.equal((d.groups as { groupState: string }[])[0].groupState, "Stable");
  });
});

test("Produce to __consumer_offsets from a client is refused with INVALID_TOPIC_EXCEPTION; the coordinator's own writes go on", async () => {
  await withBroker({}, async (b, c) => {
    const m = await stableMember(b);
    try {
      for (let p = 0; p < 5; p++) {
        const r = await produce(c, "__consumer_offsets", p, buildBatch([{ key: new Uint8Array([0, 2, 0, 1, 0x41]), value: "garbage" }]));
        assert.equal(r.errorCode, ErrorCode.INVALID_TOPIC_EXCEPTION, `partition ${p}`);
      }
      assert.deepEqual(await m.commit({ t: { 0: 3n } }), [0]);
      assert.deepEqual((await fetchOffsets(c, G, null)).offsets, { "t-0": 3n });
      // After a restart the group loads from the coordinator's records alone.
      m.close();
      await b.restart();
      const c2 = await WireClient.connect(b.port);
      try {
        await findCoordinator(c2, G);
        // FindCoordinator answers once the topic is there; the partition may still be loading.
        let f = await fetchOffsets(c2, G, null);
        for (let i = 0; i < 200 && f.errorCode !== 0; i++) {
          assert.ok(([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR] as number[]).includes(f.errorCode), `OffsetFetch error ${f.errorCode}`);
          await new Promise((r) => setTimeout(r, 25));
          f = await fetchOffsets(c2, G, null);
        }
        assert.deepEqual(f, { errorCode: 0, offsets: { "t-0": 3n } });
      } finally {
        c2.close();
      }
    } finally {
      m.close();
    }
  });
});

test("OffsetDelete while a member has just changed its protocols (the group still runs the old one) answers, and deletes nothing subscribed", async () => {
  await withBroker({}, async (b, c) => {
    assert.equal((await createTopic(c, "other")).errorCode, 0);
    const both = [{ name: "range", metadata: subscriptionV0(["t"]) }, { name: "roundrobin", metadata: subscriptionV0(["t"]) }];
    const a = await RawMember.connect(b.port, G, { protocols: both });
    const m2 = await RawMember.connect(b.port, G, { protocols: both });
    try {
      await a.join();
      const j2 = m2.join();
      // a must rejoin for m2's join to complete; its heartbeat tells it so once m2's join is in.
      for (let i = 0; i < 100 && (await a.heartbeat()) !== ErrorCode.REBALANCE_IN_PROGRESS; i++) await new Promise((r) => setTimeout(r, 20));
      await Promise.all([a.join(), j2]);
      const leader = a.isLeader ? a : m2;
      await Promise.all([leader.sync([{ memberId: a.memberId, assignment: new Uint8Array([0, 0]) }, { memberId: m2.memberId, assignment: new Uint8Array([0, 0]) }]), (leader === a ? m2 : a).sync()]);
      assert.equal(a.protocolName, "range");
      assert.deepEqual(await a.commit({ t: { 0: 1n }, other: { 0: 2n } }), [0, 0]);
      // m2 rejoins supporting only roundrobin: the group (still on "range") starts to rebalance.
      const m2Rejoin = m2.joinOnce({ protocols: [{ name: "roundrobin", metadata: subscriptionV0(["t"]) }] });
      m2Rejoin.catch(() => {});
      await new Promise((r) => setTimeout(r, 100));
      const r = await c.request(OffsetDeleteApi, 0, { groupId: G, topics: [{ name: "t", partitions: [{ partitionIndex: 0 }] }, { name: "other", partitions: [{ partitionIndex: 0 }] }] });
      assert.equal(r.errorCode, 0);
      const codes = (r.topics as { name: string; partitions: { errorCode: number }[] }[]).map((t) => [t.name, t.partitions[0].errorCode]);
      assert.deepEqual(codes, [["t", ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC], ["other", 0]]);
      assert.deepEqual((await fetchOffsets(c, G, null)).offsets, { "t-0": 1n });
      await a.joinOnce();
      assert.equal((await m2Rejoin).protocolName, "roundrobin", "the next generation runs the protocol everyone has");
    } finally {
      a.close();
      m2.close();
    }
  });
});
