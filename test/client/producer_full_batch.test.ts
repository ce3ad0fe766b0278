// A batch that fills up is sent when it is full, not when a later linger timer or flush() happens
// to send it. Closing a full batch cancels its linger timer; the producer used to leave it in the
// ready queue without sending, so a producer that filled each batch within lingerMs (50k
// records/s of 100 bytes fill a 16 KB batch in 3 ms, under the default 5 ms) sent nothing until
// the load paused: `strand perf produce --throughput 50000` measured seconds of latency.
// Here lingerMs is ten minutes, so only the full batch's own send can answer it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ClusterClient, parseBootstrapServers, Producer } from "../../src/client/mod.ts";
import { startBroker } from "../helpers/broker.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";

test("client producer: a full batch is sent at once, without waiting for linger or flush", async () => {
  const b = await startBroker();
  const cluster = new ClusterClient(b.platform, { bootstrap: parseBootstrapServers(b.bootstrap) });
  try {
    const c = await WireClient.connect(b.port);
    assert.equal((await createTopic(c, "fullbatch", { numPartitions: 2 })).errorCode, 0);
    c.close();
    const producer = new Producer(cluster, { acks: 1, batchSizeBytes: 1024, lingerMs: 600_000 });
    await producer.prepareTopic("fullbatch");
    const value = new Uint8Array(100).fill(120);
    // Partition 0: records until well past one batch; partition 1: one record that must wait.
    const answered: Promise<number>[] = [];
    for (let i = 0; i < 30; i++) {
      answered.push(new Promise((resolve, reject) => {
        producer.send({ topic: "fullbatch", partition: 0, key: null, value }, (err, _p, offset) => (err === null ? resolve(offset) : reject(err)));
      }));
    }
    let lone = -2;
    producer.send({ topic: "fullbatch", partition: 1, key: null, value }, (err, _p, offset) => {
      lone = err === null ? offset : -3;
    });
    // The first batch (about nine records of ~110 bytes in 1 KB) is answered with linger pending.
    assert.equal(await answered[0], 0);
    assert.equal(await answered[5], 5);
    assert.equal(lone, -2, "a batch that is not full still lingers");
    await producer.flush();
    assert.deepEqual(await Promise.all(answered), Array.from({ length: 30 }, (_, i) => i));
    assert.equal(lone, 0);
    await producer.close();
  } finally {
    cluster.close();
    await b.stop();
  }
});
