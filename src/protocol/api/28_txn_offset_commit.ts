// TxnOffsetCommit (key 28), v0-4. A transactional producer's consumer offsets, made visible when
// its transaction commits. v2 adds the committed leader epoch, v3 is flexible and adds the
// member's generation, id and instance id (KIP-447: the coordinator fences zombie members), v4
// adds TRANSACTION_ABORTABLE to the errors answered.
import { api, message } from "../schema.ts";

export const TxnOffsetCommitApi = api(
  message(28, "TxnOffsetCommitRequest", "0-4", "3+", `
    transactionalId         string
    groupId                 string
    producerId              int64
    producerEpoch           int16
    generationId            int32   v3+  default=-1
    memberId                string  v3+  default=""
    groupInstanceId         string  v3+  nullable  default=null
    topics                  []
      name                  string
      partitions            []
        partitionIndex      int32
        committedOffset     int64
        committedLeaderEpoch int32  v2+  default=-1
        committedMetadata   string  nullable
  `),
  message(28, "TxnOffsetCommitResponse", "0-4", "3+", `
    throttleTimeMs          int32
    topics                  []
      name                  string
      partitions            []
        partitionIndex      int32
        errorCode           int16
  `),
);
