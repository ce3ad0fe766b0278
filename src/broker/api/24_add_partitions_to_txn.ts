// AddPartitionsToTxn (24), v0-5. v0-3 from producers: TRANSACTIONAL_ID WRITE
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then WRITE on each topic (internal topics never:
// TOPIC_AUTHORIZATION_FAILED) and each partition known (UNKNOWN_TOPIC_OR_PARTITION); one failure
// fails the transaction's request, the other partitions answering OPERATION_NOT_ATTEMPTED, as
// KafkaApis 3.8. v4+ from partition leaders (batched, verifyOnly; KIP-890): an inter-broker
// request (inter_broker.ts: CLUSTER_ACTION with an authorizer, else the inter-broker listener
// only, never in single-node mode, where the leader asks its own coordinator in process), so a
// plain client cannot skip v3's TRANSACTIONAL_ID and topic checks by speaking v4. PRODUCER_FENCED is INVALID_PRODUCER_EPOCH below v2 (older clients do not know it).
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { internalTopics } from "../../controller/mod.ts";
import { AddPartitionsToTxnApi, type Struct } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { allowed } from "../authorize.ts";
import { authorizedNames } from "../authorize_checks.ts";
import type { ApiHandler, RequestContext } from "../dispatch.ts";
import { refuseInterBroker } from "../inter_broker.ts";
import type { BrokerServices } from "../services.ts";

interface TxnRequest {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  verifyOnly: boolean;
  topics: { name: string; partitions: number[] }[];
}

type TopicPartition = { topic: string; partition: number };

export const addPartitionsToTxnHandler: ApiHandler<BrokerServices> = {
  api: AddPartitionsToTxnApi,
  async handle(s, ctx, req) {
    const v = ctx.version;
    if (v < 4) {
      const t: TxnRequest = {
        transactionalId: req.v3AndBelowTransactionalId as string,
        producerId: req.v3AndBelowProducerId as bigint,
        producerEpoch: req.v3AndBelowProducerEpoch as number,
        verifyOnly: false,
        topics: req.v3AndBelowTopics as TxnRequest["topics"],
      };
      return { throttleTimeMs: 0, resultsByTopicV3AndBelow: (await addOne(s, ctx, t)).topicResults };
    }
    if (refuseInterBroker(s, ctx, "AddPartitionsToTxn", { version: v })) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, resultsByTransaction: [] };
    }
    const results = await Promise.all((req.transactions as TxnRequest[]).map((t) => addOne(s, ctx, t)));
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, resultsByTransaction: results };
  },
};

async function addOne(s: BrokerServices, ctx: RequestContext, t: TxnRequest): Promise<Struct> {
  const v = ctx.version;
  const partitions = unique(t.topics);
  const answer = (codeOf: (tp: TopicPartition) => number) => ({ transactionalId: t.transactionalId, topicResults: byTopic(partitions, codeOf) });
  if (v < 4 && !allowed(s, ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, t.transactionalId)) {
    return answer(() => ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
  }
  const topics = partitions.map((p) => p.topic);
  const writable = v < 4 ? authorizedNames(s, ctx, AclOperation.WRITE, ResourceType.TOPIC, topics.filter((n) => !internalTopics.has(n))) : new Set(topics);
  const failed = new Map<TopicPartition, number>();
  for (const tp of partitions) {
    if (!writable.has(tp.topic)) failed.set(tp, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    else if (s.metadata.getPartition(tp.topic, tp.partition) === undefined) failed.set(tp, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  }
  if (failed.size > 0) return answer((tp) => failed.get(tp) ?? ErrorCode.OPERATION_NOT_ATTEMPTED);
  const c = s.txnCoordinator;
  if (c === undefined || c === null) return answer(() => ErrorCode.COORDINATOR_NOT_AVAILABLE);
  if (t.verifyOnly) {
    const codes = c.handleVerifyPartitionsInTransaction(t.transactionalId, t.producerId, t.producerEpoch, partitions);
    const byPartition = new Map(partitions.map((tp, i) => [tp, codes[i]]));
    return answer((tp) => byPartition.get(tp)!);
  }
  let code = await c.handleAddPartitions(t.transactionalId, t.producerId, t.producerEpoch, partitions);
  if (v < 2 && code === ErrorCode.PRODUCER_FENCED) code = ErrorCode.INVALID_PRODUCER_EPOCH;
  return answer(() => code);
}

/** The request's partitions, each once, in request order. */
function unique(topics: { name: string; partitions: number[] }[]): TopicPartition[] {
  const seen = new Set<string>();
  const out: TopicPartition[] = [];
  for (const t of topics) {
    for (const partition of t.partitions) {
      const k = `${partition}:${t.name}`;
      if (seen.has(k)) continue;
      seen.add(k);
      out.push({ topic: t.name, partition });
    }
  }
  return out;
}

function byTopic(partitions: TopicPartition[], codeOf: (tp: TopicPartition) => number): Struct[] {
  const topics = new Map<string, Struct[]>();
  for (const tp of partitions) {
    let list = topics.get(tp.topic);
    if (list === undefined) topics.set(tp.topic, (list = []));
    list.push({ partitionIndex: tp.partition, partitionErrorCode: codeOf(tp) });
  }
  return [...topics].map(([name, resultsByPartition]) => ({ name, resultsByPartition }));
}
