// DescribeProducers (key 61), v0 (flexible): the producers with state on each partition (KIP-664,
// kafka-transactions.sh describe-producers), as the partition leader's producer state holds them.
import { api, message } from "../schema.ts";

export const DescribeProducersApi = api(
  message(61, "DescribeProducersRequest", "0", "0+", `
    topics                  []
      name                  string
      partitionIndexes      []int32
  `),
  message(61, "DescribeProducersResponse", "0", "0+", `
    throttleTimeMs          int32
    topics                  []
      name                  string
      partitions            []
        partitionIndex      int32
        errorCode           int16
        errorMessage        string  nullable  default=null
        activeProducers     []
          producerId        int64
          producerEpoch     int32
          lastSequence      int32   default=-1
          lastTimestamp     int64   default=-1
          coordinatorEpoch  int32
          currentTxnStartOffset int64 default=-1
  `),
);
