// KIP-890's verification of transactional produce (Kafka 3.8, transaction.partition.verification.enable,
// default true; false skips it): before a producer's first transactional batch on a partition in a transaction, the
// partition leader asks the transaction coordinator whether the partition was added to that
// producer's ongoing transaction (AddPartitionsToTxn). Without it, a batch sent after the
// transaction ended (a late retry, a zombie, a client bug) would open a transaction no coordinator
// knows of, and hold the last stable offset back for ever.
// - A partition on which the producer already has an ongoing transaction at this epoch needs no
//   question (Kafka's hasOngoingTransaction).
// - The coordinator is asked directly when this broker leads the transactional id's
//   __transaction_state partition, else with AddPartitionsToTxn v4 verifyOnly over the
//   inter-broker listener, as Kafka's AddPartitionsToTxnManager.
// - Answers as Kafka's ReplicaManager translates them for Produce: TRANSACTION_ABORTABLE (not in
//   the transaction) is INVALID_TXN_STATE, PRODUCER_FENCED is INVALID_PRODUCER_EPOCH, and the
//   coordinator being unknown, loading or busy is NOT_ENOUGH_REPLICAS (every producer retries it
//   without a metadata refresh).
// - A guard, as Kafka's VerificationGuard: a marker for the producer written on the partition
//   while the question was out (its transaction ended meanwhile) would let the append open a
//   transaction no coordinator knows of; recheck(), called with no await before the append,
//   refuses such a partition with NOT_ENOUGH_REPLICAS (the producer retries and is asked again).
//   The producer's state on the partition is compared before and after; one that has meanwhile
//   started its transaction there (a pipelined batch) needs no guard.

import { AddPartitionsToTxnApi, BatchAttribute, BatchField, type Struct } from "../protocol/mod.ts";
import { ErrorCode, recordBatchHeaderBytes } from "../util/mod.ts";
import type { BrokerServices } from "./services.ts";
import type { InterBrokerConnections } from "./txn_marker_sender.ts";

export interface TxnBatchProducer {
  producerId: bigint;
  producerEpoch: number;
}

/**
 * The record set's producer when it is a transactional record batch v2 with a producer id, else
 * null (no allocation otherwise). A transactional bit without a producer id is a malformed batch,
 * not a transaction: the validator refuses it (INVALID_RECORD) without asking any coordinator.
 * The first batch is the whole set: Produce refuses a set of several batches (INVALID_RECORD,
 * protocol's produceRecordSetError) before verifying, and a request whose partitions carry two
 * producers (INVALID_PRODUCER_ID_MAPPING), so one producer speaks for every partition asked about.
 */
export function transactionalProducerOf(records: Uint8Array | null): TxnBatchProducer | null {
  if (records === null || records.length < recordBatchHeaderBytes || records[BatchField.magic] !== 2) return null;
  if ((records[BatchField.attributes + 1] & BatchAttribute.transactional) === 0) return null;
  const dv = new DataView(records.buffer, records.byteOffset, records.byteLength);
  const producerId = dv.getBigInt64(BatchField.producerId);
  return producerId < 0n ? null : { producerId, producerEpoch: dv.getInt16(BatchField.producerEpoch) };
}

export interface PartitionToVerify {
  topic: string;
  partition: number;
  producer: TxnBatchProducer;
}

/** A verification answer as TxnOffsetCommit gives it: as Produce, but the retriable group retries as the coordinator loading. */
export function txnOffsetCommitCode(code: number): number {
  return code === ErrorCode.NOT_ENOUGH_REPLICAS ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : code;
}

function produceCode(code: number): number {
  switch (code) {
    case ErrorCode.TRANSACTION_ABORTABLE:
      return ErrorCode.INVALID_TXN_STATE;
    case ErrorCode.PRODUCER_FENCED:
      return ErrorCode.INVALID_PRODUCER_EPOCH;
    case ErrorCode.CONCURRENT_TRANSACTIONS:
    case ErrorCode.NETWORK_EXCEPTION:
    case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
    case ErrorCode.COORDINATOR_NOT_AVAILABLE:
    case ErrorCode.NOT_COORDINATOR:
      return ErrorCode.NOT_ENOUGH_REPLICAS;
    default:
      return code;
  }
}

/** The producer's state on the partition as far as a marker changes it; "ongoing" once its transaction runs there. */
function producerStateOf(s: BrokerServices, p: PartitionToVerify): string {
  const e = s.replicaManager.getPartition(p.topic, p.partition)?.log.producerState.lastEntry(p.producer.producerId);
  if (e === undefined) return "none";
  if (e.currentTxnFirstOffset >= 0 && e.producerEpoch === p.producer.producerEpoch) return "ongoing";
  return `${e.producerEpoch}:${e.coordinatorEpoch}:${e.lastTimestampMs}:${e.currentTxnFirstOffset}`;
}

export interface Verification {
  /** The codes ("partition:topic" → code), with the guard applied now: call it with no await before the append. */
  recheck(): Map<string, number>;
}

/**
 * Verifies the partitions (all of one producer and transactional id) that need it; resolves to a
 * Produce error code per partition, NONE for the verified ones, through recheck().
 */
export async function verifyTransactionalProduce(
  s: BrokerServices,
  remote: InterBrokerConnections | null,
  transactionalId: string,
  parts: PartitionToVerify[],
): Promise<Verification> {
  const out = new Map<string, number>();
  const key = (p: { topic: string; partition: number }) => `${p.partition}:${p.topic}`;
  const ask: PartitionToVerify[] = [];
  const before: string[] = [];
  // transaction.partition.verification.enable=false: taken as sent (Kafka before 3.6).
  if (!s.config.transactionPartitionVerificationEnable) return { recheck: () => new Map(parts.map((p) => [key(p), ErrorCode.NONE])) };
  for (const p of parts) {
    const state = producerStateOf(s, p);
    if (state === "ongoing") out.set(key(p), ErrorCode.NONE);
    else {
      ask.push(p);
      before.push(state);
    }
  }
  const verification: Verification = {
    recheck() {
      ask.forEach((p, i) => {
        if (out.get(key(p)) !== ErrorCode.NONE) return;
        const now = producerStateOf(s, p);
        if (now !== "ongoing" && now !== before[i]) out.set(key(p), ErrorCode.NOT_ENOUGH_REPLICAS);
      });
      return out;
    },
  };
  await askCoordinator(s, remote, transactionalId, ask, out, key);
  return verification;
}

async function askCoordinator(
  s: BrokerServices,
  remote: InterBrokerConnections | null,
  transactionalId: string,
  ask: PartitionToVerify[],
  out: Map<string, number>,
  key: (p: { topic: string; partition: number }) => string,
): Promise<void> {
  if (ask.length === 0) return;
  const all = (code: number) => {
    for (const p of ask) out.set(key(p), produceCode(code));
  };
  const c = s.txnCoordinator;
  if (c === undefined || c === null) return all(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  const { producerId, producerEpoch } = ask[0].producer;
  const txnPartition = c.partitionFor(transactionalId);
  const leader = s.metadata.getTopic("__transaction_state")?.partitions.find((p) => p.partition === txnPartition)?.leader ?? -1;
  if (leader < 0) return all(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  if (leader === s.brokerId) {
    const codes = c.handleVerifyPartitionsInTransaction(transactionalId, producerId, producerEpoch, ask);
    ask.forEach((p, i) => out.set(key(p), produceCode(codes[i])));
    return;
  }
  if (remote === null) return all(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  const topics = new Map<string, number[]>();
  for (const p of ask) topics.set(p.topic, [...(topics.get(p.topic) ?? []), p.partition]);
  let body: Struct;
  try {
    body = await remote.request(leader, AddPartitionsToTxnApi, 4, {
      transactions: [{ transactionalId, producerId, producerEpoch, verifyOnly: true, topics: [...topics].map(([name, partitions]) => ({ name, partitions })) }],
    });
  } catch {
    return all(ErrorCode.NETWORK_EXCEPTION);
  }
  if (body.errorCode !== ErrorCode.NONE) return all(body.errorCode as number);
  const answered = new Map<string, number>();
  for (const t of body.resultsByTransaction as { topicResults: { name: string; resultsByPartition: { partitionIndex: number; partitionErrorCode: number }[] }[] }[]) {
    for (const tr of t.topicResults) for (const pr of tr.resultsByPartition) answered.set(`${pr.partitionIndex}:${tr.name}`, pr.partitionErrorCode);
  }
  for (const p of ask) out.set(key(p), produceCode(answered.get(key(p)) ?? ErrorCode.NETWORK_EXCEPTION));
}
