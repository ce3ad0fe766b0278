// DeleteRecords (API 21, v0-2) against a real broker: the log start offset moves (offset -1: the
// high watermark), the answer is the new low watermark, fetches below it get OFFSET_OUT_OF_RANGE,
// ListOffsets earliest returns it, the segments wholly below it are deleted by the retention task,
// it is checkpointed at once (log-start-offset-checkpoint) and survives a restart; Kafka's codes for
// past the high watermark, negative offsets, unknown partitions and compacted topics.
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { test } from "node:test";
import { ApiVersionsApi, DeleteRecordsApi } from "../../src/protocol/api/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker } from "../helpers/broker.ts";
import { buildBatch } from "../helpers/record_batch.ts";
import { createTopic, fetchOnce, listOffset, produce, WireClient } from "../helpers/wire.ts";

interface DeleteResult {
  partitionIndex: number;
  lowWatermark: bigint;
  errorCode: number;
}

async function deleteRecords(c: WireClient, version: number, topic: string, partitions: [number, bigint][]): Promise<DeleteResult[]> {
  const res = await c.request(DeleteRecordsApi, version, {
    topics: [{ name: topic, partitions: partitions.map(([partitionIndex, offset]) => ({ partitionIndex, offset })) }],
    timeoutMs: 5000,
  });
  const topics = res.topics as { name: string; partitions: DeleteResult[] }[];
  assert.equal(topics[0].name, topic);
  return topics[0].partitions;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("delete records: moves the log start offset; fetches below it are out of range; earliest answers it", async () => {
  // The test batches are stamped in 2023: without retention.ms=-1, time retention would take them.
  const b = await startBroker({ "log.segment.bytes": "400", "log.retention.ms": "-1", "log.retention.check.interval.ms": "50", "log.segment.delete.delay.ms": "0" });
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "dr", { numPartitions: 2 })).errorCode, 0);
    for (let i = 0; i < 30; i++) {
      const r = await produce(c, "dr", 0, buildBatch([{ value: `value-${i}`.padEnd(60, ".") }]), 1);
      assert.equal(r.errorCode, 0);
    }
    const segmentsBefore = nodeFs.readdirSync(`${b.logDir}/dr-0`).filter((n) => n.endsWith(".log")).length;
    assert.ok(segmentsBefore >= 5, "several segments");

    for (const version of [0, 1, 2]) {
      const [r] = await deleteRecords(c, version, "dr", [[0, BigInt(5 + version)]]);
      assert.deepEqual(r, { partitionIndex: 0, lowWatermark: BigInt(5 + version), errorCode: 0 }, `v${version}`);
    }
    const [back] = await deleteRecords(c, 2, "dr", [[0, 3n]]);
    assert.deepEqual(back, { partitionIndex: 0, lowWatermark: 7n, errorCode: 0 }, "a lower offset leaves it where it is");

    const below = await fetchOnce(c, "dr", 0, 6n);
    assert.equal(below.errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
    const at = await fetchOnce(c, "dr", 0, 7n);
    assert.equal(at.errorCode, 0);
    assert.equal(at.logStartOffset, 7n);
    assert.ok((at.records?.length ?? 0) > 0);
    assert.deepEqual(await listOffset(c, "dr", 0, -2n), { errorCode: 0, offset: 7n });
    assert.equal(
      nodeFs.readFileSync(`${b.logDir}/log-start-offset-checkpoint`, "utf8"),
      "0\n1\ndr 0 7\n",
      "checkpointed at once, in Kafka's format",
    );

    const results = await deleteRecords(c, 1, "dr", [[0, 31n], [0, -5n], [7, 1n], [1, -1n]]);
    assert.deepEqual(results.map((r) => [r.partitionIndex, r.errorCode]), [
      [0, ErrorCode.OFFSET_OUT_OF_RANGE], // past the high watermark (30)
      [0, ErrorCode.OFFSET_OUT_OF_RANGE],
      [7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      [1, 0], // -1 on an empty partition: its high watermark, 0
    ]);
    assert.equal(results[3].lowWatermark, 0n);

    const [all] = await deleteRecords(c, 0, "dr", [[0, -1n]]);
    assert.deepEqual(all, { partitionIndex: 0, lowWatermark: 30n, errorCode: 0 }, "-1: up to the high watermark");
    assert.equal((await fetchOnce(c, "dr", 0, 29n)).errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
    assert.equal((await fetchOnce(c, "dr", 0, 30n)).errorCode, 0);

    // The retention task deletes every segment but the active one.
    const deadline = Date.now() + 5000;
    const liveLogs = () => nodeFs.readdirSync(`${b.logDir}/dr-0`).filter((n) => n.endsWith(".log"));
    while (liveLogs().length > 1 && Date.now() < deadline) await sleep(50);
    assert.equal(liveLogs().length, 1);

    // A clean restart keeps the start offset; appends continue at the end.
    c.close();
    await b.restart();
    const c2 = await WireClient.connect(b.broker.port);
    try {
      assert.deepEqual(await listOffset(c2, "dr", 0, -2n), { errorCode: 0, offset: 30n });
      assert.equal((await produce(c2, "dr", 0, buildBatch([{ value: "after" }]), 1)).baseOffset, 30n);
    } finally {
      c2.close();
    }
  } finally {
    c.close();
    await b.stop();
  }
});

test("delete records: a compacted topic refuses with POLICY_VIOLATION; ApiVersions lists key 21 v0-2", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "compacted", { configs: { "cleanup.policy": "compact" } })).errorCode, 0);
    assert.equal((await produce(c, "compacted", 0, buildBatch([{ key: "k", value: "v" }]), 1)).errorCode, 0);
    const [r] = await deleteRecords(c, 2, "compacted", [[0, 1n]]);
    assert.equal(r.errorCode, ErrorCode.POLICY_VIOLATION);
    const versions = await c.request(ApiVersionsApi, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" });
    const entry = (versions.apiKeys as { apiKey: number; minVersion: number; maxVersion: number }[]).find((k) => k.apiKey === 21);
    assert.deepEqual(entry && [entry.minVersion, entry.maxVersion], [0, 2]);
  } finally {
    c.close();
    await b.stop();
  }
});
