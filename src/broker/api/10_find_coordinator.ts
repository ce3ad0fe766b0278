// FindCoordinator (10), v0-4 (v4 batched). The coordinator of a group (key type 0) is the leader of
// its __consumer_offsets partition, that of a transactional id (key type 1) the leader of its
// __transaction_state partition; either topic is created on first use, as Kafka does. A group key
// needs DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED, no node), a transactional id DESCRIBE on
// it (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), as in KafkaApis 3.8; any other key type is INVALID_REQUEST.
import { AclOperation, ResourceType } from "../../authorizer/mod.ts";
import { FindCoordinatorApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { allowed } from "../authorize.ts";
import type { ApiHandler, RequestContext } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

const GROUP_KEY = 0;
const TRANSACTION_KEY = 1;

async function locate(s: BrokerServices, ctx: RequestContext, key: string, keyType: number) {
  const listener = ctx.conn.listener;
  const none = { key, nodeId: -1, host: "", port: -1, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: null as string | null };
  let topic: string;
  let partition: number;
  if (keyType === GROUP_KEY) {
    if (!allowed(s, ctx, AclOperation.DESCRIBE, ResourceType.GROUP, key)) return { ...none, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
    if (key === "") return { ...none, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: "empty group id" };
    if (!(await s.ensureOffsetsTopic())) return none;
    topic = "__consumer_offsets";
    partition = s.coordinator.manager.partitionFor(key);
  } else if (keyType === TRANSACTION_KEY) {
    if (!allowed(s, ctx, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key)) return { ...none, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED };
    if (key === "") return { ...none, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: "empty transactional id" };
    const c = s.txnCoordinator;
    if (c === undefined || c === null || s.ensureTransactionTopic === undefined) return none;
    if (!(await s.ensureTransactionTopic())) return none;
    topic = "__transaction_state";
    partition = c.partitionFor(key);
  } else {
    return { ...none, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `unknown coordinator key type ${keyType}` };
  }
  const leader = s.metadata.getPartition(topic, partition)?.leader ?? -1;
  // The coordinator's endpoint on the listener this client came in on.
  const node = s.metadata.endpointFor(leader, listener);
  if (node === undefined) return none;
  return { key, nodeId: node.id, host: node.host, port: node.port, errorCode: ErrorCode.NONE, errorMessage: null };
}

export const findCoordinatorHandler: ApiHandler<BrokerServices> = {
  api: FindCoordinatorApi,
  async handle(s, ctx, req) {
    if (ctx.version >= 4) {
      const keys = req.coordinatorKeys as string[];
      const coordinators = [];
      for (const k of keys) coordinators.push(await locate(s, ctx, k, req.keyType as number));
      return { throttleTimeMs: 0, coordinators };
    }
    const c = await locate(s, ctx, req.key as string, req.keyType as number);
    return { throttleTimeMs: 0, errorCode: c.errorCode, errorMessage: c.errorMessage, nodeId: c.nodeId, host: c.host, port: c.port };
  },
};
