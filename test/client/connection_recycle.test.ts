// Large fetch answers without fresh buffers: a KafkaConnection with recycleAnswers cuts answers of
// 4 KiB or more into buffers the caller gives back (a replica fetcher, after appending), and the
// broker encodes large answers into kept buffers that come back once written. Both must never
// hand out a buffer something still reads: checked by the records' contents, over a real socket.
import assert from "node:assert/strict";
import net from "node:net";
import { test } from "node:test";
import { KafkaConnection } from "../../src/client/connection.ts";
import { CreateTopicsApi, FetchApi, ProduceApi } from "../../src/protocol/api/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { buildBatch, concatBytes, parseBatches, text, valueRecords } from "../helpers/record_batch.ts";
import { decodeResponse, encodeRequest } from "../helpers/wire.ts";

const perBatch = 200;
const valueBytes = 1000;
const batches = 6;

async function setUp(recycleAnswers: boolean) {
  const b = await startBroker();
  const c = await KafkaConnection.connect(b.platform, { host: "127.0.0.1", port: b.port, clientId: "recycle-test", recycleAnswers });
  const created = await c.request(CreateTopicsApi, 7, {
    topics: [{ name: "big", numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 10_000,
    validateOnly: false,
  }, 15_000);
  assert.equal((created.topics as { errorCode: number }[])[0].errorCode, 0);
  for (let k = 0; k < batches; k++) {
    const res = await c.request(ProduceApi, 8, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 10_000,
      topicData: [{ name: "big", partitionData: [{ index: 0, records: buildBatch(valueRecords(perBatch, `b${k}-`, valueBytes)) }] }],
    }, 10_000);
    assert.equal((res.responses as { partitionResponses: { errorCode: number }[] }[])[0].partitionResponses[0].errorCode, 0);
  }
  return { b, c };
}

/** Runs fn on a fresh broker with the topic filled, then closes the connection and stops the broker. */
async function withBroker(recycleAnswers: boolean, fn: (x: { b: TestBroker; c: KafkaConnection }) => Promise<void>): Promise<void> {
  const x = await setUp(recycleAnswers);
  try {
    await fn(x);
  } finally {
    x.c.close();
    await x.b.stop();
  }
}

/** Fetch of one batch (about 200 KB) at batch k's first offset. */
function fetchBatch(c: KafkaConnection, k: number): Promise<Struct> {
  return c.request(FetchApi, 12, fetchBatchBody(k), 10_000);
}

function fetchBatchBody(k: number): Struct {
  return {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 1,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic: "big", partitions: [{ partition: 0, fetchOffset: BigInt(k * perBatch), partitionMaxBytes: perBatch * valueBytes + 20_000 }] }],
    forgottenTopicsData: [],
    rackId: "",
  };
}

function recordsOf(res: Struct): Uint8Array {
  const p = (res.responses as { partitions: { errorCode: number; records: Uint8Array }[] }[])[0].partitions[0];
  assert.equal(p.errorCode, 0);
  return p.records;
}

/** The answer holds batch k whole, every value as produced. */
function assertBatch(records: Uint8Array, k: number): void {
  const parsed = parseBatches(records);
  assert.equal(parsed.length, 1, `one batch at offset ${k * perBatch}`);
  assert.equal(parsed[0].baseOffset, BigInt(k * perBatch));
  const values = parsed[0].records.map((r) => text(r.value));
  assert.deepEqual(values, valueRecords(perBatch, `b${k}-`, valueBytes).map((r) => r.value));
}

test("KafkaConnection recycleAnswers: a large answer given back takes the next one; one kept is not overwritten", async () => {
  await withBroker(true, async ({ c }) => {
    const first = recordsOf(await fetchBatch(c, 0));
    assertBatch(first, 0);
    c.recycle(first);
    const second = recordsOf(await fetchBatch(c, 1));
    assert.equal(second.buffer, first.buffer, "the buffer given back holds the next answer");
    assertBatch(second, 1);
    // Not given back: the next answer goes elsewhere and the kept one stays as it was.
    const third = recordsOf(await fetchBatch(c, 2));
    assert.notEqual(third.buffer, second.buffer);
    assertBatch(third, 2);
    assertBatch(second, 1);
    // Recycling twice, or bytes this connection did not cut, changes nothing.
    c.recycle(second);
    c.recycle(second);
    c.recycle(new Uint8Array(1 << 20));
    const fourth = recordsOf(await fetchBatch(c, 3));
    const fifth = recordsOf(await fetchBatch(c, 4));
    assert.notEqual(fourth.buffer, fifth.buffer, "a buffer given back twice is handed out once");
    assertBatch(fourth, 3);
    assertBatch(fifth, 4);
  });
});

test("KafkaConnection without recycleAnswers: every answer has its own bytes", async () => {
  await withBroker(false, async ({ c }) => {
    const first = recordsOf(await fetchBatch(c, 0));
    c.recycle(first);
    const second = recordsOf(await fetchBatch(c, 1));
    assert.notEqual(second.buffer, first.buffer);
    assertBatch(first, 0);
    assertBatch(second, 1);
  });
});

test("broker: large answers encoded into kept buffers arrive whole, with the client not reading for a while", async () => {
  const { b, c } = await setUp(false);
  const count = 40;
  const socket = net.connect({ host: "127.0.0.1", port: b.port });
  try {
    await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
    const chunks: Uint8Array[] = [];
    socket.on("data", (d: Uint8Array) => chunks.push(new Uint8Array(d)));
    // 40 answers of 200 KB pile up unread: the broker's writes stop part way, its answers wait
    // queued, and a kept buffer handed to the next answer before its own was written would send
    // another batch's bytes.
    socket.pause();
    const requests = Array.from({ length: count }, (_, i) => encodeRequest(FetchApi, 12, i + 1, fetchBatchBody(i % batches)));
    socket.write(concatBytes(...requests));
    await new Promise((r) => setTimeout(r, 1_500));
    socket.resume();
    const got: Uint8Array[] = [];
    const deadline = Date.now() + 30_000;
    let buffered: Uint8Array = new Uint8Array(0);
    while (got.length < count && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      if (chunks.length > 0) buffered = concatBytes(buffered, ...chunks.splice(0));
      while (buffered.length >= 4) {
        const size = new DataView(buffered.buffer, buffered.byteOffset, 4).getInt32(0);
        if (buffered.length < 4 + size) break;
        got.push(buffered.slice(4, 4 + size));
        buffered = buffered.subarray(4 + size);
      }
    }
    assert.equal(got.length, count, "every answer came");
    got.forEach((payload, i) => {
      const { correlationId, body } = decodeResponse(FetchApi, 12, payload);
      assert.equal(correlationId, i + 1);
      assertBatch(recordsOf(body), i % batches);
    });
    // And one at a time on a connection that reads: each answer's buffer is back before the next.
    for (let k = 0; k < batches; k++) assertBatch(recordsOf(await fetchBatch(c, k)), k);
  } finally {
    socket.destroy();
    c.close();
    await b.stop();
  }
});
