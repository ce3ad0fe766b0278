// A failed log dir moves leadership (Kafka's LogDirEventNotification in ZooKeeper mode): three
// brokers in this process on one ZooKeeper, brokers 0 and 1 on faulty platforms with two log dirs
// each. Broker 0 (the controller, so its own answer takes the in-process path) loses the dir
// holding moves-0, which it leads; then broker 1 (answering over the wire) loses the dir holding
// moves-1, which it leads. Each time the broker writes /log_dir_event_notification/log_dir_event_<seq>,
// the controller sends it its replicas' states, it answers KAFKA_STORAGE_ERROR for those in the
// failed dir, and the controller elects another ISR member and takes the replica out of the ISR.
// kafkajs producers with acks=all write numbered records throughout; they go on acking after
// each failure, and every acknowledged record is read back once, in order.
import assert from "node:assert/strict";
import { existsSync, rmSync } from "node:fs";
import { test } from "node:test";
import { loadPlatform } from "../../src/platform/mod.ts";
import { CreateTopicsApi } from "../../src/protocol/mod.ts";
import { ZooKeeperClient } from "../../src/zk/mod.ts";
import { startBroker, type TestBroker, tempDir } from "../helpers/broker.ts";
import type { Cluster } from "../helpers/cluster.ts";
import { faultyPlatform, recordingLogger } from "../helpers/faulty_platform.ts";
import { WireClient } from "../helpers/wire.ts";
import { sharedZooKeeper, skipUnlessZooKeeper, sleep } from "../helpers/zookeeper.ts";
import { checkNumbered, NumberedProducer, readPartition } from "../cluster/workload.ts";

const zk = sharedZooKeeper();
const dec = new TextDecoder();

async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

test("log dir failure: the controller moves leadership of the failed dir's partitions to another ISR member; acks=all producers go on", { skip: skipUnlessZooKeeper(), timeout: 180_000 }, async () => {
  const server = await zk.get();
  const chroot = `/strand-logdir-leader-${process.pid}`;
  const root = tempDir("strand-logdir-leader-");
  const faulty = [faultyPlatform(await loadPlatform()), faultyPlatform(await loadPlatform())];
  const loggers = [recordingLogger(), recordingLogger(), recordingLogger()];
  const dirs = (id: number) => [`${root}/b${id}-x`, `${root}/b${id}-y`];
  const brokers: TestBroker[] = [];
  let zkc: ZooKeeperClient | null = null;
  const producers: NumberedProducer[] = [];
  try {
    for (const id of [0, 1, 2]) {
      brokers.push(await startBroker({
        "broker.id": String(id),
        "zookeeper.connect": server.connectString + chroot,
        "zookeeper.session.timeout.ms": "6000",
        "log.dirs": dirs(id).join(","),
        "auto.create.topics.enable": "false",
        "replica.lag.time.max.ms": "10000",
      }, `${root}/b${id}`, loggers[id], id < 2 ? faulty[id] : undefined));
    }
    // Opened once the first broker made the chroot.
    zkc = await ZooKeeperClient.connect(await loadPlatform(), { connectString: server.connectString + chroot, sessionTimeoutMs: 10_000 });
    const state = async (p: number) => JSON.parse(dec.decode((await zkc!.getData(`/brokers/topics/moves/partitions/${p}/state`)).data)) as { leader: number; isr: number[] };
    const controller = async () => JSON.parse(dec.decode((await zkc!.getData("/controller")).data)).brokerid as number;
    await until(async () => (await zkc!.exists("/controller")) !== null, "a controller");
    assert.equal(await controller(), 0, "broker 0 started first and is the controller");

    const c = await WireClient.connect(brokers[0].port);
    const created = await c.request(CreateTopicsApi, 7, {
      topics: [{ name: "moves", numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [0, 1, 2] }, { partitionIndex: 1, brokerIds: [1, 2, 0] }], configs: [] }],
      timeoutMs: 10_000,
      validateOnly: false,
    });
    c.close();
    assert.equal((created.topics as { errorCode: number }[])[0].errorCode, 0);
    await until(async () => (await state(0)).isr.length === 3 && (await state(1)).isr.length === 3, "both partitions fully in sync");

    // What the workload helpers need of a cluster, over these in-process brokers.
    const shim = {
      waitFor: (cond: () => boolean | Promise<boolean>, timeoutMs: number, what = "condition") => until(cond, what, timeoutMs),
      waitLeader: async (_topic: string, p: number, timeoutMs: number) => {
        let leader = -1;
        await until(async () => (leader = (await state(p)).leader) >= 0, `a leader for moves-${p}`, timeoutMs);
        return leader;
      },
      broker: (i: number) => brokers[i],
    } as unknown as Cluster;
    const bootstrap = () => brokers.map((b) => b.bootstrap).join(",");
    const producer = new NumberedProducer(bootstrap, "moves", [0, 1]);
    producers.push(producer);
    await producer.waitAcks(shim, 40, 30_000, "before any dir fails");

    const dirOf = (id: number, p: number) => dirs(id).find((d) => existsSync(`${d}/moves-${p}`));
    const steps = [{ broker: 0, partition: 0 }, { broker: 1, partition: 1 }];
    const failed = new Map<number, string>();
    for (const { broker, partition } of steps) {
      const dir = dirOf(broker, partition);
      assert.ok(dir !== undefined, `broker ${broker} holds moves-${partition} in one of its dirs`);
      assert.equal((await state(partition)).leader, broker, `broker ${broker} leads moves-${partition} before its dir fails`);
      failed.set(broker, dir);
      faulty[broker].fail(dir);
      // The failure is found by the next file operation there: the producer's next append.
      await until(async () => {
        const s = await state(partition);
        return s.leader >= 0 && s.leader !== broker && !s.isr.includes(broker);
      }, `moves-${partition}'s leadership and ISR leaving broker ${broker}`);
      await producer.waitAcks(shim, 40, 30_000, `after broker ${broker}'s dir failed`);
    }

    // Neither partition is led from a failed dir, and no ISR holds a replica in one.
    for (const p of [0, 1]) {
      const s = await state(p);
      for (const [b, dir] of failed) {
        if (dirOf(b, p) === dir) {
          assert.notEqual(s.leader, b, `moves-${p} not led by broker ${b}`);
          assert.ok(!s.isr.includes(b), `broker ${b} out of moves-${p}'s ISR ${s.isr}`);
        }
      }
    }
    assert.ok(loggers[0].lines.some((l) => l.msg === "replicas offline in a failed log dir: moving leadership" && l.fields.broker === 1), "the controller learnt broker 1's offline replicas from its wire answer");
    assert.ok(loggers[0].lines.some((l) => l.msg === "replicas offline in a failed log dir: moving leadership" && l.fields.broker === 0), "and its own from the in-process answer");
    assert.deepEqual((await zkc!.getChildren("/log_dir_event_notification")).children, [], "the controller consumed the notifications");

    await producer.stop();
    const contents = [await readPartition(shim, "moves", 0, 30_000), await readPartition(shim, "moves", 1, 30_000)];
    const summary = checkNumbered(producer, contents);
    console.log(`${producer.summary()}; read back ${summary.read}, duplicates ${summary.duplicates}`);
    assert.ok(summary.acked >= 120);
  } finally {
    for (const p of producers) await p.stop();
    await zkc?.close();
    for (const b of brokers.reverse()) await b.stop(true).catch(() => {});
    rmSync(root, { recursive: true, force: true });
    await zk.stop();
  }
});
