// ListOffsets (key 2), v1-7. v1 answers one offset per partition (v0's list is not supported),
// v2 adds isolation level, v4 leader epochs, v6 is flexible. v8 (tiered storage) not supported.
// Timestamp -1 asks for the log end offset, -2 for the log start offset, -3 for the max timestamp.
import { api, message } from "../schema.ts";

export const ListOffsetsApi = api(
  message(2, "ListOffsetsRequest", "1-7", "6+", `
    replicaId               int32
    isolationLevel          int8    v2+
    topics                  []
      name                  string
      partitions            []
        partitionIndex      int32
        currentLeaderEpoch  int32   v4+  default=-1
        timestamp           int64
  `),
  message(2, "ListOffsetsResponse", "1-7", "6+", `
    throttleTimeMs          int32   v2+
    topics                  []
      name                  string
      partitions            []
        partitionIndex      int32
        errorCode           int16
        timestamp           int64   default=-1
        offset              int64   default=-1
        leaderEpoch         int32   v4+  default=-1
  `),
);
