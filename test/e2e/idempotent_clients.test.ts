// Real clients with idempotence on, against a real broker in this process: kcat (librdkafka,
// -X enable.idempotence=true), confluent-kafka-python (librdkafka), kafkajs (idempotent: true) and
// @platformatic/kafka (idempotent: true) each take a producer id (InitProducerId), produce, and
// read back what they sent, in order. The stored batches carry one producer id and epoch with
// sequences from 0, no gap, no repeat; DescribeProducers names the producer and its last sequence.
// kafka-python 2.0.2 (Debian python3-kafka) has no idempotent producer (enable_idempotence came
// in kafka-python 2.1), so it is not here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Consumer as PltConsumer, MessagesStreamModes, Producer as PltProducer, stringDeserializers, stringSerializers } from "@platformatic/kafka";
import { Kafka, logLevel } from "kafkajs";
import { DescribeProducersApi } from "../../src/protocol/api/mod.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";
import { assertIdempotentBatches } from "./stored_batches.ts";

const PYTHON = "/usr/bin/python3";
const PY_DIR = join(dirname(fileURLToPath(import.meta.url)), "py");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** DescribeProducers for one partition: the producers the leader holds state for. */
async function describeProducers(b: TestBroker, topic: string, partition: number) {
  const c = await WireClient.connect(b.port);
  try {
    const r = await c.request(DescribeProducersApi, 0, { topics: [{ name: topic, partitionIndexes: [partition] }] });
    const p = (r.topics as { partitions: { errorCode: number; activeProducers: { producerId: bigint; producerEpoch: number; lastSequence: number }[] }[] }[])[0].partitions[0];
    assert.equal(p.errorCode, 0, "DescribeProducers");
    return p.activeProducers;
  } finally {
    c.close();
  }
}

/** The stored batches are one idempotent producer's, and the leader's state names it. */
async function assertProducedOnce(b: TestBroker, topic: string, records: number): Promise<void> {
  const producerId = assertIdempotentBatches(b.logDir, topic, 0, records);
  const producers = await describeProducers(b, topic, 0);
  assert.deepEqual(producers.map((p) => [p.producerId, p.producerEpoch, p.lastSequence]), [[producerId, 0, records - 1]], "DescribeProducers");
}

test("kcat -X enable.idempotence=true: 50,000 lines produced with a producer id and read back in order", { skip: skipUnless("kcat") }, async () => {
  const b = await startBroker();
  try {
    const c = await WireClient.connect(b.port);
    assert.equal((await createTopic(c, "kcat-idem")).errorCode, 0);
    c.close();
    let input = "";
    for (let i = 1; i <= 50_000; i++) input += `line-${i}\n`;
    const p = await run("kcat", ["-b", b.bootstrap, "-P", "-t", "kcat-idem", "-p", "0", "-X", "enable.idempotence=true", "-X", "linger.ms=5"], { input, timeoutMs: 120_000 });
    assert.equal(p.code, 0, `kcat -P: ${p.stderr}`);
    assert.doesNotMatch(p.stderr, /not supported|fatal/i, p.stderr);
    const r = await run("kcat", ["-b", b.bootstrap, "-C", "-t", "kcat-idem", "-e", "-q", "-o", "beginning"], { timeoutMs: 120_000 });
    assert.equal(r.code, 0, `kcat -C: ${r.stderr}`);
    assert.equal(r.stdout.toString(), input);
    await assertProducedOnce(b, "kcat-idem", 50_000);
  } finally {
    await b.stop();
  }
});

test("confluent-kafka-python enable.idempotence=true: 10,000 keyed messages with headers produced and read back, offsets dense", { skip: skipUnless("confluent_kafka") }, async () => {
  const b = await startBroker();
  try {
    const n = 10_000;
    const r = await run(PYTHON, [join(PY_DIR, "confluent_roundtrip.py"), b.bootstrap, "py-idem", String(n), "lz4", "enable.idempotence=true"], { timeoutMs: 120_000 });
    const last = r.stdout.toString().trim().split("\n").pop() ?? "";
    const why = `${last} ${r.stderr.slice(-2000)}`;
    const s = JSON.parse(last);
    assert.deepEqual([s.sent, s.received, s.errors, s.client_logs, s.ok], [n, n, [], [], true], why);
    await assertProducedOnce(b, "py-idem", n);
  } finally {
    await b.stop();
  }
});

test("kafkajs idempotent: true: 2,000 messages in 20 sends produced and consumed back by a group, in order", async () => {
  const b = await startBroker({ "group.initial.rebalance.delay.ms": "0" });
  const kafka = new Kafka({ clientId: "kjs-idem", brokers: [b.bootstrap], logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const consumer = kafka.consumer({ groupId: "kjs-idem-readers" });
  try {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: "kjs-idem", numPartitions: 1 }] });
    await admin.disconnect();
    await producer.connect();
    const want: string[] = [];
    for (let s = 0; s < 20; s++) {
      const messages = Array.from({ length: 100 }, (_, i) => ({ key: `k${s * 100 + i}`, value: `v${s * 100 + i}` }));
      want.push(...messages.map((m) => m.value));
      const acks = await producer.send({ topic: "kjs-idem", acks: -1, messages });
      assert.equal(acks[0].errorCode, 0);
      assert.equal(acks[0].baseOffset, String(s * 100), "each send's first offset");
    }
    await producer.disconnect();
    await consumer.connect();
    await consumer.subscribe({ topic: "kjs-idem", fromBeginning: true });
    const seen: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`consumed ${seen.length} of ${want.length} in 60 s`)), 60_000);
      consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(String(message.value));
          if (seen.length === want.length) {
            clearTimeout(timer);
            resolve();
          }
        },
      }).catch(reject);
    });
    assert.deepEqual(seen, want);
    await assertProducedOnce(b, "kjs-idem", want.length);
  } finally {
    await consumer.disconnect().catch(() => {});
    await producer.disconnect().catch(() => {});
    await b.stop();
  }
});

test("@platformatic/kafka idempotent: true: 2,000 messages produced and read back from the earliest offset, in order", async () => {
  const b = await startBroker({ "group.initial.rebalance.delay.ms": "0" });
  const producer = new PltProducer({ clientId: "plt-idem", bootstrapBrokers: [b.bootstrap], serializers: stringSerializers, idempotent: true });
  const consumer = new PltConsumer({
    groupId: "plt-idem-readers",
    clientId: "plt-idem-reader",
    bootstrapBrokers: [b.bootstrap],
    deserializers: stringDeserializers,
    maxWaitTime: 200,
    sessionTimeout: 6_000,
    heartbeatInterval: 500,
  });
  try {
    const c = await WireClient.connect(b.port);
    assert.equal((await createTopic(c, "plt-idem")).errorCode, 0);
    c.close();
    const want: string[] = [];
    for (let s = 0; s < 8; s++) {
      const messages = Array.from({ length: 250 }, (_, i) => ({ topic: "plt-idem", key: `k${s * 250 + i}`, value: `v${s * 250 + i}`, partition: 0 }));
      want.push(...messages.map((m) => m.value));
      await producer.send({ messages });
    }
    const stream = await consumer.consume({ topics: ["plt-idem"], mode: MessagesStreamModes.EARLIEST, autocommit: false });
    const seen: string[] = [];
    const errors: unknown[] = [];
    stream.on("error", (e) => errors.push(e));
    stream.on("data", (m: { value: string }) => seen.push(m.value));
    const deadline = Date.now() + 30_000;
    while (seen.length < want.length && Date.now() < deadline) await sleep(50);
    await sleep(200); // anything more would be a duplicate
    assert.deepEqual(errors, []);
    assert.deepEqual(seen, want);
    await assertProducedOnce(b, "plt-idem", want.length);
  } finally {
    for (const close of [() => consumer.close(true), () => producer.close()]) {
      try {
        await close();
      } catch {
        // already closed
      }
    }
    await b.stop();
  }
});
