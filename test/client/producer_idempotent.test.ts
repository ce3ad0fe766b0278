// The client library's idempotent producer (ProducerOptions.idempotence) against a real broker:
// every batch carries the producer id InitProducerId gave and its partition's sequences from 0,
// nothing stored twice. Then a lost answer: a relay in front of the broker (advertised in its
// place) passes the first Produce request on and drops the connection instead of returning the
// answer; the producer sends the batch again, and the broker, knowing its sequence, answers it
// with the original offset. The same without idempotence writes the records twice (the
// control: the relay does lose an answer of an appended batch).
import assert from "node:assert/strict";
import { test } from "node:test";
import net from "node:net";
import { ClusterClient, parseBootstrapServers, Producer } from "../../src/client/mod.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { freePort } from "../helpers/zookeeper.ts";
import { createTopic, fetchOnce, WireClient } from "../helpers/wire.ts";
import { parseBatches } from "../helpers/record_batch.ts";
import { assertIdempotentBatches, storedBatches } from "../e2e/stored_batches.ts";

const enc = new TextEncoder();

/** Sends n records (values `${prefix}${i}`) to partition p and flushes; returns each record's offset. */
async function produceAll(producer: Producer, topic: string, partitions: number, n: number, prefix = "v"): Promise<Map<string, [number, number]>> {
  await producer.prepareTopic(topic);
  const out = new Map<string, [number, number]>();
  const errors: string[] = [];
  for (let i = 0; i < n; i++) {
    const value = `${prefix}${i}`;
    producer.send({ topic, partition: i % partitions, key: null, value: enc.encode(value) }, (err, partition, offset) => {
      if (err !== null) errors.push(`${value}: ${err.message}`);
      else out.set(value, [partition, offset]);
    });
    if (producer.bufferedBytes > producer.opts.bufferMemoryBytes) await producer.waitForSpace();
  }
  await producer.flush();
  assert.deepEqual(errors.slice(0, 5), []);
  return out;
}

/** The values stored in topic-partition, in offset order. */
async function stored(b: TestBroker, topic: string, partition: number): Promise<string[]> {
  const c = await WireClient.connect(b.port);
  try {
    const r = await fetchOnce(c, topic, partition, 0n, { maxBytes: 16 << 20, partitionMaxBytes: 16 << 20 });
    const out: string[] = [];
    for (const batch of parseBatches(r.records ?? new Uint8Array(0))) for (const rec of batch.records) out.push(new TextDecoder().decode(rec.value!));
    return out;
  } finally {
    c.close();
  }
}

test("client producer, idempotence: one producer id, sequences from 0 per partition without gap, each record stored once", async () => {
  const b = await startBroker();
  const cluster = new ClusterClient(b.platform, { bootstrap: parseBootstrapServers(b.bootstrap) });
  try {
    const c = await WireClient.connect(b.port);
    assert.equal((await createTopic(c, "cidem", { numPartitions: 3 })).errorCode, 0);
    c.close();
    const producer = new Producer(cluster, { idempotence: true, batchSizeBytes: 2048, lingerMs: 1 });
    const n = 30_000;
    const acked = await produceAll(producer, "cidem", 3, n);
    await producer.close();
    assert.equal(acked.size, n);
    for (let p = 0; p < 3; p++) {
      const values = await stored(b, "cidem", p);
      assert.equal(values.length, n / 3, `partition ${p}`);
      values.forEach((v, offset) => assert.deepEqual(acked.get(v), [p, offset], v));
      assertIdempotentBatches(b.logDir, "cidem", p, n / 3);
      assert.ok(storedBatches(b.logDir, "cidem", p).length > 3, "several batches");
    }
  } finally {
    cluster.close();
    await b.stop();
  }
});

/** A relay to the broker that swallows the answer to the first Produce request and drops that connection. */
async function lossyRelay(port: number, brokerPort: number): Promise<{ lost: () => boolean; close: () => Promise<void> }> {
  let lost = false;
  const server = net.createServer((client) => {
    const broker = net.connect({ host: "127.0.0.1", port: brokerPort });
    // Correlation ids of this connection's Produce requests, read from the request frames.
    const produceIds = new Set<number>();
    let fromClient = Buffer.alloc(0);
    let fromBroker = Buffer.alloc(0);
    client.on("data", (d: Buffer) => {
      fromClient = Buffer.concat([fromClient, d]);
      while (fromClient.length >= 4 && fromClient.length >= 4 + fromClient.readInt32BE(0)) {
        if (fromClient.readInt16BE(4) === 0) produceIds.add(fromClient.readInt32BE(8));
        fromClient = fromClient.subarray(4 + fromClient.readInt32BE(0));
      }
      broker.write(d);
    });
    broker.on("data", (d: Buffer) => {
      fromBroker = Buffer.concat([fromBroker, d]);
      let pass = 0;
      while (fromBroker.length >= pass + 4 && fromBroker.length >= pass + 4 + fromBroker.readInt32BE(pass)) {
        if (!lost && produceIds.has(fromBroker.readInt32BE(pass + 4))) {
          lost = true;
          if (pass > 0) client.write(fromBroker.subarray(0, pass));
          client.destroy();
          broker.destroy();
          return;
        }
        pass += 4 + fromBroker.readInt32BE(pass);
      }
      if (pass > 0) client.write(fromBroker.subarray(0, pass));
      fromBroker = fromBroker.subarray(pass);
    });
    const end = () => {
      client.destroy();
      broker.destroy();
    };
    client.on("error", end).on("close", end);
    broker.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { lost: () => lost, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

for (const idempotence of [true, false]) {
  test(`client producer, ${idempotence ? "idempotence: a lost answer's retry is answered with the original offset, nothing twice" : "no idempotence (control): the same lost answer writes the records twice"}`, async () => {
    const relayPort = await freePort();
    const b = await startBroker({ "advertised.listeners": `PLAINTEXT://127.0.0.1:${relayPort}` });
    const relay = await lossyRelay(relayPort, b.port);
    const cluster = new ClusterClient(b.platform, { bootstrap: parseBootstrapServers(`127.0.0.1:${relayPort}`), retryBackoffMs: 50 });
    try {
      const c = await WireClient.connect(b.port);
      assert.equal((await createTopic(c, "lossy", { numPartitions: 1 })).errorCode, 0);
      c.close();
      const producer = new Producer(cluster, { idempotence, lingerMs: 1 });
      const acked = await produceAll(producer, "lossy", 1, 50);
      await producer.close();
      assert.ok(relay.lost(), "the relay swallowed a Produce answer");
      const values = await stored(b, "lossy", 0);
      if (idempotence) {
        assert.deepEqual(values, Array.from({ length: 50 }, (_, i) => `v${i}`), "each record once, in order");
        values.forEach((v, offset) => assert.deepEqual(acked.get(v), [0, offset], `${v}: the callback's offset is where it is stored`));
        assertIdempotentBatches(b.logDir, "lossy", 0, 50);
      } else {
        assert.ok(values.length > 50 && new Set(values).size === 50, `written twice: ${values.length} stored for 50 sent`);
      }
    } finally {
      cluster.close();
      await relay.close();
      await b.stop();
    }
  });
}
