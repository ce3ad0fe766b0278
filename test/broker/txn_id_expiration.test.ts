// transactional.id.expiration.ms on a real broker, over real sockets: an idle transactional id
// (its transaction committed) is removed by the coordinator's cleanup
// (transaction.remove.expired.transaction.cleanup.interval.ms), with Kafka's tombstone in
// __transaction_state; DescribeTransactions then answers TRANSACTIONAL_ID_NOT_FOUND, and the next
// InitProducerId starts the id afresh under a new producer id. An id with an open transaction is
// kept. After a restart the tombstone keeps the id gone.
import assert from "node:assert/strict";
import { test } from "node:test";
import { DescribeTransactionsApi, EndTxnApi } from "../../src/protocol/api/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker } from "../helpers/broker.ts";
import { addPartitions, findTxnCoordinator, initTxn, partitionCodes, produceAs, txnBatch } from "../helpers/txn.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function describeCode(c: WireClient, id: string): Promise<{ errorCode: number; state: string }> {
  const r = await c.request(DescribeTransactionsApi, 0, { transactionalIds: [id] });
  const s = (r.transactionStates as { errorCode: number; transactionState: string }[])[0];
  return { errorCode: s.errorCode, state: s.transactionState };
}

test("transactional.id.expiration.ms: an idle id is removed with a tombstone (TRANSACTIONAL_ID_NOT_FOUND, a new producer id next time), an id in a transaction is kept, and stays removed after a restart", async () => {
  const overrides = { "transactional.id.expiration.ms": "1500", "transaction.remove.expired.transaction.cleanup.interval.ms": "200" };
  const b = await startBroker(overrides);
  let c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "t")).errorCode, 0);
    assert.equal((await findTxnCoordinator(c, "idle")).errorCode, 0);
    const idle = await initTxn(c, "idle");
    assert.equal(idle.errorCode, 0);
    // "idle" commits a transaction, then goes quiet; "open" keeps one open (its timeout is long).
    const add = async (id: string, p: { producerId: bigint; producerEpoch: number }) =>
      assert.deepEqual(partitionCodes(await addPartitions(c, id, p, [{ name: "t", partitions: [0] }])), { "t-0": 0 });
    await add("idle", idle);
    assert.equal((await produceAs(c, "idle", "t", 0, txnBatch(idle.producerId, idle.producerEpoch, 0, 2, "i"))).errorCode, 0);
    assert.equal((await c.request(EndTxnApi, 3, { transactionalId: "idle", producerId: idle.producerId, producerEpoch: idle.producerEpoch, committed: true })).errorCode, 0);
    assert.equal((await findTxnCoordinator(c, "open")).errorCode, 0);
    const open = await initTxn(c, "open", 4, undefined, 600_000);
    assert.equal(open.errorCode, 0);
    await add("open", open);

    let d = await describeCode(c, "idle");
    for (let i = 0; i < 200 && d.errorCode === ErrorCode.NONE; i++) {
      await sleep(50);
      d = await describeCode(c, "idle");
    }
    assert.equal(d.errorCode, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, `idle id expired (last: ${JSON.stringify(d)})`);
    assert.deepEqual(await describeCode(c, "open"), { errorCode: 0, state: "Ongoing" }, "an open transaction does not expire");

    c.close();
    await b.restart();
    c = await WireClient.connect(b.port);
    assert.equal((await findTxnCoordinator(c, "idle")).errorCode, 0);
    assert.equal((await describeCode(c, "idle")).errorCode, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, "the tombstone keeps it gone after a restart");
    const again = await initTxn(c, "idle");
    assert.equal(again.errorCode, 0);
    assert.notEqual(again.producerId, idle.producerId, "started afresh under a new producer id");
    assert.equal(again.producerEpoch, 0);
  } finally {
    c.close();
    await b.stop();
  }
});
