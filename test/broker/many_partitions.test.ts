// Issue 11, defect 4: creating a topic of thousands of partitions must not freeze the broker.
// Over real sockets: one connection creates a topic of 2,000 partitions while a second sends
// ApiVersions and Metadata every 10 ms and a third produces to the topic's last partition; every
// request must be answered (the slowest latency is printed, never asserted: timings are the
// bench's job, `npm run bench:stall`), a produce to a partition not created yet must get a
// retriable error, and after a restart every partition is there, led, with what was produced.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiVersionsApi, CreateTopicsApi, MetadataApi } from "../../src/protocol/api/mod.ts";
import { ErrorCode } from "../../src/util/mod.ts";
import { startBroker } from "../helpers/broker.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { listOffset, produce, WireClient } from "../helpers/wire.ts";

const partitions = 2_000;
const topic = "many";
const retriable = new Set<number>([
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
]);

type MetadataTopic = { errorCode: number; partitions: { errorCode: number; leaderId: number }[] };

async function metadata(c: WireClient): Promise<MetadataTopic> {
  const res = await c.request(MetadataApi, 12, {
    topics: [{ topicId: new Uint8Array(16), name: topic }],
    allowAutoTopicCreation: false,
    includeTopicAuthorizedOperations: false,
  }, 60_000);
  return (res.topics as MetadataTopic[])[0];
}

const led = (t: MetadataTopic) => t.errorCode === 0 ? t.partitions.filter((p) => p.errorCode === 0 && p.leaderId >= 0).length : 0;

test("a topic of 2,000 partitions is created while every other request is answered, and survives a restart", async () => {
  const b = await startBroker({ "auto.create.topics.enable": "false" });
  try {
    const creator = await WireClient.connect(b.port);
    const pinger = await WireClient.connect(b.port);
    const producer = await WireClient.connect(b.port);
    let creating = true;
    const pings = { sent: 0, answered: 0, maxLatencyMs: 0 };
    const ping = (async () => {
      while (creating) {
        const t = performance.now();
        pings.sent++;
        if (pings.sent % 2 === 0) {
          const res = await pinger.request(ApiVersionsApi, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" }, 60_000);
          assert.equal(res.errorCode, 0);
        } else {
          await metadata(pinger); // the topic may be unknown, partly led or whole: any answer will do
        }
        pings.answered++;
        pings.maxLatencyMs = Math.max(pings.maxLatencyMs, performance.now() - t);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const produced = { ok: 0, retriable: 0 };
    const last = partitions - 1;
    const produceLoop = (async () => {
      while (creating) {
        const r = await produce(producer, topic, last, buildBatch(valueRecords(1)), 1);
        if (r.errorCode === ErrorCode.NONE) produced.ok++;
        else {
          assert.ok(retriable.has(r.errorCode), `a produce during creation got error ${r.errorCode} (${r.errorMessage})`);
          produced.retriable++;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();

    const started = performance.now();
    const res = await creator.request(CreateTopicsApi, 7, {
      topics: [{ name: topic, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 600_000,
      validateOnly: false,
    }, 600_000);
    assert.equal((res.topics as { errorCode: number }[])[0].errorCode, 0);
    while (led(await metadata(creator)) < partitions) await new Promise((r) => setTimeout(r, 50));
    // One produce answered after creation, so the loop saw the partition both ways or at least led.
    const before = produced.ok;
    while (produced.ok === before) await new Promise((r) => setTimeout(r, 20));
    creating = false;
    await Promise.all([ping, produceLoop]);
    console.log(
      `created ${partitions} partitions in ${Math.round(performance.now() - started)} ms; ` +
        `${pings.answered}/${pings.sent} ApiVersions/Metadata answered, slowest ${Math.round(pings.maxLatencyMs)} ms; ` +
        `produces: ${produced.ok} ok, ${produced.retriable} retriable errors`,
    );
    assert.equal(pings.answered, pings.sent, "every request was answered");
    assert.ok(pings.sent > 1, "requests were sent while the topic was being created");
    creator.close();
    pinger.close();
    producer.close();

    await b.restart();
    const c = await WireClient.connect(b.port);
    let t = await metadata(c);
    while (led(t) < partitions) {
      await new Promise((r) => setTimeout(r, 50));
      t = await metadata(c);
    }
    assert.equal(t.partitions.length, partitions);
    const end = await listOffset(c, topic, last, -1n);
    assert.equal(end.errorCode, 0);
    assert.equal(end.offset, BigInt(produced.ok), "every acknowledged produce is there after the restart");
    c.close();
  } finally {
    await b.stop();
  }
});
