// A partition's record set in a Produce request is one record batch v2, as Kafka requires
// (ProduceRequest.validateRecords in v3+, LogValidator's "Compressed outer record has more than one
// batch" for magic 2 in any version): a set of several batches is INVALID_RECORD for that partition
// before anything touches the log (no producer state, no transactional verification), and the other
// partitions of the request are appended. One transactional id is one producer: transactional
// batches of two producers in one request are INVALID_PRODUCER_ID_MAPPING everywhere (Kafka's
// ReplicaManager). Crafted bytes over a real socket.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ProduceApi } from "../../src/protocol/api/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker } from "../helpers/broker.ts";
import { buildBatch, buildMagic1Message, concatBytes, valueRecords } from "../helpers/record_batch.ts";
import { addPartitions, fetchIsolated, findTxnCoordinator, initTxn, partitionCodes, txnBatch, valuesOf } from "../helpers/txn.ts";
import { createTopic, fetchOnce, type ProducePartitionResponse, WireClient } from "../helpers/wire.ts";

/** One Produce request with a record set per partition of `topic`; the answers by partition. */
async function produceSets(c: WireClient, version: number, topic: string, sets: Uint8Array[], transactionalId: string | null = null): Promise<ProducePartitionResponse[]> {
  const res = await c.request(ProduceApi, version, {
    transactionalId,
    acks: -1,
    timeoutMs: 10_000,
    topicData: [{ name: topic, partitionData: sets.map((records, index) => ({ index, records })) }],
  });
  const answers = (res.responses as { partitionResponses: ProducePartitionResponse[] }[])[0].partitionResponses;
  return answers.sort((a, b) => a.index - b.index);
}

test("Produce: several batches in one partition's record set are INVALID_RECORD (v3+ and v0-2, plain, idempotent, transactional), nothing appended; the request's other partitions are appended", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "t", { numPartitions: 2 })).errorCode, 0);
    const end = (p: number) => b.broker.services.replicaManager.getPartition("t", p)!.log.logEndOffset;
    const two = concatBytes(buildBatch(valueRecords(2, "a")), buildBatch(valueRecords(1, "b")));
    for (const version of [2, 3, 7, 9]) {
      const [p0, p1] = await produceSets(c, version, "t", [two, buildBatch(valueRecords(1, `ok${version}-`))]);
      assert.equal(p0.errorCode, ErrorCode.INVALID_RECORD, `v${version}: two batches`);
      assert.equal(p0.baseOffset, -1n);
      assert.equal(p1.errorCode, ErrorCode.NONE, `v${version}: the other partition`);
    }
    assert.equal(end(0), 0, "nothing of a two-batch set appended");
    assert.equal(end(1), 4, "the other partition took each request's batch");

    // An idempotent producer's two batches with consecutive sequences: refused before the producer state sees them.
    const pid = 4242n;
    const idem = (seq: number, n: number, prefix: string) => buildBatch(valueRecords(n, prefix), { producerId: pid, producerEpoch: 0, baseSequence: seq });
    assert.equal((await produceSets(c, 9, "t", [concatBytes(idem(0, 2, "i"), idem(2, 2, "j"))]))[0].errorCode, ErrorCode.INVALID_RECORD);
    assert.equal(end(0), 0);
    // The same producer then starts at sequence 0 as if nothing had happened (no state was written).
    assert.equal((await produceSets(c, 9, "t", [idem(0, 2, "i")]))[0].errorCode, ErrorCode.NONE);
    assert.equal((await produceSets(c, 9, "t", [idem(2, 2, "j")]))[0].errorCode, ErrorCode.NONE);

    // Produce v3+ carries record batches v2 only: a magic 1 message is INVALID_RECORD, as Kafka answers.
    assert.equal((await produceSets(c, 3, "t", [buildMagic1Message("legacy")]))[0].errorCode, ErrorCode.INVALID_RECORD);
    // A whole batch followed by bytes too short to be one is left to the validator (CORRUPT_MESSAGE), as before.
    assert.equal((await produceSets(c, 9, "t", [concatBytes(buildBatch(valueRecords(1, "x")), new Uint8Array(10))]))[0].errorCode, ErrorCode.CORRUPT_MESSAGE);

    const f = await fetchOnce(c, "t", 0, 0n);
    assert.deepEqual(valuesOf(f.records), ["i0", "i1", "j0", "j1"]);
  } finally {
    c.close();
    await b.stop();
  }
});

test("transactional Produce: two producers' batches in one partition are INVALID_RECORD, in two partitions of one request INVALID_PRODUCER_ID_MAPPING everywhere; nothing appended; one producer's batches then pass", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "t", { numPartitions: 2 })).errorCode, 0);
    assert.equal((await findTxnCoordinator(c, "tx")).errorCode, 0);
    const p = await initTxn(c, "tx");
    assert.equal(p.errorCode, 0);
    assert.deepEqual(partitionCodes(await addPartitions(c, "tx", p, [{ name: "t", partitions: [0, 1] }])), { "t-0": 0, "t-1": 0 });
    const end = (i: number) => b.broker.services.replicaManager.getPartition("t", i)!.log.logEndOffset;
    const other = p.producerId + 1000n;

    // The producer's own batch first, a stranger's after it, in one record set: the verification
    // would have asked about the first producer only, and the producer state seen two.
    const mixed = concatBytes(txnBatch(p.producerId, p.producerEpoch, 0, 2, "a"), txnBatch(other, 0, 0, 2, "z"));
    const [m0] = await produceSets(c, 9, "t", [mixed], "tx");
    assert.equal(m0.errorCode, ErrorCode.INVALID_RECORD);
    // The same producer's two batches in one set: refused too.
    const own = concatBytes(txnBatch(p.producerId, p.producerEpoch, 0, 2, "a"), txnBatch(p.producerId, p.producerEpoch, 2, 2, "b"));
    assert.equal((await produceSets(c, 9, "t", [own], "tx"))[0].errorCode, ErrorCode.INVALID_RECORD);
    // Two producers across two partitions of one request.
    const split = await produceSets(c, 9, "t", [txnBatch(p.producerId, p.producerEpoch, 0, 2, "a"), txnBatch(other, 0, 0, 2, "z")], "tx");
    assert.deepEqual(split.map((r) => r.errorCode), [ErrorCode.INVALID_PRODUCER_ID_MAPPING, ErrorCode.INVALID_PRODUCER_ID_MAPPING]);
    assert.equal(end(0) + end(1), 0, "nothing appended");

    const good = await produceSets(c, 9, "t", [txnBatch(p.producerId, p.producerEpoch, 0, 2, "a"), txnBatch(p.producerId, p.producerEpoch, 0, 1, "c")], "tx");
    assert.deepEqual(good.map((r) => r.errorCode), [0, 0]);
    assert.deepEqual(valuesOf((await fetchIsolated(c, "t", 0n, 0)).records), ["a0", "a1"]);
  } finally {
    c.close();
    await b.stop();
  }
});
