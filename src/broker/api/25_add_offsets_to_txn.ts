// AddOffsetsToTxn (25), v0-4: the group's __consumer_offsets partition joins the transaction.
// TRANSACTIONAL_ID WRITE (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then GROUP READ
// (GROUP_AUTHORIZATION_FAILED), as KafkaApis 3.8; PRODUCER_FENCED is INVALID_PRODUCER_EPOCH below v2.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { AddOffsetsToTxnApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { allowed } from "../authorize.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

export const addOffsetsToTxnHandler: ApiHandler<BrokerServices> = {
  api: AddOffsetsToTxnApi,
  async handle(s, ctx, req) {
    const transactionalId = req.transactionalId as string;
    const groupId = req.groupId as string;
    const answer = (errorCode: number) => ({ throttleTimeMs: 0, errorCode });
    if (!allowed(s, ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactionalId)) return answer(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    if (!allowed(s, ctx, AclOperation.READ, ResourceType.GROUP, groupId)) return answer(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const c = s.txnCoordinator;
    if (c === undefined || c === null) return answer(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    const code = await c.handleAddOffsets(transactionalId, req.producerId as bigint, req.producerEpoch as number, groupId);
    return answer(ctx.version < 2 && code === ErrorCode.PRODUCER_FENCED ? ErrorCode.INVALID_PRODUCER_EPOCH : code);
  },
};
