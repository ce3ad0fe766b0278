// Test doubles for the transaction coordinator: a fake TxnMarkerSender that records each
// WriteTxnMarkers and answers as the test says (NONE by default, per-partition codes, a held
// answer, or a disconnect), and a harness that builds a TransactionCoordinator over the group
// tests' manual clock and in-memory log, with every __transaction_state partition loaded.
import {
  defaultTransactionConfig,
  TransactionCoordinator,
  type TransactionConfig,
  type TxnMarkerEntry,
  type TxnMarkerSender,
  TxnStateManager,
} from "../../src/coordinator/mod.ts";
import { CapturingLogger, ManualClock, MemoryOffsetsLog } from "./harness.ts";

export interface SentMarkers {
  brokerId: number;
  markers: TxnMarkerEntry[];
}

type Answer = number | "disconnect" | "hold";

export class FakeMarkerSender implements TxnMarkerSender {
  readonly sent: SentMarkers[] = [];
  /** Answers for coming requests, by "topic-partition": a code, a disconnect or a held answer; used once each. */
  private readonly planned = new Map<string, Answer[]>();
  private readonly held: (() => void)[] = [];

  plan(topic: string, partition: number, ...answers: Answer[]): void {
    const k = `${topic}-${partition}`;
    this.planned.set(k, [...(this.planned.get(k) ?? []), ...answers]);
  }

  /** Lets held answers go (each answers NONE). */
  release(): void {
    for (const f of this.held.splice(0)) f();
  }

  get heldCount(): number {
    return this.held.length;
  }

  send(brokerId: number, markers: TxnMarkerEntry[]): Promise<number[][]> {
    this.sent.push({ brokerId, markers: markers.map((m) => ({ ...m, partitions: [...m.partitions] })) });
    let disconnect = false;
    let hold = false;
    const errors = markers.map((m) =>
      m.partitions.map((p) => {
        const a = this.planned.get(`${p.topic}-${p.partition}`)?.shift() ?? 0;
        if (a === "disconnect") disconnect = true;
        if (a === "hold") hold = true;
        return typeof a === "number" ? a : 0;
      })
    );
    if (disconnect) return Promise.reject(new Error("connection to broker lost"));
    if (hold) return new Promise((r) => this.held.push(() => r(errors)));
    return Promise.resolve(errors);
  }

  /** Every partition a marker was sent for, as "committed|aborted topic-partition@epoch". */
  log(): string[] {
    return this.sent.flatMap((s) => s.markers.flatMap((m) => m.partitions.map((p) => `${m.committed ? "commit" : "abort"} ${p.topic}-${p.partition}@${m.producerEpoch} to ${s.brokerId}`)));
  }
}

export interface TxnHarness {
  clock: ManualClock;
  log: MemoryOffsetsLog;
  logger: CapturingLogger;
  config: TransactionConfig;
  sender: FakeMarkerSender;
  /** Partition leaders for markers: "topic-partition" → broker id (-1: no live leader); missing: unknown (deleted). */
  leaders: Map<string, number>;
  c: TransactionCoordinator;
  /** Producer ids handed out so far. */
  ids: bigint[];
  /** A new coordinator over the same log and clock (a broker restart), every partition loaded at coordinatorEpoch. */
  restart(coordinatorEpoch?: number): Promise<TransactionCoordinator>;
}

export const OFFSETS_PARTITIONS = 10;

export async function txnHarness(overrides: Partial<TransactionConfig> = {}, opts: { load?: boolean; markerSender?: TxnMarkerSender; idsBytesMax?: number } = {}): Promise<TxnHarness> {
  const config: TransactionConfig = { ...defaultTransactionConfig, transactionLogNumPartitions: 4, ...overrides };
  const clock = new ManualClock();
  const log = new MemoryOffsetsLog();
  const logger = new CapturingLogger();
  const sender = new FakeMarkerSender();
  const leaders = new Map<string, number>([["t-0", 1], ["t-1", 1], ["t-2", 2]]);
  for (let p = 0; p < OFFSETS_PARTITIONS; p++) leaders.set(`__consumer_offsets-${p}`, 3);
  const ids: bigint[] = [];
  let next = 1000n;
  const make = async (coordinatorEpoch: number) => {
    const state = new TxnStateManager(log, config, clock, logger, opts.idsBytesMax);
    const c = new TransactionCoordinator(state, {
      generateProducerId: () => {
        ids.push(next);
        return Promise.resolve(next++);
      },
      markerSender: opts.markerSender ?? sender,
      leaderOf: (topic, partition) => leaders.get(`${topic}-${partition}`) ?? null,
      offsetsTopicNumPartitions: OFFSETS_PARTITIONS,
    }, clock, logger);
    if (opts.load !== false) {
      const loads = [];
      for (let p = 0; p < config.transactionLogNumPartitions; p++) loads.push(c.onElection(p, coordinatorEpoch));
      await clock.advance(0);
      await Promise.all(loads);
    }
    c.startup();
    return c;
  };
  const h: TxnHarness = {
    clock,
    log,
    logger,
    config,
    sender,
    leaders,
    ids,
    c: await make(1),
    async restart(coordinatorEpoch = 2) {
      h.c.shutdown();
      h.c = await make(coordinatorEpoch);
      return h.c;
    },
  };
  return h;
}
