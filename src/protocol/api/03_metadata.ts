// Metadata (key 3), v0-12. A null topic list (v1+) asks for every topic; in v0 an empty list does.
// v4 adds auto-creation control, v8 authorized operations (cluster-wide only until v10), v9 is
// flexible, v10 adds topic ids, v12 allows looking topics up by id alone (name null).
import { api, message } from "../schema.ts";

export const MetadataApi = api(
  message(3, "MetadataRequest", "0-12", "9+", `
    topics                  []      nullable v1+
      topicId               uuid    v10+
      name                  string  nullable v10+
    allowAutoTopicCreation  bool    v4+  default=true
    includeClusterAuthorizedOperations  bool  v8-10
    includeTopicAuthorizedOperations    bool  v8+
  `),
  message(3, "MetadataResponse", "0-12", "9+", `
    throttleTimeMs          int32   v3+
    brokers                 []
      nodeId                int32
      host                  string
      port                  int32
      rack                  string  v1+  nullable  default=null
    clusterId               string  v2+  nullable  default=null
    controllerId            int32   v1+  default=-1
    topics                  []
      errorCode             int16
      name                  string  nullable v12+
      topicId               uuid    v10+
      isInternal            bool    v1+  default=false
      partitions            []
        errorCode           int16
        partitionIndex      int32
        leaderId            int32
        leaderEpoch         int32   v7+  default=-1
        replicaNodes        []int32
        isrNodes            []int32
        offlineReplicas     []int32 v5+
      topicAuthorizedOperations  int32  v8+  default=-2147483648   // INT32_MIN: not asked for
    clusterAuthorizedOperations  int32  v8-10  default=-2147483648
  `),
);
