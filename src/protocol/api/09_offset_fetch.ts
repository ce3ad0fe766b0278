// OffsetFetch (key 9), v0-9. v2 lets topics be null (every committed offset of the group) and adds
// a top-level error code, v5 the committed leader epoch, v6 is flexible, v7 requireStable, v8
// batches several groups in one request (the single-group fields are gone from v8), v9 (KIP-848)
// adds member id and epoch per group.
import { api, message } from "../schema.ts";

export const OffsetFetchApi = api(
  message(9, "OffsetFetchRequest", "0-9", "6+", `
    groupId                     string  v0-7
    topics                      []      v0-7  nullable v2-7   // null: every topic
      name                      string
      partitionIndexes          []int32
    groups                      []      v8+
      groupId                   string
      memberId                  string  v9+  nullable  default=null
      memberEpoch               int32   v9+  default=-1
      topics                    []      nullable               // null: every topic
        name                    string
        partitionIndexes        []int32
    requireStable               bool    v7+  default=false
  `),
  message(9, "OffsetFetchResponse", "0-9", "6+", `
    throttleTimeMs              int32   v3+
    topics                      []      v0-7
      name                      string
      partitions                []
        partitionIndex          int32
        committedOffset         int64
        committedLeaderEpoch    int32   v5-7  default=-1
        metadata                string  nullable
        errorCode               int16
    errorCode                   int16   v2-7  default=0
    groups                      []      v8+
      groupId                   string
      topics                    []
        name                    string
        partitions              []
          partitionIndex        int32
          committedOffset       int64
          committedLeaderEpoch  int32   default=-1
          metadata              string  nullable
          errorCode             int16
      errorCode                 int16   default=0
  `),
);
