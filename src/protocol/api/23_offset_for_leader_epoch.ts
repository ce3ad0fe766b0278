// OffsetForLeaderEpoch (key 23), v0-4: the end offset of a leader epoch in the leader's log (the
// start offset of the next larger epoch, or the log end offset for the latest): a follower that
// became one truncates its log to it (KIP-101), and a consumer checks for log truncation after a
// leader change (KIP-320). v1 answers with the epoch found, v2 adds currentLeaderEpoch (fencing,
// KIP-320) and throttleTimeMs, v3 the requesting replica's id (-2 for consumers), v4 is flexible.
import { api, message } from "../schema.ts";

export const OffsetForLeaderEpochApi = api(
  message(23, "OffsetForLeaderEpochRequest", "0-4", "4+", `
    replicaId                 int32   v3+  default=-2
    topics                    []
      topic                   string
      partitions              []
        partition             int32
        currentLeaderEpoch    int32   v2+  default=-1
        leaderEpoch           int32                       // the epoch to find the end offset of
  `),
  message(23, "OffsetForLeaderEpochResponse", "0-4", "4+", `
    throttleTimeMs            int32   v2+
    topics                    []
      topic                   string
      partitions              []
        errorCode             int16
        partition             int32
        leaderEpoch           int32   v1+  default=-1
        endOffset             int64   default=-1
  `),
);
