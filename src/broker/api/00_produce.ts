// Produce (0), v0-9. Each partition's record set is validated (header, CRC32C, size, and every
// record: protocol/record_validator.ts, against the topic's config) and appended as bytes by the
// partition leader; per-record problems come back as recordErrors (v8+), and logAppendTimeMs is
// the leader's stamp when the topic uses message.timestamp.type=LogAppendTime; in v0-2 a legacy message set (magic 0/1) is first
// up-converted into one record batch v2 (protocol/message_set.ts), the only format stored.
// acks: 0 (no response; a failure closes the connection, as Kafka does, so the client refreshes
// metadata), 1 (answered once the leader has appended), or -1 (all: refused with
// NOT_ENOUGH_REPLICAS before appending when the ISR is smaller than min.insync.replicas; answered
// once the high watermark covers the batch, or REQUEST_TIMED_OUT after the request's timeoutMs —
// then the batch may or may not be committed, as in Kafka).
// Transactional batches (KafkaApis 3.8): the request needs a transactional id with WRITE on it
// (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED everywhere); a producer's first batch on a partition
// in a transaction is verified with the coordinator first (KIP-890, txn_verify.ts).
import { ProduceApi, produceRecordSetError } from "../../protocol/mod.ts";
import type { Struct } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { internalTopics } from "../../controller/mod.ts";
import type { ProduceResult } from "../../replication/mod.ts";
import { authorizedNames } from "../authorize_checks.ts";
import { allowed } from "../authorize.ts";
import { type PartitionToVerify, transactionalProducerOf, type Verification, verifyTransactionalProduce } from "../txn_verify.ts";
import type { ApiHandler } from "../dispatch.ts";
import { type BrokerServices, CloseConnection } from "../services.ts";

type Refusal = { errorCode: number; errorMessage: string | null; baseOffset: number; logStartOffset: number };

interface PartitionData {
  index: number;
  records: Uint8Array | null;
}
interface TopicData {
  name: string;
  partitionData: PartitionData[];
}

export const produceHandler: ApiHandler<BrokerServices> = {
  api: ProduceApi,
  async handle(s, ctx, req) {
    const acks = req.acks as number;
    const topics = req.topicData as TopicData[];
    const badAcks = acks !== 0 && acks !== 1 && acks !== -1;
    let failed = false;
    const waiting: { topic: string; partition: number; requiredOffset: number }[] = [];
    // As Kafka: WRITE on each topic, checked before anything else about it (so an unauthorized
    // topic does not reveal whether it exists).
    const writable = authorizedNames(s, ctx, AclOperation.WRITE, ResourceType.TOPIC, topics.map((t) => t.name));
    // Kafka's ProduceRequest.validateRecords, before the transactional verification (which, like
    // the producer state, takes one batch per partition for granted) and before any append.
    const invalid = invalidRecordSets(topics, ctx.version);
    const verification = await verifyTransactions(s, ctx, req.transactionalId as string | null, topics, writable, invalid);
    // No await from here to the appends: the verification's guard holds until they are done.
    const verified = verification === null ? null : verification instanceof Map ? verification : verification.recheck();
    const responses = topics.map((t) => ({
      name: t.name,
      partitionResponses: t.partitionData.map((p): Struct => {
        // Internal topics (__consumer_offsets) take only their coordinator's writes, which do not
        // come through here: a client's produce is INVALID_TOPIC_EXCEPTION, as Kafka answers.
        const r: Refusal & Partial<ProduceResult> = !writable.has(t.name)
          ? { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: null, baseOffset: -1, logStartOffset: -1 }
          : badAcks
          ? { errorCode: ErrorCode.INVALID_REQUIRED_ACKS, errorMessage: `acks=${acks}`, baseOffset: -1, logStartOffset: -1 }
          : internalTopics.has(t.name)
          ? { errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: `cannot append to internal topic ${t.name}`, baseOffset: -1, logStartOffset: -1 }
          // One batch v2 per partition in v3+ (and one per magic 2 set always); zstd from v7 (KIP-110).
          // Kafka looks at the records only of a partition it knows.
          : invalid?.has(`${p.index}:${t.name}`)
          ? (knownPartition(s, t.name, p.index)
            ? { ...invalid.get(`${p.index}:${t.name}`)!, baseOffset: -1, logStartOffset: -1 }
            : { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null, baseOffset: -1, logStartOffset: -1 })
          : verified !== null && (verified.get(`${p.index}:${t.name}`) ?? ErrorCode.NONE) !== ErrorCode.NONE
          ? { errorCode: verified.get(`${p.index}:${t.name}`)!, errorMessage: unverifiedMessage(verification!, verified.get(`${p.index}:${t.name}`)!), baseOffset: -1, logStartOffset: -1 }
          : s.replicaManager.appendToPartition(t.name, p.index, p.records, s.config.messageMaxBytes, ctx.version < 3, acks);
        if (acks === -1 && r.errorCode === ErrorCode.NONE) waiting.push({ topic: t.name, partition: p.index, requiredOffset: r.nextOffset! });
        if (r.errorCode !== ErrorCode.NONE) {
          failed = true;
          s.logger.debug({ topic: t.name, partition: p.index, errorCode: r.errorCode, reason: r.errorMessage }, "produce refused");
        }
        return {
          index: p.index,
          errorCode: r.errorCode,
          baseOffset: BigInt(r.baseOffset),
          logAppendTimeMs: BigInt(r.logAppendTimeMs ?? -1),
          logStartOffset: BigInt(r.logStartOffset),
          recordErrors: r.recordErrors?.map((e) => ({ batchIndex: e.batchIndex, batchIndexErrorMessage: e.batchIndexErrorMessage })) ?? [],
          errorMessage: r.errorMessage,
        };
      }),
    }));
    if (acks === 0) {
      if (failed) throw new CloseConnection("acks=0 produce failed");
      return null;
    }
    if (waiting.length > 0) {
      const parkedFromMs = s.clock.monotonicMs();
      await awaitAcks(s, responses, waiting, Math.max(0, req.timeoutMs as number));
      ctx.parkedMs += s.clock.monotonicMs() - parkedFromMs;
    }
    return { responses, throttleTimeMs: 0 };
  },
};

/**
 * null when no partition carries a transactional batch (the common case: nothing is allocated);
 * else a code per partition: TRANSACTIONAL_ID_AUTHORIZATION_FAILED for all without WRITE on the
 * transactional id, or the coordinator's verification of each transactional partition.
 */
async function verifyTransactions(
  s: BrokerServices,
  ctx: Parameters<ApiHandler<BrokerServices>["handle"]>[1],
  transactionalId: string | null,
  topics: TopicData[],
  writable: Set<string>,
  invalid: Map<string, InvalidSet> | null,
): Promise<Map<string, number> | Verification | null> {
  let parts: PartitionToVerify[] | null = null;
  for (const t of topics) {
    if (!writable.has(t.name) || internalTopics.has(t.name)) continue;
    for (const p of t.partitionData) {
      if (invalid?.has(`${p.index}:${t.name}`)) continue;
      const producer = transactionalProducerOf(p.records);
      if (producer !== null) (parts ??= []).push({ topic: t.name, partition: p.index, producer });
    }
  }
  if (parts === null) return null;
  const all = (code: number) => new Map(topics.flatMap((t) => t.partitionData.map((p) => [`${p.index}:${t.name}`, code] as const)));
  if (transactionalId === null || !allowed(s, ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactionalId)) {
    return all(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
  }
  // One transactional id is one producer: Kafka's ReplicaManager refuses the whole request
  // ("Transactional records contained more than one producer ID"), and the coordinator is asked
  // about one producer only.
  const first = parts[0].producer;
  if (parts.some((p) => p.producer.producerId !== first.producerId || p.producer.producerEpoch !== first.producerEpoch)) {
    return all(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  }
  return await verifyTransactionalProduce(s, s.txnVerifyConnections ?? null, transactionalId, parts);
}

type InvalidSet = { errorCode: number; errorMessage: string };

function knownPartition(s: BrokerServices, topic: string, partition: number): boolean {
  return s.metadata.getPartition(topic, partition) !== undefined;
}

/** The partitions whose record sets Kafka refuses before looking further; null (nothing allocated) when none. */
function invalidRecordSets(topics: TopicData[], version: number): Map<string, InvalidSet> | null {
  let out: Map<string, InvalidSet> | null = null;
  for (const t of topics) {
    for (const p of t.partitionData) {
      const e = produceRecordSetError(p.records, version);
      if (e !== null) (out ??= new Map()).set(`${p.index}:${t.name}`, { errorCode: e.errorCode, errorMessage: e.message });
    }
  }
  return out;
}

/** Why a partition's transactional batch was refused before its append. */
function unverifiedMessage(verification: Map<string, number> | Verification, code: number): string {
  if (code === ErrorCode.INVALID_PRODUCER_ID_MAPPING) return "Transactional records contained more than one producer ID";
  return verification instanceof Map
    ? "transactional records need the request's transactional id, with WRITE on it"
    : "the partition's transaction could not be verified with its coordinator";
}

/** acks=all: holds the answer until the ISR has every appended batch (or the timeout passes). */
async function awaitAcks(
  s: BrokerServices,
  responses: { name: string; partitionResponses: Struct[] }[],
  waiting: { topic: string; partition: number; requiredOffset: number }[],
  timeoutMs: number,
): Promise<void> {
  const codes = await s.replicaManager.awaitReplication(waiting, timeoutMs);
  waiting.forEach((w, i) => {
    if (codes[i] === ErrorCode.NONE) return;
    const r = responses.find((t) => t.name === w.topic)?.partitionResponses.find((p) => p.index === w.partition);
    if (r === undefined) return;
    r.errorCode = codes[i];
    r.errorMessage = codes[i] === ErrorCode.REQUEST_TIMED_OUT
      ? `not replicated to the in-sync replicas within ${timeoutMs} ms`
      : `replication of offset ${w.requiredOffset - 1} failed`;
    s.logger.debug({ topic: w.topic, partition: w.partition, errorCode: codes[i] }, "acks=all produce not acknowledged");
  });
}
