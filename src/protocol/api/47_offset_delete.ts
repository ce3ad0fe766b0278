// OffsetDelete (key 47), v0 only, not flexible: deletes a group's committed offsets for
// partitions the group no longer subscribes to.
import { api, message } from "../schema.ts";

export const OffsetDeleteApi = api(
  message(47, "OffsetDeleteRequest", "0", null, `
    groupId               string
    topics                []
      name                string
      partitions          []
        partitionIndex    int32
  `),
  message(47, "OffsetDeleteResponse", "0", null, `
    errorCode             int16
    throttleTimeMs        int32
    topics                []
      name                string
      partitions          []
        partitionIndex    int32
        errorCode         int16
  `),
);
