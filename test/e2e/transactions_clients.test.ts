// Real clients' transactions against a real broker in this process:
// - confluent-kafka-python (librdkafka): consume-transform-produce (init_transactions,
//   begin_transaction, produce, send_offsets_to_transaction, commit_transaction; every third
//   transaction aborted), then read_committed sees each input record exactly once in order and
//   nothing aborted, read_uncommitted sees the aborted records too, the group's offset is the input's end.
// - kafkajs: producer.transaction(), send, sendOffsets, commit and abort; read back with
//   readUncommitted false and true (and kcat with isolation.level both ways); the group's committed
//   offset is the committed transaction's only, before and after a restart.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Kafka, logLevel } from "kafkajs";
import { startBroker } from "../helpers/broker.ts";
import { run, skipUnless } from "../helpers/tools.ts";

const PYTHON = "/usr/bin/python3";
const PY_DIR = join(dirname(fileURLToPath(import.meta.url)), "py");

test("confluent-kafka-python transactions: consume-transform-produce of 3,000 records with send_offsets_to_transaction, every third transaction aborted; read_committed exact, read_uncommitted sees the aborted", { skip: skipUnless("confluent_kafka"), timeout: 300_000 }, async () => {
  const b = await startBroker({ "group.initial.rebalance.delay.ms": "0" });
  try {
    const r = await run(PYTHON, [join(PY_DIR, "confluent_txn.py"), b.bootstrap, "ctp-in", "ctp-out", "ctp", "3000", "100", "3"], { timeoutMs: 240_000 });
    const last = r.stdout.toString().trim().split("\n").pop() ?? "";
    const why = `${last} ${r.stderr.slice(-2000)}`;
    const s = JSON.parse(last);
    assert.equal(s.ok, true, why);
    assert.deepEqual([s.committed_read, s.group_offset, s.errors], [3000, 3000, []], why);
    assert.ok(s.aborted_transactions > 0 && s.uncommitted_read === 3000 + s.aborted_records, why);
    // The coordinator holds the id, its last transaction complete.
    const d = b.broker.services.txnCoordinator!.describe("ctp-ctp");
    assert.equal(d.errorCode, 0);
    assert.ok(["CompleteCommit", "CompleteAbort"].includes(d.txn!.state), d.txn!.state);
  } finally {
    await b.stop();
  }
});

async function consumeAll(kafka: Kafka, topic: string, groupId: string, readUncommitted: boolean, want: number): Promise<string[]> {
  const consumer = kafka.consumer({ groupId, readUncommitted, maxWaitTimeInMs: 200 });
  const seen: string[] = [];
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${groupId}: consumed ${seen.length} of ${want} in 60 s`)), 60_000);
      consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(String(message.value));
          if (seen.length === want) {
            clearTimeout(timer);
            resolve();
          }
        },
      }).catch(reject);
    });
  } finally {
    await consumer.disconnect().catch(() => {});
  }
  return seen;
}

test("kafkajs transactions: send + sendOffsets + commit, send + sendOffsets + abort; readUncommitted false/true; the committed group offset is the committed transaction's", { timeout: 180_000 }, async () => {
  const b = await startBroker({ "group.initial.rebalance.delay.ms": "0" });
  const kafka = new Kafka({ clientId: "kjs-txn", brokers: [b.bootstrap], logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ transactionalId: "kjs-tx", idempotent: true, maxInFlightRequests: 1 });
  try {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: "kjs-out", numPartitions: 1 }, { topic: "kjs-in", numPartitions: 1 }] });
    await producer.connect();
    const committed = Array.from({ length: 500 }, (_, i) => ({ value: `c${i}` }));
    const aborted = Array.from({ length: 300 }, (_, i) => ({ value: `a${i}` }));
    let txn = await producer.transaction();
    await txn.send({ topic: "kjs-out", messages: committed.slice(0, 250) });
    await txn.send({ topic: "kjs-out", messages: committed.slice(250) });
    await txn.sendOffsets({ consumerGroupId: "kjs-ctp", topics: [{ topic: "kjs-in", partitions: [{ partition: 0, offset: "42" }] }] });
    await txn.commit();
    txn = await producer.transaction();
    await txn.send({ topic: "kjs-out", messages: aborted });
    await txn.sendOffsets({ consumerGroupId: "kjs-ctp", topics: [{ topic: "kjs-in", partitions: [{ partition: 0, offset: "99" }] }] });
    await txn.abort();
    txn = await producer.transaction();
    await txn.send({ topic: "kjs-out", messages: [{ value: "last" }] });
    await txn.commit();
    await producer.disconnect();

    const readCommitted = await consumeAll(kafka, "kjs-out", "kjs-rc", false, 501);
    assert.deepEqual(readCommitted, [...committed.map((m) => m.value), "last"]);
    const readAll = await consumeAll(kafka, "kjs-out", "kjs-ru", true, 801);
    assert.deepEqual(readAll, [...committed, ...aborted].map((m) => m.value).concat("last"));
    const offsets = await admin.fetchOffsets({ groupId: "kjs-ctp", topics: ["kjs-in"] });
    assert.deepEqual(offsets[0].partitions.map((p) => [p.partition, p.offset]), [[0, "42"]], "the aborted transaction's offset never became visible");
    await admin.disconnect();

    // kcat (librdkafka) has no transactional producer, but reads with either isolation level.
    if (skipUnless("kcat") === false) {
      const read = async (level: string) => {
        const r = await run("kcat", ["-b", b.bootstrap, "-C", "-t", "kjs-out", "-e", "-q", "-o", "beginning", "-X", `isolation.level=${level}`], { timeoutMs: 60_000 });
        assert.equal(r.code, 0, r.stderr);
        return r.stdout.toString().trimEnd().split("\n");
      };
      assert.deepEqual(await read("read_committed"), readCommitted, "kcat read_committed");
      assert.deepEqual(await read("read_uncommitted"), readAll, "kcat read_uncommitted");
    }

    // A restart replays __consumer_offsets (the transactional records and their markers): the same offset.
    await b.restart();
    const again = kafka.admin();
    await again.connect();
    const reloaded = await again.fetchOffsets({ groupId: "kjs-ctp", topics: ["kjs-in"] });
    await again.disconnect();
    assert.deepEqual(reloaded[0].partitions.map((p) => [p.partition, p.offset]), [[0, "42"]], "after a restart");
  } finally {
    await producer.disconnect().catch(() => {});
    await b.stop();
  }
});
