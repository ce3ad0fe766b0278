// WriteTxnMarkers (key 27), v0-1: a transaction coordinator asks a partition leader to write
// commit or abort markers (inter-broker). v1 is flexible.
import { api, message } from "../schema.ts";

export const WriteTxnMarkersApi = api(
  message(27, "WriteTxnMarkersRequest", "0-1", "1+", `
    markers               []
      producerId          int64
      producerEpoch       int16
      transactionResult   bool     // true: commit; false: abort
      topics              []
        name              string
        partitionIndexes  []int32
      coordinatorEpoch    int32
  `),
  message(27, "WriteTxnMarkersResponse", "0-1", "1+", `
    markers               []
      producerId          int64
      topics              []
        name              string
        partitions        []
          partitionIndex  int32
          errorCode       int16
  `),
);
