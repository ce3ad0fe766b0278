// DescribeLogDirs (key 35), v0-4: per log dir of the broker, its error (KAFKA_STORAGE_ERROR when
// offline) and the size of each partition log in it. topics null asks for every partition. v1 is
// v0 (a response sent before throttling), v2 is flexible, v3 adds the top-level errorCode, v4 the
// volume's totalBytes and usableBytes (-1 when unknown).
import { api, message } from "../schema.ts";

export const DescribeLogDirsApi = api(
  message(35, "DescribeLogDirsRequest", "0-4", "2+", `
    topics                  []      nullable              // null: every partition
      topic                 string
      partitions            []int32
  `),
  message(35, "DescribeLogDirsResponse", "0-4", "2+", `
    throttleTimeMs          int32
    errorCode               int16   v3+
    results                 []
      errorCode             int16
      logDir                string
      topics                []
        name                string
        partitions          []
          partitionIndex    int32
          partitionSize     int64
          offsetLag         int64
          isFutureKey       bool
      totalBytes            int64   v4+  default=-1
      usableBytes           int64   v4+  default=-1
  `),
);
