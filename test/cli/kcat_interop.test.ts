// strand's console tools and kcat (librdkafka) on the same topics: what strand produces (keys,
// headers, compressed batches) kcat reads back, and what kcat produces strand reads back; keyed
// records land on the partitions librdkafka's murmur2_random partitioner (the Java client's)
// picks, and a group's offsets committed by strand are the ones kcat's group consumer resumes from.
import assert from "node:assert/strict";
import { test } from "node:test";
import { startBroker } from "../helpers/broker.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { lines, strandOk } from "./strand.ts";

const skip = skipUnless("kcat");

async function kcat(args: string[], input?: string): Promise<string> {
  const r = await run("kcat", args, { input, timeoutMs: 60_000 });
  assert.equal(r.code, 0, `kcat ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.toString();
}

test("cli interop: strand produces keys, headers and every codec; kcat consumes them", { skip }, async () => {
  const b = await startBroker();
  const bs = ["--bootstrap-server", b.bootstrap];
  try {
    await strandOk(["topics", "create", ...bs, "--topic", "to-kcat", "--partitions", "3"]);
    const input = Array.from({ length: 300 }, (_, i) => `key-${i}\tvalue-${i}\n`).join("");
    await strandOk(["produce", ...bs, "--topic", "to-kcat", "--parse-key", "--header", "origin=strand"], { input });
    const out = await kcat(["-b", b.bootstrap, "-C", "-t", "to-kcat", "-o", "beginning", "-e", "-q", "-f", "%p %k %s %h\n"]);
    const rows = out.trimEnd().split("\n").sort();
    // Same keys, same partitions as librdkafka's murmur2 partitioner (Kafka's Java client's) picks.
    await kcat(["-b", b.bootstrap, "-P", "-t", "to-kcat", "-K", "\t", "-X", "partitioner=murmur2_random"], input.replaceAll("value-", "again-"));
    const again = (await kcat(["-b", b.bootstrap, "-C", "-t", "to-kcat", "-o", "beginning", "-e", "-q", "-f", "%p %k %s\n"]))
      .trimEnd().split("\n").filter((l) => l.includes("again-"));
    assert.equal(rows.length, 300);
    const partitionOf = new Map(rows.map((r) => [r.split(" ")[1], r.split(" ")[0]]));
    for (const l of again) assert.equal(l.split(" ")[0], partitionOf.get(l.split(" ")[1]), l);
    assert.deepEqual(rows.map((r) => r.split(" ").slice(1).join(" ")).sort(),
      Array.from({ length: 300 }, (_, i) => `key-${i} value-${i} origin=strand`).sort());

    for (const codec of ["gzip", "snappy", "lz4", "zstd"]) {
      const data = lines(2_000, `${codec}-`);
      await strandOk(["produce", ...bs, "--topic", `c-${codec}`, "--compression", codec], { input: data });
      assert.equal(await kcat(["-b", b.bootstrap, "-C", "-t", `c-${codec}`, "-o", "beginning", "-e", "-q"]), data, codec);
    }
  } finally {
    await b.stop();
  }
});

test("cli interop: kcat produces keys, headers and compressed batches; strand consumes them", { skip }, async () => {
  const b = await startBroker();
  const bs = ["--bootstrap-server", b.bootstrap];
  try {
    const input = Array.from({ length: 500 }, (_, i) => `k${i}:v${i}\n`).join("");
    await kcat(["-b", b.bootstrap, "-P", "-t", "from-kcat", "-K", ":", "-H", "h1=x", "-H", "h2=y", "-z", "zstd", "-X", "acks=all"], input);
    const out = await strandOk(["consume", ...bs, "--topic", "from-kcat", "--from-beginning", "--max-messages", "500", "--print-key",
      "--print-headers", "--key-separator", ":"]);
    assert.equal(out, Array.from({ length: 500 }, (_, i) => `h1:x,h2:y:k${i}:v${i}\n`).join(""));
    // strand's group commits; kcat's balanced consumer in the same group resumes from them.
    await strandOk(["consume", ...bs, "--topic", "from-kcat", "--group", "shared", "--from-beginning", "--max-messages", "200"]);
    const rest = await kcat(["-b", b.bootstrap, "-G", "shared", "-e", "-q", "-f", "%s\n", "-X", "auto.offset.reset=earliest", "from-kcat"]);
    assert.equal(rest, Array.from({ length: 300 }, (_, i) => `v${i + 200}\n`).join(""));
  } finally {
    await b.stop();
  }
});
