// `strand produce` and `strand consume` as a user runs them: lines in, lines out, in order, with
// keys (routed as Kafka's Java client routes them), headers, a chosen partition, every codec, and
// the consumer's options (--partition/--offset, --max-messages, --timeout-ms, the print flags).
import assert from "node:assert/strict";
import { test } from "node:test";
import { partitionForKey } from "../../src/client/mod.ts";
import { startBroker } from "../helpers/broker.ts";
import { assertIdempotentBatches } from "../e2e/stored_batches.ts";
import { lines, strand, strandOk } from "./strand.ts";

test("cli produce/consume: 20,000 lines round-trip in order, and --max-messages, --timeout-ms stop the consumer", async () => {
  const b = await startBroker();
  const bs = ["--bootstrap-server", b.bootstrap];
  try {
    const input = lines(20_000, "line-");
    // The topic is auto-created, as Kafka's console producer relies on.
    assert.equal(await strandOk(["produce", ...bs, "--topic", "lines"], { input }), "");
    const all = await strand(["consume", ...bs, "--topic", "lines", "--from-beginning", "--timeout-ms", "1500"]);
    assert.equal(all.code, 0, all.stderr);
    assert.equal(all.stdout, input);
    assert.equal(all.stderr, "Processed a total of 20000 messages\n");
    const first = await strandOk(["consume", ...bs, "--topic", "lines", "--from-beginning", "--max-messages", "3"]);
    assert.equal(first, "line-1\nline-2\nline-3\n");
    // Without --from-beginning a consumer starts at the end: nothing arrives within the timeout.
    assert.equal(await strandOk(["consume", ...bs, "--topic", "lines", "--timeout-ms", "500"]), "");
    // Empty lines are empty records; a last line without a newline is a record too.
    await strandOk(["produce", ...bs, "--topic", "edges"], { input: "a\n\nb\r\nc" });
    assert.equal(await strandOk(["consume", ...bs, "--topic", "edges", "--from-beginning", "--max-messages", "4"]), "a\n\nb\nc\n");
  } finally {
    await b.stop();
  }
});

test("cli produce/consume: keys land on Kafka's murmur2 partition; headers, partition, offset and key print", async () => {
  const b = await startBroker();
  const bs = ["--bootstrap-server", b.bootstrap];
  try {
    await strandOk(["topics", "create", ...bs, "--topic", "keyed", "--partitions", "4"]);
    const keys = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];
    const input = keys.map((k, i) => `${k}:value-${i}\n`).join("");
    await strandOk(["produce", ...bs, "--topic", "keyed", "--parse-key", "--key-separator", ":", "--header", "source=cli", "--header", "n=1"], { input });
    const out = await strandOk(["consume", ...bs, "--topic", "keyed", "--from-beginning", "--max-messages", "6",
      "--print-partition", "--print-headers", "--print-key"]);
    const got = out.trimEnd().split("\n").sort();
    const want = keys.map((k, i) => `Partition:${partitionForKey(new TextEncoder().encode(k), 4)}\tsource:cli,n:1\t${k}\tvalue-${i}`).sort();
    assert.deepEqual(got, want);
    // A line without the separator is refused (one line, exit 1).
    const bad = await strand(["produce", ...bs, "--topic", "keyed", "--parse-key"], { input: "no-separator-here\n" });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^strand produce: line 1 has no key separator\n$/);

    // --partition sends everything to one partition; --offset starts inside it.
    await strandOk(["produce", ...bs, "--topic", "keyed", "--partition", "2"], { input: lines(10, "p2-") });
    const p2 = await strandOk(["consume", ...bs, "--topic", "keyed", "--partition", "2", "--offset", "earliest", "--print-offset",
      "--print-key", "--timeout-ms", "1000"]);
    const p2lines = p2.trimEnd().split("\n").filter((l) => l.includes("p2-"));
    assert.equal(p2lines.length, 10);
    const base = Number(/^Offset:(\d+)/.exec(p2lines[0])![1]);
    const fromMiddle = await strandOk(["consume", ...bs, "--topic", "keyed", "--partition", "2", "--offset", String(base + 7), "--timeout-ms", "1000"]);
    assert.equal(fromMiddle, "p2-8\np2-9\np2-10\n");
    assert.match(p2lines[0], /^Offset:\d+\tnull\tp2-1$/, "a record without a key prints its key as null");
    const noSuchPartition = await strand(["produce", ...bs, "--topic", "keyed", "--partition", "9"], { input: "x\n" });
    assert.equal(noSuchPartition.code, 1);
    assert.match(noSuchPartition.stderr, /has 4 partitions; there is no partition 9/);
  } finally {
    await b.stop();
  }
});

test("cli produce/consume: every codec and every acks setting round-trips", async () => {
  const b = await startBroker();
  const bs = ["--bootstrap-server", b.bootstrap];
  try {
    for (const codec of ["none", "gzip", "snappy", "lz4", "zstd"]) {
      const input = lines(3_000, `${codec}-`);
      await strandOk(["produce", ...bs, "--topic", `z-${codec}`, "--compression", codec, "--linger-ms", "20", "--batch-size", "4096"], { input });
      assert.equal(await strandOk(["consume", ...bs, "--topic", `z-${codec}`, "--from-beginning", "--max-messages", "3000"]), input, codec);
    }
    for (const acks of ["0", "1", "all"]) {
      const input = lines(500, `acks${acks}-`);
      await strandOk(["produce", ...bs, "--topic", `acks-${acks}`, "--acks", acks], { input });
      const out = await strandOk(["consume", ...bs, "--topic", `acks-${acks}`, "--from-beginning", "--max-messages", "500", "--timeout-ms", "5000"]);
      assert.equal(out, input, `acks=${acks}`);
    }
  } finally {
    await b.stop();
  }
});

test("cli consume: unknown topic and unknown partition are one line and exit 1", async () => {
  const b = await startBroker();
  const bs = ["--bootstrap-server", b.bootstrap];
  try {
    const r = await strand(["consume", ...bs, "--topic", "nowhere", "--timeout-ms", "500"]);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'strand consume: topic "nowhere" does not exist\n');
    await strandOk(["topics", "create", ...bs, "--topic", "one"]);
    const p = await strand(["consume", ...bs, "--topic", "one", "--partition", "3", "--timeout-ms", "500"]);
    assert.equal(p.code, 1);
    assert.equal(p.stderr, 'strand consume: topic "one" has no partition 3\n');
  } finally {
    await b.stop();
  }
});

test("cli produce --idempotence: the records carry a producer id and sequences from 0; --acks 1 with it is refused", async () => {
  const b = await startBroker();
  const bs = ["--bootstrap-server", b.bootstrap];
  try {
    const input = lines(5_000, "idem-");
    assert.equal(await strandOk(["produce", ...bs, "--topic", "idem", "--partition", "0", "--idempotence", "--batch-size", "4096"], { input }), "");
    assertIdempotentBatches(b.logDir, "idem", 0, 5_000);
    assert.equal(await strandOk(["consume", ...bs, "--topic", "idem", "--from-beginning", "--max-messages", "5000"]), input);
    const refused = await strand(["produce", ...bs, "--topic", "idem", "--idempotence", "--acks", "1"], { input: "x\n" });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /--idempotence needs --acks all/);
  } finally {
    await b.stop();
  }
});
