// Several log dirs from a client's side. DescribeLogDirs (API 35) on the wire: no client here has
// it (kafkajs, kafka-python 2.0.2 and confluent-kafka 1.7 lack describeLogDirs), so raw requests:
// v0 read back by a hand-written decoder of Kafka's v0 layout, v4 (flexible, with the volume's
// bytes) through the project's codec. Then a real removed disk: one dir deleted under a running
// broker; the broker notices (its next checkpoint write fails), takes that dir's partition
// offline, and kcat keeps producing to and consuming from the partitions of the other dirs.
import assert from "node:assert/strict";
import * as nodeFs from "node:fs";
import { test } from "node:test";
import { DescribeLogDirsApi } from "../../src/protocol/api/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker, tempDir } from "../helpers/broker.ts";
import { buildBatch } from "../helpers/record_batch.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { createTopic, produce, WireClient } from "../helpers/wire.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function threeDirs(root: string, extra: Record<string, string> = {}) {
  const dirs = ["d0", "d1", "d2"].map((d) => `${root}/${d}`);
  return { dirs, overrides: { "log.dirs": dirs.join(","), "log.retention.ms": "-1", ...extra } };
}

/** Kafka's DescribeLogDirsResponse v0, decoded by hand from the frame (after the size prefix). */
function decodeV0(frame: Uint8Array) {
  const dv = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  let at = 0;
  const take = (n: number) => (at += n) - n;
  const r = {
    int16: () => dv.getInt16(take(2)),
    int32: () => dv.getInt32(take(4)),
    int64: () => dv.getBigInt64(take(8)),
    bool: () => dv.getInt8(take(1)) !== 0,
    string: () => {
      const n = dv.getInt16(take(2));
      return new TextDecoder().decode(frame.subarray(take(n), at));
    },
  };
  const correlationId = r.int32();
  const throttleTimeMs = r.int32();
  const results = Array.from({ length: r.int32() }, () => ({
    errorCode: r.int16(),
    logDir: r.string(),
    topics: Array.from({ length: r.int32() }, () => ({
      name: r.string(),
      partitions: Array.from({ length: r.int32() }, () => ({
        partitionIndex: r.int32(),
        partitionSize: r.int64(),
        offsetLag: r.int64(),
        isFutureKey: r.bool(),
      })),
    })),
  }));
  assert.equal(at, frame.length, "the v0 frame is exactly Kafka's layout");
  return { correlationId, throttleTimeMs, results };
}

function sizeOnDisk(partitionDir: string): bigint {
  let n = 0;
  for (const f of nodeFs.readdirSync(partitionDir)) if (f.endsWith(".log")) n += nodeFs.statSync(`${partitionDir}/${f}`).size;
  return BigInt(n);
}

test("e2e log dirs: DescribeLogDirs v0 (Kafka's layout, decoded by hand) and v4 on the wire", async () => {
  const root = tempDir("strand-e2e-logdirs-");
  const { dirs, overrides } = threeDirs(root);
  const b = await startBroker(overrides, root);
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "wire", { numPartitions: 3 })).errorCode, 0);
    for (let p = 0; p < 3; p++) {
      for (let i = 0; i <= p; i++) assert.equal((await produce(c, "wire", p, buildBatch([{ value: `m${i}`.repeat(20) }]), 1)).errorCode, 0);
    }
    const id = await c.send(DescribeLogDirsApi, 0, { topics: null });
    const frame = await c.nextFrame();
    assert.ok(frame !== null);
    const v0 = decodeV0(frame);
    assert.equal(v0.correlationId, id);
    assert.equal(v0.throttleTimeMs, 0);
    assert.deepEqual(v0.results.map((r) => [r.errorCode, r.logDir]), dirs.map((d) => [0, d]));
    for (const [i, r] of v0.results.entries()) {
      // One partition per dir: partition i in dir i (each new partition goes to the emptiest dir).
      assert.deepEqual(r.topics.map((t) => t.name), ["wire"]);
      const [p] = r.topics[0].partitions;
      assert.deepEqual(p, { partitionIndex: i, partitionSize: sizeOnDisk(`${dirs[i]}/wire-${i}`), offsetLag: 0n, isFutureKey: false });
      assert.ok(p.partitionSize > 0n);
    }

    const v4 = await c.request(DescribeLogDirsApi, 4, { topics: [{ topic: "wire", partitions: [1] }] });
    assert.equal(v4.errorCode, 0);
    const results = v4.results as { errorCode: number; logDir: string; topics: { name: string; partitions: { partitionIndex: number; partitionSize: bigint }[] }[]; totalBytes: bigint; usableBytes: bigint }[];
    assert.deepEqual(results.map((r) => r.topics.length), [0, 1, 0], "only the dir holding wire-1 lists it");
    assert.equal(results[1].topics[0].partitions[0].partitionSize, sizeOnDisk(`${dirs[1]}/wire-1`));
    for (const r of results) {
      assert.ok(r.totalBytes > 0n && r.usableBytes > 0n && r.usableBytes <= r.totalBytes, `${r.logDir}: ${r.totalBytes} / ${r.usableBytes}`);
    }
  } finally {
    c.close();
    await b.stop();
  }
});

test("e2e log dirs: with one disk removed under the broker, kcat keeps producing and consuming on the others", { skip: skipUnless("kcat") }, async () => {
  const root = tempDir("strand-e2e-logdirs-");
  // A removed disk is noticed by the next file made in it: the high-watermark checkpoint here.
  const { dirs, overrides } = threeDirs(root, { "replica.high.watermark.checkpoint.interval.ms": "100" });
  const b = await startBroker(overrides, root);
  const c = await WireClient.connect(b.port);
  const kcat = (args: string[], input?: string) => run("kcat", ["-b", b.bootstrap, ...args], { input, timeoutMs: 60_000 });
  const lines = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}-${i}\n`).join("");
  try {
    assert.equal((await createTopic(c, "disks", { numPartitions: 3 })).errorCode, 0);
    for (let p = 0; p < 3; p++) {
      assert.ok(nodeFs.existsSync(`${dirs[p]}/disks-${p}`), `disks-${p} in ${dirs[p]}`);
      const r = await kcat(["-P", "-t", "disks", "-p", String(p), "-X", "acks=all"], lines(`before-p${p}`, 500));
      assert.equal(r.code, 0, r.stderr);
    }

    nodeFs.rmSync(dirs[2], { recursive: true, force: true });
    const deadline = Date.now() + 10_000;
    let codes: number[] = [];
    while (Date.now() < deadline) {
      const res = await c.request(DescribeLogDirsApi, 1, { topics: null });
      codes = (res.results as { errorCode: number }[]).map((r) => r.errorCode);
      if (codes[2] === ErrorCode.KAFKA_STORAGE_ERROR) break;
      await sleep(50);
    }
    assert.deepEqual(codes, [0, 0, ErrorCode.KAFKA_STORAGE_ERROR], "the removed dir is reported offline");

    for (const p of [0, 1]) {
      const r = await kcat(["-P", "-t", "disks", "-p", String(p), "-X", "acks=all"], lines(`after-p${p}`, 500));
      assert.equal(r.code, 0, r.stderr);
      const out = await kcat(["-C", "-t", "disks", "-p", String(p), "-o", "beginning", "-e", "-q"]);
      assert.equal(out.code, 0, out.stderr);
      assert.equal(out.stdout.toString(), lines(`before-p${p}`, 500) + lines(`after-p${p}`, 500), `disks-${p}`);
    }

    // What librdkafka sees: the partition of the removed disk has no leader and an offline replica.
    const md = await kcat(["-L", "-J", "-t", "disks"]);
    assert.equal(md.code, 0, md.stderr);
    const topic = (JSON.parse(md.stdout.toString()) as { topics: { topic: string; partitions: { partition: number; leader: number }[] }[] }).topics[0];
    assert.deepEqual(topic.partitions.map((p) => [p.partition, p.leader]).sort(), [[0, 0], [1, 0], [2, -1]]);
    const lost = await kcat(["-P", "-t", "disks", "-p", "2", "-X", "message.timeout.ms=1500"], "nowhere\n");
    assert.notEqual(lost.code, 0, "a produce to the lost partition is not acknowledged");
    assert.match(lost.stderr, /fail|timed out/i);
  } finally {
    c.close();
    await b.stop();
  }
});
