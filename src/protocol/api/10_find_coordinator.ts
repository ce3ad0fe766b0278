// FindCoordinator (key 10), v0-4. v1 adds the key type (0 group, 1 transaction) and an error
// message, v3 is flexible, v4 batches several keys (coordinatorKeys in, coordinators out; the
// single-key fields are gone from v4).
import { api, message } from "../schema.ts";

export const FindCoordinatorApi = api(
  message(10, "FindCoordinatorRequest", "0-4", "3+", `
    key                   string  v0-3
    keyType               int8    v1+  default=0     // 0 group, 1 transaction
    coordinatorKeys       []string  v4+
  `),
  message(10, "FindCoordinatorResponse", "0-4", "3+", `
    throttleTimeMs        int32   v1+
    errorCode             int16   v0-3
    errorMessage          string  v1-3  nullable
    nodeId                int32   v0-3
    host                  string  v0-3
    port                  int32   v0-3
    coordinators          []      v4+
      key                 string
      nodeId              int32
      host                string
      port                int32
      errorCode           int16
      errorMessage        string  nullable
  `),
);
