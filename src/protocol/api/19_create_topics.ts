// CreateTopics (key 19), v2-7. v5 is flexible and answers with the created topic's partitions,
// replication factor and configs; v7 answers with its topic id. numPartitions and
// replicationFactor are -1 to take the broker's defaults (v4+ in Kafka's semantics).
import { api, message } from "../schema.ts";

export const CreateTopicsApi = api(
  message(19, "CreateTopicsRequest", "2-7", "5+", `
    topics                  []
      name                  string
      numPartitions         int32
      replicationFactor     int16
      assignments           []            // explicit replica placement, or empty
        partitionIndex      int32
        brokerIds           []int32
      configs               []
        name                string
        value               string  nullable
    timeoutMs               int32   default=60000
    validateOnly            bool    default=false
  `),
  message(19, "CreateTopicsResponse", "2-7", "5+", `
    throttleTimeMs          int32
    topics                  []
      name                  string
      topicId               uuid    v7+
      errorCode             int16
      errorMessage          string  nullable
      topicConfigErrorCode  int16   v5+  tag=0
      numPartitions         int32   v5+  default=-1
      replicationFactor     int16   v5+  default=-1
      configs               []      v5+  nullable
        name                string
        value               string  nullable
        readOnly            bool
        configSource        int8    default=-1
        isSensitive         bool
  `),
);
