// The Debian Python clients against a real broker in this process, through the scripts in py/
// (run with /usr/bin/python3; each takes bootstrap, topic, count and compression and prints one
// JSON summary line): kafka-python 2.0.2 (python3-kafka) produces with acks='all', plain and
// gzip, and reads back through assign() + seek_to_beginning() with no group; forced to speak
// Kafka 0.10.1 or 0.9 it produces legacy message sets (magic 1 over Produce v2, magic 0 over
// Produce v1), which the broker up-converts to record batches v2. confluent-kafka
// (python3-confluent-kafka, librdkafka) produces plain, gzip, snappy, lz4 and zstd, and reads
// back through assign() at OFFSET_BEGINNING with a group.id it never uses. Every message comes
// back with its key, value, header and offset, in order, and the batches are stored with the
// codec they came in.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { apiHandlers } from "../../src/broker/api/mod.ts";
import { startBroker } from "../helpers/broker.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { assertStoredCodec, Codec } from "./stored_batches.ts";

const PYTHON = "/usr/bin/python3";
const PY_DIR = join(dirname(fileURLToPath(import.meta.url)), "py");
const N = 10_000;
const kafkaPythonSkip = skipUnless("kafka");
const confluentSkip = skipUnless("confluent_kafka");

interface Summary {
  client: string;
  ok: boolean;
  sent: number;
  received: number;
  errors: unknown[];
  [k: string]: unknown;
}

async function roundTrip(script: string, bootstrap: string, topic: string, compression: string, ...extra: string[]): Promise<Summary> {
  const path = join(PY_DIR, script);
  const r = await run(PYTHON, [path, bootstrap, topic, String(N), compression, ...extra], { timeoutMs: 120_000 });
  const last = r.stdout.toString().trim().split("\n").pop() ?? "";
  let summary: Summary;
  try {
    summary = JSON.parse(last);
  } catch {
    assert.fail(`${script} ${compression}: exit ${r.code}, no JSON summary; stdout: ${last.slice(-500)} stderr: ${r.stderr.slice(-2000)}`);
  }
  const why = `${script} ${compression}: ${last} ${r.stderr.slice(-2000)}`;
  assert.equal(summary.sent, N, why);
  assert.equal(summary.received, N, why);
  assert.deepEqual(summary.errors, [], why);
  assert.equal(summary.ok, true, why);
  assert.equal(r.code, 0, why);
  return summary;
}

for (const compression of ["none", "gzip"] as const) {
  test(`kafka-python: ${N} messages, acks=all, ${compression}; assign + seek_to_beginning reads all in order`, { skip: kafkaPythonSkip }, async () => {
    const b = await startBroker();
    try {
      const topic = `kafka-python-${compression}`;
      const s = await roundTrip("kafka_python_roundtrip.py", b.bootstrap, topic, compression);
      // kafka-python 2.0.2 infers the broker version from ApiVersions v0: DescribeAcls v2 listed
      // means "2.5.0", the newest it knows; a wrong guess would make it pick versions strand refuses.
      assert.equal(s.api_version, "2.5.0");
      assert.equal(s.end_offset, N);
      assertStoredCodec(b.logDir, topic, 0, Codec[compression]);
    } finally {
      await b.stop();
    }
  });
}

// kafka-python's api_version (0, 10, 1) means Produce v2 with magic 1 messages (timestamps, no
// headers), (0, 9) Produce v1 with magic 0 (no timestamps); gzip wraps each batch in one
// compressed message. The broker stores one record batch v2 per request, in the same codec.
for (const [apiVersion, compression] of [["0.10.1", "none"], ["0.10.1", "gzip"], ["0.9", "none"], ["0.9", "gzip"]] as const) {
  test(`kafka-python as Kafka ${apiVersion}: ${N} legacy messages, ${compression}, up-converted and read back in order`, { skip: kafkaPythonSkip }, async () => {
    const b = await startBroker();
    try {
      const topic = `kafka-python-${apiVersion.replaceAll(".", "-")}-${compression}`;
      const s = await roundTrip("kafka_python_roundtrip.py", b.bootstrap, topic, compression, apiVersion);
      assert.equal(s.api_version, apiVersion, "the producer spoke the forced version");
      assert.equal(s.end_offset, N);
      assertStoredCodec(b.logDir, topic, 0, Codec[compression]);
      // The first stored batch's maxTimestamp (byte 35): magic 0 messages have none (-1).
      const log = readFileSync(join(b.logDir, `${topic}-0`, "00000000000000000000.log"));
      const maxTimestamp = log.readBigInt64BE(35);
      assert.ok(apiVersion === "0.9" ? maxTimestamp === -1n : maxTimestamp > 1_600_000_000_000n, `maxTimestamp ${maxTimestamp}`);
    } finally {
      await b.stop();
    }
  });
}

// librdkafka (Debian: 2.0.2) enables gzip and snappy only when the broker lists Produce v0, and
// lz4 only when ApiVersions lists FindCoordinator (API 10); without them it sends batches
// uncompressed, logging "Broker does not support compression type" at debug level only.
const lz4Stored = apiHandlers.some((h) => h.api.apiKey === 10) ? Codec.lz4 : Codec.none;

for (const compression of ["none", "gzip", "snappy", "lz4", "zstd"] as const) {
  test(`confluent-kafka: ${N} messages, acks=all, ${compression}; assign at OFFSET_BEGINNING reads all in order`, { skip: confluentSkip }, async () => {
    const b = await startBroker();
    try {
      const topic = `confluent-${compression}`;
      const s = await roundTrip("confluent_roundtrip.py", b.bootstrap, topic, compression);
      assert.deepEqual(s.watermarks, [0, N]);
      // No error callback fired: in particular no coordinator error for the unused group.id.
      assert.deepEqual(s.client_logs, []);
      assertStoredCodec(b.logDir, topic, 0, compression === "lz4" ? lz4Stored : Codec[compression]);
    } finally {
      await b.stop();
    }
  });
}

test("confluent-kafka AdminClient: Kafka 3.8's topic keys accepted and described; LogAppendTime stamps the broker's clock on what it consumes; keyless to a compacted topic is INVALID_RECORD", { skip: confluentSkip }, async () => {
  const b = await startBroker();
  try {
    const r = await run(PYTHON, [join(PY_DIR, "confluent_topic_configs.py"), b.bootstrap, "py-configs"], { timeoutMs: 120_000 });
    const last = r.stdout.toString().trim().split("\n").pop() ?? "";
    const why = `${last} ${r.stderr.slice(-2000)}`;
    assert.equal(r.code, 0, why);
    const s = JSON.parse(last);
    assert.deepEqual(s.errors, [], why);
    assert.equal(s.keys.length, 34, `every Kafka 3.8 topic key: ${why}`);
    assert.equal(s.bad_refused, "INVALID_CONFIG", why);
    assert.deepEqual(s.values["message.timestamp.type"], "LogAppendTime");
    assert.deepEqual(s.values["message.format.version"], "2.8");
    assert.deepEqual(s.values["segment.jitter.ms"], "1000");
    assert.equal(s.sources["message.timestamp.difference.max.ms"], 1, "TOPIC_CONFIG (librdkafka's source 1)");
    assert.equal(s.timestamp_type_log_append, true, why);
    assert.equal(s.timestamp_at_or_after_send, true, `the broker's clock, not the producer's 1000: ${why}`);
    assert.deepEqual(s.keyless_on_compacted, ["INVALID_RECORD"], why);
  } finally {
    await b.stop();
  }
});
