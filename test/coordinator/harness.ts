// Test doubles for the group coordinator: the manual clock (test/helpers/manual_clock.ts), an
// in-memory __consumer_offsets (OffsetsTopicLog) that keeps every batch it is given, and a
// harness that builds a Coordinator over them with every offsets partition owned.
import {
  Coordinator,
  defaultGroupCoordinatorConfig,
  type GroupCoordinatorConfig,
  type JoinRequest,
  type JoinResult,
  type OffsetsTopicLog,
  type Protocol,
  type SyncResult,
} from "../../src/coordinator/mod.ts";
import type { Logger } from "../../src/util/logger.ts";
import { parseBatches, type ParsedRecord } from "../helpers/record_batch.ts";

export { ManualClock, settle } from "../helpers/manual_clock.ts";
import { ManualClock } from "../helpers/manual_clock.ts";

interface StoredBatch {
  baseOffset: number;
  lastOffset: number;
  bytes: Uint8Array;
}

/** __consumer_offsets in memory: batches get offsets as a leader would assign them. */
export class MemoryOffsetsLog implements OffsetsTopicLog {
  private readonly partitions = new Map<number, StoredBatch[]>();
  /** An error code every append answers with (0: none). */
  failWith = 0;
  /** While set, appends wait until release() (a slow disk, or a write in flight). */
  private held: (() => void)[] | null = null;
  appends = 0;

  private batches(p: number): StoredBatch[] {
    let b = this.partitions.get(p);
    if (b === undefined) this.partitions.set(p, (b = []));
    return b;
  }

  hold(): void {
    this.held ??= [];
  }

  release(): void {
    const h = this.held ?? [];
    this.held = null;
    for (const f of h) f();
  }

  async append(partition: number, batch: Uint8Array): Promise<number> {
    if (this.held !== null) await new Promise<void>((r) => this.held!.push(r));
    this.appends++;
    if (this.failWith !== 0) return this.failWith;
    const bytes = batch.slice();
    const dv = new DataView(bytes.buffer);
    const list = this.batches(partition);
    const base = list.length === 0 ? 0 : list[list.length - 1].lastOffset + 1;
    // baseOffset (bytes 0-7) is outside the CRC's range, as a leader's append patches it.
    dv.setBigInt64(0, BigInt(base));
    const lastOffsetDelta = dv.getInt32(23);
    list.push({ baseOffset: base, lastOffset: base + lastOffsetDelta, bytes });
    return 0;
  }

  read(partition: number, offset: number, maxBytes: number): { records: Uint8Array; logEndOffset: number } | null {
    const list = this.batches(partition);
    const logEndOffset = list.length === 0 ? 0 : list[list.length - 1].lastOffset + 1;
    const out: Uint8Array[] = [];
    let size = 0;
    for (const b of list) {
      if (b.lastOffset < offset) continue;
      if (out.length > 0 && size + b.bytes.length > maxBytes) break;
      out.push(b.bytes);
      size += b.bytes.length;
    }
    const records = new Uint8Array(size);
    let pos = 0;
    for (const b of out) {
      records.set(b, pos);
      pos += b.length;
    }
    return { records, logEndOffset };
  }

  logStartOffset(_partition: number): number {
    return 0;
  }

  /** Every record of a partition, parsed with the tests' own batch parser. */
  records(partition: number): ParsedRecord[] {
    return this.batches(partition).flatMap((b) => parseBatches(b.bytes).flatMap((x) => x.records));
  }

  /** Every partition that holds anything. */
  partitionsWithData(): number[] {
    return [...this.partitions].filter(([, b]) => b.length > 0).map(([p]) => p);
  }
}

export class CapturingLogger implements Logger {
  readonly errors: string[] = [];
  readonly lines: string[] = [];
  debug(): void {}
  info(fields: Record<string, unknown>, msg: string): void {
    this.lines.push(`${msg} ${JSON.stringify(fields)}`);
  }
  warn(fields: Record<string, unknown>, msg: string): void {
    this.lines.push(`WARN ${msg} ${JSON.stringify(fields)}`);
  }
  error(fields: Record<string, unknown>, msg: string): void {
    this.errors.push(`${msg} ${JSON.stringify(fields)}`);
  }
  child(): Logger {
    return this;
  }
}

export const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
export const dec = (b: Uint8Array): string => new TextDecoder().decode(b);

export const SESSION_MS = 10_000;
export const REBALANCE_MS = 30_000;
export const DELAY_MS = 3_000;

export interface Harness {
  clock: ManualClock;
  log: MemoryOffsetsLog;
  logger: CapturingLogger;
  config: GroupCoordinatorConfig;
  c: Coordinator;
  /** A new coordinator over the same log and clock (a broker restart), with every partition loaded. */
  restart(): Promise<Coordinator>;
}

export async function harness(overrides: Partial<GroupCoordinatorConfig> = {}, log = new MemoryOffsetsLog(), clock = new ManualClock()): Promise<Harness> {
  const config: GroupCoordinatorConfig = {
    ...defaultGroupCoordinatorConfig,
    groupInitialRebalanceDelayMs: DELAY_MS,
    offsetsTopicNumPartitions: 4,
    ...overrides,
  };
  const logger = new CapturingLogger();
  let ids = 0;
  const make = async () => {
    const c = new Coordinator(log, config, clock, logger, () => `id${++ids}`);
    const loads = [];
    for (let p = 0; p < config.offsetsTopicNumPartitions; p++) loads.push(c.onElection(p));
    // Loading yields between chunks on the clock: let it run.
    await clock.advance(0);
    await Promise.all(loads);
    c.startup();
    return c;
  };
  const h: Harness = {
    clock,
    log,
    logger,
    config,
    c: await make(),
    async restart() {
      h.c.shutdown();
      h.c = await make();
      return h.c;
    },
  };
  return h;
}

export const protocols = (...names: string[]): Protocol[] => names.map((name) => ({ name, metadata: enc(`meta-${name}`) }));

export interface JoinOptions {
  memberId?: string;
  instanceId?: string | null;
  protocolType?: string;
  protocols?: Protocol[];
  sessionTimeoutMs?: number;
  rebalanceTimeoutMs?: number;
  /** JoinGroup v4+ (MEMBER_ID_REQUIRED for unknown members); false by default. */
  requireKnownMemberId?: boolean;
  clientId?: string;
}

export function joinRequest(groupId: string, o: JoinOptions = {}): JoinRequest {
  return {
    groupId,
    memberId: o.memberId ?? "",
    groupInstanceId: o.instanceId ?? null,
    requireKnownMemberId: o.requireKnownMemberId ?? false,
    clientId: o.clientId ?? "client",
    clientHost: "/127.0.0.1",
    rebalanceTimeoutMs: o.rebalanceTimeoutMs ?? REBALANCE_MS,
    sessionTimeoutMs: o.sessionTimeoutMs ?? SESSION_MS,
    protocolType: o.protocolType ?? "consumer",
    protocols: o.protocols ?? protocols("range"),
    reason: null,
  };
}

/** A promise whose settlement the test can look at without awaiting it. */
export interface Tracked<T> {
  readonly done: boolean;
  readonly value: T;
  readonly promise: Promise<T>;
}

export function track<T>(p: Promise<T>): Tracked<T> {
  const t = { done: false, value: undefined as T, promise: p };
  p.then((v) => {
    t.done = true;
    t.value = v;
  });
  return t;
}

export function join(h: Harness, groupId: string, o: JoinOptions = {}): Tracked<JoinResult> {
  return track(h.c.groups.join(joinRequest(groupId, o)));
}

export function sync(
  h: Harness,
  groupId: string,
  memberId: string,
  generationId: number,
  assignments: { memberId: string; assignment: Uint8Array }[] = [],
  instanceId: string | null = null,
): Tracked<SyncResult> {
  return track(h.c.groups.sync({ groupId, generationId, memberId, groupInstanceId: instanceId, protocolType: null, protocolName: null, assignments }));
}

export interface StableMember {
  memberId: string;
  instanceId: string | null;
}

export interface StableGroup {
  generationId: number;
  leader: string;
  members: StableMember[];
}

/**
 * Joins n members together (inside the initial delay, extended once by the second joiner), lets the leader assign `assign-<memberId>`
 * to each, and returns the Stable group. Works from an Empty (or new) group.
 */
export async function stableGroup(h: Harness, groupId: string, n: number, o: JoinOptions & { instanceIds?: string[] } = {}): Promise<StableGroup> {
  const joins = Array.from({ length: n }, (_, i) => join(h, groupId, { ...o, instanceId: o.instanceIds?.[i] ?? o.instanceId }));
  // Joiners after the first extend the delay once (Kafka's InitialDelayedJoin): wait until all are in.
  for (let waited = 0; !joins.every((j) => j.done) && waited <= REBALANCE_MS; waited += h.config.groupInitialRebalanceDelayMs) {
    await h.clock.advance(Math.max(1, h.config.groupInitialRebalanceDelayMs));
  }
  for (const j of joins) {
    if (!j.done) throw new Error("join did not complete after the initial delay");
    if (j.value.errorCode !== 0) throw new Error(`join failed with ${j.value.errorCode}`);
  }
  const generationId = joins[0].value.generationId;
  const leader = joins[0].value.leader;
  const members = joins.map((j, i) => ({ memberId: j.value.memberId, instanceId: o.instanceIds?.[i] ?? o.instanceId ?? null }));
  const syncs = members.map((m) =>
    sync(h, groupId, m.memberId, generationId, m.memberId === leader ? members.map((x) => ({ memberId: x.memberId, assignment: enc(`assign-${x.memberId}`) })) : [], m.instanceId)
  );
  await h.clock.advance(0);
  for (const s of syncs) {
    if (!s.done || s.value.errorCode !== 0) throw new Error(`sync failed: ${JSON.stringify(s.value)}`);
  }
  return { generationId, leader, members };
}
