// ListOffsets (key 2), v0-8. v0 (deprecated; kafkajs below KAFKA_VERSION 0.10 sends it) asks for
// up to maxNumOffsets offsets per partition and answers them as oldStyleOffsets; v1 answers one
// offset and its timestamp per partition, v2 adds isolation level, v4 leader epochs, v6 is flexible, v7 and v8 change nothing on the wire
// (they allow new timestamps). Timestamp -1 asks for the log end offset, -2 for the log start
// offset, -3 (v7+) for the max timestamp, -4 (v8+, KIP-405) for the local log start offset.
import { api, message } from "../schema.ts";

export const ListOffsetsApi = api(
  message(2, "ListOffsetsRequest", "0-8", "6+", `
    replicaId               int32
    isolationLevel          int8    v2+
    topics                  []
      name                  string
      partitions            []
        partitionIndex      int32
        currentLeaderEpoch  int32   v4+  default=-1
        timestamp           int64
        maxNumOffsets       int32   v0   default=1
  `),
  message(2, "ListOffsetsResponse", "0-8", "6+", `
    throttleTimeMs          int32   v2+
    topics                  []
      name                  string
      partitions            []
        partitionIndex      int32
        errorCode           int16
        oldStyleOffsets     []int64 v0
        timestamp           int64   v1+  default=-1
        offset              int64   v1+  default=-1
        leaderEpoch         int32   v4+  default=-1
  `),
);
