// InitProducerId (22), v0-4: a new producer id for an idempotent producer (transactionalId null),
// epoch 0, from the broker's ProducerIdManager (coordinator/producer_id_manager.ts). As Kafka's
// TransactionCoordinator, a v3+ request naming its current id and epoch (KIP-360's epoch bump)
// also gets a new id: without a transactional id there is nothing to bump. Authorization as
// KafkaApis 3.8: a transactional id needs WRITE on it (TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
// without one, IDEMPOTENT_WRITE on the cluster or WRITE on any topic (CLUSTER_AUTHORIZATION_FAILED).
// A transactional id goes to the transaction coordinator (epoch bumps, fencing; NOT_COORDINATOR off
// its __transaction_state leader); PRODUCER_FENCED is INVALID_PRODUCER_EPOCH below v4, which older
// clients know. Ids out of reach (registry unavailable) are COORDINATOR_LOAD_IN_PROGRESS, retriable,
// as Kafka answers while it has no block.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { ProducerIdsUnavailable } from "../../coordinator/mod.ts";
import { InitProducerIdApi, type Struct } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { allowed, requestPrincipal } from "../authorize.ts";
import { clusterAllowed } from "../authorize_checks.ts";
import type { ApiHandler, RequestContext } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

const NO_PRODUCER_ID = -1n;
const NO_PRODUCER_EPOCH = -1;

function answer(errorCode: number, producerId = NO_PRODUCER_ID, producerEpoch = NO_PRODUCER_EPOCH): Struct {
  return { throttleTimeMs: 0, errorCode, producerId, producerEpoch };
}

function idempotentWriteAllowed(s: BrokerServices, ctx: RequestContext): boolean {
  if (s.authorizer === null || clusterAllowed(s, ctx, AclOperation.IDEMPOTENT_WRITE)) return true;
  return s.authorizer.authorizeByResourceType(requestPrincipal(ctx), AclOperation.WRITE, ResourceType.TOPIC);
}

export const initProducerIdHandler: ApiHandler<BrokerServices> = {
  api: InitProducerIdApi,
  async handle(s, ctx, req) {
    const transactionalId = req.transactionalId as string | null;
    if (transactionalId !== null) {
      if (!allowed(s, ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactionalId)) {
        return answer(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
      }
      if (transactionalId === "") return answer(ErrorCode.INVALID_REQUEST);
      if ((req.producerId === NO_PRODUCER_ID) !== (req.producerEpoch === NO_PRODUCER_EPOCH)) return answer(ErrorCode.INVALID_REQUEST);
      const c = s.txnCoordinator;
      if (c === undefined || c === null) return answer(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      const expected = req.producerId === NO_PRODUCER_ID ? null : { producerId: req.producerId as bigint, producerEpoch: req.producerEpoch as number };
      const r = await c.handleInitProducerId(transactionalId, req.transactionTimeoutMs as number, expected);
      const code = r.errorCode === ErrorCode.PRODUCER_FENCED && ctx.version < 4 ? ErrorCode.INVALID_PRODUCER_EPOCH : r.errorCode;
      return code === ErrorCode.NONE ? answer(code, r.producerId, r.producerEpoch) : answer(code);
    }
    if (!idempotentWriteAllowed(s, ctx)) return answer(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    // One of id and epoch without the other is malformed (KafkaApis checks it before the coordinator).
    if ((req.producerId === NO_PRODUCER_ID) !== (req.producerEpoch === NO_PRODUCER_EPOCH)) return answer(ErrorCode.INVALID_REQUEST);
    try {
      return answer(ErrorCode.NONE, await s.producerIds.generateProducerId(), 0);
    } catch (e) {
      if (e instanceof ProducerIdsUnavailable) return answer(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
      s.logger.error({ err: e instanceof Error ? e.message : String(e) }, "InitProducerId: no producer id");
      return answer(ErrorCode.UNKNOWN_SERVER_ERROR);
    }
  },
  errorResponse: (_req, _version, errorCode) => answer(errorCode),
};
