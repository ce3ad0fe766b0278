// Transactions on a broker process (ZooKeeper; one plain listener, the inter-broker one, so the
// test may send WriteTxnMarkers as a coordinator would) that is SIGKILLed: hand-built
// transactional batches (one committed, one aborted, one left open), markers by WriteTxnMarkers,
// then kill -9 and a restart on the same dir. Real read_committed clients (kcat and
// confluent-kafka-python, both librdkafka, isolation.level=read_committed) read the committed
// records only and stop at the open transaction, before and after the crash; kcat with
// read_uncommitted reads the aborted and open ones too. After the crash the open transaction is
// still open (the last stable offset is rebuilt from the log) and the aborted one still listed
// (its `.txnindex` entry rebuilt); committing it lets the readers through.
import assert from "node:assert/strict";
import { test } from "node:test";
import { tempDir } from "../helpers/broker.ts";
import { spawnBrokerProcess } from "../helpers/broker_process.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { fetchIsolated, plainBatch, produceAs, txnBatch, writeMarker } from "../helpers/txn.ts";
import { createTopic, produce, WireClient } from "../helpers/wire.ts";
import { skipUnlessZooKeeper, startZooKeeper } from "../helpers/zookeeper.ts";
import { rmSync } from "node:fs";
import { ErrorCode } from "../../src/util/errors.ts";

const T = "txn-crash";

const kcatRead = async (port: number, isolation: string) => {
  const r = await run("kcat", ["-b", `127.0.0.1:${port}`, "-C", "-t", T, "-p", "0", "-o", "beginning", "-e", "-q", "-X", `isolation.level=${isolation}`, "-f", "%s\n"], { timeoutMs: 60_000 });
  assert.equal(r.code, 0, `kcat: ${r.stderr}`);
  return r.stdout.toString().split("\n").filter((l) => l !== "");
};

const PY = `
import sys
from confluent_kafka import Consumer, TopicPartition, KafkaError, OFFSET_BEGINNING
c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "txn-crash-reader", "enable.auto.commit": False,
              "isolation.level": "read_committed", "enable.partition.eof": True})
c.assign([TopicPartition(sys.argv[2], 0, OFFSET_BEGINNING)])
out = []
while True:
    m = c.poll(30)
    if m is None:
        print("TIMEOUT"); sys.exit(1)
    if m.error():
        if m.error().code() == KafkaError._PARTITION_EOF:
            break
        print("ERROR", m.error()); sys.exit(1)
    out.append(m.value().decode())
c.close()
print(",".join(out))
`;

const pythonRead = async (port: number) => {
  const r = await run("/usr/bin/python3", ["-c", PY, `127.0.0.1:${port}`, T], { timeoutMs: 90_000 });
  assert.equal(r.code, 0, `confluent-kafka: ${r.stdout} ${r.stderr}`);
  return r.stdout.toString().trim().split("\n").pop()!.split(",").filter((v) => v !== "");
};

async function waitLeader(c: WireClient): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const r = await produce(c, T, 0, plainBatch(1, "probe-"));
    if (r.errorCode === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`${T}-0 got no leader`);
}

const skip = skipUnlessZooKeeper() || skipUnless("kcat") || skipUnless("confluent_kafka");

test("transactions survive kill -9: read_committed kcat and confluent-kafka skip aborted data and stop at the open transaction, before and after", { skip, timeout: 300_000 }, async () => {
  const zk = await startZooKeeper();
  const dir = tempDir("strand-txn-crash-");
  // Hand-built transactions (no coordinator behind their producer ids): KIP-890's verification off.
  const overrides = { "zookeeper.connect": `127.0.0.1:${zk.port}`, "zookeeper.session.timeout.ms": "6000", "transaction.partition.verification.enable": "false" };
  let b = await spawnBrokerProcess(overrides, dir);
  let c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, T)).errorCode, 0);
    await waitLeader(c); // probe-0 at 0
    assert.equal((await produceAs(c, "hand-built", T, 0, txnBatch(7001n, 0, 0, 2, "committed-"))).errorCode, 0);
    assert.equal((await produceAs(c, "hand-built", T, 0, txnBatch(7002n, 0, 0, 2, "aborted-"))).errorCode, 0);
    assert.equal((await produce(c, T, 0, plainBatch(1, "plain-"))).errorCode, 0);
    assert.deepEqual(await writeMarker(c, { producerId: 7001n, producerEpoch: 0, committed: true, coordinatorEpoch: 1, partitions: [[T, 0]] }), { [`${T}-0`]: 0 });
    assert.deepEqual(await writeMarker(c, { producerId: 7002n, producerEpoch: 0, committed: false, coordinatorEpoch: 1, partitions: [[T, 0]] }), { [`${T}-0`]: 0 });
    const openAt = (await produceAs(c, "hand-built", T, 0, txnBatch(7003n, 0, 0, 2, "open-"))).baseOffset;
    assert.equal((await produce(c, T, 0, plainBatch(1, "late-"))).errorCode, 0);
    const committed = ["probe-0", "committed-0", "committed-1", "plain-0"];
    const everything = ["probe-0", "committed-0", "committed-1", "aborted-0", "aborted-1", "plain-0", "open-0", "open-1", "late-0"];
    assert.deepEqual(await kcatRead(b.port, "read_committed"), committed);
    assert.deepEqual(await pythonRead(b.port), committed);
    assert.deepEqual(await kcatRead(b.port, "read_uncommitted"), everything);

    c.close();
    b.signal("SIGKILL");
    await b.exited;
    // The dead broker's ZooKeeper session holds /brokers/ids/0 until it times out.
    for (let i = 0; ; i++) {
      try {
        b = await spawnBrokerProcess(overrides, dir);
        break;
      } catch (e) {
        if (i >= 30 || !/already registered/.test(String(e))) throw e;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
    c = await WireClient.connect(b.port);
    await waitLeader(c); // probe-0 again, after late-0
    const f = await fetchIsolated(c, T, 0n, 1);
    assert.equal(f.lastStableOffset, openAt, "the open transaction is still open after kill -9");
    assert.equal(f.abortedTransactions?.length, 1, "the aborted transaction is still listed");
    assert.equal(f.abortedTransactions?.[0].producerId, 7002n);
    assert.deepEqual(await kcatRead(b.port, "read_committed"), committed);
    assert.deepEqual(await pythonRead(b.port), committed);
    assert.deepEqual(await kcatRead(b.port, "read_uncommitted"), [...everything, "probe-0"]);
    // The coordinator (here the test) still fences an old coordinator epoch after the crash.
    assert.deepEqual(await writeMarker(c, { producerId: 7001n, producerEpoch: 0, committed: false, coordinatorEpoch: 0, partitions: [[T, 0]] }), { [`${T}-0`]: ErrorCode.TRANSACTION_COORDINATOR_FENCED });
    assert.deepEqual(await writeMarker(c, { producerId: 7003n, producerEpoch: 0, committed: true, coordinatorEpoch: 1, partitions: [[T, 0]] }), { [`${T}-0`]: 0 });
    const after = [...committed, "open-0", "open-1", "late-0", "probe-0"];
    assert.deepEqual(await kcatRead(b.port, "read_committed"), after);
    assert.deepEqual(await pythonRead(b.port), after);
  } finally {
    c.close();
    await b.stop();
    await zk.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
});
