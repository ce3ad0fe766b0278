// ListTransactions (66), v0-1: the ids this coordinator holds, filtered by state, producer id and
// (v1) duration, keeping only those the principal may DESCRIBE (TRANSACTIONAL_ID), as KafkaApis 3.8.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { ListTransactionsApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { allowed } from "../authorize.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const listTransactionsHandler: ApiHandler<BrokerServices> = {
  api: ListTransactionsApi,
  handle(s, ctx, req) {
    const c = s.txnCoordinator;
    if (c === undefined || c === null) return { throttleTimeMs: 0, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, unknownStateFilters: [], transactionStates: [] };
    const r = c.list(new Set(req.producerIdFilters as bigint[]), req.stateFilters as string[], Number(req.durationFilter as bigint));
    const transactionStates = r.txns
      .filter((t) => allowed(s, ctx, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, t.transactionalId))
      .map((t) => ({ transactionalId: t.transactionalId, producerId: t.producerId, transactionState: t.state }));
    return { throttleTimeMs: 0, errorCode: r.errorCode, unknownStateFilters: r.unknownStateFilters, transactionStates };
  },
};
