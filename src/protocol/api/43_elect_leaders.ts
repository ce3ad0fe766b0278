// ElectLeaders (key 43), v0-2: asks the controller to elect leaders for some partitions (null:
// every partition). v1 adds the election type (0 preferred replica, 1 unclean: the first live
// replica when no ISR member is live, KIP-460) and a top-level error code, v2 is flexible.
import { api, message } from "../schema.ts";

export const ElectLeadersApi = api(
  message(43, "ElectLeadersRequest", "0-2", "2+", `
    electionType              int8    v1+
    topicPartitions           []      nullable            // null: every partition
      topic                   string
      partitions              []int32
    timeoutMs                 int32   default=60000
  `),
  message(43, "ElectLeadersResponse", "0-2", "2+", `
    throttleTimeMs            int32
    errorCode                 int16   v1+
    replicaElectionResults    []
      topic                   string
      partitionResult         []
        partitionId           int32
        errorCode             int16
        errorMessage          string  nullable
  `),
);
