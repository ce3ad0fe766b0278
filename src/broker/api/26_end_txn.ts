// EndTxn (26), v0-4: commit or abort. TRANSACTIONAL_ID WRITE (TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
// as KafkaApis 3.8; answered once PrepareCommit / PrepareAbort is in __transaction_state (markers
// follow); PRODUCER_FENCED is INVALID_PRODUCER_EPOCH below v2.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { EndTxnApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { allowed } from "../authorize.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const endTxnHandler: ApiHandler<BrokerServices> = {
  api: EndTxnApi,
  async handle(s, ctx, req) {
    const transactionalId = req.transactionalId as string;
    const answer = (errorCode: number) => ({ throttleTimeMs: 0, errorCode });
    if (!allowed(s, ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactionalId)) return answer(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    const c = s.txnCoordinator;
    if (c === undefined || c === null) return answer(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    const code = await c.handleEndTxn(transactionalId, req.producerId as bigint, req.producerEpoch as number, req.committed as boolean);
    return answer(ctx.version < 2 && code === ErrorCode.PRODUCER_FENCED ? ErrorCode.INVALID_PRODUCER_EPOCH : code);
  },
};
