// OffsetCommit (key 8), v0-9. v1 adds generation and member id (and, in v1 only, a per-partition
// commit timestamp), v2-4 a retention time, v6 the committed leader epoch, v7 the group instance
// id (static membership), v8 is flexible. v9 (KIP-848) reads generationIdOrMemberEpoch as a
// member epoch for consumer-protocol groups; the wire is the same.
import { api, message } from "../schema.ts";

export const OffsetCommitApi = api(
  message(8, "OffsetCommitRequest", "0-9", "8+", `
    groupId                     string
    generationIdOrMemberEpoch   int32   v1+  default=-1
    memberId                    string  v1+
    groupInstanceId             string  v7+  nullable  default=null
    retentionTimeMs             int64   v2-4  default=-1     // -1: the broker's offsets.retention.minutes
    topics                      []
      name                      string
      partitions                []
        partitionIndex          int32
        committedOffset         int64
        committedLeaderEpoch    int32   v6+  default=-1
        commitTimestamp         int64   v1   default=-1
        committedMetadata       string  nullable
  `),
  message(8, "OffsetCommitResponse", "0-9", "8+", `
    throttleTimeMs              int32   v3+
    topics                      []
      name                      string
      partitions                []
        partitionIndex          int32
        errorCode               int16
  `),
);
