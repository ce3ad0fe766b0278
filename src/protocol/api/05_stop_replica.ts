// StopReplica (key 5), v0-4: the controller tells a broker to stop fetching (and, for deleted
// topics or reassigned-away replicas, to delete) some partitions. v1 groups partitions by topic
// and carries the broker epoch (KIP-380), v2 is flexible, v3 moves deletePartition into each
// partition and adds each partition's leader epoch (KIP-570; -2 while the topic is deleted),
// v4 isKRaftController (ZK migration, KIP-866).
import { api, message } from "../schema.ts";

export const StopReplicaApi = api(
  message(5, "StopReplicaRequest", "0-4", "2+", `
    controllerId              int32
    isKRaftController         bool    v4+  default=false
    controllerEpoch           int32
    brokerEpoch               int64   v1+  default=-1
    deletePartitions          bool    v0-2
    ungroupedPartitions       []      v0
      topicName               string
      partitionIndex          int32
    topics                    []      v1-2
      name                    string
      partitionIndexes        []int32
    topicStates               []      v3+
      topicName               string
      partitionStates         []
        partitionIndex        int32
        leaderEpoch           int32   default=-1
        deletePartition       bool
  `),
  message(5, "StopReplicaResponse", "0-4", "2+", `
    errorCode                 int16
    partitionErrors           []
      topicName               string
      partitionIndex          int32
      errorCode               int16
  `),
);
