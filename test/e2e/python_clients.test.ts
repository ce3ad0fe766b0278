// The Debian Python clients against a real broker in this process, through the scripts in py/
// (run with /usr/bin/python3; each takes bootstrap, topic, count and compression and prints one
// JSON summary line): kafka-python 2.0.2 (python3-kafka) produces with acks='all', plain and
// gzip, and reads back through assign() + seek_to_beginning() with no group; confluent-kafka
// (python3-confluent-kafka, librdkafka) produces plain, lz4 and zstd, and reads back through
// assign() at OFFSET_BEGINNING with a group.id it never uses. Every message comes back with its
// key, value, header and offset, in order, and the batches are stored with the codec they came in.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { startBroker } from "../helpers/broker.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { Codec, storedCodecs } from "./stored_batches.ts";

const PYTHON = "/usr/bin/python3";
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

async function roundTrip(script: string, bootstrap: string, topic: string, compression: string): Promise<Summary> {
  const path = fileURLToPath(new URL(`./py/${script}`, import.meta.url));
  const r = await run(PYTHON, [path, bootstrap, topic, String(N), compression], { timeoutMs: 120_000 });
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
      // kafka-python 2.0.2 infers the broker version from ApiVersions v0: Produce v8 listed means
      // "2.4.0", the newest it knows; a wrong guess would make it pick versions strand refuses.
      assert.equal(s.api_version, "2.4.0");
      assert.equal(s.end_offset, N);
      assert.deepEqual([...storedCodecs(b.logDir, topic, 0)], [Codec[compression]]);
    } finally {
      await b.stop();
    }
  });
}

for (const compression of ["none", "lz4", "zstd"] as const) {
  test(`confluent-kafka: ${N} messages, acks=all, ${compression}; assign at OFFSET_BEGINNING reads all in order`, { skip: confluentSkip }, async () => {
    const b = await startBroker();
    try {
      const topic = `confluent-${compression}`;
      const s = await roundTrip("confluent_roundtrip.py", b.bootstrap, topic, compression);
      assert.deepEqual(s.watermarks, [0, N]);
      // No error callback fired: in particular no coordinator error for the unused group.id.
      assert.deepEqual(s.client_logs, []);
      assert.deepEqual([...storedCodecs(b.logDir, topic, 0)], [Codec[compression]]);
    } finally {
      await b.stop();
    }
  });
}
