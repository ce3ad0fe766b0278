// Issue 11, defect 7's audit: requests that decode (every field well formed for its schema and
// version) but carry hostile values: extreme integers (int32/int64 bounds, -1, 2^53+1), NaN,
// empty, over-long, internal and invalid names, nulls wherever the version allows them, random
// bytes and record batches, unknown enum values, zero and random ids. For every API and version
// the broker advertises. Each request gets an answer or a closed connection; afterwards the
// broker still serves other connections, and no error-level line was logged (an error line is a
// handler that threw: a bug, never a fitting answer to input). Seeds are fixed; the failing
// request's API, version and seed are named so it can be replayed.
import assert from "node:assert/strict";
import process from "node:process";
import { test } from "node:test";
import { apiSchemas, ApiVersionsApi } from "../../src/protocol/api/mod.ts";
import type { Struct } from "../../src/protocol/codec.ts";
import { type Field, inRange } from "../../src/protocol/schema.ts";
import type { Logger } from "../../src/util/logger.ts";
import { startBroker } from "../helpers/broker.ts";
import { buildBatch } from "../helpers/record_batch.ts";
import { createTopic, encodeRequest, produce, WireClient } from "../helpers/wire.ts";

function rng(seed: number): (n: number) => number {
  let x = (seed * 0x9e3779b1) >>> 0 || 1;
  return (n) => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x % n;
  };
}

const names = ["kept", "", "__consumer_offsets", "..", "no-such", "a".repeat(260), "\u0000", "é", "g"];
const ints: Record<string, number[]> = {
  int8: [0, -1, 1, 127, -128, 2, 3],
  int16: [0, -1, 1, 32767, -32768, 2, 3, 1000],
  int32: [0, -1, 1, 2147483647, -2147483648, 2, 100_000, 60_000],
  uint16: [0, 1, 65535],
};
const longs = [0n, -1n, -2n, 1n, 9223372036854775807n, -9223372036854775808n, 9007199254740993n, 1000n];

function value(f: Field, version: number, r: (n: number) => number, depth: number): unknown {
  const nullable = inRange(f.nullable, version);
  if (nullable && r(5) === 0) return null;
  if (f.array) {
    const n = depth > 2 ? r(2) : r(4);
    return Array.from({ length: n }, () => (f.type === "struct" ? struct(f.fields, version, r, depth + 1) : scalar(f, r)));
  }
  if (f.type === "struct") return struct(f.fields, version, r, depth + 1);
  return scalar(f, r);
}

function scalar(f: Field, r: (n: number) => number): unknown {
  switch (f.type) {
    case "int8":
    case "int16":
    case "int32":
    case "uint16":
      return ints[f.type][r(ints[f.type].length)];
    case "int64":
      return longs[r(longs.length)];
    case "float64":
      return [0, NaN, Infinity, -1, 1e308][r(5)];
    case "bool":
      return r(2) === 1;
    case "string":
      return names[r(names.length)];
    case "uuid":
      return [new Uint8Array(16), new Uint8Array(16).fill(0xff), Uint8Array.from({ length: 16 }, () => r(256))][r(3)];
    case "bytes":
      return Uint8Array.from({ length: r(40) }, () => r(256));
    case "records": {
      const batch = buildBatch([{ value: "v" }, { key: "k", value: "w" }]);
      return [batch, batch.subarray(0, r(batch.length)), Uint8Array.from({ length: r(80) }, () => r(256)), new Uint8Array(0)][r(4)];
    }
    default:
      throw new Error(`type ${f.type}`);
  }
}

function struct(fields: Field[], version: number, r: (n: number) => number, depth: number): Struct {
  const out: Struct = {};
  for (const f of fields) if (inRange(f.versions, version)) out[f.name] = value(f, version, r, depth);
  return out;
}

test("hostile values in well-formed requests, for every API and version: answered or closed, never an error line", { timeout: 600_000 }, async () => {
  const errors: string[] = [];
  const logger: Logger = {
    debug() {},
    info() {},
    warn() {},
    error: (fields, msg) => void errors.push(`${msg} ${JSON.stringify(fields).slice(0, 2000)}`),
    child: () => logger,
  };
  const b = await startBroker({ "offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "2", "group.initial.rebalance.delay.ms": "0" }, undefined, logger);
  try {
    const c0 = await WireClient.connect(b.port);
    assert.equal((await createTopic(c0, "kept", { numPartitions: 2 })).errorCode, 0);
    assert.equal((await produce(c0, "kept", 0, buildBatch([{ value: "x" }]))).errorCode, 0);
    c0.close();
    // HOSTILE_SEEDS=50 for a longer run on a developer's machine.
    const seedsPerVersion = Number(process.env.HOSTILE_SEEDS ?? 6);
    const jobs: { what: string; bytes: Uint8Array }[] = [];
    for (const api of apiSchemas) {
      // ControlledShutdown from "broker 0" would start this broker's own shutdown.
      if (api.apiKey === 7) continue;
      for (let version = api.request.versions.min; version <= api.request.versions.max; version++) {
        for (let seed = 1; seed <= seedsPerVersion; seed++) {
          const r = rng(api.apiKey * 10_000 + version * 100 + seed);
          const body = struct(api.request.fields, version, r, 0);
          jobs.push({ what: `${api.name} v${version} seed ${seed}`, bytes: encodeRequest(api, version, seed, body) });
        }
      }
    }
    const outcomes = { closed: 0, answered: 0, silent: 0 };
    // One at a time, so an error line is pinned on the request that caused it.
    for (const job of jobs) {
      const before = errors.length;
      const c = await WireClient.connect(b.port);
      try {
        await c.write(job.bytes);
        const first = await Promise.race([c.closed.then(() => "closed"), c.nextFrame(3_000).then(() => "answered", () => "silent")]);
        outcomes[first === "closed" && c.pendingBytes > 0 ? "answered" : (first as keyof typeof outcomes)]++;
      } finally {
        c.close();
      }
      if (errors.length > before) errors.splice(before, 0, `during ${job.what}:`);
    }
    console.log(`hostile values: ${jobs.length} requests, ${JSON.stringify(outcomes)}`);
    const c = await WireClient.connect(b.port);
    try {
      const av = await c.request(ApiVersionsApi, 3, { clientSoftwareName: "t", clientSoftwareVersion: "1" });
      assert.equal(av.errorCode, 0);
    } finally {
      c.close();
    }
    assert.deepEqual(errors, [], "no error-level line");
  } finally {
    await b.stop();
  }
});
