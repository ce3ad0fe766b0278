// Every version of every group API strand advertises, over raw TCP against a real broker: each
// request decodes, each answer decodes whole in the version asked for (decodeResponse fails on a
// short or long body), and each carries what that version defines: JoinGroup v0-9 (v4+
// MEMBER_ID_REQUIRED, v7+ protocol type), SyncGroup v0-5, Heartbeat v0-4, LeaveGroup v0-5 (v3+
// batch), OffsetCommit v0-9 (v0 in the registry at /consumers/<group>/offsets/<topic>/<p>, as
// ZooKeeper-era tools read it), OffsetFetch v0-9 (v8+ several groups), FindCoordinator v0-4,
// ListGroups v0-5 (v4 state filter), DescribeGroups v0-5, DeleteGroups v0-2, OffsetDelete v0.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ApiVersionsApi,
  DeleteGroupsApi,
  DescribeGroupsApi,
  FindCoordinatorApi,
  HeartbeatApi,
  JoinGroupApi,
  LeaveGroupApi,
  ListGroupsApi,
  OffsetCommitApi,
  OffsetDeleteApi,
  OffsetFetchApi,
  SyncGroupApi,
} from "../../src/protocol/api/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { assignmentV0, decodeAssignment, findCoordinator, subscriptionV0 } from "../helpers/groups.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";

const BROKER = { "group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "5" };

async function withBroker(fn: (b: TestBroker, c: WireClient) => Promise<void>): Promise<void> {
  const b = await startBroker(BROKER);
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "t", { numPartitions: 3 })).errorCode, 0);
    await findCoordinator(c, "warm-up");
    await fn(b, c);
  } finally {
    c.close();
    await b.stop();
  }
}

test("ApiVersions lists the group APIs with the versions the issue asks for", async () => {
  await withBroker(async (_b, c) => {
    const r = await c.request(ApiVersionsApi, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" });
    const keys = new Map((r.apiKeys as { apiKey: number; minVersion: number; maxVersion: number }[]).map((k) => [k.apiKey, [k.minVersion, k.maxVersion]]));
    const want: Record<number, [number, number]> = { 8: [0, 9], 9: [0, 9], 10: [0, 4], 11: [0, 9], 12: [0, 4], 13: [0, 5], 14: [0, 5], 15: [0, 5], 16: [0, 5], 42: [0, 2], 47: [0, 0] };
    for (const [k, v] of Object.entries(want)) assert.deepEqual(keys.get(Number(k)), v, `api ${k}`);
  });
});

test("JoinGroup v0-9, SyncGroup, Heartbeat and LeaveGroup: one member per version goes through a whole generation", async () => {
  await withBroker(async (_b, c) => {
    const sub = subscriptionV0(["t"]);
    for (let v = 0; v <= 9; v++) {
      const groupId = `join-v${v}`;
      const body = {
        groupId,
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: 20_000,
        memberId: "",
        groupInstanceId: v >= 5 ? `instance-${v}` : null,
        protocolType: "consumer",
        protocols: [{ name: "range", metadata: sub }],
        reason: v >= 8 ? "testing" : null,
      };
      let r = await c.request(JoinGroupApi, v, body);
      if (v >= 4 && v < 5) {
        // v4 (dynamic member): the id first.
        assert.equal(r.errorCode, ErrorCode.MEMBER_ID_REQUIRED, `v${v}`);
        assert.notEqual(r.memberId, "");
        r = await c.request(JoinGroupApi, v, { ...body, memberId: r.memberId });
      }
      assert.equal(r.errorCode, 0, `JoinGroup v${v}`);
      assert.equal(r.generationId, 1);
      assert.equal(r.leader, r.memberId);
      assert.equal(r.protocolName, "range");
      if (v >= 7) assert.equal(r.protocolType, "consumer");
      const members = r.members as { memberId: string; groupInstanceId: string | null; metadata: Uint8Array }[];
      assert.equal(members.length, 1);
      assert.deepEqual(members[0].metadata, sub);
      if (v >= 5) assert.equal(members[0].groupInstanceId, `instance-${v}`);
      const memberId = r.memberId as string;
      const instance = v >= 5 ? `instance-${v}` : null;

      const sv = Math.min(v, 5);
      const s = await c.request(SyncGroupApi, sv, {
        groupId, generationId: 1, memberId, groupInstanceId: instance, protocolType: "consumer", protocolName: "range",
        assignments: [{ memberId, assignment: assignmentV0({ t: [0, 1, 2] }) }],
      });
      assert.equal(s.errorCode, 0, `SyncGroup v${sv}`);
      assert.deepEqual(decodeAssignment(s.assignment as Uint8Array), { t: [0, 1, 2] });
      if (sv >= 5) assert.deepEqual([s.protocolType, s.protocolName], ["consumer", "range"]);

      const hv = Math.min(v, 4);
      const h = await c.request(HeartbeatApi, hv, { groupId, generationId: 1, memberId, groupInstanceId: instance });
      assert.equal(h.errorCode, 0, `Heartbeat v${hv}`);
      const hBad = await c.request(HeartbeatApi, hv, { groupId, generationId: 2, memberId, groupInstanceId: instance });
      assert.equal(hBad.errorCode, ErrorCode.ILLEGAL_GENERATION);

      const lv = Math.min(v, 5);
      const l = await c.request(LeaveGroupApi, lv, { groupId, memberId, members: [{ memberId, groupInstanceId: instance, reason: "done" }] });
      assert.equal(l.errorCode, 0, `LeaveGroup v${lv}`);
      if (lv >= 3) assert.deepEqual((l.members as { errorCode: number }[]).map((m) => m.errorCode), [0]);
      const again = await c.request(LeaveGroupApi, lv, { groupId, memberId, members: [{ memberId, groupInstanceId: null, reason: null }] });
      // Before v3 the member's error is the response's; from v3 it is per member.
      if (lv < 3) assert.equal(again.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
      else assert.deepEqual((again.members as { errorCode: number }[]).map((m) => m.errorCode), [ErrorCode.UNKNOWN_MEMBER_ID]);
    }
  });
});

test("JoinGroup v0 (no rebalance timeout field) uses the session timeout to bound the rebalance", async () => {
  await withBroker(async (b, c) => {
    const groupId = "v0-rebalance";
    const join = (cl: WireClient, memberId: string) =>
      cl.request(JoinGroupApi, 0, { groupId, sessionTimeoutMs: 6_000, memberId, protocolType: "consumer", protocols: [{ name: "range", metadata: new Uint8Array(0) }] }, 30_000);
    const a = await join(c, "");
    assert.equal(a.generationId, 1);
    await c.request(SyncGroupApi, 0, { groupId, generationId: 1, memberId: a.memberId, assignments: [] });
    // A second member's join starts a rebalance; the first keeps heartbeating (so its session
    // stays alive) but never rejoins: after 6 s (its session timeout serving as rebalance
    // timeout) it is dropped and the second gets a generation of its own.
    const c2 = await WireClient.connect(b.port);
    try {
      const t0 = Date.now();
      let done = false;
      const pending = join(c2, "").finally(() => (done = true));
      const beats: number[] = [];
      while (!done) {
        await new Promise((r) => setTimeout(r, 1_000));
        if (!done) beats.push((await c.request(HeartbeatApi, 0, { groupId, generationId: 1, memberId: a.memberId })).errorCode as number);
      }
      const bJoin = await pending;
      const waited = Date.now() - t0;
      assert.ok(beats.length >= 4 && beats.slice(0, 4).every((e) => e === ErrorCode.REBALANCE_IN_PROGRESS), `heartbeats ${beats}`);
      assert.equal(bJoin.errorCode, 0);
      assert.equal(bJoin.generationId, 2);
      assert.equal((bJoin.members as unknown[]).length, 1);
      assert.ok(waited >= 5_000 && waited < 15_000, `waited ${waited} ms`);
    } finally {
      c2.close();
    }
  });
});

test("OffsetCommit v0-9 and OffsetFetch v0-9 (v0 in the registry, v8+ several groups at once)", async () => {
  await withBroker(async (b, c) => {
    for (let v = 0; v <= 9; v++) {
      const groupId = `commit-v${v}`;
      const r = await c.request(OffsetCommitApi, v, {
        groupId,
        generationIdOrMemberEpoch: -1,
        memberId: "",
        groupInstanceId: null,
        retentionTimeMs: -1n,
        topics: [{ name: "t", partitions: [0, 1].map((p) => ({ partitionIndex: p, committedOffset: BigInt(100 * v + p), committedLeaderEpoch: 7, commitTimestamp: -1n, committedMetadata: `m${v}` })) }],
      });
      const codes = (r.topics as { partitions: { errorCode: number }[] }[])[0].partitions.map((p) => p.errorCode);
      assert.deepEqual(codes, [0, 0], `OffsetCommit v${v}`);
      if (v >= 8) continue; // fetched below, several groups at once
      const f = await c.request(OffsetFetchApi, v, { groupId, topics: [{ name: "t", partitionIndexes: [0, 1, 2] }], requireStable: false });
      const parts = (f.topics as { partitions: { partitionIndex: number; committedOffset: bigint; metadata: string; committedLeaderEpoch: number; errorCode: number }[] }[])[0].partitions;
      assert.deepEqual(parts.map((p) => p.committedOffset), [BigInt(100 * v), BigInt(100 * v + 1), -1n], `OffsetFetch v${v}`);
      assert.ok(parts.every((p) => p.errorCode === 0));
      if (v >= 1) assert.equal(parts[0].metadata, `m${v}`);
      if (v >= 5) assert.equal(parts[0].committedLeaderEpoch, v >= 6 ? 7 : -1, `leader epoch v${v}`);
      if (v >= 2) {
        const all = await c.request(OffsetFetchApi, v, { groupId, topics: null, requireStable: false });
        assert.equal(all.errorCode, 0);
        assert.deepEqual((all.topics as { partitions: { committedOffset: bigint }[] }[])[0].partitions.map((p) => p.committedOffset).sort(), [BigInt(100 * v), BigInt(100 * v + 1)]);
      }
    }
    // v0 lives in the registry where 0.8 consumers and tools look, not in __consumer_offsets.
    const reg = b.registrySession();
    try {
      const { data } = await reg.getData("/consumers/commit-v0/offsets/t/1");
      assert.equal(new TextDecoder().decode(data), "1");
    } finally {
      await reg.close();
    }
    const v1 = await c.request(OffsetFetchApi, 1, { groupId: "commit-v0", topics: [{ name: "t", partitionIndexes: [0] }] });
    assert.equal((v1.topics as { partitions: { committedOffset: bigint }[] }[])[0].partitions[0].committedOffset, -1n, "v0 commits are not in the coordinator's store");
    for (const v of [8, 9]) {
      const f = await c.request(OffsetFetchApi, v, {
        groups: [
          { groupId: "commit-v8", memberId: null, memberEpoch: -1, topics: [{ name: "t", partitionIndexes: [0, 1] }] },
          { groupId: "commit-v9", memberId: null, memberEpoch: -1, topics: null },
          { groupId: "nobody", memberId: null, memberEpoch: -1, topics: [{ name: "t", partitionIndexes: [0] }] },
        ],
        requireStable: false,
      });
      const groups = f.groups as { groupId: string; errorCode: number; topics: { partitions: { committedOffset: bigint; committedLeaderEpoch: number }[] }[] }[];
      assert.deepEqual(groups.map((g) => [g.groupId, g.errorCode]), [["commit-v8", 0], ["commit-v9", 0], ["nobody", 0]], `OffsetFetch v${v}`);
      assert.deepEqual(groups[0].topics[0].partitions.map((p) => p.committedOffset), [800n, 801n]);
      assert.deepEqual(groups[1].topics[0].partitions.map((p) => p.committedOffset).sort(), [900n, 901n]);
      assert.equal(groups[1].topics[0].partitions[0].committedLeaderEpoch, 7);
      assert.deepEqual(groups[2].topics[0].partitions.map((p) => p.committedOffset), [-1n]);
    }
  });
});

test("FindCoordinator v0-4, ListGroups v0-5, DescribeGroups v0-5, DeleteGroups v0-2, OffsetDelete v0", async () => {
  await withBroker(async (b, c) => {
    for (let v = 0; v <= 3; v++) {
      const r = await c.request(FindCoordinatorApi, v, { key: "g", keyType: 0 });
      assert.deepEqual([r.errorCode, r.nodeId, r.port], [0, 0, b.port], `FindCoordinator v${v}`);
    }
    const r4 = await c.request(FindCoordinatorApi, 4, { keyType: 0, coordinatorKeys: ["g1", "g2"] });
    assert.deepEqual((r4.coordinators as { key: string; errorCode: number; port: number }[]).map((x) => [x.key, x.errorCode, x.port]), [["g1", 0, b.port], ["g2", 0, b.port]]);
    const txn = await c.request(FindCoordinatorApi, 1, { key: "tx", keyType: 1 });
    // Key type 1 is the transaction coordinator (txn_wiring.test.ts tests it further).
    assert.deepEqual([txn.errorCode, txn.port], [0, b.port], "the transaction coordinator is this broker");

    // One Stable group with a member, one Empty group with only offsets.
    const j = await c.request(JoinGroupApi, 1, { groupId: "live", sessionTimeoutMs: 30_000, rebalanceTimeoutMs: 30_000, memberId: "", protocolType: "consumer", protocols: [{ name: "range", metadata: subscriptionV0(["t"]) }] });
    await c.request(SyncGroupApi, 0, { groupId: "live", generationId: 1, memberId: j.memberId, assignments: [{ memberId: j.memberId, assignment: assignmentV0({ t: [0] }) }] });
    await c.request(OffsetCommitApi, 2, { groupId: "idle", generationIdOrMemberEpoch: -1, memberId: "", retentionTimeMs: -1n, topics: [{ name: "t", partitions: [{ partitionIndex: 0, committedOffset: 5n, committedMetadata: null }] }] });

    for (let v = 0; v <= 5; v++) {
      const l = await c.request(ListGroupsApi, v, { statesFilter: [], typesFilter: [] });
      assert.equal(l.errorCode, 0);
      const groups = (l.groups as { groupId: string; protocolType: string; groupState: string; groupType: string }[]).sort((x, y) => x.groupId.localeCompare(y.groupId));
      assert.deepEqual(groups.map((g) => [g.groupId, g.protocolType]), [["idle", ""], ["live", "consumer"]], `ListGroups v${v}`);
      if (v >= 4) assert.deepEqual(groups.map((g) => g.groupState), ["Empty", "Stable"]);
      if (v >= 5) assert.deepEqual(groups.map((g) => g.groupType), ["classic", "classic"]);
    }
    const stable = await c.request(ListGroupsApi, 4, { statesFilter: ["Stable"] });
    assert.deepEqual((stable.groups as { groupId: string }[]).map((g) => g.groupId), ["live"]);
    const consumerType = await c.request(ListGroupsApi, 5, { statesFilter: [], typesFilter: ["consumer"] });
    assert.deepEqual(consumerType.groups, [], "no KIP-848 groups");

    for (let v = 0; v <= 5; v++) {
      const d = await c.request(DescribeGroupsApi, v, { groups: ["live", "never"], includeAuthorizedOperations: false });
      const [live, never] = d.groups as { errorCode: number; groupState: string; protocolType: string; protocolData: string; members: { memberId: string; clientHost: string; memberAssignment: Uint8Array }[] }[];
      assert.deepEqual([live.errorCode, live.groupState, live.protocolType, live.protocolData], [0, "Stable", "consumer", "range"], `DescribeGroups v${v}`);
      assert.equal(live.members[0].memberId, j.memberId);
      assert.equal(live.members[0].clientHost, "/127.0.0.1");
      assert.deepEqual(decodeAssignment(live.members[0].memberAssignment), { t: [0] });
      assert.deepEqual([never.errorCode, never.groupState, never.members.length], [0, "Dead", 0]);
    }

    const od = await c.request(OffsetDeleteApi, 0, { groupId: "live", topics: [{ name: "t", partitions: [{ partitionIndex: 0 }] }] });
    assert.equal(od.errorCode, 0);
    assert.equal((od.topics as { partitions: { errorCode: number }[] }[])[0].partitions[0].errorCode, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC);
    const od2 = await c.request(OffsetDeleteApi, 0, { groupId: "idle", topics: [{ name: "t", partitions: [{ partitionIndex: 0 }] }] });
    assert.equal((od2.topics as { partitions: { errorCode: number }[] }[])[0].partitions[0].errorCode, 0);
    const od3 = await c.request(OffsetDeleteApi, 0, { groupId: "never", topics: [{ name: "t", partitions: [{ partitionIndex: 0 }] }] });
    assert.equal(od3.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);

    for (let v = 0; v <= 2; v++) {
      const name = `del-${v}`;
      await c.request(OffsetCommitApi, 2, { groupId: name, generationIdOrMemberEpoch: -1, memberId: "", retentionTimeMs: -1n, topics: [{ name: "t", partitions: [{ partitionIndex: 0, committedOffset: 1n, committedMetadata: null }] }] });
      const d = await c.request(DeleteGroupsApi, v, { groupsNames: [name, "live", "never"] });
      assert.deepEqual((d.results as { groupId: string; errorCode: number }[]).map((x) => [x.groupId, x.errorCode]), [
        [name, 0],
        ["live", ErrorCode.NON_EMPTY_GROUP],
        ["never", ErrorCode.GROUP_ID_NOT_FOUND],
      ], `DeleteGroups v${v}`);
    }
  });
});
