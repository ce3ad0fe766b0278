// `strand perf produce` and `strand perf consume` with small counts: the final lines carry the
// figures kafka-producer-perf-test.sh and kafka-consumer-perf-test.sh print (records/s, MB/s,
// latency average, maximum and percentiles), progress lines appear while running, the records
// really are in the log, and a throughput cap holds the rate down.
import assert from "node:assert/strict";
import { test } from "node:test";
import { startBroker } from "../helpers/broker.ts";
import { strand, strandOk } from "./strand.ts";

const produceLine = /^(\d+) records sent, [\d.]+ records\/sec \([\d.]+ MB\/sec\), [\d.]+ ms avg latency, [\d.]+ ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.$/;
const consumeLine = /^(\d+) records consumed, [\d.]+ records\/sec \([\d.]+ MB\/sec\), ([\d.]+) MB in [\d.]+ s\.$/;

test("cli perf: produce then consume 30,000 records of 200 bytes, with progress lines", async () => {
  const b = await startBroker();
  const bs = ["--bootstrap-server", b.bootstrap];
  try {
    await strandOk(["topics", "create", ...bs, "--topic", "perf", "--partitions", "3"]);
    const p = await strandOk(["perf", "produce", ...bs, "--topic", "perf", "--num-records", "30000", "--record-size", "200",
      "--acks", "1", "--compression", "lz4", "--batch-size", "65536", "--linger-ms", "2", "--throughput", "15000", "--reporting-interval-ms", "500"]);
    const pl = p.trimEnd().split("\n");
    const last = produceLine.exec(pl[pl.length - 1]);
    assert.ok(last, `final line: ${p}`);
    assert.equal(last[1], "30000");
    // The cap makes the run last about two seconds, so progress lines were printed meanwhile.
    assert.ok(pl.length >= 3, `progress lines: ${p}`);
    for (const l of pl.slice(0, -1)) assert.match(l, /^\d+ records sent, [\d.]+ records\/sec \([\d.]+ MB\/sec\), [\d.]+ ms avg latency, [\d.]+ ms max latency\.$/);
    const rate = Number(/, ([\d.]+) records\/sec/.exec(pl[pl.length - 1])![1]);
    assert.ok(rate <= 15000 * 1.1, `the throughput cap holds: ${rate}`);

    const c = await strandOk(["perf", "consume", ...bs, "--topic", "perf", "--num-records", "30000", "--reporting-interval-ms", "200"]);
    const cl = c.trimEnd().split("\n");
    const m = consumeLine.exec(cl[cl.length - 1]);
    assert.ok(m, `final line: ${c}`);
    assert.equal(m[1], "30000");
    assert.equal(m[2], (30000 * 200 / 1024 / 1024).toFixed(2));

    // Asking for more than there is ends with the figures and a one-line error.
    const short = await strand(["perf", "consume", ...bs, "--topic", "perf", "--num-records", "30001", "--timeout-ms", "1000"]);
    assert.equal(short.code, 1);
    assert.match(short.stdout, /^30000 records consumed/m);
    assert.equal(short.stderr, "strand perf: only 30000 of 30001 records arrived (none for 1000 ms)\n");
  } finally {
    await b.stop();
  }
});
