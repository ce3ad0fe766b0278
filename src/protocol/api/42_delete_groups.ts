// DeleteGroups (key 42), v0-2. v1 changes only throttling behaviour, v2 is flexible.
import { api, message } from "../schema.ts";

export const DeleteGroupsApi = api(
  message(42, "DeleteGroupsRequest", "0-2", "2+", `
    groupsNames           []string
  `),
  message(42, "DeleteGroupsResponse", "0-2", "2+", `
    throttleTimeMs        int32
    results               []
      groupId             string
      errorCode           int16
  `),
);
