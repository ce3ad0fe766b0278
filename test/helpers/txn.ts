// Transactions by hand over the wire, for the partition-side tests: transactional batches as a
// producer builds them, WriteTxnMarkers as a coordinator sends it (v1), and Fetch / ListOffsets
// with an isolation level (0 read_uncommitted, 1 read_committed); and, for the coordinator-side
// tests, FindCoordinator key type 1 and InitProducerId for a transactional id, each retried
// (bounded) while __transaction_state is created and loaded, as clients retry.
import { AddPartitionsToTxnApi, FetchApi, FindCoordinatorApi, InitProducerIdApi, ListOffsetsApi, ProduceApi, WriteTxnMarkersApi } from "../../src/protocol/mod.ts";
import { ErrorCode } from "../../src/util/errors.ts";
import { buildBatch, parseBatches, text, valueRecords } from "./record_batch.ts";
import type { ProducePartitionResponse, WireClient } from "./wire.ts";

/** A transactional batch of n records of producer pid (values `${prefix}0`, `${prefix}1` …). */
/**
 * A plain (non-transactional) batch stamped now, as txnBatch and the coordinator's markers are:
 * segment.ms is timed by batch timestamps (Kafka's timeWaitedForRoll), so a batch stamped years
 * earlier before them would roll the segment, and one fetch reads one segment.
 */
export function plainBatch(n: number, prefix: string): Uint8Array {
  return buildBatch(valueRecords(n, prefix), { baseTimestamp: BigInt(Date.now()) });
}

export function txnBatch(pid: bigint, epoch: number, seq: number, n: number, prefix: string): Uint8Array {
  return buildBatch(valueRecords(n, prefix), { producerId: pid, producerEpoch: epoch, baseSequence: seq, attributes: 0x10, baseTimestamp: BigInt(Date.now()) });
}

export interface MarkerAnswer {
  producerId: bigint;
  topics: { name: string; partitions: { partitionIndex: number; errorCode: number }[] }[];
}

/** One WriteTxnMarkers v1 with one marker; the per-partition codes, as "topic-partition" → code. */
export async function writeMarker(
  c: WireClient,
  m: { producerId: bigint; producerEpoch: number; committed: boolean; coordinatorEpoch: number; partitions: [string, number][] },
): Promise<Record<string, number>> {
  const topics = new Map<string, number[]>();
  for (const [t, p] of m.partitions) topics.set(t, [...(topics.get(t) ?? []), p]);
  const res = await c.request(WriteTxnMarkersApi, 1, {
    markers: [{
      producerId: m.producerId,
      producerEpoch: m.producerEpoch,
      transactionResult: m.committed,
      topics: [...topics].map(([name, partitionIndexes]) => ({ name, partitionIndexes })),
      coordinatorEpoch: m.coordinatorEpoch,
    }],
  }, 60_000);
  const out: Record<string, number> = {};
  for (const a of res.markers as MarkerAnswer[]) {
    for (const t of a.topics) for (const p of t.partitions) out[`${t.name}-${p.partitionIndex}`] = p.errorCode;
  }
  return out;
}

export interface IsolatedFetch {
  errorCode: number;
  highWatermark: bigint;
  lastStableOffset: bigint;
  abortedTransactions: { producerId: bigint; firstOffset: bigint }[] | null;
  records: Uint8Array | null;
}

export async function fetchIsolated(c: WireClient, topic: string, fetchOffset: bigint, isolationLevel: 0 | 1, version = 11): Promise<IsolatedFetch> {
  const res = await c.request(FetchApi, version, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 24,
    isolationLevel,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition: 0, fetchOffset, partitionMaxBytes: 1 << 24 }] }],
    forgottenTopicsData: [],
    rackId: "",
  }, 30_000);
  return (res.responses as { partitions: IsolatedFetch[] }[])[0].partitions[0];
}

/** Values of the fetched records (every batch, control batches' records left out). */
export function valuesOf(records: Uint8Array | null): string[] {
  return parseBatches(records ?? new Uint8Array(0)).filter((b) => (b.attributes & 0x20) === 0).flatMap((b) => b.records.map((r) => text(r.value) ?? ""));
}

/** What a read_committed client keeps: records of the aborted transactions dropped (Kafka's consumer rule). */
export function committedValues(f: IsolatedFetch): string[] {
  const aborted = [...(f.abortedTransactions ?? [])].sort((a, b) => Number(a.firstOffset - b.firstOffset));
  const abortedNow = new Set<bigint>();
  const out: string[] = [];
  for (const b of parseBatches(f.records ?? new Uint8Array(0))) {
    while (aborted.length > 0 && aborted[0].firstOffset <= b.baseOffset) abortedNow.add(aborted.shift()!.producerId);
    if ((b.attributes & 0x20) !== 0) {
      abortedNow.delete(b.producerId);
      continue;
    }
    if ((b.attributes & 0x10) !== 0 && abortedNow.has(b.producerId)) continue;
    out.push(...b.records.map((r) => text(r.value) ?? ""));
  }
  return out;
}

export async function listLatest(c: WireClient, topic: string, isolationLevel: 0 | 1): Promise<{ errorCode: number; offset: bigint }> {
  const res = await c.request(ListOffsetsApi, 5, {
    replicaId: -1,
    isolationLevel,
    topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }],
  });
  const p = (res.topics as { partitions: { errorCode: number; offset: bigint }[] }[])[0].partitions[0];
  return { errorCode: p.errorCode, offset: p.offset };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const txnRetriable: number[] = [ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR, ErrorCode.CONCURRENT_TRANSACTIONS];

export interface Coordinator {
  errorCode: number;
  nodeId: number;
  port: number;
}

/** FindCoordinator key type 1 until it names a node (v4: batched keys). */
export async function findTxnCoordinator(c: WireClient, id: string, version = 3): Promise<Coordinator> {
  let r: Coordinator = { errorCode: -1, nodeId: -1, port: -1 };
  for (let i = 0; i < 200; i++) {
    if (version >= 4) {
      const b = await c.request(FindCoordinatorApi, 4, { keyType: 1, coordinatorKeys: [id] });
      r = (b.coordinators as Coordinator[])[0];
    } else r = await c.request(FindCoordinatorApi, version, { key: id, keyType: 1 }) as unknown as Coordinator;
    if (!txnRetriable.includes(r.errorCode)) return r;
    await sleep(50);
  }
  return r;
}

export interface InitAnswer {
  errorCode: number;
  producerId: bigint;
  producerEpoch: number;
}

/** InitProducerId for a transactional id (v3+: with the expected id/epoch). */
export async function initTxn(c: WireClient, id: string, version = 4, expected = { producerId: -1n, producerEpoch: -1 }, timeoutMs = 60_000): Promise<InitAnswer> {
  let r: InitAnswer = { errorCode: -1, producerId: -1n, producerEpoch: -1 };
  for (let i = 0; i < 200; i++) {
    r = await c.request(InitProducerIdApi, version, { transactionalId: id, transactionTimeoutMs: timeoutMs, ...expected }) as unknown as InitAnswer;
    if (!txnRetriable.includes(r.errorCode)) return r;
    await sleep(50);
  }
  return r;
}

/**
 * Produce v9 (acks=all) of one record set under a transactional id: transactional batches need
 * one (Kafka's TRANSACTIONAL_ID_AUTHORIZATION_FAILED without), the partition's answer.
 */
export async function produceAs(c: WireClient, transactionalId: string | null, topic: string, partition: number, records: Uint8Array): Promise<ProducePartitionResponse> {
  const res = await c.request(ProduceApi, 9, { transactionalId, acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }] });
  return (res.responses as { partitionResponses: ProducePartitionResponse[] }[])[0].partitionResponses[0];
}

/** AddPartitionsToTxn (v3 by default, a client's) for a producer of the transactional id. */
export function addPartitions(c: WireClient, id: string, p: { producerId: bigint; producerEpoch: number }, topics: { name: string; partitions: number[] }[], version = 3) {
  return c.request(AddPartitionsToTxnApi, version, {
    v3AndBelowTransactionalId: id,
    v3AndBelowProducerId: p.producerId,
    v3AndBelowProducerEpoch: p.producerEpoch,
    v3AndBelowTopics: topics,
  });
}

/** AddPartitionsToTxn v0-3's answer as "topic-partition" → code. */
export function partitionCodes(answer: Record<string, unknown>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of answer.resultsByTopicV3AndBelow as { name: string; resultsByPartition: { partitionIndex: number; partitionErrorCode: number }[] }[]) {
    for (const p of t.resultsByPartition) out[`${t.name}-${p.partitionIndex}`] = p.partitionErrorCode;
  }
  return out;
}
