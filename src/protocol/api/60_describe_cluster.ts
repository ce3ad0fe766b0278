// DescribeCluster (key 60), v0-1, flexible in every version (KIP-700): the cluster id, the
// controller and the live brokers, as Metadata gives them without topics, with the cluster's
// authorized operations when asked. v1 (KIP-919) names the endpoint type asked for: 1 brokers,
// 2 controllers (a KRaft controller's; a broker answers only 1).
import { api, message } from "../schema.ts";

export const DescribeClusterApi = api(
  message(60, "DescribeClusterRequest", "0-1", "0+", `
    includeClusterAuthorizedOperations  bool
    endpointType                        int8    v1+  default=1
  `),
  message(60, "DescribeClusterResponse", "0-1", "0+", `
    throttleTimeMs                      int32
    errorCode                           int16
    errorMessage                        string  nullable  default=null
    endpointType                        int8    v1+  default=1
    clusterId                           string
    controllerId                        int32   default=-1
    brokers                             []
      brokerId                          int32
      host                              string
      port                              int32
      rack                              string  nullable  default=null
    clusterAuthorizedOperations         int32   default=-2147483648
  `),
);
