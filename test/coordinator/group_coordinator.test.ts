// GroupCoordinator, GroupMetadataManager and OffsetsOps (through the Coordinator facade) over an
// in-memory __consumer_offsets and a manual clock (harness.ts): the classic group protocol's state
// machine as Kafka runs it (joins, generations, leaders, MEMBER_ID_REQUIRED, initial delay,
// session and rebalance timeouts, static membership), the errors of SyncGroup, Heartbeat and
// OffsetCommit, offsets and group deletion, group.max.size, reload after a restart, and expiry.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ErrorCode } from "../../src/util/errors.ts";
import { decodeGroupMetadataValue, decodeOffsetsKey } from "../../src/protocol/mod.ts";
import type { CommitRequest } from "../../src/coordinator/mod.ts";
import {
  dec,
  DELAY_MS,
  enc,
  type Harness,
  harness,
  join,
  protocols,
  REBALANCE_MS,
  SESSION_MS,
  settle,
  stableGroup,
  sync,
} from "./harness.ts";

const G = "group-a";

function commitReq(groupId: string, generationId: number, memberId: string, offsets: [string, number, bigint, string?][], extra: Partial<CommitRequest> = {}): CommitRequest {
  return {
    groupId,
    generationId,
    memberId,
    groupInstanceId: null,
    commitTimestampMs: -1n,
    retentionTimeMs: -1n,
    offsets: offsets.map(([topic, partition, offset, metadata]) => ({ topic, partition, offset, leaderEpoch: 3, metadata: metadata ?? null })),
    ...extra,
  };
}

async function commit(h: Harness, req: CommitRequest): Promise<number[]> {
  return (await h.c.offsets.commit(req)).map((r) => r.errorCode);
}

function fetched(h: Harness, groupId: string, topics: { topic: string; partitions: number[] }[] | null) {
  const r = h.c.offsets.fetch(groupId, topics);
  return { errorCode: r.errorCode, offsets: Object.fromEntries(r.partitions.map((p) => [`${p.topic}-${p.partition}`, p.offset])) };
}

function hb(h: Harness, groupId: string, memberId: string, generationId: number, instanceId: string | null = null): number {
  return h.c.groups.heartbeat(groupId, memberId, instanceId, generationId);
}

function state(h: Harness, groupId: string): string | undefined {
  return h.c.manager.getGroup(groupId)?.state;
}

function noErrors(h: Harness): void {
  assert.deepEqual(h.logger.errors, [], "no error-level log lines");
}

// ---- joining -----------------------------------------------------------------------------------

test("N members joining inside the initial delay form one generation; only the leader gets the members' metadata", async () => {
  const h = await harness();
  const joins = [0, 1, 2, 3].map((i) => join(h, G, { protocols: [{ name: "range", metadata: enc(`sub-${i}`) }], clientId: `c${i}` }));
  // As in Kafka's InitialDelayedJoin, members that arrived during the first delay extend it once more.
  await h.clock.advance(2 * DELAY_MS - 1);
  assert.ok(joins.every((j) => !j.done), "joins wait for the initial delay");
  assert.equal(state(h, G), "PreparingRebalance");
  await h.clock.advance(1);
  assert.ok(joins.every((j) => j.done));
  const results = joins.map((j) => j.value);
  for (const r of results) {
    assert.equal(r.errorCode, 0);
    assert.equal(r.generationId, 1);
    assert.equal(r.protocolType, "consumer");
    assert.equal(r.protocolName, "range");
    assert.equal(r.leader, results[0].memberId, "the first joiner leads");
  }
  assert.equal(new Set(results.map((r) => r.memberId)).size, 4, "distinct member ids");
  assert.ok(results[0].memberId.startsWith("c0-"), "member id is client id + random part");
  const leader = results[0];
  assert.deepEqual(
    leader.members.map((m) => [m.memberId, dec(m.metadata)]).sort(),
    results.map((r, i) => [r.memberId, `sub-${i}`]).sort(),
  );
  for (const r of results.slice(1)) assert.deepEqual(r.members, [], "followers get no member list");
  assert.equal(state(h, G), "CompletingRebalance");

  // Followers' SyncGroup waits for the leader's; then each gets its own assignment.
  const followerSyncs = results.slice(1).map((r) => sync(h, G, r.memberId, 1));
  await h.clock.advance(0);
  assert.ok(followerSyncs.every((s) => !s.done));
  const leaderSync = sync(h, G, leader.memberId, 1, results.map((r) => ({ memberId: r.memberId, assignment: enc(`for-${r.memberId}`) })));
  await h.clock.advance(0);
  assert.equal(leaderSync.value.errorCode, 0);
  assert.equal(dec(leaderSync.value.assignment), `for-${leader.memberId}`);
  followerSyncs.forEach((s, i) => {
    assert.ok(s.done);
    assert.equal(s.value.errorCode, 0);
    assert.equal(s.value.protocolName, "range");
    assert.equal(dec(s.value.assignment), `for-${results[i + 1].memberId}`);
  });
  assert.equal(state(h, G), "Stable");
  const d = h.c.describeGroup(G);
  assert.equal(d.group.state, "Stable");
  assert.equal(d.group.members.length, 4);
  assert.deepEqual(h.c.listGroups([]), [{ groupId: G, protocolType: "consumer", state: "Stable" }]);
  assert.deepEqual(h.c.listGroups(["Empty"]), []);
  noErrors(h);
});

test("protocol selection: each member votes for its most preferred common protocol", async () => {
  const h = await harness();
  const a = join(h, G, { protocols: protocols("sticky", "range") });
  const b = join(h, G, { protocols: protocols("roundrobin", "range", "sticky") });
  const c = join(h, G, { protocols: protocols("range", "sticky") });
  await h.clock.advance(2 * DELAY_MS);
  // Candidates (common to all): sticky, range. Votes: a sticky, b range, c range.
  for (const j of [a, b, c]) assert.equal(j.value.protocolName, "range");
  assert.equal(dec(a.value.members.find((m) => m.memberId === a.value.memberId)!.metadata), "meta-range");
});

test("MEMBER_ID_REQUIRED (JoinGroup v4+): the id comes first, the member joins when it comes back with it", async () => {
  const h = await harness({ groupInitialRebalanceDelayMs: 0 });
  const first = join(h, G, { requireKnownMemberId: true });
  await settle();
  assert.equal(first.value.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
  assert.notEqual(first.value.memberId, "");
  assert.equal(first.value.generationId, -1);
  assert.equal(h.c.manager.getGroup(G)!.members.size, 0, "not a member yet");
  assert.equal(h.c.manager.getGroup(G)!.pendingMembers.size, 1);
  const again = join(h, G, { requireKnownMemberId: true, memberId: first.value.memberId });
  await settle();
  assert.equal(again.value.errorCode, 0);
  assert.equal(again.value.memberId, first.value.memberId);
  assert.equal(again.value.generationId, 1);
  assert.equal(again.value.leader, first.value.memberId);
  assert.equal(h.c.manager.getGroup(G)!.pendingMembers.size, 0);

  // An id that was never handed out is unknown.
  const bogus = join(h, G, { requireKnownMemberId: true, memberId: "made-up" });
  await settle();
  assert.equal(bogus.value.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  noErrors(h);
});

test("a pending member (given an id, never back) holds the join until its session timeout, then is forgotten", async () => {
  const h = await harness({ groupInitialRebalanceDelayMs: 0 });
  const g = await stableGroup(h, G, 1);
  const pending = join(h, G, { requireKnownMemberId: true, sessionTimeoutMs: 6000 });
  await settle();
  assert.equal(pending.value.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
  assert.equal(state(h, G), "Stable", "handing out an id starts no rebalance");
  // Another member arrives and does come back: the rebalance then waits for the pending one too.
  const second = join(h, G, { requireKnownMemberId: true });
  await settle();
  const secondJoin = join(h, G, { requireKnownMemberId: true, memberId: second.value.memberId });
  const rejoin = join(h, G, { memberId: g.members[0].memberId });
  await h.clock.advance(5999);
  assert.equal(state(h, G), "PreparingRebalance");
  assert.ok(!secondJoin.done && !rejoin.done, "waiting for the pending member");
  await h.clock.advance(1);
  assert.ok(secondJoin.done && rejoin.done);
  assert.equal(rejoin.value.generationId, g.generationId + 1);
  assert.equal(h.c.manager.getGroup(G)!.members.size, 2);
  assert.equal(h.c.manager.getGroup(G)!.pendingMembers.size, 0);
  // Coming back after expiry: unknown.
  const late = join(h, G, { requireKnownMemberId: true, memberId: pending.value.memberId });
  await settle();
  assert.equal(late.value.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
});

test("a member joining a Stable group starts a rebalance; every member rejoins into the next generation", async () => {
  const h = await harness({ groupInitialRebalanceDelayMs: 0 });
  const a = join(h, G);
  await settle();
  assert.equal(a.value.generationId, 1, "alone, without a delay, the first member completes at once");
  const aId = a.value.memberId;
  const s = sync(h, G, aId, 1, [{ memberId: aId, assignment: enc("all") }]);
  await settle();
  assert.equal(dec(s.value.assignment), "all");

  const b = join(h, G);
  await settle();
  assert.ok(!b.done, "b waits for a to rejoin");
  assert.equal(state(h, G), "PreparingRebalance");
  assert.equal(hb(h, G, aId, 1), ErrorCode.REBALANCE_IN_PROGRESS, "a learns of the rebalance from its heartbeat");
  // a's commits of generation 1 are still accepted while it has not rejoined (Kafka allows them in PreparingRebalance).
  assert.deepEqual(await commit(h, commitReq(G, 1, aId, [["t", 0, 5n]])), [0]);
  const aRejoin = join(h, G, { memberId: aId });
  await settle();
  assert.ok(aRejoin.done && b.done);
  assert.equal(aRejoin.value.generationId, 2);
  assert.equal(b.value.generationId, 2);
  assert.equal(aRejoin.value.leader, aId, "the leader stays");
  assert.equal(aRejoin.value.members.length, 2);
  // The old generation is fenced now.
  assert.equal(hb(h, G, aId, 1), ErrorCode.ILLEGAL_GENERATION);
  assert.equal(hb(h, G, aId, 2), 0);
  noErrors(h);
});

test("a follower rejoining a Stable group with the same protocols gets the current generation, no rebalance", async () => {
  const h = await harness();
  const g = await stableGroup(h, G, 2);
  const follower = g.members.find((m) => m.memberId !== g.leader)!;
  const r = join(h, G, { memberId: follower.memberId });
  await settle();
  assert.equal(r.value.errorCode, 0);
  assert.equal(r.value.generationId, g.generationId);
  assert.equal(state(h, G), "Stable");
  // The leader rejoining does start a rebalance (it may want to reassign).
  const l = join(h, G, { memberId: g.leader });
  await settle();
  assert.ok(!l.done);
  assert.equal(state(h, G), "PreparingRebalance");
});

test("a member leaving starts a rebalance without it; the last member leaving empties the group", async () => {
  const h = await harness();
  const g = await stableGroup(h, G, 3);
  const [a, b, c] = g.members.map((m) => m.memberId);
  const leave = h.c.groups.leave(G, [{ memberId: c, groupInstanceId: null }]);
  assert.deepEqual(leave, { errorCode: 0, members: [0] });
  assert.equal(state(h, G), "PreparingRebalance");
  assert.equal(hb(h, G, c, g.generationId), ErrorCode.UNKNOWN_MEMBER_ID);
  const ja = join(h, G, { memberId: a });
  const jb = join(h, G, { memberId: b });
  await settle();
  assert.equal(ja.value.generationId, g.generationId + 1);
  assert.deepEqual(ja.value.members.map((m) => m.memberId).sort(), [a, b].sort());
  await settle();
  // Leaving twice, or an unknown member: UNKNOWN_MEMBER_ID for that member only.
  assert.deepEqual(h.c.groups.leave(G, [{ memberId: c, groupInstanceId: null }, { memberId: "nobody", groupInstanceId: null }]).members, [
    ErrorCode.UNKNOWN_MEMBER_ID,
    ErrorCode.UNKNOWN_MEMBER_ID,
  ]);
  // Batch leave of both (LeaveGroup v3+).
  const r = h.c.groups.leave(G, [{ memberId: a, groupInstanceId: null }, { memberId: b, groupInstanceId: null }]);
  assert.deepEqual(r.members, [0, 0]);
  await settle();
  assert.equal(state(h, G), "Empty");
  const grp = h.c.manager.getGroup(G)!;
  assert.equal(grp.generationId, g.generationId + 2, "emptying completes a (memberless) generation, as Kafka does");
  assert.equal(grp.protocolName, null);
  // Kafka stores the empty group (so its currentStateTimestamp is known after a restart).
  const last = h.log.records(h.c.manager.partitionFor(G)).at(-1)!;
  const v = decodeGroupMetadataValue(last.value!);
  assert.ok(v.kind === "groupMetadata");
  assert.equal(v.members.length, 0);
  assert.equal(v.generation, g.generationId + 2);
  noErrors(h);
});

test("session timeout: a member that stops heartbeating is removed and the group rebalances", async () => {
  const h = await harness();
  const g = await stableGroup(h, G, 2);
  const [a, b] = g.members.map((m) => m.memberId);
  // a heartbeats every second, b is silent.
  for (let t = 0; t < SESSION_MS - 1000; t += 1000) {
    await h.clock.advance(1000);
    assert.equal(hb(h, G, a, g.generationId), 0);
  }
  assert.equal(state(h, G), "Stable");
  await h.clock.advance(1000);
  assert.equal(state(h, G), "PreparingRebalance", "b expired");
  assert.ok(!h.c.manager.getGroup(G)!.members.has(b));
  assert.equal(hb(h, G, a, g.generationId), ErrorCode.REBALANCE_IN_PROGRESS);
  const ja = join(h, G, { memberId: a });
  await settle();
  assert.equal(ja.value.generationId, g.generationId + 1);
  assert.deepEqual(ja.value.members.map((m) => m.memberId), [a]);
  // b's late heartbeat and commit are refused.
  assert.equal(hb(h, G, b, g.generationId), ErrorCode.UNKNOWN_MEMBER_ID);
  assert.deepEqual(await commit(h, commitReq(G, g.generationId, b, [["t", 0, 1n]])), [ErrorCode.UNKNOWN_MEMBER_ID]);
  noErrors(h);
});

test("rebalance timeout: members that do not rejoin in time are dropped from the new generation", async () => {
  const h = await harness();
  const g = await stableGroup(h, G, 3, { sessionTimeoutMs: 60_000, rebalanceTimeoutMs: 5_000 });
  const [a, b, c] = g.members.map((m) => m.memberId);
  const ja = join(h, G, { memberId: a, sessionTimeoutMs: 60_000, rebalanceTimeoutMs: 5_000 });
  await settle();
  const jb = join(h, G, { memberId: b, sessionTimeoutMs: 60_000, rebalanceTimeoutMs: 5_000 });
  await h.clock.advance(4_999);
  assert.ok(!ja.done && !jb.done, "waiting for c");
  assert.equal(hb(h, G, c, g.generationId), ErrorCode.REBALANCE_IN_PROGRESS, "c is told, but does not rejoin");
  await h.clock.advance(1);
  assert.ok(ja.done && jb.done);
  assert.equal(ja.value.generationId, g.generationId + 1);
  assert.deepEqual(ja.value.members.map((m) => m.memberId).sort(), [a, b].sort());
  assert.equal(hb(h, G, c, g.generationId), ErrorCode.UNKNOWN_MEMBER_ID);
  const jc = join(h, G, { memberId: c });
  await settle();
  assert.equal(jc.value.errorCode, ErrorCode.UNKNOWN_MEMBER_ID, "c must join as a new member");
});

test("rebalance timeout: a leader that does not rejoin is dropped and a member that did becomes leader", async () => {
  const h = await harness();
  const g = await stableGroup(h, G, 3, { sessionTimeoutMs: 60_000, rebalanceTimeoutMs: 5_000 });
  const followers = g.members.map((m) => m.memberId).filter((id) => id !== g.leader);
  // A newcomer starts the rebalance; the followers rejoin, the leader does not.
  const newcomer = join(h, G, { sessionTimeoutMs: 60_000, rebalanceTimeoutMs: 5_000 });
  await settle();
  assert.equal(state(h, G), "PreparingRebalance");
  const joins = [newcomer, ...followers.map((id) => join(h, G, { memberId: id, sessionTimeoutMs: 60_000, rebalanceTimeoutMs: 5_000 }))];
  await h.clock.advance(4_999);
  assert.ok(joins.every((j) => !j.done), "waiting for the leader");
  await h.clock.advance(1);
  assert.ok(joins.every((j) => j.done));
  const leader = joins[0].value.leader;
  const rejoined = joins.map((j) => j.value.memberId);
  assert.ok(rejoined.includes(leader) && leader !== g.leader, "the new leader is one of the members that rejoined");
  const leaderJoin = joins.find((j) => j.value.memberId === leader)!;
  assert.deepEqual(leaderJoin.value.members.map((m) => m.memberId).sort(), [...rejoined].sort());
  assert.ok(joins.filter((j) => j !== leaderJoin).every((j) => j.value.members.length === 0));
});

test("the leader's assignments: entries for non-members are ignored, members it left out get an empty assignment", async () => {
  const h = await harness();
  const joins = [join(h, G), join(h, G), join(h, G)];
  await h.clock.advance(2 * DELAY_MS);
  const [l, f1, f2] = joins.map((j) => j.value);
  const s1 = sync(h, G, f1.memberId, 1);
  const s2 = sync(h, G, f2.memberId, 1);
  const ls = sync(h, G, l.memberId, 1, [{ memberId: l.memberId, assignment: enc("L") }, { memberId: f1.memberId, assignment: enc("F1") }, { memberId: "ghost", assignment: enc("G") }]);
  await settle();
  assert.deepEqual([ls, s1, s2].map((s) => [s.value.errorCode, dec(s.value.assignment)]), [[0, "L"], [0, "F1"], [0, ""]]);
  const stored = decodeGroupMetadataValue(h.log.records(h.c.manager.partitionFor(G)).at(-1)!.value!);
  assert.ok(stored.kind === "groupMetadata");
  assert.deepEqual(stored.members.map((m) => dec(m.assignment)).sort(), ["", "F1", "L"]);
  assert.ok(!stored.members.some((m) => m.memberId === "ghost"));
});

test("initial rebalance delay: extended while members keep arriving, never past the rebalance timeout", async () => {
  const h = await harness({ groupInitialRebalanceDelayMs: 3000 });
  const a = join(h, G, { rebalanceTimeoutMs: 10_000 });
  await h.clock.advance(2000);
  const b = join(h, G, { rebalanceTimeoutMs: 10_000 });
  await h.clock.advance(1000); // t=3000: b arrived in the first delay: wait another 3000
  assert.ok(!a.done);
  await h.clock.advance(2000); // t=5000
  const c = join(h, G, { rebalanceTimeoutMs: 10_000 });
  await h.clock.advance(3999); // t=8999: c arrived in the second delay: a third one, to t=9000
  assert.ok(!a.done && !c.done);
  await h.clock.advance(1); // t=9000: nobody new since 6000
  assert.ok(a.done && b.done && c.done);
  assert.equal(a.value.generationId, 1);
  assert.equal(a.value.members.length, 3);

  // Members arriving every 2 s: the delay ends at the rebalance timeout (10 s) anyway.
  const h2 = await harness({ groupInitialRebalanceDelayMs: 3000 });
  const first = join(h2, G, { rebalanceTimeoutMs: 10_000 });
  for (let t = 2000; t < 10_000; t += 2000) {
    await h2.clock.advance(2000);
    join(h2, G, { rebalanceTimeoutMs: 10_000 });
  }
  await h2.clock.advance(1999); // t=9999
  assert.ok(!first.done);
  await h2.clock.advance(1);
  assert.ok(first.done);
  assert.equal(first.value.members.length, 5);
});

test("a group that had generations waits the initial delay once when it fills again, without extensions (Kafka: generation 0 only)", async () => {
  const h = await harness();
  const g = await stableGroup(h, G, 1);
  h.c.groups.leave(G, [{ memberId: g.members[0].memberId, groupInstanceId: null }]);
  await settle();
  assert.equal(state(h, G), "Empty");
  const a = join(h, G);
  await h.clock.advance(1000);
  const b = join(h, G);
  await h.clock.advance(DELAY_MS - 1001);
  assert.ok(!a.done);
  await h.clock.advance(1);
  assert.ok(a.done && b.done, "b arrived inside the delay but does not extend it");
  assert.equal(a.value.generationId, g.generationId + 2);
  assert.equal(a.value.members.length, 2);
});

test("describe: member metadata and assignments are shown once Stable; an unknown group is Dead", async () => {
  const h = await harness();
  const joins = [join(h, G), join(h, G)];
  await h.clock.advance(2 * DELAY_MS);
  let d = h.c.describeGroup(G);
  assert.equal(d.group.state, "CompletingRebalance");
  assert.equal(d.group.protocolName, "");
  assert.ok(d.group.members.every((m) => m.metadata.length === 0 && m.assignment.length === 0));
  const [l, f] = joins.map((j) => j.value);
  sync(h, G, f.memberId, 1);
  sync(h, G, l.memberId, 1, [{ memberId: l.memberId, assignment: enc("L") }, { memberId: f.memberId, assignment: enc("F") }]);
  await settle();
  d = h.c.describeGroup(G);
  assert.equal(d.errorCode, 0);
  assert.equal(d.group.state, "Stable");
  assert.equal(d.group.protocolType, "consumer");
  assert.equal(d.group.protocolName, "range");
  assert.deepEqual(d.group.members.map((m) => [m.memberId, dec(m.metadata), dec(m.assignment), m.clientId, m.clientHost]).sort(), [
    [l.memberId, "meta-range", "L", "client", "/127.0.0.1"],
    [f.memberId, "meta-range", "F", "client", "/127.0.0.1"],
  ].sort());
  assert.deepEqual(h.c.describeGroup("nope"), { errorCode: 0, group: { groupId: "nope", state: "Dead", protocolType: "", protocolName: "", members: [] } });
});

test("all members leaving during the initial delay empties the group at once", async () => {
  const h = await harness();
  const a = join(h, G);
  await settle();
  const id = h.c.manager.getGroup(G)!.leaderId!;
  h.c.groups.leave(G, [{ memberId: id, groupInstanceId: null }]);
  await settle();
  assert.equal(a.value.errorCode, ErrorCode.UNKNOWN_MEMBER_ID, "the waiting join is answered");
  assert.equal(state(h, G), "Empty");
  noErrors(h);
});

// ---- static membership --------------------------------------------------------------------------

test("static member restarting with the same metadata takes its old place: new id, no rebalance, old id fenced", async () => {
  const h = await harness();
  const g = await stableGroup(h, G, 2, { instanceIds: ["host-a", "host-b"] });
  const oldA = g.members.find((m) => m.instanceId === "host-a")!.memberId;
  const appendsBefore = h.log.appends;
  const r = join(h, G, { instanceId: "host-a" });
  await settle();
  assert.equal(r.value.errorCode, 0);
  assert.notEqual(r.value.memberId, oldA);
  assert.equal(r.value.generationId, g.generationId, "same generation");
  assert.equal(state(h, G), "Stable", "no rebalance");
  assert.equal(h.log.appends, appendsBefore + 1, "the new member id is stored");
  // The new incarnation keeps the old assignment.
  const s = sync(h, G, r.value.memberId, g.generationId, [], "host-a");
  await settle();
  assert.equal(dec(s.value.assignment), `assign-${oldA}`);
  // The old incarnation is fenced everywhere.
  assert.equal(hb(h, G, oldA, g.generationId, "host-a"), ErrorCode.FENCED_INSTANCE_ID);
  const sOld = sync(h, G, oldA, g.generationId, [], "host-a");
  await settle();
  assert.equal(sOld.value.errorCode, ErrorCode.FENCED_INSTANCE_ID);
  assert.deepEqual(await commit(h, commitReq(G, g.generationId, oldA, [["t", 0, 1n]], { groupInstanceId: "host-a" })), [ErrorCode.FENCED_INSTANCE_ID]);
  const jOld = join(h, G, { memberId: oldA, instanceId: "host-a" });
  await settle();
  assert.equal(jOld.value.errorCode, ErrorCode.FENCED_INSTANCE_ID);
  assert.equal(hb(h, G, r.value.memberId, g.generationId, "host-a"), 0);
  // Leaving by instance id alone (admin tools, KIP-345).
  assert.deepEqual(h.c.groups.leave(G, [{ memberId: "", groupInstanceId: "host-b" }]).members, [0]);
  assert.equal(state(h, G), "PreparingRebalance");
  noErrors(h);
});

test("static member restarting while its old incarnation waits in SyncGroup: the old call is answered FENCED_INSTANCE_ID", async () => {
  const h = await harness();
  const joins = [join(h, G, { instanceId: "host-a" }), join(h, G, { instanceId: "host-b" })];
  await h.clock.advance(2 * DELAY_MS);
  const [a, b] = joins.map((j) => j.value);
  const follower = a.memberId === a.leader ? b : a;
  const followerInstance = follower === a ? "host-a" : "host-b";
  const waiting = sync(h, G, follower.memberId, 1, [], followerInstance);
  await settle();
  assert.ok(!waiting.done);
  const replacement = join(h, G, { instanceId: followerInstance });
  await settle();
  assert.equal(waiting.value.errorCode, ErrorCode.FENCED_INSTANCE_ID);
  assert.equal(state(h, G), "PreparingRebalance", "not Stable: the static member's return rebalances");
  const leader = follower === a ? b : a;
  const lj = join(h, G, { memberId: leader.memberId, instanceId: followerInstance === "host-a" ? "host-b" : "host-a" });
  await settle();
  assert.equal(lj.value.generationId, 2);
  assert.equal(replacement.value.generationId, 2);
  assert.notEqual(replacement.value.memberId, follower.memberId);
  noErrors(h);
});

test("static member restarting with different metadata triggers a rebalance", async () => {
  const h = await harness();
  const g = await stableGroup(h, G, 2, { instanceIds: ["host-a", "host-b"] });
  const b = g.members.find((m) => m.instanceId === "host-b")!.memberId;
  const r = join(h, G, { instanceId: "host-a", protocols: [{ name: "range", metadata: enc("new-subscription") }] });
  await settle();
  assert.ok(!r.done);
  assert.equal(state(h, G), "PreparingRebalance");
  const jb = join(h, G, { memberId: b, instanceId: "host-b" });
  await settle();
  assert.equal(r.value.generationId, g.generationId + 1);
  assert.equal(jb.value.generationId, g.generationId + 1);
});

// ---- SyncGroup and Heartbeat errors --------------------------------------------------------------

test("SyncGroup errors: unknown member, stale generation, rebalance in progress, inconsistent protocol", async () => {
  const h = await harness();
  const g = await stableGroup(h, G, 2);
  const [a, b] = g.members.map((m) => m.memberId);
  const cases: [string, number, number][] = [
    ["nobody", g.generationId, ErrorCode.UNKNOWN_MEMBER_ID],
    [a, g.generationId - 1, ErrorCode.ILLEGAL_GENERATION],
    [a, g.generationId + 1, ErrorCode.ILLEGAL_GENERATION],
  ];
  for (const [member, gen, code] of cases) {
    const s = sync(h, G, member, gen);
    await settle();
    assert.equal(s.value.errorCode, code, `${member} gen ${gen}`);
  }
  const unknownGroup = sync(h, "no-such-group", a, 1);
  await settle();
  assert.equal(unknownGroup.value.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  const wrongProto = track2(h.c.groups.sync({ groupId: G, generationId: g.generationId, memberId: a, groupInstanceId: null, protocolType: "connect", protocolName: null, assignments: [] }));
  await settle();
  assert.equal(wrongProto.value?.errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  // A Stable member syncing again gets its assignment again.
  const again = sync(h, G, b, g.generationId);
  await settle();
  assert.equal(dec(again.value.assignment), `assign-${b}`);
  // During a rebalance, a sync of the current generation: REBALANCE_IN_PROGRESS.
  join(h, G);
  await settle();
  const during = sync(h, G, b, g.generationId);
  await settle();
  assert.equal(during.value.errorCode, ErrorCode.REBALANCE_IN_PROGRESS);
});

function track2<T>(p: Promise<T>): { value: T | undefined } {
  const t: { value: T | undefined } = { value: undefined };
  p.then((v) => (t.value = v));
  return t;
}

test("followers waiting in SyncGroup get REBALANCE_IN_PROGRESS when a member joins before the leader syncs", async () => {
  const h = await harness();
  const joins = [join(h, G), join(h, G)];
  await h.clock.advance(2 * DELAY_MS);
  const follower = joins[1].value;
  const s = sync(h, G, follower.memberId, 1);
  await settle();
  assert.ok(!s.done);
  join(h, G);
  await settle();
  assert.equal(s.value.errorCode, ErrorCode.REBALANCE_IN_PROGRESS);
  assert.equal(state(h, G), "PreparingRebalance");
});

test("a follower waiting in SyncGroup for a slow leader is not expired by its session timeout (Kafka keeps members with a request waiting)", async () => {
  const h = await harness();
  const joins = [join(h, G, { sessionTimeoutMs: 6000 }), join(h, G, { sessionTimeoutMs: 6000 })];
  await h.clock.advance(2 * DELAY_MS);
  const [leader, follower] = joins.map((j) => j.value);
  const s = sync(h, G, follower.memberId, 1);
  // The leader heartbeats while it computes a slow assignment; the follower just waits in SyncGroup.
  for (let t = 0; t < 9000; t += 1000) {
    await h.clock.advance(1000);
    hb(h, G, leader.memberId, 1);
  }
  assert.ok(!s.done, `the follower's SyncGroup is still waiting (${JSON.stringify(s.value)})`);
  assert.equal(state(h, G), "CompletingRebalance");
  const ls = sync(h, G, leader.memberId, 1, [{ memberId: leader.memberId, assignment: enc("L") }, { memberId: follower.memberId, assignment: enc("F") }]);
  await settle();
  assert.equal(ls.value.errorCode, 0);
  assert.equal(s.value.errorCode, 0);
  assert.equal(dec(s.value.assignment), "F");
  // And from its answer on, it has a full session timeout to heartbeat again.
  await h.clock.advance(5999);
  hb(h, G, leader.memberId, 1);
  assert.equal(hb(h, G, follower.memberId, 1), 0);
  await h.clock.advance(6000);
  assert.ok(!h.c.manager.getGroup(G)!.members.has(follower.memberId), "silent after that: expired");
});

test("Heartbeat errors: unknown group/member, stale generation, NOT_COORDINATOR, and NONE in CompletingRebalance", async () => {
  const h = await harness({ offsetsTopicNumPartitions: 4 });
  const g = await stableGroup(h, G, 2);
  const [a] = g.members.map((m) => m.memberId);
  assert.equal(hb(h, "unknown-group", a, 1), ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(hb(h, G, "nobody", g.generationId), ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(hb(h, G, a, g.generationId + 7), ErrorCode.ILLEGAL_GENERATION);
  assert.equal(hb(h, G, a, g.generationId), 0);
  // CompletingRebalance: a member of the new generation heartbeating while the leader assigns: NONE.
  const other = "group-b";
  const js = [join(h, other), join(h, other)];
  await h.clock.advance(2 * DELAY_MS);
  assert.equal(state(h, other), "CompletingRebalance");
  assert.equal(hb(h, other, js[1].value.memberId, js[1].value.generationId), 0);
  assert.equal(hb(h, other, js[1].value.memberId, js[1].value.generationId - 1), ErrorCode.ILLEGAL_GENERATION);
  // A partition this broker no longer leads.
  h.c.onResignation(h.c.manager.partitionFor(G));
  assert.equal(hb(h, G, a, g.generationId), ErrorCode.NOT_COORDINATOR);
  const j = join(h, G);
  await settle();
  assert.equal(j.value.errorCode, ErrorCode.NOT_COORDINATOR);
});

test("COORDINATOR_LOAD_IN_PROGRESS while an offsets partition loads, then the loaded group answers", async () => {
  const h = await harness();
  await commit(h, commitReq(G, -1, "", [["t", 0, 42n]]));
  const p = h.c.manager.partitionFor(G);
  h.c.onResignation(p);
  assert.equal(fetched(h, G, null).errorCode, ErrorCode.NOT_COORDINATOR);
  const loading = h.c.onElection(p);
  // Loading yields on the clock between chunks (and before finishing): requests wait meanwhile.
  assert.equal(fetched(h, G, null).errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(hb(h, G, "x", 1), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  await h.clock.advance(0);
  await loading;
  assert.deepEqual(fetched(h, G, null), { errorCode: 0, offsets: { "t-0": 42n } });
});

// ---- offsets --------------------------------------------------------------------------------------

test("OffsetCommit fencing: generation, member, rebalance in progress; simple commits only for groups without members", async () => {
  const h = await harness();
  // A group nobody manages: simple commits (generation -1, no member id) are fine, and create it.
  assert.deepEqual(await commit(h, commitReq("standalone", -1, "", [["t", 0, 10n], ["t", 1, 11n]])), [0, 0]);
  assert.deepEqual(fetched(h, "standalone", null).offsets, { "t-0": 10n, "t-1": 11n });
  assert.equal(state(h, "standalone"), "Empty");
  // Unknown group with a generation: ILLEGAL_GENERATION (Kafka: a commit from an older generation).
  assert.deepEqual(await commit(h, commitReq("ghost", 3, "m", [["t", 0, 1n]])), [ErrorCode.ILLEGAL_GENERATION]);

  const g = await stableGroup(h, G, 2);
  const [a] = g.members.map((m) => m.memberId);
  assert.deepEqual(await commit(h, commitReq(G, g.generationId, a, [["t", 0, 100n]])), [0]);
  assert.deepEqual(await commit(h, commitReq(G, g.generationId - 1, a, [["t", 0, 1n]])), [ErrorCode.ILLEGAL_GENERATION]);
  assert.deepEqual(await commit(h, commitReq(G, g.generationId, "nobody", [["t", 0, 1n]])), [ErrorCode.UNKNOWN_MEMBER_ID]);
  assert.deepEqual(await commit(h, commitReq(G, -1, "", [["t", 0, 1n]])), [ErrorCode.UNKNOWN_MEMBER_ID], "simple commit to a group with members");
  assert.deepEqual(fetched(h, G, null).offsets, { "t-0": 100n }, "refused commits changed nothing");

  // CompletingRebalance: the new generation's commits wait for its assignment.
  const n = join(h, G);
  const ja = join(h, G, { memberId: a });
  const jb = join(h, G, { memberId: g.members[1].memberId });
  await settle();
  assert.equal(state(h, G), "CompletingRebalance");
  assert.deepEqual(await commit(h, commitReq(G, g.generationId + 1, a, [["t", 0, 1n]])), [ErrorCode.REBALANCE_IN_PROGRESS]);
  assert.ok(n.done && ja.done && jb.done);
  noErrors(h);
});

test("OffsetCommit: OFFSET_METADATA_TOO_LARGE for that partition only; metadata and leader epoch are kept", async () => {
  const h = await harness({ offsetMetadataMaxBytes: 10 });
  const r = await commit(h, commitReq(G, -1, "", [["t", 0, 1n, "0123456789"], ["t", 1, 2n, "0123456789x"]]));
  assert.equal(r[0], 0);
  assert.equal(r[1], ErrorCode.OFFSET_METADATA_TOO_LARGE);
  const f = h.c.offsets.fetch(G, [{ topic: "t", partitions: [0, 1] }]);
  assert.deepEqual(f.partitions.map((p) => [p.partition, p.offset, p.metadata, p.leaderEpoch]), [[0, 1n, "0123456789", 3], [1, -1n, "", -1]]);
  // A null metadata is stored as "".
  await commit(h, commitReq(G, -1, "", [["t", 3, 4n]]));
  assert.equal(h.c.offsets.fetch(G, [{ topic: "t", partitions: [3] }]).partitions[0].metadata, "");
});

test("OffsetFetch: all committed partitions (topics null) or the ones asked, -1 for partitions never committed", async () => {
  const h = await harness();
  await commit(h, commitReq(G, -1, "", [["a", 0, 5n], ["a", 2, 7n], ["b", 0, 9n]]));
  assert.deepEqual(fetched(h, G, null), { errorCode: 0, offsets: { "a-0": 5n, "a-2": 7n, "b-0": 9n } });
  assert.deepEqual(fetched(h, G, [{ topic: "a", partitions: [0, 1] }, { topic: "zzz", partitions: [0] }]), {
    errorCode: 0,
    offsets: { "a-0": 5n, "a-1": -1n, "zzz-0": -1n },
  });
  assert.deepEqual(fetched(h, "never-seen", [{ topic: "a", partitions: [0] }]), { errorCode: 0, offsets: { "a-0": -1n } });
  assert.deepEqual(fetched(h, "never-seen", null), { errorCode: 0, offsets: {} });
  // A later commit replaces the earlier one.
  await commit(h, commitReq(G, -1, "", [["a", 0, 6n]]));
  assert.equal(fetched(h, G, null).offsets["a-0"], 6n);
});

test("DeleteGroups: GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, and an empty group's offsets and metadata go with tombstones", async () => {
  const h = await harness();
  assert.equal(await h.c.offsets.deleteGroup("nope"), ErrorCode.GROUP_ID_NOT_FOUND);
  const g = await stableGroup(h, G, 1);
  await commit(h, commitReq(G, g.generationId, g.members[0].memberId, [["t", 0, 3n], ["t", 1, 4n]]));
  assert.equal(await h.c.offsets.deleteGroup(G), ErrorCode.NON_EMPTY_GROUP);
  h.c.groups.leave(G, [{ memberId: g.members[0].memberId, groupInstanceId: null }]);
  await settle();
  assert.equal(state(h, G), "Empty");
  assert.equal(await h.c.offsets.deleteGroup(G), 0);
  assert.equal(h.c.manager.getGroup(G), undefined);
  assert.deepEqual(fetched(h, G, null).offsets, {});
  assert.equal(h.c.describeGroup(G).group.state, "Dead");
  assert.equal(await h.c.offsets.deleteGroup(G), ErrorCode.GROUP_ID_NOT_FOUND);
  // The log ends with tombstones for both offsets and the group.
  const tail = h.log.records(h.c.manager.partitionFor(G)).slice(-3);
  assert.ok(tail.every((r) => r.value === null));
  assert.deepEqual(
    tail.map((r) => decodeOffsetsKey(r.key!)).map((k) => k.kind === "offsetCommit" ? `${k.topic}-${k.partition}` : k.kind).sort(),
    ["groupMetadata", "t-0", "t-1"],
  );
  // A restart replays the tombstones: nothing comes back.
  const c2 = await h.restart();
  assert.equal(c2.manager.getGroup(G), undefined);
  // The group id can be used again.
  const again = await stableGroup(h, G, 1);
  assert.equal(again.generationId, 1);
});

test("OffsetDelete: removes offsets of topics the group does not subscribe to, GROUP_SUBSCRIBED_TO_TOPIC for the others", async () => {
  const h = await harness();
  await commit(h, commitReq(G, -1, "", [["a", 0, 1n], ["b", 0, 2n]]));
  const r = await h.c.offsets.deleteOffsets(G, [{ topic: "a", partition: 0 }, { topic: "b", partition: 0 }, { topic: "c", partition: 0 }], new Set(["b"]));
  assert.equal(r.errorCode, 0);
  assert.deepEqual(r.partitions.map((p) => `${p.topic}:${p.errorCode}`), ["a:0", `b:${ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC}`, "c:0"]);
  assert.deepEqual(fetched(h, G, null).offsets, { "b-0": 2n });
  assert.equal((await h.c.offsets.deleteOffsets("nope", [{ topic: "a", partition: 0 }], new Set())).errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  const c2 = await h.restart();
  assert.deepEqual(Object.keys(Object.fromEntries(c2.offsets.fetch(G, null).partitions.map((p) => [`${p.topic}-${p.partition}`, 1]))), ["b-0"]);
});

test("group.max.size: a join past the limit gets GROUP_MAX_SIZE_REACHED, the members already in are unaffected", async () => {
  const h = await harness({ groupMaxSize: 2 });
  const g = await stableGroup(h, G, 2);
  const third = join(h, G);
  await settle();
  assert.equal(third.value.errorCode, ErrorCode.GROUP_MAX_SIZE_REACHED);
  assert.equal(state(h, G), "Stable");
  assert.equal(hb(h, G, g.members[0].memberId, g.generationId), 0);
  // With v4+ (MEMBER_ID_REQUIRED) the id is not even handed out.
  const v4 = join(h, G, { requireKnownMemberId: true });
  await settle();
  assert.equal(v4.value.errorCode, ErrorCode.GROUP_MAX_SIZE_REACHED);
  // Existing members may still rejoin.
  const rejoin = join(h, G, { memberId: g.leader });
  await settle();
  assert.equal(state(h, G), "PreparingRebalance");
  assert.ok(!rejoin.done);
});

test("join validation: INVALID_GROUP_ID, INVALID_SESSION_TIMEOUT, INCONSISTENT_GROUP_PROTOCOL, UNKNOWN_MEMBER_ID", async () => {
  const h = await harness({ groupMinSessionTimeoutMs: 6000, groupMaxSessionTimeoutMs: 300_000 });
  const codes = async (groupId: string, o: Parameters<typeof join>[2]) => {
    const j = join(h, groupId, o);
    await settle();
    return j.value.errorCode;
  };
  assert.equal(await codes("", {}), ErrorCode.INVALID_GROUP_ID);
  assert.equal(await codes(G, { sessionTimeoutMs: 5999 }), ErrorCode.INVALID_SESSION_TIMEOUT);
  assert.equal(await codes(G, { sessionTimeoutMs: 300_001 }), ErrorCode.INVALID_SESSION_TIMEOUT);
  assert.equal(await codes(G, { protocolType: "" }), ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  assert.equal(await codes(G, { protocols: [] }), ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  assert.equal(await codes("other", { memberId: "someone" }), ErrorCode.UNKNOWN_MEMBER_ID, "a member id for a group that does not exist");
  const g = await stableGroup(h, G, 1, { protocols: protocols("range", "roundrobin") });
  assert.equal(await codes(G, { protocolType: "connect" }), ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  assert.equal(await codes(G, { protocols: protocols("sticky") }), ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  assert.equal(state(h, G), "Stable", "refused joins start no rebalance");
  assert.equal(h.c.manager.getGroup(G)!.members.size, 1);
  assert.equal(g.generationId, 1);
  noErrors(h);
});

// ---- persistence -------------------------------------------------------------------------------

test("a restart (new manager over the same records) gives back the same groups, members, assignments and offsets", async () => {
  const h = await harness();
  const g = await stableGroup(h, G, 3, { instanceIds: ["i0", "i1", "i2"] });
  await commit(h, commitReq(G, g.generationId, g.members[0].memberId, [["orders", 0, 10n, "m0"], ["orders", 1, 20n]]));
  await commit(h, commitReq("simple", -1, "", [["logs", 5, 99n]]));
  const empty = await stableGroup(h, "emptied", 1);
  h.c.groups.leave("emptied", [{ memberId: empty.members[0].memberId, groupInstanceId: null }]);
  await settle();
  const before = h.c.manager.getGroup(G)!;
  const c2 = await h.restart();
  const after = c2.manager.getGroup(G)!;
  assert.equal(after.state, "Stable");
  assert.equal(after.generationId, before.generationId);
  assert.equal(after.protocolType, "consumer");
  assert.equal(after.protocolName, "range");
  assert.equal(after.leaderId, before.leaderId);
  assert.deepEqual([...after.members.keys()], [...before.members.keys()]);
  for (const [id, m] of after.members) {
    assert.equal(dec(m.assignment), `assign-${id}`);
    assert.equal(m.groupInstanceId, before.members.get(id)!.groupInstanceId);
    assert.equal(m.sessionTimeoutMs, SESSION_MS);
    assert.equal(m.rebalanceTimeoutMs, REBALANCE_MS);
    assert.equal(dec(m.metadataFor("range")), "meta-range");
  }
  assert.deepEqual([...after.staticMembers].sort(), [...before.staticMembers].sort());
  const off = c2.offsets.fetch(G, null).partitions.map((p) => [p.topic, p.partition, p.offset, p.metadata, p.leaderEpoch]);
  assert.deepEqual(off, [["orders", 0, 10n, "m0", 3], ["orders", 1, 20n, "", 3]]);
  assert.deepEqual(c2.offsets.fetch("simple", null).partitions.map((p) => p.offset), [99n]);
  assert.equal(c2.manager.getGroup("emptied")!.state, "Empty");
  assert.equal(c2.manager.getGroup("emptied")!.generationId, empty.generationId + 1);
  assert.deepEqual(c2.listGroups([]).map((x) => `${x.groupId}:${x.state}`), ["emptied:Empty", `${G}:Stable`, "simple:Empty"]);

  // Loaded members heartbeat with their generation and carry on; a silent one expires after its session.
  const [m0, m1] = g.members.map((m) => m.memberId);
  for (let t = 0; t < SESSION_MS; t += 2000) {
    await h.clock.advance(2000);
    // At SESSION_MS, i2 (silent since the load) expires first: the others hear of the rebalance.
    const expect = t + 2000 < SESSION_MS ? 0 : ErrorCode.REBALANCE_IN_PROGRESS;
    assert.equal(c2.groups.heartbeat(G, m0, "i0", g.generationId), expect);
    assert.equal(c2.groups.heartbeat(G, m1, "i1", g.generationId), expect);
  }
  assert.equal(c2.manager.getGroup(G)!.state, "PreparingRebalance", "i2 did not come back");
  assert.deepEqual(h.logger.errors, []);
});

test("loading skips records of unknown key versions and unreadable values, keeps the rest", async () => {
  const h = await harness();
  await commit(h, commitReq(G, -1, "", [["t", 0, 1n]]));
  const p = h.c.manager.partitionFor(G);
  // A KIP-848 record (key version 3+) and a garbled offset value, as another broker might leave them.
  const { RecordBatchBuilder } = await import("../../src/protocol/mod.ts");
  const b = new RecordBatchBuilder();
  b.append(0n, new Uint8Array([0, 9, 0, 1, 0x41]), new Uint8Array([0, 0]));
  const keyBytes = h.c.manager.offsetRecord(G, "t", 1, null).key;
  b.append(0n, keyBytes, new Uint8Array([0, 3, 1]));
  await h.log.append(p, b.build(0));
  await commit(h, commitReq(G, -1, "", [["t", 2, 3n]]));
  const c2 = await h.restart();
  assert.deepEqual(c2.offsets.fetch(G, null).partitions.map((x) => `${x.topic}-${x.partition}:${x.offset}`).sort(), ["t-0:1", "t-2:3"]);
});

test("a failed append to __consumer_offsets fails the commit and changes nothing in memory", async () => {
  const h = await harness();
  await commit(h, commitReq(G, -1, "", [["t", 0, 1n]]));
  h.log.failWith = ErrorCode.NOT_LEADER_OR_FOLLOWER;
  assert.deepEqual(await commit(h, commitReq(G, -1, "", [["t", 0, 2n]])), [ErrorCode.NOT_COORDINATOR]);
  h.log.failWith = ErrorCode.KAFKA_STORAGE_ERROR;
  const r = await commit(h, commitReq(G, -1, "", [["t", 0, 3n]]));
  assert.notEqual(r[0], 0);
  h.log.failWith = 0;
  assert.equal(fetched(h, G, null).offsets["t-0"], 1n);
});

test("the leader's SyncGroup answers nobody until the group record is in the log; a failed write restarts the rebalance", async () => {
  const h = await harness();
  const joins = [join(h, G), join(h, G)];
  await h.clock.advance(2 * DELAY_MS);
  const [l, f] = joins.map((j) => j.value);
  h.log.hold();
  const fs = sync(h, G, f.memberId, 1);
  const ls = sync(h, G, l.memberId, 1, [{ memberId: l.memberId, assignment: enc("L") }, { memberId: f.memberId, assignment: enc("F") }]);
  await settle();
  assert.ok(!fs.done && !ls.done, "waiting for the write");
  assert.equal(state(h, G), "CompletingRebalance");
  h.log.failWith = ErrorCode.NOT_LEADER_OR_FOLLOWER;
  h.log.release();
  await settle();
  assert.equal(ls.value.errorCode, ErrorCode.NOT_COORDINATOR);
  assert.equal(fs.value.errorCode, ErrorCode.NOT_COORDINATOR);
  assert.equal(state(h, G), "PreparingRebalance");
  h.log.failWith = 0;
  const rl = join(h, G, { memberId: l.memberId });
  const rf = join(h, G, { memberId: f.memberId });
  await settle();
  assert.equal(rl.value.generationId, 2);
  assert.equal(rf.value.generationId, 2);
});

// ---- expiry ------------------------------------------------------------------------------------

const RETENTION_MS = 60 * 60_000;
const CHECK_MS = 60_000;

test("offsets expiry: a group without members loses its offsets after offsets.retention.minutes, with tombstones; then the group goes", async () => {
  const h = await harness({ offsetsRetentionMs: RETENTION_MS, offsetsRetentionCheckIntervalMs: CHECK_MS });
  await commit(h, commitReq("simple", -1, "", [["t", 0, 1n], ["t", 1, 2n]]));
  await h.clock.advance(RETENTION_MS / 2);
  await commit(h, commitReq("simple", -1, "", [["t", 1, 3n]]));
  await h.clock.advance(RETENTION_MS / 2); // t-0 is now retention old: the next check removes it
  assert.deepEqual(fetched(h, "simple", null).offsets, { "t-1": 3n });
  const p = h.c.manager.partitionFor("simple");
  const tomb = h.log.records(p).filter((r) => r.value === null).map((r) => decodeOffsetsKey(r.key!));
  assert.deepEqual(tomb.map((k) => k.kind === "offsetCommit" ? `${k.topic}-${k.partition}` : k.kind), ["t-0"]);
  await h.clock.advance(RETENTION_MS / 2 + CHECK_MS);
  assert.equal(h.c.manager.getGroup("simple"), undefined, "no offsets left: the group is deleted");
  const tomb2 = h.log.records(p).filter((r) => r.value === null).map((r) => decodeOffsetsKey(r.key!));
  assert.deepEqual(tomb2.map((k) => k.kind === "offsetCommit" ? `${k.topic}-${k.partition}` : k.kind), ["t-0", "t-1", "groupMetadata"]);
  const c2 = await h.restart();
  assert.equal(c2.manager.getGroup("simple"), undefined);
  noErrors(h);
});

test("offsets expiry: a group with members keeps its offsets however old", async () => {
  const h = await harness({ offsetsRetentionMs: RETENTION_MS, offsetsRetentionCheckIntervalMs: CHECK_MS });
  const g = await stableGroup(h, G, 1, { sessionTimeoutMs: 60_000 });
  const id = g.members[0].memberId;
  await commit(h, commitReq(G, g.generationId, id, [["t", 0, 7n]]));
  for (let t = 0; t < 2 * RETENTION_MS; t += 30_000) {
    await h.clock.advance(30_000);
    assert.equal(hb(h, G, id, g.generationId), 0);
  }
  assert.deepEqual(fetched(h, G, null).offsets, { "t-0": 7n });
});

test("offsets expiry (KIP-211): a consumer group's retention counts from when it became empty, not from its last commit", async () => {
  const h = await harness({ offsetsRetentionMs: RETENTION_MS, offsetsRetentionCheckIntervalMs: CHECK_MS });
  const g = await stableGroup(h, G, 1, { sessionTimeoutMs: 60_000 });
  const id = g.members[0].memberId;
  await commit(h, commitReq(G, g.generationId, id, [["t", 0, 7n]]));
  // The member consumes for two retention periods without new commits (nothing new to commit).
  for (let t = 0; t < 2 * RETENTION_MS; t += 30_000) {
    await h.clock.advance(30_000);
    hb(h, G, id, g.generationId);
  }
  h.c.groups.leave(G, [{ memberId: id, groupInstanceId: null }]);
  await h.clock.advance(CHECK_MS * 2);
  assert.deepEqual(fetched(h, G, null).offsets, { "t-0": 7n }, "just emptied: the offsets are kept for a retention period");
  await h.clock.advance(RETENTION_MS);
  assert.deepEqual(fetched(h, G, null).offsets, {}, "a retention period after it emptied: gone");
});

test("offsets expiry: OffsetCommit v1's timestamp is the commit time (retention counts from it); v2-4's retention time is an expiry", async () => {
  const h = await harness({ offsetsRetentionMs: RETENTION_MS, offsetsRetentionCheckIntervalMs: CHECK_MS });
  const now = BigInt(h.clock.nowMs());
  // v1: committed "earlier" by the client's clock: it is retention old after two checks.
  await commit(h, commitReq(G, -1, "", [["v1", 0, 1n]], { commitTimestampMs: now - BigInt(RETENTION_MS) + 2n * BigInt(CHECK_MS) }));
  // v1 with the current time, as a client would normally send it: kept for the whole retention.
  await commit(h, commitReq(G, -1, "", [["v1now", 0, 4n]], { commitTimestampMs: now }));
  await commit(h, commitReq(G, -1, "", [["v2", 0, 2n]], { retentionTimeMs: 3n * BigInt(CHECK_MS) }));
  await commit(h, commitReq(G, -1, "", [["plain", 0, 3n]]));
  assert.equal(h.c.manager.getGroup(G)!.offsets.get("v1\u00000")!.commitTimestampMs, now - BigInt(RETENTION_MS) + 2n * BigInt(CHECK_MS));
  assert.equal(h.c.manager.getGroup(G)!.offsets.get("v1now\u00000")!.expireTimestampMs, -1n, "no expire timestamp from v1");
  await h.clock.advance(CHECK_MS);
  assert.deepEqual(fetched(h, G, null).offsets, { "v1-0": 1n, "v1now-0": 4n, "v2-0": 2n, "plain-0": 3n });
  await h.clock.advance(CHECK_MS);
  assert.deepEqual(fetched(h, G, null).offsets, { "v1now-0": 4n, "v2-0": 2n, "plain-0": 3n });
  await h.clock.advance(CHECK_MS);
  assert.deepEqual(fetched(h, G, null).offsets, { "v1now-0": 4n, "plain-0": 3n });
  await h.clock.advance(RETENTION_MS - 3 * CHECK_MS);
  assert.deepEqual(fetched(h, G, null).offsets, {});
});
