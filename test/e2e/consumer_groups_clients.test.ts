// Consumer groups with the other client families: confluent-kafka-python (librdkafka; two
// consumers of one group, polled from one thread, commit after processing), kcat's balanced
// consumer (-G), and @platformatic/kafka 1.35 (npm, in the test's runtime).
import { test } from "node:test";
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { Consumer, MessagesStreamFallbackModes, MessagesStreamModes, Producer, stringDeserializers, stringSerializers } from "@platformatic/kafka";
import { DescribeGroupsApi } from "../../src/protocol/api/mod.ts";
import { startBroker } from "../helpers/broker.ts";
import { decodeAssignment, fetchOffsets } from "../helpers/groups.ts";
import { run, skipUnless } from "../helpers/tools.ts";
import { createTopic, listOffset, WireClient } from "../helpers/wire.ts";

const PYTHON = "/usr/bin/python3";
const PY_DIR = join(dirname(fileURLToPath(import.meta.url)), "py");
const BROKER = { "group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "10" };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function describeGroup(c: WireClient, groupId: string, topic: string) {
  const r = await c.request(DescribeGroupsApi, 5, { groups: [groupId], includeAuthorizedOperations: false });
  const g = (r.groups as { errorCode: number; groupState: string; protocolType: string; protocolData: string; members: { memberId: string; clientId: string; memberAssignment: Uint8Array }[] }[])[0];
  return {
    errorCode: g.errorCode,
    state: g.groupState,
    protocolType: g.protocolType,
    protocol: g.protocolData,
    members: g.members.map((m) => ({ memberId: m.memberId, clientId: m.clientId, partitions: decodeAssignment(m.memberAssignment)[topic] ?? [] })),
  };
}

async function endOffsets(c: WireClient, topic: string, partitions: number): Promise<Record<string, bigint>> {
  const out: Record<string, bigint> = {};
  for (let p = 0; p < partitions; p++) out[`${topic}-${p}`] = (await listOffset(c, topic, p, -1n)).offset;
  return out;
}

test("confluent-kafka: two consumers of one group split the partitions, read every message once and commit", { skip: skipUnless("confluent_kafka") }, async () => {
  const b = await startBroker(BROKER);
  const c = await WireClient.connect(b.port);
  try {
    const topic = "py-group";
    assert.equal((await createTopic(c, topic, { numPartitions: 4 })).errorCode, 0);
    const N = 20_000;
    const r = await run(PYTHON, [join(PY_DIR, "confluent_group.py"), b.bootstrap, topic, "py-workers", String(N), "4"], { timeoutMs: 150_000 });
    const last = r.stdout.toString().trim().split("\n").pop() ?? "";
    let s: Record<string, unknown>;
    try {
      s = JSON.parse(last);
    } catch {
      assert.fail(`confluent_group.py: exit ${r.code}, no JSON summary; stdout: ${last.slice(-500)} stderr: ${r.stderr.slice(-2000)}`);
    }
    const why = `${last} ${r.stderr.slice(-2000)}`;
    assert.equal(s.sent, N, why);
    assert.equal(s.distinct, N, why);
    assert.equal(s.duplicates, 0, why);
    assert.deepEqual(s.client_logs, [], why);
    assert.equal(s.ok, true, why);
    // The committed offsets, read back over the wire, are the partitions' ends.
    assert.deepEqual((await fetchOffsets(c, "py-workers", null)).offsets, await endOffsets(c, topic, 4));
    assert.equal((await describeGroup(c, "py-workers", topic)).state, "Empty", "both consumers left on close()");
  } finally {
    c.close();
    await b.stop();
  }
});

test("kcat -G: a balanced consumer joins a group, reads every partition, commits; a second run resumes from the commits", { skip: skipUnless("kcat") }, async () => {
  const b = await startBroker(BROKER);
  const c = await WireClient.connect(b.port);
  try {
    const topic = "kcat-group";
    assert.equal((await createTopic(c, topic, { numPartitions: 3 })).errorCode, 0);
    // 1,000 lines into each partition (unkeyed lines would go where librdkafka's sticky partitioner puts them).
    for (let p = 0; p < 3; p++) {
      let input = "";
      for (let i = p * 1_000; i < (p + 1) * 1_000; i++) input += `m${i}\n`;
      assert.equal((await run("kcat", ["-b", b.bootstrap, "-P", "-t", topic, "-p", String(p), "-X", "acks=all"], { input })).code, 0);
    }
    const consume = () =>
      run("kcat", ["-b", b.bootstrap, "-G", "kcat-workers", topic, "-e", "-q", "-X", "auto.offset.reset=earliest", "-f", "%p %o %s\\n"], { timeoutMs: 60_000 });
    const r = await consume();
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.toString().trim().split("\n");
    assert.equal(lines.length, 3_000);
    assert.deepEqual(new Set(lines.map((l) => l.split(" ")[2])), new Set(Array.from({ length: 3_000 }, (_, i) => `m${i}`)));
    assert.deepEqual(new Set(lines.map((l) => l.split(" ")[0])), new Set(["0", "1", "2"]));
    // librdkafka commits what it consumed when it closes.
    assert.deepEqual((await fetchOffsets(c, "kcat-workers", null)).offsets, await endOffsets(c, topic, 3));
    // Again: nothing new, so nothing is read.
    const again = await consume();
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout.toString().trim(), "");
    const g = await describeGroup(c, "kcat-workers", topic);
    assert.equal(g.state, "Empty");
    assert.equal(g.protocolType, "consumer");
  } finally {
    c.close();
    await b.stop();
  }
});

test("kcat -G: two balanced consumers running together each own part of the topic", { skip: skipUnless("kcat") }, async () => {
  const b = await startBroker(BROKER);
  const c = await WireClient.connect(b.port);
  const { spawn } = await import("node:child_process");
  const procs: ReturnType<typeof spawn>[] = [];
  try {
    const topic = "kcat-pair";
    assert.equal((await createTopic(c, topic, { numPartitions: 4 })).errorCode, 0);
    for (let i = 0; i < 2; i++) {
      procs.push(spawn("kcat", ["-b", b.bootstrap, "-G", "kcat-pair", topic, "-q", "-X", "client.id=kcat-" + i, "-X", "session.timeout.ms=6000"], { stdio: "ignore" }));
    }
    const deadline = Date.now() + 30_000;
    let g = await describeGroup(c, "kcat-pair", topic);
    while (!(g.state === "Stable" && g.members.length === 2 && g.members.every((m) => m.partitions.length > 0)) && Date.now() < deadline) {
      await sleep(200);
      g = await describeGroup(c, "kcat-pair", topic);
    }
    assert.equal(g.state, "Stable", JSON.stringify(g));
    assert.deepEqual(g.members.map((m) => m.clientId).sort(), ["kcat-0", "kcat-1"]);
    assert.deepEqual(g.members.flatMap((m) => m.partitions).sort(), [0, 1, 2, 3]);
  } finally {
    for (const p of procs) p.kill("SIGTERM");
    await Promise.all(procs.map((p) => new Promise((r) => (p.exitCode !== null ? r(null) : p.on("exit", r)))));
    c.close();
    await b.stop();
  }
});

test("@platformatic/kafka: two consumers join one group (classic protocol), split the partitions, commit and read commits back", async () => {
  const b = await startBroker(BROKER);
  const c = await WireClient.connect(b.port);
  const consumers = [0, 1].map((i) =>
    new Consumer({
      groupId: "plt-workers",
      clientId: `plt-${i}`,
      bootstrapBrokers: [b.bootstrap],
      deserializers: stringDeserializers,
      maxWaitTime: 200,
      sessionTimeout: 6_000,
      heartbeatInterval: 500,
    })
  );
  try {
    const topic = "plt-group";
    assert.equal((await createTopic(c, topic, { numPartitions: 4 })).errorCode, 0);
    const errors: unknown[] = [];
    for (const consumer of consumers) {
      // LATEST on an empty topic: the group is joined; no fetch returns records (see the next test).
      const stream = await consumer.consume({ topics: [topic], mode: MessagesStreamModes.LATEST, autocommit: false });
      stream.on("error", (e) => errors.push(e));
    }
    const deadline = Date.now() + 30_000;
    const owned = () => consumers.map((x) => (x.assignments ?? []).flatMap((a) => a.topic === topic ? a.partitions : []));
    while (!(owned().every((o) => o.length > 0) && consumers[0].generationId === consumers[1].generationId) && Date.now() < deadline) await sleep(100);
    const [a0, a1] = owned();
    assert.ok(a0.length > 0 && a1.length > 0, `both own partitions: ${JSON.stringify(owned())}`);
    assert.deepEqual([...a0, ...a1].sort(), [0, 1, 2, 3]);
    const g = await describeGroup(c, "plt-workers", topic);
    assert.equal(g.state, "Stable");
    assert.deepEqual(g.members.map((m) => [m.clientId, m.partitions.sort()]).sort(), [["plt-0", a0.sort()], ["plt-1", a1.sort()]]);

    await consumers[0].commit({ offsets: a0.map((p) => ({ topic, partition: p, offset: BigInt(10 + p), leaderEpoch: 0 })) });
    await consumers[1].commit({ offsets: a1.map((p) => ({ topic, partition: p, offset: BigInt(10 + p), leaderEpoch: 0 })) });
    const committed = await consumers[1].listCommittedOffsets({ topics: [{ topic, partitions: [0, 1, 2, 3] }] });
    assert.deepEqual(committed.get(topic), [10n, 11n, 12n, 13n]);
    assert.deepEqual((await fetchOffsets(c, "plt-workers", null)).offsets, { [`${topic}-0`]: 10n, [`${topic}-1`]: 11n, [`${topic}-2`]: 12n, [`${topic}-3`]: 13n });
    assert.deepEqual(errors, []);
  } finally {
    await Promise.all(consumers.map(async (x) => {
      try {
        await x.close(true);
      } catch {
        // already closed
      }
    }));
    c.close();
    await b.stop();
  }
});

test("@platformatic/kafka: a producer's messages consumed by two group members (Fetch by topic id), committed after processing; a new member resumes from the commits", async () => {
  const b = await startBroker(BROKER);
  const c = await WireClient.connect(b.port);
  const topic = "plt-consume";
  const groupId = "plt-readers";
  const producer = new Producer({ clientId: "plt-producer", bootstrapBrokers: [b.bootstrap], serializers: stringSerializers });
  const consumers: Consumer<string, string, string, string>[] = [];
  const newConsumer = (i: number) => {
    const x = new Consumer({
      groupId,
      clientId: `plt-reader-${i}`,
      bootstrapBrokers: [b.bootstrap],
      deserializers: stringDeserializers,
      maxWaitTime: 200,
      sessionTimeout: 6_000,
      heartbeatInterval: 500,
    });
    consumers.push(x);
    return x;
  };
  const seen: { value: string; member: number; partition: number }[] = [];
  const errors: unknown[] = [];
  /** Reads the stream, committing each message after it is recorded (commit after processing). */
  const readAll = async (stream: AsyncIterable<{ value: string; partition: number; commit(): unknown }>, member: number) => {
    try {
      for await (const m of stream) {
        seen.push({ value: m.value, member, partition: m.partition });
        await m.commit();
      }
    } catch (e) {
      errors.push(e);
    }
  };
  const send = async (from: number, to: number) => {
    const messages = [];
    for (let i = from; i < to; i++) messages.push({ topic, key: `k${i}`, value: `m${i}`, partition: i % 4 });
    for (let i = 0; i < messages.length; i += 250) await producer.send({ messages: messages.slice(i, i + 250) });
  };
  const waitFor = async (what: string, cond: () => boolean, ms = 30_000) => {
    const deadline = Date.now() + ms;
    while (!cond() && Date.now() < deadline) await sleep(50);
    assert.ok(cond(), `${what} (seen ${seen.length}, errors ${errors.map(String).join("; ")})`);
  };
  try {
    assert.equal((await createTopic(c, topic, { numPartitions: 4 })).errorCode, 0);
    // Both members join first (nothing to read yet), so no rebalance moves partitions mid-stream.
    const streams = [];
    for (const i of [0, 1]) {
      const stream = await newConsumer(i).consume({ topics: [topic], mode: MessagesStreamModes.COMMITTED, fallbackMode: MessagesStreamFallbackModes.EARLIEST, autocommit: false });
      stream.on("error", (e) => errors.push(e));
      streams.push(stream);
    }
    const owned = () => consumers.map((x) => (x.assignments ?? []).flatMap((a) => a.topic === topic ? a.partitions : []));
    await waitFor("both members own partitions", () => owned().every((o) => o.length > 0) && consumers[0].generationId === consumers[1].generationId);
    assert.deepEqual(owned().flat().sort(), [0, 1, 2, 3]);
    const readers = streams.map((st, i) => readAll(st as never, i));

    const N = 2_000;
    await send(0, N);
    await waitFor(`all ${N} messages consumed`, () => seen.length >= N);
    await sleep(300); // anything more would be a duplicate
    assert.equal(seen.length, N, "no duplicates");
    assert.deepEqual(new Set(seen.map((x) => x.value)), new Set(Array.from({ length: N }, (_, i) => `m${i}`)));
    // Each member read exactly the partitions it owns.
    const [a0, a1] = owned();
    for (const x of seen) assert.ok((x.member === 0 ? a0 : a1).includes(x.partition), `m${x.value} from partition ${x.partition} read by member ${x.member}`);
    // Committed (OffsetCommit from the client) up to each partition's end; the last may be in flight.
    const ends = await endOffsets(c, topic, 4);
    const committed = async () => {
      const deadline = Date.now() + 5_000;
      let got = (await fetchOffsets(c, groupId, null)).offsets;
      while (!isDeepStrictEqual(got, ends) && Date.now() < deadline) {
        await sleep(50);
        got = (await fetchOffsets(c, groupId, null)).offsets;
      }
      return got;
    };
    assert.deepEqual(await committed(), ends);
    assert.deepEqual(errors.map(String), []);

    for (const x of consumers.splice(0)) await x.close(true);
    await Promise.all(readers);
    assert.equal((await describeGroup(c, groupId, topic)).state, "Empty", "both members left on close()");

    // A new member of the group resumes from the commits: it reads only what came after.
    await send(N, N + 100);
    seen.length = 0;
    const stream = await newConsumer(2).consume({ topics: [topic], mode: MessagesStreamModes.COMMITTED, fallbackMode: MessagesStreamFallbackModes.EARLIEST, autocommit: false });
    stream.on("error", (e) => errors.push(e));
    const reader = readAll(stream as never, 2);
    await waitFor("the 100 new messages consumed", () => seen.length >= 100);
    await sleep(300);
    assert.deepEqual(seen.map((x) => x.value).sort(), Array.from({ length: 100 }, (_, i) => `m${N + i}`).sort());
    Object.assign(ends, await endOffsets(c, topic, 4));
    assert.deepEqual(await committed(), ends);
    for (const x of consumers.splice(0)) await x.close(true);
    await reader;
    assert.deepEqual(errors.map(String), []);
  } finally {
    for (const x of consumers) {
      try {
        await x.close(true);
      } catch {
        // already closed
      }
    }
    await producer.close();
    c.close();
    await b.stop();
  }
});
