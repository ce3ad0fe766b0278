// TxnOffsetCommit (28), v0-4: a transactional producer's consumer offsets, held by the group
// coordinator until the transaction's marker (coordinator/txn_offsets.ts). As KafkaApis 3.8:
// TRANSACTIONAL_ID WRITE (TRANSACTIONAL_ID_AUTHORIZATION_FAILED on every partition), then GROUP
// READ (GROUP_AUTHORIZATION_FAILED), then READ per topic (TOPIC_AUTHORIZATION_FAILED) and topics
// the metadata does not know (UNKNOWN_TOPIC_OR_PARTITION); the rest goes to the coordinator, once
// the transaction coordinator confirmed the group's __consumer_offsets partition is in the
// producer's transaction (AddOffsetsToTxn; KIP-890's verification, as Kafka 3.8 does for these
// commits): INVALID_TXN_STATE when it is not, INVALID_PRODUCER_EPOCH when the producer is fenced.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { TxnOffsetCommitApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { allowed } from "../authorize.ts";
import { authorizedNames } from "../authorize_checks.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";
import { txnOffsetCommitCode, verifyTransactionalProduce } from "../txn_verify.ts";

type Topics = { name: string; partitions: { partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; committedMetadata: string | null }[] }[];

function answer(topics: Topics, codeOf: (topic: string, partition: number) => number) {
  return {
    throttleTimeMs: 0,
    topics: topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: codeOf(t.name, p.partitionIndex) })) })),
  };
}

export const txnOffsetCommitHandler: ApiHandler<BrokerServices> = {
  api: TxnOffsetCommitApi,
  async handle(s, ctx, req) {
    const topics = req.topics as Topics;
    const groupId = req.groupId as string;
    if (!allowed(s, ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactionalId as string)) {
      return answer(topics, () => ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    }
    if (!allowed(s, ctx, AclOperation.READ, ResourceType.GROUP, groupId)) return answer(topics, () => ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const readable = authorizedNames(s, ctx, AclOperation.READ, ResourceType.TOPIC, topics.map((t) => t.name));
    const codes = new Map<string, number>();
    const key = (topic: string, partition: number) => `${partition}:${topic}`;
    const offsets = [];
    for (const t of topics) {
      const known = s.metadata.getTopic(t.name)?.partitions;
      for (const p of t.partitions) {
        const refused = !readable.has(t.name)
          ? ErrorCode.TOPIC_AUTHORIZATION_FAILED
          : known?.some((x) => x.partition === p.partitionIndex) ? null : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        if (refused !== null) codes.set(key(t.name, p.partitionIndex), refused);
        else offsets.push({ topic: t.name, partition: p.partitionIndex, offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata: p.committedMetadata });
      }
    }
    if (offsets.length > 0 && s.coordinator.manager.coordinatorError(groupId) === ErrorCode.NONE) {
      const producer = { producerId: req.producerId as bigint, producerEpoch: req.producerEpoch as number };
      const partition = s.coordinator.manager.partitionFor(groupId);
      const verification = await verifyTransactionalProduce(s, s.txnVerifyConnections ?? null, req.transactionalId as string, [{ topic: "__consumer_offsets", partition, producer }]);
      // No await between the guard's recheck and the commit's append (commit() appends before its first await).
      const code = txnOffsetCommitCode(verification.recheck().get(`${partition}:__consumer_offsets`) ?? ErrorCode.NONE);
      if (code !== ErrorCode.NONE) {
        for (const o of offsets) codes.set(key(o.topic, o.partition), code);
        offsets.length = 0;
      }
    }
    if (offsets.length > 0) {
      const results = await s.coordinator.txnOffsets.commit({
        transactionalId: req.transactionalId as string,
        groupId,
        producerId: req.producerId as bigint,
        producerEpoch: req.producerEpoch as number,
        generationId: req.generationId as number,
        memberId: req.memberId as string,
        groupInstanceId: req.groupInstanceId as string | null,
        offsets,
      });
      for (const r of results) codes.set(key(r.topic, r.partition), r.errorCode);
    }
    return answer(topics, (t, p) => codes.get(key(t, p)) ?? ErrorCode.NONE);
  },
  errorResponse: (req, _version, errorCode) => answer(req.topics as Topics, () => errorCode),
};
