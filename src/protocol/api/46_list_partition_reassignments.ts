// ListPartitionReassignments (key 46), v0 (flexible): the reassignments in progress (KIP-455),
// for the named partitions or (topics null) for all of them.
import { api, message } from "../schema.ts";

export const ListPartitionReassignmentsApi = api(
  message(46, "ListPartitionReassignmentsRequest", "0", "0+", `
    timeoutMs                 int32   default=60000
    topics                    []      nullable  default=null   // null: every reassignment
      name                    string
      partitionIndexes        []int32
  `),
  message(46, "ListPartitionReassignmentsResponse", "0", "0+", `
    throttleTimeMs            int32
    errorCode                 int16
    errorMessage              string  nullable
    topics                    []
      name                    string
      partitions              []
        partitionIndex        int32
        replicas              []int32                     // the current replica set
        addingReplicas        []int32
        removingReplicas      []int32
  `),
);
