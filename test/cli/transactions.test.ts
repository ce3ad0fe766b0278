// `strand transactions` as a user runs it (kafka-transactions.sh's commands): list and describe a
// transactional id while its transaction is open and after its commit; describe-producers and
// find-hanging show the open transaction's start offset; abort refused by a single-node broker
// (WriteTxnMarkers is inter-broker: CLUSTER_ACTION), reported on stderr with a non-zero exit; with
// ZooKeeper, a transaction no coordinator knows of is found by find-hanging and aborted by abort.
import assert from "node:assert/strict";
import { test } from "node:test";
import { EndTxnApi } from "../../src/protocol/api/mod.ts";
import { startBroker } from "../helpers/broker.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { committedValues, fetchIsolated, findTxnCoordinator, initTxn, produceAs, txnBatch } from "../helpers/txn.ts";
import { createTopic, produce, WireClient } from "../helpers/wire.ts";
import { skipUnlessZooKeeper, startZooKeeper } from "../helpers/zookeeper.ts";
import { AddPartitionsToTxnApi, ProduceApi } from "../../src/protocol/api/mod.ts";
import { strand, strandOk } from "./strand.ts";

test("cli transactions: list, describe, describe-producers, find-hanging while open and after the commit; abort refused on a single node", async () => {
  const b = await startBroker();
  const bs = ["--bootstrap-server", b.bootstrap];
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "t")).errorCode, 0);
    assert.equal((await findTxnCoordinator(c, "tool-tx")).errorCode, 0);
    const p = await initTxn(c, "tool-tx");
    assert.equal(p.errorCode, 0);
    await c.request(AddPartitionsToTxnApi, 3, { v3AndBelowTransactionalId: "tool-tx", v3AndBelowProducerId: p.producerId, v3AndBelowProducerEpoch: p.producerEpoch, v3AndBelowTopics: [{ name: "t", partitions: [0] }] });
    const res = await c.request(ProduceApi, 9, { transactionalId: "tool-tx", acks: -1, timeoutMs: 10_000, topicData: [{ name: "t", partitionData: [{ index: 0, records: txnBatch(p.producerId, p.producerEpoch, 0, 3, "x") }] }] });
    assert.equal((res.responses as { partitionResponses: { errorCode: number }[] }[])[0].partitionResponses[0].errorCode, 0);

    const list = await strandOk(["transactions", "list", ...bs]);
    assert.match(list, new RegExp(`^TransactionalId\\s+Coordinator\\s+ProducerId\\s+TransactionState\\ntool-tx\\s+0\\s+${p.producerId}\\s+Ongoing\\n$`));
    assert.equal(await strandOk(["transactions", "list", ...bs, "--state", "CompleteCommit"]), "TransactionalId  Coordinator  ProducerId  TransactionState\n");
    const d = await strandOk(["transactions", "describe", ...bs, "--transactional-id", "tool-tx"]);
    assert.match(d.split("\n")[1], new RegExp(`^0\\s+tool-tx\\s+${p.producerId}\\s+${p.producerEpoch}\\s+Ongoing\\s+60000\\s+\\d+\\s+\\d+\\s+t-0$`));
    const producers = await strandOk(["transactions", "describe-producers", ...bs, "--topic", "t", "--partition", "0"]);
    assert.match(producers.split("\n")[1], new RegExp(`^t\\s+0\\s+${p.producerId}\\s+${p.producerEpoch}\\s+\\S+\\s+0\\s+\\d+\\s+0$`), producers);
    const hanging = await strandOk(["transactions", "find-hanging", ...bs, "--topic", "t", "--partition", "0", "--max-transaction-timeout", "0"]);
    assert.equal(hanging.trimEnd().split("\n").length, 2, hanging);
    const abort = await strand(["transactions", "abort", ...bs, "--topic", "t", "--partition", "0", "--start-offset", "0"]);
    assert.notEqual(abort.code, 0);
    assert.match(abort.stderr, /CLUSTER_AUTHORIZATION_FAILED|[Cc]luster authorization/);
    const missing = await strand(["transactions", "describe", ...bs, "--transactional-id", "nope"]);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /TRANSACTIONAL_ID_NOT_FOUND|transactional id/i);

    assert.equal((await c.request(EndTxnApi, 3, { transactionalId: "tool-tx", producerId: p.producerId, producerEpoch: p.producerEpoch, committed: true })).errorCode, 0);
    let after = "";
    for (let i = 0; i < 50 && !/CompleteCommit/.test(after); i++) after = await strandOk(["transactions", "list", ...bs]);
    assert.match(after, /tool-tx\s+0\s+\d+\s+CompleteCommit/);
    const done = await strandOk(["transactions", "describe-producers", ...bs, "--topic", "t", "--partition", "0"]);
    assert.match(done.split("\n")[1], /\sNone\s+\d+\s+None$/, "no open transaction after the commit");
  } finally {
    c.close();
    await b.stop();
  }
});

test("cli transactions find-hanging and abort: a transaction no coordinator knows of (written with verification off) holds read_committed back until aborted by the tool (WriteTxnMarkers on the inter-broker listener)", { skip: skipUnlessZooKeeper(), timeout: 120_000 }, async () => {
  const zk = await startZooKeeper();
  const b = await startBroker({ "zookeeper.connect": `127.0.0.1:${zk.port}/strand-cli-txn`, "zookeeper.session.timeout.ms": "6000", "transaction.partition.verification.enable": "false" });
  const bs = ["--bootstrap-server", b.bootstrap];
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "t")).errorCode, 0);
    assert.equal((await produceAs(c, "ghost", "t", 0, txnBatch(8123n, 0, 0, 3, "ghost-"))).errorCode, 0);
    assert.equal((await produce(c, "t", 0, buildBatch(valueRecords(2, "after-")))).errorCode, 0);
    assert.equal((await fetchIsolated(c, "t", 0n, 1)).lastStableOffset, 0n, "held by the open transaction");
    const hanging = await strandOk(["transactions", "find-hanging", ...bs, "--topic", "t", "--partition", "0", "--max-transaction-timeout", "0"]);
    assert.match(hanging.split("\n")[1], /^t\s+0\s+8123\s+0\s+-?\d+\s+0\s+\d+\s+\d+$/, hanging);
    assert.match(await strandOk(["transactions", "abort", ...bs, "--topic", "t", "--partition", "0", "--start-offset", "0"]), /^Aborted the transaction of producer 8123 \(epoch 0\) starting at offset 0 of t-0\.\n$/);
    const f = await fetchIsolated(c, "t", 0n, 1);
    assert.equal(f.lastStableOffset, 6n, "three records, two plain, the abort marker");
    assert.deepEqual(committedValues(f), ["after-0", "after-1"]);
    const again = await strand(["transactions", "abort", ...bs, "--topic", "t", "--partition", "0", "--start-offset", "0"]);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /no open transaction starts at offset 0/);
  } finally {
    c.close();
    await b.stop();
    await zk.destroy();
  }
});
