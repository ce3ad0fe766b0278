// DescribeCluster (60), v0-1, as Kafka 3.8's ZooKeeper-mode broker answers it (AuthHelper.
// computeDescribeClusterResponse): the cluster id, the live brokers' endpoints on the listener the
// request came in on, and the controller, or -1 when the controller is not among them. Only the
// broker endpoint type (1) is served: another type is MISMATCHED_ENDPOINT_TYPE (2, controllers)
// or UNSUPPORTED_ENDPOINT_TYPE, INVALID_REQUEST in v0 (which cannot name one). Any principal may
// ask; the cluster's authorized operations are given only when asked for, and are 0 without
// DESCRIBE on the cluster.
import { AclOperation, clusterResourceName, ResourceType } from "../../authorizer/mod.ts";
import { DescribeClusterApi } from "../../protocol/mod.ts";
import { ErrorCode } from "../../util/mod.ts";
import { AUTHORIZED_OPERATIONS_OMITTED, authorizedOperations, clusterAllowed } from "../authorize_checks.ts";
import type { ApiHandler } from "../dispatch.ts";
import type { BrokerServices } from "../services.ts";

/** Kafka's EndpointType ids. */
const EndpointType = { BROKER: 1, CONTROLLER: 2 } as const;

export const describeClusterHandler: ApiHandler<BrokerServices> = {
  api: DescribeClusterApi,
  handle(s, ctx, req) {
    const asked = req.endpointType as number;
    const refused = (code: number, message: string) => ({
      throttleTimeMs: 0,
      errorCode: ctx.version === 0 ? ErrorCode.INVALID_REQUEST : code,
      errorMessage: message,
      endpointType: EndpointType.BROKER,
      clusterId: "",
      controllerId: -1,
      brokers: [],
      clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
    });
    if (asked === EndpointType.CONTROLLER) {
      return refused(ErrorCode.MISMATCHED_ENDPOINT_TYPE, "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER");
    }
    if (asked !== EndpointType.BROKER) return refused(ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, `Unsupported endpoint type ${asked}`);
    let clusterAuthorizedOperations = AUTHORIZED_OPERATIONS_OMITTED;
    if (req.includeClusterAuthorizedOperations as boolean) {
      clusterAuthorizedOperations = clusterAllowed(s, ctx, AclOperation.DESCRIBE)
        ? authorizedOperations(s, ctx, ResourceType.CLUSTER, clusterResourceName)
        : 0;
    }
    const brokers = s.metadata.brokersOn(ctx.conn.listener).map((b) => ({ brokerId: b.id, host: b.host, port: b.port, rack: b.rack }));
    const controllerId = brokers.some((b) => b.brokerId === s.metadata.controllerId) ? s.metadata.controllerId : -1;
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      endpointType: EndpointType.BROKER,
      clusterId: s.metadata.clusterId,
      controllerId,
      brokers,
      clusterAuthorizedOperations,
    };
  },
};
