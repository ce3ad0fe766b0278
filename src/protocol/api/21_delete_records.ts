// DeleteRecords (key 21), v0-2. v1 is v0 (a response sent before throttling), v2 is flexible.
// Each partition's offset (-1: the high watermark) becomes its new log start offset; the answer
// carries the low watermark after the move.
import { api, message } from "../schema.ts";

export const DeleteRecordsApi = api(
  message(21, "DeleteRecordsRequest", "0-2", "2+", `
    topics                  []
      name                  string
      partitions            []
        partitionIndex      int32
        offset              int64
    timeoutMs               int32
  `),
  message(21, "DeleteRecordsResponse", "0-2", "2+", `
    throttleTimeMs          int32
    topics                  []
      name                  string
      partitions            []
        partitionIndex      int32
        lowWatermark        int64
        errorCode           int16
  `),
);
