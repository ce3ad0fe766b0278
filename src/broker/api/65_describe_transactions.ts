// DescribeTransactions (65), v0: each id needs TRANSACTIONAL_ID DESCRIBE
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), and only topics the principal may DESCRIBE are shown,
// as KafkaApis 3.8. Unknown ids: TRANSACTIONAL_ID_NOT_FOUND; another broker's: NOT_COORDINATOR.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { DescribeTransactionsApi, type Struct } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { allowed } from "../authorize.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const describeTransactionsHandler: ApiHandler<BrokerServices> = {
  api: DescribeTransactionsApi,
  handle(s, ctx, req) {
    const transactionStates = (req.transactionalIds as string[]).map((transactionalId): Struct => {
      const only = (errorCode: number) => ({ errorCode, transactionalId, transactionState: "", transactionTimeoutMs: 0, transactionStartTimeMs: 0n, producerId: 0n, producerEpoch: 0, topics: [] });
      if (!allowed(s, ctx, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, transactionalId)) return only(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
      const c = s.txnCoordinator;
      if (c === undefined || c === null) return only(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      const d = c.describe(transactionalId);
      if (d.txn === null) return only(d.errorCode);
      const topics = new Map<string, number[]>();
      for (const p of d.txn.partitions) {
        if (!allowed(s, ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, p.topic)) continue;
        let list = topics.get(p.topic);
        if (list === undefined) topics.set(p.topic, (list = []));
        list.push(p.partition);
      }
      return {
        errorCode: ErrorCode.NONE,
        transactionalId,
        transactionState: d.txn.state,
        transactionTimeoutMs: d.txn.txnTimeoutMs,
        transactionStartTimeMs: BigInt(d.txn.txnStartTimestampMs),
        producerId: d.txn.producerId,
        producerEpoch: d.txn.producerEpoch,
        topics: [...topics].map(([topic, partitions]) => ({ topic, partitions })),
      };
    });
    return { throttleTimeMs: 0, transactionStates };
  },
};
