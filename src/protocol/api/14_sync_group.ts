// SyncGroup (key 14), v0-5. v1 adds throttle time, v3 the group instance id, v4 is flexible, v5
// protocol type and name (checked against the group's). Assignments are opaque bytes here; see
// internal/consumer_protocol.ts.
import { api, message } from "../schema.ts";

export const SyncGroupApi = api(
  message(14, "SyncGroupRequest", "0-5", "4+", `
    groupId               string
    generationId          int32
    memberId              string
    groupInstanceId       string  v3+  nullable  default=null
    protocolType          string  v5+  nullable  default=null
    protocolName          string  v5+  nullable  default=null
    assignments           []                          // from the leader only
      memberId            string
      assignment          bytes
  `),
  message(14, "SyncGroupResponse", "0-5", "4+", `
    throttleTimeMs        int32   v1+
    errorCode             int16
    protocolType          string  v5+  nullable  default=null
    protocolName          string  v5+  nullable  default=null
    assignment            bytes
  `),
);
