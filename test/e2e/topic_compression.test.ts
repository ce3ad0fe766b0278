// compression.type on a topic (and the broker's default for it) is applied as Kafka's LogValidator
// applies it: a produced batch in another codec is stored recompressed in the topic's codec, with
// every other header field kept (an idempotent producer's id and sequences), and read back by
// librdkafka; a batch the new codec makes larger than max.message.bytes is refused with
// MESSAGE_TOO_LARGE; "producer" keeps what the client sent.
import { test } from "node:test";
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { parseBrokerConfig } from "../../src/broker/config.ts";
import { crc32c } from "../../src/util/crc32c.ts";
import { startBroker } from "../helpers/broker.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { createTopic, fetchOnce, produce, WireClient } from "../helpers/wire.ts";
import { assertIdempotentBatches, Codec, storedBatches } from "./stored_batches.ts";

const skip = skipUnless("kcat");

function lines(n: number, prefix: string): string {
  let s = "";
  for (let i = 1; i <= n; i++) s += `${prefix}${i}\n`;
  return s;
}

async function kcat(bootstrap: string, args: string[], input?: string): Promise<string> {
  const r = await run("kcat", ["-b", bootstrap, ...args], { input, timeoutMs: 120_000 });
  assert.equal(r.code, 0, `kcat ${args.join(" ")} failed: ${r.stderr}`);
  return r.stdout.toString();
}

const consumeArgs = (topic: string) => ["-C", "-t", topic, "-e", "-q", "-o", "beginning"];

/** A gzip batch of the records (buildBatch's body compressed, header fixed up). */
function gzipBatch(records: ReturnType<typeof valueRecords>): Uint8Array {
  const plain = buildBatch(records);
  const body = gzipSync(plain.subarray(61));
  const out = new Uint8Array(61 + body.length);
  out.set(plain.subarray(0, 61));
  out.set(body, 61);
  const dv = new DataView(out.buffer);
  dv.setInt32(8, out.length - 12);
  dv.setInt16(21, Codec.gzip);
  dv.setUint32(17, crc32c(out, 21, out.length));
  return out;
}

test("compression.type: each topic stores kcat's batches in its own codec, read back whole", { skip }, async () => {
  const b = await startBroker();
  const wire = await WireClient.connect(b.port);
  try {
    for (const codec of ["gzip", "snappy", "lz4", "zstd", "uncompressed"] as const) {
      const topic = `ct-${codec}`;
      assert.deepEqual(await createTopic(wire, topic, { configs: { "compression.type": codec } }), { errorCode: 0, errorMessage: null });
      const input = lines(20_000, `${codec}-`);
      // The producer's own codec differs from the topic's (gzip for the uncompressed topic).
      await kcat(b.bootstrap, ["-P", "-t", topic, "-X", "acks=all", "-z", codec === "uncompressed" ? "gzip" : "none"], input);
      assert.equal(await kcat(b.bootstrap, consumeArgs(topic)), input, codec);
      const want = codec === "uncompressed" ? Codec.none : Codec[codec];
      const batches = storedBatches(b.logDir, topic, 0);
      assert.ok(batches.length > 0);
      assert.deepEqual([...new Set(batches.map((x) => x.codec))], [want], `${topic}: every stored batch is in the topic's codec`);
    }
  } finally {
    wire.close();
    await b.stop();
  }
});

test("compression.type: an idempotent producer's batches keep their producer id and sequences when recompressed", { skip }, async () => {
  const b = await startBroker();
  const wire = await WireClient.connect(b.port);
  try {
    await createTopic(wire, "ct-idem", { configs: { "compression.type": "zstd" } });
    const input = lines(30_000, "idem-");
    await kcat(b.bootstrap, ["-P", "-t", "ct-idem", "-X", "enable.idempotence=true", "-z", "gzip"], input);
    assert.equal(await kcat(b.bootstrap, consumeArgs("ct-idem")), input);
    assertIdempotentBatches(b.logDir, "ct-idem", 0, 30_000);
    assert.ok(storedBatches(b.logDir, "ct-idem", 0).every((x) => x.codec === Codec.zstd));
  } finally {
    wire.close();
    await b.stop();
  }
});

test("compression.type: the broker's default applies to topics without their own; 'producer' keeps the client's codec", { skip }, async () => {
  const b = await startBroker({ "compression.type": "lz4" });
  const wire = await WireClient.connect(b.port);
  try {
    await createTopic(wire, "ct-default");
    await createTopic(wire, "ct-asis", { configs: { "compression.type": "producer" } });
    const res = await produce(wire, "ct-default", 0, gzipBatch(valueRecords(100, "d", 50)));
    assert.equal(res.errorCode, 0);
    assert.deepEqual(storedBatches(b.logDir, "ct-default", 0).map((x) => x.codec), [Codec.lz4]);
    assert.equal((await produce(wire, "ct-asis", 0, gzipBatch(valueRecords(100, "p", 50)))).errorCode, 0);
    assert.deepEqual(storedBatches(b.logDir, "ct-asis", 0).map((x) => x.codec), [Codec.gzip]);
    // What a consumer fetches is the stored batch, whole and valid.
    const fetched = await fetchOnce(wire, "ct-default", 0, 0n);
    assert.equal(fetched.errorCode, 0);
    assert.equal(new DataView(fetched.records!.buffer, fetched.records!.byteOffset).getInt16(21) & 7, Codec.lz4);
    assert.equal(await kcat(b.bootstrap, [...consumeArgs("ct-default"), "-c", "100", "-f", "%s\n"]).then((s) => s.split("\n")[99]), "d99".padEnd(50, "."));
  } finally {
    wire.close();
    await b.stop();
  }
});

test("compression.type: a batch recompression makes larger than max.message.bytes is refused with MESSAGE_TOO_LARGE", async () => {
  const b = await startBroker();
  const wire = await WireClient.connect(b.port);
  try {
    await createTopic(wire, "ct-big", { configs: { "compression.type": "uncompressed", "max.message.bytes": "4096" } });
    const batch = gzipBatch(valueRecords(200, "x", 100)); // about 22 KB of records, well under 4 KB gzipped
    assert.ok(batch.length < 4096, `the gzip batch is ${batch.length} bytes`);
    const res = await produce(wire, "ct-big", 0, batch);
    assert.equal(res.errorCode, 10, `MESSAGE_TOO_LARGE: ${res.errorMessage}`);
    assert.match(res.errorMessage ?? "", /exceeds the maximum configured size of 4096/);
    // Nothing was appended; a batch that fits still is.
    assert.equal((await fetchOnce(wire, "ct-big", 0, 0n)).highWatermark, 0n);
    assert.equal((await produce(wire, "ct-big", 0, gzipBatch(valueRecords(5, "s")))).errorCode, 0);
    assert.deepEqual(storedBatches(b.logDir, "ct-big", 0).map((x) => [x.codec, x.records]), [[Codec.none, 5]]);
  } finally {
    wire.close();
    await b.stop();
  }
});

test("compression.type: bad values are refused, naming the key", async () => {
  assert.throws(() => parseBrokerConfig(new Map([["compression.type", "brotli"]])), /compression\.type/);
  assert.throws(() => parseBrokerConfig(new Map([["compression.gzip.level", "12"]])), /compression\.gzip\.level/);
  const b = await startBroker();
  const wire = await WireClient.connect(b.port);
  try {
    const r = await createTopic(wire, "ct-bad", { configs: { "compression.type": "brotli" } });
    assert.equal(r.errorCode, 40, `INVALID_CONFIG: ${r.errorMessage}`);
  } finally {
    wire.close();
    await b.stop();
  }
});

test("compression.type=zstd: a Fetch older than v10 is answered UNSUPPORTED_COMPRESSION_TYPE (Kafka's check), v10+ reads the batches", async () => {
  const b = await startBroker();
  const wire = await WireClient.connect(b.port);
  try {
    await createTopic(wire, "ct-zstd", { configs: { "compression.type": "zstd" } });
    await createTopic(wire, "ct-gz", { configs: { "compression.type": "gzip" } });
    for (const topic of ["ct-zstd", "ct-gz"]) assert.equal((await produce(wire, topic, 0, buildBatch(valueRecords(10, "z")))).errorCode, 0);
    assert.equal((await fetchOnce(wire, "ct-zstd", 0, 0n, { version: 9 })).errorCode, 76);
    assert.equal((await fetchOnce(wire, "ct-zstd", 0, 0n, { version: 4 })).errorCode, 76);
    const v10 = await fetchOnce(wire, "ct-zstd", 0, 0n, { version: 10 });
    assert.equal(v10.errorCode, 0);
    assert.equal(new DataView(v10.records!.buffer, v10.records!.byteOffset).getInt16(21) & 7, Codec.zstd);
    const gz = await fetchOnce(wire, "ct-gz", 0, 0n, { version: 9 });
    assert.deepEqual([gz.errorCode, gz.highWatermark], [0, 10n]);
  } finally {
    wire.close();
    await b.stop();
  }
});
