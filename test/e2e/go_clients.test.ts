// The Go clients Debian ships, against a real broker in this process (the runtime's own
// platform: Bun's under bun, Deno's under deno): sarama 1.22.1, segmentio/kafka-go 0.2.1 and
// confluent-kafka-go 0.11.6 (cgo over librdkafka 2.0.2). The programs in
// test/clients/go/src/strandclients/ are built offline in GOPATH mode (GO111MODULE=off,
// GOPATH=<temp>:test/clients/go:/usr/share/gocode, GOPROXY=off: nothing is downloaded) into a
// temporary directory. Each client produces keys k<i> / values v<i>
// into a 3-partition topic, consumes them in a group (reporting a SHA-256 of the sorted
// "key\tvalue" lines it read, which the test recomputes from what was sent), and commits; the
// committed offsets, read back over the wire, are the partitions' ends. A second round produces
// more and consumes again in the same group: only the new messages arrive, so the commits were
// used.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startBroker } from "../helpers/broker.ts";
import { fetchOffsets } from "../helpers/groups.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { createTopic, listOffset, WireClient } from "../helpers/wire.ts";
import { assertStoredCodec, Codec } from "./stored_batches.ts";

const GO_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "clients", "go");
const BROKER = { "group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "5" };
const PARTITIONS = 3;
const N = 3_000;
const MORE = 300;

/**
 * Builds the package strandclients/<name> into a fresh temporary directory; returns the binary and
 * a cleanup. The build cache lives in the system temp dir, so a second run does not recompile
 * sarama's dependencies.
 */
async function buildGo(name: string): Promise<{ bin: string; cleanup: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), `strand-go-${name}-`));
  const bin = join(dir, name);
  const env = [
    "GO111MODULE=off",
    `GOPATH=${join(dir, "gopath")}:${GO_DIR}:/usr/share/gocode`,
    `GOCACHE=${join(tmpdir(), "strand-go-build-cache")}`,
    "GOPROXY=off",
    "GOFLAGS=",
    `HOME=${dir}`,
  ];
  const r = await run("env", [...env, "go", "build", "-o", bin, `strandclients/${name}`], { timeoutMs: 300_000 });
  if (r.code !== 0) {
    rmSync(dir, { recursive: true, force: true });
    assert.fail(`go build ${name}: exit ${r.code}: ${r.stderr.slice(-3000)}`);
  }
  return { bin, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

type Summary = Record<string, unknown> & { ok: boolean; errors: string[] };

async function goRun(bin: string, args: string[]): Promise<Summary> {
  const r = await run(bin, args, { timeoutMs: 120_000 });
  const last = r.stdout.toString().trim().split("\n").pop() ?? "";
  let s: Summary;
  try {
    s = JSON.parse(last);
  } catch {
    assert.fail(`${bin} ${args.join(" ")}: exit ${r.code}, no JSON summary; stdout: ${last.slice(-500)} stderr: ${r.stderr.slice(-2000)}`);
  }
  const why = `${args[0]}: ${last.slice(0, 1500)} ${r.stderr.slice(-1500)}`;
  assert.deepEqual(s.errors, [], why);
  assert.equal(s.ok, true, why);
  assert.equal(r.code, 0, why);
  return s;
}

/** SHA-256 of the sorted "k<i>\tv<i>\n" lines for i in [from, from + count), as the programs report. */
function digest(from: number, count: number): string {
  const lines: string[] = [];
  for (let i = from; i < from + count; i++) lines.push(`k${i}\tv${i}`);
  lines.sort();
  const h = createHash("sha256");
  for (const l of lines) h.update(`${l}\n`);
  return h.digest("hex");
}

async function endOffsets(c: WireClient, topic: string): Promise<Record<string, bigint>> {
  const out: Record<string, bigint> = {};
  for (let p = 0; p < PARTITIONS; p++) out[`${topic}-${p}`] = (await listOffset(c, topic, p, -1n)).offset;
  return out;
}

/**
 * The whole round against one broker: produce N, consume N in group, commits at the ends; produce
 * MORE, consume MORE in the same group (resuming from the commits), commits at the new ends.
 * `extra` is appended to every command line (sarama's Kafka version).
 */
async function produceConsumeCommit(bin: string, client: string, extra: string[] = []): Promise<void> {
  const b = await startBroker(BROKER);
  const c = await WireClient.connect(b.port);
  try {
    const topic = `go-${client}`;
    const group = `go-${client}-group`;
    assert.equal((await createTopic(c, topic, { numPartitions: PARTITIONS })).errorCode, 0);

    assert.equal((await goRun(bin, ["produce", b.bootstrap, topic, "0", String(N), ...extra])).sent, N);
    const ends = await endOffsets(c, topic);
    assert.equal(Object.values(ends).reduce((a, x) => a + x, 0n), BigInt(N), `every message stored once: ${JSON.stringify(ends, (_, v) => typeof v === "bigint" ? String(v) : v)}`);
    assert.ok(Object.values(ends).every((e) => e > 0n), "keys hashed over every partition");

    const first = await goRun(bin, ["consume", b.bootstrap, topic, group, String(N), ...extra]);
    assert.equal(first.received, N);
    assert.equal(first.distinct, N);
    assert.equal(first.sha256, digest(0, N), "what was read is what was sent");
    assert.deepEqual(first.partitions, [0, 1, 2]);
    if (first.bad_headers !== undefined) assert.equal(first.bad_headers, 0);
    const committed = await fetchOffsets(c, group, null);
    assert.equal(committed.errorCode, 0);
    assert.deepEqual(committed.offsets, ends, "the group's commits are the partitions' ends");

    assert.equal((await goRun(bin, ["produce", b.bootstrap, topic, String(N), String(MORE), ...extra])).sent, MORE);
    const second = await goRun(bin, ["consume", b.bootstrap, topic, group, String(MORE), ...extra]);
    assert.equal(second.received, MORE);
    assert.equal(second.sha256, digest(N, MORE), "the second consumer resumed from the commits: only the new messages");
    assert.deepEqual((await fetchOffsets(c, group, null)).offsets, await endOffsets(c, topic));
  } finally {
    c.close();
    await b.stop();
  }
}

// sarama 1.22.1 does not negotiate versions: config.Version picks them. 2.1.0 means Produce v7,
// Fetch v10, JoinGroup v3, OffsetCommit v6...; 0.11.0.0 means Produce v3, Fetch v4, OffsetCommit
// v2; 0.10.2.0 means Produce v2 (magic 1 message sets) and Fetch v3, which the broker answers
// with its batches down-converted to message format v1.
for (const version of ["2.1.0", "0.11.0.0", "0.10.2.0"] as const) {
  test(
    `sarama 1.22.1 as Kafka ${version}: SyncProducer acks=all, ConsumerGroup reads every message and commits; a second session resumes`,
    { skip: skipUnless("sarama") },
    async () => {
      const { bin, cleanup } = await buildGo("sarama");
      try {
        await produceConsumeCommit(bin, `sarama-${version.replaceAll(".", "-")}`, [version]);
      } finally {
        cleanup();
      }
    },
  );
}

// sarama 1.22.1 sends zstd in Produce v3 whatever the version (1.23 moved it to v7); Kafka refuses
// zstd below Produce v7 (KIP-110) with UNSUPPORTED_COMPRESSION_TYPE, and so does strand.
test("sarama 1.22.1 as Kafka 2.1.0: gzip, snappy and lz4 batches stored in their codec and read back; zstd (sent in Produce v3) refused as Kafka refuses it", { skip: skipUnless("sarama") }, async () => {
  const { bin, cleanup } = await buildGo("sarama");
  const b = await startBroker(BROKER);
  const c = await WireClient.connect(b.port);
  try {
    for (const codec of ["gzip", "snappy", "lz4"] as const) {
      const topic = `go-sarama-${codec}`;
      assert.equal((await createTopic(c, topic, { numPartitions: PARTITIONS })).errorCode, 0);
      assert.equal((await goRun(bin, ["produce", b.bootstrap, topic, "0", String(N), `2.1.0:${codec}`])).sent, N);
      for (let p = 0; p < PARTITIONS; p++) assertStoredCodec(b.logDir, topic, p, Codec[codec]);
      const s = await goRun(bin, ["consume", b.bootstrap, topic, `${topic}-group`, String(N), "2.1.0"]);
      assert.equal(s.received, N);
      assert.equal(s.sha256, digest(0, N), codec);
    }
    assert.equal((await createTopic(c, "go-sarama-zstd", { numPartitions: 1 })).errorCode, 0);
    const r = await run(bin, ["produce", b.bootstrap, "go-sarama-zstd", "0", "10", "2.1.0:zstd"], { timeoutMs: 60_000 });
    assert.equal(r.code, 1);
    assert.match(r.stdout.toString(), /does not support the compression type/, "UNSUPPORTED_COMPRESSION_TYPE (76) in sarama's words");
    assert.equal((await listOffset(c, "go-sarama-zstd", 0, -1n)).offset, 0n, "nothing stored");
  } finally {
    c.close();
    await b.stop();
    cleanup();
  }
});

test("sarama 1.22.1: two ConsumerGroup members split 3 partitions, read every message once between them, and commit", { skip: skipUnless("sarama") }, async () => {
  const { bin, cleanup } = await buildGo("sarama");
  const b = await startBroker(BROKER);
  const c = await WireClient.connect(b.port);
  try {
    const topic = "go-sarama-pair";
    const group = "go-sarama-pair-group";
    assert.equal((await createTopic(c, topic, { numPartitions: PARTITIONS })).errorCode, 0);
    const s = await goRun(bin, ["pair", b.bootstrap, topic, group, String(N), "2.1.0"]);
    assert.deepEqual((s.members as number[][]).map((ps) => ps.length), [2, 1], `the range assignor's split: ${JSON.stringify(s.members)}`);
    assert.deepEqual((s.members as number[][]).flat().sort(), [0, 1, 2]);
    assert.equal(s.received, N, "no message read twice: both members joined before anything was produced");
    assert.equal(s.distinct, N);
    assert.equal(s.sha256, digest(0, N));
    assert.deepEqual((await fetchOffsets(c, group, null)).offsets, await endOffsets(c, topic));
  } finally {
    c.close();
    await b.stop();
    cleanup();
  }
});

test("confluent-kafka-go 0.11.6 (librdkafka): produces with headers, a subscribed consumer reads every message, commits; a second one resumes", { skip: skipUnless("confluent-kafka-go") }, async () => {
  const { bin, cleanup } = await buildGo("confluent");
  try {
    await produceConsumeCommit(bin, "confluent");
  } finally {
    cleanup();
  }
});

test("kafka-go 0.2.1: Writer (Produce v2, magic 1 message sets: plain, gzip, snappy, lz4) hash-partitions every message; stored in its codec, kcat reads back each key and value", { skip: skipUnless("kafka-go") || skipUnless("kcat") }, async () => {
  const { bin, cleanup } = await buildGo("kafkago");
  const b = await startBroker(BROKER);
  const c = await WireClient.connect(b.port);
  try {
    for (const codec of ["none", "gzip", "snappy", "lz4"] as const) {
      const topic = `go-kafkago-${codec}`;
      assert.equal((await createTopic(c, topic, { numPartitions: PARTITIONS })).errorCode, 0);
      assert.equal((await goRun(bin, ["produce", b.bootstrap, topic, "0", String(N), codec])).sent, N);
      const ends = await endOffsets(c, topic);
      assert.equal(Object.values(ends).reduce((a, x) => a + x, 0n), BigInt(N));
      assert.ok(Object.values(ends).every((e) => e > 0n), "keys hashed over every partition");
      for (let p = 0; p < PARTITIONS; p++) assertStoredCodec(b.logDir, topic, p, Codec[codec]);
      const r = await run("kcat", ["-b", b.bootstrap, "-C", "-t", topic, "-e", "-q", "-f", "%k\t%s\n"], { timeoutMs: 60_000 });
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.toString().trim().split("\n").sort();
      const h = createHash("sha256");
      for (const l of lines) h.update(`${l}\n`);
      assert.equal(lines.length, N);
      assert.equal(h.digest("hex"), digest(0, N), `${codec}: what is stored is what was sent`);
    }
  } finally {
    c.close();
    await b.stop();
    cleanup();
  }
});

// kafka-go 0.2.1 reads with Fetch v2 (magic 1 message sets), whatever the broker advertises: its
// Reader needs the down-conversion of Fetch v0-3 (to message format v1).
test(
  "kafka-go 0.2.1: a group Reader (Fetch v2) reads every message and commits each; a second one resumes",
  { skip: skipUnless("kafka-go") },
  async () => {
    const { bin, cleanup } = await buildGo("kafkago");
    try {
      await produceConsumeCommit(bin, "kafkago", ["none"]);
    } finally {
      cleanup();
    }
  },
);
