// JoinGroup (key 11), v0-9. v1 adds the rebalance timeout, v4 makes a new member rejoin with the
// id it is given (MEMBER_ID_REQUIRED), v5 static membership (group instance id), v6 is flexible,
// v7 answers the protocol type, v8 carries a join reason, v9 skipAssignment. Protocol metadata
// (the consumer's subscription) is opaque bytes here; see internal/consumer_protocol.ts.
import { api, message } from "../schema.ts";

export const JoinGroupApi = api(
  message(11, "JoinGroupRequest", "0-9", "6+", `
    groupId               string
    sessionTimeoutMs      int32
    rebalanceTimeoutMs    int32   v1+  default=-1
    memberId              string                      // "" on the first join
    groupInstanceId       string  v5+  nullable  default=null
    protocolType          string                      // "consumer" for Kafka consumers
    protocols             []
      name                string                      // an assignor: "range", "cooperative-sticky", ...
      metadata            bytes
    reason                string  v8+  nullable  default=null
  `),
  message(11, "JoinGroupResponse", "0-9", "6+", `
    throttleTimeMs        int32   v2+
    errorCode             int16
    generationId          int32   default=-1
    protocolType          string  v7+  nullable  default=null
    protocolName          string  nullable v7+
    leader                string
    skipAssignment        bool    v9+  default=false
    memberId              string
    members               []                          // filled for the leader only
      memberId            string
      groupInstanceId     string  v5+  nullable  default=null
      metadata            bytes
  `),
);
