// Fetch v0-3 against consumers of the 0.8-0.10 era, reading what a record-batch-v2 producer wrote:
// kcat (librdkafka, Produce v3+ batches v2) writes keyed lines plain and gzip-compressed; kafka-python
// 2.0.2 told to speak Kafka 0.8.2 / 0.9 / 0.10.0 / 0.10.1 fetches with v0 / v1 / v2 / v3 and
// decodes the down-converted message sets (magic 0 or 1) with their CRC32 checked; kafkajs, its
// Broker given strand's ApiVersions with Fetch capped at v0 and at v2, decodes them with its own
// message-set decoder. message.downconversion.enable=false answers UNSUPPORTED_VERSION, as Kafka.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { FetchApi } from "../../src/protocol/api/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { startBroker } from "../helpers/broker.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { concat, legacyMessage } from "../helpers/legacy_messages.ts";
import { BASE_TIMESTAMP, buildBatch } from "../helpers/record_batch.ts";
import { createTopic, produce, WireClient } from "../helpers/wire.ts";
import { storedBatches } from "./stored_batches.ts";

const PY = join(dirname(fileURLToPath(import.meta.url)), "py", "kafka_python_old_fetch.py");
const N = 2_000;
const kcatSkip = skipUnless("kcat");
const pySkip = kcatSkip || skipUnless("kafka");

function keyedLines(n: number, prefix: string): string {
  let s = "";
  for (let i = 0; i < n; i++) s += `k${i}:${prefix}-${i}-${"x".repeat(i % 50)}\n`;
  return s;
}

async function kcatProduce(bootstrap: string, topic: string, codec: string) {
  const r = await run("kcat", ["-b", bootstrap, "-P", "-t", topic, "-p", "0", "-K", ":", "-X", "acks=all", "-z", codec], { input: keyedLines(N, codec), timeoutMs: 120_000 });
  assert.equal(r.code, 0, `kcat -P failed: ${r.stderr}`);
}

interface OldFetch {
  received: number;
  records: [number, string, string, number, number][];
  errors: string[];
}

async function oldConsumer(bootstrap: string, topic: string, apiVersion: string, ...extra: string[]): Promise<OldFetch> {
  const r = await run("/usr/bin/python3", [PY, bootstrap, topic, String(N), apiVersion, ...extra], { timeoutMs: 120_000 });
  const last = r.stdout.toString().trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(last);
  } catch {
    assert.fail(`kafka-python ${apiVersion}: exit ${r.code}, stdout ${last.slice(-300)} stderr ${r.stderr.slice(-2000)}`);
  }
}

function assertAll(got: OldFetch, codec: string, why: string) {
  assert.deepEqual(got.errors, [], why);
  assert.equal(got.received, N, why);
  got.records.forEach(([offset, key, value], i) => {
    assert.equal(offset, i, why);
    assert.equal(key, `k${i}`, why);
    assert.equal(value, `${codec}-${i}-${"x".repeat(i % 50)}`, why);
  });
}

test("kafka-python as Kafka 0.8.2, 0.9, 0.10.0 and 0.10.1 (Fetch v0-3) reads kcat's batches v2, plain and gzip, down-converted", { skip: pySkip }, async () => {
  const b = await startBroker();
  try {
    // (Debian's python3-kafka has no snappy or lz4 library here; those wrappers are checked by
    // test/protocol/down_convert.test.ts through the produce path's own legacy decoder.)
    for (const codec of ["none", "gzip"]) {
      const topic = `old-${codec}`;
      await kcatProduce(b.bootstrap, topic, codec);
      if (codec !== "none") assert.ok(storedBatches(b.logDir, topic, 0).some((s) => s.codec !== 0), `${codec}: stored compressed`);
      for (const v of ["0.8.2", "0.9", "0.10.0", "0.10.1"]) {
        const got = await oldConsumer(b.bootstrap, topic, v);
        assertAll(got, codec, `${codec} as ${v}`);
        const magic1 = v.startsWith("0.10");
        // kafka-python reports magic-0 messages without a timestamp (-1) and magic 1 with kcat's CreateTime (type 0).
        assert.ok(got.records.every(([, , , ts, type]) => magic1 ? ts > 1_600_000_000_000 && type === 0 : ts === -1 || ts === null), `${codec} as ${v}: timestamps`);
      }
    }
    // A small max.partition.fetch.bytes: many fetches, each a bounded down-converted answer, still every message once.
    assertAll(await oldConsumer(b.bootstrap, "old-none", "0.10.1", "2000"), "none", "small partition fetch bytes");
    assertAll(await oldConsumer(b.bootstrap, "old-gzip", "0.9", "100000"), "gzip", "v1 small partition fetch bytes");
  } finally {
    await b.stop();
  }
});

test("kafkajs with Fetch pinned to v0 and v2 decodes strand's down-converted answers (plain and gzip)", { skip: kcatSkip }, async () => {
  const require = createRequire(import.meta.url);
  const KafkaJsBroker = require("kafkajs/src/broker");
  const ConnectionPool = require("kafkajs/src/network/connectionPool");
  const socketFactory = require("kafkajs/src/network/socketFactory")();
  const { createLogger, LEVELS } = require("kafkajs/src/loggers");
  const logger = createLogger({ level: LEVELS.NOTHING, logCreator: () => () => {} });
  const b = await startBroker();
  const pool = () =>
    new ConnectionPool({ host: "127.0.0.1", port: b.port, logger, socketFactory, connectionTimeout: 5_000, requestTimeout: 10_000, clientId: "kafkajs-old" });
  // deno-lint-ignore no-explicit-any
  const brokers: any[] = [];
  try {
    for (const codec of ["none", "gzip"]) await kcatProduce(b.bootstrap, `kjs-${codec}`, codec);
    const probe = new KafkaJsBroker({ connectionPool: pool(), logger });
    brokers.push(probe);
    await probe.connect();
    assert.equal(probe.versions[1].minVersion, 0, "ApiVersions advertises Fetch from v0");
    for (const fetchVersion of [0, 2]) {
      const old = new KafkaJsBroker({ connectionPool: pool(), logger, versions: { ...probe.versions, 1: { minVersion: 0, maxVersion: fetchVersion } } });
      brokers.push(old);
      await old.connect();
      for (const codec of ["none", "gzip"]) {
        const seen: { offset: string; key: string; value: string; timestamp: string; magicByte: number }[] = [];
        for (let offset = 0; seen.length < N;) {
          const res = await old.fetch({
            replicaId: -1,
            maxWaitTime: 100,
            minBytes: 1,
            topics: [{ topic: `kjs-${codec}`, partitions: [{ partition: 0, fetchOffset: String(offset), maxBytes: 64 * 1024 }] }],
          });
          const p = res.responses[0].partitions[0];
          assert.equal(p.errorCode, 0);
          // deno-lint-ignore no-explicit-any
          const fresh = p.messages.filter((m: any) => Number(m.offset) >= offset);
          assert.ok(fresh.length > 0, `v${fetchVersion} ${codec}: progress at ${offset}`);
          // deno-lint-ignore no-explicit-any
          for (const m of fresh as any[]) seen.push({ offset: m.offset, key: m.key.toString(), value: m.value.toString(), timestamp: m.timestamp, magicByte: m.magicByte });
          offset = Number(seen[seen.length - 1].offset) + 1;
        }
        const why = `kafkajs Fetch v${fetchVersion} ${codec}`;
        assert.deepEqual(seen.map((m) => Number(m.offset)), [...Array(N).keys()], why);
        assert.ok(seen.every((m, i) => m.key === `k${i}` && m.value === `${codec}-${i}-${"x".repeat(i % 50)}`), why);
        assert.ok(seen.every((m) => m.magicByte === (fetchVersion <= 1 ? 0 : 1)), `${why}: magic`);
      }
    }
  } finally {
    for (const k of brokers) await k.disconnect();
    await b.stop();
  }
});

/** Partition 0 of topic as a Fetch of `version` answers it (a consumer's, 1 MiB at most). */
async function fetchPartition0(c: WireClient, version: number, topic: string, fetchOffset: bigint) {
  const res = await c.request(FetchApi, version, {
    replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0,
    topics: [{ topic, partitions: [{ partition: 0, fetchOffset, partitionMaxBytes: 1 << 20 }] }],
  });
  return (res.responses as { partitions: { errorCode: number; highWatermark: bigint; records: Uint8Array | null }[] }[])[0].partitions[0];
}

test("Fetch v0-3 over a socket: the exact legacy messages (CRC32 each); message.downconversion.enable=false answers UNSUPPORTED_VERSION, v4 still reads", async () => {
  const b = await startBroker();
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "nodown", { configs: { "message.downconversion.enable": "false" } })).errorCode, ErrorCode.NONE);
    assert.equal((await createTopic(c, "down")).errorCode, ErrorCode.NONE);
    for (const t of ["nodown", "down"]) {
      assert.equal((await produce(c, t, 0, buildBatch([{ key: "a", value: "1" }, { key: null, value: "2", timestampDelta: 5 }]))).errorCode, ErrorCode.NONE);
    }
    const fetch = (version: number, topic: string, fetchOffset = 0n) => fetchPartition0(c, version, topic, fetchOffset);
    for (const v of [0, 1, 2, 3]) {
      const refused = await fetch(v, "nodown");
      assert.equal(refused.errorCode, ErrorCode.UNSUPPORTED_VERSION, `v${v}`);
      assert.equal(refused.highWatermark, -1n, `v${v}`);
      const ok = await fetch(v, "down");
      assert.equal(ok.errorCode, ErrorCode.NONE, `v${v} default`);
      assert.equal(ok.highWatermark, 2n);
      const magic = v <= 1 ? 0 : 1;
      assert.deepEqual(ok.records, concat(
        legacyMessage({ magic, offset: 0n, timestamp: BASE_TIMESTAMP, key: "a", value: "1" }),
        legacyMessage({ magic, offset: 1n, timestamp: BASE_TIMESTAMP + 5n, key: null, value: "2" }),
      ), `v${v}: magic ${magic} messages`);
      assert.deepEqual((await fetch(v, "down", 1n)).records, legacyMessage({ magic, offset: 1n, timestamp: BASE_TIMESTAMP + 5n, value: "2" }));
    }
    assert.equal((await fetch(4, "nodown")).errorCode, ErrorCode.NONE);
  } finally {
    c.close();
    await b.stop();
  }
});

test("log.message.downconversion.enable=false on the broker: Fetch v0-3 UNSUPPORTED_VERSION unless the topic sets message.downconversion.enable=true", async () => {
  const b = await startBroker({ "log.message.downconversion.enable": "false" });
  const c = await WireClient.connect(b.port);
  try {
    assert.equal((await createTopic(c, "plain")).errorCode, ErrorCode.NONE);
    assert.equal((await createTopic(c, "allowed", { configs: { "message.downconversion.enable": "true" } })).errorCode, ErrorCode.NONE);
    const code = async (topic: string) => (await fetchPartition0(c, 2, topic, 0n)).errorCode;
    assert.equal(await code("plain"), ErrorCode.UNSUPPORTED_VERSION);
    assert.equal(await code("allowed"), ErrorCode.NONE);
  } finally {
    c.close();
    await b.stop();
  }
});
