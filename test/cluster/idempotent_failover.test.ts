// Issue 15: followers keep the idempotent producers' state from the batches they fetch, so after
// the leader is SIGKILLed the new leader answers a retry of an acknowledged batch with the
// original offset (NONE) instead of appending it twice, and refuses a sequence gap. Two brokers,
// RF 2, one partition; the batches go over a real socket (test/helpers/wire.ts).
import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../src/util/errors.ts";
import { skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { listOffset, produce, WireClient } from "../helpers/wire.ts";
import { createTopic } from "./workload.ts";

const skip = skipUnlessZooKeeper();

function idem(seq: number): Uint8Array {
  return buildBatch(valueRecords(4, `s${seq}-`), { producerId: 4242n, producerEpoch: 0, baseSequence: seq, baseTimestamp: BigInt(Date.now()) });
}

test("cluster: a new leader deduplicates a retry of a batch the old leader acknowledged", { skip, timeout: 120_000 }, async () => {
  await withCluster(2, { budgetMs: 110_000, label: "strand-cluster-idem-" }, async (c) => {
    const topic = "idem-failover";
    await createTopic(c, topic, { partitions: 1, replicationFactor: 2 });
    const { leader } = await c.waitFullyReplicated(topic, 0, 30_000);
    let w = await WireClient.connect(c.broker(leader).port);
    const offsets: bigint[] = [];
    try {
      for (let i = 0; i < 10; i++) {
        const r = await produce(w, topic, 0, idem(i * 4), -1);
        assert.equal(r.errorCode, ErrorCode.NONE, r.errorMessage ?? "");
        offsets.push(r.baseOffset);
      }
    } finally {
      w.close();
    }
    await c.waitFullyReplicated(topic, 0, 30_000);
    await c.broker(leader).kill("SIGKILL");
    const next = await c.waitLeader(topic, 0, 60_000, leader);
    w = await WireClient.connect(c.broker(next).port);
    try {
      let retry = await produce(w, topic, 0, idem(36), -1);
      // The new leader may still be taking over; NOT_LEADER_OR_FOLLOWER is retriable.
      for (let i = 0; i < 50 && retry.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER; i++) {
        await new Promise((r) => setTimeout(r, 200));
        retry = await produce(w, topic, 0, idem(36), -1);
      }
      assert.deepEqual([retry.errorCode, retry.baseOffset], [ErrorCode.NONE, offsets[9]], retry.errorMessage ?? "");
      const older = await produce(w, topic, 0, idem(28), -1);
      assert.deepEqual([older.errorCode, older.baseOffset], [ErrorCode.NONE, offsets[7]]);
      assert.equal((await produce(w, topic, 0, idem(44), -1)).errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
      assert.equal((await listOffset(w, topic, 0, -1n)).offset, 40n, "nothing appended twice");
    } finally {
      w.close();
    }
  });
});
