// A loop that sends records without awaiting anything learns from the producer when it must let
// the event loop run: sendBlocked once the leader has maxInFlightPerBroker requests in flight and
// closed batches wait behind them, and waitForProgress() resolving at the next batch done (an
// answer read), not on a timer. strand perf produce on Deno relies on both (a timer yield costs
// 1-4 ms there). Against a real broker over a socket.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ClusterClient, parseBootstrapServers, Producer } from "../../src/client/mod.ts";
import { startBroker } from "../helpers/broker.ts";
import { createTopic, WireClient } from "../helpers/wire.ts";

test("client producer: sendBlocked at the in-flight limit, waitForProgress resumes at the next answer", async () => {
  const b = await startBroker();
  const cluster = new ClusterClient(b.platform, { bootstrap: parseBootstrapServers(b.bootstrap) });
  try {
    const c = await WireClient.connect(b.port);
    assert.equal((await createTopic(c, "progress")).errorCode, 0);
    c.close();
    const producer = new Producer(cluster, { acks: 1, batchSizeBytes: 1024, lingerMs: 600_000, maxInFlightPerBroker: 1 });
    await producer.prepareTopic("progress");
    assert.equal(producer.sendBlocked, false, "nothing to send");
    await producer.waitForProgress(); // nothing buffered: at once
    const value = new Uint8Array(100).fill(120);
    let acked = 0;
    // The first full batch connects and is sent; the next full ones wait behind the one in flight.
    for (let i = 0; i < 40; i++) producer.send({ topic: "progress", partition: 0, key: null, value }, (err) => err === null && acked++);
    await producer.waitForProgress(); // the connection comes up and the first request is answered
    assert.ok(acked > 0, "a batch was acknowledged");
    const before = acked;
    for (let i = 0; i < 40; i++) producer.send({ topic: "progress", partition: 0, key: null, value }, (err) => err === null && acked++);
    assert.equal(producer.sendBlocked, true, "full batches wait behind the one request in flight");
    await producer.waitForProgress();
    assert.ok(acked > before, "resumed by an answer");
    await producer.flush();
    assert.equal(acked, 80);
    assert.equal(producer.sendBlocked, false);
    await producer.close();
  } finally {
    cluster.close();
    await b.stop();
  }
});
