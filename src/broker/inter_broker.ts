// Who may send the inter-broker requests: LeaderAndIsr (4), StopReplica (5), UpdateMetadata (6),
// ControlledShutdown (7) and AlterPartition (56), a Fetch with a replica id (a follower) and OffsetForLeaderEpoch with
// one. These change what a broker holds (StopReplica deletes logs) or move its high watermark, so:
//
// - In single-node mode (no zookeeper.connect: the embedded registry) nobody may, authorizer or
//   not: the controller reaches its own broker in process (local_channel.ts) and there is no
//   other broker, so no such request is ever genuine (a ControlledShutdown with the node's real
//   epoch from a principal allowed CLUSTER_ACTION would leave the node unable to lead anything).
// - With an authorizer (authorizer.class.name), the principal needs CLUSTER_ACTION on the
//   cluster, as Kafka's KafkaApis asks.
// - Without one, strand goes past Kafka (which then allows everything): only connections on the
//   inter-broker listener (inter.broker.listener.name / security.inter.broker.protocol).
//
// A refusal is answered as Kafka answers a principal without CLUSTER_ACTION (each handler gives
// the shape: CLUSTER_AUTHORIZATION_FAILED for the control requests, TOPIC_AUTHORIZATION_FAILED per
// partition for a follower's Fetch and OffsetForLeaderEpoch), and logged at warn naming the
// API, the remote address and the reason (one line per interval at most, with a count). The check is synchronous (allowed() answers from
// memory), so nothing changes between it and what it guards.
//
// The epochs are checked after this, with or without an authorizer (control_fence.ts).
import { AclOperation, clusterResourceName, ResourceType } from "../authorizer/mod.ts";
import { allowed } from "./authorize.ts";
import type { RequestContext } from "./dispatch.ts";
import { logRefusal } from "./refusal_log.ts";
import type { BrokerServices } from "./services.ts";

/** Why this connection may not send an inter-broker request, or null when it may. */
export function interBrokerRefusal(s: BrokerServices, ctx: RequestContext): string | null {
  if (s.config.zookeeperConnect === null) return "single-node mode (no zookeeper.connect): no other broker or controller exists";
  if (s.authorizer !== null) {
    return allowed(s, ctx, AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, clusterResourceName)
      ? null
      : `${ctx.conn.principal} has no CLUSTER_ACTION on the cluster`;
  }
  const inter = s.config.security.interBrokerListener;
  if (ctx.conn.listener !== inter) return `listener ${ctx.conn.listener} is not the inter-broker listener ${inter}`;
  return null;
}

/**
 * True (after logging why) when the request must be refused; `api` names it in the log line. One
 * warn line per refusalLogIntervalMs at most, counting those not said since.
 */
export function refuseInterBroker(s: BrokerServices, ctx: RequestContext, api: string, fields: Record<string, unknown> = {}): boolean {
  const reason = interBrokerRefusal(s, ctx);
  if (reason === null) return false;
  logRefusal(s.logger, "inter-broker", s.clock.monotonicMs(), ctx.conn.remote, (notSaid) => {
    s.logger.warn({ api, remote: ctx.conn.remote, listener: ctx.conn.listener, principal: ctx.conn.principal, reason, ...notSaid, ...fields }, `${api} refused: not from a broker`);
  });
  return true;
}
