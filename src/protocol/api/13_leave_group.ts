// LeaveGroup (key 13), v0-5. v1 adds throttle time, v3 batches members (with group instance ids;
// the single memberId is gone from v3), v4 is flexible, v5 carries a leave reason.
import { api, message } from "../schema.ts";

export const LeaveGroupApi = api(
  message(13, "LeaveGroupRequest", "0-5", "4+", `
    groupId               string
    memberId              string  v0-2
    members               []      v3+
      memberId            string
      groupInstanceId     string  nullable  default=null
      reason              string  v5+  nullable  default=null
  `),
  message(13, "LeaveGroupResponse", "0-5", "4+", `
    throttleTimeMs        int32   v1+
    errorCode             int16
    members               []      v3+
      memberId            string
      groupInstanceId     string  nullable
      errorCode           int16
  `),
);
