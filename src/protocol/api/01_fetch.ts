// Fetch (key 1), v0-16. v0-3 answer legacy message sets (magic 0 for v0-1, 1 for v2-3; the
// broker down-converts), v1 adds the throttle time, v3 the response's max bytes. v4 adds
// isolation level and aborted transactions, v7 incremental fetch sessions, v11 rack-aware reads,
// v12 is flexible (tagged diverging epoch, current leader, snapshot id), v13 names topics by id
// instead of by name (request and response), v14 is the same as v13, v15 moves the replica id
// into the tagged ReplicaState (KIP-903), v16 adds the tagged NodeEndpoints of the current
// leaders named in NOT_LEADER_OR_FOLLOWER answers (KIP-951).
import { api, message } from "../schema.ts";

export const FetchApi = api(
  message(1, "FetchRequest", "0-16", "12+", `
    clusterId             string  v12+  nullable  default=null  tag=0
    replicaId             int32   v0-14  default=-1   // a follower's broker id; -1 for consumers
    replicaState          struct  v15+  tag=1
      replicaId           int32   default=-1
      replicaEpoch        int64   default=-1
    maxWaitMs             int32
    minBytes              int32
    maxBytes              int32   v3+  default=0x7fffffff
    isolationLevel        int8    v4+  default=0           // 0 read uncommitted, 1 read committed
    sessionId             int32   v7+  default=0
    sessionEpoch          int32   v7+  default=-1
    topics                []
      topic               string  v0-12
      topicId             uuid    v13+
      partitions          []
        partition         int32
        currentLeaderEpoch  int32  v9+  default=-1
        fetchOffset       int64
        lastFetchedEpoch  int32   v12+  default=-1
        logStartOffset    int64   v5+  default=-1   // followers only
        partitionMaxBytes int32
    forgottenTopicsData   []      v7+
      topic               string  v7-12
      topicId             uuid    v13+
      partitions          []int32
    rackId                string  v11+  default=""
  `),
  message(1, "FetchResponse", "0-16", "12+", `
    throttleTimeMs          int32   v1+
    errorCode               int16   v7+
    sessionId               int32   v7+  default=0
    responses               []
      topic                 string  v0-12
      topicId               uuid    v13+
      partitions            []
        partitionIndex      int32
        errorCode           int16
        highWatermark       int64
        lastStableOffset    int64   v4+  default=-1
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
        abortedTransactions []      v4+  nullable
          producerId        int64
          firstOffset       int64
        preferredReadReplica  int32  v11+  default=-1
        records             records nullable         // stored batches, as bytes
    nodeEndpoints           []      v16+  tag=0      // the leaders named in currentLeader above
      nodeId                int32
      host                  string
      port                  int32
      rack                  string  nullable  default=null
  `),
);
