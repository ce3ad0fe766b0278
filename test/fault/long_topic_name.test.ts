// Issue 11, defect 2, over real sockets against a real broker process: deleting a topic with a
// legal 249-character name used to kill the broker (the rename to `<topic>-<p>.<uuid>-delete`
// passed 255 bytes: ENAMETOOLONG, the dir marked failed, exit 1, the orphaned dir back after a
// restart). Now the topic is deleted, the broker keeps serving, and after a restart nothing of the
// topic is left in the log dir.
import assert from "node:assert/strict";
import { readdirSync, rmSync } from "node:fs";
import { test } from "node:test";
import { DeleteTopicsApi, MetadataApi } from "../../src/protocol/api/mod.ts";
import { tempDir } from "../helpers/broker.ts";
import { type BrokerProcess, errorLines, spawnBrokerProcess } from "../helpers/broker_process.ts";
import { buildBatch } from "../helpers/record_batch.ts";
import { createTopic, fetchOnce, produce, WireClient } from "../helpers/wire.ts";

const LONG = "L".repeat(100) + "o".repeat(100) + "n".repeat(49); // 249 characters

async function topicNames(c: WireClient): Promise<string[]> {
  const res = await c.request(MetadataApi, 9, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  return (res.topics as { name: string }[]).map((t) => t.name);
}

const leftovers = (dir: string) => readdirSync(dir).filter((n) => n.startsWith("L") || n.endsWith("-delete"));

test("long topic name: a 249-character topic is created, used, deleted; the broker stays up; nothing is left after a restart", { timeout: 180_000 }, async () => {
  const dir = tempDir("strand-longname-");
  let broker: BrokerProcess | null = null;
  try {
    broker = await spawnBrokerProcess({}, dir);
    const c = await WireClient.connect(broker.port);
    try {
      assert.equal(LONG.length, 249);
      assert.equal((await createTopic(c, LONG, { numPartitions: 3 })).errorCode, 0);
      assert.equal((await createTopic(c, "other")).errorCode, 0);
      for (const p of [0, 1, 2]) assert.equal((await produce(c, LONG, p, buildBatch([{ value: `v${p}` }]), 1)).errorCode, 0);
      assert.equal(leftovers(dir).length, 3, "three partition dirs of 251 bytes each");

      const del = await c.request(DeleteTopicsApi, 4, { topicNames: [LONG], timeoutMs: 30_000 });
      assert.deepEqual((del.responses as { name: string; errorCode: number }[]).map((r) => [r.name, r.errorCode]), [[LONG, 0]]);
      // The broker serves on: metadata without the topic, produce and fetch elsewhere.
      assert.ok(!(await topicNames(c)).includes(LONG));
      assert.equal((await produce(c, "other", 0, buildBatch([{ value: "still here" }]), 1)).errorCode, 0);
      assert.equal((await fetchOnce(c, "other", 0, 0n)).errorCode, 0);
      assert.equal(broker.hasExited, false, "the broker is alive");
      // The log dirs go once the controller's StopReplica reaches the broker.
      for (let i = 0; i < 100 && leftovers(dir).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(leftovers(dir), [], "the partition dirs and their -delete renames are gone");
    } finally {
      c.close();
    }
    assert.doesNotMatch(broker.output(), /ENAMETOOLONG|log dir failed/);
    broker.signal("SIGTERM");
    assert.equal(await broker.exited, 0, `a clean stop:\n${broker.output().slice(-3000)}`);
    assert.deepEqual(errorLines(broker.output()), []);

    broker = await spawnBrokerProcess({}, dir);
    const c2 = await WireClient.connect(broker.port);
    try {
      assert.deepEqual(leftovers(dir), [], "nothing of the topic comes back after the restart");
      assert.ok(!(await topicNames(c2)).includes(LONG));
      // The name can be used again.
      assert.equal((await createTopic(c2, LONG)).errorCode, 0);
      assert.equal((await produce(c2, LONG, 0, buildBatch([{ value: "again" }]), 1)).errorCode, 0);
    } finally {
      c2.close();
    }
    broker.signal("SIGTERM");
    assert.equal(await broker.exited, 0);
    broker = null;
  } finally {
    if (broker !== null && !broker.hasExited) {
      broker.signal("SIGKILL");
      await broker.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
});
