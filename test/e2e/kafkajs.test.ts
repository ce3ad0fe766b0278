// kafkajs 2.2.4 (npm) inside the test's own runtime against a real broker in this process: the
// admin client creates, lists, describes and deletes topics (a deleted topic leaves the metadata
// and its partition dirs leave the log dir); the producer sends keyed messages with headers
// across partitions with acks -1 and 1, plain and gzip; kcat reads them back and every message is
// present, in order within its partition, and admin.fetchTopicOffsets agrees with what was sent.
// kafkajs's consumer needs consumer groups, which strand does not have yet, so kcat reads.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { CompressionTypes, Kafka, logLevel } from "kafkajs";
import type { Admin, Message, Producer } from "kafkajs";
import { startBroker } from "../helpers/broker.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { assertStoredCodec, Codec } from "./stored_batches.ts";

const kcatSkip = skipUnless("kcat");

function client(bootstrap: string): Kafka {
  return new Kafka({
    clientId: "strand-e2e",
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 5_000,
    requestTimeout: 30_000,
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 2_000 },
  });
}

/** Rejects if p has not settled within ms, so a stuck client cannot hang the suite. */
function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

function partitionDirs(logDir: string, topic: string): string[] {
  return readdirSync(logDir).filter((d) => d.startsWith(`${topic}-`) && /^\d+$/.test(d.slice(topic.length + 1)));
}

test("kafkajs admin: createTopics, listTopics, fetchTopicMetadata, deleteTopics", async () => {
  const b = await startBroker();
  let admin: Admin | undefined;
  try {
    admin = client(b.bootstrap).admin();
    await within(15_000, "admin.connect", admin.connect());
    const created = await within(30_000, "createTopics", admin.createTopics({
      topics: [{ topic: "orders", numPartitions: 3, replicationFactor: 1 }, { topic: "audit", numPartitions: 1 }],
      waitForLeaders: true,
    }));
    assert.equal(created, true);
    // Creating an existing topic answers TOPIC_ALREADY_EXISTS, which kafkajs reports as false.
    assert.equal(await within(30_000, "createTopics again", admin.createTopics({ topics: [{ topic: "orders", numPartitions: 3 }] })), false);

    assert.deepEqual((await within(15_000, "listTopics", admin.listTopics())).sort(), ["audit", "orders"]);

    const { topics } = await within(15_000, "fetchTopicMetadata", admin.fetchTopicMetadata({ topics: ["orders"] }));
    assert.equal(topics.length, 1);
    assert.equal(topics[0].name, "orders");
    const parts = [...topics[0].partitions].sort((x, y) => x.partitionId - y.partitionId);
    assert.deepEqual(parts.map((p) => p.partitionId), [0, 1, 2]);
    for (const p of parts) {
      assert.equal(p.partitionErrorCode, 0);
      assert.equal(p.leader, 0);
      assert.deepEqual(p.replicas, [0]);
      assert.deepEqual(p.isr, [0]);
    }
    assert.deepEqual(partitionDirs(b.logDir, "orders").sort(), ["orders-0", "orders-1", "orders-2"]);

    await within(30_000, "deleteTopics", admin.deleteTopics({ topics: ["orders"], timeout: 10_000 }));
    assert.deepEqual(await within(15_000, "listTopics", admin.listTopics()), ["audit"]);
    await assert.rejects(
      within(30_000, "fetchTopicMetadata of a deleted topic", admin.fetchTopicMetadata({ topics: ["orders"] })),
      (e: Error) => /does not host this topic-partition|UNKNOWN_TOPIC_OR_PARTITION/i.test(`${e.message} ${(e as { type?: string }).type}`),
    );
    // The partition dirs go (Kafka renames them to <topic>-<p>.<id>-delete first; either way
    // nothing named like a live partition of the topic may remain, and soon nothing at all).
    const deadline = Date.now() + 10_000;
    while (readdirSync(b.logDir).some((d) => d.startsWith("orders-")) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(readdirSync(b.logDir).filter((d) => d.startsWith("orders-")), []);
    assert.ok(existsSync(join(b.logDir, "audit-0")));
  } finally {
    await admin?.disconnect().catch(() => {});
    await b.stop();
  }
});

const MESSAGES = 10_000;
const PARTITIONS = 3;
const BATCH = 500;

interface Sent {
  key: string;
  value: string;
  header: string;
}

function message(tag: string, i: number): Message & Sent {
  const key = `k-${tag}-${i}`;
  const value = `v-${tag}-${i}-${"x".repeat(i % 50)}`;
  const header = `h-${i}`;
  return { key, value, header, headers: { seq: header, tag } };
}

/** Sends MESSAGES in batches; the default partitioner spreads keys across the partitions. */
async function produceAll(producer: Producer, topic: string, tag: string, acks: number, gzip: boolean) {
  for (let start = 0; start < MESSAGES; start += BATCH) {
    const messages: Message[] = [];
    for (let i = start; i < Math.min(MESSAGES, start + BATCH); i++) {
      const m = message(tag, i);
      messages.push({ key: m.key, value: m.value, headers: m.headers });
    }
    const res = await within(30_000, `send ${tag} ${start}`, producer.send({
      topic,
      acks,
      timeout: 10_000,
      compression: gzip ? CompressionTypes.GZIP : CompressionTypes.None,
      messages,
    }));
    for (const r of res) assert.equal(r.errorCode, 0, `${tag}: partition ${r.partition} error ${r.errorCode}`);
  }
}

interface Read {
  partition: number;
  offset: number;
  key: string;
  value: string;
  header: string;
}

/** Reads the whole topic with kcat: one line per message, tab-separated. */
async function readWithKcat(bootstrap: string, topic: string): Promise<Read[]> {
  const r = await run("kcat", [
    "-b", bootstrap, "-C", "-t", topic, "-o", "beginning", "-e", "-q",
    "-f", "%p\\t%o\\t%k\\t%h\\t%s\\n",
  ], { timeoutMs: 120_000 });
  assert.equal(r.code, 0, `kcat -C failed: ${r.stderr}`);
  return r.stdout.toString().split("\n").filter((l) => l !== "").map((line) => {
    const [p, o, key, headers, value] = line.split("\t");
    // %h prints headers as name=value pairs separated by commas.
    const seq = headers.split(",").find((h) => h.startsWith("seq="));
    return { partition: Number(p), offset: Number(o), key, value, header: seq?.slice(4) ?? "" };
  });
}

function checkRoundTrip(tag: string, read: Read[]): Map<number, number> {
  const counts = new Map<number, number>();
  const seen = new Set<number>();
  const lastSeqInPartition = new Map<number, number>();
  for (const r of read) {
    const m = /^k-(.+)-(\d+)$/.exec(r.key);
    assert.ok(m && m[1] === tag, `${tag}: unexpected key ${r.key}`);
    const i = Number(m[2]);
    const want = message(tag, i);
    assert.equal(r.value, want.value, `${tag}: value of message ${i}`);
    assert.equal(r.header, want.header, `${tag}: header of message ${i}`);
    assert.ok(!seen.has(i), `${tag}: message ${i} read twice`);
    seen.add(i);
    // Offsets are dense from 0 within a partition, and messages keep the order they were sent in.
    const n = counts.get(r.partition) ?? 0;
    assert.equal(r.offset, n, `${tag}: offset in partition ${r.partition}`);
    counts.set(r.partition, n + 1);
    const last = lastSeqInPartition.get(r.partition) ?? -1;
    assert.ok(i > last, `${tag}: message ${i} after ${last} in partition ${r.partition}`);
    lastSeqInPartition.set(r.partition, i);
  }
  assert.equal(seen.size, MESSAGES, `${tag}: every message read back`);
  return counts;
}

for (const { acks, gzip } of [
  { acks: -1, gzip: false },
  { acks: 1, gzip: false },
  { acks: -1, gzip: true },
  { acks: 1, gzip: true },
]) {
  const tag = `acks${acks === -1 ? "all" : acks}-${gzip ? "gzip" : "none"}`;
  test(`kafkajs producer: ${MESSAGES} keyed messages with headers, acks ${acks}, ${gzip ? "gzip" : "uncompressed"}; kcat reads all in order`, { skip: kcatSkip }, async () => {
    const b = await startBroker();
    const kafka = client(b.bootstrap);
    const admin = kafka.admin();
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    try {
      await within(15_000, "admin.connect", admin.connect());
      await within(30_000, "createTopics", admin.createTopics({ topics: [{ topic: tag, numPartitions: PARTITIONS }], waitForLeaders: true }));
      await within(15_000, "producer.connect", producer.connect());
      await produceAll(producer, tag, tag, acks, gzip);

      const counts = checkRoundTrip(tag, await readWithKcat(b.bootstrap, tag));
      assert.equal(counts.size, PARTITIONS, `${tag}: messages in every partition`);
      // The broker stores the producer's batches as sent: gzip (codec 1) stays gzip.
      for (let p = 0; p < PARTITIONS; p++) assertStoredCodec(b.logDir, tag, p, gzip ? Codec.gzip : Codec.none);

      const offsets = await within(15_000, "fetchTopicOffsets", admin.fetchTopicOffsets(tag));
      assert.equal(offsets.length, PARTITIONS);
      for (const o of offsets) {
        assert.equal(o.low, "0");
        assert.equal(o.offset, String(counts.get(o.partition) ?? 0), `${tag}: end offset of partition ${o.partition}`);
        assert.equal(o.high, o.offset);
      }
    } finally {
      await producer.disconnect().catch(() => {});
      await admin.disconnect().catch(() => {});
      await b.stop();
    }
  });
}
