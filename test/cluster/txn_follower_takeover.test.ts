// Transactions across a leader change: two brokers, RF 2. On the leader, a transaction is left
// open, another aborted, a third committed (markers by WriteTxnMarkers, sent as a coordinator
// does, on the inter-broker listener). The follower builds the same producer state from the
// batches and markers it fetches. The leader is SIGKILLed; the follower, now leader, answers
// read_committed with the same last stable offset (the open transaction's first offset), lists
// the aborted transaction from its own `.txnindex`, fences a marker with an older coordinator
// epoch (learned from the fetched markers), and moves on once the open transaction commits.
import assert from "node:assert/strict";
import { test } from "node:test";
import { skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { committedValues, fetchIsolated, plainBatch, produceAs, txnBatch, writeMarker } from "../helpers/txn.ts";
import { produce, WireClient } from "../helpers/wire.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { createTopic } from "./workload.ts";

const T = "txn-takeover";

test("a follower taking over knows the open and aborted transactions: same last stable offset, aborted list and coordinator fencing", { skip: skipUnlessZooKeeper(), timeout: 240_000 }, async () => {
  // Hand-built transactions (no coordinator behind their producer ids): KIP-890's verification off.
  await withCluster(2, { budgetMs: 200_000, label: "strand-txn-takeover-", overrides: { "transaction.partition.verification.enable": "false" } }, async (cluster) => {
    await createTopic(cluster, T, { partitions: 1, replicationFactor: 2 });
    // Both replicas serving it (the registry naming a leader comes before its broker has the partition).
    const { leader } = await cluster.waitFullyReplicated(T, 0, 30_000);
    const follower = leader === 0 ? 1 : 0;
    let c = await WireClient.connect(cluster.broker(leader).port);
    const ok = (r: { errorCode: number }) => assert.equal(r.errorCode, 0);
    ok(await produce(c, T, 0, plainBatch(1, "plain-"))); // 0
    ok(await produceAs(c, "hand-built", T, 0, txnBatch(9001n, 0, 0, 2, "committed-"))); // 1-2
    ok(await produceAs(c, "hand-built", T, 0, txnBatch(9002n, 0, 0, 2, "aborted-"))); // 3-4
    assert.deepEqual(await writeMarker(c, { producerId: 9001n, producerEpoch: 0, committed: true, coordinatorEpoch: 4, partitions: [[T, 0]] }), { [`${T}-0`]: 0 }); // 5
    assert.deepEqual(await writeMarker(c, { producerId: 9002n, producerEpoch: 0, committed: false, coordinatorEpoch: 4, partitions: [[T, 0]] }), { [`${T}-0`]: 0 }); // 6
    ok(await produceAs(c, "hand-built", T, 0, txnBatch(9003n, 0, 0, 2, "open-"))); // 7-8
    ok(await produce(c, T, 0, plainBatch(1, "late-"))); // 9
    const before = await fetchIsolated(c, T, 0n, 1);
    assert.equal(before.lastStableOffset, 7n);
    assert.deepEqual(before.abortedTransactions, [{ producerId: 9002n, firstOffset: 3n }]);
    await cluster.waitFullyReplicated(T, 0, 60_000);
    c.close();

    await cluster.broker(leader).kill("SIGKILL");
    assert.equal(await cluster.waitLeader(T, 0, 60_000, leader), follower);
    c = await WireClient.connect(cluster.broker(follower).port);
    let after = await fetchIsolated(c, T, 0n, 1);
    for (let i = 0; i < 100 && after.errorCode !== 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await fetchIsolated(c, T, 0n, 1);
    }
    assert.equal(after.errorCode, 0);
    assert.equal(after.lastStableOffset, 7n, "the new leader holds the open transaction");
    assert.deepEqual(after.abortedTransactions, [{ producerId: 9002n, firstOffset: 3n }], "from the follower's own .txnindex");
    assert.deepEqual(committedValues(after), ["plain-0", "committed-0", "committed-1"]);
    // The old coordinator (epoch 3) is fenced on the new leader too.
    assert.deepEqual(await writeMarker(c, { producerId: 9001n, producerEpoch: 0, committed: false, coordinatorEpoch: 3, partitions: [[T, 0]] }), { [`${T}-0`]: ErrorCode.TRANSACTION_COORDINATOR_FENCED });
    assert.deepEqual(await writeMarker(c, { producerId: 9003n, producerEpoch: 0, committed: true, coordinatorEpoch: 4, partitions: [[T, 0]] }), { [`${T}-0`]: 0 });
    after = await fetchIsolated(c, T, 0n, 1);
    assert.equal(after.lastStableOffset, after.highWatermark);
    assert.deepEqual(committedValues(after), ["plain-0", "committed-0", "committed-1", "open-0", "open-1", "late-0"]);
    c.close();
  });
});
