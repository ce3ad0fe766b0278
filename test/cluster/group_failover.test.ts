// Issue 6 ("__consumer_offsets replicated with offsets.topic.replication.factor; coordinators move
// with leadership"): a kafkajs consumer group of two members consumes a topic with replication
// factor 3 while a producer writes to it; the broker coordinating the group (the leader of the
// group's __consumer_offsets partition, replication factor 3) is SIGKILLed. The group must go on
// with the partition's new leader as its coordinator, and:
// - no acknowledged commit goes backwards: per partition, the commits kafkajs reports acknowledged
//   never decrease, and the new coordinator answers OffsetFetch with at least the last ones
//   acknowledged before the kill (the offsets survived);
// - a member that starts (or restarts) a partition after the kill starts at or after the last
//   commit acknowledged before the kill (consumption resumes from the committed offsets, not from
//   an earlier position such as the log start);
// - nothing is skipped: per partition, the offsets consumed cover every offset up to the end, and
//   every acknowledged record is consumed (at least once: duplicates after the failover are
//   allowed).
import assert from "node:assert/strict";
import { test } from "node:test";
import { Kafka, logLevel } from "kafkajs";
import type { Consumer } from "kafkajs";
import { partitionForGroup } from "../../src/coordinator/group_partition.ts";
import { type Cluster, skipUnlessZooKeeper, withCluster } from "../helpers/cluster.ts";
import { findCoordinator } from "../helpers/groups.ts";
import { WireClient } from "../helpers/wire.ts";
import { createTopic, NumberedProducer, sleep, waitIsrFull } from "./workload.ts";

const skip = skipUnlessZooKeeper();

const OFFSETS = "__consumer_offsets";
const offsetsPartitions = 3;
const topic = "gf";
const partitions = [0, 1];
const groupId = "gf-group";

interface Consumed {
  member: number;
  partition: number;
  offset: number;
  value: string;
  atMs: number;
}

interface Commit {
  member: number;
  partition: number;
  offset: number;
  atMs: number;
}

/** Two kafkajs members of one group, recording every record consumed and every commit acknowledged. */
class Group {
  readonly consumed: Consumed[] = [];
  readonly commits: Commit[] = [];
  readonly problems: string[] = [];
  /** Partitions a member has consumed from since its last join: a first record there is a (re)start. */
  private started = new Map<number, Set<number>>();
  /** Per partition, the last commit acknowledged before the kill (set by the test at the kill). */
  floorAfterKill: Map<number, number> | null = null;
  killAtMs = 0;
  readonly consumers: Consumer[] = [];
  readonly starts: { member: number; partition: number; offset: number; atMs: number }[] = [];

  constructor(private readonly bootstrap: string[]) {}

  async start(members: number): Promise<void> {
    for (let m = 0; m < members; m++) {
      const kafka = new Kafka({
        clientId: `gf-member-${m}`,
        brokers: this.bootstrap,
        logLevel: logLevel.NOTHING,
        connectionTimeout: 3_000,
        requestTimeout: 10_000,
        retry: { retries: 5, initialRetryTime: 200, maxRetryTime: 1_000 },
      });
      const consumer = kafka.consumer({
        groupId,
        sessionTimeout: 10_000,
        rebalanceTimeout: 20_000,
        heartbeatInterval: 1_000,
        maxWaitTimeInMs: 500,
        // Few retries, then a restart: kafkajs keeps asking the coordinator it found at its last
        // join until it gives up and joins again (FindCoordinator then names the new one).
        retry: { retries: 5, initialRetryTime: 200, maxRetryTime: 1_000, restartOnFailure: () => Promise.resolve(true) },
      });
      this.started.set(m, new Set());
      consumer.on(consumer.events.GROUP_JOIN, () => this.started.set(m, new Set()));
      consumer.on(consumer.events.CRASH, () => this.started.set(m, new Set()));
      consumer.on(consumer.events.COMMIT_OFFSETS, (e) => {
        const payload = e.payload as { topics: { topic: string; partitions: { partition: number; offset: string }[] }[] };
        for (const t of payload.topics) {
          if (t.topic !== topic) continue;
          for (const p of t.partitions) this.onCommit(m, Number(p.partition), Number(p.offset));
        }
      });
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        eachMessage: ({ partition, message }) => {
          this.onMessage(m, partition, Number(message.offset), message.value?.toString() ?? "");
          return Promise.resolve();
        },
      });
      this.consumers.push(consumer);
    }
  }

  private onMessage(member: number, partition: number, offset: number, value: string): void {
    const atMs = Date.now();
    this.consumed.push({ member, partition, offset, value, atMs });
    const mine = this.started.get(member)!;
    if (mine.has(partition)) return;
    mine.add(partition);
    this.starts.push({ member, partition, offset, atMs });
    const floor = this.floorAfterKill?.get(partition);
    if (floor !== undefined && offset < floor) {
      this.problems.push(`member ${member} (re)started ${topic}-${partition} at ${offset} after the kill, below the commit ${floor} acknowledged before it`);
    }
  }

  private onCommit(member: number, partition: number, offset: number): void {
    const last = this.lastCommit(partition);
    if (last !== null && offset < last.offset) {
      this.problems.push(`acknowledged commit of ${topic}-${partition} went backwards: ${last.offset} (member ${last.member}) then ${offset} (member ${member})`);
    }
    this.commits.push({ member, partition, offset, atMs: Date.now() });
  }

  lastCommit(partition: number): Commit | null {
    for (let i = this.commits.length - 1; i >= 0; i--) if (this.commits[i].partition === partition) return this.commits[i];
    return null;
  }

  commitsSince(t: number, partition: number): number {
    return this.commits.filter((c) => c.atMs >= t && c.partition === partition).length;
  }

  consumedValues(): Set<string> {
    return new Set(this.consumed.map((c) => c.value));
  }

  async stop(): Promise<void> {
    await Promise.all(this.consumers.map((c) => Promise.race([c.disconnect().catch(() => {}), sleep(15_000)])));
  }
}

/** FindCoordinator asked of a live broker: the coordinator's id. */
async function coordinatorId(c: Cluster, askVia: number): Promise<number> {
  const w = await WireClient.connect(c.broker(askVia).port);
  try {
    return (await findCoordinator(w, groupId, 5_000)).nodeId;
  } finally {
    w.close();
  }
}

test("cluster: a consumer group goes on, its committed offsets intact, after its coordinator is SIGKILLed", { skip, timeout: 130_000 }, async () => {
  await withCluster(3, {
    budgetMs: 120_000,
    label: "strand-cluster-group-",
    overrides: {
      "offsets.topic.replication.factor": "3",
      "offsets.topic.num.partitions": String(offsetsPartitions),
      "group.initial.rebalance.delay.ms": "0",
    },
  }, async (c) => {
    await createTopic(c, topic, { partitions: partitions.length, replicationFactor: 3, configs: { "min.insync.replicas": "2" } });
    const producer = new NumberedProducer(() => c.liveBootstrap, topic, partitions);
    const group = new Group(c.bootstrap.split(","));
    try {
      await producer.waitAcks(c, 40, 30_000, "before the group starts");
      await group.start(2);

      // The group is placed: __consumer_offsets exists, the group's partition has a leader (its
      // coordinator), both members consume and commit on both partitions.
      const op = partitionForGroup(groupId, offsetsPartitions);
      await c.waitFor(() => partitions.every((p) => group.commitsSince(0, p) >= 3), 40_000, "commits acknowledged on both partitions");
      await c.waitFor(() => new Set(group.consumed.map((x) => x.member)).size === 2, 20_000, "both members consuming");
      // Every acknowledged commit is on all three replicas before the kill: with the ISR whole,
      // the offsets commit (acks=all on the ISR) survives the leader's loss.
      await waitIsrFull(c, OFFSETS, op, 30_000);
      const victim = await c.waitLeader(OFFSETS, op, 10_000);
      const asked = await coordinatorId(c, (victim + 1) % 3);
      assert.equal(asked, victim, `FindCoordinator names the leader of ${OFFSETS}-${op}`);

      const floor = new Map<number, number>();
      for (const p of partitions) floor.set(p, group.lastCommit(p)!.offset);
      group.floorAfterKill = floor;
      const producedBeforeKill = producer.acked.size;
      const tKill = Date.now();
      group.killAtMs = tKill;
      c.note(`killing coordinator ${victim} (leader of ${OFFSETS}-${op}); commits acknowledged so far: ${[...floor].map(([p, o]) => `${p}:${o}`).join(" ")}`);
      await c.broker(victim).kill("SIGKILL");

      // The offsets partition moves; FindCoordinator names its new leader.
      const next = await c.waitLeader(OFFSETS, op, c.sessionTimeoutMs + 30_000, victim);
      const live = [0, 1, 2].filter((b) => b !== victim);
      await c.waitFor(async () => (await coordinatorId(c, live[0])) === next, 30_000, `FindCoordinator to name ${next}`);
      const tMoved = Date.now();

      // The new coordinator holds the commits acknowledged before the kill.
      const kafka = new Kafka({ clientId: "gf-admin", brokers: c.liveBootstrap.split(","), logLevel: logLevel.NOTHING, retry: { retries: 10 } });
      const admin = kafka.admin();
      await admin.connect();
      try {
        const fetched = await admin.fetchOffsets({ groupId, topics: [topic] });
        for (const p of partitions) {
          const got = Number(fetched[0].partitions.find((x) => x.partition === p)?.offset ?? -1);
          assert.ok(got >= floor.get(p)!, `${OFFSETS} on the new coordinator ${next}: ${topic}-${p} committed ${got}, below ${floor.get(p)} acknowledged before the kill`);
        }
      } finally {
        await admin.disconnect();
      }

      // The group goes on: records produced after the kill are consumed, and commits acknowledged.
      await producer.waitAcks(c, 30, 30_000, "after the kill");
      await c.waitFor(() => partitions.every((p) => group.commitsSince(tMoved, p) >= 2), 40_000, "commits acknowledged by the new coordinator on both partitions");

      await producer.stop();
      // Every acknowledged record consumed (bounded).
      await c.waitFor(() => {
        const seen = group.consumedValues();
        return [...producer.acked.keys()].every((n) => seen.has(String(n)));
      }, 40_000, "every acknowledged record consumed");

      // Checks.
      const problems = [...group.problems];
      const known = new Set([...producer.acked.keys(), ...producer.indeterminate.keys()].map(String));
      for (const x of group.consumed) if (!known.has(x.value)) problems.push(`${topic}-${x.partition}@${x.offset}: ${JSON.stringify(x.value)} was never sent or was refused`);
      for (const p of partitions) {
        const offsets = new Set(group.consumed.filter((x) => x.partition === p).map((x) => x.offset));
        const max = Math.max(...offsets);
        for (let o = 0; o <= max; o++) if (!offsets.has(o)) problems.push(`${topic}-${p}@${o} was skipped (consumed up to ${max})`);
      }
      const byValue = new Map<string, { partition: number; offset: number }>();
      for (const x of group.consumed) {
        const before = byValue.get(x.value);
        if (before !== undefined && (before.partition !== x.partition || before.offset !== x.offset)) {
          problems.push(`${x.value} consumed at ${topic}-${before.partition}@${before.offset} and at -${x.partition}@${x.offset}`);
        }
        byValue.set(x.value, { partition: x.partition, offset: x.offset });
      }
      for (const [n, a] of producer.acked) {
        const at = byValue.get(String(n));
        if (at !== undefined && (at.partition !== a.partition || at.offset !== a.offset)) problems.push(`acked ${n} at ${a.partition}@${a.offset}, consumed at ${at.partition}@${at.offset}`);
      }
      const restartsAfterKill = group.starts.filter((s) => s.atMs >= tKill);
      assert.ok(restartsAfterKill.length > 0 || group.consumed.some((x) => x.atMs >= tMoved), "consumption went on after the kill");
      if (problems.length > 0) assert.fail(`${problems.length} problems:\n${problems.slice(0, 20).join("\n")}`);
      const duplicates = group.consumed.length - byValue.size;
      const line = `coordinator ${victim} -> ${next} (${OFFSETS}-${op}) in ${tMoved - tKill} ms; ${producer.summary()}; ` +
        `${producedBeforeKill} acked before the kill; consumed ${group.consumed.length} (${duplicates} duplicates), ` +
        `${group.commits.length} commits; (re)starts after the kill: ${restartsAfterKill.map((s) => `m${s.member} p${s.partition}@${s.offset}`).join(", ")}; ` +
        `floors ${[...floor].map(([p, o]) => `${p}:${o}`).join(" ")}`;
      c.note(line);
      console.log(line);
    } finally {
      await producer.stop();
      await group.stop();
    }
  });
});
