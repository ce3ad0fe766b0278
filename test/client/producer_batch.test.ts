// The clients' pure parts: ProducerBatch writes record batches that the project's own reader
// (protocol/records.ts) and the consumer's (client/record_reader.ts) decode back exactly (keys,
// null values, headers, timestamps, every codec, a CRC32C that checks); the consumer's reader
// skips offsets below the position and reports a malformed batch without throwing; murmur2 gives
// Kafka's own test vectors.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type ConsumerRecord, murmur2, partitionForKey, ProducerBatch, readRecords } from "../../src/client/mod.ts";
import { batchCrcValid, readBatchRecords, validateBatches } from "../../src/protocol/mod.ts";

const enc = new TextEncoder();

test("ProducerBatch: records, keys, null values, headers and timestamps decode back, for every codec", () => {
  for (const codec of [0, 1, 2, 3, 4]) {
    const b = new ProducerBatch("t", 0, 64);
    const t0 = 1_700_000_000_000;
    const big = new Uint8Array(70_000).fill(7);
    b.append(t0, enc.encode("k1"), enc.encode("v1"), []);
    b.append(t0 + 5, null, null, [{ key: "h", value: enc.encode("x") }, { key: "é", value: null }]);
    b.append(t0 - 3, enc.encode(""), big, []);
    const bytes = b.build(codec);
    assert.ok(batchCrcValid(bytes, 0, bytes.length), `CRC ${codec}`);
    assert.equal(validateBatches(bytes, 1 << 20).errorCode, 0);
    const r = readBatchRecords(bytes);
    assert.ok(r.ok, `decodes with codec ${codec}`);
    assert.equal(r.batch.attributes & 7, codec);
    assert.equal(r.batch.maxTimestamp, BigInt(t0 + 5));
    assert.deepEqual(r.records.map((x) => [x.offset, x.timestamp, x.key && new TextDecoder().decode(x.key)]), [
      [0, BigInt(t0), "k1"],
      [1, BigInt(t0 + 5), null],
      [2, BigInt(t0 - 3), ""],
    ]);
    assert.equal(r.records[1].value, null);
    assert.deepEqual(r.records[1].headers.map((h) => [h.key, h.value && new TextDecoder().decode(h.value)]), [["h", "x"], ["é", null]]);
    assert.deepEqual(r.records[2].value, big);

    const mine: ConsumerRecord[] = [];
    assert.equal(readRecords(bytes, 0, bytes.length, 0, "t", 0, mine), null);
    assert.deepEqual(mine, r.records.map((x) => ({ ...x, topic: "t", partition: 0, timestamp: Number(x.timestamp) })));
    const fromOne: ConsumerRecord[] = [];
    assert.equal(readRecords(bytes, 0, bytes.length, 1, "t", 0, fromOne), null);
    assert.deepEqual(fromOne.map((x) => x.offset), [1, 2]);
  }
});

test("readRecords: a malformed record is reported, not thrown", () => {
  const b = new ProducerBatch("t", 0, 64);
  b.append(1, enc.encode("key"), enc.encode("value"), []);
  const good = b.build(0);
  for (let cut = 62; cut < good.length; cut++) {
    // The record's length says more bytes than the batch has.
    const bytes = good.slice();
    bytes[61] = 0x7e;
    const out: ConsumerRecord[] = [];
    assert.match(readRecords(bytes, 0, cut, 0, "t", 0, out) ?? "", /record length|past/);
  }
  const wrongCount = good.slice();
  new DataView(wrongCount.buffer).setInt32(57, 2);
  assert.match(readRecords(wrongCount, 0, wrongCount.length, 0, "t", 0, []) ?? "", /varint past the end|record length/);
});

test("murmur2: Kafka's test vectors (UtilsTest), and partitions as the Java client picks them", () => {
  const cases: [string, number][] = [
    ["21", -973932308],
    ["foobar", -790332482],
    ["a-little-bit-long-string", -985981536],
    ["a-little-bit-longer-string", -1486304829],
    ["lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971],
    ["abc", 479470107],
  ];
  for (const [s, h] of cases) assert.equal(murmur2(enc.encode(s)), h, s);
  assert.equal(partitionForKey(enc.encode("foobar"), 7), (-790332482 & 0x7fffffff) % 7);
});
