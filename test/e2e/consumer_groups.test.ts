// Consumer groups with kafkajs 2.2.4 (npm) in the test's runtime against a real broker in this
// process: each partition of a 6-partition topic is owned by exactly one member (as
// DescribeGroups and the consumers' own GROUP_JOIN events both say), a member joining, leaving
// cleanly and going silent (session timeout) each lead to a rebalance after which all 6
// partitions are owned again; a long run with commits after processing loses nothing when a
// consumer process is SIGKILLed (the duplicates come only from the killed member's partitions,
// and are counted); two groups each get every message; committed offsets survive a restart.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { AssignerProtocol, Kafka, logLevel } from "kafkajs";
import type { Admin, Consumer, Producer } from "kafkajs";
import { startBroker, type TestBroker } from "../helpers/broker.ts";
import { RawMember, subscriptionV0 } from "../helpers/groups.ts";
import { fetchOffsets } from "../helpers/groups.ts";
import { WireClient } from "../helpers/wire.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const BUN = join(HERE, "..", "..", "node_modules", ".bin", "bun");
const SESSION_MS = 6_000;
const BROKER = { "group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "10" };

function client(bootstrap: string, clientId = "strand-groups"): Kafka {
  return new Kafka({
    clientId,
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 5_000,
    requestTimeout: 30_000,
    retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1_000 },
  });
}

function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface MemberView {
  memberId: string;
  clientId: string;
  partitions: number[];
}

interface GroupView {
  state: string;
  protocol: string;
  members: MemberView[];
}

async function describe(admin: Admin, groupId: string, topic: string): Promise<GroupView> {
  const { groups } = await admin.describeGroups([groupId]);
  const g = groups[0];
  return {
    state: g.state,
    protocol: g.protocol,
    members: g.members.map((m) => {
      const a = m.memberAssignment.length === 0 ? null : AssignerProtocol.MemberAssignment.decode(m.memberAssignment);
      return { memberId: m.memberId, clientId: m.clientId, partitions: [...(a?.assignment[topic] ?? [])].sort((x, y) => x - y) };
    }),
  };
}

/** Polls DescribeGroups until the group is Stable with n members that own every partition exactly once. */
async function waitBalanced(admin: Admin, groupId: string, topic: string, n: number, partitions: number, timeoutMs = 45_000): Promise<GroupView> {
  const deadline = Date.now() + timeoutMs;
  let last: GroupView | undefined;
  while (Date.now() < deadline) {
    last = await describe(admin, groupId, topic);
    const owned = last.members.flatMap((m) => m.partitions).sort((a, b) => a - b);
    if (last.state === "Stable" && last.members.length === n && owned.length === partitions && owned.every((p, i) => p === i)) return last;
    await sleep(200);
  }
  throw new Error(`group ${groupId} not balanced over ${n} members: ${JSON.stringify(last)}`);
}

function ownedExactlyOnce(view: GroupView, partitions: number): void {
  const owners = new Map<number, string>();
  for (const m of view.members) {
    for (const p of m.partitions) {
      assert.ok(!owners.has(p), `partition ${p} owned by ${owners.get(p)} and ${m.memberId}`);
      owners.set(p, m.memberId);
    }
  }
  assert.equal(owners.size, partitions);
}

interface Tracked {
  consumer: Consumer;
  memberId: string;
  assignment: number[];
  joins: number;
}

async function startConsumer(kafka: Kafka, groupId: string, topic: string, onMessage: (p: number, o: string, v: string) => void = () => {}): Promise<Tracked> {
  const consumer = kafka.consumer({ groupId, sessionTimeout: SESSION_MS, heartbeatInterval: 500, rebalanceTimeout: 20_000, maxWaitTimeInMs: 200 });
  const t: Tracked = { consumer, memberId: "", assignment: [], joins: 0 };
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    t.memberId = e.payload.memberId;
    t.assignment = [...(e.payload.memberAssignment[topic] ?? [])].sort((a, b) => a - b);
    t.joins++;
  });
  await within(15_000, "consumer.connect", consumer.connect());
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ eachMessage: async ({ partition, message }) => onMessage(partition, message.offset, message.value!.toString()) });
  return t;
}

/** The consumers' own view (GROUP_JOIN) agrees with DescribeGroups once they have all caught up. */
async function waitConsumersAgree(view: GroupView, consumers: Tracked[], timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const want = new Map(view.members.map((m) => [m.memberId, m.partitions.join(",")]));
  for (;;) {
    const ok = consumers.every((c) => want.get(c.memberId) === c.assignment.join(","));
    if (ok) return;
    if (Date.now() > deadline) {
      assert.fail(`consumers' GROUP_JOIN views ${JSON.stringify(consumers.map((c) => [c.memberId, c.assignment]))} differ from ${JSON.stringify(view.members)}`);
    }
    await sleep(100);
  }
}

async function withBroker(fn: (b: TestBroker, kafka: Kafka, admin: Admin) => Promise<void>): Promise<void> {
  const b = await startBroker(BROKER);
  const kafka = client(b.bootstrap);
  const admin = kafka.admin();
  try {
    await within(15_000, "admin.connect", admin.connect());
    await fn(b, kafka, admin);
  } finally {
    await admin.disconnect().catch(() => {});
    await b.stop();
  }
}

async function produceNumbers(producer: Producer, topic: string, from: number, to: number, batch = 2_000): Promise<void> {
  for (let start = from; start < to; start += batch) {
    const messages = [];
    for (let i = start; i < Math.min(to, start + batch); i++) messages.push({ value: String(i) });
    await within(30_000, `send ${start}`, producer.send({ topic, acks: -1, messages }));
  }
}

test("kafkajs: 3 members share 6 partitions; a 4th joining, one leaving and one going silent each rebalance to full ownership", async () => {
  await withBroker(async (b, kafka, admin) => {
    const topic = "orders";
    const groupId = "members";
    await admin.createTopics({ topics: [{ topic, numPartitions: 6 }], waitForLeaders: true });
    const consumers: Tracked[] = [];
    try {
      for (let i = 0; i < 3; i++) consumers.push(await startConsumer(kafka, groupId, topic));
      let view = await waitBalanced(admin, groupId, topic, 3, 6);
      ownedExactlyOnce(view, 6);
      assert.deepEqual(view.members.map((m) => m.partitions.length), [2, 2, 2], "6 partitions over 3 members: 2 each");
      await waitConsumersAgree(view, consumers);
      assert.equal(view.protocol, "RoundRobinAssigner");

      // A fourth member joins.
      consumers.push(await startConsumer(kafka, groupId, topic));
      view = await waitBalanced(admin, groupId, topic, 4, 6);
      ownedExactlyOnce(view, 6);
      assert.ok(view.members.every((m) => m.partitions.length >= 1));
      await waitConsumersAgree(view, consumers);
      assert.ok(view.members.some((m) => m.memberId === consumers[3].memberId));

      // One leaves cleanly (LeaveGroup).
      const leaving = consumers.splice(1, 1)[0];
      await within(20_000, "disconnect", leaving.consumer.disconnect());
      view = await waitBalanced(admin, groupId, topic, 3, 6);
      ownedExactlyOnce(view, 6);
      assert.ok(!view.members.some((m) => m.memberId === leaving.memberId));
      await waitConsumersAgree(view, consumers);

      // A raw member joins with the consumers' protocol, takes its share, then goes silent.
      const zombie = await RawMember.connect(b.port, groupId, {
        sessionTimeoutMs: SESSION_MS,
        protocols: [{ name: "RoundRobinAssigner", metadata: subscriptionV0([topic]) }],
      });
      try {
        await zombie.join();
        assert.equal(await zombie.sync(), 0);
        const zView = await waitBalanced(admin, groupId, topic, 4, 6);
        const zPartitions = zView.members.find((m) => m.memberId === zombie.memberId)!.partitions;
        assert.ok(zPartitions.length >= 1, "the silent member got partitions");
        const silentSince = Date.now();
        view = await waitBalanced(admin, groupId, topic, 3, 6, 30_000);
        const waited = Date.now() - silentSince;
        assert.ok(waited >= SESSION_MS - 1_000, `removed after its session timeout (${waited} ms)`);
        ownedExactlyOnce(view, 6);
        assert.ok(!view.members.some((m) => m.memberId === zombie.memberId));
        await waitConsumersAgree(view, consumers);
        // Its late heartbeat learns it is gone.
        assert.equal(await zombie.heartbeat(), 25 /* UNKNOWN_MEMBER_ID */);
      } finally {
        zombie.close();
      }
    } finally {
      await Promise.all(consumers.map((c) => c.consumer.disconnect().catch(() => {})));
    }
    // Everyone left: the group is Empty.
    assert.equal((await describe(admin, groupId, topic)).state, "Empty");
  });
});

/** A kafkajs consumer in a child process (see kafkajs_member.mjs), killable with SIGKILL. */
function spawnMember(bootstrap: string, groupId: string, topic: string) {
  const child = spawn(BUN, [join(HERE, "kafkajs_member.mjs"), bootstrap, groupId, topic, String(SESSION_MS)], { stdio: ["ignore", "pipe", "pipe"] });
  const state = { memberId: "", assignment: [] as number[], messages: [] as { p: number; o: string; v: string }[], stderr: "", exited: false };
  let buf = "";
  child.stdout!.on("data", (d: Buffer) => {
    buf += d.toString();
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line.startsWith("J ")) {
        const j = JSON.parse(line.slice(2));
        state.memberId = j.memberId;
        state.assignment = [...(j.assignment[topic] ?? [])].sort((a: number, b: number) => a - b);
      } else if (line.startsWith("M ")) {
        const [, p, o, v] = line.split(" ");
        state.messages.push({ p: Number(p), o, v });
      }
    }
  });
  child.stderr!.on("data", (d: Buffer) => (state.stderr += d.toString()));
  const exited = new Promise<void>((r) => child.on("exit", () => {
    state.exited = true;
    r();
  }));
  return { child, state, exited };
}

const LONG_RUN = 100_000;

test(`kafkajs: ${LONG_RUN} messages through a 3-member group with commits; one member SIGKILLed mid-run: none missing, duplicates only from its partitions`, async () => {
  await withBroker(async (b, kafka, admin) => {
    const topic = "stream";
    const groupId = "workers";
    await admin.createTopics({ topics: [{ topic, numPartitions: 6 }], waitForLeaders: true });
    const seen: { p: number; o: string; v: string; who: string }[] = [];
    const consumers: Tracked[] = [];
    const killable = spawnMember(b.bootstrap, groupId, topic);
    const producer = kafka.producer();
    try {
      for (let i = 0; i < 2; i++) {
        const who = `in-process-${i}`;
        consumers.push(await startConsumer(kafka, groupId, topic, (p, o, v) => seen.push({ p, o, v, who })));
      }
      const before = await waitBalanced(admin, groupId, topic, 3, 6, 60_000);
      ownedExactlyOnce(before, 6);
      const killedPartitions = before.members.find((m) => m.clientId === "killable")!.partitions;
      assert.ok(killedPartitions.length > 0);

      await producer.connect();
      const t0 = Date.now();
      const producing = produceNumbers(producer, topic, 0, LONG_RUN);
      // Kill the child once it is well into its share.
      const killAt = Math.floor(LONG_RUN / 10);
      while (killable.state.messages.length < killAt) {
        if (killable.state.exited) assert.fail(`member process exited early: ${killable.state.stderr.slice(-2000)}`);
        await sleep(20);
      }
      killable.child.kill("SIGKILL");
      await killable.exited;
      const killedAfter = killable.state.messages.length;
      await within(60_000, "producing", producing);

      const all = () => [...seen, ...killable.state.messages.map((m) => ({ ...m, who: "killable" }))];
      const deadline = Date.now() + 90_000;
      for (;;) {
        const values = new Set(all().map((m) => m.v));
        if (values.size === LONG_RUN) break;
        if (Date.now() > deadline) assert.fail(`only ${values.size} of ${LONG_RUN} distinct messages arrived`);
        await sleep(200);
      }
      const elapsedMs = Date.now() - t0;
      const after = await waitBalanced(admin, groupId, topic, 2, 6);
      ownedExactlyOnce(after, 6);

      // Every message once, except some of the killed member's uncommitted tail, read again by its successor.
      const byValue = new Map<string, number>();
      for (const m of all()) byValue.set(m.v, (byValue.get(m.v) ?? 0) + 1);
      for (let i = 0; i < LONG_RUN; i++) assert.ok(byValue.has(String(i)), `message ${i} missing`);
      const total = all().length;
      const duplicates = total - LONG_RUN;
      const dupPositions = new Map<string, number>();
      for (const m of all()) dupPositions.set(`${m.p}:${m.o}`, (dupPositions.get(`${m.p}:${m.o}`) ?? 0) + 1);
      for (const [pos, n] of dupPositions) {
        if (n === 1) continue;
        assert.equal(n, 2, `${pos} read ${n} times`);
        const p = Number(pos.split(":")[0]);
        assert.ok(killedPartitions.includes(p), `duplicate ${pos} is not from a partition of the killed member (${killedPartitions})`);
      }
      // A duplicate is the killed member's read and its successor's, never two reads by live members.
      for (const m of seen) {
        const n = dupPositions.get(`${m.p}:${m.o}`)!;
        if (n === 2) assert.ok(killable.state.messages.some((k) => k.p === m.p && k.o === m.o), `${m.p}:${m.o} read twice by live members`);
      }
      console.log(`# ${LONG_RUN} messages in ${elapsedMs} ms; killed member read ${killedAfter} (partitions ${killedPartitions}); ${duplicates} duplicates after the kill`);

      // Offsets committed up to the end of every partition.
      const ends = await admin.fetchTopicOffsets(topic);
      const commitDeadline = Date.now() + 20_000;
      for (;;) {
        const committed = await admin.fetchOffsets({ groupId, topics: [topic] });
        const got = new Map(committed[0].partitions.map((p) => [p.partition, p.offset]));
        if (ends.every((e) => got.get(e.partition) === e.offset)) break;
        if (Date.now() > commitDeadline) assert.fail(`committed ${JSON.stringify([...got])} vs ends ${JSON.stringify(ends)}`);
        await sleep(200);
      }
    } finally {
      if (!killable.state.exited) killable.child.kill("SIGKILL");
      await producer.disconnect().catch(() => {});
      await Promise.all(consumers.map((c) => c.consumer.disconnect().catch(() => {})));
    }
  });
});

test("kafkajs: two groups on one topic each receive every message once (publish-subscribe)", async () => {
  await withBroker(async (_b, kafka, admin) => {
    const topic = "news";
    const N = 10_000;
    await admin.createTopics({ topics: [{ topic, numPartitions: 6 }], waitForLeaders: true });
    const got: Record<string, string[]> = { x: [], y: [] };
    const consumers: Tracked[] = [];
    const producer = kafka.producer();
    try {
      consumers.push(await startConsumer(kafka, "group-x", topic, (_p, _o, v) => got.x.push(v)));
      consumers.push(await startConsumer(kafka, "group-x", topic, (_p, _o, v) => got.x.push(v)));
      consumers.push(await startConsumer(kafka, "group-y", topic, (_p, _o, v) => got.y.push(v)));
      await waitBalanced(admin, "group-x", topic, 2, 6);
      await waitBalanced(admin, "group-y", topic, 1, 6);
      await producer.connect();
      await produceNumbers(producer, topic, 0, N, 1_000);
      const deadline = Date.now() + 60_000;
      while ((got.x.length < N || got.y.length < N) && Date.now() < deadline) await sleep(100);
      await sleep(500); // anything extra would show up now
      for (const g of ["x", "y"]) {
        assert.equal(got[g].length, N, `group-${g} received ${got[g].length}`);
        assert.equal(new Set(got[g]).size, N, `group-${g}: every message once`);
      }
      const groups = (await admin.listGroups()).groups.map((g) => g.groupId).sort();
      assert.deepEqual(groups, ["group-x", "group-y"]);
    } finally {
      await producer.disconnect().catch(() => {});
      await Promise.all(consumers.map((c) => c.consumer.disconnect().catch(() => {})));
    }
  });
});

test("committed offsets survive a broker restart: OffsetFetch returns them and the group resumes where it was", async () => {
  const b = await startBroker(BROKER);
  let kafka = client(b.bootstrap);
  let admin = kafka.admin();
  const topic = "ledger";
  const groupId = "bookkeepers";
  const consumers: Consumer[] = [];
  const producer = kafka.producer();
  try {
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
    await producer.connect();
    await produceNumbers(producer, topic, 0, 3_000, 500);
    await producer.disconnect();
    const first: string[] = [];
    const c1 = await startConsumer(kafka, groupId, topic, (_p, _o, v) => first.push(v));
    consumers.push(c1.consumer);
    const ends = await admin.fetchTopicOffsets(topic);
    const deadline = Date.now() + 30_000;
    let committed: { partition: number; offset: string; metadata: string | null }[] = [];
    for (;;) {
      committed = (await admin.fetchOffsets({ groupId, topics: [topic] }))[0].partitions;
      if (ends.every((e) => committed.find((p) => p.partition === e.partition)?.offset === e.offset)) break;
      if (Date.now() > deadline) assert.fail(`committed ${JSON.stringify(committed)} vs ${JSON.stringify(ends)}`);
      await sleep(200);
    }
    assert.equal(new Set(first).size, 3_000);
    await c1.consumer.disconnect();
    await admin.disconnect();

    await b.restart();

    kafka = client(b.bootstrap);
    admin = kafka.admin();
    await admin.connect();
    const again = (await within(30_000, "fetchOffsets after restart", admin.fetchOffsets({ groupId, topics: [topic] })))[0].partitions;
    assert.deepEqual(
      again.map((p) => [p.partition, p.offset]).sort(),
      committed.map((p) => [p.partition, p.offset]).sort(),
    );
    assert.ok(ends.reduce((n, e) => n + Number(e.offset), 0) === 3_000);
    // Raw OffsetFetch (v7, all topics) agrees.
    const w = await WireClient.connect(b.port);
    try {
      const raw = await fetchOffsets(w, groupId, null);
      assert.equal(raw.errorCode, 0);
      assert.deepEqual(raw.offsets, Object.fromEntries(ends.map((e) => [`${topic}-${e.partition}`, BigInt(e.offset)])));
    } finally {
      w.close();
    }
    const { groups } = await admin.describeGroups([groupId]);
    assert.equal(groups[0].state, "Empty");
    assert.equal(groups[0].protocolType, "consumer");

    // A consumer of the same group starts from the committed offsets: only new messages arrive.
    const second: string[] = [];
    const c2 = await startConsumer(kafka, groupId, topic, (_p, _o, v) => second.push(v));
    consumers.push(c2.consumer);
    await waitBalanced(admin, groupId, topic, 1, 3);
    const p2 = kafka.producer();
    await p2.connect();
    await produceNumbers(p2, topic, 3_000, 3_010);
    await p2.disconnect();
    const d2 = Date.now() + 20_000;
    while (second.length < 10 && Date.now() < d2) await sleep(100);
    await sleep(500);
    assert.deepEqual(second.sort(), Array.from({ length: 10 }, (_, i) => String(3_000 + i)).sort());
  } finally {
    await producer.disconnect().catch(() => {});
    await Promise.all(consumers.map((c) => c.disconnect().catch(() => {})));
    await admin.disconnect().catch(() => {});
    await b.stop();
  }
});
