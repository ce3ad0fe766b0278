// Burrow 1.2.1 (Debian burrow, built with sarama 1.22.1) reading consumer lag from strand, as
// operators monitor Kafka: its kafka consumer module reads __consumer_offsets from the start and
// decodes the offset-commit keys and values (Kafka's binary formats), its cluster module polls the
// partitions' end offsets, and its HTTP API answers each partition's current lag. Burrow needs
// ZooKeeper for its own coordination: a real one (test/helpers/zookeeper.ts). The lag Burrow
// reports matches what strand's admin API shows (GET /v1/groups/{g}), before and after the
// group commits again and more is produced.
//
// Burrow 1.2.1 knows GroupMetadataValue up to v2 and logs "failed to decode ... value version 3"
// for the group metadata Kafka 2.3+ (and strand) write: it then has no member list, as against
// Kafka. The offsets, which lag comes from, decode.
import { test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startBroker, tempDir } from "../helpers/broker.ts";
import { commitOffsets, findCoordinator } from "../helpers/groups.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { skipUnless, stopProcess } from "../helpers/tools.ts";
import { createTopic, listOffset, produce, WireClient } from "../helpers/wire.ts";
import { freePort, skipUnlessZooKeeper, startZooKeeper, type ZkServer } from "../helpers/zookeeper.ts";

const WAIT_MS = 90_000;
const TOPIC = "burrowed";
const GROUP = "lagging-consumers";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function getJson(url: string): Promise<Record<string, unknown> | null> {
  try {
    const r = await fetch(url);
    return (await r.json()) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** strand's own view: partition → lag, from the admin API. */
async function strandLags(adminUrl: string): Promise<{ lags: Record<number, number>; total: number }> {
  const g = (await getJson(`${adminUrl}/v1/groups/${GROUP}`)) as { offsets: { topic: string; partition: number; lag: number }[]; total_lag: number } | null;
  assert.ok(g !== null, "strand's admin API answers the group");
  const lags: Record<number, number> = {};
  for (const o of g.offsets) if (o.topic === TOPIC) lags[o.partition] = o.lag;
  return { lags, total: g.total_lag };
}

interface BurrowPartition {
  topic: string;
  partition: number;
  current_lag: number;
  end: { offset: number } | null;
}

/** Polls Burrow's lag endpoint until it reports `want` (partition → lag); returns its answer. */
async function burrowLagsReach(burrowUrl: string, want: Record<number, number>, log: () => string): Promise<{ lags: Record<number, number>; total: number }> {
  const deadline = Date.now() + WAIT_MS;
  let last: unknown = null;
  for (;;) {
    const r = await getJson(`${burrowUrl}/v3/kafka/strand/consumer/${GROUP}/lag`);
    last = r;
    const status = (r?.status ?? null) as { partitions: BurrowPartition[]; totallag: number } | null;
    if (status !== null && Array.isArray(status.partitions)) {
      const lags: Record<number, number> = {};
      for (const p of status.partitions) if (p.topic === TOPIC) lags[p.partition] = p.current_lag;
      if (JSON.stringify(lags) === JSON.stringify(want)) return { lags, total: status.totallag };
    }
    if (Date.now() > deadline) assert.fail(`Burrow never reported lags ${JSON.stringify(want)}; last answer ${JSON.stringify(last)}; Burrow said: ${log().slice(-4000)}`);
    await sleep(500);
  }
}

test("Burrow 1.2.1 reads a group's commits from __consumer_offsets and reports the lag strand's admin API shows", { skip: skipUnless("burrow") || skipUnlessZooKeeper() }, async () => {
  const zk: ZkServer = await startZooKeeper();
  const b = await startBroker({ "admin.listeners": "http://127.0.0.1:0", "offsets.topic.num.partitions": "5" });
  const c = await WireClient.connect(b.port);
  const dir = tempDir("strand-burrow-");
  let burrow: ChildProcess | null = null;
  let log = "";
  try {
    assert.equal((await createTopic(c, TOPIC, { numPartitions: 3 })).errorCode, 0);
    const sizes = [100, 200, 300];
    for (let p = 0; p < 3; p++) assert.equal((await produce(c, TOPIC, p, buildBatch(valueRecords(sizes[p], `p${p}-`)))).errorCode, 0);
    await findCoordinator(c, GROUP);
    // A standalone commit (generation -1, no member), as an admin tool or a manually assigned consumer does.
    assert.deepEqual(await commitOffsets(c, GROUP, { [TOPIC]: { 0: 40n, 1: 200n, 2: 10n } }), [0, 0, 0]);
    const first = await strandLags(b.adminUrl);
    assert.deepEqual(first, { lags: { 0: 60, 1: 0, 2: 290 }, total: 350 });

    const httpPort = await freePort();
    writeFileSync(join(dir, "burrow.toml"), [
      "[general]",
      `pidfile="${join(dir, "burrow.pid")}"`,
      "[logging]",
      `level="info"`,
      "[zookeeper]",
      `servers=["${zk.connectString}"]`,
      "timeout=6",
      `root-path="/burrow"`,
      "[client-profile.strand]",
      `client-id="burrow"`,
      `kafka-version="2.0.0"`,
      "[cluster.strand]",
      `class-name="kafka"`,
      `servers=["${b.bootstrap}"]`,
      `client-profile="strand"`,
      "topic-refresh=2",
      "offset-refresh=1",
      "[consumer.strand]",
      `class-name="kafka"`,
      `cluster="strand"`,
      `servers=["${b.bootstrap}"]`,
      `client-profile="strand"`,
      "start-latest=false",
      "[httpserver.default]",
      `address="127.0.0.1:${httpPort}"`,
      "[storage.default]",
      `class-name="inmemory"`,
      "workers=2",
      "intervals=10",
      "expire-group=604800",
      "min-distance=1",
      "[evaluator.default]",
      `class-name="caching"`,
      "expire-cache=1",
      "",
    ].join("\n"));
    burrow = spawn("/usr/bin/Burrow", ["--config-dir", dir], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    burrow.stdout!.on("data", (d: Buffer) => (log = (log + d.toString()).slice(-200_000)));
    burrow.stderr!.on("data", (d: Buffer) => (log = (log + d.toString()).slice(-200_000)));
    const burrowUrl = `http://127.0.0.1:${httpPort}`;

    const seen = await burrowLagsReach(burrowUrl, first.lags, () => log);
    assert.equal(seen.total, first.total);
    // The cluster module's view of the partitions' ends (ListOffsets, latest) is strand's.
    const ends = [];
    for (let p = 0; p < 3; p++) ends.push(Number((await listOffset(c, TOPIC, p, -1n)).offset));
    assert.deepEqual(ends, sizes);
    assert.deepEqual((await getJson(`${burrowUrl}/v3/kafka/strand/topic/${TOPIC}`))?.offsets, ends);

    // The group moves on and more arrives: both views follow.
    assert.equal((await produce(c, TOPIC, 1, buildBatch(valueRecords(50, "p1-more-")))).errorCode, 0);
    assert.deepEqual(await commitOffsets(c, GROUP, { [TOPIC]: { 2: 300n } }), [0]);
    const second = await strandLags(b.adminUrl);
    assert.deepEqual(second, { lags: { 0: 60, 1: 50, 2: 0 }, total: 110 });
    const seenAgain = await burrowLagsReach(burrowUrl, second.lags, () => log);
    assert.equal(seenAgain.total, second.total);
    assert.doesNotMatch(log, /"level":"(error|panic|fatal)"/, "Burrow logged no error");
  } finally {
    if (burrow !== null) await stopProcess(burrow);
    c.close();
    await b.stop();
    await zk.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
});
