// Produce (key 0), v0-9. v0-1 carry message sets of magic 0, v2 of magic 1 (timestamps), which
// the broker up-converts (message_set.ts); v3 is the first version carrying record batch v2
// (magic 2) and the transactional id; v9 is flexible. v1 adds throttleTimeMs to the response,
// v2 logAppendTimeMs. v10+ (leader hints for NOT_LEADER_OR_FOLLOWER) not supported.
import { api, message } from "../schema.ts";

export const ProduceApi = api(
  message(0, "ProduceRequest", "0-9", "9+", `
    transactionalId   string   v3+  nullable  default=null
    acks              int16              // 0, 1 or -1 (all in-sync replicas)
    timeoutMs         int32
    topicData         []
      name            string
      partitionData   []
        index         int32
        records       records  nullable  // record batches (v3+) or a legacy message set, as bytes
  `),
  message(0, "ProduceResponse", "0-9", "9+", `
    responses                  []
      name                     string
      partitionResponses       []
        index                  int32
        errorCode              int16
        baseOffset             int64
        logAppendTimeMs        int64   v2+  default=-1   // -1 unless the topic uses LogAppendTime
        logStartOffset         int64   v5+  default=-1
        recordErrors           []      v8+
          batchIndex           int32
          batchIndexErrorMessage  string  nullable  default=null
        errorMessage           string  v8+  nullable  default=null
    throttleTimeMs             int32   v1+  default=0
  `),
);
