// Transactional offset commits in the group coordinator (Kafka 3.8's pendingTransactionalOffsetCommits):
// held invisible until the transaction's marker, UNSTABLE_OFFSET_COMMIT for require_stable
// fetches meanwhile, visible at a commit marker (over older commits only), dropped at an abort;
// fenced as KIP-447 fences (member, generation, instance id); the batch is transactional with the
// producer's id and epoch; a reload replays the same rules from the log, holding the offsets of
// transactions still open until their marker.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Coordinator } from "../../src/coordinator/mod.ts";
import { BatchField, batchInfo, RecordBatchBuilder } from "../../src/protocol/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { harness, type Harness, joinRequest, settle } from "./harness.ts";

const G = "ctp";

function txnCommit(h: Harness, producerId: bigint, offsets: [string, number, bigint][], member: { generationId?: number; memberId?: string; groupInstanceId?: string | null } = {}) {
  return h.c.txnOffsets.commit({
    transactionalId: "tx",
    groupId: G,
    producerId,
    producerEpoch: 3,
    generationId: member.generationId ?? -1,
    memberId: member.memberId ?? "",
    groupInstanceId: member.groupInstanceId ?? null,
    offsets: offsets.map(([topic, partition, offset]) => ({ topic, partition, offset, leaderEpoch: -1, metadata: null })),
  });
}

/** A transaction marker (control batch) in the group's partition. */
async function appendMarker(h: Harness, producerId: bigint, committed: boolean): Promise<void> {
  const b = new RecordBatchBuilder();
  b.append(0n, new Uint8Array([0, 0, 0, committed ? 1 : 0]), new Uint8Array([0, 0, 0, 0, 0, 5]));
  assert.equal(await h.log.append(h.c.manager.partitionFor(G), b.build(0, { attributeFlags: 0x30, producerId, producerEpoch: 3, baseSequence: -1 })), 0);
}

/** The leader writing a transaction marker to the group's partition, then telling the coordinator (as WriteTxnMarkers does). */
async function marker(h: Harness, producerId: bigint, committed: boolean): Promise<void> {
  await appendMarker(h, producerId, committed);
  h.c.onTxnMarker(h.c.manager.partitionFor(G), producerId, committed);
}

const visible = (h: Harness, requireStable = false) =>
  h.c.offsets.fetch(G, [{ topic: "in", partitions: [0, 1] }], requireStable).partitions.map((p) => [p.partition, p.offset, p.errorCode]);

test("TxnOffsetCommit: held until the commit marker, UNSTABLE_OFFSET_COMMIT for require_stable meanwhile; an abort drops them; the batch is transactional", async () => {
  const h = await harness();
  assert.deepEqual((await txnCommit(h, 7n, [["in", 0, 10n], ["in", 1, 20n]])).map((r) => r.errorCode), [0, 0]);
  assert.deepEqual(visible(h), [[0, -1n, 0], [1, -1n, 0]], "not visible before the marker");
  assert.deepEqual(visible(h, true), [[0, -1n, ErrorCode.UNSTABLE_OFFSET_COMMIT], [1, -1n, ErrorCode.UNSTABLE_OFFSET_COMMIT]]);
  const p = h.c.manager.partitionFor(G);
  const stored = h.log.read(p, 0, 1 << 20)!.records;
  const info = batchInfo(stored, 0);
  assert.equal(info.lastOffset + 1, h.log.read(p, 0, 1 << 20)!.logEndOffset, "one batch");
  assert.equal(info.producerId, 7n);
  assert.equal(new DataView(stored.buffer, stored.byteOffset).getInt16(BatchField.producerEpoch), 3, "the producer's epoch");
  assert.equal(info.attributes & 0x30, 0x10, "transactional, not control");
  await marker(h, 7n, true);
  assert.deepEqual(visible(h, true), [[0, 10n, 0], [1, 20n, 0]], "visible at the commit marker");

  assert.deepEqual((await txnCommit(h, 7n, [["in", 0, 15n]])).map((r) => r.errorCode), [0]);
  await marker(h, 7n, false);
  assert.deepEqual(visible(h, true), [[0, 10n, 0], [1, 20n, 0]], "an abort drops the transaction's offsets");
  assert.equal(h.c.manager.getGroup(G)!.pendingTxnOffsets.size, 0);
  assert.equal(h.c.manager.openGroupsForProducer.size, 0);
});

test("a commit marker does not put back an older offset over a newer plain commit; a plain commit does not hide a newer transactional one", async () => {
  const h = await harness();
  await txnCommit(h, 7n, [["in", 0, 10n], ["in", 1, 11n]]);
  // A plain (simple) commit after the transactional batch in the log.
  const plain = await h.c.offsets.commit({ groupId: G, generationId: -1, memberId: "", groupInstanceId: null, commitTimestampMs: -1n, retentionTimeMs: -1n, offsets: [{ topic: "in", partition: 0, offset: 50n, leaderEpoch: -1, metadata: null }] });
  assert.deepEqual(plain.map((r) => r.errorCode), [0]);
  await marker(h, 7n, true);
  assert.deepEqual(visible(h), [[0, 50n, 0], [1, 11n, 0]], "partition 0 keeps the newer plain commit");
  // The same after a reload: the log order decides.
  const c2 = await h.restart();
  assert.deepEqual(c2.offsets.fetch(G, [{ topic: "in", partitions: [0, 1] }]).partitions.map((p) => p.offset), [50n, 11n]);
});

test("TxnOffsetCommit fencing (KIP-447): unknown member, stale generation, fenced instance id; a commit without a member creates the group", async () => {
  const h = await harness();
  assert.deepEqual((await txnCommit(h, 1n, [["in", 0, 1n]])).map((r) => r.errorCode), [0], "no member: taken as is");
  assert.equal(h.c.manager.getGroup(G)!.state, "Empty");
  await marker(h, 1n, true);
  const joined = h.c.groups.join(joinRequest(G, { instanceId: "i0" }));
  await h.clock.advance(4000);
  const j = await joined;
  assert.equal(j.errorCode, 0);
  assert.deepEqual((await txnCommit(h, 2n, [["in", 0, 2n]], { generationId: j.generationId, memberId: "nobody" })).map((r) => r.errorCode), [ErrorCode.UNKNOWN_MEMBER_ID]);
  assert.deepEqual((await txnCommit(h, 2n, [["in", 0, 2n]], { generationId: j.generationId + 5, memberId: j.memberId })).map((r) => r.errorCode), [ErrorCode.ILLEGAL_GENERATION]);
  assert.deepEqual((await txnCommit(h, 2n, [["in", 0, 2n]], { generationId: j.generationId, memberId: "other", groupInstanceId: "i0" })).map((r) => r.errorCode), [ErrorCode.FENCED_INSTANCE_ID]);
  assert.deepEqual((await txnCommit(h, 2n, [["in", 0, 2n]], { generationId: j.generationId, memberId: j.memberId, groupInstanceId: "i0" })).map((r) => r.errorCode), [0]);
  assert.equal(h.c.manager.getGroup(G)!.pendingTxnOffsets.get(2n)?.size, 1);
});

test("a failed append drops the held offsets (nothing waits for a marker that cannot come)", async () => {
  const h = await harness();
  h.log.failWith = ErrorCode.NOT_LEADER_OR_FOLLOWER;
  assert.deepEqual((await txnCommit(h, 7n, [["in", 0, 10n]])).map((r) => r.errorCode), [ErrorCode.NOT_COORDINATOR]);
  assert.equal(h.c.manager.getGroup(G)!.pendingTxnOffsets.size, 0);
});

test("reload: committed transactions' offsets come back, aborted ones do not, open ones wait for their marker", async () => {
  const h = await harness();
  await txnCommit(h, 1n, [["in", 0, 100n]]);
  await marker(h, 1n, true);
  await txnCommit(h, 2n, [["in", 0, 200n]]);
  await marker(h, 2n, false);
  await txnCommit(h, 3n, [["in", 1, 300n]]);
  const c2 = await h.restart();
  const fetch = () => c2.offsets.fetch(G, [{ topic: "in", partitions: [0, 1] }], true).partitions.map((p) => [p.partition, p.offset, p.errorCode]);
  assert.deepEqual(fetch(), [[0, 100n, 0], [1, -1n, ErrorCode.UNSTABLE_OFFSET_COMMIT]]);
  const p = c2.manager.partitionFor(G);
  const b = new RecordBatchBuilder();
  b.append(0n, new Uint8Array([0, 0, 0, 1]), new Uint8Array([0, 0, 0, 0, 0, 5]));
  await h.log.append(p, b.build(0, { attributeFlags: 0x30, producerId: 3n, producerEpoch: 3, baseSequence: -1 }));
  c2.onTxnMarker(p, 3n, true);
  await settle();
  assert.deepEqual(fetch(), [[0, 100n, 0], [1, 300n, 0]], "the open transaction's offset, visible at its marker after the reload");
  const c3 = await h.restart();
  assert.deepEqual(c3.offsets.fetch(G, [{ topic: "in", partitions: [0, 1] }]).partitions.map((x) => x.offset), [100n, 300n]);
  assert.deepEqual(h.logger.errors, []);
});

// The consume-transform-produce copier's abort around a coordinator move (issue 15's cluster
// test): offset 100 committed, a transaction holding 200 aborted while the group's partition moves
// to another broker. Whenever the abort marker lands (and the new leader is told of it) relative
// to the new leader's load, the group must end at 100, stable: an aborted offset shown would make
// a rewinding consumer skip the aborted transaction's input, one left unstable would hang it.
for (const when of ["before the load", "before the load (told during it)", "during the load", "after the load"]) {
  test(`the group's partition moves to a new leader mid-transaction, the abort marker lands ${when} there: the last committed offset, stable`, async () => {
    const h = await harness();
    const p = h.c.manager.partitionFor(G);
    await txnCommit(h, 7n, [["in", 0, 100n]]);
    await marker(h, 7n, true);
    await txnCommit(h, 7n, [["in", 0, 200n]]);
    assert.deepEqual(visible(h, true)[0], [0, -1n, ErrorCode.UNSTABLE_OFFSET_COMMIT]);
    h.c.onResignation(p);
    const old = h.c;
    h.c = new Coordinator(h.log, h.config, h.clock, h.logger, () => "id");
    const told = () => h.c.onTxnMarker(p, 7n, false);
    if (when === "before the load") await marker(h, 7n, false);
    if (when === "before the load (told during it)") await appendMarker(h, 7n, false);
    const loading = h.c.onElection(p);
    assert.equal(h.c.offsets.fetch(G, null, true).errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
    if (when === "before the load (told during it)") told();
    if (when === "during the load") await marker(h, 7n, false);
    await h.clock.advance(0);
    await loading;
    if (when === "after the load") await marker(h, 7n, false);
    await settle();
    assert.deepEqual(visible(h, true), [[0, 100n, 0], [1, -1n, 0]]);
    assert.deepEqual(visible(h), [[0, 100n, 0], [1, -1n, 0]]);
    assert.equal(h.c.manager.getGroup(G)!.pendingTxnOffsets.size, 0);
    assert.equal(old.offsets.fetch(G, null).errorCode, ErrorCode.NOT_COORDINATOR, "the old leader answers no more");
    assert.deepEqual(h.logger.errors, []);
  });
}

test("leadership lost and regained while the group's partition loads: the abandoned load installs nothing, the last one installs the groups", async () => {
  const h = await harness();
  const p = h.c.manager.partitionFor(G);
  await txnCommit(h, 7n, [["in", 0, 100n]]);
  await marker(h, 7n, true);
  h.c.onResignation(p);
  const first = h.c.onElection(p);
  h.c.onResignation(p);
  const second = h.c.onElection(p);
  // Each load reads its chunk, then waits for the clock: the first's wait ends first.
  await h.clock.advance(0);
  await first;
  await settle();
  await h.clock.advance(0);
  await second;
  await settle();
  const loads = h.logger.lines.filter((l) => l.startsWith("loaded __consumer_offsets partition") && l.includes(`"partition":${p},`));
  assert.equal(loads.length, 2, `the harness's first load and the second of the two racing: ${loads.join(" | ")}`);
  assert.deepEqual(visible(h, true), [[0, 100n, 0], [1, -1n, 0]]);
  assert.deepEqual(h.logger.errors, []);
});
