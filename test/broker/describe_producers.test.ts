// DescribeProducers (61) over real sockets: the producers a partition's replica holds state for
// (id, epoch, last sequence, last timestamp, no transaction), after idempotent batches, a
// duplicate retry (no new state) and a new epoch; per-partition errors as Kafka's
// (UNKNOWN_TOPIC_OR_PARTITION for a missing topic or partition); a restart keeps the state (the
// snapshot written at clean shutdown); READ on the topic, else TOPIC_AUTHORIZATION_FAILED.
import assert from "node:assert/strict";
import { test } from "node:test";
import { AclOperation as Op, ResourceType as Res } from "../../src/authorizer/mod.ts";
import { DescribeProducersApi } from "../../src/protocol/api/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { grant, revokeAll, saslAclBroker } from "../helpers/acls.ts";
import { startBroker } from "../helpers/broker.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { saslLogin } from "../helpers/sasl.ts";
import { createTopic, produce, WireClient } from "../helpers/wire.ts";

interface Partition {
  partitionIndex: number;
  errorCode: number;
  errorMessage: string | null;
  activeProducers: { producerId: bigint; producerEpoch: number; lastSequence: number; lastTimestamp: bigint; coordinatorEpoch: number; currentTxnStartOffset: bigint }[];
}

async function describe(c: WireClient, topics: { name: string; partitionIndexes: number[] }[]): Promise<Partition[][]> {
  const r = await c.request(DescribeProducersApi, 0, { topics });
  return (r.topics as { name: string; partitions: Partition[] }[]).map((t) => t.partitions);
}

// Recent: a producer whose last timestamp is older than producer.id.expiration.ms (a day) is not loaded back.
const ts = BigInt(Date.now());
const batch = (producerId: bigint, producerEpoch: number, baseSequence: number, n: number, at = ts) =>
  buildBatch(valueRecords(n), { producerId, producerEpoch, baseSequence, baseTimestamp: at });

test("DescribeProducers: each producer's epoch, last sequence and timestamp; duplicates add nothing; errors per partition; kept across a restart", async () => {
  const b = await startBroker();
  let c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "dp", { numPartitions: 2 })).errorCode, 0);
    assert.deepEqual((await describe(c, [{ name: "dp", partitionIndexes: [0] }]))[0][0].activeProducers, [], "no producer yet");
    assert.equal((await produce(c, "dp", 0, batch(7n, 0, 0, 3))).errorCode, 0);
    assert.equal((await produce(c, "dp", 0, batch(7n, 0, 3, 2, ts + 5n))).errorCode, 0);
    const dup = await produce(c, "dp", 0, batch(7n, 0, 3, 2, ts + 5n));
    assert.deepEqual([dup.errorCode, dup.baseOffset], [0, 3n], "the retry answered with the original offset");
    assert.equal((await produce(c, "dp", 0, batch(9n, 4, 0, 1))).errorCode, 0);
    assert.equal((await produce(c, "dp", 0, batch(9n, 5, 0, 4))).errorCode, 0, "a new epoch from sequence 0");
    assert.equal((await produce(c, "dp", 1, buildBatch(valueRecords(2)))).errorCode, 0, "no producer id: no state");
    const check = async (what: string) => {
      const [dp, missing] = await describe(c, [{ name: "dp", partitionIndexes: [0, 1, 7] }, { name: "nope", partitionIndexes: [0] }]);
      const p0 = dp[0];
      assert.deepEqual([p0.partitionIndex, p0.errorCode, p0.errorMessage], [0, 0, null], what);
      assert.deepEqual(
        [...p0.activeProducers].sort((x, y) => Number(x.producerId - y.producerId)),
        [
          { producerId: 7n, producerEpoch: 0, lastSequence: 4, lastTimestamp: ts + 5n, coordinatorEpoch: -1, currentTxnStartOffset: -1n },
          { producerId: 9n, producerEpoch: 5, lastSequence: 3, lastTimestamp: ts, coordinatorEpoch: -1, currentTxnStartOffset: -1n },
        ],
        what,
      );
      assert.deepEqual([dp[1].errorCode, dp[1].activeProducers], [0, []], `${what}: partition 1 has none`);
      assert.equal(dp[2].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `${what}: no partition 7`);
      assert.deepEqual(missing.map((p) => [p.partitionIndex, p.errorCode]), [[0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]], `${what}: no topic`);
    };
    await check("before the restart");
    c.close();
    await b.restart();
    c = await WireClient.connect(b.port);
    for (let i = 0; i < 100 && (await describe(c, [{ name: "dp", partitionIndexes: [0] }]))[0][0].errorCode !== 0; i++) await new Promise((r) => setTimeout(r, 50));
    await check("after a clean restart");
  } finally {
    c.close();
    await b.stop();
  }
});

test("DescribeProducers with ACLs: READ on the topic, else TOPIC_AUTHORIZATION_FAILED (before UNKNOWN_TOPIC_OR_PARTITION)", async () => {
  const b = await startBroker(saslAclBroker);
  const admin = await WireClient.connect(b.port);
  const alice = await WireClient.connect(b.port);
  try {
    assert.equal((await saslLogin(admin, "PLAIN", "admin", "admin-secret")).errorCode, 0);
    assert.equal((await saslLogin(alice, "PLAIN", "alice", "alice-secret")).errorCode, 0);
    assert.equal((await createTopic(admin, "dpa")).errorCode, 0);
    assert.equal((await produce(admin, "dpa", 0, batch(11n, 0, 0, 1))).errorCode, 0);
    await revokeAll(b);
    const asAlice = () => describe(alice, [{ name: "dpa", partitionIndexes: [0] }, { name: "absent", partitionIndexes: [0] }]);
    let [dpa, absent] = await asAlice();
    assert.deepEqual([dpa[0].errorCode, dpa[0].activeProducers], [ErrorCode.TOPIC_AUTHORIZATION_FAILED, []]);
    assert.equal(absent[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED, "a topic alice may not read is not told to exist or not");
    await grant(b, "User:alice", Op.READ, Res.TOPIC, "dpa");
    [dpa, absent] = await asAlice();
    assert.deepEqual([dpa[0].errorCode, dpa[0].activeProducers.map((p) => p.producerId)], [0, [11n]]);
    assert.equal(absent[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
  } finally {
    admin.close();
    alice.close();
    await b.stop();
  }
});
