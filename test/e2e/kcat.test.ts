// kcat (librdkafka) against a real broker in this process: 100,000 lines produced to an
// auto-created topic and consumed back in order; each compression codec round-trips (the broker
// stores the client's compressed batches as sent); a restart keeps every acknowledged message.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startBroker } from "../helpers/broker.ts";
import { run, skipUnless } from "../helpers/tools.ts";

const skip = skipUnless("kcat");

function lines(n: number, prefix = ""): string {
  let s = "";
  for (let i = 1; i <= n; i++) s += `${prefix}${i}\n`;
  return s;
}

async function produce(bootstrap: string, topic: string, input: string, extra: string[] = []) {
  const r = await run("kcat", ["-b", bootstrap, "-P", "-t", topic, "-X", "acks=all", ...extra], { input, timeoutMs: 120_000 });
  assert.equal(r.code, 0, `kcat -P failed: ${r.stderr}`);
}

async function consume(bootstrap: string, topic: string): Promise<string> {
  const r = await run("kcat", ["-b", bootstrap, "-C", "-t", topic, "-e", "-q", "-o", "beginning"], { timeoutMs: 120_000 });
  assert.equal(r.code, 0, `kcat -C failed: ${r.stderr}`);
  return r.stdout.toString();
}

test("kcat: 100,000 lines round-trip in order through an auto-created topic", { skip }, async () => {
  const b = await startBroker();
  try {
    const input = lines(100_000);
    await produce(b.bootstrap, "lines", input);
    assert.equal(await consume(b.bootstrap, "lines"), input);
  } finally {
    await b.stop();
  }
});

test("kcat: gzip, snappy, lz4 and zstd batches round-trip", { skip }, async () => {
  const b = await startBroker();
  try {
    for (const codec of ["gzip", "snappy", "lz4", "zstd"]) {
      const input = lines(20_000, `${codec}-`);
      await produce(b.bootstrap, `z-${codec}`, input, ["-z", codec]);
      assert.equal(await consume(b.bootstrap, `z-${codec}`), input, codec);
    }
  } finally {
    await b.stop();
  }
});

test("kcat: acknowledged messages survive a restart and offsets continue", { skip }, async () => {
  const b = await startBroker({ "log.segment.bytes": "65536" });
  try {
    await produce(b.bootstrap, "durable", lines(30_000, "a"));
    await b.restart();
    await produce(b.bootstrap, "durable", lines(1_000, "b"));
    assert.equal(await consume(b.bootstrap, "durable"), lines(30_000, "a") + lines(1_000, "b"));
    const r = await run("kcat", ["-b", b.bootstrap, "-C", "-t", "durable", "-e", "-q", "-o", "-1", "-f", "%o\\n"]);
    assert.equal(r.stdout.toString().trim(), "30999");
  } finally {
    await b.stop();
  }
});
