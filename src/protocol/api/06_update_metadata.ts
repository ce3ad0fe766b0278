// UpdateMetadata (key 6), v0-8: the controller tells every broker the live brokers and the
// partition states, so each answers Metadata for the whole cluster. A partition whose leader is -2
// (LeaderDuringDelete) belongs to a topic being deleted. v1 carries each broker's endpoints,
// v2 the rack, v3 each endpoint's listener name, v4 the offline replicas, v5 groups partitions by
// topic and carries the broker epoch (KIP-380), v6 is flexible, v7 adds the topic id, v8
// isKRaftController and the tagged request type (ZK migration, KIP-866).
import { api, message } from "../schema.ts";

export const UpdateMetadataApi = api(
  message(6, "UpdateMetadataRequest", "0-8", "6+", `
    controllerId              int32
    isKRaftController         bool    v8+  default=false
    type                      int8    v8+  tag=0  default=0   // 0 unknown, 1 incremental, 2 full
    controllerEpoch           int32
    brokerEpoch               int64   v5+  default=-1
    ungroupedPartitionStates  []      v0-4
      topicName               string
      partitionIndex          int32
      controllerEpoch         int32
      leader                  int32                       // -2 while the topic is deleted
      leaderEpoch             int32
      isr                     []int32
      zkVersion               int32
      replicas                []int32
      offlineReplicas         []int32 v4+
    topicStates               []      v5+
      topicName               string
      topicId                 uuid    v7+
      partitionStates         []
        partitionIndex        int32
        controllerEpoch       int32
        leader                int32
        leaderEpoch           int32
        isr                   []int32
        zkVersion             int32
        replicas              []int32
        offlineReplicas       []int32
    liveBrokers               []
      id                      int32
      v0Host                  string  v0
      v0Port                  int32   v0
      endpoints               []      v1+
        port                  int32
        host                  string
        listener              string  v3+
        securityProtocol      int16                       // 0 PLAINTEXT, 1 SSL, 2 SASL_PLAINTEXT, 3 SASL_SSL
      rack                    string  v2+  nullable
  `),
  message(6, "UpdateMetadataResponse", "0-8", "6+", `
    errorCode                 int16
  `),
);
