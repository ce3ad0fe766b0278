// Transactions by hand over the wire, for the partition-side tests: transactional batches as a
// producer builds them, WriteTxnMarkers as a coordinator sends it (v1), and Fetch / ListOffsets
// with an isolation level (0 read_uncommitted, 1 read_committed).
import { FetchApi, ListOffsetsApi, WriteTxnMarkersApi } from "../../src/protocol/mod.ts";
import { buildBatch, parseBatches, text, valueRecords } from "./record_batch.ts";
import type { WireClient } from "./wire.ts";

/** A transactional batch of n records of producer pid (values `${prefix}0`, `${prefix}1` …). */
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
