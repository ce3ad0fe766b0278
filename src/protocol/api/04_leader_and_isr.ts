// LeaderAndIsr (key 4), v0-7: the controller tells a broker which partitions it leads or follows,
// with their leader, leader epoch, ISR, replicas and partition epoch (the state znode's version),
// and where the named leaders are (liveLeaders), so followers can fetch. v1 adds isNew, v2 groups
// the partitions by topic (topicStates) and carries the broker epoch (KIP-380), v3 adds the
// replicas being added and removed by a reassignment (KIP-455), v4 is flexible, v5 adds the topic
// id and the request type (0 unknown, 1 incremental, 2 full) and answers by topic id, v6 adds the
// leader recovery state (KIP-704), v7 isKRaftController (ZK migration, KIP-866).
import { api, message } from "../schema.ts";

export const LeaderAndIsrApi = api(
  message(4, "LeaderAndIsrRequest", "0-7", "4+", `
    controllerId              int32
    isKRaftController         bool    v7+  default=false
    controllerEpoch           int32
    brokerEpoch               int64   v2+  default=-1    // -1: the controller does not know it
    type                      int8    v5+
    ungroupedPartitionStates  []      v0-1
      topicName               string
      partitionIndex          int32
      controllerEpoch         int32                      // the epoch of the controller that wrote this state
      leader                  int32
      leaderEpoch             int32
      isr                     []int32
      partitionEpoch          int32                      // the state znode's version (zkVersion)
      replicas                []int32
      isNew                   bool    v1+  default=false
    topicStates               []      v2+
      topicName               string
      topicId                 uuid    v5+
      partitionStates         []
        partitionIndex        int32
        controllerEpoch       int32
        leader                int32
        leaderEpoch           int32
        isr                   []int32
        partitionEpoch        int32
        replicas              []int32
        addingReplicas        []int32 v3+
        removingReplicas      []int32 v3+
        isNew                 bool    default=false
        leaderRecoveryState   int8    v6+  default=0   // 1 while recovering from an unclean election
    liveLeaders               []
      brokerId                int32
      hostName                string
      port                    int32
  `),
  message(4, "LeaderAndIsrResponse", "0-7", "4+", `
    errorCode                 int16
    partitionErrors           []      v0-4
      topicName               string
      partitionIndex          int32
      errorCode               int16
    topics                    []      v5+
      topicId                 uuid
      partitionErrors         []
        partitionIndex        int32
        errorCode             int16
  `),
);
