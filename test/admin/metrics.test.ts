// GET /metrics: the text exposition parses with a Prometheus text-format parser written here
// (HELP/TYPE before samples, label escapes, one series per label set, histogram buckets cumulative
// with +Inf equal to _count), carries Kafka's JMX-exporter names, and its figures follow what a
// real broker does: produced records and bytes, fetched bytes, requests by API and version with
// their latency histogram, log offsets, consumer group lag, and the process figures. The registry
// itself (metrics.ts) is checked on its own first.
import assert from "node:assert/strict";
import { test } from "node:test";
import { MetricsRegistry, prometheusContentType } from "../../src/admin/mod.ts";
import { ApiVersionsApi } from "../../src/protocol/api/mod.ts";
import { startBroker } from "../helpers/broker.ts";
import { commitOffsets, findCoordinator } from "../helpers/groups.ts";
import { buildBatch, valueRecords } from "../helpers/record_batch.ts";
import { fetchOnce, produce, WireClient } from "../helpers/wire.ts";

// ---- a small parser of Prometheus' text format (version 0.0.4) -------------------------------

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Family {
  name: string;
  help: string;
  type: string;
  samples: Sample[];
}

const metricName = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const labelName = /^[a-zA-Z_][a-zA-Z0-9_]*/;

function parseValue(text: string, line: string): number {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  if (text === "NaN") return NaN;
  assert.match(text, /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/, `a number in: ${line}`);
  return Number(text);
}

/** `{a="x",b="y\"z"}` at the start of rest: the labels and what follows the closing brace. */
function parseLabels(rest: string, line: string): { labels: Record<string, string>; after: string } {
  const labels: Record<string, string> = {};
  let i = 1;
  for (;;) {
    if (rest[i] === "}") return { labels, after: rest.slice(i + 1) };
    const name = labelName.exec(rest.slice(i))?.[0];
    assert.ok(name !== undefined, `a label name at ${i} in: ${line}`);
    i += name.length;
    assert.equal(rest.slice(i, i + 2), '="', `="..." after ${name} in: ${line}`);
    i += 2;
    let value = "";
    for (;;) {
      const ch = rest[i];
      assert.ok(ch !== undefined, `an unterminated label value in: ${line}`);
      i++;
      if (ch === '"') break;
      if (ch === "\\") {
        const esc = rest[i++];
        assert.ok(esc === "\\" || esc === '"' || esc === "n", `a valid escape in: ${line}`);
        value += esc === "n" ? "\n" : esc;
      } else value += ch;
    }
    assert.ok(!(name in labels), `label ${name} once in: ${line}`);
    labels[name] = value;
    if (rest[i] === ",") i++;
  }
}

/** The family a sample name belongs to: itself, or a histogram's _bucket/_sum/_count. */
function familyOf(families: Map<string, Family>, name: string): Family | undefined {
  if (families.has(name)) return families.get(name);
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  const f = m === null ? undefined : families.get(m[1]);
  return f?.type === "histogram" ? f : undefined;
}

function parsePrometheus(text: string): Map<string, Family> {
  assert.ok(text.endsWith("\n"), "the exposition ends with a newline");
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) ([^ ]+) (.*)$/.exec(line);
      if (m === null) continue; // a plain comment
      const [, what, name, rest] = m;
      assert.match(name, /^[a-zA-Z_:][a-zA-Z0-9_:]*$/, `a metric name: ${line}`);
      const f = families.get(name) ?? { name, help: "", type: "untyped", samples: [] };
      if (what === "HELP") f.help = rest.replace(/\\n/g, "\n").replace(/\\\\/g, "\\");
      else {
        assert.ok(["counter", "gauge", "histogram", "summary", "untyped"].includes(rest), `a type: ${line}`);
        assert.equal(f.samples.length, 0, `TYPE before the samples of ${name}`);
        f.type = rest;
      }
      families.set(name, f);
      continue;
    }
    const name = metricName.exec(line)?.[0];
    assert.ok(name !== undefined, `a sample line: ${line}`);
    let rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith("{")) ({ labels, after: rest } = parseLabels(rest, line));
    const parts = rest.trim().split(/\s+/);
    assert.ok(rest.startsWith(" ") && (parts.length === 1 || parts.length === 2), `value [timestamp] in: ${line}`);
    const f = familyOf(families, name);
    assert.ok(f !== undefined, `sample ${name} under a declared family`);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    assert.ok(!seen.has(key), `one sample per series: ${line}`);
    seen.add(key);
    f.samples.push({ name, labels, value: parseValue(parts[0], line) });
  }
  for (const f of families.values()) if (f.type === "histogram") checkHistogram(f);
  return families;
}

/** Per label set: buckets in increasing le with non-decreasing counts, +Inf last and equal to _count. */
function checkHistogram(f: Family): void {
  const groups = new Map<string, Sample[]>();
  for (const s of f.samples) {
    const { le: _le, ...rest } = s.labels;
    const k = JSON.stringify(Object.entries(rest).sort());
    groups.set(k, [...(groups.get(k) ?? []), s]);
  }
  for (const samples of groups.values()) {
    const buckets = samples.filter((s) => s.name === `${f.name}_bucket`);
    const count = samples.find((s) => s.name === `${f.name}_count`);
    assert.ok(count !== undefined && samples.some((s) => s.name === `${f.name}_sum`), `${f.name}: _sum and _count`);
    assert.ok(buckets.length > 0 && buckets.at(-1)!.labels.le === "+Inf", `${f.name}: ends with le="+Inf"`);
    for (let i = 1; i < buckets.length; i++) {
      assert.ok(parseValue(buckets[i].labels.le, "") > parseValue(buckets[i - 1].labels.le, ""), `${f.name}: le increases`);
      assert.ok(buckets[i].value >= buckets[i - 1].value, `${f.name}: cumulative counts`);
    }
    assert.equal(buckets.at(-1)!.value, count.value, `${f.name}: +Inf bucket equals _count`);
  }
}

/** The value of the one sample of name with exactly these labels (undefined when absent). */
function valueOf(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  const f = familyOf(families, name);
  const want = JSON.stringify(Object.entries(labels).sort());
  return f?.samples.find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want)?.value;
}

async function scrape(url: string): Promise<Map<string, Family>> {
  const res = await fetch(`${url}/metrics`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), prometheusContentType);
  return parsePrometheus(await res.text());
}

// ---- tests -------------------------------------------------------------------------------------

test("metrics registry: counters, gauges and histograms render in the text format the parser accepts", () => {
  const r = new MetricsRegistry();
  const c = r.counter("things_total", "Things.\nCounted \\ here.", ["kind"]);
  const g = r.gauge("level", "A level.");
  const h = r.histogram("wait_ms", "Waits.", ["op"], [1, 10, 100]);
  let collected = 0;
  r.onCollect(() => g.labels().set(++collected * 1.5));
  c.labels('a"b\\c\nd').inc();
  c.labels('a"b\\c\nd').inc(2);
  c.labels("plain").inc();
  for (const v of [0.5, 1, 5, 50, 500, 5000]) h.labels("read").observe(v);
  h.labels("write");

  const text = r.render();
  const f = parsePrometheus(text);
  assert.deepEqual([...f.keys()], ["things_total", "level", "wait_ms"]);
  assert.equal(f.get("things_total")!.help, "Things.\nCounted \\ here.");
  assert.equal(f.get("things_total")!.type, "counter");
  assert.equal(valueOf(f, "things_total", { kind: 'a"b\\c\nd' }), 3, "label escapes round-trip");
  assert.equal(valueOf(f, "things_total", { kind: "plain" }), 1);
  assert.equal(valueOf(f, "level"), 1.5, "collectors run before rendering");
  assert.equal(valueOf(parsePrometheus(r.render()), "level"), 3, "and on every render");
  assert.deepEqual(
    f.get("wait_ms")!.samples.filter((s) => s.labels.op === "read").map((s) => [s.name, s.labels.le ?? "", s.value]),
    [
      ["wait_ms_bucket", "1", 2],
      ["wait_ms_bucket", "10", 3],
      ["wait_ms_bucket", "100", 4],
      ["wait_ms_bucket", "+Inf", 6],
      ["wait_ms_sum", "", 5556.5],
      ["wait_ms_count", "", 6],
    ],
  );
  assert.equal(valueOf(f, "wait_ms_count", { op: "write" }), 0, "an empty histogram series renders zeros");
  assert.match(text, /^# HELP things_total Things\.\\nCounted \\\\ here\.$/m, "HELP escapes newline and backslash");

  c.clear();
  assert.equal(parsePrometheus(r.render()).get("things_total")!.samples.length, 0, "clear drops every series");
  assert.throws(() => r.counter("things_total", "again"), /registered once/);
  assert.throws(() => r.counter("bad-name_total", "x"), /Prometheus/);
  assert.throws(() => r.counter("no_suffix", "x"), /_total/);
  assert.throws(() => r.histogram("h", "x", ["le"], [1]), /label name le/);
  assert.throws(() => r.histogram("h2", "x", [], [2, 1]), /increasing/);
  assert.throws(() => c.labels(), /takes 1 label values/);
});

test("metrics: /metrics has Kafka's JMX-exporter names, and its counters move when messages are produced and fetched", async () => {
  const b = await startBroker({ "admin.listeners": "http://127.0.0.1:0", "group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "2" });
  const c = await WireClient.connect(b.port);
  try {
    const auth = { method: "POST", headers: { "content-type": "application/json" } };
    const created = await fetch(`${b.adminUrl}/v1/topics`, { ...auth, body: JSON.stringify({ name: "m", partitions: 2 }) });
    assert.equal(created.status, 201);

    const before = await scrape(b.adminUrl);
    const families: [string, string][] = [
      ["kafka_server_brokertopicmetrics_messagesin_total", "counter"],
      ["kafka_server_brokertopicmetrics_bytesin_total", "counter"],
      ["kafka_server_brokertopicmetrics_bytesout_total", "counter"],
      ["kafka_server_replicamanager_underreplicatedpartitions", "gauge"],
      ["kafka_server_replicamanager_partitioncount", "gauge"],
      ["kafka_server_replicamanager_leadercount", "gauge"],
      ["kafka_controller_kafkacontroller_activecontrollercount", "gauge"],
      ["kafka_controller_kafkacontroller_offlinepartitionscount", "gauge"],
      ["kafka_network_requestmetrics_requests_total", "counter"],
      ["kafka_network_requestmetrics_totaltimems", "histogram"],
      ["kafka_log_log_size", "gauge"],
      ["kafka_log_log_logstartoffset", "gauge"],
      ["kafka_log_log_logendoffset", "gauge"],
      ["kafka_consumergroup_lag", "gauge"],
      ["process_resident_memory_bytes", "gauge"],
      ["nodejs_eventloop_lag_seconds", "gauge"],
      ["nodejs_eventloop_lag_max_seconds", "gauge"],
    ];
    for (const [name, type] of families) {
      assert.equal(before.get(name)?.type, type, `${name} is a ${type}`);
      assert.ok(before.get(name)!.help.length > 0, `${name} has help`);
    }
    assert.equal(valueOf(before, "kafka_server_brokertopicmetrics_messagesin_total", { topic: "m" }), undefined, "nothing produced yet");
    assert.equal(valueOf(before, "kafka_controller_kafkacontroller_activecontrollercount"), 1);
    assert.equal(valueOf(before, "kafka_server_replicamanager_underreplicatedpartitions"), 0);
    assert.equal(valueOf(before, "kafka_server_replicamanager_partitioncount"), 2);
    assert.ok(valueOf(before, "process_resident_memory_bytes")! > 1_000_000, "resident memory");
    assert.ok(valueOf(before, "nodejs_eventloop_lag_seconds")! >= 0);
    const producesBefore = valueOf(before, "kafka_network_requestmetrics_requests_total", { request: "Produce", version: "8" }) ?? 0;

    // 12 records in 3 batches on m-0, 4 in one batch on m-1 (test/helpers/wire.ts speaks Produce v8).
    const batches = [buildBatch(valueRecords(5, "a")), buildBatch(valueRecords(5, "b")), buildBatch(valueRecords(2, "c"))];
    for (const batch of batches) assert.equal((await produce(c, "m", 0, batch)).errorCode, 0);
    const other = buildBatch(valueRecords(4, "d"));
    assert.equal((await produce(c, "m", 1, other)).errorCode, 0);
    const fetched = await fetchOnce(c, "m", 0, 0n);
    assert.equal(fetched.errorCode, 0);
    await findCoordinator(c, "lagging");
    assert.deepEqual(await commitOffsets(c, "lagging", { m: { 0: 2n, 1: 4n } }), [0, 0]);

    const after = await scrape(b.adminUrl);
    const bytesIn = [...batches, other].reduce((n, x) => n + x.length, 0);
    assert.equal(valueOf(after, "kafka_server_brokertopicmetrics_messagesin_total", { topic: "m" }), 16);
    assert.equal(valueOf(after, "kafka_server_brokertopicmetrics_bytesin_total", { topic: "m" }), bytesIn);
    assert.equal(valueOf(after, "kafka_server_brokertopicmetrics_bytesout_total", { topic: "m" }), fetched.records!.length);
    assert.equal(valueOf(after, "kafka_network_requestmetrics_requests_total", { request: "Produce", version: "8" }), producesBefore + 4);
    assert.ok(valueOf(after, "kafka_network_requestmetrics_requests_total", { request: "Fetch", version: "11" })! >= 1);
    assert.ok(valueOf(after, "kafka_network_requestmetrics_totaltimems_count", { request: "Produce" })! >= 4, "latency observed per request");
    assert.ok(valueOf(after, "kafka_network_requestmetrics_totaltimems_sum", { request: "Produce" })! > 0);
    assert.equal(valueOf(after, "kafka_log_log_logendoffset", { topic: "m", partition: "0" }), 12);
    assert.equal(valueOf(after, "kafka_log_log_logstartoffset", { topic: "m", partition: "0" }), 0);
    assert.equal(valueOf(after, "kafka_log_log_size", { topic: "m", partition: "1" }), other.length);
    assert.equal(valueOf(after, "kafka_consumergroup_lag", { group: "lagging", topic: "m", partition: "0" }), 10, "high watermark 12 - committed 2");
    assert.equal(valueOf(after, "kafka_consumergroup_lag", { group: "lagging", topic: "m", partition: "1" }), 0);

    // A deleted topic's series go, as Kafka removes a deleted topic's metrics.
    const del = await fetch(`${b.adminUrl}/v1/topics/m`, { method: "DELETE" });
    assert.equal(del.status, 200);
    const gone = await scrape(b.adminUrl);
    assert.equal(valueOf(gone, "kafka_server_brokertopicmetrics_messagesin_total", { topic: "m" }), undefined);
    assert.equal(valueOf(gone, "kafka_log_log_logendoffset", { topic: "m", partition: "0" }), undefined);
    assert.equal(valueOf(gone, "kafka_network_requestmetrics_requests_total", { request: "Produce", version: "8" }), producesBefore + 4, "request counts stay");
  } finally {
    c.close();
    await b.stop();
  }
});

test("metrics: the event-loop delay sampler sees a blocked loop", async () => {
  const b = await startBroker({ "admin.listeners": "http://127.0.0.1:0" });
  try {
    await new Promise((r) => setTimeout(r, 300));
    const until = Date.now() + 900; // longer than one 500 ms sample period
    while (Date.now() < until) {
      // busy: the sampler's timer cannot fire
    }
    await new Promise((r) => setTimeout(r, 600));
    const m = await scrape(b.adminUrl);
    assert.ok(valueOf(m, "nodejs_eventloop_lag_max_seconds")! >= 0.2, `max lag ${valueOf(m, "nodejs_eventloop_lag_max_seconds")} s`);
  } finally {
    await b.stop();
  }
});

test("metrics: connections, the frame pool (queued.max.request.bytes) and refusals at accept are reported", async () => {
  const b = await startBroker({ "admin.listeners": "http://127.0.0.1:0", "max.connections.per.ip": "2", "queued.max.request.bytes": "209715208" });
  const held: WireClient[] = [];
  try {
    held.push(await WireClient.connect(b.port), await WireClient.connect(b.port));
    for (const c of held) await c.request(ApiVersionsApi, 0, {});
    // A third connection from the same address is over max.connections.per.ip: closed at accept.
    const third = await WireClient.connect(b.port);
    assert.equal(await third.waitClosed(10_000), true, "the third connection is closed");
    third.close();
    // A partial frame of 1 MiB declared: its whole size is reserved from the pool while it is read.
    await held[0].write(new Uint8Array([0, 0x10, 0, 0, 0, 0, 0, 0]));
    let m = await scrape(b.adminUrl);
    for (let i = 0; i < 50 && (valueOf(m, "kafka_network_socketserver_memorypoolused") ?? 0) < 1 << 20; i++) {
      await new Promise((r) => setTimeout(r, 20));
      m = await scrape(b.adminUrl);
    }
    assert.equal(valueOf(m, "kafka_server_socket_server_metrics_connection_count"), 2);
    // The frame with its 4-byte size prefix, and the 4 bytes the other connection holds for the
    // size prefix of its next frame.
    const used = (1 << 20) + 4 + 4;
    assert.equal(valueOf(m, "kafka_network_socketserver_memorypoolused"), used);
    assert.equal(valueOf(m, "kafka_network_socketserver_memorypoolavailable"), 209715208 - used);
    assert.equal(valueOf(m, "strand_server_memory_pool_waiting"), 0);
    assert.equal(valueOf(m, "strand_server_connections_throttled"), 0);
    assert.equal(valueOf(m, "strand_server_connections_refused_total", { reason: "max.connections.per.ip" }), 1);
    assert.equal(m.get("strand_server_connections_refused_total")?.type, "counter");
    assert.equal(valueOf(m, "strand_server_connections_waiting_for_slot"), 0);
    assert.equal(valueOf(m, "strand_server_connections_closed_over_max_total"), 0);
    assert.equal(m.get("strand_server_connections_closed_over_max_total")?.type, "counter");
  } finally {
    for (const c of held) c.close();
    await b.stop();
  }
});
