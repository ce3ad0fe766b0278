// What the cluster scenarios run and check (not a test file itself):
//
// - NumberedProducer: kafkajs with acks=-1, no retries (client and producer `retry: {retries: 0}`),
//   one record per request and one request in flight per partition (one loop, one kafkajs client
//   per partition), values "<prefix><n>" with n never reused. Every attempt ends in exactly one
//   set: acked (with the offset the broker answered), refused (NOT_ENOUGH_REPLICAS: Kafka refuses
//   it before appending, so it must never be read), or indeterminate (anything else: a timeout, a
//   closed connection, NOT_ENOUGH_REPLICAS_AFTER_APPEND, ...; may be read at most once).
//   kafkajs, not the raw wire client, because it is a real client that follows leadership
//   (it refreshes metadata after NOT_LEADER_OR_FOLLOWER or a dead connection, even with retries 0).
// - readPartition: the records of a partition up to its high watermark, read from the leader with
//   raw Fetch requests (test/helpers/wire.ts): no consumer group, nothing hidden.
// - checkNumbered: every acked number present exactly once, at the offset its ack named; no number
//   twice; acked numbers increasing within a partition; refused numbers absent; nothing unknown.
// - assertReplicasIdentical: each replica's segment files hold the same batches (base offset, last
//   offset, partition leader epoch, CRC) below the high watermark.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Kafka, logLevel } from "kafkajs";
import type { Producer } from "kafkajs";
import { type Cluster, segmentBatches } from "../helpers/cluster.ts";
import { parseBatches, text } from "../helpers/record_batch.ts";
import { fetchOnce, WireClient } from "../helpers/wire.ts";
import { sleep } from "../helpers/zookeeper.ts";

export { sleep };

export interface NumberedProducerOptions {
  /** Value prefix, so numbers of several producers never meet (default ""). */
  prefix?: string;
  /** Produce acks (default -1). */
  acks?: number;
  /** The produce request's timeoutMs: how long acks=all may wait in the purgatory (default 5000). */
  timeoutMs?: number;
  /** kafkajs requestTimeout: how long the client waits for any answer (default 10000). */
  requestTimeoutMs?: number;
  /** Pause after a failed attempt (default 100 ms). */
  backoffMs?: number;
}

export interface Outcome {
  n: number;
  partition: number;
  /** When the send started and when it ended. */
  startMs: number;
  atMs: number;
  ok: boolean;
  offset?: number;
  error?: string;
}

/** The innermost kafkajs protocol error type (e.g. NOT_ENOUGH_REPLICAS), or the error's name. */
function errorType(e: unknown): string {
  let name = (e as { name?: string })?.name ?? String(e);
  for (let x = e as { type?: string; name?: string; cause?: unknown; originalError?: unknown } | undefined, depth = 0; x && depth < 5; depth++) {
    if (typeof x.type === "string" && x.type !== "UNKNOWN") return x.type;
    if (typeof x.name === "string") name = x.name;
    x = (x.cause ?? x.originalError) as typeof x;
  }
  return name;
}

/**
 * What the checks and the bounce rounds need of a producer of numbered records: how each number
 * ended, and a way to wait for acks. NumberedProducer (kafkajs, here) is one; a librdkafka
 * idempotent producer in a child process (idempotent_failover.test.ts) is another.
 */
export interface NumberedRecords {
  readonly topic: string;
  readonly prefix: string;
  readonly partitions: number[];
  readonly acked: ReadonlyMap<number, { partition: number; offset: number }>;
  readonly refused: ReadonlyMap<number, { partition: number; error: string }>;
  readonly indeterminate: ReadonlyMap<number, { partition: number; error: string }>;
  readonly external: ReadonlySet<number>;
  summary(): string;
  waitAcks(cluster: Cluster, count: number, timeoutMs: number, what?: string): Promise<void>;
}

export class NumberedProducer implements NumberedRecords {
  readonly acked = new Map<number, { partition: number; offset: number }>();
  readonly refused = new Map<number, { partition: number; error: string }>();
  readonly indeterminate = new Map<number, { partition: number; error: string }>();
  readonly outcomes: Outcome[] = [];
  /** Numbers sent by the test itself (claim()): concurrent with the loops, so not order-checked. */
  readonly external = new Set<number>();
  private next = 0;
  private stopped = false;
  private readonly loops = new Map<number, Promise<void>>();
  readonly prefix: string;
  private readonly opts: Required<NumberedProducerOptions>;

  /** bootstrap is read on every (re)connect, so restarted brokers are found again. */
  constructor(private readonly bootstrap: () => string, readonly topic: string, partitions: number[], opts: NumberedProducerOptions = {}) {
    this.opts = { prefix: "", acks: -1, timeoutMs: 5_000, requestTimeoutMs: 10_000, backoffMs: 100, ...opts };
    this.prefix = this.opts.prefix;
    for (const p of partitions) this.addPartition(p);
  }

  get partitions(): number[] {
    return [...this.loops.keys()].sort((a, b) => a - b);
  }

  addPartition(p: number): void {
    if (this.loops.has(p)) return;
    this.loops.set(p, this.loop(p));
  }

  private async loop(partition: number): Promise<void> {
    let producer: Producer | null = null;
    while (!this.stopped) {
      if (producer === null) {
        const brokers = this.bootstrap().split(",").filter((b) => b !== "");
        const kafka = new Kafka({
          clientId: `numbered-${this.topic}-${partition}`,
          brokers,
          logLevel: logLevel.NOTHING,
          retry: { retries: 0 },
          connectionTimeout: 3_000,
          requestTimeout: this.opts.requestTimeoutMs,
        });
        const p = kafka.producer({ retry: { retries: 0 }, maxInFlightRequests: 1, idempotent: false, allowAutoTopicCreation: false });
        try {
          await p.connect();
          producer = p;
        } catch {
          await p.disconnect().catch(() => {});
          await sleep(this.opts.backoffMs);
          continue;
        }
      }
      const n = this.next++;
      const value = `${this.prefix}${n}`;
      const startMs = Date.now();
      try {
        const r = await producer.send({ topic: this.topic, acks: this.opts.acks, timeout: this.opts.timeoutMs, messages: [{ partition, value }] });
        const offset = Number(r[0].baseOffset);
        this.acked.set(n, { partition, offset });
        this.outcomes.push({ n, partition, startMs, atMs: Date.now(), ok: true, offset });
      } catch (e) {
        const error = errorType(e);
        if (error === "NOT_ENOUGH_REPLICAS") this.refused.set(n, { partition, error });
        else this.indeterminate.set(n, { partition, error });
        this.outcomes.push({ n, partition, startMs, atMs: Date.now(), ok: false, error });
        // A fresh client after a connection-level failure: kafkajs keeps dead brokers otherwise.
        if (/Connection|NumberOfRetries|Timeout|MetadataNotLoaded|KafkaJSError/.test(error)) {
          await producer.disconnect().catch(() => {});
          producer = null;
        }
        await sleep(this.opts.backoffMs);
      }
    }
    await producer?.disconnect().catch(() => {});
  }

  /**
   * A number for a record the test sends itself (e.g. with the raw wire client), so the checks
   * cover it too; report how it ended with settle().
   */
  claim(): { n: number; value: string; startMs: number } {
    const n = this.next++;
    this.external.add(n);
    return { n, value: `${this.prefix}${n}`, startMs: Date.now() };
  }

  /** errorCode 0: acked at offset; 19 (NOT_ENOUGH_REPLICAS): refused; else indeterminate. */
  settle(claimed: { n: number; startMs: number }, partition: number, errorCode: number | null, offset = -1): void {
    const { n, startMs } = claimed;
    const atMs = Date.now();
    if (errorCode === 0) {
      this.acked.set(n, { partition, offset });
      this.outcomes.push({ n, partition, startMs, atMs, ok: true, offset });
      return;
    }
    const error = errorCode === null ? "no answer" : `error ${errorCode}`;
    if (errorCode === 19) this.refused.set(n, { partition, error: "NOT_ENOUGH_REPLICAS" });
    else this.indeterminate.set(n, { partition, error });
    this.outcomes.push({ n, partition, startMs, atMs, ok: false, error });
  }

  /** Acks of sends that started at or after t. */
  ackedStartedSince(t: number): Outcome[] {
    return this.outcomes.filter((o) => o.ok && o.startMs >= t);
  }

  /** Stops every loop after its request in flight ends (bounded by the request timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.race([Promise.all(this.loops.values()), sleep(this.opts.requestTimeoutMs + 10_000)]);
  }

  /** Acknowledgements received after time t (ms since the epoch). */
  ackedSince(t: number): number {
    let count = 0;
    for (let i = this.outcomes.length - 1; i >= 0 && this.outcomes[i].atMs >= t; i--) if (this.outcomes[i].ok) count++;
    return count;
  }

  /** Time of the first acknowledgement at or after t, or null. */
  firstAckAfter(t: number, partition?: number): number | null {
    for (const o of this.outcomes) {
      if (o.atMs >= t && o.ok && (partition === undefined || o.partition === partition)) return o.atMs;
    }
    return null;
  }

  /** Waits until `count` more acknowledgements arrived (from now). */
  async waitAcks(cluster: Cluster, count: number, timeoutMs: number, what = ""): Promise<void> {
    const t = Date.now();
    await cluster.waitFor(() => this.ackedSince(t) >= count, timeoutMs, `${count} acks on ${this.topic}${what ? ` ${what}` : ""}`);
  }

  summary(): string {
    const errors = new Map<string, number>();
    for (const v of [...this.indeterminate.values(), ...this.refused.values()]) errors.set(v.error, (errors.get(v.error) ?? 0) + 1);
    const e = [...errors].map(([k, v]) => `${k} ${v}`).join(", ");
    return `${this.topic}: ${this.next} sent, ${this.acked.size} acked, ${this.refused.size} refused, ${this.indeterminate.size} indeterminate${e ? ` (${e})` : ""}`;
  }
}

// ---- reading back -------------------------------------------------------------------------------

export interface PartitionContents {
  partition: number;
  leader: number;
  highWatermark: number;
  /** Each record with the partition leader epoch of its batch. */
  records: { offset: number; value: string | null; leaderEpoch: number }[];
}

/** Complete batches at the front of a fetched record set (a fetch may end in a partial batch). */
function completeBatches(bytes: Uint8Array): Uint8Array {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 0;
  while (pos + 12 <= bytes.length) {
    const end = pos + 12 + v.getInt32(pos + 8);
    if (end > bytes.length) break;
    pos = end;
  }
  return bytes.subarray(0, pos);
}

/** Reads a partition from its leader (per ZooKeeper), offset 0 up to the high watermark (Fetch v10: only a leader serves it). */
export async function readPartition(cluster: Cluster, topic: string, partition: number, timeoutMs = 60_000): Promise<PartitionContents> {
  const deadline = Date.now() + timeoutMs;
  let lastError = "";
  while (Date.now() < deadline) {
    const leader = await cluster.waitLeader(topic, partition, Math.max(1, deadline - Date.now()));
    let c: WireClient | null = null;
    try {
      c = await WireClient.connect(cluster.broker(leader).port, cluster.broker(leader).host);
      const records: PartitionContents["records"] = [];
      let offset = 0n;
      let hw = -1n;
      for (;;) {
        const r = await fetchOnce(c, topic, partition, offset, { maxBytes: 4 << 20, partitionMaxBytes: 4 << 20, version: 10 });
        if (r.errorCode !== 0) throw new Error(`fetch ${topic}-${partition}@${offset} from ${leader}: error ${r.errorCode}`);
        if (hw < 0n) hw = r.highWatermark;
        const bytes = completeBatches(r.records ?? new Uint8Array(0));
        if (bytes.length === 0) break;
        for (const b of parseBatches(bytes)) {
          for (const rec of b.records) if (rec.offset >= offset && rec.offset < hw) records.push({ offset: Number(rec.offset), value: text(rec.value), leaderEpoch: b.partitionLeaderEpoch });
          offset = b.baseOffset + BigInt(b.lastOffsetDelta) + 1n;
        }
        if (offset >= hw) break;
      }
      return { partition, leader, highWatermark: Number(hw), records };
    } catch (e) {
      lastError = (e as Error).message;
      await sleep(500);
    } finally {
      c?.close();
    }
  }
  throw new Error(`could not read ${topic}-${partition} within ${timeoutMs} ms: ${lastError}`);
}

export interface CheckSummary {
  acked: number;
  read: number;
  indeterminateRead: number;
  indeterminateMissing: number;
  /** Records read more than once (0, or checkNumbered fails). */
  duplicates: number;
}

/** The no-loss, no-duplicate, in-order checks over what was read back. Throws naming the first breach. */
export function checkNumbered(
  producer: NumberedRecords,
  contents: PartitionContents[],
  opts: {
    /** Only acked numbers passing it must be present (e.g. not those a simulated power loss took). */
    ackedFilter?: (n: number) => boolean;
    /** Values that belong to someone else (another producer's prefix): skipped. */
    ignore?: (value: string) => boolean;
  } = {},
): CheckSummary {
  const where = new Map<number, { partition: number; offset: number }>();
  const problems: string[] = [];
  let duplicates = 0;
  const prefix = producer.prefix;
  for (const pc of contents) {
    let last = -1;
    for (const r of pc.records) {
      const v = r.value ?? "";
      if (opts.ignore?.(v)) continue;
      if (!v.startsWith(prefix) || !/^\d+$/.test(v.slice(prefix.length))) {
        problems.push(`${producer.topic}-${pc.partition}@${r.offset}: unexpected value ${JSON.stringify(r.value)}`);
        continue;
      }
      const n = Number(v.slice(prefix.length));
      const before = where.get(n);
      if (before !== undefined) duplicates++;
      if (before !== undefined) problems.push(`${n} appears twice: ${producer.topic}-${before.partition}@${before.offset} and -${pc.partition}@${r.offset}`);
      where.set(n, { partition: pc.partition, offset: r.offset });
      // Order among acked records: an indeterminate send (no answer) may land later than the
      // ones sent after it, as in Kafka without idempotence.
      if (producer.acked.has(n) && !producer.external.has(n)) {
        if (n <= last) problems.push(`${producer.topic}-${pc.partition}@${r.offset}: ${n} after ${last} (out of order)`);
        last = Math.max(last, n);
      }
      const sent = producer.acked.get(n) ?? producer.refused.get(n) ?? producer.indeterminate.get(n);
      if (sent === undefined) problems.push(`${producer.topic}-${pc.partition}@${r.offset}: ${n} was never sent (or its send has not ended)`);
      else if (sent.partition !== pc.partition) problems.push(`${n} sent to partition ${sent.partition}, read from ${pc.partition}`);
      if (producer.refused.has(n)) problems.push(`${n} was refused (${producer.refused.get(n)!.error}) yet is in ${producer.topic}-${pc.partition}@${r.offset}`);
    }
  }
  let acked = 0;
  for (const [n, a] of producer.acked) {
    if (opts.ackedFilter !== undefined && !opts.ackedFilter(n)) continue;
    acked++;
    const w = where.get(n);
    if (w === undefined) problems.push(`acked ${n} (${producer.topic}-${a.partition}@${a.offset}) is lost`);
    else if (w.offset !== a.offset) problems.push(`acked ${n} at ${producer.topic}-${a.partition}@${a.offset}, read at offset ${w.offset}`);
  }
  let indeterminateRead = 0;
  for (const n of producer.indeterminate.keys()) if (where.has(n)) indeterminateRead++;
  if (problems.length > 0) {
    const more = problems.length > 20 ? `\n... and ${problems.length - 20} more` : "";
    assert.fail(`${problems.length} problems, ${duplicates} duplicates (${producer.summary()}):\n${problems.slice(0, 20).join("\n")}${more}`);
  }
  return { acked, read: where.size, indeterminateRead, indeterminateMissing: producer.indeterminate.size - indeterminateRead, duplicates };
}

/**
 * Each replica's segment files hold the same batches below the high watermark: the sequence of
 * (base offset, last offset, partition leader epoch, CRC) is the leader's, and reaches the HW.
 */
export function assertReplicasIdentical(cluster: Cluster, topic: string, partition: number, replicas: number[], highWatermark: number): void {
  const seqs = replicas.map((r) => ({
    r,
    batches: segmentBatches(cluster.broker(r).logDir, topic, partition).filter((b) => b.baseOffset < highWatermark),
  }));
  const key = (b: { baseOffset: number; lastOffset: number; partitionLeaderEpoch: number; crc: number }) =>
    `[${b.baseOffset}..${b.lastOffset}] epoch ${b.partitionLeaderEpoch} crc ${b.crc.toString(16)}`;
  const [first, ...rest] = seqs;
  const last = first.batches.at(-1);
  if (highWatermark > 0) {
    assert.ok(last !== undefined && last.lastOffset + 1 === highWatermark, `${topic}-${partition}: replica ${first.r}'s batches end at ${last === undefined ? "nothing" : last.lastOffset + 1}, HW ${highWatermark}`);
  }
  for (const other of rest) {
    const n = Math.max(first.batches.length, other.batches.length);
    for (let i = 0; i < n; i++) {
      const a = first.batches[i];
      const b = other.batches[i];
      if (a !== undefined && b !== undefined && key(a) === key(b)) continue;
      assert.fail(
        `${topic}-${partition}: replicas ${first.r} and ${other.r} diverge at batch #${i}: ` +
          `${a === undefined ? "none" : `${key(a)} (${a.file}:${a.position})`} vs ${b === undefined ? "none" : `${key(b)} (${b.file}:${b.position})`}`,
      );
    }
  }
}

/**
 * The end-of-scenario check of a topic: each partition fully replicated (bounded), its replicas'
 * files identical, and the numbered records all there. Returns a one-line summary.
 */
export async function finalCheck(cluster: Cluster, producer: NumberedRecords, partitions = producer.partitions, timeoutMs = 90_000): Promise<string> {
  const contents = await readReplicated(cluster, producer, partitions, timeoutMs);
  const s = checkNumbered(producer, contents);
  const line = `${producer.summary()}; read ${s.read}, duplicates ${s.duplicates} (indeterminate: ${s.indeterminateRead} read, ${s.indeterminateMissing} absent)`;
  cluster.note(`final check: ${line}`);
  return line;
}

/**
 * Each partition fully replicated (bounded), its replicas' files identical below the high
 * watermark, then read from its leader up to that high watermark.
 */
export async function readReplicated(cluster: Cluster, producer: NumberedRecords, partitions = producer.partitions, timeoutMs = 90_000): Promise<PartitionContents[]> {
  const contents: PartitionContents[] = [];
  for (const p of partitions) {
    // A send that ended without an answer (indeterminate) may still be appended afterwards (it
    // sat in a socket buffer): then the HW moves between the checks, and they are done again.
    for (let attempt = 1; ; attempt++) {
      const { replicas, highWatermark } = await cluster.waitFullyReplicated(producer.topic, p, timeoutMs);
      assertReplicasIdentical(cluster, producer.topic, p, replicas, highWatermark);
      const pc = await readPartition(cluster, producer.topic, p);
      if (pc.highWatermark === highWatermark) {
        contents.push(pc);
        break;
      }
      cluster.note(`${producer.topic}-${p}: HW ${highWatermark} then ${pc.highWatermark} after the producer stopped (${producer.summary()})`);
      assert.ok(attempt < 5, `${producer.topic}-${p}: the HW keeps moving after the producer stopped (${highWatermark}, then ${pc.highWatermark})`);
      await sleep(1_000);
    }
  }
  return contents;
}

// ---- bouncing brokers -------------------------------------------------------------------------

export interface BounceOptions {
  topic: string;
  partitions: number[];
  rounds: number;
  signal: "SIGKILL" | "SIGTERM";
  /** Whom to hit: the leader of one of the partitions (round robin) or the active controller. */
  victim: "leader" | "controller";
  producer: NumberedRecords;
  /** Acks required after each failover, while the victim is down (default 5). */
  acksWhileDown?: number;
  /** Pause after each round, once the ISR is whole again (default 1000 ms). */
  pauseMs?: number;
}

/**
 * Rounds of: pick the victim, signal it, wait for new leaders (and a new controller), check the
 * producer gets acks while the victim is down, restart it, wait for full ISRs. With SIGTERM, also
 * checks that leadership moved away while the process still ran (controlled shutdown) and that
 * it exited 0. Returns one line per round.
 */
export async function bounceRounds(cluster: Cluster, o: BounceOptions): Promise<string[]> {
  const lines: string[] = [];
  const sessionMs = cluster.sessionTimeoutMs;
  for (let round = 0; round < o.rounds; round++) {
    // Every replica back in the ISR before the next victim, so each round starts from RF=3.
    for (const p of o.partitions) await waitIsrFull(cluster, o.topic, p, 60_000);
    const victim = o.victim === "controller"
      ? await cluster.controllerId()
      : await cluster.waitLeader(o.topic, o.partitions[round % o.partitions.length], 30_000);
    assert.ok(victim >= 0, "a victim");
    const led: number[] = [];
    for (const p of o.partitions) if ((await cluster.leaderOf(o.topic, p)) === victim) led.push(p);
    const epochBefore = await cluster.controllerEpoch();
    const t0 = Date.now();
    let movedWhileRunning = true;
    if (o.signal === "SIGTERM") {
      const b = cluster.broker(victim);
      await b.kill("SIGTERM");
      // Leadership moved before the broker left (a controlled shutdown) when either
      // - a poll saw another leader and, after that, the broker still registered; or
      // - after the exit, the state's last write (mzxid) precedes the broker's deregistration
      //   (the pzxid of /brokers/ids: nothing else joins or leaves meanwhile).
      // Both are proofs; the second covers a move the 20 ms poll missed.
      const moved = new Set<number>();
      let exited = false;
      void b.exited.then(() => (exited = true));
      while (!exited && Date.now() - t0 < 60_000) {
        for (const p of led) {
          if ((await cluster.leaderOf(o.topic, p)) !== victim && await cluster.exists(`/brokers/ids/${victim}`)) moved.add(p);
        }
        await sleep(20);
      }
      const exit = await b.waitExit(5_000);
      assert.equal(exit.status, 0, `broker ${victim} exits 0 after SIGTERM`);
      await cluster.waitFor(async () => !(await cluster.exists(`/brokers/ids/${victim}`)), 15_000, `broker ${victim} deregistered`);
      const deregisteredAt = (await cluster.stat("/brokers/ids"))!.pzxid;
      for (const p of led) {
        const s = await cluster.partitionState(o.topic, p);
        if (s !== null && s.leader !== victim && s.leader >= 0 && s.mzxid < deregisteredAt) moved.add(p);
      }
      // A third proof, for a victim that was also the controller: it moved its leaderships itself
      // and exits within ~40 ms, and the next controller rewrites the states (taking it out of the
      // ISRs), so both checks above can miss the move. The broker logs "controlled shutdown
      // succeeded" only when the controller answered with no partition left on it, i.e. after
      // every move was written to ZooKeeper.
      const run = readFileSync(b.logFile, "utf8").split("=== harness: start #").pop() ?? "";
      if (/"msg":"controlled shutdown succeeded"/.test(run)) for (const p of led) moved.add(p);
      movedWhileRunning = led.every((p) => moved.has(p));
      assert.ok(movedWhileRunning, `round ${round}: leadership of ${o.topic} partitions ${led} moved away from ${victim} before it exited (controlled shutdown); moved: ${[...moved]}`);
    } else {
      await cluster.broker(victim).kill("SIGKILL");
    }
    const failoverBound = o.signal === "SIGKILL" ? sessionMs + 30_000 : 30_000;
    for (const p of led) await cluster.waitLeader(o.topic, p, failoverBound, victim);
    if (o.victim === "controller") {
      await cluster.waitFor(async () => {
        const c = await cluster.controllerId();
        return c >= 0 && c !== victim;
      }, failoverBound, "a new controller");
      const epochAfter = await cluster.controllerEpoch();
      assert.ok(epochAfter > epochBefore, `round ${round}: /controller_epoch grew (${epochBefore} -> ${epochAfter})`);
    }
    const tLeaders = Date.now();
    await o.producer.waitAcks(cluster, o.acksWhileDown ?? 5, 30_000, `while broker ${victim} is down`);
    const tAcks = Date.now();
    await cluster.restart(victim);
    const line = `round ${round}: ${o.signal} ${o.victim} ${victim} (led ${o.topic} ${led.join(",") || "none"}): ` +
      `new leaders after ${tLeaders - t0} ms, acks after ${tAcks - t0} ms, back after ${Date.now() - t0} ms`;
    cluster.note(line);
    lines.push(line);
    await sleep(o.pauseMs ?? 1_000);
  }
  for (const p of o.partitions) await waitIsrFull(cluster, o.topic, p, 60_000);
  return lines;
}

/** Waits until every replica of the partition is in its ISR (per ZooKeeper). */
export async function waitIsrFull(cluster: Cluster, topic: string, partition: number, timeoutMs: number): Promise<void> {
  await cluster.waitFor(async () => {
    const replicas = await cluster.replicasOf(topic, partition);
    const s = await cluster.partitionState(topic, partition);
    return s !== null && s.leader >= 0 && replicas.every((r) => s.isr.includes(r));
  }, timeoutMs, `${topic}-${partition}'s ISR to hold every replica`);
}

/** Creates a topic through kafkajs's admin (CreateTopics), bounded. */
export async function createTopic(
  cluster: Cluster,
  topic: string,
  spec: { partitions?: number; replicationFactor?: number; configs?: Record<string, string>; assignment?: number[][] },
): Promise<void> {
  const kafka = new Kafka({ clientId: "cluster-admin", brokers: cluster.liveBootstrap.split(","), logLevel: logLevel.NOTHING, retry: { retries: 3 } });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const ok = await admin.createTopics({
      waitForLeaders: false,
      timeout: 20_000,
      topics: [{
        topic,
        ...(spec.assignment === undefined
          ? { numPartitions: spec.partitions ?? 1, replicationFactor: spec.replicationFactor ?? 3 }
          : { replicaAssignment: spec.assignment.map((replicas, partition) => ({ partition, replicas })) }),
        configEntries: Object.entries(spec.configs ?? {}).map(([name, value]) => ({ name, value })),
      }],
    });
    assert.ok(ok, `topic ${topic} created`);
  } finally {
    await admin.disconnect();
  }
  const n = spec.assignment?.length ?? spec.partitions ?? 1;
  for (let p = 0; p < n; p++) await cluster.waitLeader(topic, p, 30_000);
}
