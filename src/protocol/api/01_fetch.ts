// Fetch (key 1), v4-12. v4 adds isolation level and aborted transactions, v7 incremental fetch
// sessions, v11 rack-aware reads, v12 is flexible (tagged diverging epoch, current leader,
// snapshot id). v13+ (topic ids instead of names) not supported.
import { api, message } from "../schema.ts";

export const FetchApi = api(
  message(1, "FetchRequest", "4-12", "12+", `
    clusterId             string  v12+  nullable  default=null  tag=0
    replicaId             int32   default=-1          // a follower's broker id; -1 for consumers
    maxWaitMs             int32
    minBytes              int32
    maxBytes              int32   default=0x7fffffff
    isolationLevel        int8    default=0           // 0 read uncommitted, 1 read committed
    sessionId             int32   v7+  default=0
    sessionEpoch          int32   v7+  default=-1
    topics                []
      topic               string
      partitions          []
        partition         int32
        currentLeaderEpoch  int32  v9+  default=-1
        fetchOffset       int64
        lastFetchedEpoch  int32   v12+  default=-1
        logStartOffset    int64   v5+  default=-1   // followers only
        partitionMaxBytes int32
    forgottenTopicsData   []      v7+
      topic               string
      partitions          []int32
    rackId                string  v11+  default=""
  `),
  message(1, "FetchResponse", "4-12", "12+", `
    throttleTimeMs          int32
    errorCode               int16   v7+
    sessionId               int32   v7+  default=0
    responses               []
      topic                 string
      partitions            []
        partitionIndex      int32
        errorCode           int16
        highWatermark       int64
        lastStableOffset    int64   default=-1
        logStartOffset      int64   v5+  default=-1
        divergingEpoch      struct  v12+  tag=0      // set when a follower's log diverged
          epoch             int32   default=-1
          endOffset         int64   default=-1
        currentLeader       struct  v12+  tag=1
          leaderId          int32   default=-1
          leaderEpoch       int32   default=-1
        snapshotId          struct  v12+  tag=2
          endOffset         int64   default=-1
          epoch             int32   default=-1
        abortedTransactions []      nullable
          producerId        int64
          firstOffset       int64
        preferredReadReplica  int32  v11+  default=-1
        records             records nullable         // stored batches, as bytes
  `),
);
