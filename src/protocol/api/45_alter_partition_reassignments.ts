// AlterPartitionReassignments (key 45), v0 (flexible): starts moving partitions to new replica
// sets, or cancels a pending move (replicas null), as KIP-455 describes.
import { api, message } from "../schema.ts";

export const AlterPartitionReassignmentsApi = api(
  message(45, "AlterPartitionReassignmentsRequest", "0", "0+", `
    timeoutMs                 int32   default=60000
    topics                    []
      name                    string
      partitions              []
        partitionIndex        int32
        replicas              []int32 nullable  default=null   // null cancels a pending reassignment
  `),
  message(45, "AlterPartitionReassignmentsResponse", "0", "0+", `
    throttleTimeMs            int32
    errorCode                 int16
    errorMessage              string  nullable
    responses                 []
      name                    string
      partitions              []
        partitionIndex        int32
        errorCode             int16
        errorMessage          string  nullable
  `),
);
