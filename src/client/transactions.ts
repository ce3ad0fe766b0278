// Transactions, as Kafka's Admin client and kafka-transactions.sh see them: the transactional ids
// every coordinator holds (ListTransactions, asked of each broker), one id's state at its
// coordinator (FindCoordinator key type 1, then DescribeTransactions), the open transactions of a
// partition (DescribeProducers at its leader), and aborting a hanging one (WriteTxnMarkers with an
// abort marker to the partition's leader, as Admin.abortTransaction does; the broker takes it only
// from a principal with CLUSTER_ACTION, and a single-node strand from nobody).
import { DescribeProducersApi, DescribeTransactionsApi, FindCoordinatorApi, ListTransactionsApi, type Struct, WriteTxnMarkersApi } from "../protocol/mod.ts";
import { ErrorCode } from "../util/mod.ts";
import { throwFirst } from "./admin.ts";
import { ClientError, type ClusterClient, RetriableError } from "./cluster_client.ts";
import type { KafkaConnection } from "./connection.ts";

export interface TransactionListing {
  transactionalId: string;
  producerId: bigint;
  state: string;
  coordinatorId: number;
}

/** ListTransactions on every broker (states, producer ids and a minimum duration filter, as Kafka's). */
export async function listTransactions(c: ClusterClient, filter: { states?: string[]; producerIds?: bigint[]; durationMs?: number } = {}): Promise<TransactionListing[]> {
  const md = await c.retrying(() => c.refreshMetadata([]));
  const out: TransactionListing[] = [];
  await Promise.all([...md.brokers.keys()].map(async (id) => {
    await c.retrying(async () => {
      const conn = await c.brokerConnection(id);
      const { res } = await c.call(conn, ListTransactionsApi, 1, () => ({
        stateFilters: filter.states ?? [],
        producerIdFilters: filter.producerIds ?? [],
        durationFilter: BigInt(filter.durationMs ?? -1),
      }));
      throwFirst([{ code: res.errorCode as number, context: `list transactions on broker ${id}`, message: null }]);
      for (const t of res.transactionStates as Struct[]) {
        out.push({ transactionalId: t.transactionalId as string, producerId: t.producerId as bigint, state: t.transactionState as string, coordinatorId: id });
      }
    });
  }));
  return out.sort((a, b) => (a.transactionalId < b.transactionalId ? -1 : a.transactionalId > b.transactionalId ? 1 : 0));
}

async function transactionCoordinator(c: ClusterClient, transactionalId: string): Promise<{ id: number; conn: KafkaConnection }> {
  const conn = await c.anyConnection();
  const { version, res } = await c.call(conn, FindCoordinatorApi, 4, () => ({ key: transactionalId, keyType: 1, coordinatorKeys: [transactionalId] }));
  const r = version >= 4 ? (res.coordinators as Struct[])[0] : res;
  throwFirst([{ code: r.errorCode as number, context: `find the coordinator of transactional id "${transactionalId}"`, message: r.errorMessage as string | null }]);
  return { id: r.nodeId as number, conn: await c.connectTo({ host: r.host as string, port: r.port as number }) };
}

export interface TransactionDescription {
  coordinatorId: number;
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  state: string;
  timeoutMs: number;
  /** -1 when no transaction has started. */
  startTimeMs: number;
  partitions: { topic: string; partition: number }[];
}

export async function describeTransaction(c: ClusterClient, transactionalId: string): Promise<TransactionDescription> {
  return await c.retrying(async () => {
    const { id, conn } = await transactionCoordinator(c, transactionalId);
    const { res } = await c.call(conn, DescribeTransactionsApi, 0, () => ({ transactionalIds: [transactionalId] }));
    const t = (res.transactionStates as Struct[])[0];
    throwFirst([{ code: t.errorCode as number, context: `describe transactional id "${transactionalId}"`, message: null }]);
    return {
      coordinatorId: id,
      transactionalId,
      producerId: t.producerId as bigint,
      producerEpoch: t.producerEpoch as number,
      state: t.transactionState as string,
      timeoutMs: t.transactionTimeoutMs as number,
      startTimeMs: Number(t.transactionStartTimeMs as bigint),
      partitions: (t.topics as { topic: string; partitions: number[] }[]).flatMap((x) => x.partitions.map((partition) => ({ topic: x.topic, partition }))).sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1)),
    };
  });
}

export interface PartitionProducer {
  producerId: bigint;
  producerEpoch: number;
  lastSequence: number;
  lastTimestampMs: number;
  coordinatorEpoch: number;
  /** -1 when the producer has no open transaction on the partition. */
  currentTxnStartOffset: number;
}

async function leaderConnection(c: ClusterClient, topic: string, partition: number): Promise<KafkaConnection> {
  const t = await c.topicMetadata(topic);
  const p = t.partitions.find((x) => x.partition === partition);
  if (p === undefined) throw new ClientError(`topic "${topic}" has no partition ${partition}`, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  if (p.leader < 0) throw new RetriableError(`${topic}-${partition} has no leader`, ErrorCode.LEADER_NOT_AVAILABLE);
  return await c.brokerConnection(p.leader);
}

/** DescribeProducers at the partition's leader: its producers and their open transactions. */
export async function describeProducers(c: ClusterClient, topic: string, partition: number): Promise<PartitionProducer[]> {
  return await c.retrying(async () => {
    const conn = await leaderConnection(c, topic, partition);
    const { res } = await c.call(conn, DescribeProducersApi, 0, () => ({ topics: [{ name: topic, partitionIndexes: [partition] }] }));
    const p = (res.topics as { partitions: Struct[] }[])[0].partitions[0];
    throwFirst([{ code: p.errorCode as number, context: `describe producers of ${topic}-${partition}`, message: (p.errorMessage as string | null) ?? null }]);
    return (p.activeProducers as Struct[]).map((x) => ({
      producerId: x.producerId as bigint,
      producerEpoch: x.producerEpoch as number,
      lastSequence: x.lastSequence as number,
      lastTimestampMs: Number(x.lastTimestamp as bigint),
      coordinatorEpoch: x.coordinatorEpoch as number,
      currentTxnStartOffset: Number(x.currentTxnStartOffset as bigint),
    }));
  }, [topic]);
}

/**
 * Aborts the open transaction that starts at startOffset on the partition (kafka-transactions.sh
 * abort --topic --partition --start-offset): an abort marker under the producer's epoch and
 * coordinator epoch, written by the partition's leader.
 */
export async function abortTransaction(c: ClusterClient, topic: string, partition: number, startOffset: number): Promise<PartitionProducer> {
  const producers = await describeProducers(c, topic, partition);
  const p = producers.find((x) => x.currentTxnStartOffset === startOffset);
  if (p === undefined) throw new ClientError(`no open transaction starts at offset ${startOffset} of ${topic}-${partition}`);
  await c.retrying(async () => {
    const conn = await leaderConnection(c, topic, partition);
    const { res } = await c.call(conn, WriteTxnMarkersApi, 1, () => ({
      markers: [{ producerId: p.producerId, producerEpoch: p.producerEpoch, transactionResult: false, topics: [{ name: topic, partitionIndexes: [partition] }], coordinatorEpoch: p.coordinatorEpoch }],
    }));
    const code = ((res.markers as Struct[])[0].topics as { partitions: { errorCode: number }[] }[])[0].partitions[0].errorCode;
    throwFirst([{ code, context: `abort the transaction of producer ${p.producerId} on ${topic}-${partition}`, message: null }]);
  }, [topic]);
  return p;
}
