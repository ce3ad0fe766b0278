// __consumer_offsets as Kafka stores it, checked from outside the coordinator: after a real group
// (two raw members, one static) joins, syncs and commits, the partition files under the log dir
// are parsed with the tests' own batch parser and the keys and values decoded here, by hand, from
// Kafka's documented layouts (not with src/protocol/internal/offsets_records.ts):
//
//   OffsetCommitKey v0/v1   int16 version, string group, string topic, int32 partition
//   GroupMetadataKey v2     int16 version, string group
//   OffsetCommitValue v1    int16 version, int64 offset, string metadata, int64 commitTimestamp,
//                           int64 expireTimestamp
//   OffsetCommitValue v3    int16 version, int64 offset, int32 leaderEpoch, string metadata,
//                           int64 commitTimestamp
//   GroupMetadataValue v3   int16 version, string protocolType, int32 generation, string? protocol,
//                           string? leader, int64 currentStateTimestamp, [members: string memberId,
//                           string? groupInstanceId, string clientId, string clientHost,
//                           int32 rebalanceTimeout, int32 sessionTimeout, bytes subscription,
//                           bytes assignment]
//
// (strings: int16 length, -1 for null; bytes: int32 length; arrays: int32 count). Groups land on
// the partition a JVM computes (Utils.abs(groupId.hashCode) % 50; values printed by OpenJDK 17).
// The topic is compacted (cleanup.policy=compact) and listed as internal in Metadata.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DeleteGroupsApi, DeleteTopicsApi, DescribeConfigsApi, DescribeGroupsApi, FindCoordinatorApi, MetadataApi } from "../../src/protocol/api/mod.ts";
import { startBroker } from "../helpers/broker.ts";
import { assignmentV0, commitOffsets, fetchOffsets, findCoordinator, RawMember, subscriptionV0 } from "../helpers/groups.ts";
import { parseBatches, type ParsedRecord } from "../helpers/record_batch.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";

// java: Utils.abs("x".hashCode()) % 50
const PARTITION_OF = { "my-group": 12, "retained-group": 8, "deleted-group": 49 } as const;

class Dec {
  pos = 0;
  private readonly dv: DataView;
  constructor(private readonly b: Uint8Array) {
    this.dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }
  int16(): number {
    const v = this.dv.getInt16(this.pos);
    this.pos += 2;
    return v;
  }
  int32(): number {
    const v = this.dv.getInt32(this.pos);
    this.pos += 4;
    return v;
  }
  int64(): bigint {
    const v = this.dv.getBigInt64(this.pos);
    this.pos += 8;
    return v;
  }
  str(): string | null {
    const n = this.int16();
    if (n < 0) return null;
    const s = new TextDecoder().decode(this.b.subarray(this.pos, this.pos + n));
    this.pos += n;
    return s;
  }
  bytes(): Uint8Array | null {
    const n = this.int32();
    if (n < 0) return null;
    const v = this.b.slice(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }
  end(what: string): void {
    assert.equal(this.pos, this.b.length, `${what}: every byte decoded`);
  }
}

type Key = { kind: "offset"; version: number; group: string; topic: string; partition: number } | { kind: "group"; version: number; group: string };

function decodeKey(b: Uint8Array): Key {
  const d = new Dec(b);
  const version = d.int16();
  let k: Key;
  if (version === 0 || version === 1) k = { kind: "offset", version, group: d.str()!, topic: d.str()!, partition: d.int32() };
  else if (version === 2) k = { kind: "group", version, group: d.str()! };
  else throw new Error(`key version ${version}`);
  d.end("key");
  return k;
}

function decodeOffsetValue(b: Uint8Array) {
  const d = new Dec(b);
  const version = d.int16();
  let v;
  if (version === 1) v = { version, offset: d.int64(), leaderEpoch: -1, metadata: d.str(), commitTimestamp: d.int64(), expireTimestamp: d.int64() };
  else if (version === 3) v = { version, offset: d.int64(), leaderEpoch: d.int32(), metadata: d.str(), commitTimestamp: d.int64(), expireTimestamp: -1n };
  else throw new Error(`OffsetCommitValue version ${version}`);
  d.end("OffsetCommitValue");
  return v;
}

function decodeGroupValue(b: Uint8Array) {
  const d = new Dec(b);
  const version = d.int16();
  assert.equal(version, 3, "GroupMetadataValue v3, as Kafka 3.8 writes");
  const v = {
    protocolType: d.str(),
    generation: d.int32(),
    protocol: d.str(),
    leader: d.str(),
    currentStateTimestamp: d.int64(),
    members: [] as { memberId: string; groupInstanceId: string | null; clientId: string; clientHost: string; rebalanceTimeout: number; sessionTimeout: number; subscription: Uint8Array; assignment: Uint8Array }[],
  };
  const n = d.int32();
  for (let i = 0; i < n; i++) {
    v.members.push({
      memberId: d.str()!,
      groupInstanceId: d.str(),
      clientId: d.str()!,
      clientHost: d.str()!,
      rebalanceTimeout: d.int32(),
      sessionTimeout: d.int32(),
      subscription: d.bytes()!,
      assignment: d.bytes()!,
    });
  }
  d.end("GroupMetadataValue");
  return v;
}

/** Every record of __consumer_offsets-<partition>, from its segment files on disk. */
function partitionRecords(logDir: string, partition: number): ParsedRecord[] {
  const dir = join(logDir, `__consumer_offsets-${partition}`);
  assert.ok(existsSync(dir), `${dir} exists`);
  const segments = readdirSync(dir).filter((f) => f.endsWith(".log")).sort();
  const out: ParsedRecord[] = [];
  for (const s of segments) {
    const batches = parseBatches(new Uint8Array(readFileSync(join(dir, s))));
    for (const b of batches) {
      assert.equal(b.magic, 2);
      assert.ok(b.crcValid, `${s}: batch at ${b.baseOffset} has a valid CRC32C`);
      out.push(...b.records);
    }
  }
  return out;
}

test("__consumer_offsets records decode with Kafka's formats, on the partition Kafka would choose; tombstones for a deleted group", async () => {
  const b = await startBroker({ "group.initial.rebalance.delay.ms": "300" });
  const admin = await WireClient.connect(b.port);
  const members: RawMember[] = [];
  try {
    assert.equal((await createTopic(admin, "t", { numPartitions: 3 })).errorCode, 0);
    await findCoordinator(admin, "my-group");
    const t0 = BigInt(Date.now());
    const sub = subscriptionV0(["t"]);
    members.push(await RawMember.connect(b.port, "my-group", { instanceId: "static-1", protocols: [{ name: "range", metadata: sub }] }));
    members.push(await RawMember.connect(b.port, "my-group", { protocols: [{ name: "range", metadata: sub }], sessionTimeoutMs: 12_000, rebalanceTimeoutMs: 25_000 }));
    await Promise.all(members.map((m) => m.join()));
    const leader = members.find((m) => m.isLeader)!;
    const follower = members.find((m) => !m.isLeader)!;
    const plan = new Map([[leader.memberId, assignmentV0({ t: [0, 1] })], [follower.memberId, assignmentV0({ t: [2] })]]);
    const [ls, fs] = await Promise.all([leader.sync([...plan].map(([memberId, assignment]) => ({ memberId, assignment }))), follower.sync()]);
    assert.deepEqual([ls, fs], [0, 0]);
    assert.deepEqual(await members[0].commit({ t: { 0: 42n } }, {}), [0]);
    assert.deepEqual(await commitOffsets(admin, "my-group", { t: { 1: 7n } }, {
      generationId: members[1].generationId,
      memberId: members[1].memberId,
      metadata: "hello",
      leaderEpoch: 5,
    }), [0]);
    // OffsetCommit v2 with a retention time: Kafka writes OffsetCommitValue v1 (with the expire timestamp).
    assert.deepEqual(await commitOffsets(admin, "retained-group", { t: { 2: 99n } }, { version: 2, retentionTimeMs: 3_600_000n }), [0]);
    assert.deepEqual(await commitOffsets(admin, "deleted-group", { t: { 0: 1n, 1: 2n } }), [0, 0]);
    const del = await admin.request(DeleteGroupsApi, 2, { groupsNames: ["deleted-group"] });
    assert.deepEqual(del.results, [{ groupId: "deleted-group", errorCode: 0 }]);
    const t1 = BigInt(Date.now());

    // my-group: the group record and two offsets, all on partition 12.
    const recs = partitionRecords(b.logDir, PARTITION_OF["my-group"]);
    const decoded = recs.map((r) => ({ key: decodeKey(r.key!), value: r.value }));
    assert.ok(decoded.every((r) => r.key.group === "my-group"), "only my-group's records on its partition");
    const offsets = decoded.filter((r) => r.key.kind === "offset");
    assert.deepEqual(offsets.map((r) => r.key), [
      { kind: "offset", version: 1, group: "my-group", topic: "t", partition: 0 },
      { kind: "offset", version: 1, group: "my-group", topic: "t", partition: 1 },
    ]);
    const v0 = decodeOffsetValue(offsets[0].value!);
    const v1 = decodeOffsetValue(offsets[1].value!);
    assert.deepEqual({ ...v0, commitTimestamp: 0n }, { version: 3, offset: 42n, leaderEpoch: -1, metadata: "", commitTimestamp: 0n, expireTimestamp: -1n });
    assert.deepEqual({ ...v1, commitTimestamp: 0n }, { version: 3, offset: 7n, leaderEpoch: 5, metadata: "hello", commitTimestamp: 0n, expireTimestamp: -1n });
    for (const v of [v0, v1]) assert.ok(v.commitTimestamp >= t0 && v.commitTimestamp <= t1, `commit timestamp ${v.commitTimestamp} in [${t0}, ${t1}]`);

    const groupRecs = decoded.filter((r) => r.key.kind === "group");
    assert.ok(groupRecs.length >= 1);
    assert.deepEqual(groupRecs[0].key, { kind: "group", version: 2, group: "my-group" });
    const g = decodeGroupValue(groupRecs.at(-1)!.value!);
    assert.equal(g.protocolType, "consumer");
    assert.equal(g.generation, leader.generationId);
    assert.equal(g.protocol, "range");
    assert.equal(g.leader, leader.memberId);
    assert.ok(g.currentStateTimestamp >= t0 && g.currentStateTimestamp <= t1);
    const byId = new Map(g.members.map((m) => [m.memberId, m]));
    assert.deepEqual([...byId.keys()].sort(), members.map((m) => m.memberId).sort());
    const s1 = byId.get(members[0].memberId)!;
    const d2 = byId.get(members[1].memberId)!;
    assert.equal(s1.groupInstanceId, "static-1");
    assert.equal(d2.groupInstanceId, null);
    assert.equal(s1.clientId, "wire-test");
    assert.equal(s1.clientHost, "/127.0.0.1");
    assert.deepEqual([s1.sessionTimeout, s1.rebalanceTimeout], [10_000, 30_000]);
    assert.deepEqual([d2.sessionTimeout, d2.rebalanceTimeout], [12_000, 25_000]);
    for (const m of [s1, d2]) {
      assert.deepEqual(m.subscription, sub);
      assert.deepEqual(m.assignment, plan.get(m.memberId));
    }

    // retained-group: OffsetCommitValue v1 with expireTimestamp = commit time + retention.
    const retained = partitionRecords(b.logDir, PARTITION_OF["retained-group"]).map((r) => ({ key: decodeKey(r.key!), value: r.value }));
    assert.deepEqual(retained.map((r) => r.key), [{ kind: "offset", version: 1, group: "retained-group", topic: "t", partition: 2 }]);
    const rv = decodeOffsetValue(retained[0].value!);
    assert.equal(rv.version, 1);
    assert.equal(rv.offset, 99n);
    assert.equal(rv.expireTimestamp - rv.commitTimestamp, 3_600_000n);

    // deleted-group: two commits, then a tombstone (null value) for each offset and for the group.
    const deleted = partitionRecords(b.logDir, PARTITION_OF["deleted-group"]).map((r) => ({ key: decodeKey(r.key!), value: r.value }));
    const live = deleted.filter((r) => r.value !== null);
    const tombstones = deleted.filter((r) => r.value === null);
    assert.deepEqual(live.map((r) => r.key.kind === "offset" && r.key.partition), [0, 1]);
    assert.deepEqual(
      tombstones.map((r) => r.key.kind === "offset" ? `offset t-${r.key.partition}` : "group").sort(),
      ["group", "offset t-0", "offset t-1"],
    );
    assert.ok(deleted.indexOf(tombstones[0]) > deleted.indexOf(live[1]), "tombstones come after the records they delete");

    // The topic: compacted, 50 partitions, internal in Metadata; "t" is not internal.
    const cfg = await admin.request(DescribeConfigsApi, 1, {
      resources: [{ resourceType: 2, resourceName: "__consumer_offsets", configurationKeys: ["cleanup.policy", "compression.type"] }],
      includeSynonyms: false,
    });
    const res = (cfg.results as { errorCode: number; configs: { name: string; value: string }[] }[])[0];
    assert.equal(res.errorCode, 0);
    assert.equal(res.configs.find((c) => c.name === "cleanup.policy")?.value, "compact");
    const md = await admin.request(MetadataApi, 9, { topics: [{ name: "__consumer_offsets" }, { name: "t" }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    const topics = md.topics as { name: string; isInternal: boolean; errorCode: number; partitions: unknown[] }[];
    const co = topics.find((t) => t.name === "__consumer_offsets")!;
    assert.equal(co.errorCode, 0);
    assert.equal(co.isInternal, true);
    assert.equal(co.partitions.length, 50);
    assert.equal(topics.find((t) => t.name === "t")!.isInternal, false);
    // FindCoordinator v4 (batched) names this broker for every group.
    const fc = await admin.request(FindCoordinatorApi, 4, { keyType: 0, coordinatorKeys: Object.keys(PARTITION_OF) });
    assert.deepEqual((fc.coordinators as { key: string; nodeId: number; errorCode: number }[]).map((c) => [c.key, c.nodeId, c.errorCode]), Object.keys(PARTITION_OF).map((k) => [k, 0, 0]));
  } finally {
    for (const m of members) m.close();
    admin.close();
    await b.stop();
  }
});

// java: Utils.abs("x".hashCode()) % 5
const PARTITION_OF_5 = { g: 3, solo: 0, left: 2 } as const;

test("deleting a topic deletes the groups' committed offsets for it, with tombstones (Kafka's cleanupGroupMetadata)", async () => {
  const b = await startBroker({ "group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "5" });
  let c = await WireClient.connect(b.port);
  let member: RawMember | null = null;
  try {
    assert.equal((await createTopic(c, "doomed", { numPartitions: 2 })).errorCode, 0);
    assert.equal((await createTopic(c, "kept", { numPartitions: 1 })).errorCode, 0);
    await findCoordinator(c, "g");
    // g: simple commits on both topics. solo: simple commits on the doomed topic only.
    assert.deepEqual(await commitOffsets(c, "g", { doomed: { 0: 5n, 1: 6n }, kept: { 0: 7n } }), [0, 0, 0]);
    assert.deepEqual(await commitOffsets(c, "solo", { doomed: { 1: 1n } }), [0]);
    // left: a real group (generation 1) that commits on the doomed topic, then its member leaves.
    member = await RawMember.connect(b.port, "left", { protocols: [{ name: "range", metadata: subscriptionV0(["doomed"]) }] });
    assert.equal((await member.join()).errorCode, 0);
    assert.equal(await member.syncAsLeader((ids) => ({ [ids[0]]: assignmentV0({ doomed: [0, 1] }) })), 0);
    assert.deepEqual(await member.commit({ doomed: { 0: 3n } }), [0]);
    assert.equal(await member.leave(), 0);

    const d = await c.request(DeleteTopicsApi, 4, { topicNames: ["doomed"], timeoutMs: 10_000 });
    assert.equal((d.responses as { errorCode: number }[])[0].errorCode, 0);
    const deadline = Date.now() + 5_000;
    let f = await fetchOffsets(c, "g", null);
    while (Object.keys(f.offsets).length !== 1 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      f = await fetchOffsets(c, "g", null);
    }
    assert.deepEqual(f.offsets, { "kept-0": 7n });
    // Groups left Empty with no offsets are gone (DescribeGroups calls them Dead).
    assert.deepEqual((await fetchOffsets(c, "solo", null)).offsets, {});
    assert.deepEqual((await fetchOffsets(c, "left", null)).offsets, {});
    const dg = await c.request(DescribeGroupsApi, 5, { groups: ["g", "solo", "left"], includeAuthorizedOperations: false });
    assert.deepEqual((dg.groups as { groupState: string }[]).map((x) => x.groupState), ["Empty", "Dead", "Dead"]);

    // On disk: a tombstone per deleted offset, after the commit it deletes; the group record of
    // "left" (generation 1) gets one too; "solo" never had a group record, so it gets none.
    const onDisk = (group: keyof typeof PARTITION_OF_5) =>
      partitionRecords(b.logDir, PARTITION_OF_5[group])
        .map((r) => ({ key: decodeKey(r.key!), tombstone: r.value === null }))
        .filter((r) => r.key.group === group)
        .map((r) => `${r.tombstone ? "tombstone" : "record"} ${r.key.kind === "offset" ? `${r.key.topic}-${r.key.partition}` : "group"}`);
    assert.deepEqual(onDisk("g"), ["record doomed-0", "record doomed-1", "record kept-0", "tombstone doomed-0", "tombstone doomed-1"]);
    assert.deepEqual(onDisk("solo"), ["record doomed-1", "tombstone doomed-1"]);
    const left = onDisk("left");
    assert.deepEqual(left.slice(-2), ["tombstone doomed-0", "tombstone group"], left.join(", "));

    // A topic re-created under the same name starts afresh, and the tombstones hold over a restart.
    assert.equal((await createTopic(c, "doomed", { numPartitions: 2 })).errorCode, 0);
    assert.deepEqual((await fetchOffsets(c, "g", { doomed: [0, 1] })).offsets, { "doomed-0": -1n, "doomed-1": -1n });
    member.close();
    member = null;
    c.close();
    await b.restart();
    c = await WireClient.connect(b.port);
    await findCoordinator(c, "g");
    const loaded = async (group: string) => { // COORDINATOR_LOAD_IN_PROGRESS while the partition loads
      const until = Date.now() + 10_000;
      let r = await fetchOffsets(c, group, null);
      while (r.errorCode !== 0 && Date.now() < until) {
        await new Promise((res) => setTimeout(res, 50));
        r = await fetchOffsets(c, group, null);
      }
      return r;
    };
    assert.deepEqual(await loaded("g"), { errorCode: 0, offsets: { "kept-0": 7n } });
    assert.deepEqual(await loaded("left"), { errorCode: 0, offsets: {} });
  } finally {
    member?.close();
    c.close();
    await b.stop();
  }
});
