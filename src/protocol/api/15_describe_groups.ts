// DescribeGroups (key 15), v0-5. v1 adds throttle time, v3 authorized operations, v4 the members'
// group instance ids, v5 is flexible.
import { api, message } from "../schema.ts";

export const DescribeGroupsApi = api(
  message(15, "DescribeGroupsRequest", "0-5", "5+", `
    groups                        []string
    includeAuthorizedOperations   bool    v3+
  `),
  message(15, "DescribeGroupsResponse", "0-5", "5+", `
    throttleTimeMs                int32   v1+
    groups                        []
      errorCode                   int16
      groupId                     string
      groupState                  string      // "Stable", "PreparingRebalance", ..., "Dead"
      protocolType                string
      protocolData                string      // the chosen protocol (assignor) name
      members                     []
        memberId                  string
        groupInstanceId           string  v4+  nullable  default=null
        clientId                  string
        clientHost                string
        memberMetadata            bytes
        memberAssignment          bytes
      authorizedOperations        int32   v3+  default=-2147483648
  `),
);
