// Malformed and hostile input against a real broker, over raw TCP: every case checks that the
// broker answers with the Kafka error code (or closes that one connection), and that afterwards
// it still serves OTHER connections and still returns everything produced before.
import assert from "node:assert/strict";
import { test } from "node:test";
import { apiSchemas, ApiVersionsApi, CreateTopicsApi, DeleteTopicsApi, FetchApi, MetadataApi, ProduceApi } from "../../src/protocol/api/mod.ts";
import { Writer } from "../../src/util/bytes.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import type { Logger } from "../../src/util/logger.ts";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { buildBatch, buildMagic1Message, concatBytes, parseBatches, text, valueRecords } from "../helpers/record_batch.ts";
import {
  createTopic,
  decodeResponse,
  encodeRequest,
  fetchOnce,
  frame,
  listOffset,
  produce,
  WireClient,
} from "../helpers/wire.ts";
import { pseudoRandomBytes } from "../helpers/random.ts";

const TOPIC = "kept";
const BEFORE = ["before-0", "before-1", "before-2"];

/**
 * Starts a broker with a topic holding BEFORE, runs fn, then checks a fresh connection is served
 * and reads back what fn says the topic now holds (BEFORE when it returns nothing). Always stops
 * the broker.
 */
async function withBroker(overrides: Record<string, string>, fn: (b: TestBroker) => Promise<string[] | void>): Promise<void> {
  // Error-level lines mean a handler threw or a connection failed unexpectedly: a bug, never a
  // fitting answer to bad input (which gets warn-level "closing connection" lines).
  const errors: string[] = [];
  const logger: Logger = {
    debug() {},
    info() {},
    warn() {},
    error: (fields, msg) => void errors.push(`${msg} ${JSON.stringify(fields)}`),
    child: () => logger,
  };
  const b = await startBroker(overrides, undefined, logger);
  try {
    const c = await WireClient.connect(b.port);
    try {
      assert.deepEqual(await createTopic(c, TOPIC), { errorCode: 0, errorMessage: null });
      const r = await produce(c, TOPIC, 0, buildBatch(BEFORE.map((value) => ({ value }))));
      assert.equal(r.errorCode, 0);
      assert.equal(r.baseOffset, 0n);
    } finally {
      c.close();
    }
    const expected = await fn(b);
    await assertStillServing(b, expected ?? BEFORE);
    assert.deepEqual(errors, [], "no handler failed and no connection failed unexpectedly");
  } finally {
    await b.stop();
  }
}

/** A fresh connection gets ApiVersions and reads back every record produced before. */
async function assertStillServing(b: TestBroker, expected = BEFORE): Promise<void> {
  const c = await WireClient.connect(b.port);
  try {
    const av = await c.request(ApiVersionsApi, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" });
    assert.equal(av.errorCode, 0);
    const f = await fetchOnce(c, TOPIC, 0, 0n);
    assert.equal(f.errorCode, 0);
    const values = parseBatches(f.records!).flatMap((batch) => batch.records.map((r) => text(r.value)));
    assert.deepEqual(values, expected, "data produced before is still readable");
    assert.equal((await listOffset(c, TOPIC, 0, -1n)).offset, BigInt(expected.length));
  } finally {
    c.close();
  }
}

async function logEndOffset(b: TestBroker, topic = TOPIC): Promise<bigint> {
  const c = await WireClient.connect(b.port);
  try {
    const r = await listOffset(c, topic, 0, -1n);
    assert.equal(r.errorCode, 0);
    return r.offset;
  } finally {
    c.close();
  }
}

/** Sends bytes on a new connection and expects the broker to close it, answering nothing. */
async function expectClosed(b: TestBroker, bytes: Uint8Array, what: string): Promise<void> {
  const c = await WireClient.connect(b.port);
  try {
    await c.write(bytes);
    assert.ok(await c.waitClosed(5_000), `${what}: the broker closes the connection`);
    assert.equal(c.pendingBytes, 0, `${what}: nothing is answered`);
  } finally {
    c.close();
  }
}

// ---- framing and headers --------------------------------------------------------------------

test("bad input: frames of random bytes close their connection; the broker keeps serving", async () => {
  await withBroker({}, async (b) => {
    for (let seed = 1; seed <= 20; seed++) {
      const body = pseudoRandomBytes(seed, 8 + ((seed * 37) % 300));
      // Keep the API key out of the implemented ones, so "closed" is the only right outcome.
      body[0] = 0x7f;
      await expectClosed(b, frame(body), `random frame ${seed}`);
    }
  });
});

test("bad input: random bodies behind valid headers, for every API and version, never take the broker down", async () => {
  await withBroker({}, async (b) => {
    const outcomes = { closed: 0, answered: 0, silent: 0 };
    for (const api of apiSchemas) {
      for (let version = api.request.versions.min; version <= api.request.versions.max; version++) {
        for (let seed = 1; seed <= 3; seed++) {
          const w = new Writer();
          w.int16(api.apiKey).int16(version).int32(seed).int16(-1);
          if (version >= api.request.flexibleFrom) w.uvarint(0);
          w.bytes(pseudoRandomBytes(api.apiKey * 1000 + version * 10 + seed, 4 + seed * 23));
          const c = await WireClient.connect(b.port);
          try {
            await c.write(frame(w.finish().slice()));
            // Closed, or answered (random bytes can be a valid request), or still waiting (a
            // long poll, an acks=0 produce): any is fine, as long as the broker lives on.
            const first = await Promise.race([c.closed.then(() => "closed"), c.nextFrame(1_500).then(() => "answered", () => "silent")]);
            outcomes[first === "closed" && c.pendingBytes > 0 ? "answered" : (first as keyof typeof outcomes)]++;
          } finally {
            c.close();
          }
        }
      }
    }
    assert.ok(outcomes.closed > 0, JSON.stringify(outcomes));
  });
});

test("bad input: mutated valid requests (bytes flipped, bodies cut) never take the broker down", async () => {
  await withBroker({ "auto.create.topics.enable": "false" }, async (b) => {
    const c0 = await WireClient.connect(b.port);
    try {
      assert.equal((await createTopic(c0, "fuzzed-topic", { numPartitions: 2 })).errorCode, 0);
    } finally {
      c0.close();
    }
    const batch = buildBatch(valueRecords(3, "m"));
    const fetchTopic = { topic: "fuzzed-topic", partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] };
    const seeds: [string, Uint8Array][] = [
      ["produce v7", encodeRequest(ProduceApi, 7, 1, { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ name: "fuzzed-topic", partitionData: [{ index: 0, records: batch }] }] })],
      ["produce v9", encodeRequest(ProduceApi, 9, 1, { transactionalId: null, acks: -1, timeoutMs: 1000, topicData: [{ name: "fuzzed-topic", partitionData: [{ index: 1, records: batch }] }] })],
      ["fetch v4", encodeRequest(FetchApi, 4, 1, { replicaId: -1, maxWaitMs: 10, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, topics: [fetchTopic] })],
      ["fetch v12", encodeRequest(FetchApi, 12, 1, { replicaId: -1, maxWaitMs: 10, minBytes: 1, maxBytes: 1 << 20, topics: [fetchTopic], forgottenTopicsData: [], rackId: "" })],
      ["metadata v12", encodeRequest(MetadataApi, 12, 1, { topics: [{ name: "fuzzed-topic" }], allowAutoTopicCreation: false })],
      ["metadata v1", encodeRequest(MetadataApi, 1, 1, { topics: [{ name: "fuzzed-topic" }] })],
      ["list offsets v5", encodeRequest(apiSchemas.find((a) => a.apiKey === 2)!, 5, 1, { replicaId: -1, isolationLevel: 0, topics: [{ name: "fuzzed-topic", partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }] })],
      ["api versions v3", encodeRequest(ApiVersionsApi, 3, 1, { clientSoftwareName: "fuzz", clientSoftwareVersion: "1.0" })],
    ];
    let rng = 0x9e3779b9;
    const rand = (n: number) => {
      rng ^= rng << 13;
      rng >>>= 0;
      rng ^= rng >>> 17;
      rng ^= rng << 5;
      rng >>>= 0;
      return rng % n;
    };
    const mutants: Uint8Array[] = [];
    for (const [, wire] of seeds) {
      for (let i = 0; i < 30; i++) {
        // Keep the size prefix and API key intact: the body (from the version on) is fair game.
        let m: Uint8Array = wire.slice();
        if (i % 5 === 4) m = frame(m.slice(4, 4 + 4 + rand(m.length - 8))); // cut short
        else for (let k = 0; k <= rand(3); k++) m[6 + rand(m.length - 6)] = rand(256);
        // A mutated version outside the API's range just closes; keep most in range.
        if (i % 3 !== 0) m.set(wire.subarray(6, 8), 6);
        mutants.push(m);
      }
    }
    const outcomes = { closed: 0, answered: 0, silent: 0 };
    for (let i = 0; i < mutants.length; i += 20) {
      await Promise.all(mutants.slice(i, i + 20).map(async (m) => {
        const c = await WireClient.connect(b.port);
        try {
          await c.write(m);
          const first = await Promise.race([c.closed.then(() => "closed"), c.nextFrame(1_500).then(() => "answered", () => "silent")]);
          outcomes[first === "closed" && c.pendingBytes > 0 ? "answered" : (first as keyof typeof outcomes)]++;
        } finally {
          c.close();
        }
      }));
    }
    assert.ok(outcomes.closed > 0 && outcomes.answered > 0, JSON.stringify(outcomes));
  });
});

test("bad input: a size prefix above socket.request.max.bytes closes the connection without reading the frame", async () => {
  await withBroker({ "socket.request.max.bytes": String(1 << 20) }, async (b) => {
    for (const size of [(1 << 20) + 1, 1 << 30, 0x7fffffff]) {
      const prefix = new Uint8Array(4);
      new DataView(prefix.buffer).setInt32(0, size);
      // Only the prefix (and a few bytes) is sent: the broker must not wait for the rest.
      const started = Date.now();
      await expectClosed(b, concatBytes(prefix, new Uint8Array(16)), `size ${size}`);
      assert.ok(Date.now() - started < 5_000);
    }
    // A frame of exactly the limit is not refused for its size: it is read, and (being junk
    // with an unknown API key) closed only once it has arrived whole.
    const c = await WireClient.connect(b.port);
    try {
      const body = new Uint8Array(1 << 20);
      body[0] = 0x7f;
      await c.write(frame(body).subarray(0, 1024));
      assert.equal(await c.waitClosed(300), false, "a frame within the limit is waited for");
      await c.write(frame(body).subarray(1024));
      assert.ok(await c.waitClosed(5_000));
    } finally {
      c.close();
    }
  });
});

test("bad input: size prefixes below a request header (0, 7, negative) close the connection", async () => {
  await withBroker({}, async (b) => {
    for (const size of [0, 7, -1, -0x80000000]) {
      const prefix = new Uint8Array(12);
      new DataView(prefix.buffer).setInt32(0, size);
      await expectClosed(b, prefix, `size ${size}`);
    }
  });
});

test("bad input: a truncated frame (prefix promises more, then the client closes) ends that connection only", async () => {
  await withBroker({}, async (b) => {
    const whole = encodeRequest(MetadataApi, 12, 7, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    const c = await WireClient.connect(b.port);
    try {
      await c.write(whole.subarray(0, whole.length - 3));
      // While it waits for the rest of that frame, other connections are served.
      await assertStillServing(b);
      assert.equal(c.ended, false);
      c.end(); // FIN with the frame incomplete
      assert.ok(await c.waitClosed(5_000), "the broker closes its side too");
      assert.equal(c.pendingBytes, 0);
    } finally {
      c.close();
    }
    // A prefix saying 1000 with 100 bytes behind it, then a hard close.
    const d = await WireClient.connect(b.port);
    const partial = new Uint8Array(104);
    new DataView(partial.buffer).setInt32(0, 1000);
    await d.write(partial);
    d.close();
  });
});

test("bad input: a body cut short inside a field closes the connection", async () => {
  await withBroker({}, async (b) => {
    // Metadata v1: header, then topics array of 1, a string claiming 50 bytes with only 3 there.
    const w = new Writer();
    w.int16(3).int16(1).int32(11).int16(1).bytes(new TextEncoder().encode("x"));
    w.int32(1).int16(50).bytes(new TextEncoder().encode("abc"));
    await expectClosed(b, frame(w.finish().slice()), "string past the end");
    // Produce v7: a records field claiming 10,000 bytes with 20 there.
    const p = new Writer();
    p.int16(0).int16(7).int32(12).int16(-1);
    p.int16(-1).int16(1).int32(1000); // transactionalId null, acks, timeout
    p.int32(1).int16(TOPIC.length).bytes(new TextEncoder().encode(TOPIC));
    p.int32(1).int32(0).int32(10_000).bytes(new Uint8Array(20));
    await expectClosed(b, frame(p.finish().slice()), "records past the end");
    // An array count of a million elements in a 20-byte body.
    const a = new Writer();
    a.int16(3).int16(1).int32(13).int16(-1).int32(1_000_000).int16(1).int8(0x61);
    await expectClosed(b, frame(a.finish().slice()), "array count past the end");
    // A flexible request (Metadata v9) whose compact string length varint never ends.
    const v = new Writer();
    v.int16(3).int16(9).int32(14).int16(-1).uvarint(0); // header v2, no tags
    v.uvarint(2); // one topic
    v.bytes(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]));
    await expectClosed(b, frame(v.finish().slice()), "endless varint");
  });
});

test("bad input: an unknown API key closes the connection", async () => {
  await withBroker({}, async (b) => {
    for (const key of [67, 1000, -1]) {
      const w = new Writer();
      w.int16(key).int16(0).int32(5).int16(-1);
      await expectClosed(b, frame(w.finish().slice()), `api key ${key}`);
    }
  });
});

test("bad input: an unsupported Metadata version closes the connection", async () => {
  await withBroker({}, async (b) => {
    for (const version of [13, 99, -1]) {
      const w = new Writer();
      w.int16(3).int16(version).int32(5).int16(-1).int32(-1);
      await expectClosed(b, frame(w.finish().slice()), `Metadata v${version}`);
    }
  });
});

test("bad input: ApiVersions v99 answers UNSUPPORTED_VERSION in the v0 layout with the API list", async () => {
  await withBroker({}, async (b) => {
    const c = await WireClient.connect(b.port);
    try {
      const w = new Writer();
      w.int16(18).int16(99).int32(4242).int16(-1).bytes(new Uint8Array([1, 2, 3, 4])); // unknown body
      await c.write(frame(w.finish().slice()));
      const payload = await c.nextFrame();
      assert.ok(payload !== null, "answered, not closed");
      const { correlationId, body } = decodeResponse(ApiVersionsApi, 0, payload);
      assert.equal(correlationId, 4242);
      assert.equal(body.errorCode, ErrorCode.UNSUPPORTED_VERSION);
      const keys = body.apiKeys as { apiKey: number; minVersion: number; maxVersion: number }[];
      assert.deepEqual(keys.find((k) => k.apiKey === 18), { apiKey: 18, minVersion: 0, maxVersion: 3 });
      for (const k of [0, 1, 2, 3, 19, 20]) assert.ok(keys.some((x) => x.apiKey === k), `API ${k} listed`);
      // The connection stays usable: the client retries with a version it now knows.
      const again = await c.request(ApiVersionsApi, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" });
      assert.equal(again.errorCode, 0);
    } finally {
      c.close();
    }
  });
});

// ---- produce --------------------------------------------------------------------------------

test("bad input: a batch with a wrong CRC gets CORRUPT_MESSAGE and nothing is appended", async () => {
  await withBroker({}, async (b) => {
    const c = await WireClient.connect(b.port);
    try {
      const bad = buildBatch(valueRecords(2, "bad"));
      bad[bad.length - 1] ^= 0x01; // a flipped bit in the last record's bytes
      const r = await produce(c, TOPIC, 0, bad);
      assert.equal(r.errorCode, ErrorCode.CORRUPT_MESSAGE);
      assert.equal(r.baseOffset, -1n);
      assert.equal(await logEndOffset(b), 3n, "log end offset unchanged");
      // A good batch followed by a bad one: the whole set is refused, the good one included (a
      // second batch is INVALID_RECORD before its CRC is looked at, as Kafka's validateRecords).
      const mixed = concatBytes(buildBatch(valueRecords(1, "good")), bad);
      assert.equal((await produce(c, TOPIC, 0, mixed)).errorCode, ErrorCode.INVALID_RECORD);
      assert.equal(await logEndOffset(b), 3n, "a refused set is not appended in part");
      // The connection keeps working.
      assert.equal((await produce(c, TOPIC, 0, buildBatch([{ value: "after" }]))).baseOffset, 3n);
    } finally {
      c.close();
    }
    return [...BEFORE, "after"];
  });
});

test("bad input: a batch larger than message.max.bytes gets MESSAGE_TOO_LARGE", async () => {
  await withBroker({ "message.max.bytes": "1000" }, async (b) => {
    const c = await WireClient.connect(b.port);
    try {
      const big = buildBatch(valueRecords(1, "big", 2000));
      assert.ok(big.length > 1000);
      const r = await produce(c, TOPIC, 0, big);
      assert.equal(r.errorCode, ErrorCode.MESSAGE_TOO_LARGE);
      assert.equal(await logEndOffset(b), 3n);
    } finally {
      c.close();
    }
  });
});

test("bad input: a magic 1 message set is refused and nothing is appended", async () => {
  await withBroker({}, async (b) => {
    const c = await WireClient.connect(b.port);
    try {
      for (const value of ["short", "a value long enough that the legacy message passes 61 bytes in all"]) {
        const r = await produce(c, TOPIC, 0, buildMagic1Message(value));
        assert.notEqual(r.errorCode, ErrorCode.NONE, `magic 1 (${value.length} byte value) refused`);
        assert.ok(
          [ErrorCode.CORRUPT_MESSAGE, ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT, ErrorCode.INVALID_RECORD].includes(r.errorCode as 2),
          `error ${r.errorCode}`,
        );
      }
      // magic 2 in name but 0 in the byte, and an unknown future magic 3.
      for (const magic of [0, 3]) {
        const r = await produce(c, TOPIC, 0, buildBatch(valueRecords(1), { magic }));
        assert.notEqual(r.errorCode, ErrorCode.NONE, `magic ${magic}`);
      }
      assert.equal(await logEndOffset(b), 3n);
    } finally {
      c.close();
    }
  });
});

test("bad input: a batch with compression codec 7 gets UNSUPPORTED_COMPRESSION_TYPE", async () => {
  await withBroker({}, async (b) => {
    const c = await WireClient.connect(b.port);
    try {
      const r = await produce(c, TOPIC, 0, buildBatch(valueRecords(1), { attributes: 7 }));
      assert.equal(r.errorCode, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE);
      assert.equal(await logEndOffset(b), 3n);
    } finally {
      c.close();
    }
  });
});

test("bad input: acks=5 gets INVALID_REQUIRED_ACKS and nothing is appended", async () => {
  await withBroker({}, async (b) => {
    const c = await WireClient.connect(b.port);
    try {
      const r = await produce(c, TOPIC, 0, buildBatch(valueRecords(1)), 5);
      assert.equal(r.errorCode, ErrorCode.INVALID_REQUIRED_ACKS);
      assert.equal(await logEndOffset(b), 3n);
    } finally {
      c.close();
    }
  });
});

test("bad input: produce to an unknown topic or partition gets UNKNOWN_TOPIC_OR_PARTITION", async () => {
  await withBroker({}, async (b) => {
    const c = await WireClient.connect(b.port);
    try {
      assert.equal((await produce(c, "no-such-topic", 0, buildBatch(valueRecords(1)))).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      assert.equal((await produce(c, TOPIC, 1, buildBatch(valueRecords(1)))).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      assert.equal((await produce(c, TOPIC, -1, buildBatch(valueRecords(1)))).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      // Produce never creates topics.
      const md = await c.request(MetadataApi, 12, { topics: [{ name: "no-such-topic" }], allowAutoTopicCreation: false });
      assert.equal((md.topics as { errorCode: number }[])[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    } finally {
      c.close();
    }
  });
});

// ---- fetch ----------------------------------------------------------------------------------

test("bad input: fetch past the log end offset (or below the start) gets OFFSET_OUT_OF_RANGE", async () => {
  await withBroker({}, async (b) => {
    const c = await WireClient.connect(b.port);
    try {
      for (const offset of [4n, 1000n, -5n, 0x7fffffffffffffffn]) {
        const f = await fetchOnce(c, TOPIC, 0, offset, { maxWaitMs: 5_000, minBytes: 1 });
        assert.equal(f.errorCode, ErrorCode.OFFSET_OUT_OF_RANGE, `offset ${offset}`);
      }
      // At the end exactly: no error, no records.
      const atEnd = await fetchOnce(c, TOPIC, 0, 3n);
      assert.equal(atEnd.errorCode, 0);
      assert.equal(atEnd.records?.length ?? 0, 0);
      assert.equal(atEnd.highWatermark, 3n);
    } finally {
      c.close();
    }
  });
});

test("bad input: fetch long-poll waits max_wait_ms on an empty partition, and returns early when data arrives", async () => {
  await withBroker({}, async (b) => {
    const c = await WireClient.connect(b.port);
    const other = await WireClient.connect(b.port);
    try {
      assert.equal((await createTopic(c, "empty")).errorCode, 0);
      let started = Date.now();
      const idle = await fetchOnce(c, "empty", 0, 0n, { maxWaitMs: 500, minBytes: 1 });
      const waited = Date.now() - started;
      assert.equal(idle.errorCode, 0);
      assert.equal(idle.records?.length ?? 0, 0);
      assert.ok(waited >= 400, `the fetch waited (${waited} ms) instead of answering at once`);

      // A long poll of 20 s ends as soon as another connection produces.
      started = Date.now();
      const pending = fetchOnce(c, "empty", 0, 0n, { maxWaitMs: 20_000, minBytes: 1 });
      await new Promise((r) => setTimeout(r, 200));
      const p = await produce(other, "empty", 0, buildBatch([{ value: "wake" }]));
      assert.equal(p.errorCode, 0);
      const woke = await pending;
      assert.ok(Date.now() - started < 10_000, "returned on the produce, not the timeout");
      assert.equal(woke.errorCode, 0);
      assert.deepEqual(parseBatches(woke.records!).flatMap((x) => x.records.map((r) => text(r.value))), ["wake"]);
    } finally {
      c.close();
      other.close();
    }
  });
});

// ---- topics ---------------------------------------------------------------------------------

test("bad input: CreateTopics refuses bad names, partitions, replication factors and configs with Kafka's codes", async () => {
  await withBroker({}, async (b) => {
    const c = await WireClient.connect(b.port);
    try {
      for (const name of ["bad name", "bad/name", "", ".", "..", "ü", "x".repeat(250)]) {
        const r = await createTopic(c, name);
        assert.equal(r.errorCode, ErrorCode.INVALID_TOPIC_EXCEPTION, `name ${JSON.stringify(name.slice(0, 20))}`);
        assert.ok(r.errorMessage !== null && r.errorMessage.length > 0, "with a message");
      }
      assert.match((await createTopic(c, "x".repeat(250))).errorMessage!, /249/);
      assert.equal((await createTopic(c, "x".repeat(249))).errorCode, 0, "249 characters is the longest legal name");

      assert.equal((await createTopic(c, "a.b")).errorCode, 0);
      const clash = await createTopic(c, "a_b");
      assert.equal(clash.errorCode, ErrorCode.INVALID_TOPIC_EXCEPTION);
      assert.match(clash.errorMessage!, /collides/);
      assert.equal((await createTopic(c, "a.b")).errorCode, ErrorCode.TOPIC_ALREADY_EXISTS);

      assert.equal((await createTopic(c, "p0", { numPartitions: 0 })).errorCode, ErrorCode.INVALID_PARTITIONS);
      assert.equal((await createTopic(c, "pneg", { numPartitions: -5 })).errorCode, ErrorCode.INVALID_PARTITIONS);
      assert.equal((await createTopic(c, "pbig", { numPartitions: 1_000_000 })).errorCode, ErrorCode.INVALID_PARTITIONS);
      const rf = await createTopic(c, "rf3", { replicationFactor: 3 });
      assert.equal(rf.errorCode, ErrorCode.INVALID_REPLICATION_FACTOR);
      assert.match(rf.errorMessage!, /3/);
      assert.equal((await createTopic(c, "rf0", { replicationFactor: 0 })).errorCode, ErrorCode.INVALID_REPLICATION_FACTOR);
      const cfg = await createTopic(c, "cfg", { configs: { "no.such.config": "1" } });
      assert.equal(cfg.errorCode, ErrorCode.INVALID_CONFIG);
      assert.match(cfg.errorMessage!, /no\.such\.config/);
      assert.equal((await createTopic(c, "cfg2", { configs: { "retention.ms": "soon" } })).errorCode, ErrorCode.INVALID_CONFIG);

      // None of the refused topics exists.
      const md = await c.request(MetadataApi, 12, { topics: null, allowAutoTopicCreation: false });
      const names = (md.topics as { name: string }[]).map((t) => t.name).sort();
      assert.deepEqual(names, ["a.b", TOPIC, "x".repeat(249)].sort());
    } finally {
      c.close();
    }
  });
});

// ---- ordering -------------------------------------------------------------------------------

test("bad input: many pipelined requests on one connection are answered in order", async () => {
  await withBroker({}, async (b) => {
    const c = await WireClient.connect(b.port);
    try {
      // A long poll first, then quick requests behind it: their answers must wait for it.
      const kinds: string[] = [];
      const frames: Uint8Array[] = [];
      const fetchBody = {
        replicaId: -1, maxWaitMs: 300, minBytes: 1 << 20, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
        topics: [{ topic: TOPIC, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
        forgottenTopicsData: [], rackId: "",
      };
      for (let i = 0; i < 300; i++) {
        const id = 1000 + i;
        if (i % 50 === 0) {
          frames.push(encodeRequest(FetchApi, 11, id, fetchBody));
          kinds.push("fetch");
        } else if (i % 3 === 0) {
          frames.push(encodeRequest(ProduceApi, 7, id, {
            transactionalId: null, acks: 1, timeoutMs: 1000,
            topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: buildBatch([{ value: `p${i}` }]) }] }],
          }));
          kinds.push("produce");
        } else if (i % 3 === 1) {
          frames.push(encodeRequest(MetadataApi, 12, id, { topics: null, allowAutoTopicCreation: false }));
          kinds.push("metadata");
        } else {
          frames.push(encodeRequest(ApiVersionsApi, 0, id, {}));
          kinds.push("apiversions");
        }
      }
      await c.write(concatBytes(...frames)); // all at once
      const apis = { fetch: [FetchApi, 11], produce: [ProduceApi, 7], metadata: [MetadataApi, 12], apiversions: [ApiVersionsApi, 0] } as const;
      const produced: bigint[] = [];
      for (let i = 0; i < frames.length; i++) {
        const payload = await c.nextFrame(20_000);
        assert.ok(payload !== null, `answer ${i} arrives`);
        const [api, version] = apis[kinds[i] as keyof typeof apis];
        const { correlationId, body } = decodeResponse(api, version, payload);
        assert.equal(correlationId, 1000 + i, `answer ${i} is in request order`);
        if (kinds[i] === "produce") {
          const p = (body.responses as { partitionResponses: { errorCode: number; baseOffset: bigint }[] }[])[0].partitionResponses[0];
          assert.equal(p.errorCode, 0);
          produced.push(p.baseOffset);
        }
      }
      // Appends happened in request order too.
      assert.deepEqual(produced, produced.map((_, i) => 3n + BigInt(i)));
      return [...BEFORE, ...kinds.flatMap((k, i) => (k === "produce" ? [`p${i}`] : []))];
    } finally {
      c.close();
    }
  });
});

test("bad input: requests pipelined before a bad frame are answered, in order, before the connection closes", async () => {
  await withBroker({ "socket.request.max.bytes": String(1 << 20) }, async (b) => {
    for (const bad of ["too-large", "unknown-api"]) {
      const c = await WireClient.connect(b.port);
      try {
        const good = [1, 2, 3].map((id) => encodeRequest(ApiVersionsApi, 0, id, {}));
        const w = new Writer();
        if (bad === "too-large") w.int32((1 << 20) + 1);
        else w.int32(8).int16(999).int16(0).int32(4);
        await c.write(concatBytes(...good, w.finish().slice()));
        for (const id of [1, 2, 3]) {
          const payload = await c.nextFrame();
          assert.ok(payload !== null, `${bad}: answer ${id} arrives`);
          assert.equal(decodeResponse(ApiVersionsApi, 0, payload).correlationId, id);
        }
        assert.ok(await c.waitClosed(5_000), `${bad}: then the connection closes`);
      } finally {
        c.close();
      }
    }
  });
});

test("bad input: requests pipelined behind one that closes the connection are not executed", async () => {
  await withBroker({}, async (b) => {
    const c = await WireClient.connect(b.port);
    try {
      const w = new Writer();
      w.int32(8).int16(999).int16(0).int32(1); // unknown API key: the broker closes
      const behind = encodeRequest(ProduceApi, 7, 2, {
        transactionalId: null, acks: 1, timeoutMs: 1000,
        topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: buildBatch([{ value: "behind" }]) }] }],
      });
      await c.write(concatBytes(w.finish().slice(), behind));
      assert.ok(await c.waitClosed(5_000));
      assert.equal(c.pendingBytes, 0, "no answer to the produce");
    } finally {
      c.close();
    }
    assert.equal(await logEndOffset(b), 3n, "the produce behind the bad request was not appended");
  });
});

test("bad input: a produce pipelined behind a CreateTopics on the same connection sees the created topic", async () => {
  await withBroker({ "auto.create.topics.enable": "false" }, async (b) => {
    const c = await WireClient.connect(b.port);
    try {
      const create = encodeRequest(CreateTopicsApi, 7, 1, {
        topics: [{ name: "piped", numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
        timeoutMs: 10_000, validateOnly: false,
      });
      const prod = encodeRequest(ProduceApi, 7, 2, {
        transactionalId: null, acks: 1, timeoutMs: 1000,
        topicData: [{ name: "piped", partitionData: [{ index: 0, records: buildBatch([{ value: "x" }]) }] }],
      });
      await c.write(concatBytes(create, prod));
      const created = decodeResponse(CreateTopicsApi, 7, (await c.nextFrame())!).body;
      assert.equal((created.topics as { errorCode: number }[])[0].errorCode, 0);
      const produced = decodeResponse(ProduceApi, 7, (await c.nextFrame())!).body;
      const p = (produced.responses as { partitionResponses: { errorCode: number }[] }[])[0].partitionResponses[0];
      assert.equal(p.errorCode, 0, "the produce behind the create succeeds");
    } finally {
      c.close();
    }
  });
});

test("bad input: an acks=0 produce gets no answer; a refused one closes the connection", async () => {
  await withBroker({}, async (b) => {
    const c = await WireClient.connect(b.port);
    try {
      const bad = buildBatch([{ value: "bad" }]);
      bad[bad.length - 1] ^= 1;
      await c.send(ProduceApi, 7, {
        transactionalId: null, acks: 0, timeoutMs: 1000,
        topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: buildBatch([{ value: "quiet" }]) }] }],
      });
      // The next request's answer is the first thing to come back.
      const av = await c.request(ApiVersionsApi, 0, {});
      assert.equal(av.errorCode, 0);
      assert.equal(await logEndOffset(b), 4n, "the acks=0 produce was appended");
      await c.send(ProduceApi, 7, {
        transactionalId: null, acks: 0, timeoutMs: 1000,
        topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: bad }] }],
      });
      assert.ok(await c.waitClosed(5_000), "a failed acks=0 produce closes the connection");
      assert.equal(c.pendingBytes, 0);
    } finally {
      c.close();
    }
    return [...BEFORE, "quiet"];
  });
});

test("bad input: ListOffsets for an unknown partition and DeleteTopics for an unknown topic get Kafka's codes", async () => {
  await withBroker({}, async (b) => {
    const c = await WireClient.connect(b.port);
    try {
      assert.equal((await listOffset(c, TOPIC, 5, -1n)).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      assert.equal((await listOffset(c, "nope", 0, -2n)).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      const del = await c.request(DeleteTopicsApi, 4, { topicNames: ["nope"], timeoutMs: 1000 });
      assert.equal((del.responses as { errorCode: number }[])[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      const dup = await c.request(CreateTopicsApi, 7, {
        topics: ["twice", "twice"].map((name) => ({ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] })),
        timeoutMs: 5000, validateOnly: false,
      });
      assert.deepEqual((dup.topics as { errorCode: number }[]).map((t) => t.errorCode), [ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST]);
    } finally {
      c.close();
    }
  });
});

test("bad input: a connection that sends half a frame and goes quiet is closed after connections.max.idle.ms", async () => {
  await withBroker({ "connections.max.idle.ms": "300" }, async (b) => {
    const c = await WireClient.connect(b.port);
    try {
      const w = new Writer();
      w.int32(100).int16(18);
      await c.write(w.finish().slice());
      const t0 = Date.now();
      assert.ok(await c.waitClosed(5_000), "the idle connection is closed");
      assert.ok(Date.now() - t0 >= 200, "not before the idle time");
    } finally {
      c.close();
    }
  });
});

test("bad input: a zstd batch in Produce v6 is UNSUPPORTED_COMPRESSION_TYPE (zstd needs v7+)", async () => {
  await withBroker({}, async (b) => {
    const c = await WireClient.connect(b.port);
    try {
      const zstd = buildBatch([{ value: "z" }], { attributes: 4 });
      const r = await c.request(ProduceApi, 6, {
        transactionalId: null, acks: 1, timeoutMs: 1000,
        topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: zstd }] }],
      });
      const p = (r.responses as { partitionResponses: { errorCode: number }[] }[])[0].partitionResponses[0];
      assert.equal(p.errorCode, 76);
    } finally {
      c.close();
    }
  });
});
