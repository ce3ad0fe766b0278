// A controller under test: a registry tree (embedded, or a chroot on a real ZooKeeper), brokers
// that are nothing but their /brokers/ids/<id> registrations (each on its own session, so closing
// it is the broker dying), a KafkaController on broker 0's session, and a channel that records
// every request instead of sending it.
import assert from "node:assert/strict";
import type { Clock, Timer } from "../../src/platform/mod.ts";
import {
  BrokerIdZNode,
  ConfigEntityZNode,
  ConfigType,
  ControllerEpochZNode,
  EmbeddedRegistryStore,
  ensureKafkaPaths,
  IsrChangeNotificationSequenceZNode,
  type Registry,
  TopicPartitionStateZNode,
  TopicZNode,
  ZooKeeperRegistry,
} from "../../src/registry/mod.ts";
import { type BrokerInfo, type ControllerChannel, type ControllerOptions, KafkaController, type TopicInfo } from "../../src/controller/mod.ts";
import { type Logger, silentLogger } from "../../src/util/mod.ts";
import { testPlatform } from "../registry/helpers.ts";

/** Waits until cond holds (checked every few ms), or fails after timeoutMs. */
export async function eventually(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 3));
  }
}

export interface Sent {
  kind: "leaderAndIsr" | "updateMetadata" | "stopReplica";
  brokerId: number;
  controllerEpoch: number;
  topics: TopicInfo[];
  partitions: { topic: string; partition: number }[];
  deletePartitions: boolean;
  deletedTopics: string[];
}

/** Records what the controller sends; addBroker/removeBroker as RemoteControllerChannel has them. */
export class RecordingChannel implements ControllerChannel {
  sent: Sent[] = [];
  brokers = new Map<number, BrokerInfo>();

  leaderAndIsr(brokerId: number, controllerEpoch: number, topics: TopicInfo[], _live: BrokerInfo[]): Promise<void> {
    this.sent.push({ kind: "leaderAndIsr", brokerId, controllerEpoch, topics, partitions: [], deletePartitions: false, deletedTopics: [] });
    return Promise.resolve();
  }
  updateMetadata(brokerId: number, controllerEpoch: number, _c: number, _b: BrokerInfo[], topics: TopicInfo[], deletedTopics: string[]): Promise<void> {
    this.sent.push({ kind: "updateMetadata", brokerId, controllerEpoch, topics, partitions: [], deletePartitions: false, deletedTopics });
    return Promise.resolve();
  }
  stopReplica(brokerId: number, controllerEpoch: number, partitions: { topic: string; partition: number }[], deletePartitions: boolean): Promise<void> {
    this.sent.push({ kind: "stopReplica", brokerId, controllerEpoch, topics: [], partitions, deletePartitions, deletedTopics: [] });
    return Promise.resolve();
  }
  addBroker(info: BrokerInfo): void {
    this.brokers.set(info.id, info);
  }
  removeBroker(id: number): void {
    this.brokers.delete(id);
  }

  clear(): void {
    this.sent = [];
  }

  /** The partition states sent in LeaderAndIsr to a broker, in order. */
  leaderAndIsrTo(brokerId: number, topic: string, partition: number) {
    return this.sent
      .filter((s) => s.kind === "leaderAndIsr" && s.brokerId === brokerId)
      .flatMap((s) => s.topics.filter((t) => t.name === topic).flatMap((t) => t.partitions.filter((p) => p.partition === partition)));
  }

  stopReplicasTo(brokerId: number) {
    return this.sent.filter((s) => s.kind === "stopReplica" && s.brokerId === brokerId);
  }
}

/** setTimeout calls kept until fire() (unlike helpers/manual_clock.ts, time is real). */
export class HeldTimersClock implements Clock {
  private timers: { fn: () => void; ms: number; cancelled: boolean }[] = [];
  constructor(private readonly real: Clock) {}
  nowMs(): number {
    return this.real.nowMs();
  }
  monotonicMs(): number {
    return this.real.monotonicMs();
  }
  setTimeout(fn: () => void, ms: number): Timer {
    const t = { fn, ms, cancelled: false };
    this.timers.push(t);
    return { cancel: () => void (t.cancelled = true) } as Timer;
  }
  setInterval(fn: () => void, ms: number): Timer {
    return this.setTimeout(fn, ms);
  }
  /** Runs the pending timers; returns their delays. */
  fire(): number[] {
    const due = this.timers.filter((t) => !t.cancelled);
    this.timers = [];
    for (const t of due) t.fn();
    return due.map((t) => t.ms);
  }
}

export interface HarnessOptions {
  brokers?: number[];
  racks?: Record<number, string>;
  controller?: Partial<ControllerOptions>;
  clock?: "real" | "manual";
  /** A chroot on a real ZooKeeper (its connect string) instead of the embedded registry. */
  zookeeper?: string;
  logger?: Logger;
  /** The embedded store to run on (e.g. on disk, on a faulty platform) instead of an in-memory one. */
  store?: EmbeddedRegistryStore;
}

export class Harness {
  readonly channel = new RecordingChannel();
  readonly sessions = new Map<number, Registry>();
  controller!: KafkaController;
  /** Broker 0's session: the controller's, and the test's own for reads and writes. */
  admin!: Registry;
  clock!: Clock;
  private store: EmbeddedRegistryStore | null = null;
  private extraSessions: Registry[] = [];

  private constructor(private readonly options: HarnessOptions) {}

  static async start(options: HarnessOptions = {}): Promise<Harness> {
    const h = new Harness(options);
    const platform = await testPlatform();
    h.clock = options.clock === "manual" ? new HeldTimersClock(platform.clock) : platform.clock;
    if (options.zookeeper === undefined) h.store = options.store ?? EmbeddedRegistryStore.inMemory(platform);
    h.admin = await h.openSession();
    await ensureKafkaPaths(h.admin);
    for (const id of options.brokers ?? [0, 1, 2, 3]) await h.startBroker(id);
    h.controller = h.newController(h.admin);
    await h.controller.startup();
    assert.ok(h.controller.isActive, "the first controller is active");
    return h;
  }

  async openSession(): Promise<Registry> {
    if (this.store !== null) return this.store.session();
    const platform = await testPlatform();
    const r = await ZooKeeperRegistry.open(platform, { connectString: this.options.zookeeper!, sessionTimeoutMs: 6_000 });
    this.extraSessions.push(r);
    return r;
  }

  newController(session: Registry, brokerId = 0, channel: ControllerChannel = this.channel): KafkaController {
    return new KafkaController(session, channel, this.clock, {
      brokerId,
      listenerName: "PLAINTEXT",
      autoLeaderRebalanceEnable: false,
      ...this.options.controller,
    }, this.options.logger ?? silentLogger);
  }

  /** Registers broker id on a session of its own (broker 0 on the admin session). */
  async startBroker(id: number): Promise<void> {
    const session = id === 0 && this.admin !== undefined && !this.sessions.has(0) ? this.admin : await this.openSession();
    const rack = this.options.racks?.[id] ?? null;
    const data = BrokerIdZNode.encode({
      endpoints: [{ listenerName: "PLAINTEXT", securityProtocol: "PLAINTEXT", host: "127.0.0.1", port: 9000 + id }],
      rack,
    }, Date.now());
    await session.create(BrokerIdZNode.path(id), data, "ephemeral");
    this.sessions.set(id, session);
  }

  /** The broker dies: its session closes and its registration goes. */
  async killBroker(id: number): Promise<void> {
    const s = this.sessions.get(id);
    assert.ok(s !== undefined && id !== 0, `broker ${id} runs and is not the controller's`);
    this.sessions.delete(id);
    await s.close();
  }

  /** Waits until the controller told the channel of broker id's current registration. */
  async brokerSeen(id: number): Promise<void> {
    const epoch = await this.brokerEpoch(id);
    await eventually(() => this.channel.brokers.get(id)?.epoch === epoch, `the controller to see broker ${id}`);
  }

  async brokerEpoch(id: number): Promise<bigint> {
    return (await this.admin.exists(BrokerIdZNode.path(id)))!.czxid;
  }

  /** Writes a topic znode as an admin tool would (and its config), then waits for its states. */
  async createTopic(name: string, assignment: number[][], configs: Record<string, string> = {}): Promise<void> {
    await this.admin.create(ConfigEntityZNode.path(ConfigType.Topic, name), ConfigEntityZNode.encode(new Map(Object.entries(configs))));
    const id = new Uint8Array(16);
    id[0] = name.length;
    id[15] = 1;
    const a = new Map(assignment.map((replicas, p) => [p, { replicas, addingReplicas: [], removingReplicas: [] }]));
    await this.admin.create(TopicZNode.path(name), TopicZNode.encode(id, a));
    const live = new Set(this.sessions.keys());
    for (let p = 0; p < assignment.length; p++) {
      if (!assignment[p].some((r) => live.has(r))) continue;
      await this.waitState(name, p, () => true);
      // And the creation's LeaderAndIsr has reached every live replica: on a loaded machine it
      // could otherwise land after a test's channel.clear() and pass for a later request.
      for (const r of assignment[p].filter((b) => live.has(b))) {
        await eventually(() => this.channel.leaderAndIsrTo(r, name, p).length > 0, `creation's LeaderAndIsr of ${name}-${p} to ${r}`);
      }
    }
  }

  async state(topic: string, partition: number) {
    const { data, stat } = await this.admin.getData(TopicPartitionStateZNode.path(topic, partition));
    const s = TopicPartitionStateZNode.decode(data, stat)!;
    return { ...s.leaderAndIsr, controllerEpoch: s.controllerEpoch };
  }

  /** Waits until the partition's state znode exists and satisfies cond. */
  async waitState(
    topic: string,
    partition: number,
    cond: (s: { leader: number; isr: number[]; leaderEpoch: number; partitionEpoch: number; controllerEpoch: number }) => boolean,
    what = `state of ${topic}-${partition}`,
  ) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const stat = await this.admin.exists(TopicPartitionStateZNode.path(topic, partition));
      if (stat !== null) {
        const s = await this.state(topic, partition);
        if (cond(s)) return s;
        if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}: ${JSON.stringify(s)}`);
      } else if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}: no state`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  /** A partition leader's ISR change, as src/replication/isr_writer.ts writes it. */
  async leaderWritesIsr(topic: string, partition: number, isr: number[], notify = true): Promise<void> {
    const s = await this.state(topic, partition);
    const data = TopicPartitionStateZNode.encode({
      leaderAndIsr: { leader: s.leader, leaderEpoch: s.leaderEpoch, isr, leaderRecoveryState: 0 },
      controllerEpoch: s.controllerEpoch,
    });
    await this.admin.setData(TopicPartitionStateZNode.path(topic, partition), data, s.partitionEpoch);
    if (notify) {
      await this.admin.create(IsrChangeNotificationSequenceZNode.path(), IsrChangeNotificationSequenceZNode.encode([{ topic, partition }]), "persistent-sequential");
    }
  }

  async controllerEpoch(): Promise<number> {
    return ControllerEpochZNode.decode((await this.admin.getData(ControllerEpochZNode.path)).data)!;
  }

  async assignment(topic: string) {
    return TopicZNode.decode(topic, (await this.admin.getData(TopicZNode.path(topic))).data)!.assignment;
  }

  async close(): Promise<void> {
    await this.controller.shutdown().catch(() => {});
    for (const s of this.sessions.values()) await s.close().catch(() => {});
    for (const s of this.extraSessions) await s.close().catch(() => {});
    await this.admin.close().catch(() => {});
    await this.store?.close();
  }
}

/** Runs body on a fresh harness, closing it whatever happens. */
export async function withHarness(options: HarnessOptions, body: (h: Harness) => Promise<void>): Promise<void> {
  const h = await Harness.start(options);
  try {
    await body(h);
  } finally {
    await h.close();
  }
}
