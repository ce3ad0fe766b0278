// Heartbeat (key 12), v0-4. v1 adds throttle time, v3 the group instance id, v4 is flexible.
import { api, message } from "../schema.ts";

export const HeartbeatApi = api(
  message(12, "HeartbeatRequest", "0-4", "4+", `
    groupId               string
    generationId          int32
    memberId              string
    groupInstanceId       string  v3+  nullable  default=null
  `),
  message(12, "HeartbeatResponse", "0-4", "4+", `
    throttleTimeMs        int32   v1+
    errorCode             int16
  `),
);
